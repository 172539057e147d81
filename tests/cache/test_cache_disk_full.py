"""A full disk under the cache: no reply that arrived is lost.  A reply whose log line cannot be
written is held in memory, the store says so once (``on_storage_full``: a run stops launching
calls), and ``close`` waits for room before it lets go of it; a reply that reached the log but not
the file stays in the log for the next open.  The disk is a fake here (ENOSPC injected into the
log's writes and DuckDB's commits); tests/cli/test_cli_disk_full.py fills a real one."""

from __future__ import annotations

import asyncio
import errno
import os

import duckdb
import pytest

from judgekit.cache import _worker, wal
from judgekit.cache.store import CacheStore, RequestMeta
from judgekit.errors import StorageFull, storage_problem
from judgekit.types import ChatResponse, Usage


class Disk:
    """What is full: the log's device (``log``), the DuckDB file's (``file``)."""

    def __init__(self, monkeypatch):
        self.log = self.file = False
        disk = self

        class _OS:
            def __getattr__(self, name):
                return getattr(os, name)

            @staticmethod
            def write(fd, data):
                if disk.log:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return os.write(fd, data)

        monkeypatch.setattr(wal, "os", _OS())
        insert = _worker.StoreWorker._insert

        def _insert(worker, *args):
            if disk.file:
                raise duckdb.IOException('Could not write file "c.duckdb.wal": No space left on device')
            return insert(worker, *args)

        monkeypatch.setattr(_worker.StoreWorker, "_insert", _insert)


META = RequestMeta("openai", "m", "u", "judge", "i", "h")


def put(store, keys):
    for k in keys:
        store.put(k, META, ChatResponse(f"answer {k}", Usage(3, 4), "stop", 0.1, k))


def wal_segments(tmp_path):
    return [n for n in os.listdir(tmp_path) if ".wal." in n]


def test_storage_problem_reads_oserrors_duckdb_errors_and_their_context():
    assert storage_problem(OSError(errno.ENOSPC, "x")) == os.strerror(errno.ENOSPC)
    assert storage_problem(OSError(errno.EDQUOT, "x")) == os.strerror(errno.EDQUOT)
    assert storage_problem(OSError(errno.ENOENT, "x")) is None
    assert storage_problem(duckdb.IOException("Could not write file: No space left on device")) is not None
    try:
        try:
            raise duckdb.TransactionException("Failed to commit: No space left on device")
        except Exception:
            raise duckdb.TransactionException("cannot rollback - no transaction is active")
    except Exception as e:
        assert storage_problem(e) is not None
    assert storage_problem(ValueError("a bad row")) is None


async def test_replies_a_full_log_could_not_take_are_held_until_there_is_room(tmp_path, monkeypatch):
    disk = Disk(monkeypatch)
    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="r", flush_interval=0.05)
    said, held = [], asyncio.Event()
    store.on_storage_full = said.append
    store.on_hold = lambda n, err: (said.append((n, err.path)), held.set())
    store.retry_s = 0.05
    put(store, [f"a{i}" for i in range(5)])
    await store.flush()
    disk.log = disk.file = True
    put(store, [f"b{i}" for i in range(20)])  # replies that arrive while the disk is full
    assert store.held_in_memory() == 20 and isinstance(store.write_error, StorageFull)
    assert len(said) == 1 and "no space left on device" in str(said[0]).lower()
    assert (await store.get("b3")).text == "answer b3"  # served from memory meanwhile
    closing = asyncio.ensure_future(store.close())
    await asyncio.wait_for(held.wait(), 10)
    assert said[1] == (20, str(tmp_path / "c.duckdb"))
    assert not closing.done()  # it waits for room: letting go would lose 20 paid replies
    disk.log = disk.file = False  # space is freed
    await asyncio.wait_for(closing, 10)
    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="next")
    got = await store.get_many([f"a{i}" for i in range(5)] + [f"b{i}" for i in range(20)])
    await store.close()
    assert len(got) == 25 and not wal_segments(tmp_path)


