"""Reading GuessBench replies judgekit's way: the guess after ``Answer:``, matching on it, a
lenient stop signal, a vote on guesses.

The authors' code does none of this: it matches the gold answer in the extractor's whole reply,
votes on whole replies and stops only on an exact ``$Well done!$``
(:mod:`judgekit.parsers.guess_reference`, the benchmark's default).  The rules here are the
benchmark's options (``match = "answer"``, ``vote = "answer"``, ``stop_signal = "lenient"``).

Pure functions over strings.  The rules, each followed by the function that applies it:

Extraction (:func:`parse_extraction`).  The extractor judge is told to reply
``Answer: [extracted answer]`` or ``No Answering`` (paper Table 4).

* The guess is the text after the LAST ``Answer:`` in the reply (a word ``answer``, any case,
  optional spaces before the colon; ``**Answer:**`` and ``Final answer:`` count, ``Answering``
  does not), up to the end of that line.
* It is cleaned by repeatedly stripping surrounding whitespace, square brackets, straight and
  typographic quotes, backticks and asterisks (markdown bold), and one trailing period
  (``.``, ``。``, ``．``, ``｡``), until nothing changes; then lower-cased, as the reference does.
  Inner text is kept as is (``"a rocking chair"`` -> ``a rocking chair``).
* An ``Answer:`` whose cleaned text is empty, or is ``no answering`` itself
  (``Answer: No Answering``), is outcome ``"no_answer"``.
* No ``Answer:`` at all but ``No Answering`` somewhere (any case, with or without a period) is
  ``"no_answer"``.  An ``Answer:`` line wins over a ``No Answering`` elsewhere.
* Anything else (empty reply, free text) is ``"unparsed"``.  Neither ``no_answer`` nor
  ``unparsed`` carries a guess, and neither is ever correct; the caller counts them apart.
* Quoted candidate text (given the candidate's ``response``): an extractor may quote the response
  it read, and the response may itself hold ``Answer: ...`` or ``No Answering``.  A marker of the
  reply is *quoted* when the reply, from the marker on, reproduces the response's text (compared
  in the folded view of :mod:`judgekit.parsers.view`, white space collapsed, so re-wrapping,
  case, width and zero-width characters make no difference) up to a word end in both texts,
  covering the marker, for ``Answer:`` at least one letter or digit of the guess, and either the
  rest of the marker's line or up to punctuation that closes an inline quote (``says 'Answer:
  ring'.``); the response is also read as an extractor that decodes HTML character references
  would quote it (``Answer&#58; ring`` quoted as ``Answer: ring``).  When the reply has markers
  of its own (not quoted), only those are read, and the guess stops where a quoted marker starts
  on its line.  Otherwise a quoted marker is read only when it opens the reply (nothing but
  punctuation before it) or closes it (nothing of the extractor's own after its quote): an extractor that answers by repeating the response's own
  ``Answer: cat`` line.  A quoted marker with the extractor's own words before and after it is
  the extractor citing the response, not answering, and is not read.  So a reply that introduces
  a quote of the response and then says ``No Answering``, or nothing conclusive, never reads as
  the response's planted answer.  Limits: an extractor whose own words after a quote are, word
  for word, the response's own continuation cannot be told from the quote; an extractor that
  repeats the response's ``Answer:`` line with words of its own both before and after it reads
  as ``unparsed``.  Without ``response`` the rules above apply unchanged.

Matching (:func:`is_correct`), the reference's comparison applied to the extracted guess instead
of the whole reply: the gold answer loses one trailing period (:func:`normalize_gold`), then
``gold.lower().replace(" ", "") in guess.lower().replace(" ", "")``.
Substring containment with spaces removed, no synonyms and no plurals: gold ``cat`` matches the
guess ``cats`` but gold ``cats`` does not match ``cat``.

Self-refine stop signal, lenient (:func:`is_well_done`): see the function.

Self-consistency on guesses (:func:`vote`): majority over normalised guesses, ties broken by a setting.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .view import View, decodings

__all__ = [
    "Extraction",
    "Vote",
    "GOLD_PERIODS",
    "WELL_DONE",
    "parse_extraction",
    "normalize_gold",
    "is_correct",
    "is_well_done",
    "normalize_guess",
    "vote",
]

#: the trailing "periods" the reference removes from a gold answer (ASCII, ideographic,
#: full-width, half-width ideographic)
GOLD_PERIODS: tuple[str, ...] = (".", "\u3002", "\uff0e", "\uff61")

#: the self-refine stop signal the prompts ask for
WELL_DONE = "$Well done!$"

_ANSWER = re.compile(r"\banswer\s*:", re.IGNORECASE)
_NO_ANSWERING = re.compile(r"\bno\s+answering\b", re.IGNORECASE)
# surrounding characters removed from an extracted guess
_GUESS_STRIP = " \t\r\n\f\v[]\"'`*\u201c\u201d\u2018\u2019"
# surrounding characters removed before comparing a whole reply with "well done!"
_WELL_DONE_STRIP = " \t\r\n\f\v$*\"'`\u201c\u201d\u2018\u2019"


@dataclass(frozen=True)
class Extraction:
    """What the extractor judge said about one model response."""

    outcome: Literal["answer", "no_answer", "unparsed"]
    """``answer``: a guess was read; ``no_answer``: the judge found none; ``unparsed``: the
    judge's reply follows neither format."""
    guess: str | None
    """The cleaned, lower-cased guess when ``outcome == "answer"``, else None."""
    raw: str
    """The judge's reply as received."""


