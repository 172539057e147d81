"""Per-bucket limits: adaptive concurrency, requests/min and tokens/min, and pauses.

A bucket is one (provider, model, base URL).  Calls take a concurrency slot, then reserve one
request and their token count from the rate buckets, then go out.

Why not asyncio-throttle (the design card's pick): its ``Throttler`` counts requests only (no
weighted acquisition, so no tokens/min), polls with short sleeps while waiting (CPU at high
concurrency), and cannot be re-timed from a provider's ``Retry-After``.  The rate buckets here
are token buckets that may go into debt: a reservation returns at once with the exact time the
caller must wait, so each waiting call sleeps once and calls are released in arrival order.

Pauses: a 429 pauses its bucket for what the server asked, a server's ``remaining = 0`` for the
reset of that limit, a streak of transient failures for 15 s doubling to 300 s; pauses from the
server's word are bounded by :data:`~judgekit.engine.retry.MAX_SERVER_WAIT_S`.  Every sleep here
(pause, rate wait) ends early when the run stops (:meth:`Bucket.stop`), so a stopping run never
sits out a pause.

Burst: OpenAI enforces per-minute limits over shorter windows ("60,000 requests/minute may be
enforced as 1,000 requests/second"), so a bucket holds one second's worth of its rate.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

from ..plural import plural
from .retry import MAX_SERVER_WAIT_S

__all__ = ["RateBucket", "AdaptiveLimit", "Bucket", "BucketState", "sleep_unless"]


async def sleep_unless(stop: asyncio.Event | None, seconds: float) -> bool:
    """Sleep ``seconds``, or less when ``stop`` is set; True when it was (the caller gives up)."""
    if stop is None:
        if seconds > 0:
            await asyncio.sleep(seconds)
        return False
    if stop.is_set():
        return True
    if seconds <= 0:
        return False
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        return False
    return True


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
    #: why the bucket waits, in words, with the seconds left of a pause
    #: ("paused 42 s: 429 rate limit (requests/min)"; "3 calls in backoff after HTTP 503"); "" when it does not
    reason: str
    #: what paused the bucket ("" when it is not paused)
    pause_reason: str = ""
    #: calls sleeping before a retry, and the error the latest of them waits after
    backing_off: int = 0
    backoff_reason: str = ""


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
    #: calls of this bucket sleeping before a retry (kept by the engine), and why the latest did
    backing_off: int = 0
    backoff_reason: str = ""
    #: the longest a pause taken on the server's word lasts (429, remaining = 0)
    max_pause_s: float = MAX_SERVER_WAIT_S
    #: set when the run stops: every sleep of the bucket ends at once (the engine shares one
    #: among its buckets; a bucket made without one has its own, set by :meth:`stop`)
    stop_event: asyncio.Event = field(default_factory=asyncio.Event)

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
                    stopped = await sleep_unless(self.stop_event, wait)
                finally:
                    self.waiting_rate -= 1
                if not stopped:
                    await self._wait_pause()
        except BaseException:
            self.concurrency.release()
            raise

    async def _wait_pause(self) -> None:
        """Until the pause ends (it may be extended meanwhile) or the run stops."""
        while True:
            left = self.paused_until - time.monotonic()
            if left <= 0 or await sleep_unless(self.stop_event, left):
                return

    def stop(self) -> None:
        """The run is stopping: wake every sleeper (the caller checks the run's state after)."""
        self.stop_event.set()

    def release(self) -> None:
        self.concurrency.release()

    def pause(self, seconds: float, reason: str) -> None:
        """No call of the bucket goes out for ``seconds`` (a longer pause already running wins)."""
        if not seconds > 0:  # also NaN
            return
        until = time.monotonic() + min(seconds, 86_400.0)
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
        """``x-ratelimit-remaining-*`` = 0: the server says nothing is left of that limit, so pause
        until one request fits: for requests with ``x-ratelimit-limit-requests`` given, the time a
        per-minute limit takes to give one back (60 s / limit) or the reset if sooner (a reset
        header is the time until the limit is *fully* reset, ``6m0s`` in OpenAI's guide); else the
        reset; at most :attr:`max_pause_s` either way."""
        from ..providers.base import parse_duration

        for kind in ("requests", "tokens"):
            left = headers.get(f"x-ratelimit-remaining-{kind}")
            if left is None or left.strip() not in ("0", "0.0"):
                continue
            reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}", "")) or 1.0
            try:
                limit = float(headers.get(f"x-ratelimit-limit-{kind}", ""))
            except ValueError:
                limit = 0.0
            if kind == "requests" and limit >= 1:
                # a per-minute limit gives one request back every 60 / limit seconds, whatever the
                # shape of the server's bucket (its reset may be the time to refill a short burst)
                reset = min(reset, 60.0 / limit)
            wait = min(reset, self.max_pause_s)
            self.pause(wait, f"server reports 0 {kind} left")

    def on_rate_limited(self, retry_after: float | None, why: str = "429 rate limit") -> None:
        """A 429: cut the concurrency, and pause for what the server asked (1 s when it said
        nothing), at most :attr:`max_pause_s`."""
        self.concurrency.on_rate_limited()
        wait = retry_after if retry_after is not None and retry_after >= 0 else 1.0
        self.pause(min(wait, self.max_pause_s), why)
        if self.rpm is not None:
            self.rpm.drain()

    def on_failure(self, message: str) -> None:
        """A transient failure.  Too many in a row pause the bucket, longer each time."""
        self.consecutive_failures += 1
        if self.consecutive_failures >= self.max_consecutive_failures:
            self.pauses += 1
            seconds = min(300.0, 15.0 * 2 ** (self.pauses - 1))
            self.pause(seconds, f"{plural(self.consecutive_failures, 'failure')} in a row ({message[:80]})")
            self.consecutive_failures = 0

    def state(self) -> BucketState:
        c = self.concurrency
        left = max(0.0, self.paused_until - time.monotonic())
        paused = self.pause_reason if left > 0 else ""
        if paused:
            reason = f"paused {_seconds(left)}: {paused}"
        elif self.waiting_rate:
            reason = "rate limit (RPM/TPM)"
        else:
            reason = ""
        if self.backing_off:
            calls = "1 call" if self.backing_off == 1 else f"{self.backing_off} calls"
            after = "" if self.backoff_reason == paused else f" after {self.backoff_reason}"
            reason = (reason + "; " if reason else "") + f"{calls} in backoff{after}"
        return BucketState(
            name=self.name,
            limit=c.limit,
            ceiling=c.ceiling,
            in_flight=c.in_flight,
            waiting_slot=c.waiting,
            waiting_rate=self.waiting_rate,
            paused_for_s=left,
            reason=reason,
            pause_reason=paused,
            backing_off=self.backing_off,
            backoff_reason=self.backoff_reason if self.backing_off else "",
        )


def _seconds(s: float) -> str:
    """A wait for a person: ``0.4 s``, ``42 s``, ``2 min 5 s``."""
    if s < 1:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    m, rest = divmod(round(s), 60)
    return f"{m} min {rest} s" if rest else f"{m} min"
