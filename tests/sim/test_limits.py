"""Unit tests of the simulator's rate limiter."""

from __future__ import annotations

import pytest

from judgekit.sim.limits import RateLimiter, format_duration


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "0s"), (0.006, "6ms"), (0.0004, "1ms"), (0.25, "250ms"), (1.5, "1.5s"), (17.2861, "17.286s"),
     (60, "1m0s"), (61.5, "1m1.5s"), (3725, "1h2m5s")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_request_bucket_capacity_refill_and_retry_after():
    clock = Clock()
    lim = RateLimiter(rpm=120, tpm=None, burst_s=2.0, clock=clock)  # 2/s, capacity 4
    results = [lim.check("m", 10).allowed for _ in range(5)]
    assert results == [True, True, True, True, False]
    d = lim.check("m", 10)
    assert not d.allowed and d.limited_by == "requests"
    assert d.retry_after_s == pytest.approx(0.5)
    assert d.headers["x-ratelimit-remaining-requests"] == "0"
    assert d.headers["x-ratelimit-reset-requests"] == "2s"
    clock.t += 0.5
    ok = lim.check("m", 10)
    assert ok.allowed and ok.headers["x-ratelimit-remaining-requests"] == "0"
    assert lim.check("other", 10).allowed  # per model
    clock.t += 100
    assert lim.check("m", 10).headers["x-ratelimit-remaining-requests"] == "3"  # refilled to 4, minus 1


def test_min_capacity_one_request():
    clock = Clock()
    lim = RateLimiter(rpm=6, tpm=None, burst_s=1.0, clock=clock)  # 0.1/s: capacity would be 0.1
    assert lim.check("m", 1).allowed
    d = lim.check("m", 1)
    assert not d.allowed and d.retry_after_s == pytest.approx(10.0)


def test_token_bucket_debt_for_large_requests():
    clock = Clock()
    lim = RateLimiter(rpm=None, tpm=600, burst_s=1.0, clock=clock)  # 10 tokens/s, capacity 10
    assert lim.check("m", 50).allowed  # larger than the bucket: admitted when full, goes into debt
    d = lim.check("m", 5)
    assert not d.allowed and d.limited_by == "tokens"
    assert d.retry_after_s == pytest.approx((5 + 40) / 10)
    assert d.headers["x-ratelimit-remaining-tokens"] == "0"
    assert "x-ratelimit-limit-requests" not in d.headers
    clock.t += 4.5
    assert lim.check("m", 5).allowed


def test_refused_request_charges_nothing():
    clock = Clock()
    lim = RateLimiter(rpm=120, tpm=6000, burst_s=1.0, clock=clock)  # 2 requests, 100 tokens
    assert lim.check("m", 60).allowed  # 1 request and 40 tokens left
    refused = lim.check("m", 50)
    assert not refused.allowed and refused.limited_by == "tokens"
    d = lim.check("m", 40)  # the refused request took neither a request nor tokens
    assert d.allowed
    assert d.headers["x-ratelimit-remaining-tokens"] == "0"
    assert d.headers["x-ratelimit-remaining-requests"] == "0"


def test_no_limits_no_headers():
    lim = RateLimiter(None, None)
    d = lim.check("m", 10**9)
    assert d.allowed and d.headers == {}
