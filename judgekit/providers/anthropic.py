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

Errors (:func:`classify_anthropic_error`), by the errors guide (platform.claude.com/docs/en/api/errors):

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

Batch mode: the Message Batches API (:mod:`judgekit.providers.anthropic_batch`, the
:class:`~judgekit.providers.batch.BatchAPI` of this class), with the same request bodies, reply
reading and error mapping, at half price.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any, Mapping

from ..errors import (AuthError, BadRequest, MalformedReply, NotFound, ProviderError, QuotaExhausted, RateLimited,
                      RequestTooLarge, TransientError)
from ..types import ChatRequest, ChatResponse
from .anthropic_batch import AnthropicBatchMixin
from .anthropic_wire import engine_rate_headers, message_params, message_response
from .base import Provider, retry_after_from_headers
from .params import anthropic_params
from .sizes import check_anthropic_size
from .urls import anthropic_base_url

__all__ = ["AnthropicProvider", "classify_anthropic_error", "anthropic_retry_after", "ANTHROPIC_URL",
           "DEFAULT_KEY_ENV"]

ANTHROPIC_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: what a spent credit balance or spend limit looks like in a message or an error code
_QUOTA_WORDS = ("credit balance is too low", "spend limit", "spend_limit")


@lru_cache(maxsize=1)
def _raw_response_type() -> type:
    """The HTTP response class the SDK's client returns when asked for the raw response."""
    from anthropic import _base_client

    mod = getattr(_base_client, "httpx2", None) or _base_client.httpx
    return mod.Response


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


def _status_error(status: int, headers: Any, msg: str, code: str, etype: str = "") -> ProviderError:
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
        out = _status_error(status, headers, _message(err), _error_code(err), etype if isinstance(etype, str) else "")
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
