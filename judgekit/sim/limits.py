"""Server-side rate limits of the simulator: continuously refilled token buckets per model.

Each model name gets a request bucket (``rpm``) and a token bucket (``tpm``).  A bucket holds
at most ``rate_per_minute * burst_s / 60`` units (never less than one) and refills at
``rate_per_minute / 60`` units per second.  A request is admitted only when every configured
bucket can cover it, and then both are charged; a refused request charges nothing.

A request costing more tokens than the token bucket can ever hold (say ``max_tokens=4096``
with ``tpm=60000`` and a one-second burst) is admitted once the bucket is full and drives it
into debt, so the long-run rate is still ``tpm`` and no request is refused forever.

The headers follow OpenAI's: ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``, the
reset being a Go-style duration (``"6ms"``, ``"1.5s"``, ``"1m0s"``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["TokenBucket", "RateDecision", "RateLimiter", "format_duration"]


def format_duration(seconds: float) -> str:
    """Write ``seconds`` the way OpenAI's ``x-ratelimit-reset-*`` headers do.

    ``0.006 -> "6ms"``, ``1.5 -> "1.5s"``, ``60 -> "1m0s"``, ``3725 -> "1h2m5s"``.
    Sub-second values are rounded up to whole milliseconds; seconds keep up to 3 decimals.
    """
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        return f"{max(1, math.ceil(seconds * 1000 - 1e-9))}ms"
    seconds = round(seconds, 3)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    sec_text = f"{secs:.3f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{int(hours)}h{int(minutes)}m{sec_text}"
    if minutes:
        return f"{int(minutes)}m{sec_text}"
    return sec_text


class TokenBucket:
    """A bucket of ``capacity`` units refilled at ``rate`` units per second.

    ``level`` may go negative (debt) after a charge larger than the capacity.
    """

    __slots__ = ("per_minute", "rate", "capacity", "level", "stamp")

    def __init__(self, per_minute: float, burst_s: float, now: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        """Add what accrued since the last refill, up to the capacity."""
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait_for(self, cost: float) -> float:
        """Seconds until ``cost`` can be admitted (0.0 when it can be now).  Refill first."""
        need = min(cost, self.capacity)
        if self.level >= need:
            return 0.0
        return (need - self.level) / self.rate

    def charge(self, cost: float) -> None:
        """Take ``cost`` units (the level may go below zero)."""
        self.level -= cost

    def remaining(self) -> int:
        """Whole units left now."""
        return max(0, int(self.level))

    def reset_in(self) -> float:
        """Seconds until the bucket is full again."""
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass(slots=True)
class RateDecision:
    """What the limiter says about one request.

    ``retry_after_s`` is 0 when admitted; ``limited_by`` is ``"requests"`` or ``"tokens"``
    when refused.  ``headers`` carries the ``x-ratelimit-*`` set (empty when no limit is set),
    ``reset_s`` the seconds until each configured bucket (``requests``, ``tokens``) is full.
    """

    allowed: bool
    retry_after_s: float = 0.0
    limited_by: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    reset_s: dict[str, float] = field(default_factory=dict)


_ALLOWED_NO_LIMITS = RateDecision(True)


class RateLimiter:
    """Per-model request and token buckets.

    ``clock`` returns seconds (monotonic); tests pass a fake one.
    """

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        burst_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self.burst_s = burst_s
        self.clock = clock
        self.enabled = bool(rpm or tpm)
        self._buckets: dict[str, tuple[TokenBucket | None, TokenBucket | None]] = {}

    def reset(self) -> None:
        """Forget every bucket: each model starts full again."""
        self._buckets.clear()

    def _pair(self, model: str, now: float) -> tuple[TokenBucket | None, TokenBucket | None]:
        pair = self._buckets.get(model)
        if pair is None:
            pair = (
                TokenBucket(self.rpm, self.burst_s, now) if self.rpm else None,
                TokenBucket(self.tpm, self.burst_s, now) if self.tpm else None,
            )
            self._buckets[model] = pair
        return pair

    def check(self, model: str, tokens: int) -> RateDecision:
        """Admit (and charge) or refuse one request of ``tokens`` estimated tokens."""
        if not self.enabled:
            return _ALLOWED_NO_LIMITS
        now = self.clock()
        req_b, tok_b = self._pair(model, now)
        wait_r = wait_t = 0.0
        if req_b is not None:
            req_b.refill(now)
            wait_r = req_b.wait_for(1)
        if tok_b is not None:
            tok_b.refill(now)
            wait_t = tok_b.wait_for(tokens)
        wait = max(wait_r, wait_t)
        if wait <= 0:
            if req_b is not None:
                req_b.charge(1)
            if tok_b is not None:
                tok_b.charge(tokens)
            return RateDecision(True, headers=self._headers(req_b, tok_b), reset_s=self._resets(req_b, tok_b))
        limited_by = "requests" if wait_r >= wait_t else "tokens"
        return RateDecision(False, wait, limited_by, self._headers(req_b, tok_b), self._resets(req_b, tok_b))

    @staticmethod
    def _resets(req_b: TokenBucket | None, tok_b: TokenBucket | None) -> dict[str, float]:
        r: dict[str, float] = {}
        if req_b is not None:
            r["requests"] = req_b.reset_in()
        if tok_b is not None:
            r["tokens"] = tok_b.reset_in()
        return r

    @staticmethod
    def _headers(req_b: TokenBucket | None, tok_b: TokenBucket | None) -> dict[str, str]:
        h: dict[str, str] = {}
        if req_b is not None:
            h["x-ratelimit-limit-requests"] = str(int(req_b.per_minute))
            h["x-ratelimit-remaining-requests"] = str(req_b.remaining())
            h["x-ratelimit-reset-requests"] = format_duration(req_b.reset_in())
        if tok_b is not None:
            h["x-ratelimit-limit-tokens"] = str(int(tok_b.per_minute))
            h["x-ratelimit-remaining-tokens"] = str(tok_b.remaining())
            h["x-ratelimit-reset-tokens"] = format_duration(tok_b.reset_in())
        return h
