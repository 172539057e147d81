"""Does the response cache ever stall the event loop?  (A script, not a test.)

Runs an asyncio loop with a 5 ms ticker that records how late each tick wakes (event-loop
lag), and meanwhile:

1. times :func:`judgekit.cache.keys.cache_key` for a 2 KB text + 2 image message;
2. puts ``--rows`` responses of ~2 KB through :class:`CacheStore` (1,000-row bursts with a
   yield between them), while 50 reader tasks keep looking up random earlier keys with
   ``get`` and every 20th burst a ``get_many`` of 2,000 keys;
3. replays a fully cached run: ``--cached-calls`` tasks each doing two dependent ``get`` s.

Prints rows/s written (first put to the last durable flush), flushes and the slowest flush
(checkpoints included), lookup latency, and the max and p99 loop lag.  Target: max lag
< 100 ms.

    .venv/bin/python perf/cache_stall.py [--rows 60000] [--path /tmp/x.duckdb]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.cache import CacheStore, RequestMeta, cache_key  # noqa: E402
from judgekit.types import ChatResponse, GenParams, ImagePart, Message, Usage  # noqa: E402

__all__ = ["main"]

TICK = 0.005


def _pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def bench_cache_key(n: int = 50_000) -> float:
    """Microseconds per :func:`cache_key` for a 2 KB text + 2 images message."""
    rnd = random.Random(1)
    img1 = ImagePart(rnd.randbytes(200_000))
    img2 = ImagePart(rnd.randbytes(120_000))
    text = "".join(rnd.choice("abcdefghij klmnop\n") for _ in range(2048))
    msgs = (Message.system("You are a strict judge."), Message.user(text, img1, img2))
    params = GenParams(temperature=0.0, max_tokens=1024, seed=7)
    t = time.perf_counter()
    for i in range(n):
        cache_key(provider="openai", model="gpt-4o-2024-08-06",
                  base_url="https://api.openai.com/v1", messages=msgs, params=params,
                  sample_index=i & 3, prompt_hash="3f2a" * 16)
    return (time.perf_counter() - t) / n * 1e6


async def ticker(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(TICK)
        lags.append(time.perf_counter() - t0 - TICK)


async def run(path: str, rows: int, cached_calls: int) -> None:
    rnd = random.Random(7)  # test data first: building it must not count as loop lag
    words = [("".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9))))
             for _ in range(5000)]
    corpus = " ".join(rnd.choice(words) for _ in range(400_000))  # ~2.4 MB of text-like words
    body_len = 1900
    keys = [f"{i:064x}" for i in range(rows)]

    lags: list[float] = []
    stop = asyncio.Event()
    tick = asyncio.create_task(ticker(lags, stop))
    await asyncio.sleep(0.05)

    store = await CacheStore.open(path, run_id="perf", flush_interval=1.0, batch_rows=1000)
    meta = RequestMeta("openai", "gpt-4o", "https://api.openai.com/v1", "candidate", "", "ph")
    written = 0
    get_lat: list[float] = []
    readers_stop = asyncio.Event()

    async def reader(seed: int) -> None:
        rnd = random.Random(seed)
        while not readers_stop.is_set():
            if written == 0:
                await asyncio.sleep(0.01)
                continue
            k = keys[rnd.randrange(written)]
            t = time.perf_counter()
            r = await store.get(k)
            get_lat.append(time.perf_counter() - t)
            assert r is not None, k
            await asyncio.sleep(0.002)

    readers = [asyncio.create_task(reader(i)) for i in range(50)]
    many_lat: list[float] = []
    t_start = time.perf_counter()
    # 100 responses per event-loop step: already far more than an engine at ~1,500 calls/s sees
    # (each put also appends to the write-ahead log, ~12 us)
    for start in range(0, rows, 100):
        for i in range(start, min(rows, start + 100)):
            off = (i * 7919) % (len(corpus) - body_len)
            store.put(keys[i], meta, ChatResponse(f"{i} {corpus[off:off + body_len]}",
                                                  Usage(900, 120), "stop", 1.2, f"req-{i}",
                                                  cost_usd=0.002))
        written = min(rows, start + 100)
        if (start // 100) % 200 == 199:
            sample = random.sample(keys[:written], 2000)
            t = time.perf_counter()
            got = await store.get_many(sample)
            many_lat.append(time.perf_counter() - t)
            assert len(got) == 2000
        await asyncio.sleep(0)
    t_put = time.perf_counter() - t_start
    await store.flush()
    t_durable = time.perf_counter() - t_start
    readers_stop.set()
    await asyncio.gather(*readers)
    c = store.counters
    write_lags = list(lags)

    # a fully cached run: every call is a candidate lookup followed by a dependent judge lookup
    n = min(cached_calls, rows // 2)
    q0 = c.queries
    t = time.perf_counter()

    async def chain(i: int) -> None:
        a = await store.get(keys[i])
        b = await store.get(keys[rows // 2 + i])
        assert a is not None and b is not None

    replay_from = len(lags)
    tasks = []
    for w in range(0, n, 500):  # an engine schedules work in waves, not 20k tasks in one tick
        tasks += [asyncio.create_task(chain(i)) for i in range(w, min(n, w + 500))]
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    t_cached = time.perf_counter() - t
    replay_lags = lags[replay_from:]
    await store.close()
    stop.set()
    await tick

    size = sum(os.path.getsize(p) for p in (path, path + ".wal") if os.path.exists(p))
    ms = 1000.0
    print(f"rows put              {rows:,} of ~{body_len + 100} B  (buffered in {t_put:.2f} s)")
    print(f"rows/s written        {rows / t_durable:,.0f}  (first put -> last row durable, "
          f"{t_durable:.2f} s)")
    print(f"flushes               {c.flushes}, slowest {c.max_flush_seconds * ms:.0f} ms "
          f"(checkpoints included); file {size / 1e6:.0f} MB")
    print(f"get latency ms        p50 {_pct(get_lat, 50) * ms:.2f}  p99 {_pct(get_lat, 99) * ms:.1f}"
          f"  max {max(get_lat, default=0) * ms:.1f}  ({len(get_lat):,} gets while writing)")
    print(f"get_many(2000) ms     mean {statistics.mean(many_lat or [0]) * ms:.1f}  "
          f"max {max(many_lat, default=0) * ms:.1f}")
    print(f"loop lag while writing max {max(write_lags) * ms:.1f} ms  p99 "
          f"{_pct(write_lags, 99) * ms:.1f} ms  ({len(write_lags):,} ticks of {TICK * ms:.0f} ms)")
    print(f"fully cached replay   {2 * n:,} dependent gets in {t_cached:.2f} s = "
          f"{2 * n / t_cached:,.0f} lookups/s, {n / t_cached:,.0f} two-step calls/s, "
          f"{c.queries - q0} queries")
    print(f"loop lag in replay    max {max(replay_lags, default=0) * ms:.1f} ms  p99 "
          f"{_pct(replay_lags, 99) * ms:.1f} ms  ({len(replay_lags)} ticks)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=60_000)
    ap.add_argument("--cached-calls", type=int, default=20_000)
    ap.add_argument("--path", default="")
    args = ap.parse_args()
    print(f"cache_key             {bench_cache_key():.2f} us/key (2 KB text + 2 images)")
    with tempfile.TemporaryDirectory() as d:
        path = args.path or os.path.join(d, "perf.duckdb")
        asyncio.run(run(path, args.rows, args.cached_calls))


if __name__ == "__main__":
    main()
