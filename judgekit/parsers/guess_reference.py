"""GuessBench's rules as the authors' evaluation code applies them (Zivenzhu/GuessBench,
``evaluation code/``), quirks included: the published tables came from them.

Pure functions over strings.

Matching (:func:`reply_matches`).  The gold answer (``Answer.txt``) loses one trailing period
(``.``, ``。``, ``．``, ``｡``; :func:`reference_gold`); then it is correct when, lower-cased and
without ASCII spaces, it occurs in the extractor judge's WHOLE reply, lower-cased and without
ASCII spaces.  The reply is not parsed: ``Answer:`` and any words around it are part of the text
searched.  So gold ``ant`` is correct in ``Answer: bridge (the hint suggests ant.)``, gold
``ring`` in ``No Answering``, and gold ``cat`` in ``Answer: cats``; gold ``cats`` is not correct
in ``Answer: cat``.

Self-consistency (:func:`vote_replies`).  The samples' extractor replies, each lower-cased and
otherwise untouched, are counted; the reply with the most votes wins and a tie goes to the reply
seen first (``max`` over a ``collections.Counter``).  ``Answer: cat`` and ``Answer: cat.`` are two
different votes, and ``No Answering`` can win.

Review stop signal (:func:`says_well_done`).  A self-refine or image-retrieval reply stops the
loop when it contains ``$Well done!$`` exactly (case, ``!`` and both ``$`` included) and does not
contain the review prompt's own instruction sentence (:data:`SELF_REFINE_SENTENCE`,
:data:`RETRIEVAL_SENTENCE`): a reply that quotes the prompt is a new answer, not the signal.

Image retrieval's guess (:func:`retrieval_guess`).  The text of the extractor's reply after its
first ``Answer:``, as it is (leading space, case and any later lines kept), or the whole reply
when it has no ``Answer:`` (``No Answering``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .guess import GOLD_PERIODS, is_well_done

__all__ = [
    "SELF_REFINE_SENTENCE",
    "RETRIEVAL_SENTENCE",
    "ReplyVote",
    "reference_gold",
    "squash",
    "reply_matches",
    "vote_replies",
    "says_well_done",
    "retrieval_guess",
]

#: the sentence of the self-refine prompt whose presence in a reply means it quotes the prompt
SELF_REFINE_SENTENCE = 'If it does, you MUST ONLY output "$Well done!$" Otherwise, provide your improved guess.'
#: the same for the image-retrieval prompt
RETRIEVAL_SENTENCE = 'If they match, you MUST ONLY output: "$Well done!$". Otherwise, provide your improved guess.'

_SIGNAL = "$Well done!$"


def reference_gold(answer: str) -> str:
    """``answer`` less ONE trailing period (``.``, ``。``, ``．``, ``｡``), as the reference's
    regular expression ``[...]$`` removes it: at the very end, or just before a final line break
    (``"cat.\\n"`` -> ``"cat\\n"``).  Nothing else changes (no stripping, case kept)."""
    if answer.endswith("\n") and answer[:-1].endswith(GOLD_PERIODS):
        return answer[:-2] + "\n"
    if answer.endswith(GOLD_PERIODS):
        return answer[:-1]
    return answer


def squash(text: str) -> str:
    """Lower-cased, every ASCII space removed (other white space kept), as the reference compares."""
    return text.lower().replace(" ", "")


def reply_matches(gold: str, reply: str) -> bool:
    """Whether the reference counts the extractor ``reply`` correct for ``gold`` (rule above)."""
    return squash(reference_gold(gold)) in squash(reply.lower())


@dataclass(frozen=True)
class ReplyVote:
    """A self-consistency vote over whole extractor replies."""

    winner: str
    """The winning reply, lower-cased (the text the reference matches and carries to the next turn)."""
    index: int
    """The first sample whose lower-cased reply is the winner."""
    counts: dict[str, int]
    """Votes per lower-cased reply, in the order first seen."""
    tied: bool
    """Whether several replies shared the top count, so the tie rule decided."""


def vote_replies(replies: Sequence[str], tie_break: Literal["first", "last"] = "first") -> ReplyVote:
    """Majority over the lower-cased ``replies``; a tie goes to the reply first seen (the
    reference) or, with ``tie_break="last"``, to the one whose last occurrence is latest (the
    paper's text: "if all three responses differ, the last guess is selected")."""
    if not replies:
        raise ValueError("no replies to vote on")
    if tie_break not in ("first", "last"):
        raise ValueError(f"tie_break must be 'first' or 'last', not {tie_break!r}")
    keys = [r.lower() for r in replies]
    counts: dict[str, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    top = max(counts.values())
    leaders = [k for k, c in counts.items() if c == top]  # first-seen order
    if tie_break == "first":
        winner = leaders[0]
    else:
        winner = max(leaders, key=lambda k: len(keys) - 1 - keys[::-1].index(k))
    return ReplyVote(winner, keys.index(winner), counts, len(leaders) > 1)


def says_well_done(reply: str | None, sentence: str, rule: Literal["exact", "lenient"] = "exact") -> bool:
    """Whether a review ``reply`` stops the loop.

    ``exact`` (the reference): it contains ``$Well done!$`` and not ``sentence``, the review
    prompt's own instruction.  ``lenient``: :func:`~judgekit.parsers.guess.is_well_done` (any
    case, or a reply that is only ``Well done!`` with or without ``$``, ``**`` or quotes), and
    again not ``sentence``."""
    if not reply or sentence in reply:
        return False
    if rule == "exact":
        return _SIGNAL in reply
    if rule == "lenient":
        return is_well_done(reply)
    raise ValueError(f"rule must be 'exact' or 'lenient', not {rule!r}")


def retrieval_guess(extractor_reply: str) -> str:
    """The guess image retrieval searches for and names in its prompt (rule above)."""
    return extractor_reply.split("Answer:", 1)[-1]