async def test_the_log_keeps_what_a_full_file_could_not_take(tmp_path, monkeypatch):
    disk = Disk(monkeypatch)
    path = tmp_path / "c.duckdb"
    store = await CacheStore.open(path, run_id="r", flush_interval=3600)
    said = []
    store.on_storage_full = said.append
    disk.file = True
    put(store, [f"k{i}" for i in range(30)])
    with pytest.raises(StorageFull):
        await store.flush()
    await asyncio.sleep(0.05)  # the thread's note goes to the loop
    assert len(said) == 1 and store.held_in_memory() == 0  # all in the log
    with pytest.raises(StorageFull) as e:
        await store.close()  # nothing to wait for: the log has them
    assert str(path) in str(e.value) and "30 replies" in str(e.value) and "write-ahead log" in str(e.value)
    assert wal_segments(tmp_path)
    with pytest.raises(StorageFull) as e:  # still full at the next open: one error, the log kept
        await CacheStore.open(path, run_id="next")
    assert str(path) in str(e.value) and wal_segments(tmp_path)
    disk.file = False
    store = await CacheStore.open(path, run_id="next")
    assert store.counters.wal_replayed == 30
    assert len(await store.get_many([f"k{i}" for i in range(30)])) == 30
    await store.close()
    assert not wal_segments(tmp_path)


async def test_a_log_that_broke_mid_line_is_replayed_without_the_cut_line(tmp_path, monkeypatch):
    """A short write (the device filled within a line): the cut line is the segment's last, the
    reply stays held, and once there is room the next segment logs it whole."""
    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="r", flush_interval=3600)
    real_write = os.write

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def write(fd, data):
            return real_write(fd, data[: len(data) // 2])  # half a line, as a filling device writes

    put(store, ["a"])
    monkeypatch.setattr(wal, "os", _OS())
    put(store, ["b", "c"])
    assert store.held_in_memory() == 2 and store.write_error is not None
    monkeypatch.setattr(wal, "os", os)
    # killed now: the log holds a and half of b; once there is room the next segment has b and c
    await store.flush()
    assert store.held_in_memory() == 0
    await store.close()
    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="next")
    assert len(await store.get_many(["a", "b", "c"])) == 3 and store.counters.wal_rejected == 0
    await store.close()


def test_a_full_image_store_is_one_error_naming_it_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    from judgekit import blobs

    store = blobs.BlobStore(tmp_path / "c.duckdb.blobs")
    store.put(b"\x89PNG\r\n\x1a\n first", "image/png")

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def write(fd, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(blobs, "os", _OS())
    with pytest.raises(StorageFull) as e:
        store.put(b"\x89PNG\r\n\x1a\n second", "image/png")
    assert str(tmp_path / "c.duckdb.blobs") in str(e.value) and "no space left" in str(e.value)
    assert not list((tmp_path / "c.duckdb.blobs").rglob("*.tmp"))


async def test_the_reserve_gives_the_log_room_for_the_replies_in_flight(tmp_path, monkeypatch):
    """The log keeps RESERVE_BYTES beside the cache: the first write that finds the disk full
    deletes it and writes on in a new segment, so the replies of the calls in flight are on disk,
    none only in memory; the store says the disk is full at once (no new call)."""
    disk = Disk(monkeypatch)
    path = tmp_path / "c.duckdb"
    reserve = wal.reserve_path(str(path))
    real_unlink = os.unlink

    class _OS(type(wal.os)):
        @staticmethod
        def unlink(p):
            if p == reserve:
                disk.log = False  # its room is free now
            return real_unlink(p)

    monkeypatch.setattr(wal, "os", _OS())
    store = await CacheStore.open(path, run_id="r", flush_interval=3600)
    assert os.path.getsize(reserve) == wal.RESERVE_BYTES
    said = []
    store.on_storage_full = said.append
    put(store, ["a"])
    disk.log = disk.file = True
    put(store, [f"b{i}" for i in range(10)])
    assert len(said) == 1 and store.held_in_memory() == 0 and not os.path.exists(reserve)
    with pytest.raises(StorageFull) as e:
        await store.close()  # the file is still full: the log keeps all 11
    assert "11 replies" in str(e.value) and "could not be kept" not in str(e.value)
    disk.file = False
    store = await CacheStore.open(path, run_id="next")
    assert len(await store.get_many(["a", *(f"b{i}" for i in range(10))])) == 11
    await store.close()
    assert not os.path.exists(reserve)  # given back at every close
