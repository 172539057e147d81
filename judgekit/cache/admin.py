"""Maintenance of a cache file, for the ``judgekit cache`` commands: stats, export, prune.

Plain synchronous functions.  Each opens the file itself, upgrading an old file to the current
schema as ``judgekit run`` would, and closes it before returning.  ``stats`` reads a file held by
another process (a run going on) from a copy; ``export`` and ``prune`` raise
:class:`~judgekit.errors.CacheLockedError` for it.  A missing file raises ``FileNotFoundError``
(these functions never create a cache).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from contextlib import contextmanager
from typing import Any, Iterator, Literal

import duckdb

from judgekit.cache import schema
from judgekit.cache.snapshot import CacheView, open_view
from judgekit.errors import UsageError

__all__ = ["stats", "export", "prune", "ExportFormat"]

ExportFormat = Literal["jsonl", "csv", "parquet"]

_COPY_OPTIONS = {
    "jsonl": "FORMAT json",  # newline-delimited JSON, one object per row
    "csv": "FORMAT csv, HEADER true",
    "parquet": "FORMAT parquet",
}


@contextmanager
def _open(path: str | os.PathLike[str]) -> Iterator[duckdb.DuckDBPyConnection]:
    where = os.fspath(path)
    if not os.path.exists(where):
        raise FileNotFoundError(f"no cache file at {where}")
    if os.path.isdir(where):
        raise UsageError(f"{where} is a folder, not a cache file (pass --cache PATH of a .duckdb file)")
    con = schema.open_database(where)
    try:
        yield con
    finally:
        con.close()


@contextmanager
def _read(path: str | os.PathLike[str]) -> Iterator[CacheView]:
    """The file to read, or a copy of it while another process (a run) holds it."""
    where = os.fspath(path)
    if not os.path.exists(where):
        raise FileNotFoundError(f"no cache file at {where}")
    if os.path.isdir(where):
        raise UsageError(f"{where} is a folder, not a cache file (pass --cache PATH of a .duckdb file)")
    with open_view(where) as view:
        yield view


def _file_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + ".wal") if os.path.exists(p))


def _blob_files(path: str) -> dict[str, int]:
    """The image store beside the cache (``<file>.blobs/``): its files and their bytes."""
    files = size = 0
    for root, _dirs, names in os.walk(path + ".blobs"):
        for n in names:
            try:
                size += os.path.getsize(os.path.join(root, n))
                files += 1
            except OSError:  # removed meanwhile (a prune, a run's clean-up)
                pass
    return {"files": files, "bytes": size}


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def stats(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A summary of the cache file at ``path``.

    A file another process holds (a run going on) is read from a copy taken now
    (:mod:`judgekit.cache.snapshot`).

    Keys: ``path``, ``read_from`` (``"file"``, or ``"copy"`` when another process held it),
    ``file_bytes`` (database plus WAL), ``blobs`` (``{files, bytes}`` of the image store beside
    it), ``schema_version``, ``responses`` (total rows), ``responses_by`` (list of ``{provider,
    model, stage, rows, output_tokens_mean, cost_usd, input_tokens, output_tokens}``, the tokens
    summed), ``failures`` (total failed attempts), ``failures_by_kind`` (``{kind: n}``),
    ``runs`` (list of ``{run_id, name, status, started_at, finished_at}``, newest first),
    ``result_tables`` (names of ``result_*`` tables), ``batches`` (``{total, live, by_state: {state:
    {batches, requests, live}}}``: provider batches, live = answers not collected yet) and
    ``live_batches`` (one dict per live batch, oldest first: what ``judgekit batches cancel`` acts on).
    """
    where = os.fspath(path)
    with _read(where) as view:
        con, read_from = view.con, view.source
        version = schema.schema_version(con)
        by = con.execute(
            "SELECT provider, model, stage, count(*), avg(output_tokens), sum(cost_usd), "
            "sum(input_tokens), sum(output_tokens) "
            "FROM responses GROUP BY ALL ORDER BY 1, 2, 3"
        ).fetchall()
        kinds = con.execute(
            "SELECT error_kind, count(*) FROM attempts GROUP BY 1 ORDER BY 1"
        ).fetchall()
        runs = con.execute(
            "SELECT run_id, name, status, started_at, finished_at FROM runs "
            "ORDER BY started_at DESC NULLS LAST, run_id"
        ).fetchall()
        tables = _tables(con)
        by_state = con.execute(
            "SELECT state, count(*), sum(requests), count(*) FILTER (WHERE NOT collected) FROM batches "
            "GROUP BY 1 ORDER BY 1").fetchall()
        live = con.execute(
            "SELECT batch_id, provider, model, base_url, alias, run_id, state, provider_status, requests, succeeded, "
            "failed, created_at, updated_at FROM batches WHERE NOT collected ORDER BY created_at, batch_id").fetchall()
    live_cols = ("batch_id", "provider", "model", "base_url", "alias", "run_id", "state", "provider_status",
                 "requests", "succeeded", "failed", "created_at", "updated_at")
    return {
        "path": where,
        "read_from": read_from,
        "file_bytes": _file_bytes(where),
        "schema_version": version,
        "blobs": _blob_files(where),
        "responses": sum(int(r[3]) for r in by),
        "responses_by": [
            {
                "provider": p,
                "model": m,
                "stage": s,
                "rows": int(n),
                "output_tokens_mean": None if mean is None else float(mean),
                "cost_usd": float(cost or 0.0),
                "input_tokens": int(tin or 0),
                "output_tokens": int(tout or 0),
            }
            for p, m, s, n, mean, cost, tin, tout in by
        ],
        "failures": sum(int(n) for _, n in kinds),
        "failures_by_kind": {k: int(n) for k, n in kinds},
        "runs": [
            {"run_id": r, "name": n, "status": st, "started_at": a, "finished_at": b}
            for r, n, st, a, b in runs
        ],
        "result_tables": [t for t in tables if t.startswith(schema.RESULT_PREFIX)],
        "batches": {
            "total": sum(int(n) for _, n, _, _ in by_state),
            "live": sum(int(n) for _, _, _, n in by_state),
            "by_state": {st: {"batches": int(n), "requests": int(r or 0), "live": int(lv)}
                         for st, n, r, lv in by_state},
        },
        "live_batches": [dict(zip(live_cols, row)) for row in live],
    }


