"""Anthropic's Claude through the official ``anthropic`` SDK (``AsyncAnthropic``), the Messages API.

The key is read from ``api_key_env`` (default ``ANTHROPIC_API_KEY``); ``base_url`` points the SDK
elsewhere (a gateway, or judgekit's simulator: the root URL, the SDK adds ``/v1/messages``).
The SDK's retries are off (the engine retries), and, as for OpenAI, the body is posted through the
SDK's client (same auth, transport and error classes) and the reply read as JSON here, so an odd
reply is a classified failure (:mod:`judgekit.providers.anthropic_wire`, which also builds the
request and is what a batch layer reuses).  Parameters follow :func:`~judgekit.providers.params.
anthropic_params`; requests over the API's sizes are refused before sending
(:func:`~judgekit.providers.sizes.check_anthropic_size`).

Prompt caching (``prompt_cache``, on by default): the system prompt and the first user turn's
images before its text carry ``cache_control`` breakpoints (see :mod:`.anthropic_wire`); the reply's
cache reads and writes are priced at their rates.  A model spec's ``prompt_cache = false`` turns it
off, when the spec has that field; :class:`AnthropicProvider` takes it as an argument too.

Errors: :func:`~judgekit.providers.anthropic_errors.classify_anthropic_error` (a leaf this module and
its batch side share; re-exported here, with :func:`anthropic_retry_after`): rate limits waited for
as the reply says, credit and spend limits QuotaExhausted, 5xx and 529 retried.

Batch mode: the Message Batches API (:mod:`judgekit.providers.anthropic_batch`, the
:class:`~judgekit.providers.batch.BatchAPI` of this class), with the same request bodies, reply
reading and error mapping, at half price.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from ..errors import MalformedReply
from ..types import ChatRequest, ChatResponse
from .anthropic_batch import AnthropicBatchMixin
from .anthropic_errors import anthropic_retry_after, classify_anthropic_error
from .anthropic_wire import message_params, message_response
from .base import Provider
from .params import anthropic_params
from .sizes import check_anthropic_size
from .urls import anthropic_base_url

__all__ = ["AnthropicProvider", "classify_anthropic_error", "anthropic_retry_after", "ANTHROPIC_URL",
           "DEFAULT_KEY_ENV"]

ANTHROPIC_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"


@lru_cache(maxsize=1)
def _raw_response_type() -> type:
    """The HTTP response class the SDK's client returns when asked for the raw response."""
    from anthropic import _base_client

    mod = getattr(_base_client, "httpx2", None) or _base_client.httpx
    return mod.Response


class AnthropicProvider(AnthropicBatchMixin, Provider):
    kind = "anthropic"

    def __init__(self, alias: str, spec, *, prompt_cache: bool | None = None) -> None:
        super().__init__(alias, spec)
        #: whether requests mark their fixed prefix for Anthropic's prompt cache
        self.prompt_cache = bool(getattr(spec, "prompt_cache", True)) if prompt_cache is None else prompt_cache
        self._client = None

    @property
    def key_env(self) -> str | None:
        return self.spec.api_key_env or DEFAULT_KEY_ENV

    @property
    def identity(self) -> str:
        return self.spec.base_url or ANTHROPIC_URL

    async def start(self) -> None:
        import anthropic

        # the real API always needs a key; a gateway or simulator at base_url may not
        required = self.spec.base_url is None or self.spec.api_key_env is not None
        key = self.api_key(required=required)
        self._client = anthropic.AsyncAnthropic(
            api_key=key or "EMPTY",
            base_url=anthropic_base_url(self.spec.base_url) if self.spec.base_url else ANTHROPIC_URL,  # with or without /v1
            max_retries=0,
            timeout=self.spec.limits.timeout_for(None),  # a fallback: each request sets its own
            http_client=anthropic.DefaultAioHttpClient(),
        )

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The Messages API body of ``request`` (checked against the API's sizes and the model's
        parameters; ``params.extra`` fields added as they are)."""
        check_anthropic_size(request.messages)
        fields = anthropic_params(self.alias, self.spec, request.params)
        body = message_params(self.spec.model, request.messages, fields, cache_prefix=self.prompt_cache)
        if request.params.extra:
            body.update(dict(request.params.extra))
        return body

    async def generate(self, request: ChatRequest) -> ChatResponse:
        body = self.request_body(request)
        t0 = time.perf_counter()
        try:
            raw = await self._client.post("/v1/messages", body=body, cast_to=_raw_response_type(),
                                          options={"timeout": self.spec.limits.timeout_for(body["max_tokens"])})
            latency = time.perf_counter() - t0
            # read here, inside the error handling: an odd reply fails this call, never the run
            try:
                data = raw.json()
            except ValueError:
                raise MalformedReply(f"reply is not JSON ({raw.headers.get('content-type', '?')}): "
                                     f"{raw.text[:200]!r}") from None
            return message_response(data, raw.headers, latency)
        except Exception as e:  # classified below; nothing escapes unclassified
            raise classify_anthropic_error(e) from e

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
