"""Reading a cache without making one and without waiting for the run that holds it.

``judgekit estimate`` and ``judgekit cache stats`` only read.  Two things used to get in their way:

- a ``--cache`` path with no file made an empty cache file there (DuckDB creates what it opens);
- a run in another process holds the file: DuckDB lets one process open a file read-write, and on
  Linux it refuses every other process, ``read_only`` connections included ("Conflicting lock").

:func:`open_view` answers both.  A missing file is an empty in-memory database with the current
schema (nothing is written to disk).  A file another process holds is copied, with DuckDB's
``.wal`` beside it, into a temporary folder, and the copy is opened: the run's responses written
so far (it writes them every second), at the cost of reading the file once (23 ms for a 3.4 MB
cache; a page-cache copy runs at about 1-2 GB/s).  A copy taken while the run checkpoints can be
torn; it is checked with a query and taken again, three times at most.  Reading through a run's
own summary was the other choice: it exists only once the run ends, and holds nothing of a
spec the run is not running.  Otherwise the file itself is opened read-write, as before (it is
upgraded to the current schema as a run would).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Literal

import duckdb

from judgekit.cache import schema
from judgekit.errors import CacheLockedError, CacheSchemaError

__all__ = ["CacheView", "open_view"]

Source = Literal["file", "copy", "none"]

_COPY_TRIES = 3


class CacheView:
    """A connection to read a cache through; ``source`` says what it reads: ``"file"`` the file
    itself, ``"copy"`` a copy (another process holds the file), ``"none"`` nothing (no file
    there: an empty cache in memory).  :meth:`close` closes it and deletes a copy."""

    def __init__(self, con: duckdb.DuckDBPyConnection, source: Source, tmp_dir: str | None = None) -> None:
        self.con = con
        self.source: Source = source
        self._tmp_dir = tmp_dir

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            if self._tmp_dir is not None:
                shutil.rmtree(self._tmp_dir, ignore_errors=True)
                self._tmp_dir = None

    def __enter__(self) -> "CacheView":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_view(path: str | os.PathLike[str]) -> CacheView:
    """A :class:`CacheView` of the cache at ``path`` (see the module docstring).  Never creates a
    file at ``path``.  Raises :class:`CacheSchemaError` for a file that is not a cache or newer
    than this code, and :class:`CacheLockedError` when no sound copy of a held file could be had."""
    where = os.fspath(path)
    if not os.path.exists(where):
        return CacheView(schema.open_database(":memory:"), "none")
    try:
        return CacheView(schema.open_database(where), "file")
    except CacheLockedError as locked:
        held = locked
    for _ in range(_COPY_TRIES):
        tmp = tempfile.mkdtemp(prefix="judgekit-cache-copy-")
        copy = os.path.join(tmp, os.path.basename(where))
        try:
            shutil.copyfile(where, copy)
            if os.path.exists(where + ".wal"):
                shutil.copyfile(where + ".wal", copy + ".wal")
            con = schema.open_database(copy)
            try:
                con.execute("SELECT count(*) FROM responses").fetchone()  # a torn copy fails here
            except BaseException:
                con.close()
                raise
            return CacheView(con, "copy", tmp)
        except FileNotFoundError:  # the run moved its .wal in between: copy again
            shutil.rmtree(tmp, ignore_errors=True)
        except (duckdb.Error, CacheSchemaError) as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(e, CacheSchemaError) and "newer than" in str(e):
                raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    raise held
