"""Rate-limit use: the simulator enforces 600 requests/min (429 + Retry-After beyond it); judgekit
is configured with the same limit.  Prints achieved requests/min over 60 s as a share of 600,
the 429s it met, and failed items (target: >= 95 % with no failed item).

    .venv/bin/python perf/rate_limit.py [--rpm 600] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import requests, spec_for, start_sim  # noqa: E402

from judgekit.cache.store import CacheStore  # noqa: E402
from judgekit.engine import Engine  # noqa: E402


async def main(args) -> None:
    sim = start_sim(seed=3, rpm=args.rpm, latency_ms=20, latency_jitter_ms=10)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache = await CacheStore.open(Path(tmp) / "c.duckdb", run_id="rate")
            spec = spec_for(sim, concurrency=64, rpm=args.rpm, max_attempts=10)
            engine = Engine({"m": spec}, cache)
            await engine.start()
            n = int(args.rpm * args.seconds / 60 * 1.25) + 50  # more work than the window can take
            done_at: list[float] = []
            failed = 0

            async def one(r):
                nonlocal failed
                res = await engine.call(r)
                if res.ok:
                    done_at.append(time.monotonic())
                else:
                    failed += 1

            t0 = time.monotonic()
            tasks = [asyncio.ensure_future(one(r)) for r in requests(n)]
            await asyncio.sleep(args.seconds)
            in_window = sum(1 for t in done_at if t - t0 <= args.seconds)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            st = engine.stats.stage("candidate")
            per_min = in_window * 60 / args.seconds
            print(f"limit {args.rpm} req/min, {args.seconds:.0f} s window: {in_window} completed = "
                  f"{per_min:.0f} req/min = {per_min / args.rpm:.1%} of the limit   (target >= 95 %)")
            print(f"429s met: {st.rate_limited}, retries: {st.retries}, failed items: {failed}   (target: 0 failed)")
            await engine.close()
            await cache.close()
    finally:
        sim.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rpm", type=int, default=600)
    ap.add_argument("--seconds", type=float, default=60)
    asyncio.run(main(ap.parse_args()))