def export(
    path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    fmt: ExportFormat,
    table: str = "responses",
) -> int:
    """Write ``table`` of the cache at ``path`` to ``out_path`` as jsonl, csv or parquet.

    ``table`` is any table of the file (``responses``, ``attempts``, ``runs``,
    ``result_<name>``).  Returns the number of rows written.  An unknown table or format, or an
    output path that cannot be written, is a :class:`~judgekit.errors.UsageError`.
    """
    if fmt not in _COPY_OPTIONS:
        raise UsageError(f"export format must be one of {', '.join(sorted(_COPY_OPTIONS))}, not {fmt!r}")
    out = os.fspath(out_path)
    if os.path.isdir(out):
        raise UsageError(f"{out} is a folder; give the path of the file to write")
    with _open(path) as con:
        tables = [t for t in _tables(con) if t != "schema_version"]
        if table not in tables:
            raise UsageError(f"no table {table!r} in {os.fspath(path)}; valid tables: {', '.join(tables)}")
        ident = '"' + table.replace('"', '""') + '"'
        target = "'" + out.replace("'", "''") + "'"
        try:
            con.execute(f"COPY (SELECT * FROM {ident}) TO {target} ({_COPY_OPTIONS[fmt]})")
        except duckdb.IOException as e:
            first = (str(e).strip().splitlines() or ["cannot write"])[0]
            raise UsageError(f"{out}: cannot write the export ({first})") from None
        r = con.execute(f"SELECT count(*) FROM {ident}").fetchone()
    return int(r[0]) if r else 0


def prune(
    path: str | os.PathLike[str],
    *,
    older_than_days: float | None = None,
    model: str | None = None,
    stage: str | None = None,
    failures: bool = False,
    dry_run: bool = False,
) -> int:
    """Delete cached rows matching every given filter; returns the rows removed.

    With ``failures=False`` rows go from ``responses`` and at least one filter is required (so
    a bare prune cannot wipe the cache); with ``failures=True`` they go from ``attempts``, and
    no filter means every recorded failure.  ``older_than_days`` compares ``created_at``
    (UTC); it must be a finite number >= 0.  ``dry_run`` counts the rows without deleting them.
    A prune of responses with no filter, or a bad age, is a :class:`~judgekit.errors.UsageError`.
    """
    table = "attempts" if failures else "responses"
    where: list[str] = []
    args: list[Any] = []
    if older_than_days is not None:
        days = float(older_than_days)
        if not math.isfinite(days) or days < 0:
            raise UsageError(f"--older-than-days must be a number of days >= 0, not {older_than_days}")
        now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
        try:
            cutoff = now - _dt.timedelta(days=days)
        except OverflowError:  # before year 1: nothing is that old
            cutoff = _dt.datetime.min
        args.append(cutoff)
        where.append(f"created_at < ${len(args)}")
    if model is not None:
        args.append(model)
        where.append(f"model = ${len(args)}")
    if stage is not None:
        args.append(stage)
        where.append(f"stage = ${len(args)}")
    if not where and not failures:
        raise UsageError("prune needs a filter: --older-than-days N, --model NAME or --stage NAME "
                         "(or --failures to prune the failure records); it never empties the whole cache")
    cond = " WHERE " + " AND ".join(where) if where else ""
    with _open(path) as con:
        r = con.execute(f"SELECT count(*) FROM {table}{cond}", args).fetchone()
        n = int(r[0]) if r else 0
        if n and not dry_run:
            con.execute(f"DELETE FROM {table}{cond}", args)
            con.execute("CHECKPOINT")
    return n
