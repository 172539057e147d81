"""The write-ahead log: a process killed with SIGKILL loses no response it put."""

import os
import signal
import subprocess
import sys
import textwrap
import time

from judgekit.cache.store import CacheStore

CHILD = textwrap.dedent('''
    import asyncio, sys, time
    from judgekit.cache.store import CacheStore, RequestMeta
    from judgekit.types import ChatResponse, Usage

    async def main():
        store = await CacheStore.open(sys.argv[1], run_id="child", flush_interval=3600, batch_rows=10**6)
        meta = RequestMeta("openai", "m", "u", "stage", "i", "h")
        for i in range(500):
            store.put(f"k{i}", meta, ChatResponse(f"answer {i} \\u00e9", Usage(3, i), "stop", 0.1, f"r{i}"))
        print("PUT", flush=True)
        time.sleep(60)  # never flushes: only the log holds the rows

    asyncio.run(main())
''')


async def test_sigkill_loses_nothing_that_was_put(tmp_path):
    path = tmp_path / "c.duckdb"
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "PUT"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert any(n.startswith("c.duckdb.wal.") for n in os.listdir(tmp_path))

    store = await CacheStore.open(path, run_id="next")
    assert store.counters.wal_replayed == 500
    got = await store.get_many([f"k{i}" for i in range(500)])
    assert len(got) == 500
    assert got["k7"].text == "answer 7 \u00e9" and got["k7"].usage.output_tokens == 7 and got["k7"].cached
    await store.close()
    assert not any(".wal." in n for n in os.listdir(tmp_path))  # replayed and committed: logs removed


async def test_log_segments_are_removed_after_each_flush(tmp_path):
    from judgekit.cache.store import RequestMeta
    from judgekit.types import ChatResponse

    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="r", flush_interval=0.05)
    meta = RequestMeta("openai", "m")
    for i in range(50):
        store.put(f"k{i}", meta, ChatResponse(f"a{i}"))
    await store.flush()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2:
        segs = [n for n in os.listdir(tmp_path) if ".wal." in n]
        if len(segs) <= 1:
            break
        await __import__("asyncio").sleep(0.05)
    assert len(segs) <= 1  # only the current, empty-or-recent segment remains
    await store.close()
    assert not [n for n in os.listdir(tmp_path) if ".wal." in n]
