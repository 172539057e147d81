"""Reading GuessBench replies: the extractor judge, answer matching, self-refine, voting.

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

Matching (:func:`is_correct`), exactly the reference: the gold answer loses one trailing period
(:func:`normalize_gold`), then ``gold.lower().replace(" ", "") in guess.lower().replace(" ", "")``.
Substring containment with spaces removed, no synonyms and no plurals: gold ``cat`` matches the
guess ``cats`` but gold ``cats`` does not match ``cat``.

Self-refine stop signal (:func:`is_well_done`): see the function.

Self-consistency (:func:`vote`): majority over normalised guesses, ties broken by a setting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

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


def parse_extraction(text: str | None) -> Extraction:
    """Read the extractor judge's reply (rules in the module docstring).  None reads as ``""``."""
    raw = text or ""
    matches = list(_ANSWER.finditer(raw))
    if matches:
        rest = raw[matches[-1].end():]
        line = rest.split("\n", 1)[0]
        guess = _clean_guess(line).lower()
        if not guess or _NO_ANSWERING.fullmatch(guess):
            return Extraction("no_answer", None, raw)
        return Extraction("answer", guess, raw)
    if _NO_ANSWERING.search(raw):
        return Extraction("no_answer", None, raw)
    return Extraction("unparsed", None, raw)


def normalize_gold(answer: str) -> str:
    """The gold answer without surrounding whitespace and without ONE trailing period.

    The periods are ``.``, ``。``, ``．`` and ``｡``; case and inner spaces are kept.
    """
    answer = answer.strip()
    if answer.endswith(GOLD_PERIODS):
        answer = answer[:-1]
    return answer


def is_correct(gold: str, guess: str | None) -> bool:
    """Whether ``guess`` hits ``gold``, exactly as the reference decides.

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
    """Whether a self-refine (or image-retrieval) reply is the stop signal ``$Well done!$``.

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
