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

This module holds the public API, which runs on the event loop, and the lifecycle;
:mod:`judgekit.cache._worker` the thread's side (its command loop, the flushes, the lookups and
all their SQL), :mod:`judgekit.cache.wal` the write-ahead log, and :mod:`judgekit.cache._rows`
:class:`RequestMeta`, :class:`CacheCounters` and the rows buffered and written.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import datetime as _dt
import os
import queue
import threading
import time
import weakref
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

import duckdb

from judgekit.cache import schema
from judgekit.cache._rows import (CacheCounters, RequestMeta, buffered_response, failure_row,
                                  response_row, response_row_problem, row_line)
from judgekit.cache._worker import WAKE, Call, Close, Deliver, Get, StoreWorker, log
from judgekit.cache.batches import BatchRecords
from judgekit.cache.wal import WriteAheadLog
from judgekit.errors import StorageFull, storage_problem
from judgekit.types import ChatResponse

__all__ = ["CacheStore", "RequestMeta", "CacheCounters"]

#: callers of ``get`` woken per event-loop iteration when a batch is answered
_RESOLVE_SLICE = 256


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


class CacheStore(BatchRecords, StoreWorker):
    """The response cache of one process; see the module docstring.

    Build it with ``await CacheStore.open(...)``; ``counters`` holds running totals
    (:class:`CacheCounters`).
    """

    def __init__(self, path: str, *, run_id: str, flush_interval: float, batch_rows: int,
                 read_only: bool, batch_window: float, snapshot: bool = False) -> None:
        """Internal; use :meth:`CacheStore.open`."""
        self.path = path
        self.run_id = run_id
        self.read_only = read_only
        self.snapshot = snapshot
        self._view = None
        self.flush_interval = float(flush_interval)
        self.batch_rows = int(batch_rows)
        self.batch_window = float(batch_window)
        self.counters = CacheCounters()
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()  # guards _pending/_failures swaps and re-merges
        self._pending: dict[str, tuple[Any, ...]] = {}
        self._inflight: dict[str, tuple[Any, ...]] = {}
        self._failures: list[tuple[Any, ...]] = []
        self._batch_ops: list[dict[str, Any]] = []  # batch records logged, not yet written
        self._wake_sent = False
        self._waiters: list[tuple[str, asyncio.Future[Any]]] | None = None
        self._closed = False
        self._stopped = False  # the thread has left its loop
        self._con: duckdb.DuckDBPyConnection | None = None
        self._thread: threading.Thread | None = None
        self._on_open: Deliver = lambda _r, _e: None
        self._atexit: Callable[[], None] | None = None
        self._backlog: collections.deque[Any] = collections.deque()  # thread only
        self._wal = WriteAheadLog(self.path, self._lock)  # current segment guarded by _lock
        self._unlogged: dict[str, bytes] = {}  # log lines of replies a full disk kept from the log (_lock)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.write_error: StorageFull | None = None
        """The first write that failed for want of room (the log, the file); None while all is well."""
        self.on_storage_full: Callable[[StorageFull], None] | None = None
        """Called once, on the event loop, when a write first fails for want of room (a run stops
        launching calls then: every reply that arrives after is held in memory)."""
        self.on_hold: Callable[[int, StorageFull], None] | None = None
        """Called once by :meth:`close` when replies are held in memory only and it waits for room."""
        self.retry_s = 2.0
        """How often :meth:`close` tries again to write the replies held in memory."""
        self.hold_s = 600.0
        """How long :meth:`close` waits for room for them before it gives them up."""

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
        snapshot: bool = False,
    ) -> "CacheStore":
        """Open (creating or upgrading) the cache file at ``path`` and start its thread.

        Async because opening a file (creating it, replaying its WAL, migrating it) takes
        0.1 s to seconds, and that happens in the store's thread like all DuckDB work.
        ``run_id`` is written on every row this store puts; ``batch_rows`` is both the
        buffer size that triggers a write and the most rows one write transaction holds.
        ``batch_window`` > 0 makes :meth:`get` wait that many seconds to collect more
        lookups into one query (0: one event-loop tick).  ``snapshot`` is for a caller that only
        reads (an estimate): no file is made where there is none (the store is empty), and a file
        another process holds is read from a copy (:mod:`judgekit.cache.snapshot`); either way the
        store is then read-only.  ``source`` says which: ``"file"``, ``"copy"`` or ``"none"``.

        Raises :class:`~judgekit.errors.CacheLockedError` when another process holds the file
        and :class:`~judgekit.cache.schema.CacheSchemaError` when it is newer than this code.
        """
        if flush_interval <= 0 or batch_rows < 1:
            raise ValueError("flush_interval must be > 0 and batch_rows >= 1")
        store = cls(os.fspath(path), run_id=run_id, flush_interval=flush_interval,
                    batch_rows=batch_rows, read_only=read_only, batch_window=batch_window, snapshot=snapshot)
        store._loop = asyncio.get_running_loop()
        fut, store._on_open = store._future()
        t = threading.Thread(target=store._thread_main, name=f"judgekit-cache:{store.path}",
                             daemon=True)
        store._thread = t
        t.start()
        try:
            await fut
        except asyncio.CancelledError:
            store._closed = True
            store._submit(Close(lambda _r, _e: None))  # the thread closes what it opened
            # and the process waits for it: exiting while the thread is inside DuckDB (opening,
            # replaying the log) aborts the interpreter ("FATAL: exception not rethrown")
            t.join()
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
    def source(self) -> str:
        """What the store reads: ``"file"``, or for a snapshot ``"copy"`` or ``"none"`` (see :meth:`open`)."""
        return self._view.source if self._view is not None else "file"

    @property
    def closed(self) -> bool:
        return self._closed

    def pending_rows(self) -> int:
        """Responses and failures put but not yet written."""
        return len(self._pending) + len(self._inflight) + len(self._failures)

    def held_in_memory(self) -> int:
        """Replies put that are neither in the file nor in the log (a full disk): lost at exit."""
        return len(self._unlogged)

    def _storage_failed(self, exc: BaseException, path: str) -> StorageFull:
        """Note a write that failed for want of room (from the loop or the thread): the first one
        is :attr:`write_error` and goes to :attr:`on_storage_full` on the loop."""
        err = exc if isinstance(exc, StorageFull) else StorageFull(path, storage_problem(exc) or str(exc))
        if self.write_error is None:
            self.write_error = err
            self.counters.last_error = str(err)
            if self.on_storage_full is not None and self._loop is not None:
                if threading.current_thread() is self._thread:
                    _post(self._loop, self.on_storage_full, err)
                else:
                    self.on_storage_full(err)
        return err

    async def _keep_replies(self) -> None:
        """After a write failed for want of room: try to write everything again; while replies
        are held in memory only, wait for room (``on_hold`` says so once), retrying every
        ``retry_s`` seconds, at most ``hold_s`` seconds.  Cancelling the wait, or its end, gives
        them up (the next run asks them again)."""
        told = False
        give_up = time.monotonic() + self.hold_s
        while time.monotonic() < give_up:
            try:
                await self._call(lambda con: None, flush_first=True)
                return
            except Exception as exc:
                if storage_problem(exc) is None and not isinstance(exc, StorageFull):
                    return  # not a full disk: close() reports it
            held = self.held_in_memory()
            if not held:
                return  # every reply is in the log at least: the next open writes it to the file
            if not told and self.on_hold is not None and self.write_error is not None:
                self.on_hold(held, self.write_error)
                told = True
            await asyncio.sleep(self.retry_s)

    async def close(self) -> None:
        """Write everything buffered, close the connection and stop the thread.  After a write
        failed for want of room, replies held in memory only are waited on first (see
        :meth:`_keep_replies`); if the file still cannot be written, :class:`StorageFull` is
        raised once it is closed, the log keeping what the file could not take."""
        if self._closed:
            if not self._stopped:  # close_sync or another close() is under way
                await asyncio.get_running_loop().run_in_executor(None, self._after_close)
            return
        if self.write_error is not None and not self.read_only:
            try:
                await self._keep_replies()
            except asyncio.CancelledError:
                self._give_up_held()
                await self._close()
                raise
        await self._close()

    def _give_up_held(self) -> None:
        held = self.held_in_memory()
        if held:
            log.warning("cache %s: %d repl%s held in memory given up (the next run asks them again)",
                        self.path, held, "y" if held == 1 else "ies")

    async def _close(self) -> None:
        self._dispatch_gets()
        fut, deliver = self._future()
        self._closed = True
        self._submit(Close(deliver))
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

        self._submit(Close(deliver))
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

        Returns at once.  A later ``put`` of the same key replaces the earlier one.  A response
        the file could not hold or that is no answer (text that is not a non-blank string,
        token counts outside INTEGER, ...: :func:`~judgekit.cache._rows.response_row_problem`)
        is not cached: it is counted in ``counters.rows_rejected``, warned about and kept in
        ``<file>.wal-rejected``.
        """
        self._check_writable()
        row = response_row(key, request_meta, response, self.run_id)
        problem = response_row_problem(row)
        if problem is not None:  # never logged or buffered: it could make the file unopenable
            self._refuse(row, problem)
            return
        line = WriteAheadLog.encode(row)
        made = self.counters.made_by_provider
        made[request_meta.provider] = made.get(request_meta.provider, 0) + 1
        with self._lock:
            self._pending[key] = row
            n = len(self._pending)
            try:
                self._wal.write(line)
            except OSError as exc:  # a full disk: the reply is kept in memory until it can be written
                self._unlogged[key] = line
                failed: OSError | None = exc
            else:
                failed = self._wal.released  # written, in the room the reserve gave: the disk is full
                if self._unlogged:  # an older put of the key, held: this one replaces it
                    self._unlogged.pop(key, None)
        if failed is not None and self.write_error is None:
            self._storage_failed(failed, self.path)  # (the log lies beside the file: one disk)
        if n >= self.batch_rows and not self._wake_sent:
            self._wake_sent = True
            self._q.put(WAKE)

    def _refuse(self, row: tuple[Any, ...], problem: str) -> None:
        """Count, warn about and set aside (``<file>.wal-rejected``) a response ``put`` refuses."""
        self.counters.rows_rejected += 1
        where = self._wal.set_aside([(row_line(row), problem)])
        log.warning("cache %s: response %s not cached: %s (kept in %s)", self.path, row[0], problem, where)

    def record_failure(self, key: str, meta: RequestMeta, error_kind: str, status: int | None,
                       message: str) -> None:
        """Buffer one failed attempt for ``attempts``; never served by :meth:`get`."""
        self._check_writable()
        row = failure_row(key, meta, error_kind, status, message, self.run_id)
        with self._lock:
            self._failures.append(row)
            n = len(self._failures)
        if n >= self.batch_rows and not self._wake_sent:
            self._wake_sent = True
            self._q.put(WAKE)

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

        self._submit(Call(fn, None))

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

        self._submit(Call(fn, None, flush_first=True))

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
            return buffered_response(row)
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
        self._submit(Get(keys, lambda res, exc: _post(loop, resolve, res, exc)))

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
                out[k] = buffered_response(row)
            else:
                missing.append(k)
        if missing:
            fut, deliver = self._future()
            self.counters.lookup_requests += 1
            self._submit(Get(missing, deliver))
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
            self._submit(Get(rest, deliver, keys_only=True))
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

    async def latency_mean(self, stage: str, model: str) -> float | None:
        """Median ``latency_s`` of cached responses of ``stage`` and ``model`` (paid calls only, as
        measured when they were made; the median, so a first batch that waited for a model to load
        does not count for all); None if none."""
        def fn(con: duckdb.DuckDBPyConnection) -> float | None:
            r = con.execute(
                "SELECT median(latency_s) FROM responses WHERE stage = $1 AND model = $2 AND latency_s > 0",
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
        self._submit(Call(fn, deliver, flush_first))
        return await fut

    def _submit(self, cmd: Any) -> None:
        """Queue ``cmd`` for the thread; fails it at once if the thread has stopped."""
        self._q.put(cmd)
        if self._stopped:  # the thread may have drained the queue before our put
            self._fail_queued(RuntimeError(f"cache store {self.path} is closed"))

