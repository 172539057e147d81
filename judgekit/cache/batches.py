"""The cache's record of provider batches: which batch holds which call, durable before a run waits.

A batch job lives at the provider for up to a day; the process that submitted it may not.  So the
moment a batch is created, the cache records it: the batch id, the provider, model and endpoint,
the alias and run that made it, its state, when it was created, and each request's ``custom_id``
(the call's cache key) with the stage, item and prompt hash the response row will carry.  A run
that starts again loads the batches still *live* (not yet collected) and waits on them instead of
submitting their requests again.

Tables (schema version 3, :mod:`judgekit.cache.schema`):

- ``batches`` -- one row per batch, keyed by ``(provider, base_url, batch_id)`` (a provider's
  batch ids are unique only at that endpoint).  ``state`` is judgekit's word for it
  (:data:`judgekit.providers.batch.BatchState`), ``provider_status`` the provider's own;
  ``collected`` turns true once every result is in the cache (or set aside for a retry), after
  which the batch is no longer live.
- ``batch_requests`` -- one row per request of a batch: ``(provider, base_url, batch_id, key)``
  with the request's ``stage``, ``item_id`` and ``prompt_hash``.

*Intents*: before a create call, the batch layer records the batch it means to create as a row
whose ``batch_id`` is ``intent:<wave id>`` (:data:`INTENT_PREFIX`), state ``creating``, with its
requests' rows, synced to disk.  Once the provider's batch is recorded under its own id (created
now, or found at the provider by a restarted run), the intent is forgotten (its rows deleted,
synced); an intent left live by a killed run is what a restarted run looks for at the provider
before it submits anything (:mod:`judgekit.engine.batching`).

Writes go the way responses do: appended to the write-ahead log (:mod:`judgekit.cache.wal`) at
once and written by the store's thread with its next flush; opening the cache replays what a
killed process left.  :meth:`BatchRecords.record_batch` also *syncs* the log to disk before it
returns, and does not await: nothing can interleave between a provider's answer to "create this
batch" and its record.  Reads run in the store's thread after a flush.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import duckdb

__all__ = ["BatchRecord", "BatchRequestRow", "BatchRecords", "BATCH_DDL", "write_batch_ops", "batch_op_problem",
           "LIVE", "INTENT_PREFIX"]

#: a batch is live while it is not collected
LIVE = "NOT collected"
#: the ``batch_id`` of a batch about to be created (an intent) starts so
INTENT_PREFIX = "intent:"

BATCH_DDL = """
CREATE TABLE batches (
    provider VARCHAR NOT NULL,
    base_url VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    alias VARCHAR,
    run_id VARCHAR,
    state VARCHAR NOT NULL,
    provider_status VARCHAR,
    requests INTEGER,
    succeeded INTEGER,
    failed INTEGER,
    collected BOOLEAN NOT NULL,
    message VARCHAR,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP,
    PRIMARY KEY (provider, base_url, batch_id)
);
CREATE TABLE batch_requests (
    provider VARCHAR NOT NULL,
    base_url VARCHAR NOT NULL,
    batch_id VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    stage VARCHAR,
    item_id VARCHAR,
    prompt_hash VARCHAR,
    PRIMARY KEY (provider, base_url, batch_id, key)
);
"""

#: the columns of ``batches`` in a record's order
_COLUMNS = ("provider", "base_url", "batch_id", "model", "alias", "run_id", "state", "provider_status", "requests",
            "succeeded", "failed", "collected", "message", "created_at", "updated_at")
#: what an update may set
_UPDATABLE = {"state": str, "provider_status": str, "succeeded": int, "failed": int, "collected": bool,
              "message": str, "updated_at": int}


def _now_us() -> int:
    return int(time.time() * 1_000_000)


def _from_us(us: int | None) -> _dt.datetime | None:
    return None if us is None else _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=us)


@dataclass(frozen=True, slots=True)
class BatchRequestRow:
    """One request of a batch: its cache key and what its response row will say."""

    key: str
    stage: str = ""
    item_id: str = ""
    prompt_hash: str = ""


@dataclass(slots=True)
class BatchRecord:
    """One row of ``batches``.  Times are naive UTC datetimes."""

    provider: str
    base_url: str
    batch_id: str
    model: str
    alias: str
    run_id: str
    state: str
    provider_status: str = ""
    requests: int = 0
    succeeded: int = 0
    failed: int = 0
    collected: bool = False
    message: str = ""
    created_at: _dt.datetime | None = None
    updated_at: _dt.datetime | None = None

    @property
    def ident(self) -> tuple[str, str, str]:
        """``(provider, base_url, batch_id)``: what names the batch in the cache."""
        return (self.provider, self.base_url, self.batch_id)

    @property
    def is_intent(self) -> bool:
        """Whether this row is an intent: a batch about to be created (see the module docstring)."""
        return self.batch_id.startswith(INTENT_PREFIX)

    @property
    def age_s(self) -> float | None:
        if self.created_at is None:
            return None
        now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
        return max(0.0, (now - self.created_at).total_seconds())

    def _values(self) -> list[Any]:
        created = self.created_at
        us = _now_us() if created is None else int((created - _dt.datetime(1970, 1, 1)).total_seconds() * 1_000_000)
        return [self.provider, self.base_url, self.batch_id, self.model, self.alias, self.run_id, self.state,
                self.provider_status, self.requests, self.succeeded, self.failed, self.collected, self.message,
                us, us]


def _record(row: Sequence[Any]) -> BatchRecord:
    return BatchRecord(*row[:13], created_at=row[13], updated_at=row[14])  # type: ignore[misc]


# ------------------------------------------------------------------------------ log records


def batch_op_problem(value: Any) -> str | None:
    """Why a log line's batch record cannot be replayed (None: it can)."""
    if not isinstance(value, dict):
        return f"is {type(value).__name__}, not a batch record"
    op = value.get("op")
    ident = value.get("id")
    if not (isinstance(ident, list) and len(ident) == 3 and all(isinstance(x, str) for x in ident)):
        return "id is not [provider, base_url, batch_id]"
    if op == "batch":
        row = value.get("row")
        if not (isinstance(row, list) and len(row) == len(_COLUMNS)):
            return f"row has not {len(_COLUMNS)} values"
        for v, name in zip(row, _COLUMNS):
            want = (bool,) if name == "collected" else (int,) if name in (
                "requests", "succeeded", "failed", "created_at", "updated_at") else (str,)
            if not isinstance(v, want) or (want == (int,) and isinstance(v, bool)):
                return f"{name} is {type(v).__name__}"
        reqs = value.get("requests")
        if not isinstance(reqs, list) or not all(
                isinstance(r, list) and len(r) == 4 and all(isinstance(x, str) for x in r) for r in reqs):
            return "requests are not [key, stage, item_id, prompt_hash] lists"
        return None
    if op == "batch_forget":
        return None
    if op == "batch_update":
        sets = value.get("set")
        if not isinstance(sets, dict) or not sets:
            return "set is not a table of fields"
        for k, v in sets.items():
            want = _UPDATABLE.get(k)
            if want is None:
                return f"set names an unknown field {k!r}"
            if not isinstance(v, want) or (want is int and isinstance(v, bool)):
                return f"set.{k} is {type(v).__name__}"
        return None
    return f"op {op!r} is not a batch record"