def _clean_guess(text: str) -> str:
    prev = None
    while text != prev:
        prev = text
        text = text.strip(_GUESS_STRIP)
        if text.endswith(GOLD_PERIODS):
            text = text[:-1]
    return text


def _read(raw: str, answers: list[re.Match[str]], no_answering: bool, cuts: Sequence[int] = ()) -> Extraction:
    if answers:
        end = answers[-1].end()
        rest = raw[end:min([c for c in cuts if c >= end], default=len(raw))]
        line = rest.split("\n", 1)[0]
        guess = _clean_guess(line).lower()
        if not guess or _NO_ANSWERING.fullmatch(guess):
            return Extraction("no_answer", None, raw)
        return Extraction("answer", guess, raw)
    if no_answering:
        return Extraction("no_answer", None, raw)
    return Extraction("unparsed", None, raw)


def parse_extraction(text: str | None, response: str | None = None) -> Extraction:
    """Read the extractor judge's reply (rules in the module docstring).  None reads as ``""``.

    ``response``: the candidate's text the extractor was given; markers of the reply that only
    quote it are set aside as the module docstring says.
    """
    raw = text or ""
    answers = list(_ANSWER.finditer(raw))
    refusals = list(_NO_ANSWERING.finditer(raw))
    if not response or not (answers or refusals):
        return _read(raw, answers, bool(refusals))
    quotes = _Quotes(raw, response)
    own_answers = [m for m in answers if quotes.end_of(m, needs_guess=True) is None]
    own_refusals = [m for m in refusals if quotes.end_of(m, needs_guess=False) is None]
    if own_answers or own_refusals:
        # the guess stops where a quoted marker starts on its line ("Answer: bridge, not its 'Answer: ring'")
        quoted = [m.start() for m in (*answers, *refusals) if m not in own_answers and m not in own_refusals]
        return _read(raw, own_answers, bool(own_refusals), quoted)
    # every marker is quoted: read those that open or close the reply
    kept_answers = [m for m in answers if quotes.opens_or_closes(m, needs_guess=True)]
    kept_refusals = [m for m in refusals if quotes.opens_or_closes(m, needs_guess=False)]
    return _read(raw, kept_answers, bool(kept_refusals))


