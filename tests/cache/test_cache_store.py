"""CacheStore: buffered writes, micro-batched reads, failures, durability, the file lock."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

import judgekit.cache as cache_pkg
import judgekit.cache.store as store_mod
from judgekit.cache import CacheStore, RequestMeta
from judgekit.types import ChatResponse, Usage

REPO = Path(__file__).resolve().parents[2]
META = RequestMeta(provider="openai", model="gpt-4o", base_url="https://x/v1", stage="candidate",
                   item_id="q1", prompt_hash="ph")


def resp(i: int | str, **kw) -> ChatResponse:
    return ChatResponse(text=f"answer {i}", usage=Usage(10, 20 + (hash(str(i)) % 3)),
                        finish_reason="stop", latency_s=0.25, request_id=f"req-{i}",
                        cost_usd=0.001, **kw)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cache.duckdb"


@pytest.fixture
async def store(db: Path):
    s = await CacheStore.open(db, run_id="run-1", flush_interval=60.0)  # flushes only when asked
    yield s
    await s.close()


def _python(code: str, *, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=timeout)


def test_public_api():
    assert set(store_mod.__all__) == {"CacheStore", "RequestMeta", "CacheCounters"}
    for name in cache_pkg.__all__:
        assert hasattr(cache_pkg, name)


async def test_put_is_served_before_and_after_flush(store: CacheStore, db: Path):
    store.put("k1", META, resp(1))
    got = await store.get("k1")
    assert got is not None and got.cached and got.text == "answer 1"
    assert store.counters.queries == 0  # served from the buffer
    coro = store.get("k1")  # ... without waiting for the thread at all
    with pytest.raises(StopIteration):
        coro.send(None)
    assert store.counters.rows_written == 0
    await store.flush()
    assert store.counters.rows_written == 1 and store.pending_rows() == 0
    got = await store.get("k1")
    assert got == ChatResponse(text="answer 1", usage=resp(1).usage, finish_reason="stop",
                               latency_s=0.25, request_id="req-1", cached=True, cost_usd=0.001)
    assert store.counters.queries == 1
    assert await store.get("missing") is None
    assert (await store.get_many(["k1", "missing"])).keys() == {"k1"}


async def test_later_put_replaces_earlier(store: CacheStore):
    store.put("k", META, resp("old"))
    await store.flush()
    store.put("k", META, resp("new"))
    assert (await store.get("k")).text == "answer new"
    await store.flush()
    assert (await store.get("k")).text == "answer new"
    assert await store.count_responses() == 1


async def test_stored_columns(store: CacheStore):
    store.put("k", META, resp(1))
    rows = await store.query(
        "SELECT provider, model, base_url, stage, item_id, prompt_hash, run_id, input_tokens,"
        " cost_usd, created_at FROM responses")
    (provider, model, base_url, stage, item_id, ph, run_id, tin, cost, created), = rows
    assert (provider, model, base_url, stage, item_id, ph, run_id, tin, cost) == (
        "openai", "gpt-4o", "https://x/v1", "candidate", "q1", "ph", "run-1", 10, 0.001)
    assert abs(created.timestamp() - time.time()) < 3600 * 24  # naive UTC, written at put time


async def test_get_many_10k(store: CacheStore):
    keys = [f"key-{i:05d}" for i in range(10_000)]
    for k in keys:
        store.put(k, META, resp(k))
    await store.flush()
    assert store.counters.rows_written == 10_000
    q0 = store.counters.queries
    got = await store.get_many(keys + [f"nope-{i}" for i in range(100)])
    assert len(got) == 10_000
    assert all(got[k].text == f"answer {k}" and got[k].cached for k in keys[::997])
    assert store.counters.queries - q0 <= 3  # chunks of 5,000 keys, not one query per key
    assert await store.cached_keys(keys[:10] + ["nope"]) == set(keys[:10])


async def test_concurrent_gets_are_micro_batched(store: CacheStore):
    for i in range(500):
        store.put(f"k{i}", META, resp(i))
    await store.flush()
    q0, r0 = store.counters.queries, store.counters.lookup_requests
    keys = [f"k{i}" for i in range(1000)]  # half are misses
    results = await asyncio.gather(*(store.get(k) for k in keys))
    assert [r is not None for r in results] == [i < 500 for i in range(1000)]
    assert all(r.text == f"answer {i}" for i, r in enumerate(results[:500]))
    assert store.counters.queries - q0 <= 3
    assert store.counters.lookup_requests - r0 == 1  # one tick, one hand-off to the thread
    assert store.counters.lookups >= 1000 and store.counters.hits >= 500


async def test_dependent_gets_from_many_tasks(store: CacheStore):
    """Tasks that look up, then look up again after the first answer, still batch."""
    for i in range(2000):
        store.put(f"a{i}", META, resp(i))
        store.put(f"b{i}", META, resp(i))
    await store.flush()
    q0 = store.counters.queries

    async def chain(i: int) -> bool:
        a = await store.get(f"a{i}")
        b = await store.get(f"b{i}")
        return a is not None and b is not None

    assert all(await asyncio.gather(*(chain(i) for i in range(2000))))
    assert store.counters.queries - q0 <= 8


async def test_cancelled_get_does_not_break_the_batch(store: CacheStore):
    store.put("k", META, resp(1))
    await store.flush()
    t1 = asyncio.ensure_future(store.get("k"))
    t2 = asyncio.ensure_future(store.get("k"))
    await asyncio.sleep(0)
    t1.cancel()
    assert (await t2).text == "answer 1"
    with pytest.raises(asyncio.CancelledError):
        await t1


async def test_failures_are_recorded_never_served(store: CacheStore):
    store.record_failure("kf", META, "rate_limited", 429, "slow down")
    store.record_failure("kf", META, "transient", 503, "overloaded")
    store.record_failure("kg", META, "bad_request", None, "bad image")
    assert await store.get("kf") is None
    assert await store.get_many(["kf", "kg"]) == {}
    assert await store.count_attempts() == 2 + 1
    assert await store.count_attempts("run-1") == 3 and await store.count_attempts("other") == 0
    assert await store.failures_by_kind() == {"bad_request": 1, "rate_limited": 1, "transient": 1}
    assert await store.get("kf") is None
    assert await store.count_responses() == 0
    assert await store.cached_keys(["kf"]) == set()


async def test_periodic_flush_without_asking(db: Path):
    s = await CacheStore.open(db, run_id="r", flush_interval=0.05)
    try:
        s.put("k", META, resp(1))
        for _ in range(100):
            if s.counters.rows_written:
                break
            await asyncio.sleep(0.02)
        assert s.counters.rows_written == 1 and s.counters.flushes >= 1
    finally:
        await s.close()


async def test_batch_rows_triggers_a_flush(db: Path):
    # the interval is far away: only reaching batch_rows can make the thread write
    s = await CacheStore.open(db, run_id="r", flush_interval=60.0, batch_rows=50)
    try:
        for round_ in (1, 2):
            for i in range(50):
                s.put(f"k{round_}-{i}", META, resp(i))
            for _ in range(250):
                if s.counters.rows_written >= 50 * round_:
                    break
                await asyncio.sleep(0.02)
            assert s.counters.rows_written == 50 * round_
        for i in range(49):  # below the batch size: stays buffered until the interval
            s.put(f"k3-{i}", META, resp(i))
        await asyncio.sleep(0.2)
        assert s.counters.rows_written == 100
    finally:
        await s.close()


async def test_close_and_reopen_keeps_everything(db: Path):
    s = await CacheStore.open(db, run_id="r1")
    for i in range(100):
        s.put(f"k{i}", META, resp(i))
    s.record_failure("kx", META, "transient", 500, "boom")
    s.run_started("r1", "smoke", '{"a": 1}')
    s.run_finished("r1", "ok", '{"calls": 100}')
    await s.close()  # no flush: close writes the buffer
    assert s.closed
    with pytest.raises(RuntimeError):
        s.put("late", META, resp(0))
    with pytest.raises(RuntimeError):
        await s.get("k1")

    s2 = await CacheStore.open(db, run_id="r2")
    try:
        got = await s2.get_many([f"k{i}" for i in range(100)])
        assert len(got) == 100 and got["k42"].text == "answer 42"
        assert await s2.count_attempts("r1") == 1
        runs = await s2.query("SELECT run_id, name, status, summary_json, finished_at FROM runs")
        assert runs[0][:4] == ("r1", "smoke", "ok", '{"calls": 100}') and runs[0][4] is not None
    finally:
        s2.close_sync()


async def test_read_only_store(db: Path):
    s = await CacheStore.open(db, run_id="r")
    s.put("k", META, resp(1))
    await s.close()
    ro = await CacheStore.open(db, run_id="r", read_only=True)
    try:
        assert (await ro.get("k")).text == "answer 1"
        with pytest.raises(RuntimeError):
            ro.put("k2", META, resp(2))
    finally:
        await ro.close()


async def test_output_token_mean(store: CacheStore):
    assert await store.output_token_mean("candidate", "gpt-4o") is None
    for i, out in enumerate([10, 20, 30]):
        store.put(f"k{i}", META, ChatResponse("x", Usage(1, out)))
    store.put("other", RequestMeta("openai", "gpt-4o", stage="judge"), ChatResponse("x", Usage(1, 999)))
    assert await store.output_token_mean("candidate", "gpt-4o") == 20.0
    assert await store.output_token_mean("candidate", "other-model") is None


async def test_write_table(store: CacheStore):
    rows = [{"item": "q1", "score": 1, "ok": True, "extra": {"a": [1]}},
            {"item": "q2", "score": 2.5, "note": "late"}]
    assert await store.write_table("scores", rows) == "result_scores"
    got = await store.query("SELECT item, score, ok, note FROM result_scores ORDER BY item")
    assert got == [("q1", 1.0, True, None), ("q2", 2.5, None, "late")]
    types = dict((r[0], r[1]) for r in await store.query("DESCRIBE result_scores"))
    assert types == {"item": "VARCHAR", "score": "DOUBLE", "ok": "BOOLEAN", "extra": "JSON",
                     "note": "VARCHAR"}
    await store.write_table("scores", [{"item": "q3"}])  # replaced, not appended
    assert await store.query("SELECT * FROM result_scores") == [("q3",)]
    await store.write_table("empty", [])
    assert await store.query("SELECT count(*) FROM result_empty") == [(0,)]
    with pytest.raises(ValueError):
        await store.write_table("bad name; DROP TABLE responses", rows)


async def test_statement_error_reaches_the_caller(store: CacheStore):
    with pytest.raises(duckdb.Error):
        await store.query("SELECT * FROM no_such_table")
    store.put("k", META, resp(1))  # the thread is still alive
    assert (await store.get("k")).text == "answer 1"


def test_close_sync_outside_a_loop(db: Path):
    s = asyncio.run(CacheStore.open(db, run_id="r"))
    s.put("k", META, resp(1))  # the loop that opened the store is gone; puts need none
    s.close_sync()
    s.close_sync()  # idempotent
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT text FROM responses").fetchall() == [("answer 1",)]
    finally:
        con.close()


async def test_second_process_gets_cache_locked_error(store: CacheStore, db: Path):
    r = _python(f"""
        import asyncio
        from judgekit.cache import CacheStore
        from judgekit.errors import CacheLockedError
        try:
            asyncio.run(CacheStore.open({str(db)!r}, run_id="x"))
        except CacheLockedError as e:
            print("LOCKED", e)
        else:
            print("OPENED")
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("LOCKED"), r.stdout + r.stderr
    assert str(db) in r.stdout and "another judgekit process" in r.stdout
    assert "--cache PATH" in r.stdout


