"""Google Gemini through the google-genai SDK's async client; images travel as inline bytes.

Errors: a 429 whose ``QuotaFailure`` names a per-day quota (``...PerDay...``) or a quota of 0
(a free tier that does not include the model) is :class:`~judgekit.errors.QuotaExhausted` and
stops the run; any other 429 is a rate limit, waited for as its ``RetryInfo.retryDelay`` says
(the API sends no ``Retry-After``).  A bad key is a 400 ``API_KEY_INVALID``: an AuthError.

Replies (:func:`_response`): no candidates with ``promptFeedback.blockReason`` is
:class:`~judgekit.errors.Blocked`; a ``SAFETY`` / ``RECITATION`` / ``PROHIBITED_CONTENT`` /
``BLOCKLIST`` / ``SPII`` / image-safety finish is :class:`~judgekit.errors.ContentFiltered`;
``MAX_TOKENS`` with no text (a thinking model's budget went into thoughts) is
:class:`~judgekit.errors.NoOutputBudget`; no text otherwise is
:class:`~judgekit.errors.EmptyReply`.  The finish reason is normalised (``STOP`` -> ``stop``,
``MAX_TOKENS`` -> ``length``).  Usage: output is ``candidates_token_count`` plus
``thoughts_token_count`` (thoughts are billed as output); the cached part of the prompt is
``cached_content_token_count``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ..errors import (AuthError, BadRequest, Blocked, ContentFiltered, EmptyReply, MalformedReply, NoAnswer,
                      NotFound, ProviderError, QuotaExhausted, RateLimited, TransientError)
from ..types import ChatRequest, ChatResponse, Message, TextPart, Usage
from .base import Provider, retry_after_from_headers
from .gemini_batch import GeminiBatchMixin
from .params import allowed_params
from .urls import gemini_base_url
from .replies import excerpt, reply_text, short_string, token_count
from .sizes import check_gemini_size

__all__ = ["GeminiProvider", "classify_gemini_error", "gemini_quota", "retry_delay"]

_GEMINI_URL = "https://generativelanguage.googleapis.com"
#: finish reasons that say a filter withheld the answer
_FILTERED = frozenset({"safety", "recitation", "prohibited_content", "blocklist", "spii", "image_safety",
                       "image_prohibited_content", "image_recitation", "model_armor"})
#: finish reasons as judgekit names them across providers (types.ChatResponse)
_FINISH = {"stop": "stop", "max_tokens": "length", "finish_reason_unspecified": ""}
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


def _name(value: Any) -> str:
    """An SDK enum (or a string the SDK did not know) as a lower-case name."""
    return str(getattr(value, "value", None) or value or "").lower()


def _raw(resp: Any) -> str:
    try:
        return excerpt(resp.model_dump(mode="json", exclude_none=True))
    except Exception:  # an excerpt is a courtesy: never a reason to fail differently
        return repr(resp)[:1000]


def _response(resp: Any, latency: float) -> ChatResponse:
    """The SDK's GenerateContentResponse as a ChatResponse, with the same checks as an OpenAI
    reply (:mod:`judgekit.providers.replies`); see the module docstring for the outcomes."""
    meta = resp.usage_metadata
    thoughts = token_count(getattr(meta, "thoughts_token_count", None), "thoughts_token_count")
    usage = Usage(token_count(getattr(meta, "prompt_token_count", None), "prompt_token_count"),
                  token_count(getattr(meta, "candidates_token_count", None), "candidates_token_count") + thoughts,
                  cached_input_tokens=token_count(getattr(meta, "cached_content_token_count", None),
                                                  "cached_content_token_count"),
                  reasoning_tokens=thoughts)
    candidates = resp.candidates or []
    native = short_string(_name(candidates[0].finish_reason), "finish_reason", strict=True) if candidates else ""
    finish = _FINISH.get(native, native)
    try:
        if not candidates:
            feedback = getattr(resp, "prompt_feedback", None)
            blocked = getattr(feedback, "block_reason", None)
            if blocked:
                why = getattr(feedback, "block_reason_message", None)
                raise Blocked(f"the prompt was blocked (blockReason {_name(blocked).upper()})"
                              + (f": {why}" if why else ""))
        if native in _FILTERED:
            raise ContentFiltered(f"the provider withheld the answer (finishReason {native.upper()})")
        parts = (getattr(candidates[0].content, "parts", None) or []) if candidates else []
        # the answer is the text parts that are not thoughts (what ``resp.text`` joins, without its
        # warnings about other parts)
        content = [p.text for p in parts if isinstance(p.text, str) and not p.thought]
        text = reply_text(content, None, finish_reason=finish, usage=usage)
    except (NoAnswer, EmptyReply) as failure:  # kept with the reply, and what it was billed
        if not candidates and isinstance(failure, EmptyReply):
            failure.args = ("the reply has no candidates and no blockReason",)
        failure.raw, failure.usage = _raw(resp), usage
        raise
    return ChatResponse(text=text, usage=usage, finish_reason=finish, latency_s=latency,
                        request_id=short_string(getattr(resp, "response_id", None), "response_id", strict=False))


def _is_validation_error(err: Exception) -> bool:
    """Whether ``err`` says the SDK could not read the reply (not JSON, or fields of the wrong type)."""
    import json

    from pydantic import ValidationError

    return isinstance(err, (ValidationError, json.JSONDecodeError))


class GeminiProvider(GeminiBatchMixin, Provider):
    kind = "gemini"

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self._client = None

    @property
    def identity(self) -> str:
        return self.spec.base_url or _GEMINI_URL

    async def start(self) -> None:
        from google import genai
        from google.genai import types

        opts: dict[str, Any] = {"timeout": int(self.spec.limits.timeout_for(None) * 1000)}  # each call sets its own
        if self.spec.base_url:
            opts["base_url"], version = gemini_base_url(self.spec.base_url)  # with or without /v1beta
            if version:
                opts["api_version"] = version
        try:  # the SDK's own retries off: the engine retries (older SDKs lack the option)
            opts["retry_options"] = types.HttpRetryOptions(attempts=1)
        except (AttributeError, TypeError, ValueError):
            pass
        self._client = genai.Client(api_key=self.api_key(), http_options=types.HttpOptions(**opts))

    def _contents(self, messages: tuple[Message, ...]):
        from google.genai import types

        system, contents = None, []
        for m in messages:
            if m.role == "system":
                system = m.text()
                continue
            parts = [
                types.Part.from_text(text=p.text)
                if isinstance(p, TextPart)
                else types.Part.from_bytes(data=p.data, mime_type=p.mime)
                for p in m.parts
            ]
            contents.append(types.Content(role="model" if m.role == "assistant" else "user", parts=parts))
        return system, contents

    def content_request(self, request: ChatRequest, *, timeout: bool = True):
        """``(contents, config)`` of ``request``'s generateContent call: what a live call sends and
        what a batch line carries (:mod:`judgekit.providers.gemini_batch`; ``timeout=False`` leaves
        the per-call timeout out of the config).  Raises what the live call raises before sending."""
        from google.genai import types

        p = allowed_params(self.alias, self.spec, request.params)
        check_gemini_size(request.messages)
        system, contents = self._contents(request.messages)
        config = types.GenerateContentConfig(
            temperature=p.temperature,
            max_output_tokens=p.max_tokens,
            top_p=p.top_p,
            seed=p.seed,
            system_instruction=system,
            thinking_config=None if p.thinking_budget is None else types.ThinkingConfig(thinking_budget=p.thinking_budget),
            http_options=types.HttpOptions(timeout=int(self.spec.limits.timeout_for(p.max_tokens) * 1000))
            if timeout else None,
        )
        return contents, config

    async def generate(self, request: ChatRequest) -> ChatResponse:
        contents, config = self.content_request(request)
        t0 = time.perf_counter()
        try:
            resp = await self._client.aio.models.generate_content(
                model=self.spec.model, contents=contents, config=config
            )
            latency = time.perf_counter() - t0
            # read inside the error handling: an odd reply fails this call, never the run
            return _response(resp, latency)
        except Exception as e:
            raise classify_gemini_error(e) from e

    async def close(self) -> None:
        if self._client is not None:
            try:
                await self._client.aio.aclose()
            except AttributeError:
                pass
            self._client = None
