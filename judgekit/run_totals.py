"""A run's money over all its processes: what ``summary.json`` and the closing line report.

A run is often several processes: one killed (``kill -9``, a crash, a closed laptop) or stopped
(Ctrl-C, the cost cap), then the same command again, which resumes from the cache.  Each process
is one row of the cache's ``runs`` table (its ``run_id``); a run's money is the sum of its
processes.

**Which processes.**  The earlier processes of a run are the ``runs`` rows of the same spec name
into the same results folder (``spec_json``'s ``run.out_dir``), latest first, back to (not
including) the last one that finished ``done``: a process that ended done closes its run, and the
next one into that folder starts a new one.

**What each one spent**, first match wins:

1. its record (``runs.summary_json``, written when it ended, even interrupted or stopped):
   ``cost_usd``, ``paid_calls`` and ``batch`` (with its ``unanswered`` causes), its own figures,
   exactly as it counted them;
2. a process that left no record (killed) is counted from the cache: the responses it wrote
   (each carries its ``run_id`` and ``cost_usd``, and reaches the write-ahead log the moment it
   is paid, so a ``kill -9`` loses none): their number and cost; those whose key a batch held
   are its batch calls, their live equivalent priced from their token counts at the live rates.
   What such a process paid for a reply it could not read (a billed failure) is not in the cache,
   and is not counted.

:func:`run_totals` returns the totals, this process's figures beside them, and each earlier
process's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ProcessFigures", "run_totals", "earlier_processes"]

_BATCH_KEYS = ("calls", "cost_usd", "live_equivalent_usd", "retried", "collected_for_later")


@dataclass(slots=True)
class ProcessFigures:
    """What one process of a run spent."""

    run_id: str
    status: str
    cost_usd: float = 0.0
    paid_calls: int = 0
    batch: dict[str, Any] = field(default_factory=dict)  # the summary's batch block (its sums)
    counted_from: str = "record"  # "record" (its own), "cache" (killed: its responses), "this process"

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "status": self.status, "cost_usd": round(self.cost_usd, 6),
                "paid_calls": self.paid_calls, "batch": _batch_block(self.batch), "counted_from": self.counted_from}


def _batch_block(b: dict[str, Any]) -> dict[str, Any]:
    cost, live = float(b.get("cost_usd", 0.0)), float(b.get("live_equivalent_usd", 0.0))
    unanswered = b.get("unanswered") if isinstance(b.get("unanswered"), dict) else {}
    return {"calls": int(b.get("calls", 0)), "cost_usd": round(cost, 6), "live_equivalent_usd": round(live, 6),
            "saved_usd": round(live - cost, 6), "retried": int(b.get("retried", 0)),
            "collected_for_later": int(b.get("collected_for_later", 0)),
            "unanswered": dict(sorted((str(k), int(_number(n))) for k, n in unanswered.items()))}


def _add_batch(into: dict[str, Any], b: dict[str, Any]) -> None:
    """Add batch block ``b``'s figures to ``into`` (its ``unanswered`` causes too)."""
    for k in _BATCH_KEYS:
        into[k] = into.get(k, 0.0) + _number(b.get(k))
    causes = b.get("unanswered")
    if isinstance(causes, dict):
        mine = into.setdefault("unanswered", {})
        for cause, n in causes.items():
            mine[cause] = mine.get(cause, 0) + int(_number(n))


