"""Google Gemini through the google-genai SDK's async client; images travel as inline bytes."""

from __future__ import annotations

import re
import time
from typing import Any

from ..errors import AuthError, BadRequest, MalformedReply, NotFound, ProviderError, RateLimited, TransientError
from ..types import ChatRequest, ChatResponse, Message, TextPart, Usage
from .base import Provider, retry_after_from_headers
from .replies import reply_text, short_string, token_count

__all__ = ["GeminiProvider", "classify_gemini_error"]

_GEMINI_URL = "https://generativelanguage.googleapis.com"


def classify_gemini_error(err: Exception) -> ProviderError:
    from google.genai import errors

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, errors.APIError):
        code = int(err.code or 0)
        headers = getattr(getattr(err, "response", None), "headers", None)
        msg = f"HTTP {code} {err.status or ''}: {err.message or err.details}"
        if code == 429:
            wait = retry_after_from_headers(headers)
            if wait is None:  # the Gemini API sends no header: a RetryInfo detail says "12s"
                m = re.search(r"retryDelay['\"]?\s*[:=]\s*['\"]?(\d+(?:\.\d+)?)s", str(err.details))
                wait = float(m.group(1)) if m else None
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
    name = type(err).__name__.lower()
    if "timeout" in name or "connect" in name or isinstance(err, (OSError, TimeoutError)):
        return TransientError(f"{type(err).__name__}: {err}")
    return TransientError(f"{type(err).__name__}: {err}")


def _response(resp: Any, latency: float) -> ChatResponse:
    """The SDK's GenerateContentResponse as a ChatResponse, with the same checks as an OpenAI
    reply (:mod:`judgekit.providers.replies`): no text is EmptyReply, impossible usage is
    MalformedReply."""
    finish = ""
    candidates = resp.candidates or []
    if candidates:
        fr = candidates[0].finish_reason
        finish = short_string((getattr(fr, "value", None) or str(fr or "")).lower(), "finish_reason", strict=True)
    parts = (getattr(candidates[0].content, "parts", None) or []) if candidates else []
    # the answer is the text parts that are not thoughts (what ``resp.text`` joins, without its
    # warnings about other parts)
    content = [p.text for p in parts if isinstance(p.text, str) and not p.thought]
    blocked = getattr(getattr(resp, "prompt_feedback", None), "block_reason", None)
    refusal = f"prompt blocked: {getattr(blocked, 'value', blocked)}" if blocked else None
    if not content and finish and finish not in ("stop", "max_tokens", "finish_reason_unspecified"):
        refusal = refusal or f"finish_reason {finish}"
    text = reply_text(content, refusal, finish_reason=finish)
    meta = resp.usage_metadata
    usage = Usage(token_count(getattr(meta, "prompt_token_count", None), "prompt_token_count"),
                  token_count(getattr(meta, "candidates_token_count", None), "candidates_token_count"))
    return ChatResponse(text=text, usage=usage, finish_reason=finish, latency_s=latency,
                        request_id=short_string(getattr(resp, "response_id", None), "response_id", strict=False))


def _is_validation_error(err: Exception) -> bool:
    """Whether ``err`` says the SDK could not read the reply (not JSON, or fields of the wrong type)."""
    import json

    from pydantic import ValidationError

    return isinstance(err, (ValidationError, json.JSONDecodeError))


class GeminiProvider(Provider):
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
            opts["base_url"] = self.spec.base_url
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

    async def generate(self, request: ChatRequest) -> ChatResponse:
        from google.genai import types

        p = request.params
        system, contents = self._contents(request.messages)
        config = types.GenerateContentConfig(
            temperature=p.temperature,
            max_output_tokens=p.max_tokens,
            top_p=p.top_p,
            seed=p.seed,
            system_instruction=system,
            http_options=types.HttpOptions(timeout=int(self.spec.limits.timeout_for(p.max_tokens) * 1000)),
        )
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
