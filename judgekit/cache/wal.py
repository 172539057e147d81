"""The response cache's write-ahead log: every response put, on disk before it is committed.

:class:`~judgekit.cache.store.CacheStore` appends each response it is given to the current
segment of the log at once (one JSON line per response, in
:data:`~judgekit.cache.schema.RESPONSE_COLUMNS` order, written to the OS without fsync), so a
``kill -9`` loses no response that was put; only a crash of the whole machine can lose the
last few.  Segments are files next to the cache file named ``<file>.wal.<pid>.<n>``.  The
store's thread starts a new segment at every flush and deletes the earlier ones once their
rows are committed; opening the cache replays the segments a killed process left behind.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from judgekit.cache import schema

__all__ = ["WriteAheadLog"]


class WriteAheadLog:
    """The log segments of the cache file at ``db_path``.

    ``lock`` is the store's lock: it guards the current segment, which the loop appends to
    (:meth:`write`) while the thread rotates it.  :meth:`write`, :meth:`rotate` and
    :meth:`close_current` expect the caller to hold it (or to be opening the store);
    :meth:`cleanup` takes it itself.
    """

    __slots__ = ("_db_path", "_lock", "_fd", "_path", "_seq", "_unlink")

    def __init__(self, db_path: str, lock: threading.Lock) -> None:
        self._db_path = db_path
        self._lock = lock
        self._fd: int | None = None  # guarded by lock
        self._path = ""
        self._seq = 0
        self._unlink: list[str] = []  # segments whose rows are in a flush not yet committed

    @staticmethod
    def encode(row: tuple[Any, ...]) -> bytes:
        """The log line of one response row."""
        return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

    @property
    def is_open(self) -> bool:
        """Whether a segment is open (appends are kept)."""
        return self._fd is not None

    def write(self, line: bytes) -> None:
        """Append ``line`` (from :meth:`encode`) to the current segment, if one is open."""
        if self._fd is not None:
            os.write(self._fd, line)

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
        """Start a new segment (caller holds the lock or is opening)."""
        self.close_current()
        self._seq += 1
        self._path = f"{os.path.abspath(self._db_path)}.wal.{os.getpid()}.{self._seq:09d}"
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def cleanup(self) -> None:
        """Every row of the marked segments is committed: delete them (thread only)."""
        with self._lock:
            done, self._unlink = self._unlink, []
        for path in done:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def replay_rows(self) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The segments left on disk and the response rows they hold, the last put of a key
        winning; lines cut short by a kill are skipped.  Delete them with :meth:`remove`
        once the rows are committed."""
        segments = self.segments()
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
        return segments, list(rows.values())

    @staticmethod
    def remove(segments: list[str]) -> None:
        """Delete replayed ``segments``."""
        for path in segments:
            os.unlink(path)
