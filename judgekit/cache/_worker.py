"""The cache store's thread: the one DuckDB connection, the bulk writes and the lookups.

:class:`~judgekit.cache.store.CacheStore` is built on :class:`StoreWorker`: the store's
methods run on the event loop and queue commands (:class:`Get`, :class:`Call`,
:class:`Close`, :data:`WAKE`); the methods here run in the store's thread, which owns the
connection, writes the buffer the loop fills (one transaction per ``batch_rows`` rows),
answers lookups between two transactions and replays the write-ahead log on open.  All the
SQL the store sends for responses and failures is here too.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

import duckdb

from judgekit.cache import schema
from judgekit.cache._rows import CacheCounters, buffered_response, is_answer, row_line, row_response
from judgekit.cache.batches import write_batch_ops
from judgekit.cache.snapshot import CacheView, open_view
from judgekit.errors import StorageFull, storage_problem
from judgekit.types import ChatResponse

from ..plural import plural

if TYPE_CHECKING:
    from judgekit.cache.wal import WriteAheadLog

__all__ = ["StoreWorker", "Get", "Call", "Close", "WAKE", "Deliver", "CHUNK_KEYS"]

log = logging.getLogger("judgekit.cache.store")  # the store's logger, as before the split

#: keys per lookup statement; bigger lists are split
CHUNK_KEYS = 5000


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


#: errors DuckDB raises for a row it cannot take (a value of the wrong type or range, a NULL
#: where none is allowed); any other error (I/O, a closed file) is not the row's fault
_ROW_ERRORS = (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.ConstraintException,
               duckdb.OutOfRangeException, TypeError, ValueError, OverflowError)


def _full(exc: BaseException, path: str) -> BaseException:
    """``exc`` as :class:`StorageFull` when it says the disk is full, else as it is."""
    why = storage_problem(exc)
    return StorageFull(path, why) if why is not None else exc


# ---------------------------------------------------------------------- commands

#: how the thread answers a command: ``deliver(result, None)`` or ``deliver(None, exc)``
Deliver = Callable[[Any, "BaseException | None"], None]


class Get:
    """Look up ``keys``; deliver ``{key: ChatResponse}`` for those found."""

    __slots__ = ("keys", "deliver", "keys_only")

    def __init__(self, keys: list[str], deliver: Deliver, keys_only: bool = False) -> None:
        self.keys, self.deliver, self.keys_only = keys, deliver, keys_only


class Call:
    """Run ``fn(con)`` in the thread; ``flush_first`` writes the buffer before it."""

    __slots__ = ("fn", "deliver", "flush_first")

    def __init__(self, fn: Callable[[duckdb.DuckDBPyConnection], Any], deliver: Deliver | None,
                 flush_first: bool = False) -> None:
        self.fn, self.deliver, self.flush_first = fn, deliver, flush_first


class Close:
    """Write the buffer, close the connection and stop the thread."""

    __slots__ = ("deliver",)

    def __init__(self, deliver: Deliver) -> None:
        self.deliver = deliver


WAKE = object()  # the buffer reached batch_rows


# ---------------------------------------------------------------------- the thread

class StoreWorker:
    """The thread side of :class:`~judgekit.cache.store.CacheStore` (its base class).

    The store's ``__init__`` sets every attribute below.  The loop fills ``_pending`` and
    ``_failures`` under ``_lock`` and reads ``_pending``/``_inflight`` without it; everything
    else here is touched by the thread only (``_backlog``, ``_con``), or set once.
    """

    path: str
    read_only: bool
    snapshot: bool
    _view: CacheView | None
    flush_interval: float
    batch_rows: int
    counters: CacheCounters
    _q: queue.SimpleQueue[Any]
    _lock: threading.Lock
    _pending: dict[str, tuple[Any, ...]]
    _inflight: dict[str, tuple[Any, ...]]
    _failures: list[tuple[Any, ...]]
    _batch_ops: list[dict[str, Any]]
    _wake_sent: bool
    _closed: bool
    _stopped: bool
    _con: duckdb.DuckDBPyConnection | None
    _on_open: Deliver
    _backlog: collections.deque[Any]
    _wal: WriteAheadLog
    _unlogged: dict[str, bytes]
    _storage_failed: Callable[[BaseException, str], StorageFull]
    write_error: StorageFull | None

    def _thread_main(self) -> None:
        try:
            if self.snapshot:  # only reading: no file made, a file another run holds read from a copy
                self._view = open_view(self.path)
                self._con = self._view.con
                self.read_only = self.read_only or self._view.source != "file"
            else:
                self._con = schema.open_database(self.path, read_only=self.read_only)
        except BaseException as exc:  # reported to open()
            self._closed = self._stopped = True
            self._on_open(None, _full(exc, self.path))
            return
        if not self.read_only:
            try:
                self._replay_wal()
                self._wal.rotate()
                self._wal.make_reserve()  # room for the log's lines once the disk is full
            except BaseException as exc:  # (the log stays on disk for the next open)
                self._closed = self._stopped = True
                try:
                    self._con.close()
                except Exception:
                    pass
                self._on_open(None, _full(exc, self.path))
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
            gets: list[Get] = []
            while isinstance(cmd, Get):  # merge lookups queued behind each other
                gets.append(cmd)
                cmd = self._next(0)
            if gets:
                self._answer_gets(gets)
            if isinstance(cmd, Close):
                self._do_close(cmd)
                return
            if isinstance(cmd, Call):
                self._do_call(cmd)
            # once the disk is full the file is written only when asked (a flush, the close): the
            # log holds every reply meanwhile, and the room it has left is not spent on retries
            if (len(self._pending) >= self.batch_rows or len(self._failures) >= self.batch_rows
                    or time.monotonic() >= next_flush):
                try:
                    if self.write_error is None:
                        self._write_buffer()
                except Exception as exc:
                    if storage_problem(exc) is not None:  # a full disk: said once, by the store's owner
                        self._storage_failed(exc, self.path)
                    else:
                        log.warning("cache flush to %s failed, will retry: %s", self.path, exc)
                next_flush = time.monotonic() + interval

    def _answer_queued_gets(self) -> None:
        """Between two write transactions: answer the lookups waiting, keep the rest in order."""
        gets: list[Get] = []
        while True:
            try:
                cmd = self._q.get_nowait()
            except queue.Empty:
                break
            if isinstance(cmd, Get):
                gets.append(cmd)
            else:
                self._backlog.append(cmd)
        if gets:
            self._answer_gets(gets)

    def _do_call(self, cmd: Call) -> None:
        try:
            if cmd.flush_first:
                self._write_buffer()
            result = cmd.fn(self._con)
        except Exception as exc:
            if storage_problem(exc) is not None:
                exc = self._storage_failed(exc, self.path)
                if cmd.deliver is None:
                    return  # (a run's record: said once, by the store's owner)
            if cmd.deliver is not None:
                cmd.deliver(None, exc)
            else:
                self.counters.last_error = repr(exc)
                log.warning("cache statement failed: %s", exc)
            return
        if cmd.deliver is not None:
            cmd.deliver(result, None)

    def _do_close(self, cmd: Close) -> None:
        exc: BaseException | None = None
        try:
            self._write_buffer()
        except Exception as e:
            exc = e
        if exc is None:
            with self._lock:
                self._wal.close_current()
            self._wal.cleanup()
        try:
            (self._view or self._con).close()  # a view deletes its copy too
        except Exception as e:
            exc = exc or e
        if exc is not None and storage_problem(exc) is not None:
            held = len(self._unlogged)
            kept = len(self._pending) - held
            note = (f"; {plural(kept, 'reply')} not yet in the file {'is' if kept == 1 else 'are'} "
                    "kept in its write-ahead log (stored when the cache next opens)") if kept > 0 else ""
            if held:
                note += f"; {held:,} held in memory could not be kept (the next run asks them again)"
            exc = StorageFull(self.path, storage_problem(exc) or str(exc), note)
        self._wal.release_reserve()
        self._stopped = True
        self._fail_queued(RuntimeError(f"cache store {self.path} is closed"))
        cmd.deliver(None, exc)

    def _replay_wal(self) -> None:
        """Commit the responses a killed process left in its log segments (thread only).

        Every line that can be taken is; the others (and any row the file still refuses) are
        set aside in ``<file>.wal-rejected`` with their reason, counted in
        ``counters.wal_rejected`` and named in one warning, and the segments are removed."""
        segments, values, rejected, ops = self._wal.replay_rows()
        if not segments:
            return
        write_batch_ops(self._con, ops)
        taken = 0
        for i in range(0, len(values), self.batch_rows):
            chunk = values[i:i + self.batch_rows]
            refused = self._insert_rows(chunk, _REPLACE_RESPONSES)
            taken += len(chunk) - len(refused)
            rejected.extend((row_line(row), reason) for row, reason in refused)
        self.counters.wal_replayed += taken
        if rejected:
            where = self._wal.set_aside(rejected)
            self.counters.wal_rejected += len(rejected)
            log.warning("cache %s: %s of its write-ahead log could not be replayed (first: %s); "
                        "%s replayed, the others kept in %s", self.path, plural(len(rejected), "line"),
                        rejected[0][1], plural(taken, "response"), where)
        self._wal.remove(segments)

    def _insert_rows(self, rows: list[tuple[Any, ...]], sql: str) -> list[tuple[tuple[Any, ...], str]]:
        """Insert response ``rows`` in one transaction; if DuckDB refuses one of them, insert them
        one by one and return those it refuses with its reason (other errors raise)."""
        try:
            self._insert([list(col) for col in zip(*rows)], [], sql)
            return []
        except _ROW_ERRORS:
            pass  # find which rows, below
        refused: list[tuple[tuple[Any, ...], str]] = []
        for row in rows:
            try:
                self._insert([[v] for v in row], [], sql)
            except _ROW_ERRORS as exc:
                refused.append((row, f"refused by DuckDB: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"))
        return refused

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

    def _answer_gets(self, gets: list[Get]) -> None:
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
                found[k] = buffered_response(row)
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
                        if is_answer(r[1]):  # an empty answer an older judgekit cached: a miss
                            found[r[0]] = row_response(r)
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

    def _insert_refusing(self, chunk: list[tuple[Any, ...]], failures: list[tuple[Any, ...]]) -> int:
        """Write ``chunk`` row by row and ``failures`` after, setting aside (counted, warned, kept
        in ``<file>.wal-rejected``) the rows DuckDB refuses.  ``put`` checks rows first, so this
        runs only for a row the check let through."""
        refused = self._insert_rows(chunk, _REPLACE_RESPONSES) if chunk else []
        if failures:
            self._insert(None, failures, _INSERT_ATTEMPTS)
        if refused:
            where = self._wal.set_aside([(row_line(row), reason) for row, reason in refused])
            self.counters.rows_rejected += len(refused)
            log.warning("cache %s: %s refused by the file (first: %s); kept in %s",
                        self.path, plural(len(refused), "response"), refused[0][1], where)
        return len(refused)

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
            ops, self._batch_ops = self._batch_ops, []
            self._wake_sent = False
            wal_error: OSError | None = None
            if (batch or ops or self._unlogged) and (self._wal.is_open or self._wal.broken is not None):
                try:  # the rows of this batch are all in the segments to unlink
                    if self._unlogged:  # replies a full disk kept from the log: logged now if there is room
                        self._wal.write_all(list(self._unlogged.values()))
                        self._unlogged.clear()
                    else:
                        self._wal.rotate()
                except OSError as e:
                    wal_error = e
            # the segments holding this batch's rows (a segment marked later holds later rows too)
            marked = self._wal.marked()
        if wal_error is not None:
            self._storage_failed(wal_error, self.path)
        if ops:
            try:
                write_batch_ops(self._con, ops)
            except Exception as exc:
                with self._lock:  # put them back, in order, before any logged since
                    self._batch_ops[:0] = ops
                    self._pending, batch = batch, self._pending
                    self._pending.update(batch)
                    self._failures[:0] = failures
                    self._inflight = {}
                self._wal.unmark(marked)
                self.counters.last_error = repr(exc)
                raise
        if not batch and not failures:
            self._inflight = {}
            if ops:
                self._wal.cleanup(marked)
            else:
                self._wal.unmark(marked)
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
                refused = 0
                try:
                    self._insert(cols, fails, _INSERT_RESPONSES)
                except duckdb.ConstraintException:  # some keys are stored already: replace
                    try:
                        self._insert(cols, fails, _REPLACE_RESPONSES)
                    except _ROW_ERRORS:  # a row the file refuses: never let it block the rest
                        refused = self._insert_refusing(chunk, fails)
                except _ROW_ERRORS:
                    refused = self._insert_refusing(chunk, fails)
                dt = time.perf_counter() - t0
                done = i + len(chunk)
                c.rows_written += len(chunk) - refused
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
            self._wal.unmark(marked)
            c.last_error = repr(exc)
            raise
        self._inflight = {}
        if self._unlogged:  # committed now: no longer held in memory only
            with self._lock:
                for k in batch:
                    if k not in self._pending:
                        self._unlogged.pop(k, None)
        c.flushes += 1
        self._wal.cleanup(marked)
