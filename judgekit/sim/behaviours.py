"""Simulated behaviours: what a guesser, a judge or a scorer of one benchmark answers.

The simulator's core (the HTTP APIs, limits, faults, batch APIs, prefix cache) knows no benchmark.
Each benchmark brings its behaviours, :class:`Behaviour` objects (defined, with :class:`Request`, in
the leaf :mod:`judgekit.sim.behaviour_types` and re-exported here): ``classify`` says whether a
request is one of its kinds (from the prompt text and the last user message), ``reply`` answers
it.  :func:`judgekit.sim.replies.make_reply` asks them in precedence order (``order``, then
``name``); the first that claims a request answers it, and a request nobody claims gets the core's
free-text answer.

Where they come from (:func:`load`):

- the common judge formats (Arena-Hard's ``[[A>B]]``, MT-Bench's ``[[A]]``/``Rating: [[N]]``), a
  behaviour of the core: :mod:`judgekit.sim.generic_judge`;
- every built-in benchmark's, listed by the benchmark registry
  (:data:`judgekit.benchmarks.registry.SIMULATED`): Creation-MMBench's pairwise and visual factuality
  judge, MMIE's scorer, MMGenBench's captioner, GuessBench's guesser and extractor;
- a plugin benchmark's, when ``SimConfig.benchmarks`` names it: its module's ``simulated``
  attribute (a :class:`Behaviour`, a list of them, or the dotted name of a module whose
  ``behaviours`` lists them), found by :func:`judgekit.benchmarks.plugins.simulated`.

The built-in orders (10 Creation-MMBench, 20 the common judge formats, 30 MMIE, 40 MMGenBench, 50
GuessBench) reproduce the simulator's dispatch as it was before the split; a plugin's behaviour
should take an order above 100, so that it never takes a built-in benchmark's request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from judgekit.sim.behaviour_types import Behaviour, Request

__all__ = ["Behaviour", "Request", "load", "builtin", "ordered"]


def ordered(behaviours: Iterable[Behaviour]) -> tuple[Behaviour, ...]:
    """``behaviours`` in precedence order, each once (by name: the first of a name is kept)."""
    seen: dict[str, Behaviour] = {}
    for b in behaviours:
        seen.setdefault(b.name, b)
    return tuple(sorted(seen.values(), key=lambda b: (b.order, b.name)))


@lru_cache(maxsize=1)
def builtin() -> tuple[Behaviour, ...]:
    """The core's behaviours and every built-in benchmark's, in precedence order."""
    from judgekit.benchmarks.plugins import simulated_builtins  # the benchmark registry, by name
    from judgekit.sim.generic_judge import BEHAVIOUR

    return ordered([BEHAVIOUR, *simulated_builtins()])


@lru_cache(maxsize=32)
def _load(plugins: tuple[str, ...]) -> tuple[Behaviour, ...]:
    from judgekit.benchmarks.plugins import simulated  # the benchmark registry, by name

    extra = [b for name in plugins for b in simulated(name)]
    return ordered([*builtin(), *extra])


def load(plugins: Sequence[str] = ()) -> tuple[Behaviour, ...]:
    """The built-in behaviours and those of the plugin benchmarks named in ``plugins`` (entry-point
    names, dotted module paths or ``.py`` files, as a spec's ``benchmark`` names them)."""
    return _load(tuple(plugins)) if plugins else builtin()
