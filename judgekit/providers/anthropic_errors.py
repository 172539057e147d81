"""How an Anthropic Messages API error becomes one of judgekit's error classes: a leaf the live
provider (:mod:`judgekit.providers.anthropic`) and its batch side
(:mod:`judgekit.providers.anthropic_batch`: an ``errored`` result, the batch calls themselves)
both import.

Errors (:func:`classify_anthropic_error`; :func:`status_error` for a status and its body's fields),
by the errors guide (platform.claude.com/docs/en/api/errors):

- 429 ``rate_limit_error``: :class:`~judgekit.errors.RateLimited`, waited for as ``retry-after``
  says, else the ``anthropic-ratelimit-*-reset`` of the limit that ran out; a spend limit
  (``error.details.error_code`` naming one) is :class:`~judgekit.errors.QuotaExhausted`;
- a message saying the credit balance is too low (a 400), a spend limit, and 402 or
  ``billing_error``: QuotaExhausted (the run stops);
- 401 ``authentication_error``, 403 ``permission_error``: AuthError; 404 ``not_found_error``:
  NotFound; 413 ``request_too_large``: :class:`~judgekit.errors.RequestTooLarge`; other 4xx:
  BadRequest;
- 529 ``overloaded_error``, 500 ``api_error`` and every 5xx, 408, 409, timeouts and connection
  errors: TransientError (retried); ``x-should-retry`` is obeyed as for OpenAI.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import (AuthError, BadRequest, MalformedReply, NotFound, ProviderError, QuotaExhausted, RateLimited,
                      RequestTooLarge, TransientError)
from .anthropic_wire import engine_rate_headers
from .base import retry_after_from_headers

__all__ = ["classify_anthropic_error", "status_error", "anthropic_retry_after"]

#: what a spent credit balance or spend limit looks like in a message or an error code
_QUOTA_WORDS = ("credit balance is too low", "spend limit", "spend_limit")


def anthropic_retry_after(headers: Mapping[str, str] | None, message: str = "") -> float | None:
    """Seconds to wait after a 429 or 529: ``retry-after`` (or ``retry-after-ms``), else the reset
    of the ``anthropic-ratelimit-*`` limit that ran out (:func:`retry_after_from_headers` over
    the translated set); None when the reply says nothing."""
    if not headers:
        return None
    merged: dict[str, str] = dict(engine_rate_headers(headers) or {})
    for name in ("retry-after", "retry-after-ms"):
        value = headers.get(name)
        if value is not None:
            merged[name] = value
    return retry_after_from_headers(merged, message)


def _body_error(body: Any) -> dict[str, Any]:
    inner = body.get("error") if isinstance(body, dict) else None
    return inner if isinstance(inner, dict) else {}


def _message(err: Any) -> str:
    inner = _body_error(getattr(err, "body", None))
    text = inner.get("message") if isinstance(inner.get("message"), str) else getattr(err, "message", err)
    etype = inner.get("type")
    kind = f" {etype}" if isinstance(etype, str) else ""
    return f"HTTP {getattr(err, 'status_code', '?')}{kind}: {' '.join(str(text).split())[:500]}"


def _error_code(err: Any) -> str:
    code = getattr(err, "error_code", None)
    if isinstance(code, str):
        return code
    details = _body_error(getattr(err, "body", None)).get("details")
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else ""


def _should_retry(headers: Any) -> bool | None:
    value = headers.get("x-should-retry") if headers is not None else None
    return {"true": True, "false": False}.get(str(value).strip().lower()) if value is not None else None


def status_error(status: int, headers: Any, msg: str, code: str, etype: str = "") -> ProviderError:
    quota = etype == "billing_error" or any(w in f"{msg} {code}".lower() for w in _QUOTA_WORDS)
    if status == 429:
        if quota:
            return QuotaExhausted(msg, status=status, reason=code or "spend limit")
        return RateLimited(msg, status=status, retry_after=anthropic_retry_after(headers, msg))
    if status == 402 or quota:
        return QuotaExhausted(msg, status=status, reason=code or etype or "credit balance")
    if status in (401, 403):
        return AuthError(msg, status=status)
    if status == 404:
        return NotFound(msg, status=status)
    if status == 413:
        return RequestTooLarge(msg, status=status)
    if status in (408, 409) or status >= 500:
        return TransientError(msg, status=status, retry_after=anthropic_retry_after(headers, msg))
    return BadRequest(msg, status=status)


def classify_anthropic_error(err: Exception) -> ProviderError:
    """Map the SDK's exceptions onto judgekit's error classes (see the module docstring)."""
    import anthropic

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, anthropic.APITimeoutError):
        return TransientError(f"timeout: {err}")
    if isinstance(err, anthropic.APIConnectionError):
        return TransientError(f"connection error: {err}")
    if isinstance(err, anthropic.APIStatusError):
        status = err.status_code
        headers = err.response.headers if err.response is not None else None
        etype = _body_error(getattr(err, "body", None)).get("type")
        out = status_error(status, headers, _message(err), _error_code(err), etype if isinstance(etype, str) else "")
        should = _should_retry(headers)
        if should is False and out.retryable:
            out.retryable = False  # this instance only: the server said a retry would fail too
            out.args = (f"{out.args[0]} (x-should-retry: false)",)
        elif should is True and type(out) is BadRequest:
            out = TransientError(f"{out.args[0]} (x-should-retry: true)", status=status,
                                 retry_after=anthropic_retry_after(headers))
        return out
    if isinstance(err, anthropic.APIResponseValidationError):
        return MalformedReply(f"malformed response: {err}")
    return TransientError(f"{type(err).__name__}: {err}")
