"""Exceptions judgekit raises.

The tree::

    JudgekitError
    ├── SpecError            a run spec or override is invalid (names the file and key)  -> exit 2
    ├── DataError            an input file is malformed (names the file, row and column) -> exit 2
    ├── UsageError           a command's argument is invalid (names it and what is allowed) -> exit 2
    ├── CacheLockedError     another process holds the cache file
    ├── CacheSchemaError     the cache file is newer than this judgekit, or not a cache
    └── ProviderError        a call failed; the subclass says how the engine treats it
        ├── RateLimited      429: retried after ``retry_after`` seconds, concurrency is cut
        ├── TransientError   5xx, timeouts, connection resets: retried with backoff
        │   ├── MalformedReply   a 200 reply of the wrong shape or types (content 42, usage "lots",
        │   │                    negative or absurd token counts, no choices, not JSON)
        │   └── EmptyReply       a reply with no text (null, "", whitespace only, a refusal with
        │                        no content): never a cached answer
        ├── BadRequest       400/422: the item fails with the provider's message, no retry
        ├── AuthError        401/403: the whole run stops (names the alias and env var)
        └── NotFound         404 model or deployment: the whole run stops
"""

from __future__ import annotations

__all__ = [
    "JudgekitError",
    "SpecError",
    "DataError",
    "UsageError",
    "CacheLockedError",
    "CacheSchemaError",
    "ProviderError",
    "RateLimited",
    "TransientError",
    "MalformedReply",
    "EmptyReply",
    "BadRequest",
    "AuthError",
    "NotFound",
    "FATAL_ERRORS",
]


class JudgekitError(Exception):
    """Base of every error judgekit raises on purpose."""


class SpecError(JudgekitError):
    """A run spec is invalid."""


class DataError(JudgekitError):
    """A data file is malformed; the message names the file, row and column."""

    def __init__(self, path: str, message: str, *, row: object = None, column: str | None = None):
        where = str(path)
        if row is not None:
            where += f", row {row}"
        if column:
            where += f", column '{column}'"
        super().__init__(f"{where}: {message}")
        self.path, self.row, self.column = path, row, column


class UsageError(JudgekitError, ValueError):
    """A command's argument is invalid (an unknown table, a prune with no filter)."""


class CacheLockedError(JudgekitError):
    """Another process has the cache open."""


class CacheSchemaError(JudgekitError):
    """The cache file cannot be used by this version of judgekit (too new, or not a cache)."""


class ProviderError(JudgekitError):
    """A provider call failed.  ``kind`` is the stable class name stored in the cache."""

    kind = "error"
    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class RateLimited(ProviderError):
    kind = "rate_limited"
    retryable = True


class TransientError(ProviderError):
    kind = "transient"
    retryable = True


class MalformedReply(TransientError):
    """A reply the provider could not read as an answer: wrong shape, wrong types, impossible
    token counts.  Retried (a gateway's glitch may pass), then a counted failure of the call."""

    kind = "malformed_reply"


class EmptyReply(TransientError):
    """A reply with no text.  An empty answer is never valid for judgekit's benchmarks, so it is
    retried like a transient error, then a counted failure; it is never cached."""

    kind = "empty_reply"


class BadRequest(ProviderError):
    kind = "bad_request"


class AuthError(ProviderError):
    kind = "auth"


class NotFound(ProviderError):
    kind = "not_found"


#: errors that stop the whole run rather than one item
FATAL_ERRORS = (AuthError, NotFound)
