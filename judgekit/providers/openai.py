"""OpenAI and every OpenAI-compatible server (vLLM, SGLang, Ollama, LM Studio, gateways, Azure).

Uses the official SDK's ``AsyncOpenAI`` with its aiohttp transport (``DefaultAioHttpClient``),
which costs ~40 % less CPU per call than the default httpx transport and holds up at high
concurrency (shared/reference/performance.md).  The SDK's own retries are off: the engine retries.
The reply is read by :func:`judgekit.providers.replies.chat_completion_response` inside the call's
error handling: a reply with no text is an EmptyReply, one of the wrong shape a MalformedReply.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from ..errors import AuthError, BadRequest, MalformedReply, NotFound, ProviderError, RateLimited, TransientError
from ..types import ChatRequest, ChatResponse, ImagePart, Message, TextPart
from .base import Provider, retry_after_from_headers
from .replies import chat_completion_response

__all__ = ["OpenAIProvider", "to_openai_messages", "classify_openai_error"]

_OPENAI_URL = "https://api.openai.com/v1"
_RATE_HEADERS = (
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


def _uses_completion_tokens(model: str) -> bool:
    m = model.lower().rsplit("/", 1)[-1]
    return m.startswith(("o1", "o3", "o4", "gpt-5"))


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
        msg = _message(err)
        if status == 429:
            return RateLimited(msg, status=status, retry_after=retry_after_from_headers(headers))
        if status in (401, 403):
            return AuthError(msg, status=status)
        if status == 404:
            return NotFound(msg, status=status)
        if status in (408, 409) or status >= 500:
            return TransientError(msg, status=status, retry_after=retry_after_from_headers(headers))
        return BadRequest(msg, status=status)
    if isinstance(err, openai.APIResponseValidationError):
        return MalformedReply(f"malformed response: {err}")
    return TransientError(f"{type(err).__name__}: {err}")


def _message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return f"HTTP {err.status_code}: {inner['message']}"
    return f"HTTP {getattr(err, 'status_code', '?')}: {getattr(err, 'message', err)}"


class OpenAIProvider(Provider):
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

        key = self._api_key or self.api_key(required=self._base_url is None or self.spec.api_key_env is not None)
        self.remember_secret(key)
        # the client's timeout is a fallback: each request sets its own (Limits.timeout_for)
        common = dict(max_retries=0, timeout=self.spec.limits.timeout_for(None), http_client=DefaultAioHttpClient())
        if self.spec.provider == "azure":
            self._client = openai.AsyncAzureOpenAI(
                azure_endpoint=self._base_url,
                api_key=key,
                api_version=self.spec.api_version or "2024-10-21",
                **common,
            )
        else:
            # local servers (vLLM, Ollama...) accept any key; the SDK insists on one
            self._client = openai.AsyncOpenAI(base_url=self._base_url, api_key=key or "EMPTY", **common)

    async def generate(self, request: ChatRequest) -> ChatResponse:
        p = request.params
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "messages": to_openai_messages(request.messages, p.image_detail),
        }
        if p.temperature is not None:
            kwargs["temperature"] = p.temperature
        if p.max_tokens is not None:
            kwargs["max_completion_tokens" if _uses_completion_tokens(self.spec.model) else "max_tokens"] = p.max_tokens
        if p.top_p is not None:
            kwargs["top_p"] = p.top_p
        if p.seed is not None:
            kwargs["seed"] = p.seed
        if p.extra:
            kwargs["extra_body"] = dict(p.extra)
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

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
