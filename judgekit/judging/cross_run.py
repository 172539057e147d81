"""Bradley-Terry ratings across runs: the candidates of several runs of one benchmark, judged
against the same reference on the same items, rated by one fit (``judgekit report RUN RUN ...``).

Per (benchmark, judge) that two or more runs share: the items every one of those runs judged
(an item is its id in the benchmark's data, so the runs must read the same items and reference
answers, as every run of a built-in benchmark does); each run's candidates, named ``candidate
(run)`` so the same model in two runs stays two entries; every pairwise judgment of theirs on
those items (both orders; a (candidate, item) with a failed judgment left out, as in a run's own
fit) in one Bradley-Terry fit against the reference (:func:`.control.bt_rows`: Elo scale, the
reference at 1000, a much-better verdict counting three battles, a tie half).  The interval
resamples the shared items: an item drawn brings every run's judgments of it, so the runs'
ratings move together as they would had the runs been one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .control import bt_rows
from .uncertainty import IntervalOptions

__all__ = ["cross_run_ratings"]


def cross_run_ratings(runs: Sequence[tuple[str, str, Sequence[Mapping[str, Any]]]],
                      options: IntervalOptions | None = None) -> list[dict[str, Any]]:
    """``runs``: (label, benchmark, judgments) with each judgment's ``candidate``, ``judge``,
    ``item``, ``order``, ``kind``, ``value`` (the candidate's score -2..2) and ``ok``, as a run's
    results.parquet holds them.  One entry per (benchmark, judge) shared by two or more runs:
    ``{"benchmark", "judge", "runs", "items", "rows"}`` with ``rows`` as :func:`bt_rows` gives
    them plus ``run`` and ``candidate``."""
    options = options or IntervalOptions()
    by_key: dict[tuple[str, str], dict[str, list[Mapping[str, Any]]]] = {}
    for label, bench, judgments in runs:
        for j in judgments:
            if j.get("kind") == "pairwise":
                by_key.setdefault((bench, str(j.get("judge"))), {}).setdefault(label, []).append(j)
    out = []
    for (bench, judge), per_run in by_key.items():
        if len(per_run) < 2:
            continue
        shared = set.intersection(*({str(j.get("item")) for j in js} for js in per_run.values()))
        if not shared:
            continue
        records, names, where = [], [], {}
        for label, js in per_run.items():
            for j in sorted(js, key=lambda j: (str(j.get("item")), str(j.get("candidate")), j.get("order") or 0)):
                item = str(j.get("item"))
                if item not in shared:
                    continue
                name = f"{j.get('candidate')} ({label})"
                if name not in where:
                    where[name] = (label, str(j.get("candidate")))
                    names.append(name)
                ok = bool(j.get("ok")) and j.get("value") is not None
                records.append({"model": name, "index": item, "kind": "pairwise",
                                "score": int(round(float(j["value"]))) if ok else None})
        records.sort(key=lambda r: r["index"])  # the items' codes in one order whatever the runs' order
        rows = bt_rows(records, names, options, key=f"cross-run:{bench}:{judge}")
        for r in rows:
            r["run"], r["candidate"] = where[r["model"]]
        rows.sort(key=lambda r: (r["bt_rating"] is None, -(r["bt_rating"] or 0.0)))
        out.append({"benchmark": bench, "judge": judge, "runs": list(per_run), "items": len(shared), "rows": rows})
    return out
