"""Exceptions judgekit raises.

The tree::

    JudgekitError
    ├── SpecError            a run spec or override is invalid (names the file and key)  -> exit 2
    ├── DataError            an input file is malformed (names the file, row and column) -> exit 2
    ├── UsageError           a command's argument is invalid (names it and what is allowed) -> exit 2
    ├── CacheLockedError     another process holds the cache file
    ├── CacheSchemaError     the cache file is newer than this judgekit, or not a cache
    ├── StorageFull          a write failed for want of space (ENOSPC, a quota, a file size limit):
    │   │                    the run stops launching calls, keeps every reply, names the path
    │   └── ReplyNotStored   an image arrived but the image store is full (also a ProviderError:
    │                        that call fails, counted)
    └── ProviderError        a call failed; the subclass says how the engine treats it
        ├── RateLimited      429: retried after ``retry_after`` seconds, concurrency is cut
        ├── QuotaExhausted   429 out of quota or credit (OpenAI insufficient_quota and billing codes,
        │                    Gemini per-day quota or a quota of 0): the whole run stops
        ├── TransientError   5xx, timeouts, connection resets: retried with backoff
        │   ├── MalformedReply   a 200 reply of the wrong shape or types (content 42, usage "lots",
        │   │                    negative or absurd token counts, no choices, not JSON)
        │   └── EmptyReply       a reply with no text (null, "", whitespace only) and no stated
        │                        reason: retried, then counted; never a cached answer
        ├── NoAnswer         a reply the provider says carries no answer, and would not on a retry:
        │   │                the call fails, counted by kind, never cached, not retried
        │   ├── ContentFiltered  OpenAI finish_reason content_filter; Gemini SAFETY, RECITATION,
        │   │                    PROHIBITED_CONTENT, BLOCKLIST, SPII... (any text left is partial)
        │   ├── Refused          OpenAI ``message.refusal`` with no content
        │   ├── Blocked          Gemini: the prompt was blocked (``promptFeedback.blockReason``)
        │   └── NoOutputBudget   the output budget went into reasoning or thinking before any text
        ├── BadRequest       400/422: the item fails with the provider's message, no retry
        │   └── RequestTooLarge  over a provider's documented size limit, refused before sending
        ├── UnsupportedParameter  the model rejects a parameter the run sets (temperature for o3):
        │                    every call would fail alike, so the whole run stops
        ├── AuthError        401/403: the whole run stops (names the alias and env var)
        └── NotFound         404 model or deployment: the whole run stops

``retryable`` is the class's default; a server's ``x-should-retry: false`` makes one instance final.
"""

from __future__ import annotations

import errno
import os

