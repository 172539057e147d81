"""Per-bucket limits: adaptive concurrency, requests/min and tokens/min, and pauses.

A bucket is one (provider, model, base URL).  Calls take a concurrency slot, then reserve one
request and their token count from the rate buckets, then go out.

Why not asyncio-throttle (the design card's pick): its ``Throttler`` counts requests only (no
weighted acquisition, so no tokens/min), polls with short sleeps while waiting (CPU at high
concurrency), and cannot be re-timed from a provider's ``Retry-After``.  The rate buckets here
are token buckets that may go into debt: a reservation returns at once with the exact time the
caller must wait, so each waiting call sleeps once and calls are released in arrival order.

Burst: OpenAI enforces per-minute limits over shorter windows ("60,000 requests/minute may be
enforced as 1,000 requests/second"), so a bucket holds one second's worth of its rate.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

__all__ = ["RateBucket", "AdaptiveLimit", "Bucket", "BucketState"]


class RateBucket:
    """A token bucket refilled continuously at ``per_minute / 60`` per second."""

    __slots__ = ("rate", "capacity", "tokens", "stamp")

    def __init__(self, per_minute: float, *, burst_s: float = 1.0) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.tokens = self.capacity
        self.stamp = time.monotonic()

    def reserve(self, cost: float = 1.0) -> float:
        """Take ``cost`` tokens now (possibly into debt); return seconds to wait before sending."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        # a single request larger than the whole bucket must still be able to go
        self.tokens -= min(cost, self.capacity)
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def refund(self, amount: float) -> None:
        """Give back tokens reserved but not used (reconciling an estimate with real usage)."""
        self.tokens = min(self.capacity, self.tokens + amount)

    def drain(self) -> None:
        """The server says nothing is left: empty the bucket (used on 429 / remaining = 0)."""
        self.tokens = min(self.tokens, 0.0)
        self.stamp = time.monotonic()


class AdaptiveLimit:
    """A concurrency limit that is cut on 429 episodes and grows back slowly.

    Cut: x0.8 at most once per ``cooldown_s`` (one episode of 429s is one cut, not one per
    failed call).  Growth: +1 after ``limit`` consecutive successes, so it takes a full window
    of clean calls to earn each extra slot, up to the configured ceiling.
    """

    __slots__ = ("ceiling", "limit", "in_flight", "_waiters", "_ok_streak", "_last_cut", "cooldown_s")

    def __init__(self, ceiling: int, *, cooldown_s: float = 2.0) -> None:
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.in_flight = 0
        self._waiters: deque[asyncio.Future] = deque()
        self._ok_streak = 0
        self._last_cut = -1e9
        self.cooldown_s = cooldown_s

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        if self.in_flight < int(self.limit) and not self._waiters:
            self.in_flight += 1
            return
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot was handed over as we were cancelled: pass it on
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < int(self.limit):
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def on_success(self) -> None:
        if self.limit >= self.ceiling:
            return
        self._ok_streak += 1
        if self._ok_streak >= max(1, int(self.limit)):
            self._ok_streak = 0
            self.limit = min(float(self.ceiling), self.limit + 1.0)
            self._wake()

    def on_rate_limited(self) -> bool:
        """Cut the limit (once per episode).  Returns True if it was cut."""
        now = time.monotonic()
        self._ok_streak = 0
        if now - self._last_cut < self.cooldown_s:
            return False
        self._last_cut = now
        self.limit = max(1.0, self.limit * 0.8)
        return True


@dataclass
class BucketState:
    """What the live display shows for a bucket."""

    name: str
    limit: float
    ceiling: int
    in_flight: int
    waiting_slot: int
    waiting_rate: int
    paused_for_s: float
    reason: str


@dataclass
class Bucket:
    """Limits shared by every alias that points at the same provider, model and base URL."""

    name: str
    max_concurrency: int
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_consecutive_failures: int = 20
    concurrency: AdaptiveLimit = field(init=False)
    rpm: RateBucket | None = field(init=False, default=None)
    tpm: RateBucket | None = field(init=False, default=None)
    paused_until: float = 0.0
    pause_reason: str = ""
    consecutive_failures: int = 0
    pauses: int = 0
    waiting_rate: int = 0

    def __post_init__(self) -> None:
        self.concurrency = AdaptiveLimit(self.max_concurrency)
        if self.requests_per_minute:
            self.rpm = RateBucket(self.requests_per_minute)
        if self.tokens_per_minute:
            self.tpm = RateBucket(self.tokens_per_minute)

    @property
    def counts_tokens(self) -> bool:
        return self.tpm is not None

    async def acquire(self, tokens: int = 0) -> None:
        """Wait for a slot, a pause to end, and the request's share of RPM/TPM."""
        await self.concurrency.acquire()
        try:
            await self._wait_pause()
            wait = 0.0
            if self.rpm is not None:
                wait = self.rpm.reserve(1.0)
            if self.tpm is not None and tokens:
                wait = max(wait, self.tpm.reserve(float(tokens)))
            if wait > 0:
                self.waiting_rate += 1
                try:
                    await asyncio.sleep(wait)
                finally:
                    self.waiting_rate -= 1
                await self._wait_pause()
        except BaseException:
            self.concurrency.release()
            raise

    async def _wait_pause(self) -> None:
        while True:
            left = self.paused_until - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(left)

    def release(self) -> None:
        self.concurrency.release()

    def pause(self, seconds: float, reason: str) -> None:
        until = time.monotonic() + seconds
        if until > self.paused_until:
            self.paused_until = until
            self.pause_reason = reason

    def on_success(self, *, reserved_tokens: int = 0, used_tokens: int = 0, remaining: dict | None = None) -> None:
        self.consecutive_failures = 0
        self.concurrency.on_success()
        if self.tpm is not None and reserved_tokens > used_tokens:
            self.tpm.refund(reserved_tokens - used_tokens)
        if remaining:
            self._read_remaining(remaining)

    def _read_remaining(self, headers: dict) -> None:
        """x-ratelimit-remaining-*: when the server says nothing is left, wait for its reset."""
        from ..providers.base import parse_duration

        for kind in ("requests", "tokens"):
            left = headers.get(f"x-ratelimit-remaining-{kind}")
            if left is not None and left.strip() in ("0", "0.0"):
                reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}", "")) or 1.0
                self.pause(reset, f"server reports 0 {kind} left; reset in {reset:.1f}s")

    def on_rate_limited(self, retry_after: float | None) -> None:
        self.concurrency.on_rate_limited()
        wait = retry_after if retry_after is not None else 1.0
        self.pause(wait, f"429 rate limited; retry after {wait:.1f}s")
        if self.rpm is not None:
            self.rpm.drain()

    def on_failure(self, message: str) -> None:
        """A transient failure.  Too many in a row pause the bucket, longer each time."""
        self.consecutive_failures += 1
        if self.consecutive_failures >= self.max_consecutive_failures:
            self.pauses += 1
            seconds = min(300.0, 15.0 * 2 ** (self.pauses - 1))
            self.pause(seconds, f"{self.consecutive_failures} failures in a row ({message[:80]}); paused {seconds:.0f}s")
            self.consecutive_failures = 0

    def state(self) -> BucketState:
        c = self.concurrency
        left = max(0.0, self.paused_until - time.monotonic())
        return BucketState(
            name=self.name,
            limit=c.limit,
            ceiling=c.ceiling,
            in_flight=c.in_flight,
            waiting_slot=c.waiting,
            waiting_rate=self.waiting_rate,
            paused_for_s=left,
            reason=self.pause_reason if left > 0 else ("rate limit (RPM/TPM)" if self.waiting_rate else ""),
        )
