"""Engine overhead and warm rerun.

1. Overhead: calls/s of judgekit's engine (cold cache, DuckDB writes, limits, stats) against a
   zero-latency simulator at concurrency 64, divided by calls/s of the bare openai SDK (same
   aiohttp transport, same server, same concurrency), measured alternately in one run.
   Target >= 0.9.
2. Warm rerun: the same engine over a fully cached run of 20,000 calls, calls/s.  Target >= 10,000.
Also prints the longest event-loop stall seen while the cache was writing (target < 100 ms).

    .venv/bin/python perf/engine_overhead.py [--calls 4000] [--rounds 2] [--warm 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import LoopLag, requests, run_window, spec_for, start_sim  # noqa: E402

from judgekit.cache.store import CacheStore  # noqa: E402
from judgekit.engine import Engine  # noqa: E402


async def bare_sdk(base_url: str, n: int, concurrency: int, offset: int) -> float:
    import openai
    from openai import DefaultAioHttpClient

    client = openai.AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0, http_client=DefaultAioHttpClient())
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            r = await client.chat.completions.create(
                model="perf-model", messages=[{"role": "user", "content": f"Describe item {i} in one sentence."}],
                temperature=0, max_tokens=32)
            assert r.choices[0].message.content

    await asyncio.gather(*(one(i) for i in range(offset, offset + 64)))  # warm the connections
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(offset + 64, offset + 64 + n)))
    dt = time.perf_counter() - t0
    await client.close()
    return n / dt


async def engine_run(sim, cache_path: Path, n: int, concurrency: int, offset: int,
                     writes: bool = True) -> tuple[float, tuple[float, float]]:
    cache = await CacheStore.open(cache_path, run_id=f"perf-{offset}")
    if not writes:  # diagnostic: the same run with nothing written, to see what the cache adds
        cache.put = lambda *a, **k: None
    engine = Engine({"m": spec_for(sim, concurrency=concurrency)}, cache)
    await engine.start()
    await asyncio.gather(*(engine.call(r) for r in requests(64, offset=offset)))  # warm the connections
    reqs = requests(n, offset=offset + 64)
    with LoopLag() as lag:
        t0 = time.perf_counter()
        results = await run_window(engine, reqs)
        dt = time.perf_counter() - t0
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert engine.stats.stage("candidate").cache_hits == 0
    await engine.close()
    await cache.close()
    return n / dt, (lag.max_lag, lag.p99)


async def warm_rerun(sim, cache_path: Path, n: int) -> tuple[float, float]:
    cache = await CacheStore.open(cache_path, run_id="perf-fill")
    engine = Engine({"m": spec_for(sim, concurrency=64)}, cache)
    await engine.start()
    reqs = requests(n, offset=10_000_000)
    results = await run_window(engine, reqs)
    assert all(r.ok for r in results)
    await engine.close()
    await cache.close()

    served_before = sim.stats()["served"]
    cache = await CacheStore.open(cache_path, run_id="perf-warm")
    engine = Engine({"m": spec_for(sim, concurrency=64)}, cache)
    await engine.start()
    reqs = requests(n, offset=10_000_000)
    with LoopLag() as lag:
        t0 = time.perf_counter()
        results = await run_window(engine, reqs)
        dt = time.perf_counter() - t0
    assert all(r.ok and r.response.cached for r in results)
    assert sim.stats()["served"] == served_before, "a warm rerun must not call the server"
    await engine.close()
    await cache.close()
    return n / dt, (lag.max_lag, lag.p99)


async def main(args) -> None:
    import gc

    import openai  # noqa: F401  (imports done before freezing, as judgekit run does)

    sim = start_sim(seed=1)
    gc.collect()
    gc.freeze()  # what `judgekit run` does once the run is set up
    try:
        with tempfile.TemporaryDirectory() as tmp:
            bare, eng, lags = [], [], []
            for k in range(args.rounds):
                off = k * 1_000_000
                bare.append(await bare_sdk(sim.base_url, args.calls, 64, off))
                rate, lag = await engine_run(sim, Path(tmp) / f"c{k}.duckdb", args.calls, 64, off + 500_000)
                eng.append(rate)
                lags.append(lag)
            import statistics

            ratios = [e / b for b, e in zip(bare, eng)]
            print(f"bare openai SDK (aiohttp), c=64: {', '.join(f'{x:,.0f}' for x in bare)} calls/s")
            print(f"judgekit engine, cold cache, c=64: {', '.join(f'{x:,.0f}' for x in eng)} calls/s")
            print(f"engine/bare per round: {', '.join(f'{r:.3f}' for r in ratios)}; "
                  f"median {statistics.median(ratios):.3f}; best/best {max(eng) / max(bare):.3f}   (target >= 0.9)")
            print(f"event-loop stalls during cold runs (cache writing): max {max(m for m, _ in lags) * 1000:.1f} ms, "
                  f"p99 {max(p for _, p in lags) * 1000:.1f} ms   (target: none over 100 ms)")
            rounds_off = []
            for k in range(args.rounds):
                _, lag = await engine_run(sim, Path(tmp) / f"n{k}.duckdb", args.calls, 64, 3_000_000 + k * 10_000,
                                          writes=False)
                rounds_off.append(lag)
            print(f"the same runs with cache writes switched off: stalls max "
                  f"{max(m for m, _ in rounds_off) * 1000:.1f} ms, p99 {max(p for _, p in rounds_off) * 1000:.1f} ms "
                  f"(what the HTTP client and the 2-core contention with the simulator cost by themselves)")
            if args.warm:
                rate, lag = await warm_rerun(sim, Path(tmp) / "warm.duckdb", args.warm)
                print(f"warm rerun, {args.warm:,} cached calls: {rate:,.0f} calls/s   (target >= 10,000); "
                      f"stalls max {lag[0] * 1000:.1f} ms, p99 {lag[1] * 1000:.1f} ms")
    finally:
        sim.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--warm", type=int, default=20_000)
    asyncio.run(main(ap.parse_args()))