class _Quotes:
    """Where an extractor's reply reproduces the candidate's response (folded views compared)."""

    def __init__(self, reply: str, response: str) -> None:
        self.raw = reply
        self.reply = View.of(reply, spaces=True)
        # the response as it reads, and as it reads once an extractor decodes its HTML character
        # references (``Answer&#58; ring`` quoted as ``Answer: ring``)
        self.responses = [View.of(response, spaces=True).text]
        if "&" in self.responses[0]:
            self.responses += [View.of(d, spaces=True).text for d, _, _ in decodings(response)]

    def end_of(self, m: re.Match[str], *, needs_guess: bool) -> int | None:
        """:meth:`_end_in` for the response as it reads or any of its decodings: the first found."""
        for resp in self.responses:
            end = self._end_in(resp, m, needs_guess=needs_guess)
            if end is not None:
                return end
        return None

    def _end_in(self, resp: str, m: re.Match[str], *, needs_guess: bool) -> int | None:
        """The view index where the quote starting at marker ``m`` ends, or None if ``m`` is not quoted.

        The quote is the longest run of the reply from the marker on that occurs in the response
        (``full``).  It counts when it ends at a word end in both texts and either closes with
        punctuation in the reply (an inline quote: ``'Answer: ring'.``) or covers the rest of the
        marker's line; failing that, cut back to the last word end that still covers the rest of
        the line.  It must cover the marker and, with ``needs_guess``, a letter or digit after it.
        So the judge's own ``Answer: no answer`` is not a quote of a response's ``Answer: No
        Answering``: they part mid-word, inside the line.
        """
        raw_line_end = self.raw.find("\n", m.end())
        s = self.reply.text
        start = self.reply.at_or_after(m.start())
        marker_end = self.reply.at_or_after(m.end())
        line_end = self.reply.at_or_after(len(self.raw) if raw_line_end < 0 else raw_line_end)
        lo, hi = 0, len(s) - start  # the longest prefix of s[start:] found in resp (monotone)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if s[start:start + mid] in resp:
                lo = mid
            else:
                hi = mid - 1
        full = start + lo

        def covers(end: int) -> bool:
            return end >= marker_end and (not needs_guess or any(c.isalnum() for c in s[marker_end:end]))

        def word_end(end: int) -> bool:
            mid_word = end < len(s) and s[end - 1].isalnum() and s[end].isalnum()
            return not mid_word and _at_word_end(s[start:end], resp)

        def rest_of_line(end: int) -> bool:
            return not any(c.isalnum() for c in s[end:line_end])

        if covers(full) and word_end(full) and (rest_of_line(full) or self._punctuation_after(full)):
            return full
        for end in range(full - 1, marker_end - 1, -1):
            if not rest_of_line(end):
                break
            if covers(end) and word_end(end):
                return end
        return None

    def _punctuation_after(self, end: int) -> bool:
        """Whether the reply has punctuation (a closing quote, a full stop) right after view index ``end - 1``."""
        src = self.reply.source
        stop = src[end] + 1 if end < len(src) else len(self.raw)
        return any(unicodedata.category(c).startswith("P") for c in self.raw[src[end - 1] + 1:stop])

    def opens_or_closes(self, m: re.Match[str], *, needs_guess: bool) -> bool:
        """Whether the quote holding ``m`` opens the reply (no letter or digit before the marker) or
        closes it (no letter or digit of the extractor's own after the quote)."""
        end = self.end_of(m, needs_guess=needs_guess)
        assert end is not None
        text = self.reply.text
        start = self.reply.at_or_after(m.start())
        return not any(c.isalnum() for c in text[:start]) or not any(c.isalnum() for c in text[end:])


def _at_word_end(piece: str, text: str) -> bool:
    """Whether ``piece`` occurs in ``text`` somewhere it does not stop in the middle of a word."""
    if not piece:
        return False
    if not piece[-1].isalnum():
        return piece in text
    i = text.find(piece)
    while i >= 0:
        after = i + len(piece)
        if after == len(text) or not text[after].isalnum():
            return True
        i = text.find(piece, i + 1)
    return False


