"""The built-in benchmarks by name: the module of each one's flow (:data:`BENCHMARKS`) and of its
simulated behaviour (:data:`SIMULATED`).  A leaf module: :mod:`.base` and :mod:`.plugins` both
read it, and neither imports the other at import time."""

from __future__ import annotations

__all__ = ["BENCHMARKS", "SIMULATED"]

BENCHMARKS = {
    "creation_mmbench": "judgekit.benchmarks.creation_mmbench.pipeline",
    "guessbench": "judgekit.benchmarks.guessbench.pipeline",
    "mmgenbench": "judgekit.benchmarks.mmgenbench.pipeline",
    "mmie": "judgekit.benchmarks.mmie.pipeline",
    "rubric": "judgekit.benchmarks.rubric.pipeline",
    "pairwise": "judgekit.benchmarks.pairwise.pipeline",
}

#: each built-in benchmark's simulated behaviour: the module whose ``behaviours`` the simulator
#: asks (:mod:`judgekit.sim.behaviours`); the generic ``pairwise`` and ``rubric`` benchmarks' judge
#: prompts use the common judge formats, which the simulator's core answers itself
SIMULATED = {
    "creation_mmbench": "judgekit.benchmarks.creation_mmbench.sim",
    "guessbench": "judgekit.benchmarks.guessbench.sim",
    "mmgenbench": "judgekit.benchmarks.mmgenbench.sim",
    "mmie": "judgekit.benchmarks.mmie.sim",
}
