"""The simulator's judge for the common judge formats, a behaviour of the core (:data:`BEHAVIOUR`).

Benchmark-neutral: it answers any prompt laid out the way Arena-Hard-Auto's and MT-Bench's judges
are, which is what the generic ``pairwise`` and ``rubric`` benchmarks ship (and what a plugin
benchmark may reuse).

Recognised by the answer markers (:func:`generic_kind`), those of judgekit's shipped prompts and
common ones:

``generic_pairwise``
    Two answers between ``<|The Start of Assistant A's Answer|>`` .. ``<|The End of Assistant A's
    Answer|>`` (Arena-Hard-Auto), ``[The Start of Assistant A's Answer]`` .. ``[The End of Assistant
    A's Answer]`` (MT-Bench pair) or ``[ASSISTANT A]`` .. ``[END ASSISTANT A]`` (and B's likewise).
    A prompt with the ``[ASSISTANT A]`` markers that mentions a "final verdict" and asks for none of
    the formats below stays Creation-MMBench's ``pairwise`` kind, whose replies are unchanged
    (:func:`wants_generic_format`).
``generic_single``
    One answer between ``[The Start of Assistant's Answer]`` .. ``[The End of Assistant's Answer]``
    (MT-Bench single).

The reply's format follows what the instructions (the prompt outside the answers) ask for
(:func:`reply_format`): ``[[A>>B]]`` or ``[[A>B]]`` named -> Arena-Hard's "My final verdict is:
[[X]]" (about 3 % written the mirrored way, ``[[B<A]]``, 1 % with spaces inside, as real judges
do); ``[[A]]`` and ``[[C]]`` -> MT-Bench's ``[[A]]`` / ``[[B]]`` / ``[[C]]`` on the last line; a number
on a scale ("on a scale of 1 to 5", ``[[rating]]``) -> ``[[N]]``, low meaning Assistant A much
better; none of these -> Arena-Hard's format.  A single-answer prompt gets ``Rating: [[N]]`` on the
scale it names (default 1 to 10).

The verdict is drawn as Creation-MMBench's is (:func:`judgekit.sim.judge_style.verdict_probabilities`
of the answers' :func:`judgekit.sim.judge_replies.answer_quality` and the judge's
:class:`~judgekit.sim.judge_style.JudgeStyle`: position bias, verbosity bias, noise, tie width); MT-Bench's
three verdicts merge the strong and mild ones; a scale verdict is its point on the scale.  A single
answer's score is ``low + (high - low) s(1.2 (quality - 5))`` plus up to +-1/9 of the scale's width
of noise (shaped by the style's noise and leniency), rounded and clamped.  A follow-up turn (the last
user message holds no answer, e.g. the re-ask prompt) is answered with the verdict line alone.

``garbage`` (the request's share of unparseable replies, ``SimConfig.garbage_rate``) gives a reply
that the matching parser of :mod:`judgekit.parsers.generic` cannot read: a malformed or
contradictory verdict, or none.  Reply bodies hold no digits and no brackets, so ``last_number``
and ``rating`` read only the verdict line.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from judgekit.sim.behaviour_types import Behaviour, Request
from judgekit.sim.text import block_span
from judgekit.sim.judge_replies import MIRRORED, VERDICTS, answer_quality, describe, draw, pair_probabilities
from judgekit.sim.judge_style import JudgeStyle, sigmoid, styled_score

__all__ = [
    "BEHAVIOUR",
    "GENERIC_KINDS",
    "KIND_GENERIC_PAIRWISE",
    "KIND_GENERIC_SINGLE",
    "PAIR_MARKERS",
    "SINGLE_MARKERS",
    "ReplyFormat",
    "generic_answers",
    "generic_kind",
    "generic_reply",
    "reply_format",
    "wants_generic_format",
]

KIND_GENERIC_PAIRWISE = "generic_pairwise"
KIND_GENERIC_SINGLE = "generic_single"
GENERIC_KINDS = (KIND_GENERIC_PAIRWISE, KIND_GENERIC_SINGLE)

#: (A start, A end, B start, B end) of each recognised pairwise layout
PAIR_MARKERS: tuple[tuple[str, str, str, str], ...] = (
    ("<|The Start of Assistant A's Answer|>", "<|The End of Assistant A's Answer|>",
     "<|The Start of Assistant B's Answer|>", "<|The End of Assistant B's Answer|>"),
    ("[The Start of Assistant A's Answer]", "[The End of Assistant A's Answer]",
     "[The Start of Assistant B's Answer]", "[The End of Assistant B's Answer]"),
    ("[ASSISTANT A]", "[END ASSISTANT A]", "[ASSISTANT B]", "[END ASSISTANT B]"),
)
#: (start, end) of each recognised single-answer layout
SINGLE_MARKERS: tuple[tuple[str, str], ...] = (
    ("[The Start of Assistant's Answer]", "[The End of Assistant's Answer]"),
)

_NUM = r"(-?\d+(?:\.\d+)?)"
_SCALE_PHRASES = (
    re.compile(r"scale\s+(?:of|from)\s+" + _NUM + r"\s*(?:to|-|–)\s*" + _NUM, re.IGNORECASE),
    re.compile(_NUM + r"\s*(?:to|-|–)\s*" + _NUM + r"[- ]point\s+scale", re.IGNORECASE),
    re.compile(_NUM + r"\s*(?:-|–)\s*" + _NUM + r"\s+scale", re.IGNORECASE),
)


@dataclass(frozen=True)
class ReplyFormat:
    """What a generic judge prompt asks its judge to write."""

    kind: str
    """``arena`` (``[[A>B]]`` family), ``mt_bench`` (``[[A]]``/``[[B]]``/``[[C]]``), ``scale`` (``[[N]]``)
    or ``rating`` (``Rating: [[N]]``, a single answer)"""
    low: float = 1.0
    high: float = 5.0


# --------------------------------------------------------------------------- recognising


def _block(text: str, start: str, end: str) -> tuple[int, int] | None:
    """Where the answer between ``start`` and the first ``end`` lies (:func:`judgekit.sim.text.block_span`)."""
    return block_span(text, start, end, first_end=True)


def _pair_layout(text: str) -> tuple[str, str, str, str] | None:
    for markers in PAIR_MARKERS:
        if markers[0] in text and markers[2] in text:
            return markers
    return None


def generic_kind(text: str) -> str | None:
    """``generic_pairwise``, ``generic_single`` or None, from the answer markers in ``text``."""
    if _pair_layout(text) is not None:
        return KIND_GENERIC_PAIRWISE
    if any(start in text and end in text for start, end in SINGLE_MARKERS):
        return KIND_GENERIC_SINGLE
    return None


def generic_answers(text: str) -> tuple[str, ...]:
    """The answers of a generic judge prompt: (A, B) for a pairwise one, (answer,) for a single one,
    () when there is none."""
    markers = _pair_layout(text)
    if markers is not None:
        spans = (_block(text, markers[0], markers[1]), _block(text, markers[2], markers[3]))
        return tuple(text[s[0]:s[1]].strip() if s else "" for s in spans)
    for start, end in SINGLE_MARKERS:
        s = _block(text, start, end)
        if s is not None:
            return (text[s[0]:s[1]].strip(),)
    return ()


def _instructions(text: str) -> str:
    """``text`` without the answers (a candidate could write anything there)."""
    cuts: list[tuple[int, int]] = []
    markers = _pair_layout(text)
    pairs = [(markers[0], markers[1]), (markers[2], markers[3])] if markers else list(SINGLE_MARKERS)
    for start, end in pairs:
        s = _block(text, start, end)
        if s is not None:
            cuts.append(s)
    out, at = [], 0
    for i, j in sorted(cuts):
        if i >= at:
            out.append(text[at:i])
            at = j
    out.append(text[at:])
    return "".join(out)


def _scale_in(instructions: str) -> tuple[float, float] | None:
    """The first "scale of LOW to HIGH" (or "LOW-HIGH scale") the instructions name, or None."""
    for rx in _SCALE_PHRASES:
        m = rx.search(instructions)
        if m is not None:
            low, high = float(m.group(1)), float(m.group(2))
            if low < high:
                return low, high
    return None


def reply_format(text: str, kind: str) -> ReplyFormat:
    """The format a generic judge prompt of ``kind`` asks for (module docstring), read from its
    instructions only."""
    ins = _instructions(text)
    if kind == KIND_GENERIC_SINGLE:
        return ReplyFormat("rating", *(_scale_in(ins) or (1.0, 10.0)))
    if "[[A>>B]]" in ins or "[[A>B]]" in ins:
        return ReplyFormat("arena")
    if "[[A]]" in ins and "[[C]]" in ins:
        return ReplyFormat("mt_bench")
    scale = _scale_in(ins)
    if scale is not None:
        return ReplyFormat("scale", *scale)
    if "[[rating]]" in ins.lower():
        return ReplyFormat("scale")
    return ReplyFormat("arena")


def wants_generic_format(text: str) -> bool:
    """Whether a prompt with Creation-MMBench's ``[ASSISTANT A]`` markers asks for a verdict format
    other than the ``[[A>B]]`` family (MT-Bench's ``[[A]]``/``[[C]]``, a number on a scale): then it is
    no Creation prompt and gets a generic reply."""
    return reply_format(text, KIND_GENERIC_PAIRWISE).kind != "arena"


# --------------------------------------------------------------------------- replying


def _words(answer: str) -> int:
    return len(answer.split())


#: what the generic judge says of an answer, by quality band (judge_replies.describe)
_DESCRIPTIONS = (
    ("is detailed and answers every part of the question", "is thorough, specific and well organised"),
    ("answers the main question with reasonable detail", "is sound overall, though some parts could be more specific"),
    ("is brief and somewhat repetitive", "touches on the question but lacks depth"),
    ("is very thin and misses most of the question", "barely engages with the question"),
)


def _describe(q: float, rng: random.Random) -> str:
    return describe(q, rng, _DESCRIPTIONS)


def _number(x: float, low: float, high: float) -> str:
    """``x`` written as the judge would: an integer on an integer scale of 4 steps or more (1 to 5,
    1 to 10), else with up to two decimals (0 to 1: 0.25)."""
    if float(low).is_integer() and float(high).is_integer() and high - low >= 4:
        return str(math.floor(x + 0.5))
    return f"{round(x, 2):g}"


def _pairwise(text: str, fmt: ReplyFormat, rng: random.Random, garbage: bool, style: JudgeStyle | None,
              follow_up: bool) -> str:
    answers = generic_answers(text)
    a, b = (answers + ("", ""))[:2]
    qa, qb, probs = pair_probabilities(a, b, style, _words)
    idx = draw(probs, rng.random())
    body = "" if follow_up else (
        f"Assistant A's answer {_describe(qa, rng)}. Assistant B's answer {_describe(qb, rng)}.\n\n"
        "Weighing helpfulness, relevance and accuracy against each other:\n\n")
    if fmt.kind == "mt_bench":
        if garbage:
            return body + rng.choice(("Final verdict: Assistant A", "[[D]]", "Both are good; I cannot choose one."))
        return body + ("[[A]]", "[[A]]", "[[C]]", "[[B]]", "[[B]]")[idx]
    if fmt.kind == "scale":
        if garbage:
            return body + rng.choice((f"[[{_number(fmt.high + 1, fmt.low, fmt.high)}]]",
                                      "Rating: a clear preference for Assistant B", "[["))
        x = fmt.low + (fmt.high - fmt.low) * idx / 4
        return body + f"[[{_number(x, fmt.low, fmt.high)}]]"
    if garbage:
        return body + rng.choice((
            "My final verdict is: [[A>>>B]]",
            "At first sight [[A>B]], but on reflection my final verdict is: [[B>A]]",
            "My final verdict: Assistant A is slightly better.",
            "My final verdict is: [[",
        ))
    verdict = VERDICTS[idx]
    u = rng.random()
    if u < 0.03:
        shown = MIRRORED[verdict]
    elif u < 0.04:
        shown = re.sub(r"([<>=]+)", r" \1 ", verdict)  # "A >> B"
    else:
        shown = verdict
    tie = " tie" if verdict == "A=B" else ""
    return body + f"My final verdict is{tie}: [[{shown}]]"


def _single(text: str, fmt: ReplyFormat, rng: random.Random, garbage: bool, style: JudgeStyle | None,
            follow_up: bool) -> str:
    answers = generic_answers(text)
    q = answer_quality(answers[0] if answers else "")
    width = fmt.high - fmt.low
    x = styled_score(fmt.low + width * sigmoid(1.2 * (q - 5.0)), rng.uniform(-1.0, 1.0) * width / 9, style)
    x = min(fmt.high, max(fmt.low, x))
    body = "" if follow_up else (
        f"The response {_describe(q, rng)}. It is judged on helpfulness, relevance, accuracy and detail.\n\n")
    if garbage:
        return body + rng.choice((f"Rating: [[{_number(fmt.high + 1, fmt.low, fmt.high)}]]",
                                  "Rating: excellent", "I would rate this response highly."))
    return body + f"Rating: [[{_number(x, fmt.low, fmt.high)}]]"


def generic_reply(kind: str, text: str, last_user_text: str, rng: random.Random, *, garbage: bool = False,
                  style: JudgeStyle | None = None) -> str:
    """The reply to a generic judge prompt of ``kind`` (module docstring).  ``text`` is the whole
    conversation's text, ``last_user_text`` its last user message: without an answer in it the
    request is a follow-up (a re-ask), answered with the verdict line alone."""
    fmt = reply_format(text, kind)
    follow_up = generic_kind(last_user_text) is None
    if kind == KIND_GENERIC_SINGLE:
        return _single(text, fmt, rng, garbage, style, follow_up)
    if kind == KIND_GENERIC_PAIRWISE:
        return _pairwise(text, fmt, rng, garbage, style, follow_up)
    raise ValueError(f"not a generic judge kind: {kind!r}")


def _classify(text: str, last_user: str) -> str | None:
    return generic_kind(text)


def _reply(kind: str, req: Request, rng: random.Random) -> tuple[str, bool]:
    return generic_reply(kind, req.text, req.last_user, rng, garbage=req.garbage, style=req.style), req.garbage


#: the common judge formats as a simulated behaviour (:mod:`judgekit.sim.behaviours`), order 20: after
#: Creation-MMBench's judge, whose ``[ASSISTANT A]`` prompts asking for ``[[A>B]]`` it leaves alone
BEHAVIOUR = Behaviour("judge_formats", GENERIC_KINDS, _classify, _reply, order=20,
                      description="the common judge formats (Arena-Hard, MT-Bench pair and single)")
