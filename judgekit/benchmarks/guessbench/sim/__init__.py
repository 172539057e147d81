"""GuessBench's simulated behaviour: a guesser that "sees" labelled Minecraft builds, its review
turns (self-refine, image retrieval) and the answer-extraction judge.

Registered for the simulator by :data:`judgekit.benchmarks.registry.SIMULATED` (order 50, the last of
the built-ins; see :mod:`judgekit.sim.behaviours`).  :mod:`.guess` draws the replies, :mod:`.read`
reads the prompts and the builds' PNG labels, :mod:`.words` holds the vocabulary.
"""

from __future__ import annotations

import random

from judgekit.sim.behaviours import Behaviour, Request

from .guess import GUESS_KINDS, guess_kind, guess_reply

__all__ = ["behaviours"]


def _reply(kind: str, req: Request, rng: random.Random) -> tuple[str, bool]:
    return guess_reply(kind, req.text, req.last_user, req.images, rng, quality=req.quality, garbage=req.garbage)


behaviours = [Behaviour("guessbench", GUESS_KINDS, guess_kind, _reply, order=50,
                        description="GuessBench's guesser, its review turns and the extraction judge")]