def _number(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else 0.0


def _from_record(run_id: str, status: str, record: dict) -> ProcessFigures:
    batch: dict[str, Any] = {}
    if isinstance(record.get("batch"), dict):
        _add_batch(batch, record["batch"])
    return ProcessFigures(run_id, status, _number(record.get("cost_usd")), int(_number(record.get("paid_calls"))),
                          batch)


async def _earlier_rows(cache, spec_name: str, out_dir: Path, run_id: str) -> list[tuple[str, str, dict | None]]:
    """``(run_id, status, record)`` of the run's earlier processes, oldest first (see the module
    docstring); ``record`` None for a process that left none."""
    from .run_cap import _folder

    rows = await cache.query(
        "SELECT run_id, status, spec_json, summary_json FROM runs WHERE name = $1 AND run_id <> $2 "
        "ORDER BY started_at DESC", [spec_name, run_id])
    return earlier_processes(rows, _folder(out_dir))


def earlier_processes(rows, folder: str) -> list[tuple[str, str, dict | None]]:
    """The run's earlier processes among ``rows`` of the ``runs`` table (``run_id, status,
    spec_json, summary_json``, latest first) of one spec name: those into ``folder`` back to the
    last one that finished ``done``, oldest first, as ``(run_id, status, record)``; a process that
    left no record (killed: its row still says ``running``) has status ``killed`` and record None."""
    found = []
    for rid, status, spec_json, summary_json in rows:
        try:
            if json.loads(spec_json)["run"]["out_dir"] != folder:
                continue
        except (ValueError, TypeError, KeyError):
            continue  # a record of an older version, or of another folder: not this run's
        if status == "done":
            break
        try:
            record = json.loads(summary_json) if summary_json else None
        except ValueError:
            record = None
        record = record if isinstance(record, dict) else None
        found.append((rid, "killed" if record is None and status in (None, "running") else status, record))
    return found[::-1]


async def _from_cache(cache, engine, killed: list[tuple[str, str]]) -> list[ProcessFigures]:
    """The figures of processes that left no record, from the responses they wrote."""
    from .cost.prices import price_usd, usage_usd
    from .types import Usage

    ids = [rid for rid, _ in killed]
    rows = await cache.query(
        "SELECT r.run_id, r.provider, r.model, r.base_url, r.input_tokens, r.output_tokens, r.cost_usd, "
        "r.key IN (SELECT key FROM batch_requests) AS batched FROM responses r "
        "WHERE r.run_id IN (SELECT unnest($1::VARCHAR[]))", [ids])
    figures = {rid: ProcessFigures(rid, status, counted_from="cache") for rid, status in killed}
    priced = {(p.kind, p.model, p.identity): p for p in getattr(engine, "providers", {}).values()}
    for rid, provider, model, base_url, i, o, cost, batched in rows:
        f = figures[rid]
        cost = _number(cost)
        f.paid_calls += 1
        f.cost_usd += cost
        if batched:
            usage = Usage(input_tokens=int(i or 0), output_tokens=int(o or 0))
            prov = priced.get((provider, model, base_url))
            if prov is not None:
                billed = getattr(prov.spec, "base_model", None) or prov.model
                live = usage_usd(prov.kind, billed, usage, prov.spec.price)
            else:
                live = price_usd(provider, model, usage.input_tokens, usage.output_tokens)
            b = f.batch
            b["calls"] = b.get("calls", 0) + 1
            b["cost_usd"] = b.get("cost_usd", 0.0) + cost
            b["live_equivalent_usd"] = b.get("live_equivalent_usd", 0.0) + (live if live is not None else cost)
    return [figures[rid] for rid in ids]


async def run_totals(cache, engine, spec_name: str, out_dir: Path, run_id: str) -> dict[str, Any]:
    """The run's totals over its processes (``cost_usd``, ``paid_calls``, ``batch``), this
    process's figures (``this_process``) and the earlier processes' (``earlier_processes``)."""
    stats, savings = engine.stats, engine.savings
    # answers this process collected from a batch before its flow asked for them were paid too
    this = ProcessFigures(run_id, "running", stats.spent_usd, stats.paid_calls + savings.batch_collected_unasked,
                          savings.as_dict()["batch"], "this process")
    try:
        rows = await _earlier_rows(cache, spec_name, out_dir, run_id)
        killed = [(rid, status) for rid, status, record in rows if record is None]
        from_cache = {f.run_id: f for f in (await _from_cache(cache, engine, killed) if killed else [])}
    except Exception as e:  # the cache cannot be read now (a full disk, say): this process alone, said so
        rows, from_cache, unread = [], {}, f"earlier processes not counted: the cache could not be read ({e})"
    else:
        unread = None
    earlier = [from_cache[rid] if record is None else _from_record(rid, status, record) for rid, status, record in rows]
    batch: dict[str, Any] = {}
    for f in (*earlier, this):
        _add_batch(batch, f.batch)
    return {
        "cost_usd": round(sum(f.cost_usd for f in (*earlier, this)), 6),
        "paid_calls": sum(f.paid_calls for f in (*earlier, this)),
        "batch": _batch_block(batch),
        "this_process": {k: v for k, v in this.as_dict().items() if k not in ("status", "counted_from")},
        "earlier_processes": [f.as_dict() for f in earlier],
        **({"earlier_unread": unread} if unread else {}),
    }
