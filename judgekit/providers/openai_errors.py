"""How an OpenAI (or OpenAI-compatible) error becomes one of judgekit's error classes: the live
provider (:mod:`judgekit.providers.openai`) and its batch side (:mod:`judgekit.providers.openai_batch`,
a result line's status and the batch calls themselves) map errors here, a leaf both import.

:func:`classify_openai_error` reads the SDK's exceptions; :func:`status_error` maps an HTTP status,
its headers and the error's ``code`` / ``type`` / ``param``.  A 429 with a billing code
(``insufficient_quota``, ``credit_balance_exhausted``, ``*_spend_limit_exceeded``...) is
QuotaExhausted and stops the run; a 400 ``unsupported_parameter`` / ``unsupported_value`` is
UnsupportedParameter, which stops it too; ``x-should-retry: false`` makes any error final, ``true``
makes a 4xx other than 401/403/404/429 retryable, as openai-python's own retry logic reads it.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import (AuthError, BadRequest, MalformedReply, NotFound, ProviderError, QuotaExhausted, RateLimited,
                      TransientError, UnsupportedParameter)
from .base import retry_after_from_headers

__all__ = ["classify_openai_error", "status_error", "error_message", "is_quota_code"]

#: 429 codes that no wait cures: the account has no quota or credit left (the "Error codes" guide
#: and the codes seen since: credit_balance_exhausted, organization/project spend limits)
_QUOTA_CODES = frozenset({"insufficient_quota", "credit_balance_exhausted", "billing_hard_limit_reached",
                          "billing_not_active", "quota_exceeded"})
_QUOTA_PATTERN = re.compile(r"_(?:spend|usage|billing)_limit_(?:exceeded|reached)$")


def is_quota_code(code: Any) -> bool:
    """Whether an OpenAI error ``code`` (or ``type``) says the account is out of quota or credit."""
    return isinstance(code, str) and (code in _QUOTA_CODES or bool(_QUOTA_PATTERN.search(code)))


def _should_retry(headers: Any) -> bool | None:
    """``x-should-retry`` as openai-python reads it: True, False, or None when absent."""
    value = headers.get("x-should-retry") if headers is not None else None
    return {"true": True, "false": False}.get(str(value).strip().lower()) if value is not None else None


def classify_openai_error(err: Exception) -> ProviderError:
    """Map the SDK's exceptions onto judgekit's error classes."""
    import openai

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, openai.APITimeoutError):
        return TransientError(f"timeout: {err}")
    if isinstance(err, openai.APIConnectionError):
        return TransientError(f"connection error: {err}")
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        headers = err.response.headers if err.response is not None else None
        out = status_error(err, status, headers, error_message(err))
        should = _should_retry(headers)
        if should is False and out.retryable:
            out.retryable = False  # this instance only: the server said a retry would fail too
            out.args = (f"{out.args[0]} (x-should-retry: false)",)
        elif should is True and type(out) is BadRequest:
            out = TransientError(f"{out.args[0]} (x-should-retry: true)", status=status,
                                 retry_after=retry_after_from_headers(headers))
        return out
    if isinstance(err, openai.APIResponseValidationError):
        return MalformedReply(f"malformed response: {err}")
    return TransientError(f"{type(err).__name__}: {err}")


def status_error(err: Any, status: int, headers: Any, msg: str) -> ProviderError:
    code, etype = getattr(err, "code", None), getattr(err, "type", None)
    if status == 429:
        if is_quota_code(code) or is_quota_code(etype):
            return QuotaExhausted(msg, status=status, reason=str(code or etype))
        return RateLimited(msg, status=status, retry_after=retry_after_from_headers(headers, msg))
    if status in (401, 403):
        return AuthError(msg, status=status)
    if status == 404:
        return NotFound(msg, status=status)
    if status in (408, 409) or status >= 500:
        return TransientError(msg, status=status, retry_after=retry_after_from_headers(headers))
    if status == 400 and code in ("unsupported_parameter", "unsupported_value"):
        param = getattr(err, "param", None)
        return UnsupportedParameter(
            f"{msg} (parameter {param!r}: set `serves` to the model this name serves, so judgekit sends what it "
            "accepts, or drop_unsupported_params = true to leave it out)", status=status)
    return BadRequest(msg, status=status)


def error_message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return f"HTTP {err.status_code}: {inner['message']}"
    return f"HTTP {getattr(err, 'status_code', '?')}: {getattr(err, 'message', err)}"