__all__ = [
    "JudgekitError",
    "SpecError",
    "DataError",
    "UsageError",
    "CacheLockedError",
    "CacheSchemaError",
    "StorageFull",
    "ReplyNotStored",
    "storage_problem",
    "ProviderError",
    "RateLimited",
    "QuotaExhausted",
    "NoAnswer",
    "ContentFiltered",
    "Refused",
    "Blocked",
    "NoOutputBudget",
    "RequestTooLarge",
    "UnsupportedParameter",
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


#: errnos of a write that failed for want of room (space, a quota, RLIMIT_FSIZE's EFBIG)
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
#: the same, as DuckDB words them (its I/O errors carry the OS's message, not the errno)
_FULL_TEXTS = tuple(os.strerror(e) for e in sorted(_FULL_ERRNOS)) + ("No space left", "Disk quota", "File too large")


def storage_problem(exc: BaseException) -> str | None:
    """What a failed write says when the device has no room for it (``No space left on device``,
    ``Disk quota exceeded``, ``File too large``), from an OSError or a DuckDB error, or from the
    error it was raised while handling (a ROLLBACK refused after a failed COMMIT); None for any
    other failure."""
    seen = 0
    while exc is not None and seen < 8:
        why = _full_why(exc)
        if why is not None:
            return why
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def _full_why(exc: BaseException) -> str | None:
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
        return os.strerror(exc.errno)
    if isinstance(exc, OSError):
        return None
    text = str(exc)
    for t in _FULL_TEXTS:
        if t in text:
            return next((os.strerror(e) for e in _FULL_ERRNOS if os.strerror(e).startswith(t)), t)
    return None


class StorageFull(JudgekitError):
    """A write failed because its device is full (or a quota or file-size limit is reached).
    ``path`` is what could not be written, ``why`` the system's words.  The run stops launching
    calls; the replies that arrived are kept (in the cache's write-ahead log, or in memory until
    they can be written)."""

    def __init__(self, path: str, why: str, note: str = ""):
        super().__init__(f"{path}: {why.rstrip('.').lower()} (the disk is full){note}")
        self.path, self.why = str(path), why


#: the longest excerpt of a reply an error keeps (:attr:`ProviderError.raw`)
RAW_EXCERPT_CHARS = 1000


class ProviderError(JudgekitError):
    """A provider call failed.  ``kind`` is the stable class name stored in the cache.

    ``raw`` is an excerpt of what the server sent (a reply that carries no answer is kept with
    its failure: :meth:`record_text`); ``usage`` the tokens such a reply says it was billed
    (a :class:`judgekit.types.Usage`, or None when the server sent no reply)."""

    kind = "error"
    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None,
                 raw: str | None = None, usage: object = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.raw = raw[:RAW_EXCERPT_CHARS] if isinstance(raw, str) else None
        self.usage = usage

    def record_text(self) -> str:
        """The message as the cache's ``attempts`` table keeps it: with the raw reply, if any."""
        text = str(self)
        return f"{text} | reply: {self.raw}" if self.raw else text


class ReplyNotStored(StorageFull, ProviderError):
    """A provider's reply (an image) arrived but its store's disk is full: that call fails, counted
    (the next run asks it again), and the run stops launching calls; the calls in flight land."""

    kind = "storage_full"


class RateLimited(ProviderError):
    kind = "rate_limited"
    retryable = True


class QuotaExhausted(ProviderError):
    """A 429 that no wait cures: the account is out of quota or credit (OpenAI
    ``insufficient_quota``, ``credit_balance_exhausted``, ``*_spend_limit_exceeded``...), or a
    Gemini per-day or free-tier quota is spent.  Stops the run (``reason`` is the provider's code
    or quota metric, ``resets`` says when a per-day quota comes back, if known)."""

    kind = "quota"

    def __init__(self, message: str, *, reason: str = "", resets: str = "", **kw):
        super().__init__(message, **kw)
        self.reason = reason
        self.resets = resets


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


class NoAnswer(ProviderError):
    """The provider answered, and said why there is no answer (a filter, a refusal, a blocked
    prompt, a budget spent on reasoning).  The same request would get the same reply, so it is
    not retried; it is a counted failure of the call, never a cached answer, and a rerun asks
    again."""

    kind = "no_answer"


class ContentFiltered(NoAnswer):
    """The provider's content filter withheld the answer (OpenAI/Azure ``content_filter``;
    Gemini ``SAFETY``, ``RECITATION``, ``PROHIBITED_CONTENT``, ``BLOCKLIST``, ``SPII``...)."""

    kind = "filtered"


class Refused(NoAnswer):
    """The model refused (OpenAI ``message.refusal`` with no content)."""

    kind = "refused"


class Blocked(NoAnswer):
    """The prompt itself was blocked before any answer (Gemini ``promptFeedback.blockReason``)."""

    kind = "blocked"


class NoOutputBudget(NoAnswer):
    """A reasoning or thinking model spent the whole output budget (``max_tokens``) before
    writing any text (OpenAI ``length`` with empty content; Gemini ``MAX_TOKENS`` with no text).
    The same request would spend it again: raise ``max_tokens``, or lower ``reasoning_effort`` /
    ``thinking_budget``."""

    kind = "no_output_budget"


class BadRequest(ProviderError):
    kind = "bad_request"


class RequestTooLarge(BadRequest):
    """A request over a provider's documented size limit (OpenAI: 20 MB per image, 50 MB of
    images per request; Gemini: 20 MB inline), refused before it is sent."""

    kind = "too_large"


class UnsupportedParameter(ProviderError):
    """The model rejects a parameter the run sets (``temperature`` other than 1 or ``top_p`` for
    an o-series or gpt-5 model).  Every call of the model would fail the same way, so the run
    stops; the message names the parameter and the fix."""

    kind = "unsupported_param"


class AuthError(ProviderError):
    kind = "auth"


class NotFound(ProviderError):
    kind = "not_found"


#: errors that stop the whole run rather than one item
FATAL_ERRORS = (AuthError, NotFound, QuotaExhausted, UnsupportedParameter)
