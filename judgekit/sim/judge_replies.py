"""The simulator's Creation-MMBench judge replies: a pairwise verdict and visual factuality scores.

``pairwise``
    A pairwise judge prompt (``[ASSISTANT A]``, ``[ASSISTANT B]`` and ``Final Verdict``).  The reply
    evaluates both answers and ends with ``Final Verdict is: [[X]]``; about 5 % of replies spell
    the verdict the mirrored way (``[[B<A]]``) or with spaces inside the brackets, as real judges
    do.  The verdict is drawn from :func:`judgekit.sim.judge_style.verdict_probabilities` of the
    two answers' :func:`answer_quality` and the judge's :class:`~judgekit.sim.judge_style.JudgeStyle`.
``vfs``
    A visual factuality prompt.  The reply ends with ``Response A Visual Factuality Score: X/10``
    and ``Response B ...: Y/10``, each ``10 s(1.2 (quality - 5))`` plus up to +-1 point of noise
    (shaped by the judge's style: noise, leniency, position bias for Response A).

How judges favour better models without knowing who wrote an answer: a candidate model of
quality ``q`` writes longer answers drawn from a larger vocabulary, and the simulated judge
scores each answer by those same surface features (:func:`answer_quality`: log word count and
log distinct-word count).
"""

from __future__ import annotations

import math
import random

from judgekit.sim.judge_style import JudgeStyle, sigmoid, styled_score, verdict_probabilities

__all__ = ["KIND_PAIRWISE", "KIND_VFS", "VERDICTS", "MIRRORED", "PUNCT_TABLE", "DESCRIPTIONS", "extract_answers",
           "answer_quality", "describe", "draw", "pair_probabilities", "pairwise_text", "vfs_text"]

KIND_PAIRWISE = "pairwise"
KIND_VFS = "vfs"

#: verdicts from best-for-A to best-for-B
VERDICTS: tuple[str, ...] = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
#: each verdict as written from the other side
MIRRORED = {"A>>B": "B<<A", "A>B": "B<A", "A=B": "B=A", "B>A": "A<B", "B>>A": "A<<B"}

#: punctuation read as spaces when counting an answer's words
PUNCT_TABLE = str.maketrans({c: " " for c in ".,;:!?\"'()[]{}*#-_/\\<>=`~|"})


def _between(text: str, start: str, end: str) -> str:
    """The text between the last ``start`` before ``end`` and ``end``; '' if not found.

    Taking the *last* opening marker before the closing one skips any mention of the marker
    in the prompt's instructions.  A missing closing marker takes the text up to the next
    ``[`` marker line, or to the end.
    """
    j = text.find(end)
    if j < 0:
        i = text.rfind(start)
        if i < 0:
            return ""
        i += len(start)
        k = text.find("\n[", i)
        return text[i : k if k >= 0 else len(text)].strip()
    i = text.rfind(start, 0, j)
    if i < 0:
        return ""
    return text[i + len(start) : j].strip()


def extract_answers(text: str) -> tuple[str, str]:
    """The two answers of a judge prompt: between ``[ASSISTANT A]`` .. ``[END ASSISTANT A]``
    and ``[ASSISTANT B]`` .. ``[END ASSISTANT B]``."""
    return (
        _between(text, "[ASSISTANT A]", "[END ASSISTANT A]"),
        _between(text, "[ASSISTANT B]", "[END ASSISTANT B]"),
    )


def answer_quality(answer: str) -> float:
    """A surface-feature score of an answer (0 for an empty one, ~5.5 for a typical one).

    ``0.35 * ln(1 + words) + 0.65 * ln(1 + distinct words)`` with punctuation removed and
    case folded: it grows with length and vocabulary variety and saturates (logarithmically).
    """
    toks = answer.lower().translate(PUNCT_TABLE).split()
    if not toks:
        return 0.0
    return 0.35 * math.log1p(len(toks)) + 0.65 * math.log1p(len(set(toks)))


def draw(probs: tuple[float, ...], u: float) -> int:
    """The index ``u`` (uniform in [0, 1)) falls on in the cumulative ``probs``."""
    acc = 0.0
    for i, p in enumerate(probs):
        acc += p
        if u < acc:
            return i
    return len(probs) - 1


