"""Creation-MMBench's simulated judge: a pairwise verdict and visual factuality scores.

Registered for the simulator by :data:`judgekit.benchmarks.registry.SIMULATED` (see
:mod:`judgekit.sim.behaviours`), at order 10: before every other behaviour.

``pairwise``
    A pairwise judge prompt (``[ASSISTANT A]``, ``[ASSISTANT B]`` and ``Final Verdict``) that asks
    for no format of the common judges (:func:`judgekit.sim.generic_judge.wants_generic_format`).
    The reply evaluates both answers and ends with ``Final Verdict is: [[X]]``; about 5 % of replies
    spell the verdict the mirrored way (``[[B<A]]``) or with spaces inside the brackets, as real
    judges do.  The verdict is drawn from :func:`judgekit.sim.judge_replies.pair_probabilities` of
    the two answers and the judge's :class:`~judgekit.sim.judge_style.JudgeStyle`.
``vfs``
    A visual factuality prompt.  The reply ends with ``Response A Visual Factuality Score: <a>/10``
    and ``Response B ...: Y/10``, each ``10 s(1.2 (quality - 5))`` plus up to +-1 point of noise
    (shaped by the judge's style: noise, leniency, position bias for Response A).
"""

from __future__ import annotations

import random

from judgekit.sim.behaviours import Behaviour, Request
from judgekit.sim.generic_judge import wants_generic_format
from judgekit.sim.judge_replies import MIRRORED, VERDICTS, answer_quality, describe, draw, pair_probabilities
from judgekit.sim.judge_style import JudgeStyle, sigmoid, styled_score

__all__ = ["KIND_PAIRWISE", "KIND_VFS", "behaviours", "classify", "extract_answers", "pairwise_text", "vfs_text"]

KIND_PAIRWISE = "pairwise"
KIND_VFS = "vfs"


def classify(text: str, last_user: str) -> str | None:
    """``pairwise``, ``vfs`` or None (not a Creation-MMBench judge prompt)."""
    if "[ASSISTANT A]" in text and "[ASSISTANT B]" in text:
        low = text.lower()
        if "visual factuality score" in low:
            return KIND_VFS
        if "final verdict" in low and not wants_generic_format(text):
            return KIND_PAIRWISE
    elif "Visual Factuality Score" in text:
        return KIND_VFS
    return None


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


def reply(kind: str, req: Request, rng: random.Random) -> tuple[str, bool]:
    """The judge's reply to a request of ``kind``; ``req.garbage`` makes it unparseable."""
    if kind == KIND_PAIRWISE:
        return pairwise_text(req.text, rng, req.garbage, req.style), req.garbage
    return vfs_text(req.text, rng, req.garbage, req.style), req.garbage


behaviours = [Behaviour("creation_mmbench", (KIND_PAIRWISE, KIND_VFS), classify, reply, order=10,
                        description="Creation-MMBench's pairwise and visual factuality judge")]