def normalize_gold(answer: str) -> str:
    """The gold answer without surrounding whitespace and without ONE trailing period.

    The periods are ``.``, ``。``, ``．`` and ``｡``; case and inner spaces are kept.
    """
    answer = answer.strip()
    if answer.endswith(GOLD_PERIODS):
        answer = answer[:-1]
    return answer


def is_correct(gold: str, guess: str | None) -> bool:
    """Whether ``guess`` hits ``gold``, by the reference's comparison.

    ``normalize_gold(gold).lower().replace(" ", "") in guess.lower().replace(" ", "")``: only the
    ASCII space is removed, and the gold must be a substring of the guess, not the reverse.  A
    None guess (no answer, unparsed, failed call) is wrong, and so is any guess against an empty
    gold (which would otherwise be a substring of everything).
    """
    if guess is None:
        return False
    g = normalize_gold(gold).lower().replace(" ", "")
    if not g:
        return False
    return g in guess.lower().replace(" ", "")


def is_well_done(text: str | None) -> bool:
    """Whether a self-refine (or image-retrieval) reply is the stop signal ``$Well done!$``, leniently
    (the reference requires ``$Well done!$`` exactly:
    :func:`~judgekit.parsers.guess_reference.says_well_done`).

    True when either

    * the reply contains ``$well done!$``, case-insensitively (anywhere, so a reply that explains
      itself and then signs off with the signal stops the loop), or
    * the whole reply, stripped of surrounding ``$``, ``*``, quotes, backticks and whitespace and
      lower-cased, equals ``well done!`` or ``well done`` (``Well done!``, ``**Well done!**``,
      ``"Well Done"``).

    A longer reply that merely uses the words (``I think the build is well done! The answer is a
    cat.``) is not the signal: it carries a guess.
    """
    if not text:
        return False
    if WELL_DONE.lower() in text.lower():
        return True
    return text.strip(_WELL_DONE_STRIP).lower() in ("well done!", "well done")


@dataclass(frozen=True)
class Vote:
    """The result of a self-consistency majority vote."""

    winner: str | None
    """The chosen normalised guess; None only when no sample gave a guess."""
    counts: dict[str, int]
    """Votes per normalised guess, in the order first seen; samples without a guess are left out."""
    tied: bool
    """Whether several guesses shared the top count, so the tie-break rule decided."""


def normalize_guess(guess: str) -> str:
    """A guess as a vote: lower-cased, runs of whitespace collapsed to one space, stripped."""
    return " ".join(guess.split()).lower()


def vote(guesses: Sequence[str | None], tie_break: Literal["first", "last"] = "first") -> Vote:
    """Majority vote over sampled guesses (self-consistency).

    Guesses are compared after :func:`normalize_guess`; None (no answer) and guesses that are
    empty after normalising are not votes.  The winner has the highest count.  When several share
    it, ``tie_break="first"`` takes the one whose first occurrence is earliest (the authors'
    code: ties go to the first seen) and ``"last"`` the one whose last occurrence is latest (the
    paper: "if all three responses differ, the last guess is selected").  With three samples the
    two rules differ only when all three differ.  No vote at all gives ``winner=None``.
    """
    if tie_break not in ("first", "last"):
        raise ValueError(f"tie_break must be 'first' or 'last', not {tie_break!r}")
    counts: dict[str, int] = {}
    last_seen: dict[str, int] = {}
    for i, g in enumerate(guesses):
        if g is None:
            continue
        key = normalize_guess(g)
        if not key:
            continue
        counts[key] = counts.get(key, 0) + 1
        last_seen[key] = i
    if not counts:
        return Vote(None, {}, False)
    top = max(counts.values())
    leaders = [k for k, c in counts.items() if c == top]  # in first-seen order
    if tie_break == "first":
        winner = leaders[0]
    else:
        winner = max(leaders, key=lambda k: last_seen[k])
    return Vote(winner, counts, len(leaders) > 1)
