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

Errors: :func:`~judgekit.providers.openai_errors.classify_openai_error` (a leaf this module and its
batch side share; re-exported here), which reads a 429 with a billing code as QuotaExhausted, a 400
``unsupported_parameter`` as UnsupportedParameter, and obeys ``x-should-retry``.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from ..errors import MalformedReply
from ..types import ChatRequest, ChatResponse, ImagePart, Message, TextPart
from .base import Provider
from .openai_batch import OpenAIBatchMixin
from .openai_errors import classify_openai_error, is_quota_code
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