#: what a judge says of an answer, by quality band (>= 6.0, >= 5.2, >= 4.0, below): Creation-MMBench's
DESCRIPTIONS: tuple[tuple[str, ...], ...] = (
    ("is rich, detailed and closely follows the instructions",
     "covers the requested points thoroughly with vivid, specific language"),
    ("addresses the main requirements with reasonable detail",
     "is solid overall, though some parts could be more specific"),
    ("is fairly brief and somewhat repetitive",
     "touches on the task but lacks depth and variety"),
    ("is very thin and misses most of the requirements",
     "barely engages with the task"),
)


def describe(q: float, rng: random.Random, bands: tuple[tuple[str, ...], ...] = DESCRIPTIONS) -> str:
    """A phrase for an answer of quality ``q``, drawn from its band of ``bands`` (see DESCRIPTIONS)."""
    band = 0 if q >= 6.0 else 1 if q >= 5.2 else 2 if q >= 4.0 else 3
    return rng.choice(bands[band])


def _words(answer: str) -> int:
    return len(answer.translate(PUNCT_TABLE).split())


def pair_probabilities(a: str, b: str, style: JudgeStyle | None,
                       words=_words) -> tuple[float, float, tuple[float, ...]]:
    """(quality of A, quality of B, the verdicts' probabilities), the answers' lengths (``words``)
    weighed when the judge's style has a ``length_weight``."""
    qa, qb = answer_quality(a), answer_quality(b)
    if style is not None and style.length_weight:
        return qa, qb, verdict_probabilities(qa, qb, style, words(a), words(b))
    return qa, qb, verdict_probabilities(qa, qb, style)


def pairwise_text(text: str, rng: random.Random, garbage: bool, style: JudgeStyle | None = None) -> str:
    """The reply to the pairwise judge prompt ``text`` (see the module docstring)."""
    a, b = extract_answers(text)
    qa, qb, probs = pair_probabilities(a, b, style)
    idx = draw(probs, rng.random())
    verdict = VERDICTS[idx]
    body = (
        f"1. Evaluation of Assistant A's Response: The response {describe(qa, rng)}.\n\n"
        f"2. Evaluation of Assistant B's Response: The response {describe(qb, rng)}.\n\n"
    )
    if garbage:
        tail = rng.choice((
            "3. Conclusion: Both responses have their merits; it is hard to pick one.",
            "Final Verdict is: [[A>>>B]]",
            "Final verdict: Assistant A",
            "Final Verdict is: [[",
            "I cannot determine a final verdict for these responses.",
        ))
        return body + tail
    u = rng.random()
    if u < 0.03:
        shown = MIRRORED[verdict]
    elif u < 0.04:
        shown = f" {verdict} "
    elif u < 0.05:
        shown = verdict.replace(">", " > ").replace("=", " = ").replace("  ", " ")
    else:
        shown = verdict
    return body + f"3. Final Verdict: see below.\n\nFinal Verdict is: [[{shown}]]"


def _vfs_score(q: float, rng: random.Random, style: JudgeStyle | None, first_slot: bool) -> str:
    x = styled_score(10.0 * sigmoid(1.2 * (q - 5.0)), rng.uniform(-1.0, 1.0), style, first_slot=first_slot)
    x = min(10.0, max(0.0, x))
    if rng.random() < 0.3:
        return f"{round(x, 1):g}"
    return str(int(round(x)))


def vfs_text(text: str, rng: random.Random, garbage: bool, style: JudgeStyle | None = None) -> str:
    """The reply to the visual factuality prompt ``text`` (see the module docstring)."""
    a, b = extract_answers(text)
    qa, qb = answer_quality(a), answer_quality(b)
    sa, sb = _vfs_score(qa, rng, style, True), _vfs_score(qb, rng, style, False)
    body = (
        f"Assistant A: the response {describe(qa, rng)}; its visual details mostly agree "
        f"with the criteria.\n\nAssistant B: the response {describe(qb, rng)}; its visual "
        f"details are checked against the same criteria.\n\n"
    )
    if garbage:
        return body + rng.choice((
            f"Response A Visual Factuality Score: {sa}/10",
            "Response A Visual Factuality Score: high\nResponse B Visual Factuality Score: low",
            f"Scores: A={sa}, B={sb}",
            "I am unable to score visual factuality without seeing the images.",
        ))
    return (
        body
        + f"Response A Visual Factuality Score: {sa}/10\n"
        + f"Response B Visual Factuality Score: {sb}/10"
    )
