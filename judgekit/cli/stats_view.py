"""``judgekit cache stats`` for a person: the dict of :func:`judgekit.cache.admin.stats` as a few
short lines and tables that fold at 80 columns (``--json`` prints the dict itself)."""

from __future__ import annotations

import os
from typing import Any, Iterator

from rich.markup import escape
from rich.table import Table

from ..plural import plural

__all__ = ["stats_renderables"]

#: runs listed (newest first); the rest are counted
RUNS_SHOWN = 5


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} GB"  # pragma: no cover


def _usd(v: float) -> str:
    from ..engine.budget import usd

    return usd(v)


def _when(v: Any) -> str:
    return "-" if v is None else str(v)[:16]


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {n:,}" for k, n in sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))


def stats_renderables(st: dict[str, Any]) -> Iterator[Any]:
    """What ``cache stats`` prints, one rich renderable (or markup line) at a time."""
    blobs = st.get("blobs") or {"files": 0, "bytes": 0}
    yield (f"[bold]cache[/bold] {escape(os.path.abspath(st['path']))}: {_size(st['file_bytes'])}"
           + (f", images {_size(blobs['bytes'])} in {plural(blobs['files'], 'file')}" if blobs["files"] else "")
           + f" (schema {st['schema_version']})")
    if st.get("read_from") == "copy":
        yield "[yellow]another process (a run) holds the file: read from a copy taken now[/yellow]"

    rows = st["responses_by"]
    spent = sum(r["cost_usd"] for r in rows)
    tin = sum(r.get("input_tokens", 0) for r in rows)
    tout = sum(r.get("output_tokens", 0) for r in rows)
    yield ""
    yield (f"[bold]{plural(st['responses'], 'cached call')}[/bold], {tin:,} input and {tout:,} output tokens, "
           f"{_usd(spent)} spent on them")
    if rows:
        providers = {r["provider"] for r in rows}
        one = len(providers) == 1  # the provider said once in the header, not on every row
        t = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
        t.add_column("stage")
        t.add_column(f"model ({escape(next(iter(providers)))})" if one else "model (provider)",
                     overflow="fold", ratio=1)
        for name in ("calls", "in tok", "out tok", "out/call"):
            t.add_column(name, justify="right")
        t.add_column("spent", justify="right")
        for r in sorted(rows, key=lambda r: (r["stage"], r["model"], r["provider"])):
            mean = r["output_tokens_mean"]
            t.add_row(escape(r["stage"]),
                      escape(r["model"]) + ("" if one else f" [dim]({escape(r['provider'])})[/dim]"),
                      f"{r['rows']:,}", f"{r.get('input_tokens', 0):,}", f"{r.get('output_tokens', 0):,}",
                      "-" if mean is None else f"{mean:,.0f}", _usd(r["cost_usd"]))
        yield t

    runs = st["runs"]
    yield ""
    by_status: dict[str, int] = {}
    for r in runs:
        by_status[str(r["status"])] = by_status.get(str(r["status"]), 0) + 1
    yield f"[bold]{plural(len(runs), 'run')}[/bold]" + (f" ({_counts(by_status)})" if runs else "") + (
        f", the latest {RUNS_SHOWN}:" if len(runs) > RUNS_SHOWN else ":" if runs else "")
    if runs:
        t = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
        t.add_column("started (UTC)", no_wrap=True)
        t.add_column("spec", overflow="fold", ratio=1)
        t.add_column("status")
        t.add_column("run id", overflow="fold")
        for r in runs[:RUNS_SHOWN]:
            t.add_row(_when(r["started_at"]), escape(str(r["name"])), escape(str(r["status"])),
                      escape(str(r["run_id"])))
        yield t

    yield ""
    yield (f"[bold]{st['failures']:,} failed attempts[/bold]"
           + (f": {escape(_counts(st['failures_by_kind']))}" if st["failures"] else "")
           + " [dim](never served as answers; a re-run retries them)[/dim]")
    b = st["batches"]
    if b["total"]:
        states = {k: v["batches"] for k, v in b["by_state"].items()}
        yield (f"[bold]{plural(b['total'], 'provider batch')}[/bold] ({escape(_counts(states))})"
               + (f"; [yellow]{b['live']:,} live[/yellow] (answers not collected yet: the next run collects "
                  "them; `judgekit batches cancel` stops them)" if b["live"] else ""))
    live = st.get("live_batches") or []
    if live:  # every live batch: what the next run collects and `judgekit batches cancel` acts on
        t = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
        t.add_column("live batch", no_wrap=True)  # whole: it is what `batches cancel` and a provider's console take
        t.add_column("alias", overflow="fold")
        t.add_column("run", overflow="fold")
        t.add_column("state", overflow="fold")
        t.add_column("requests", justify="right")
        t.add_column("answered", justify="right")
        t.add_column("created (UTC)", no_wrap=True)
        for r in live:
            state = str(r.get("state") or "-")
            word = r.get("provider_status")
            t.add_row(escape(str(r["batch_id"])), escape(str(r.get("alias") or "-")), escape(str(r.get("run_id") or "-")),
                      escape(state + (f" ({word})" if word and word != state else "")), f"{int(r.get('requests') or 0):,}",
                      f"{int(r.get('succeeded') or 0):,}", _when(r.get("created_at")))
        yield t
    tables = st["result_tables"]
    if tables:
        shown = ", ".join(tables[:4]) + (f", ... ({len(tables) - 4} more)" if len(tables) > 4 else "")
        yield (f"[bold]{plural(len(tables), 'result table')}[/bold]: {escape(shown)} "
               "[dim](judgekit cache export --table NAME)[/dim]")
