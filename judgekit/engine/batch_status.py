"""How batches look to a person: a line per alias for the live display, and what to do with
batches a stopped run left at the provider.

Waiting on a batch must never look like a hang: each line says how many batches are submitted,
in progress at the provider, being collected and done, how many requests they hold and how many
are answered, how old the oldest is, the provider's own word for it and when it was last polled,
and how many calls wait for the next wave.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any

from ..plural import plural

__all__ = ["status_lines", "batches_pending", "live_batch_keys", "fmt_age"]


def fmt_age(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h07m``."""
    if seconds is None:
        return "?"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def status_lines(engine: Any) -> list[str]:
    """One line per alias with a batch API that has (or had) batches or calls waiting; [] when none."""
    layer = getattr(engine, "batches", None)
    if layer is None:
        return []
    out = []
    now = time.monotonic()
    for alias, lane in layer.lanes.items():
        mine = [b for b in layer.batches.values() if b.lane is lane]
        waiting = len(lane.wave) + lane.submitting
        queue = lane.queue.note() if hasattr(lane, "queue") else ""  # the enqueued-token limit's waits
        if not mine and not waiting and not queue:
            continue
        live = [b for b in mine if not b.collected]
        done = len(mine) - len(live)
        submitted = sum(1 for b in live if b.status is not None and b.status.state == "submitted")
        collecting = sum(1 for b in live if b.status is not None and b.status.terminal)
        running = len(live) - submitted - collecting
        parts = []
        if live:
            kinds = ", ".join(f"{n} {w}" for n, w in ((submitted, "submitted"), (running, "in progress"),
                                                      (collecting, "collecting")) if n)
            requests = sum(len(b.rows) for b in live)
            answered = sum(b.status.succeeded for b in live if b.status is not None)
            oldest = min(live, key=lambda b: b.record.created_at or 0)
            word = oldest.status.provider_status if oldest.status is not None else oldest.record.provider_status
            polled = f", polled {fmt_age(now - oldest.polled)} ago" if oldest.polled is not None else ""
            note = f"; {oldest.note}" if oldest.note else ""
            parts.append(f"{plural(len(live), 'batch')} live ({kinds}): {plural(requests, 'request')}, "
                         f"{answered:,} answered; "
                         f"oldest {fmt_age(oldest.record.age_s)} old, provider says '{word}'{polled}{note}")
        if done:
            parts.append(f"{done} done")
        if waiting:
            parts.append(f"{plural(waiting, 'call')} " + ("being submitted" if lane.submitting and not lane.wave
                                                    else "waiting for the next batch"))
        if queue:
            parts.append(queue)
        out.append(f"{alias} ({lane.prov.kind} {lane.prov.model}) batches: " + "; ".join(parts))
    return out


def batches_pending(engine: Any, cache_path: Path | str, spec_name: str) -> str:
    """What to tell a person when a run ends with batches still live (Ctrl-C, a stop); '' if none."""
    layer = getattr(engine, "batches", None)
    live = layer.live() if layer is not None else []
    if not live:
        return ""
    requests = sum(len(b.rows) for b in live)
    cancel = shlex.join(["judgekit", "batches", "cancel", "--cache", str(cache_path), "--spec", spec_name])
    return (f"{plural(len(live), 'batch')} ({plural(requests, 'request')}) {'is' if len(live) == 1 else 'are'} "
            "still running at the provider and recorded in the "
            f"cache: run the same command again to collect their answers (nothing is submitted twice), or cancel "
            f"them with: {cancel}")


async def live_batch_keys(cache: Any, keys: list[str]) -> set[str]:
    """Which of ``keys`` a live batch of ``cache`` holds (the estimate counts them as submitted)."""
    fn = getattr(cache, "live_keys", None)
    return await fn(keys) if fn is not None else set()