def test_kill_9_loses_at_most_the_last_interval(db: Path):
    """A process killed with SIGKILL keeps every row flushed before it died."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import asyncio, sys, time
            from judgekit.cache import CacheStore, RequestMeta
            from judgekit.types import ChatResponse
            async def main():
                s = await CacheStore.open({str(db)!r}, run_id="r", flush_interval=0.1)
                m = RequestMeta("openai", "gpt-4o")
                for i in range(300):
                    s.put(f"k{{i}}", m, ChatResponse(f"a{{i}}"))
                await asyncio.sleep(0.5)  # several intervals pass: the thread flushed by itself
                print("READY", s.counters.rows_written, flush=True)
                s.put("late", m, ChatResponse("late"))
                await asyncio.sleep(60)
            asyncio.run(main())
            """)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        line = proc.stdout.readline()
        assert line.startswith("READY 300"), line + proc.stderr.read()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT count(*) FROM responses WHERE key LIKE 'k%'").fetchone()[0] == 300
    finally:
        con.close()


async def test_batch_window_collects_gets_across_ticks(db: Path):
    s = await CacheStore.open(db, run_id="r", batch_window=0.02)
    try:
        s.put("k", META, resp(1))
        await s.flush()

        async def late(delay_ticks: int):
            for _ in range(delay_ticks):
                await asyncio.sleep(0)
            return await s.get("k")

        r0 = s.counters.lookup_requests
        got = await asyncio.gather(*(late(i) for i in range(5)))
        assert all(g.text == "answer 1" for g in got)
        assert s.counters.lookup_requests - r0 == 1
    finally:
        await s.close()


async def test_slow_statement_does_not_block_the_loop(store: CacheStore):
    lags: list[float] = []
    done = asyncio.Event()

    async def ticker():
        while not done.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - t - 0.005)

    tick = asyncio.create_task(ticker())
    t = time.perf_counter()
    await store.query("SELECT sum(i * i % 7) FROM range(100000000) t(i)")
    elapsed = time.perf_counter() - t
    done.set()
    await tick
    assert elapsed > 0.1 and len(lags) >= 5
    assert max(lags) < max(0.05, elapsed / 3), (max(lags), elapsed)
