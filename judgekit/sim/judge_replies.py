"""How a simulated judge weighs answers, shared by every benchmark's simulated judge.

A candidate model of quality ``q`` writes longer answers drawn from a larger vocabulary, and a
simulated judge scores each answer by those same surface features (:func:`answer_quality`: log word
count and log distinct-word count), so judges favour better models without knowing who wrote an
answer.  :func:`pair_probabilities` turns two answers into the probabilities of the five verdicts
(:data:`VERDICTS`, through :func:`judgekit.sim.judge_style.verdict_probabilities` and the judge's
:class:`~judgekit.sim.judge_style.JudgeStyle`), :func:`draw` picks one, :func:`describe` says a
phrase of an answer's quality band.  The judges themselves live with their benchmarks (for
example :mod:`judgekit.benchmarks.creation_mmbench.sim`) or, for the common judge formats, in
:mod:`judgekit.sim.generic_judge`.
"""

from __future__ import annotations

import math
import random

from judgekit.sim.judge_style import JudgeStyle, verdict_probabilities

__all__ = ["VERDICTS", "MIRRORED", "PUNCT_TABLE", "DESCRIPTIONS", "answer_quality", "describe", "draw",
           "pair_probabilities"]

#: verdicts from best-for-A to best-for-B
VERDICTS: tuple[str, ...] = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
#: each verdict as written from the other side
MIRRORED = {"A>>B": "B<<A", "A>B": "B<A", "A=B": "B=A", "B>A": "A<B", "B>>A": "A<<B"}

#: punctuation read as spaces when counting an answer's words
PUNCT_TABLE = str.maketrans({c: " " for c in ".,;:!?\"'()[]{}*#-_/\\<>=`~|"})


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
