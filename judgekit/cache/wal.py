"""The response cache's write-ahead log: every response put, on disk before it is committed.

:class:`~judgekit.cache.store.CacheStore` appends each response it is given to the current
segment of the log at once (one JSON line per response, in
:data:`~judgekit.cache.schema.RESPONSE_COLUMNS` order, written to the OS without fsync), so a
``kill -9`` loses no response that was put; only a crash of the whole machine can lose the
last few.  Segments are files next to the cache file named ``<file>.wal.<pid>.<n>``.  The
store's thread starts a new segment at every flush and deletes the earlier ones once their
rows are committed; opening the cache replays the segments a killed process left behind.

Replay keeps every line it can take and sets aside the others (not JSON, the wrong number of
values, a value of the wrong type or out of its column's range: see
:func:`judgekit.cache._rows.response_row_problem`) in ``<file>.wal-rejected``, one JSON object
per line with the reason and the line as it was, so what a server sent can never make the cache
unopenable and nothing is lost.  The store also sets aside there any response it refuses to put.

The log also holds the cache's batch records (:mod:`judgekit.cache.batches`), as JSON objects
(``{"op": "batch", ...}``, ``{"op": "batch_update", ...}``) among the response arrays; replay
returns them in log order.  A new batch's line is synced to disk (:meth:`WriteAheadLog.sync`)
before the batch is waited on.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import threading
from typing import Any

from judgekit.cache._rows import response_row_problem
from judgekit.cache.batches import batch_op_problem

__all__ = ["WriteAheadLog", "rejected_path", "reserve_path", "RESERVE_BYTES"]


#: the room kept beside a cache for its log (``<file>.wal-reserve``): what the replies of the calls in
#: flight need once the disk is full (a few thousand replies of a few KB)
RESERVE_BYTES = 4 * 2**20
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def reserve_path(db_path: str) -> str:
    """The log's reserve file: ``<file>.wal-reserve``."""
    return os.path.abspath(db_path) + ".wal-reserve"


def rejected_path(db_path: str) -> str:
    """Where the lines and rows the cache could not take are kept: ``<file>.wal-rejected``."""
    return os.path.abspath(db_path) + ".wal-rejected"


