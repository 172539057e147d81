"""OpenAI and every OpenAI-compatible server (vLLM, SGLang, Ollama, LM Studio, gateways, Azure).

Uses the official SDK's ``AsyncOpenAI`` with its aiohttp transport (``DefaultAioHttpClient``),
which costs ~40 % less CPU per call than the default httpx transport and holds up at high
concurrency (shared/reference/performance.md).  The SDK's own retries are off: the engine retries.
The reply is read by :func:`judgekit.providers.replies.chat_completion_response` inside the call's
error handling: a reply with no text is an EmptyReply (or, when the reply says why, a filter, a
refusal or a budget spent on reasoning: not retried), one of the wrong shape a MalformedReply.

Parameters follow the model family of the model served (:mod:`judgekit.providers.params`):
``max_completion_tokens`` and ``reasoning_effort`` for o-series and gpt-5.  Requests over the
OpenAI API's size limits are refused before sending (:mod:`judgekit.providers.sizes`).

Errors (:func:`classify_openai_error`): a 429 with a billing code (``insufficient_quota``,
``credit_balance_exhausted``, ``*_spend_limit_exceeded``...) is QuotaExhausted and stops the run;
a 400 ``unsupported_parameter`` / ``unsupported_value`` is UnsupportedParameter, which stops it too;
``x-should-retry: false`` makes any error final, ``true`` makes a 4xx other than 401/403/404/429
retryable, as openai-python's own retry logic reads it.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any

from ..errors import (AuthError, BadRequest, MalformedReply, NotFound, ProviderError, QuotaExhausted, RateLimited,
                      TransientError, UnsupportedParameter)
from ..types import ChatRequest, ChatResponse, ImagePart, Message, TextPart
from .base import Provider, retry_after_from_headers
from .openai_batch import OpenAIBatchMixin
from .params import openai_params
from .replies import chat_completion_response
from .sizes import check_openai_size
from .urls import azure_endpoint, openai_base_url

__all__ = ["OpenAIProvider", "to_openai_messages", "classify_openai_error", "is_quota_code"]

_OPENAI_URL = "https://api.openai.com/v1"
_RATE_HEADERS = (
    "x-ratelimit-limit-requests",  # with the reset, how soon one request fits (engine.limits)
    "x-ratelimit-remaining-requests",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
)


@lru_cache(maxsize=512)
def _data_url_for(sha256: str, mime: str, data: bytes) -> str:
    import base64

    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _data_url(image: ImagePart) -> str:
    # judge calls resend the candidate's images: encode each image once (keyed by content hash;
    # bytes objects cache their own hash, so the lookup is cheap)
    return _data_url_for(image.sha256, image.mime, image.data)


def to_openai_messages(messages: tuple[Message, ...], detail: str | None) -> list[dict[str, Any]]:
    """Messages in the chat-completions shape: images as data URLs with a ``detail`` setting."""
    out = []
    for m in messages:
        if len(m.parts) == 1 and isinstance(m.parts[0], TextPart):
            out.append({"role": m.role, "content": m.parts[0].text})
            continue
        content: list[dict[str, Any]] = []
        for p in m.parts:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            else:
                url: dict[str, Any] = {"url": _data_url(p)}
                if detail:
                    url["detail"] = detail
                content.append({"type": "image_url", "image_url": url})
        out.append({"role": m.role, "content": content})
    return out


@lru_cache(maxsize=1)
def _raw_response_type() -> type:
    """The HTTP response class the SDK's client returns when asked for the raw response
    (httpx2.Response in openai 3.x, httpx.Response before)."""
    from openai import _base_client

    mod = getattr(_base_client, "httpx2", None) or getattr(_base_client, "httpx")
    return mod.Response


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
        out = _status_error(err, status, headers, _message(err))
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


def _status_error(err: Any, status: int, headers: Any, msg: str) -> ProviderError:
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


def _message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return f"HTTP {err.status_code}: {inner['message']}"
    return f"HTTP {getattr(err, 'status_code', '?')}: {getattr(err, 'message', err)}"


class OpenAIProvider(OpenAIBatchMixin, Provider):
    """Live calls here; the Batch API's side in :class:`~judgekit.providers.openai_batch.OpenAIBatchMixin`."""

    kind = "openai"

    def __init__(self, alias: str, spec, *, base_url: str | None = None, api_key: str | None = None):
        super().__init__(alias, spec)
        self._base_url = base_url or spec.base_url
        self._api_key = api_key
        self._client = None

    @property
    def identity(self) -> str:
        return self._base_url or _OPENAI_URL

    async def start(self) -> None:
        import openai
        from openai import DefaultAioHttpClient

        # Azure always needs a key (the SDK would raise its own error, a traceback, without one)
        required = self._base_url is None or self.spec.api_key_env is not None or self.spec.provider == "azure"
        key = self._api_key or self.api_key(required=required)
        self.remember_secret(key)
        # the client's timeout is a fallback: each request sets its own (Limits.timeout_for)
        common = dict(max_retries=0, timeout=self.spec.limits.timeout_for(None), http_client=DefaultAioHttpClient())
        if self.spec.provider == "azure":
            self._client = openai.AsyncAzureOpenAI(
                azure_endpoint=azure_endpoint(self._base_url),
                api_key=key,
                api_version=self.spec.api_version or "2024-10-21",
                **common,
            )
        else:
            # local servers (vLLM, Ollama...) accept any key; the SDK insists on one
            # with or without /v1: chat, files and batches all go to the server's /v1 (providers.urls)
            base = openai_base_url(self._base_url) if self._base_url else None
            self._client = openai.AsyncOpenAI(base_url=base, api_key=key or "EMPTY", **common)

    def chat_body(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions body of ``request``, as a live call posts it and a batch line
        carries it; a request over the API's size limits raises RequestTooLarge here.  Extra
        parameters (``GenParams.extra``) are fields of the body (as the SDK's ``extra_body``)."""
        p = request.params
        if self._size_limited:
            check_openai_size(request.messages)
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": to_openai_messages(request.messages, p.image_detail),
            **openai_params(self.alias, self.spec, p),
        }
        if p.extra:
            body.update(p.extra)
        return body

    @property
    def serves_chat_batches(self) -> bool:
        """Whether this provider's calls are chat completions a batch can carry (the image
        generators subclass it for its client, not its calls)."""
        return type(self).generate is OpenAIProvider.generate

    async def generate(self, request: ChatRequest) -> ChatResponse:
        p = request.params
        kwargs = self.chat_body(request)
        t0 = time.perf_counter()
        try:
            # The SDK's documented path for direct requests: same client, auth, transport, Azure
            # routing and error classes as chat.completions.create, without its TypedDict
            # transform of the parameters and pydantic construction of the reply, a third of
            # its per-call CPU (shared/reference/performance.md).  The body is built above.
            raw = await self._client.post("/chat/completions", body=kwargs, cast_to=_raw_response_type(),
                                          options={"timeout": self.spec.limits.timeout_for(p.max_tokens)})
            latency = time.perf_counter() - t0
            # everything read from the reply is read here, inside the error handling: an odd
            # reply is a classified failure of this call (replies.py), never a crash of the run
            try:
                data = raw.json()
            except ValueError:
                raise MalformedReply(f"chat completion is not JSON ({raw.headers.get('content-type', '?')}): "
                                     f"{raw.text[:200]!r}") from None
            return chat_completion_response(data, raw.headers, latency, _RATE_HEADERS)
        except Exception as e:  # classified below; nothing escapes unclassified
            raise classify_openai_error(e) from e

    @property
    def _size_limited(self) -> bool:
        """Whether the OpenAI API's request sizes apply: OpenAI itself, Azure and the simulator
        (other compatible servers have limits of their own)."""
        return self.spec.provider in ("azure", "sim") or (self.spec.provider == "openai" and not self.spec.base_url)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
