import asyncio
import time

from judgekit.engine.limits import AdaptiveLimit, Bucket, RateBucket


def test_rate_bucket_spaces_requests_after_burst():
    b = RateBucket(600)  # 10/s, burst of 10
    waits = [b.reserve() for _ in range(15)]
    assert waits[:10] == [0.0] * 10
    # the 11th waits ~0.1 s, the 15th ~0.5 s: debt, not polling
    assert 0.08 < waits[10] < 0.12
    assert 0.48 < waits[14] < 0.52


def test_rate_bucket_refund_and_drain():
    b = RateBucket(60_000)  # 1000/s, capacity 1000
    assert b.reserve(900) == 0.0
    b.refund(800)
    assert b.tokens > 800
    b.drain()
    assert b.reserve(1) > 0


async def test_adaptive_limit_cuts_once_per_episode_and_grows_back():
    lim = AdaptiveLimit(10, cooldown_s=60)
    assert lim.on_rate_limited() is True
    assert lim.limit == 8
    assert lim.on_rate_limited() is False  # same episode
    assert lim.limit == 8
    for _ in range(8):
        lim.on_success()
    assert lim.limit == 9
    for _ in range(100):
        lim.on_success()
    assert lim.limit == 10  # never above the ceiling


async def test_adaptive_limit_bounds_in_flight():
    lim = AdaptiveLimit(3)
    peak = 0

    async def job():
        nonlocal peak
        await lim.acquire()
        peak = max(peak, lim.in_flight)
        await asyncio.sleep(0.01)
        lim.release()

    await asyncio.gather(*(job() for _ in range(20)))
    assert peak == 3
    assert lim.in_flight == 0


async def test_cancelled_waiter_does_not_leak_a_slot():
    lim = AdaptiveLimit(1)
    await lim.acquire()
    t = asyncio.ensure_future(lim.acquire())
    await asyncio.sleep(0)
    t.cancel()
    await asyncio.gather(t, return_exceptions=True)
    lim.release()
    assert lim.in_flight == 0
    await asyncio.wait_for(lim.acquire(), 1)


async def test_bucket_pause_on_429_and_consecutive_failures():
    b = Bucket(name="b", max_concurrency=4, max_consecutive_failures=3)
    b.on_rate_limited(0.2)
    assert b.state().paused_for_s > 0.1
    assert "429" in b.state().reason
    t0 = time.monotonic()
    await b.acquire()
    b.release()
    assert time.monotonic() - t0 >= 0.15
    for _ in range(3):
        b.on_failure("HTTP 503")
    assert "3 failures in a row" in b.state().reason


def test_bucket_reads_remaining_zero():
    b = Bucket(name="b", max_concurrency=4)
    b.on_success(remaining={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"})
    assert 0 < b.state().paused_for_s <= 2.0
