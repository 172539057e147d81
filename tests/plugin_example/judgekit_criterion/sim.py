"""The criterion benchmark's simulated judge: what judgekit's simulator answers to ``judge.txt``.

Loaded only inside the simulator (the benchmark names this module in its ``simulated`` attribute),
so a run that uses a real judge never imports the simulator.  The judge reads the answer between
``[Answer]`` and the end of the prompt, weighs it as every simulated judge does (longer answers from
a richer vocabulary: judgekit.sim's ``answer_quality``), and passes it with probability
``s(1.2 (quality - 5))`` plus up to +-0.1 of noise; a reply asked to be garbage has no verdict.
"""

from __future__ import annotations

import random

from judgekit.sim.behaviours import Behaviour, Request
from judgekit.sim.judge_replies import answer_quality, describe
from judgekit.sim.judge_style import sigmoid

KIND = "criterion_verdict"
MARK = "PASS if the answer meets the criterion"  # a line of judge.txt
ANSWER = "[Answer]"


def classify(text: str, last_user: str) -> str | None:
    return KIND if MARK in text and ANSWER in text else None


def reply(kind: str, req: Request, rng: random.Random) -> tuple[str, bool]:
    answer = req.text[req.text.rfind(ANSWER) + len(ANSWER):].strip()
    q = answer_quality(answer)
    reason = f"The answer {describe(q, rng)}."
    if req.garbage:
        return reason + " It is hard to say whether it meets the criterion.", True
    p = sigmoid(1.2 * (q - 5.0)) + rng.uniform(-0.1, 0.1)
    return f"{reason}\n{'PASS' if rng.random() < p else 'FAIL'}", False


behaviours = [Behaviour("criterion", (KIND,), classify, reply, order=100, description="the criterion judge")]