class WriteAheadLog:
    """The log segments of the cache file at ``db_path``.

    ``lock`` is the store's lock: it guards the current segment, which the loop appends to
    (:meth:`write`) while the thread rotates it.  :meth:`write`, :meth:`rotate` and
    :meth:`close_current` expect the caller to hold it (or to be opening the store);
    :meth:`cleanup` takes it itself.
    """

    __slots__ = ("_db_path", "_lock", "_fd", "_path", "_seq", "_unlink", "broken", "_reserve", "released")

    def __init__(self, db_path: str, lock: threading.Lock) -> None:
        self._db_path = db_path
        self._lock = lock
        self._fd: int | None = None  # guarded by lock
        self._path = ""
        self._seq = 0
        self._unlink: list[str] = []  # segments whose rows are in a flush not yet committed
        self.broken: OSError | None = None  # the write that failed; no line is written until rotate() works
        self._reserve: str | None = None  # the reserve file (make_reserve), while it is there
        self.released: OSError | None = None  # the write that found no room and took the reserve's

    @staticmethod
    def encode(row: tuple[Any, ...]) -> bytes:
        """The log line of one response row."""
        return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

    @property
    def is_open(self) -> bool:
        """Whether a segment is open (appends are kept)."""
        return self._fd is not None

    def write(self, line: bytes) -> None:
        """Append ``line`` (from :meth:`encode`) to the current segment, if one is open.  Raises
        OSError when it cannot be written whole (a full disk): the log is then :attr:`broken`, and
        every write fails at once until :meth:`rotate` opens a new segment (a line cut short is
        the segment's last: replay skips it)."""
        if self.broken is not None:
            raise self.broken
        if self._fd is None:
            return
        err = self._write_whole(line)
        if err is None:
            return
        if self._reserve is not None and err.errno in _NO_ROOM:
            # the disk is full: the reserve makes room for the replies of the calls in flight, in a
            # new segment (the cut line, if any, is the old one's last: replay skips it)
            self.release_reserve()
            self.released = err
            self.rotate()
            err = self._write_whole(line)
            if err is None:
                return
        self.broken = err
        raise err

    def _write_whole(self, line: bytes) -> OSError | None:
        try:
            n = os.write(self._fd, line)
        except OSError as e:
            return OSError(e.errno, e.strerror, self._path)
        if n != len(line):
            return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self._path)
        return None

    def make_reserve(self) -> bool:
        """Set aside :data:`RESERVE_BYTES` beside the cache file (``<file>.wal-reserve``), given
        back the first time the log finds the disk full; False where there is no room for it or
        the file system cannot allocate (the log then has no reserve)."""
        path = reserve_path(self._db_path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError:
            return False
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        except (OSError, AttributeError):
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                pass
            return False
        os.close(fd)
        self._reserve = path
        return True

    def release_reserve(self) -> None:
        """Delete the reserve file (its room is the log's now, or the store is closing)."""
        path, self._reserve = self._reserve, None
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass

    def sync(self) -> None:
        """Flush the current segment to disk (caller holds the lock): what was written survives a
        crash of the machine, not only of the process.  A file system that cannot sync is let be."""
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError:
                pass

    def segments(self) -> list[str]:
        """Every segment of the cache file, this process's included, oldest first."""
        d, base = os.path.split(os.path.abspath(self._db_path))
        prefix = base + ".wal."
        try:
            names = [n for n in os.listdir(d) if n.startswith(prefix)]
        except FileNotFoundError:
            return []
        return [os.path.join(d, n) for n in sorted(names)]

    def close_current(self) -> None:
        """Close the current segment (caller holds the lock) and mark it for deletion."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._unlink.append(self._path)

    def rotate(self) -> None:
        """Start a new segment (caller holds the lock or is opening); one that cannot be made
        leaves the log :attr:`broken` and raises."""
        self.close_current()
        self._seq += 1
        self._path = f"{os.path.abspath(self._db_path)}.wal.{os.getpid()}.{self._seq:09d}"
        try:
            self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as e:
            self.broken = OSError(e.errno, e.strerror, self._path)
            raise self.broken from None
        self.broken = None

    def write_all(self, lines: list[bytes]) -> None:
        """Write ``lines`` to a new segment (caller holds the lock): the replies a full disk kept
        in memory, once there is room.  Raises OSError (the log broken) when there still is none."""
        self.rotate()
        self.write(b"".join(lines))

    def marked(self) -> list[str]:
        """The segments marked for deletion so far, unmarked (caller holds the lock): deleted by
        ``cleanup(marked)`` once the rows they hold are committed, or ``unmark``-ed if not."""
        done, self._unlink = self._unlink, []
        return done

    def unmark(self, paths: list[str]) -> None:
        """Mark ``paths`` (from :meth:`marked`) again: their rows were not committed."""
        with self._lock:
            self._unlink[:0] = paths

    def cleanup(self, done: list[str] | None = None) -> None:
        """Every row of the marked segments (or of ``done``) is committed: delete them (thread only)."""
        if done is None:
            with self._lock:
                done, self._unlink = self._unlink, []
        for path in done:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def replay_rows(self) -> tuple[list[str], list[tuple[Any, ...]], list[tuple[str, str]], list[dict[str, Any]]]:
        """The segments left on disk, the response rows they hold (the last good put of a key
        winning), the lines set aside, as ``(line, reason)``, and the batch records in log order.  A last line cut short by a kill
        (no newline, not JSON) is skipped.  Delete the segments with :meth:`remove` once the
        rows are committed and the rejected lines kept (:meth:`set_aside`)."""
        segments = self.segments()
        rows: dict[str, tuple[Any, ...]] = {}
        rejected: list[tuple[str, str]] = []
        ops: list[dict[str, Any]] = []
        for path in segments:
            with open(path, "rb") as f:
                data = f.read()
            lines = data.split(b"\n")
            tail = lines.pop()  # what follows the last newline: b"" or a line cut short
            for raw in lines:
                if raw.strip():
                    self._take(raw, rows, rejected, ops)
            if tail.strip():
                try:
                    json.loads(tail)
                except ValueError:  # a line cut short by the kill: never a complete put
                    continue
                self._take(tail, rows, rejected, ops)
        return segments, list(rows.values()), rejected, ops

    @staticmethod
    def _take(raw: bytes, rows: dict[str, tuple[Any, ...]], rejected: list[tuple[str, str]],
              ops: list[dict[str, Any]]) -> None:
        text = raw.decode("utf-8", "backslashreplace")
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            rejected.append((text, "not JSON"))
            return
        if isinstance(value, dict):  # a batch record
            problem = batch_op_problem(value)
            if problem:
                rejected.append((text, problem))
            else:
                ops.append(value)
            return
        problem = response_row_problem(value)
        if problem:
            rejected.append((text, problem))
            return
        row = tuple(value)
        rows[row[0]] = row

    def set_aside(self, entries: list[tuple[str, str]]) -> str:
        """Append ``(line, reason)`` entries to ``<file>.wal-rejected`` (flushed and synced:
        the log they came from is deleted next); returns its path."""
        path = rejected_path(self._db_path)
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        out = b"".join(
            (json.dumps({"at": now, "reason": reason, "line": line}, ensure_ascii=True) + "\n").encode("ascii")
            for line, reason in entries)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, out)
            os.fsync(fd)
        finally:
            os.close(fd)
        return path

    @staticmethod
    def remove(segments: list[str]) -> None:
        """Delete replayed ``segments``."""
        for path in segments:
            os.unlink(path)
