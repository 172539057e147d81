"""How a Gemini API error becomes one of judgekit's error classes (:func:`classify_gemini_error`):
a leaf the live provider (:mod:`judgekit.providers.gemini`) and batch mode
(:mod:`judgekit.providers.gemini_batch`, :mod:`judgekit.providers.gemini_batch_wire`: a result
line's ``google.rpc.Status``, the batch calls themselves) all import.

A 429 whose ``QuotaFailure`` names a per-day quota (``...PerDay...``) or a quota of 0 (a free tier
that does not include the model) is :class:`~judgekit.errors.QuotaExhausted` and stops the run;
any other 429 is a rate limit, waited for as its ``RetryInfo.retryDelay`` says (the API sends no
``Retry-After``).  A bad key is a 400 ``API_KEY_INVALID``: an AuthError.  Other statuses: 401/403
AuthError, 404 NotFound, 408/409/5xx TransientError, other 4xx BadRequest; a reply the SDK could
not read (not JSON, fields of the wrong type) is MalformedReply.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import (AuthError, BadRequest, MalformedReply, NotFound, ProviderError, QuotaExhausted, RateLimited,
                      TransientError)
from .base import retry_after_from_headers

__all__ = ["classify_gemini_error", "gemini_quota", "retry_delay"]

_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _details(err: Any) -> list[dict]:
    """The ``google.rpc`` detail objects of an APIError's body."""
    body = getattr(err, "details", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    found = body.get("details") if isinstance(body, dict) else None
    return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []


def retry_delay(details: list[dict]) -> float | None:
    """Seconds of a ``google.rpc.RetryInfo``'s ``retryDelay`` (``"37s"``, ``"1.5s"``), or None."""
    for d in details:
        if str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            m = _DELAY.match(str(d.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    return None


def gemini_quota(details: list[dict]) -> tuple[str, str] | None:
    """(metric, when it resets) when a ``QuotaFailure`` names a quota no wait of seconds cures: a
    per-day quota, or one of 0 (a free tier without the model); None for a per-minute rate limit."""
    for d in details:
        if not str(d.get("@type", "")).endswith("google.rpc.QuotaFailure"):
            continue
        for v in d.get("violations") or []:
            if not isinstance(v, dict):
                continue
            quota_id = str(v.get("quotaId", ""))
            metric = str(v.get("quotaMetric", "")).rsplit("/", 1)[-1] or quota_id
            per_day = "perday" in quota_id.lower() or "per_day" in metric.lower()
            if per_day:
                return f"{metric} ({quota_id})" if quota_id else metric, "at midnight Pacific time"
            if str(v.get("quotaValue", "")).strip() == "0":
                return f"{metric} ({quota_id}) is 0", ""
    return None


def classify_gemini_error(err: Exception) -> ProviderError:
    from google.genai import errors

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, errors.APIError):
        code = int(err.code or 0)
        headers = getattr(getattr(err, "response", None), "headers", None)
        msg = f"HTTP {code} {err.status or ''}: {' '.join(str(err.message or err.details).split())[:500]}"
        if code == 429:
            details = _details(err)
            quota = gemini_quota(details)
            if quota is not None:
                return QuotaExhausted(msg, status=code, reason=quota[0], resets=quota[1])
            wait = retry_after_from_headers(headers)
            if wait is None:  # the Gemini API sends no header: a RetryInfo detail says "12s"
                wait = retry_delay(details)
            return RateLimited(msg, status=code, retry_after=wait)
        if code in (401, 403):
            return AuthError(msg, status=code)
        if code == 404:
            return NotFound(msg, status=code)
        if code in (408, 409) or code >= 500:
            return TransientError(msg, status=code)
        # the Gemini API answers a bad key with 400 API_KEY_INVALID
        if "API_KEY_INVALID" in str(err.details) or "API key not valid" in str(err.message):
            return AuthError(msg, status=code)
        return BadRequest(msg, status=code)
    if _is_validation_error(err):  # the SDK could not read the reply into its types
        return MalformedReply(f"malformed response: {' '.join(str(err).split())[:300]}")
    return TransientError(f"{type(err).__name__}: {err}")


def _is_validation_error(err: Exception) -> bool:
    """Whether ``err`` says the SDK could not read the reply (not JSON, or fields of the wrong type)."""
    import json

    from pydantic import ValidationError

    return isinstance(err, (ValidationError, json.JSONDecodeError))
