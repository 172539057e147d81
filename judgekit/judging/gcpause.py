"""The statistics pass with Python's cyclic garbage collector paused.

A run's judgment records are hundreds of thousands of dicts (550,800 at 765 items x 20
candidates x 3 judges x 3 repeats), all alive for the whole pass.  The pass itself allocates
many small containers (row dicts, tuples, lists of per-item sums), and each time enough of them
pile up the collector walks every tracked object, the records included, looking for cycles that
are not there: at that size about half a second of a six-second pass went to those walks
(``perf/intervals.py``).  The pass makes no reference cycles worth collecting (its objects are
freed by reference counting as usual), so :class:`paused_gc` turns the collector off around it
and back on after, only if it was on; nested uses leave it to the outermost one.
"""

from __future__ import annotations

import gc
from contextlib import ContextDecorator

__all__ = ["paused_gc"]


class paused_gc(ContextDecorator):
    """``with paused_gc(): ...`` or ``@paused_gc()``: the collector off inside, as it was after."""

    def __enter__(self) -> "paused_gc":
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> bool:
        if self._was_enabled:
            gc.enable()
        return False
