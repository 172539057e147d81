"""Retry policy: which errors are retried, and how long to wait.

- 429: wait what the server said (``retry-after-ms``, ``Retry-After``, ``x-ratelimit-reset-*``),
  plus a little jitter so a crowd of waiting calls does not return in one instant; when the
  server said nothing, exponential backoff.
- transient (5xx, timeouts, connection errors): exponential backoff with full jitter, via
  tenacity's ``wait_exponential_jitter``.
- bad request, auth, not found: never retried.

Attempts are bounded (``Limits.max_attempts``).  The first attempt runs outside tenacity so a call
that succeeds at once pays nothing for the retry machinery (it is on the hot path).
"""

from __future__ import annotations

import random

from tenacity import RetryCallState, wait_exponential_jitter

from ..errors import ProviderError, RateLimited

__all__ = ["is_retryable", "RetryWait"]


def is_retryable(err: BaseException) -> bool:
    return isinstance(err, ProviderError) and err.retryable


class RetryWait:
    """tenacity wait strategy; also callable directly as ``wait_for(err, attempt)``."""

    def __init__(self, *, initial: float = 1.0, maximum: float = 60.0, jitter: float = 1.0) -> None:
        self._exp = wait_exponential_jitter(initial=initial, max=maximum, jitter=jitter)
        self.maximum = maximum

    def wait_for(self, err: BaseException | None, attempt: int) -> float:
        if isinstance(err, ProviderError) and err.retry_after is not None:
            return err.retry_after + random.uniform(0.0, min(0.5, 0.1 + 0.1 * err.retry_after))
        state = RetryCallState.__new__(RetryCallState)
        state.attempt_number = attempt
        backoff = self._exp(state)
        if isinstance(err, RateLimited):  # a 429 without any hint: back off a little harder
            backoff = min(self.maximum, backoff * 2)
        return backoff

    def __call__(self, retry_state: RetryCallState) -> float:
        err = retry_state.outcome.exception() if retry_state.outcome else None
        # the first attempt ran outside tenacity: tenacity's attempt 1 is the call's attempt 2
        return self.wait_for(err, retry_state.attempt_number + 1)
