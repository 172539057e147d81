"""Google Gemini through the google-genai SDK's async client; images travel as inline bytes.

Errors: :func:`~judgekit.providers.gemini_errors.classify_gemini_error` (a per-day or zero quota
stops the run, other 429s wait for their ``RetryInfo.retryDelay``, a bad key is an AuthError);
replies: :func:`~judgekit.providers.gemini_replies.gemini_chat_response` (blocked, filtered, empty
replies as their errors; finish reasons and usage normalised).  Both are leaves this module and
batch mode (:mod:`judgekit.providers.gemini_batch`) share; the error names are re-exported here.
"""

from __future__ import annotations

import time
from typing import Any

from ..types import ChatRequest, ChatResponse, Message, TextPart
from .base import Provider
from .gemini_batch import GeminiBatchMixin
from .gemini_errors import classify_gemini_error, gemini_quota, retry_delay
from .gemini_replies import gemini_chat_response
from .params import allowed_params
from .urls import gemini_base_url
from .sizes import check_gemini_size

__all__ = ["GeminiProvider", "classify_gemini_error", "gemini_quota", "retry_delay"]

_GEMINI_URL = "https://generativelanguage.googleapis.com"


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
            return gemini_chat_response(resp, latency)
        except Exception as e:
            raise classify_gemini_error(e) from e

    async def close(self) -> None:
        if self._client is not None:
            try:
                await self._client.aio.aclose()
            except AttributeError:
                pass
            self._client = None
