"""The response cache: one DuckDB connection in one background thread, fed in bulk.

DuckDB costs ~0.15 ms a statement and stalls writers for up to seconds at checkpoints, so the
event loop never touches it.  :class:`CacheStore` owns one connection inside one dedicated
thread; the loop talks to that thread through a queue and gets answers back with
``loop.call_soon_threadsafe``.

- **Writes** (:meth:`CacheStore.put`, :meth:`CacheStore.record_failure`) only append to an
  in-memory buffer.  The thread writes the buffer every ``flush_interval`` seconds or as soon
  as ``batch_rows`` rows are waiting, whichever comes first, as bulk
  ``INSERT ... SELECT unnest($1::VARCHAR[]), ...`` statements of at most ``batch_rows`` rows,
  one transaction each (``INSERT OR REPLACE``, 2.5x slower, only when a batch holds a key
  already stored).  Lookups that queue up meanwhile are answered between two transactions.
  Every response is ALSO appended at once to a write-ahead log next to the file
  (``<file>.wal.<pid>.<n>``, one JSON line per response, written to the OS without fsync): a
  ``kill -9`` of judgekit loses no response that was put, only a crash of the whole machine
  can lose the last few.  The thread starts a new segment at every flush and deletes a segment
  once its rows are committed; opening the cache replays segments left by a killed process.
- **Reads** look at the unflushed buffer first, so a response is served the moment it is put.
  :meth:`CacheStore.get` is micro-batched: every ``get`` made in the same event-loop tick
  (or within ``batch_window`` seconds, when set) is answered by one query, and the thread
  merges lookups that queue up behind a slow statement into one query as well.
  :meth:`CacheStore.get_many` answers thousands of keys with one query per 5,000 keys.
- Failures go to ``attempts`` only; a failed call is never served as an answer.

Use a store from one event loop at a time.  :meth:`CacheStore.open` and everything that
returns data are ``async``; ``put``, ``record_failure``, ``run_started`` and ``run_finished``
return at once.  ``close_sync`` exists for atexit and signal paths; the store also closes itself at
interpreter exit if nobody did.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import datetime as _dt
import json
import logging
import os
import queue
import threading
import time
import weakref
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

import duckdb

from judgekit.cache import schema
from judgekit.types import ChatResponse, Usage

__all__ = ["CacheStore", "RequestMeta", "CacheCounters"]

log = logging.getLogger(__name__)

#: keys per lookup statement; bigger lists are split
CHUNK_KEYS = 5000
#: callers of ``get`` woken per event-loop iteration when a batch is answered
_RESOLVE_SLICE = 256


def _insert_sql(table: str, columns: Sequence[tuple[str, str]], verb: str) -> str:
    sel = []
    for i, (name, typ) in enumerate(columns, start=1):
        if typ == "TIMESTAMP":  # carried as epoch microseconds (UTC)
            sel.append(f"make_timestamp(unnest(${i}::BIGINT[]))")
        else:
            sel.append(f"unnest(${i}::{typ}[])")
    cols = ", ".join(name for name, _ in columns)
    return f"{verb} INTO {table} ({cols}) SELECT {', '.join(sel)}"


# plain INSERT is ~2.5x faster than INSERT OR REPLACE; the replace form runs only when a
# batch holds a key already in the file (a deliberate re-run of cached calls)
_INSERT_RESPONSES = _insert_sql("responses", schema.RESPONSE_COLUMNS, "INSERT")
_REPLACE_RESPONSES = _insert_sql("responses", schema.RESPONSE_COLUMNS, "INSERT OR REPLACE")
_INSERT_ATTEMPTS = _insert_sql("attempts", schema.ATTEMPT_COLUMNS, "INSERT")
_READ_COLS = ("key, text, input_tokens, output_tokens, finish_reason, latency_s, request_id, "
              "cost_usd")
_MATCH = ("SELECT responses.rowid AS rid, responses.key FROM responses "
          "JOIN (SELECT unnest($1::VARCHAR[]) AS k) AS w ON responses.key = w.k")
#: which keys exist: reads the key column only
_LOOKUP_KEYS = f"SELECT key FROM ({_MATCH})"
#: find the rows by key first, then read the wide columns of those rows only.  A plain join or
#: ``key = ANY($1)`` scans ``text`` for the whole table (~70 ms per 60k rows, whatever the
#: number of keys); this form costs ~2 ms for 1 key and ~30 ms for 5,000.
_LOOKUP_ROWS = f"SELECT {_READ_COLS} FROM responses WHERE rowid IN (SELECT rid FROM ({_MATCH}))"


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """What the cache records about the call behind a response or failure (not its key)."""

    provider: str
    model: str  # the model id sent to the API, as in the cache key
    base_url: str = ""
    stage: str = "default"
    item_id: str = ""
    prompt_hash: str = ""


@dataclass(slots=True)
class CacheCounters:
    """Running totals of one store.

    ``lookups``/``hits`` count keys; ``lookup_requests`` counts lookups handed to the thread
    (one per micro-batch); ``queries`` counts lookup statements sent to DuckDB; ``flushes``
    counts buffer writes and ``max_flush_seconds`` is the longest single write transaction
    (checkpoints included), i.e. the longest a lookup waited behind a write.
    """

    lookups: int = 0
    hits: int = 0
    lookup_requests: int = 0
    queries: int = 0
    rows_written: int = 0
    failures_written: int = 0
    flushes: int = 0
    max_flush_seconds: float = 0.0
    last_error: str = ""
    wal_replayed: int = 0


def _now_us() -> int:
    return int(time.time() * 1_000_000)


def _row_response(r: Sequence[Any]) -> ChatResponse:
    """A cached answer from a ``_READ_COLS`` row (same positions as a buffered row's 0,6..12)."""
    return ChatResponse(
        text=r[1],
        usage=Usage(r[2] or 0, r[3] or 0),
        finish_reason=r[4] or "",
        latency_s=r[5] or 0.0,
        request_id=r[6] or "",
        cached=True,
        cost_usd=r[7] or 0.0,
    )


def _buffered_response(r: tuple[Any, ...]) -> ChatResponse:
    # buffered rows are in RESPONSE_COLUMNS order
    return ChatResponse(
        text=r[6],
        usage=Usage(r[7], r[8]),
        finish_reason=r[9],
        latency_s=r[10],
        request_id=r[11],
        cached=True,
        cost_usd=r[12],
    )


def _settle(fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


def _post(loop: asyncio.AbstractEventLoop, cb: Callable[..., None], *args: Any) -> None:
    """Run ``cb(*args)`` on ``loop`` from another thread; dropped if the loop is closed."""
    try:
        loop.call_soon_threadsafe(cb, *args)
    except RuntimeError:  # loop closed: nobody is waiting any more
        pass


Deliver = Callable[[Any, "BaseException | None"], None]


class _Get:
    """Look up ``keys``; deliver ``{key: ChatResponse}`` for those found."""

    __slots__ = ("keys", "deliver", "keys_only")

    def __init__(self, keys: list[str], deliver: Deliver, keys_only: bool = False) -> None:
        self.keys, self.deliver, self.keys_only = keys, deliver, keys_only


class _Call:
    """Run ``fn(con)`` in the thread; ``flush_first`` writes the buffer before it."""

    __slots__ = ("fn", "deliver", "flush_first")

    def __init__(self, fn: Callable[[duckdb.DuckDBPyConnection], Any], deliver: Deliver | None,
                 flush_first: bool = False) -> None:
        self.fn, self.deliver, self.flush_first = fn, deliver, flush_first


class _Close:
    __slots__ = ("deliver",)

    def __init__(self, deliver: Deliver) -> None:
        self.deliver = deliver


_WAKE = object()  # the buffer reached batch_rows


class CacheStore:
    """The response cache of one process; see the module docstring.

    Build it with ``await CacheStore.open(...)``; ``counters`` holds running totals
    (:class:`CacheCounters`).
    """

    def __init__(self, path: str, *, run_id: str, flush_interval: float, batch_rows: int,
                 read_only: bool, batch_window: float) -> None:
        """Internal; use :meth:`CacheStore.open`."""
        self.path = path
        self.run_id = run_id
        self.read_only = read_only
        self.flush_interval = float(flush_interval)
        self.batch_rows = int(batch_rows)
        self.batch_window = float(batch_window)
        self.counters = CacheCounters()
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()  # guards _pending/_failures swaps and re-merges
        self._pending: dict[str, tuple[Any, ...]] = {}
        self._inflight: dict[str, tuple[Any, ...]] = {}
        self._failures: list[tuple[Any, ...]] = []
        self._wake_sent = False
        self._waiters: list[tuple[str, asyncio.Future[Any]]] | None = None
        self._closed = False
        self._stopped = False  # the thread has left its loop
        self._con: duckdb.DuckDBPyConnection | None = None
        self._thread: threading.Thread | None = None
        self._on_open: Deliver = lambda _r, _e: None
        self._atexit: Callable[[], None] | None = None
        self._backlog: collections.deque[Any] = collections.deque()  # thread only
        self._wal_fd: int | None = None  # guarded by _lock
        self._wal_path = ""
        self._wal_seq = 0
        self._wal_unlink: list[str] = []  # segments whose rows are in a flush not yet committed

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        run_id: str,
        flush_interval: float = 1.0,
        batch_rows: int = 1000,
        read_only: bool = False,
        batch_window: float = 0.0,
    ) -> "CacheStore":
        """Open (creating or upgrading) the cache file at ``path`` and start its thread.

        Async because opening a file (creating it, replaying its WAL, migrating it) takes
        0.1 s to seconds, and that happens in the store's thread like all DuckDB work.
        ``run_id`` is written on every row this store puts; ``batch_rows`` is both the
        buffer size that triggers a write and the most rows one write transaction holds.
        ``batch_window`` > 0 makes :meth:`get` wait that many seconds to collect more
        lookups into one query (0: one event-loop tick).

        Raises :class:`~judgekit.errors.CacheLockedError` when another process holds the file
        and :class:`~judgekit.cache.schema.CacheSchemaError` when it is newer than this code.
        """
        if flush_interval <= 0 or batch_rows < 1:
            raise ValueError("flush_interval must be > 0 and batch_rows >= 1")
        store = cls(os.fspath(path), run_id=run_id, flush_interval=flush_interval,
                    batch_rows=batch_rows, read_only=read_only, batch_window=batch_window)
        fut, store._on_open = store._future()
        t = threading.Thread(target=store._thread_main, name=f"judgekit-cache:{store.path}",
                             daemon=True)
        store._thread = t
        t.start()
        try:
            await fut
        except asyncio.CancelledError:
            store._closed = True
            store._submit(_Close(lambda _r, _e: None))  # the thread closes what it opened
            raise
        ref = weakref.ref(store)

        def _at_exit() -> None:
            s = ref()
            if s is not None:
                s.close_sync()

        store._atexit = _at_exit
        atexit.register(_at_exit)
        return store

    @property
    def closed(self) -> bool:
        return self._closed

    def pending_rows(self) -> int:
        """Responses and failures put but not yet written."""
        return len(self._pending) + len(self._inflight) + len(self._failures)

    async def close(self) -> None:
        """Write everything buffered, close the connection and stop the thread."""
        if self._closed:
            if not self._stopped:  # close_sync or another close() is under way
                await asyncio.get_running_loop().run_in_executor(None, self._after_close)
            return
        self._dispatch_gets()
        fut, deliver = self._future()
        self._closed = True
        self._submit(_Close(deliver))
        try:
            await fut
        finally:
            self._after_close()

    def close_sync(self, timeout: float | None = 60.0) -> None:
        """:meth:`close` for code outside the event loop (atexit, signal handlers).

        Blocks until the buffer is written and the file closed, or ``timeout`` seconds.
        """
        if self._closed:
            if self._thread is not None and self._thread is not threading.current_thread():
                self._thread.join(timeout)
            return
        self._closed = True
        done = threading.Event()
        err: list[BaseException] = []

        def deliver(_: Any, exc: BaseException | None) -> None:
            if exc is not None:
                err.append(exc)
            done.set()

        self._submit(_Close(deliver))
        done.wait(timeout)
        self._after_close()
        if err:
            raise err[0]

    def _after_close(self) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        if self._atexit is not None:
            atexit.unregister(self._atexit)
            self._atexit = None

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"cache store {self.path} is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if self.read_only:
            raise RuntimeError(f"cache store {self.path} is open read-only")

    # ------------------------------------------------------------------ writes (non-blocking)

    def put(self, key: str, request_meta: RequestMeta, response: ChatResponse) -> None:
        """Buffer ``response`` under ``key``; written by the thread at the next flush.

        Returns at once.  A later ``put`` of the same key replaces the earlier one.
        """
        self._check_writable()
        m = request_meta
        u = response.usage
        row = (key, m.provider, m.model, m.base_url, m.stage, m.item_id, response.text,
               u.input_tokens, u.output_tokens, response.finish_reason, response.latency_s,
               response.request_id, response.cost_usd, m.prompt_hash, self.run_id, _now_us())
        line = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            self._pending[key] = row
            n = len(self._pending)
            if self._wal_fd is not None:
                os.write(self._wal_fd, line)
        if n >= self.batch_rows and not self._wake_sent:
            self._wake_sent = True
            self._q.put(_WAKE)

    def record_failure(self, key: str, meta: RequestMeta, error_kind: str, status: int | None,
                       message: str) -> None:
        """Buffer one failed attempt for ``attempts``; never served by :meth:`get`."""
        self._check_writable()
        row = (key, meta.provider, meta.model, meta.stage, meta.item_id, error_kind, status,
               message, self.run_id, _now_us())
        with self._lock:
            self._failures.append(row)
            n = len(self._failures)
        if n >= self.batch_rows and not self._wake_sent:
            self._wake_sent = True
            self._q.put(_WAKE)

    def run_started(self, run_id: str, name: str, spec_json: str) -> None:
        """Record (or restart) run ``run_id`` with status ``running``.  Returns at once."""
        self._check_writable()
        now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)

        def fn(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT OR REPLACE INTO runs (run_id, name, spec_json, started_at, finished_at,"
                " status, summary_json) VALUES ($1, $2, $3, $4, NULL, 'running', NULL)",
                [run_id, name, spec_json, now],
            )

        self._submit(_Call(fn, None))

    def run_finished(self, run_id: str, status: str, summary_json: str) -> None:
        """Mark run ``run_id`` finished with ``status`` and its summary.  Returns at once."""
        self._check_writable()
        now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)

        def fn(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT INTO runs (run_id, finished_at, status, summary_json) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO UPDATE SET "
                "finished_at = excluded.finished_at, status = excluded.status, "
                "summary_json = excluded.summary_json",
                [run_id, now, status, summary_json],
            )

        self._submit(_Call(fn, None, flush_first=True))

    async def flush(self) -> None:
        """Return once everything put so far is written and committed."""
        self._check_open()
        await self._call(lambda con: None, flush_first=True)

    async def write_table(self, name: str, rows: list[dict[str, Any]]) -> str:
        """Create or replace table ``result_<name>`` from ``rows``; returns the table name.

        See :func:`judgekit.cache.schema.write_result_table` for the type rules.
        """
        self._check_writable()
        rows = list(rows)
        return await self._call(lambda con: schema.write_result_table(con, name, rows))

    # ------------------------------------------------------------------ reads

    async def get(self, key: str) -> ChatResponse | None:
        """The cached response for ``key`` (``cached=True``) or ``None``; micro-batched."""
        self._check_open()
        c = self.counters
        c.lookups += 1
        row = self._pending.get(key) or self._inflight.get(key)
        if row is not None:
            c.hits += 1
            return _buffered_response(row)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[ChatResponse | None] = loop.create_future()
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = []
            if self.batch_window > 0:
                loop.call_later(self.batch_window, self._dispatch_gets, loop)
            else:
                loop.call_soon(self._dispatch_gets, loop)
        waiters.append((key, fut))
        return await fut

    def _dispatch_gets(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        waiters = self._waiters
        if not waiters:
            return
        self._waiters = None
        if loop is None:
            loop = asyncio.get_running_loop()
        keys = list(dict.fromkeys(k for k, _ in waiters))
        counters = self.counters
        repeated = len(keys) < len(waiters)

        def resolve(found: Any, exc: BaseException | None, start: int = 0) -> None:
            # wake at most _RESOLVE_SLICE callers per loop iteration, so thousands of answers
            # arriving at once do not hold the loop for one long iteration
            end = start + _RESOLVE_SLICE
            if end < len(waiters):
                loop.call_soon(resolve, found, exc, end)
            for k, fut in waiters[start:end]:
                if fut.done():
                    continue
                if exc is not None:
                    fut.set_exception(exc)
                    continue
                r = found.get(k)
                if r is not None:
                    counters.hits += 1
                    if repeated:
                        r = replace(r)  # each caller gets its own object
                fut.set_result(r)

        counters.lookup_requests += 1
        self._submit(_Get(keys, lambda res, exc: _post(loop, resolve, res, exc)))

    async def get_many(self, keys: Iterable[str]) -> dict[str, ChatResponse]:
        """The cached responses among ``keys`` (missing keys are absent from the result)."""
        self._check_open()
        out: dict[str, ChatResponse] = {}
        missing: list[str] = []
        pending, inflight = self._pending, self._inflight
        n = 0
        for k in dict.fromkeys(keys):
            n += 1
            row = pending.get(k) or inflight.get(k)
            if row is not None:
                out[k] = _buffered_response(row)
            else:
                missing.append(k)
        if missing:
            fut, deliver = self._future()
            self.counters.lookup_requests += 1
            self._submit(_Get(missing, deliver))
            out.update(await fut)
        self.counters.lookups += n
        self.counters.hits += len(out)
        return out

    async def cached_keys(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` have a cached response (buffered or written)."""
        self._check_open()
        keys = list(dict.fromkeys(keys))
        have = {k for k in keys if k in self._pending or k in self._inflight}
        rest = [k for k in keys if k not in have]
        if rest:
            fut, deliver = self._future()
            self.counters.lookup_requests += 1
            self._submit(_Get(rest, deliver, keys_only=True))
            have |= await fut
        return have

    async def output_token_mean(self, stage: str, model: str) -> float | None:
        """Mean ``output_tokens`` of cached responses of ``stage`` and ``model``; None if none."""
        def fn(con: duckdb.DuckDBPyConnection) -> float | None:
            r = con.execute(
                "SELECT avg(output_tokens) FROM responses WHERE stage = $1 AND model = $2",
                [stage, model],
            ).fetchone()
            return None if r is None or r[0] is None else float(r[0])

        return await self._call(fn, flush_first=True)

    async def count_responses(self, run_id: str | None = None) -> int:
        """Rows in ``responses`` (those written by ``run_id`` when given)."""
        return await self._count("responses", run_id)

    async def count_attempts(self, run_id: str | None = None) -> int:
        """Rows in ``attempts`` (failed attempts; those of ``run_id`` when given)."""
        return await self._count("attempts", run_id)

    async def failures_by_kind(self, run_id: str | None = None) -> dict[str, int]:
        """Failed attempts per ``error_kind`` (of ``run_id`` when given)."""
        def fn(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
            where, args = ("WHERE run_id = $1", [run_id]) if run_id is not None else ("", [])
            rows = con.execute(
                f"SELECT error_kind, count(*) FROM attempts {where} GROUP BY 1 ORDER BY 1", args
            ).fetchall()
            return {k: int(n) for k, n in rows}

        return await self._call(fn, flush_first=True)

    async def query(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run a read query in the thread (after a flush) and return all rows, for reports."""
        self._check_open()
        return await self._call(lambda con: con.execute(sql, params or []).fetchall(),
                                flush_first=True)

    async def _count(self, table: str, run_id: str | None) -> int:
        def fn(con: duckdb.DuckDBPyConnection) -> int:
            if run_id is None:
                r = con.execute(f"SELECT count(*) FROM {table}").fetchone()
            else:
                r = con.execute(f"SELECT count(*) FROM {table} WHERE run_id = $1",
                                [run_id]).fetchone()
            return int(r[0]) if r else 0

        return await self._call(fn, flush_first=True)

    # ------------------------------------------------------------------ loop <-> thread

    def _future(self) -> tuple[asyncio.Future[Any], Deliver]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()

        def deliver(result: Any, exc: BaseException | None) -> None:
            _post(loop, _settle, fut, result, exc)

        return fut, deliver

    async def _call(self, fn: Callable[[duckdb.DuckDBPyConnection], Any], *,
                    flush_first: bool = False) -> Any:
        self._check_open()
        fut, deliver = self._future()
        self._submit(_Call(fn, deliver, flush_first))
        return await fut

    # ------------------------------------------------------------------ the thread

    def _thread_main(self) -> None:
        try:
            self._con = schema.open_database(self.path, read_only=self.read_only)
        except BaseException as exc:  # reported to open()
            self._closed = self._stopped = True
            self._on_open(None, exc)
            return
        if not self.read_only:
            try:
                self._wal_replay()
                self._wal_rotate()
            except BaseException as exc:
                self._closed = self._stopped = True
                self._on_open(None, exc)
                return
        self._on_open(self, None)
        try:
            self._serve()
        except BaseException as exc:  # pragma: no cover - a bug; fail every waiter
            log.exception("cache thread crashed")
            self.counters.last_error = repr(exc)
            self._closed = self._stopped = True
            self._fail_queued(exc)
            try:
                self._con.close()
            except Exception:
                pass

    def _next(self, timeout: float) -> Any:
        if self._backlog:
            return self._backlog.popleft()
        try:
            return self._q.get(timeout=timeout) if timeout > 0 else self._q.get_nowait()
        except queue.Empty:
            return None

    def _serve(self) -> None:
        interval = self.flush_interval
        next_flush = time.monotonic() + interval
        while True:
            cmd = self._next(next_flush - time.monotonic())
            gets: list[_Get] = []
            while isinstance(cmd, _Get):  # merge lookups queued behind each other
                gets.append(cmd)
                cmd = self._next(0)
            if gets:
                self._answer_gets(gets)
            if isinstance(cmd, _Close):
                self._do_close(cmd)
                return
            if isinstance(cmd, _Call):
                self._do_call(cmd)
            if (len(self._pending) >= self.batch_rows or len(self._failures) >= self.batch_rows
                    or time.monotonic() >= next_flush):
                try:
                    self._write_buffer()
                except Exception as exc:
                    log.warning("cache flush to %s failed, will retry: %s", self.path, exc)
                next_flush = time.monotonic() + interval

    def _answer_queued_gets(self) -> None:
        """Between two write transactions: answer the lookups waiting, keep the rest in order."""
        gets: list[_Get] = []
        while True:
            try:
                cmd = self._q.get_nowait()
            except queue.Empty:
                break
            if isinstance(cmd, _Get):
                gets.append(cmd)
            else:
                self._backlog.append(cmd)
        if gets:
            self._answer_gets(gets)

    def _do_call(self, cmd: _Call) -> None:
        try:
            if cmd.flush_first:
                self._write_buffer()
            result = cmd.fn(self._con)
        except Exception as exc:
            if cmd.deliver is not None:
                cmd.deliver(None, exc)
            else:
                self.counters.last_error = repr(exc)
                log.warning("cache statement failed: %s", exc)
            return
        if cmd.deliver is not None:
            cmd.deliver(result, None)

    def _do_close(self, cmd: _Close) -> None:
        exc: BaseException | None = None
        try:
            self._write_buffer()
        except Exception as e:
            exc = e
        if exc is None:
            with self._lock:
                self._wal_close_current()
            self._wal_cleanup()
        try:
            self._con.close()
        except Exception as e:
            exc = exc or e
        self._stopped = True
        self._fail_queued(RuntimeError(f"cache store {self.path} is closed"))
        cmd.deliver(None, exc)

    # ------------------------------------------------------------------ write-ahead log

    def _wal_segments(self) -> list[str]:
        d, base = os.path.split(os.path.abspath(self.path))
        prefix = base + ".wal."
        try:
            names = [n for n in os.listdir(d) if n.startswith(prefix)]
        except FileNotFoundError:
            return []
        return [os.path.join(d, n) for n in sorted(names)]

    def _wal_close_current(self) -> None:
        """Close the current segment (caller holds ``_lock``) and mark it for deletion."""
        if self._wal_fd is not None:
            os.close(self._wal_fd)
            self._wal_fd = None
            self._wal_unlink.append(self._wal_path)

    def _wal_rotate(self) -> None:
        """Start a new segment (caller holds ``_lock`` or is opening)."""
        self._wal_close_current()
        self._wal_seq += 1
        self._wal_path = f"{os.path.abspath(self.path)}.wal.{os.getpid()}.{self._wal_seq:09d}"
        self._wal_fd = os.open(self._wal_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def _wal_cleanup(self) -> None:
        """Every row of the marked segments is committed: delete them (thread only)."""
        with self._lock:
            done, self._wal_unlink = self._wal_unlink, []
        for path in done:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def _wal_replay(self) -> None:
        """Commit the responses a killed process left in its log segments (thread only)."""
        segments = self._wal_segments()
        if not segments:
            return
        rows: dict[str, tuple[Any, ...]] = {}
        for path in segments:
            with open(path, "rb") as f:
                for raw in f:
                    try:
                        row = tuple(json.loads(raw))
                    except ValueError:  # a line cut short by the kill
                        continue
                    if len(row) == len(schema.RESPONSE_COLUMNS):
                        rows[row[0]] = row
        values = list(rows.values())
        for i in range(0, len(values), self.batch_rows):
            chunk = values[i:i + self.batch_rows]
            self._insert([list(col) for col in zip(*chunk)], [], _REPLACE_RESPONSES)
        self.counters.wal_replayed += len(values)
        for path in segments:
            os.unlink(path)

    def _submit(self, cmd: Any) -> None:
        """Queue ``cmd`` for the thread; fails it at once if the thread has stopped."""
        self._q.put(cmd)
        if self._stopped:  # the thread may have drained the queue before our put
            self._fail_queued(RuntimeError(f"cache store {self.path} is closed"))

    def _fail_queued(self, exc: BaseException) -> None:
        while True:
            if self._backlog:
                cmd = self._backlog.popleft()
            else:
                try:
                    cmd = self._q.get_nowait()
                except queue.Empty:
                    return
            deliver = getattr(cmd, "deliver", None)
            if deliver is not None:
                deliver(None, exc)

    def _answer_gets(self, gets: list[_Get]) -> None:
        con = self._con
        assert con is not None
        wanted = list(dict.fromkeys(k for g in gets for k in g.keys))
        found: dict[str, ChatResponse] = {}
        exc: Exception | None = None
        # a key put after the loop looked may still be only in the buffer
        pending, inflight = self._pending, self._inflight
        to_query = []
        for k in wanted:
            row = pending.get(k) or inflight.get(k)
            if row is not None:
                found[k] = _buffered_response(row)
            else:
                to_query.append(k)
        keys_only = all(g.keys_only for g in gets)
        sql = _LOOKUP_KEYS if keys_only else _LOOKUP_ROWS
        try:
            for i in range(0, len(to_query), CHUNK_KEYS):
                chunk = to_query[i:i + CHUNK_KEYS]
                self.counters.queries += 1
                rows = con.execute(sql, [chunk]).fetchall()
                if keys_only:
                    for r in rows:
                        found[r[0]] = None  # type: ignore[assignment]
                else:
                    for r in rows:
                        found[r[0]] = _row_response(r)
        except Exception as e:
            exc = e
        # a key asked by two merged requests gets two objects: ChatResponse is mutable
        shared = len(gets) > 1 and sum(len(g.keys) for g in gets) > len(wanted)
        for g in gets:
            if exc is not None:
                g.deliver(None, exc)
            elif g.keys_only:
                g.deliver({k for k in g.keys if k in found}, None)
            elif len(gets) == 1:
                g.deliver(found, None)
            elif shared:
                g.deliver({k: replace(found[k]) for k in g.keys if k in found}, None)
            else:
                g.deliver({k: found[k] for k in g.keys if k in found}, None)

    def _insert(self, cols: list[list[Any]] | None, failures: list[tuple[Any, ...]],
                sql: str) -> None:
        con = self._con
        assert con is not None
        con.execute("BEGIN TRANSACTION")
        try:
            if cols:
                con.execute(sql, cols)
            if failures:
                con.execute(_INSERT_ATTEMPTS, [list(c) for c in zip(*failures)])
            con.execute("COMMIT")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except Exception:
                pass
            raise

    def _write_buffer(self) -> None:
        """Write every buffered row (thread only).

        One transaction per ``batch_rows`` rows: converting a statement's parameters holds the
        GIL (~10 ms per 1,000 rows), so bounded statements keep the event loop responsive, and
        lookups queued meanwhile are answered between two transactions.
        """
        with self._lock:
            # inflight first, so a lookup on the loop always finds the row in one of the two
            batch = self._inflight = self._pending
            self._pending = {}
            failures, self._failures = self._failures, []
            self._wake_sent = False
            if batch and self._wal_fd is not None:
                self._wal_rotate()  # the rows of this batch are all in the segments to unlink
        if not batch and not failures:
            self._inflight = {}
            return
        rows = list(batch.values())
        step = self.batch_rows
        done = 0
        c = self.counters
        try:
            for i in range(0, max(len(rows), 1), step):
                chunk = rows[i:i + step]
                fails = failures if i == 0 else []
                cols = [list(col) for col in zip(*chunk)] if chunk else None
                t0 = time.perf_counter()
                try:
                    self._insert(cols, fails, _INSERT_RESPONSES)
                except duckdb.ConstraintException:  # some keys are stored already: replace
                    self._insert(cols, fails, _REPLACE_RESPONSES)
                dt = time.perf_counter() - t0
                done = i + len(chunk)
                c.rows_written += len(chunk)
                c.failures_written += len(fails)
                if dt > c.max_flush_seconds:
                    c.max_flush_seconds = dt
                if done < len(rows):
                    self._answer_queued_gets()
        except Exception as exc:
            with self._lock:  # put back what is unwritten and not replaced by a newer put
                for r in rows[done:]:
                    self._pending.setdefault(r[0], r)
                if done == 0:
                    self._failures[:0] = failures
                self._inflight = {}
            c.last_error = repr(exc)
            raise
        self._inflight = {}
        c.flushes += 1
        self._wal_cleanup()
