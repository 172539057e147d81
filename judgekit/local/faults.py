"""What went wrong with a run's local workers, for ``summary.json`` and the closing lines.

:func:`local_workers` reads each local model's ``faults()`` (its backend's counts, with the
batcher's items sent again and failed for want of a worker); :func:`fault_lines` says the
noteworthy ones in a line per alias.  A record, as ``summary.json`` keeps it under
``local_workers``::

    {"gen": {"backend": "ray", "actors_asked": 2, "actors": 2, "live": 1, "starts": 3,
             "crashes": 1, "restarts": 1, "lost_nodes": ["host node 1a2b3c4d"],
             "refused_nodes": [], "notes": [], "items_resent": 4, "items_unavailable": 0,
             "shared_by": ["gen"]}}

(a subprocess worker's record has ``backend``, ``starts``, ``crashes`` and ``restarts``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["local_workers", "fault_lines"]


def local_workers(providers: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per alias with a started local model: its workers' faults record ({} when none)."""
    out: dict[str, dict[str, Any]] = {}
    for alias, prov in providers.items():
        get = getattr(prov, "faults", None)
        if not callable(get):
            continue
        record = get()
        if record:
            out[alias] = dict(record)
    return out


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (plural or word + 's')}"


def fault_lines(records: dict[str, dict[str, Any]]) -> list[str]:
    """A line per alias whose workers had a fault (a crash, a lost or refused node, items sent
    again or failed for want of a worker, fewer actors than asked); [] when all went well."""
    lines: list[str] = []
    for alias, r in records.items():
        crashes, resent = int(r.get("crashes") or 0), int(r.get("items_resent") or 0)
        unavailable = int(r.get("items_unavailable") or 0)
        lost, refused = list(r.get("lost_nodes") or []), list(r.get("refused_nodes") or [])
        asked, placed = r.get("actors_asked"), r.get("actors")
        short = asked is not None and placed is not None and placed < asked
        if not (crashes or resent or unavailable or lost or refused or short):
            continue
        parts = []
        if asked is not None:
            parts.append(f"{placed} of {asked} actors placed" if short else _n(int(placed or 0), "actor"))
        parts.append(_n(crashes, "crash", "crashes"))
        parts.append(_n(int(r.get("restarts") or 0), "restart"))
        parts.append(f"{_n(resent, 'item')} sent again")
        if unavailable:
            parts.append(f"{_n(unavailable, 'item')} failed with no live worker (a rerun asks them again)")
        if lost:
            parts.append(f"lost node{'s' if len(lost) != 1 else ''} {', '.join(lost)}")
        if refused:
            parts.append(f"refused (no store) {', '.join(refused)}")
        lines.append(f"local workers of {alias} ({r.get('backend', '?')}): " + ", ".join(parts))
    return lines
