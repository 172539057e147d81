"""Retry policy: which errors are retried, and how long to wait.

- 429: wait what the server said (``retry-after-ms``, ``Retry-After``, "try again in", the
  ``x-ratelimit-reset-*`` of the limit that was hit: :func:`judgekit.providers.base.retry_after_from_headers`),
  plus a little jitter so a crowd of waiting calls does not return in one instant, never more
  than :data:`MAX_SERVER_WAIT_S`; when the server said nothing, exponential backoff.
- transient (5xx, timeouts, connection errors): exponential backoff with full jitter, via
  tenacity's ``wait_exponential_jitter``.
- bad request, auth, not found: never retried.

Every wait is bounded by :data:`MAX_SERVER_WAIT_S` (a reset header is the time until a limit is
*fully* reset: ``6m0s`` in OpenAI's guide, hours for per-day limits; a ``Retry-After: 3600`` would
hold a call for an hour).  A call that waits the cap and is refused again simply waits again,
until its attempts run out: the wait stays bounded and visible in the progress.

Attempts are bounded (``Limits.max_attempts``).  The first attempt runs outside tenacity so a call
that succeeds at once pays nothing for the retry machinery (it is on the hot path).
"""

from __future__ import annotations

import random
import re

from tenacity import RetryCallState, wait_exponential_jitter

from ..errors import ProviderError, RateLimited

__all__ = ["is_retryable", "RetryWait", "MAX_SERVER_WAIT_S", "wait_reason"]

#: the longest a call or a bucket waits on the server's word, in seconds (the OpenAI SDK's
#: ``_calculate_retry_timeout`` takes a server's ``Retry-After`` only up to 60 s and never waits
#: more than its 8 s backoff otherwise; 120 s leaves per-minute limits room to refill)
MAX_SERVER_WAIT_S = 120.0


def is_retryable(err: BaseException) -> bool:
    return isinstance(err, ProviderError) and err.retryable


class RetryWait:
    """tenacity wait strategy; also callable directly as ``wait_for(err, attempt)``."""

    def __init__(self, *, initial: float = 1.0, maximum: float = 60.0, jitter: float = 1.0,
                 max_server_wait: float = MAX_SERVER_WAIT_S) -> None:
        self._exp = wait_exponential_jitter(initial=initial, max=maximum, jitter=jitter)
        self.maximum = maximum
        self.max_server_wait = max_server_wait

    def wait_for(self, err: BaseException | None, attempt: int) -> float:
        if isinstance(err, ProviderError) and err.retry_after is not None:
            asked = min(max(0.0, err.retry_after), self.max_server_wait)  # max(0.0, NaN) is 0.0
            return min(self.max_server_wait, asked + random.uniform(0.0, min(0.5, 0.1 + 0.1 * asked)))
        state = RetryCallState.__new__(RetryCallState)
        state.attempt_number = attempt
        backoff = self._exp(state)
        if isinstance(err, RateLimited):  # a 429 without any hint: back off a little harder
            backoff = min(self.maximum, backoff * 2)
        return min(backoff, self.max_server_wait)

    def __call__(self, retry_state: RetryCallState) -> float:
        err = retry_state.outcome.exception() if retry_state.outcome else None
        # the first attempt ran outside tenacity: tenacity's attempt 1 is the call's attempt 2
        return self.wait_for(err, retry_state.attempt_number + 1)


def wait_reason(err: BaseException) -> str:
    """Why a call waits after ``err``, in a few words for the progress display: ``429 rate limit
    (requests/min)``, ``HTTP 503``, ``timeout``, ``empty reply``."""
    from ..providers.base import exhausted_limits

    if isinstance(err, RateLimited):
        text = str(err)
        per = "/day" if re.search(r"per ?day", text, re.I) else "/min"
        hit = sorted(exhausted_limits(None, text))
        return "429 rate limit" + (f" ({', '.join(k + per for k in hit)})" if hit else "")
    if isinstance(err, ProviderError):
        if err.status is not None:
            return f"HTTP {err.status}"
        text = str(err).lower()
        for word in ("timeout", "connection error"):
            if text.startswith(word):
                return word
        return err.kind.replace("_", " ")
    return type(err).__name__
