"""What a simulated behaviour is: :class:`Behaviour` (a benchmark's guesser, judge or scorer: which
requests it claims, how it answers them) and :class:`Request` (what it reads of a request).

A leaf of the simulator's core: the core's own behaviour (:mod:`judgekit.sim.generic_judge`), every
benchmark's (``judgekit/benchmarks/NAME/sim.py``) and the loader that orders them
(:mod:`judgekit.sim.behaviours`, which re-exports both names, where benchmarks import them from)
all stand on it, and it imports none of them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from judgekit.sim.judge_style import JudgeStyle

__all__ = ["Behaviour", "Request"]


@dataclass(frozen=True, slots=True)
class Request:
    """What a behaviour reads of a request (beside its kind and the seeded ``rng``)."""

    text: str
    """the whole prompt text, every message in order"""
    last_user: str
    """the text of the last user message (the whole ``text`` when the request did not say)"""
    images: Sequence[Mapping[str, str]] = ()
    """one dict of PNG text labels per image of the request, in order (empty for an unlabelled one)"""
    quality: float = 0.5
    """the answering model's quality, 0..1 (``SimConfig.model_quality``)"""
    garbage: bool = False
    """whether this request drew an unparseable judge reply (``SimConfig.garbage_rate``)"""
    style: JudgeStyle | None = None
    """the judging model's style (``SimConfig.judge_styles``); None: the usual judge"""


@dataclass(frozen=True, slots=True)
class Behaviour:
    """One benchmark's simulated answers.

    ``classify(text, last_user)`` returns one of ``kinds`` when the request is this behaviour's,
    else None.  ``reply(kind, request, rng)`` returns ``(text, garbage)``: the reply, and whether
    it was made unparseable on purpose (``request.garbage`` for a judge that honours it, False for
    a candidate's answer).  The core cuts the text at ``max_tokens`` and counts its tokens.
    """

    name: str
    kinds: tuple[str, ...]
    classify: Callable[[str, str], str | None]
    reply: Callable[[str, Request, random.Random], tuple[str, bool]]
    order: int = 100
    description: str = field(default="", compare=False)