def _encode(op: dict[str, Any]) -> bytes:
    return (json.dumps(op, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def write_batch_ops(con: duckdb.DuckDBPyConnection, ops: Sequence[dict[str, Any]]) -> None:
    """Apply logged batch records in order, in one transaction (the store's thread)."""
    if not ops:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for op in ops:
            p, u, b = op["id"]
            if op["op"] == "batch":
                row = list(op["row"])
                con.execute(
                    f"INSERT OR REPLACE INTO batches ({', '.join(_COLUMNS)}) VALUES "
                    "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, make_timestamp($14), make_timestamp($15))",
                    row)
                reqs = op["requests"]
                if reqs:
                    cols = [list(c) for c in zip(*reqs)]
                    con.execute(
                        "INSERT OR IGNORE INTO batch_requests (provider, base_url, batch_id, key, stage, item_id, "
                        "prompt_hash) SELECT $1, $2, $3, unnest($4::VARCHAR[]), unnest($5::VARCHAR[]), "
                        "unnest($6::VARCHAR[]), unnest($7::VARCHAR[])", [p, u, b, *cols])
            elif op["op"] == "batch_forget":
                con.execute("DELETE FROM batch_requests WHERE provider = $1 AND base_url = $2 AND batch_id = $3",
                            [p, u, b])
                con.execute("DELETE FROM batches WHERE provider = $1 AND base_url = $2 AND batch_id = $3", [p, u, b])
            else:
                sets = dict(op["set"])
                names, args = [], []
                for k, v in sets.items():
                    args.append(v)
                    names.append(f"{k} = make_timestamp(${len(args)})" if k == "updated_at" else f"{k} = ${len(args)}")
                args += [p, u, b]
                n = len(args)
                con.execute(f"UPDATE batches SET {', '.join(names)} WHERE provider = ${n - 2} AND base_url = ${n - 1} "
                            f"AND batch_id = ${n}", args)
        con.execute("COMMIT")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except Exception:
            pass
        raise


# ------------------------------------------------------------------------------ the store's side


class BatchRecords:
    """The batch methods of :class:`~judgekit.cache.store.CacheStore` (a base class of it)."""

    # set by CacheStore.__init__ (see judgekit.cache.store)
    _batch_ops: list[dict[str, Any]]

    def record_batch(self, record: BatchRecord, requests: Iterable[BatchRequestRow]) -> None:
        """Record a batch just created and its requests, synced to disk before returning.

        Synchronous on purpose (no await): called right after the provider answered, nothing
        can run in between, so a run cancelled or killed after this call finds the batch at
        its next start.  The row reaches the file with the next flush; reads flush first."""
        self._check_writable()  # type: ignore[attr-defined]
        op = {"op": "batch", "id": list(record.ident), "row": record._values(),
              "requests": [[r.key, r.stage, r.item_id, r.prompt_hash] for r in requests]}
        self._log_op(op, sync=True)

    def update_batch(self, ident: tuple[str, str, str], **fields: Any) -> None:
        """Change fields of a recorded batch (``state``, ``provider_status``, ``succeeded``, ``failed``,
        ``collected``, ``message``); logged at once, written with the next flush."""
        self._check_writable()  # type: ignore[attr-defined]
        sets = {k: v for k, v in fields.items() if v is not None}
        for k in sets:
            if k not in _UPDATABLE or k == "updated_at":
                raise ValueError(f"update_batch: {k!r} is not a field it can set")
        sets["updated_at"] = _now_us()
        op = {"op": "batch_update", "id": list(ident), "set": sets}
        self._log_op(op, sync=False)

    def forget_batch(self, ident: tuple[str, str, str]) -> None:
        """Delete a recorded batch and its requests (an intent whose batch is now recorded under its
        own id, or that created none); synced to disk before returning."""
        self._check_writable()  # type: ignore[attr-defined]
        self._log_op({"op": "batch_forget", "id": list(ident)}, sync=True)

    def _log_op(self, op: dict[str, Any], *, sync: bool) -> None:
        problem = batch_op_problem(op)
        if problem:
            raise ValueError(f"batch record {op.get('id')}: {problem}")
        line = _encode(op)
        with self._lock:  # type: ignore[attr-defined]
            self._batch_ops.append(op)
            self._wal.write(line)  # type: ignore[attr-defined]
            if sync:
                self._wal.sync()  # type: ignore[attr-defined]

    async def batches(self, *, live_only: bool = False, run_id: str | None = None, spec_name: str | None = None,
                      providers: Iterable[tuple[str, str, str]] | None = None) -> list[BatchRecord]:
        """Recorded batches, oldest first: only live ones, of one run, of the runs of one spec
        name, or of some ``(provider, model, base_url)`` endpoints."""
        where, args = [], []
        if live_only:
            where.append(LIVE)
        if run_id is not None:
            args.append(run_id)
            where.append(f"run_id = ${len(args)}")
        if spec_name is not None:
            args.append(spec_name)
            where.append(f"run_id IN (SELECT run_id FROM runs WHERE name = ${len(args)})")
        cond = (" WHERE " + " AND ".join(where)) if where else ""

        def fn(con: duckdb.DuckDBPyConnection) -> list[BatchRecord]:
            rows = con.execute(f"SELECT {', '.join(_COLUMNS)} FROM batches{cond} ORDER BY created_at, batch_id",
                               args).fetchall()
            return [_record(r) for r in rows]

        found = await self._call(fn, flush_first=True)  # type: ignore[attr-defined]
        if providers is not None:
            wanted = set(providers)
            found = [r for r in found if (r.provider, r.model, r.base_url) in wanted]
        return found

    async def live_keys(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` a live batch holds (submitted, answers not collected yet)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return set()

        def fn(con: duckdb.DuckDBPyConnection) -> set[str]:
            rows = con.execute(
                "SELECT DISTINCT r.key FROM batch_requests r JOIN batches b USING (provider, base_url, batch_id) "
                "WHERE NOT b.collected AND r.key IN (SELECT unnest($1::VARCHAR[]))", [wanted]).fetchall()
            return {r[0] for r in rows}

        return await self._call(fn, flush_first=True)  # type: ignore[attr-defined]

    async def batch_requests(self, ident: tuple[str, str, str]) -> list[BatchRequestRow]:
        """The requests of one recorded batch."""
        def fn(con: duckdb.DuckDBPyConnection) -> list[BatchRequestRow]:
            rows = con.execute("SELECT key, stage, item_id, prompt_hash FROM batch_requests WHERE provider = $1 "
                               "AND base_url = $2 AND batch_id = $3 ORDER BY key", list(ident)).fetchall()
            return [BatchRequestRow(k, s or "", i or "", h or "") for k, s, i, h in rows]

        return await self._call(fn, flush_first=True)  # type: ignore[attr-defined]
