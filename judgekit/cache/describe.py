"""One line that says which cache a run or an estimate uses and what it holds of the spec.

A run started from another folder opens another default cache (``judgekit-out/cache.duckdb`` is
relative): without a word, resume would be lost.  :func:`cache_line` names the file (absolute)
and its earlier runs of the spec, e.g. ``cache /w/judgekit-out/cache.duckdb: 2 earlier runs of
quickstart, the last at 2026-11-24 06:01 UTC, 208 calls cached by them`` or ``cache ...: new (no
earlier run of quickstart)``.
"""

from __future__ import annotations

import os

from judgekit.cache.store import CacheStore

from ..plural import plural

__all__ = ["cache_line"]


async def cache_line(store: CacheStore, spec_name: str) -> str:
    """The line for ``store`` opened for a run (or an estimate) of the spec named ``spec_name``;
    call it before the run records itself."""
    where = os.path.abspath(store.path)
    if store.source == "none":
        return f"cache {where}: none yet (a run makes it); every call is counted as to make"
    copy = "; read from a copy: another process (a run) holds it" if store.source == "copy" else ""
    ((runs, last),) = await store.query(
        "SELECT count(*), max(started_at) FROM runs WHERE name = $1", [spec_name])
    if not runs:
        ((others,),) = await store.query("SELECT count(*) FROM responses")
        held = f"; {plural(others, 'cached call')} of other specs, used where they match" if others else ""
        return f"cache {where}: new (no earlier run of {spec_name}){held}{copy}"
    ((calls,),) = await store.query(
        "SELECT count(*) FROM responses WHERE run_id IN (SELECT run_id FROM runs WHERE name = $1)",
        [spec_name])
    when = f", the last at {str(last)[:16]} UTC" if last is not None else ""
    return (f"cache {where}: {plural(runs, 'earlier run')} of {spec_name}{when}, "
            f"{plural(calls, 'call')} cached by them{copy}")
