"""Image generators behind an API: ``openai_image`` (the OpenAI Images API, or a compatible server
at ``base_url``) and ``sim_image`` (the simulator's copy of it), through the real openai SDK's
``client.images.generate``.

The request contract is the local ``text_to_image`` provider's (:mod:`judgekit.providers.local`),
so benchmarks treat every generator alike: the prompt is the last message's text; ``params.seed``
is required and recorded; ``params.extra`` and the spec's ``image.extra`` go in the request body.
``sim_image`` sends the seed (the simulator's extension); ``openai_image`` cannot (the Images API
has no seed) and records ``"seed_sent": false``.  The response's text is JSON with sorted keys::

    {"image": {"sha256", "mime", "width", "height"}, "seed", "seed_sent", "size", "quality",
     "revised_prompt", "model"}

and the PNG is in the engine's blob store (``provider.blobs``).  A url reply is fetched with
httpx.  A reply whose bytes are not an image is a :class:`~judgekit.errors.TransientError` (so
retried); one whose usage is impossible (negative, not a number, past any real call) a
:class:`~judgekit.errors.MalformedReply`.  Usage is the response's (0/0 when it has none, as for
dall-e models, which are priced with the spec's ``price = {per_request_usd = ...}``).  :meth:`expected_output_tokens` is the
estimate's per-image output tokens (:func:`judgekit.cost.images.generation_output_tokens`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import time
from typing import Any

from ..blobs import sniff_mime
from ..errors import BadRequest, TransientError
from ..types import ChatRequest, ChatResponse, ImagePart, Usage
from .openai import _RATE_HEADERS, OpenAIProvider, classify_openai_error
from .replies import sha256_at, short_string, token_count, usage_of
from .sim import SimulatorLink, UsesSimulator

__all__ = ["OpenAIImageProvider", "SimImageProvider", "prompt_of"]

# simulator settings that change the images it draws (faults, limits and latency do not)
_IMAGE_RESPONSE_FIELDS = ("seed",)


def _image_usage(u: Any) -> Usage:
    """Token usage of an Images API reply (0/0 when it has none); impossible figures are
    MalformedReply, as for chat replies (:mod:`judgekit.providers.replies`)."""
    if u is None:
        return Usage(0, 0)
    if isinstance(u, dict):
        return usage_of(u, "input_tokens", "output_tokens")
    return Usage(token_count(getattr(u, "input_tokens", None), "input_tokens"),
                 token_count(getattr(u, "output_tokens", None), "output_tokens"))


def prompt_of(request: ChatRequest) -> str:
    """The prompt of a generation request: the text of its last message, stripped."""
    return request.messages[-1].text().strip() if request.messages else ""


class OpenAIImageProvider(OpenAIProvider):
    """The OpenAI Images API (``images.generate``) or any server that speaks it."""

    kind = "openai_image"
    #: whether ``params.seed`` goes in the request (the OpenAI Images API has no seed)
    sends_seed = False
    stores_outputs = True  # the image it drew

    def __init__(self, alias: str, spec, **kw: Any) -> None:
        super().__init__(alias, spec, **kw)
        from ..config import ImageGenSettings

        self.settings = spec.image or ImageGenSettings()
        self._http = None  # httpx.AsyncClient for url replies, made on first use

    @property
    def key_env(self) -> str | None:
        return self.spec.api_key_env or "OPENAI_API_KEY"

    def _settings_identity(self) -> str:
        s = self.settings
        extra = json.dumps(s.extra, sort_keys=True, ensure_ascii=False)
        return (f"image:size={s.size};quality={s.quality or ''};"
                f"extra={hashlib.sha256(extra.encode()).hexdigest()[:12] if s.extra else ''}")

    @property
    def identity(self) -> str:
        """The endpoint, and the size, quality and extra fields (they change the image)."""
        return f"{super().identity};{self._settings_identity()}"

    def output_blobs(self, response: ChatResponse) -> tuple[str, ...]:
        return sha256_at(response.text, "image")

    def expected_output_tokens(self) -> float | None:
        """Output tokens of one generated image (None when the model is not priced by token)."""
        from ..cost.images import generation_output_tokens

        n = generation_output_tokens(self.spec.model, self.settings.size, self.settings.quality)
        return None if n is None else float(n)

    async def generate(self, request: ChatRequest) -> ChatResponse:
        prompt = prompt_of(request)
        if not prompt:
            raise BadRequest("image generation needs a prompt: the request's last message has no text")
        seed = request.params.seed
        if seed is None:
            raise BadRequest("image generation needs a seed (params.seed): every generated image is seeded "
                             "and recorded")
        if self.blobs is None:
            raise RuntimeError(f"model '{self.alias}' ({self.kind}): no blob store to keep generated images in "
                               "(the engine sets provider.blobs)")
        s = self.settings
        kwargs: dict[str, Any] = {"model": self.spec.model, "prompt": prompt, "n": 1, "size": s.size}
        if s.quality is not None:
            kwargs["quality"] = s.quality
        body = {**s.extra, **dict(request.params.extra)}
        if self.sends_seed:
            body["seed"] = int(seed)
        if body:
            kwargs["extra_body"] = body
        t0 = time.perf_counter()
        try:
            raw = await self._client.images.with_raw_response.generate(**kwargs)
            resp = raw.parse()
            # everything read from the reply is read here: an odd reply fails this call only
            if not resp.data:
                raise TransientError("the image API returned no image")
            item = resp.data[0]
            data = await self._image_bytes(item)
            revised = getattr(item, "revised_prompt", None)
            revised = revised if isinstance(revised, str) else None
            usage = _image_usage(resp.usage)
            headers = raw.headers
            request_id = short_string(headers.get("x-request-id"), "x-request-id", strict=False)
            rate = {h: headers[h] for h in _RATE_HEADERS if h in headers} or None
        except Exception as e:  # classified below; nothing escapes unclassified
            raise classify_openai_error(e) from e
        mime = sniff_mime(data)
        if mime is None:
            raise TransientError(f"the image API returned {len(data)} bytes that are not an image "
                                 f"(they start {data[:16]!r})")
        sha = await asyncio.to_thread(self.blobs.put, data, mime)
        part = ImagePart(data, mime, sha)
        latency = time.perf_counter() - t0
        record = {
            "image": {"sha256": sha, "mime": mime, "width": part.width, "height": part.height},
            "seed": int(seed),
            "seed_sent": self.sends_seed,
            "size": s.size,
            "quality": s.quality,
            "revised_prompt": revised,
            "model": self.spec.model,
        }
        return ChatResponse(json.dumps(record, ensure_ascii=False, sort_keys=True), usage, finish_reason="stop",
                            latency_s=latency, request_id=request_id, rate_headers=rate)

    async def _image_bytes(self, item: Any) -> bytes:
        b64 = getattr(item, "b64_json", None)
        if b64:
            try:
                return base64.b64decode(b64, validate=True)
            except (binascii.Error, ValueError, TypeError) as e:
                raise TransientError(f"the image API returned malformed base64: {e}") from None
        url = getattr(item, "url", None)
        if not url or not isinstance(url, str):
            raise TransientError("the image API returned neither b64_json nor url")
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.spec.limits.timeout_for(None), follow_redirects=True)
        try:
            r = await self._http.get(url)
        except httpx.HTTPError as e:
            raise TransientError(f"fetching the generated image failed: {e!r}") from None
        if r.status_code != 200:
            raise TransientError(f"fetching the generated image: HTTP {r.status_code}", status=r.status_code)
        return r.content

    async def close(self) -> None:
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()
        await super().close()


class SimImageProvider(UsesSimulator, OpenAIImageProvider):
    """The simulator's Images API.  Settings from the spec's ``sim`` table (any
    :class:`judgekit.sim.SimConfig` field, or ``url`` of a simulator already running); aliases with
    the same settings, chat ``sim`` models and ``sim_image_search`` included, share one process."""

    kind = "sim_image"
    sends_seed = True

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self.link = SimulatorLink(spec.sim)

    @property
    def key_env(self) -> str | None:
        return self.spec.api_key_env

    @property
    def identity(self) -> str:
        return f"sim_image:{self.link.identity(_IMAGE_RESPONSE_FIELDS)};{self._settings_identity()}"

    def expected_output_tokens(self) -> float | None:
        """What the simulator reports: the gpt-image-1 table, none for dall-e models."""
        from ..sim.images import usage_output_tokens

        n = usage_output_tokens(self.spec.model, self.settings.size, self.settings.quality)
        return None if n is None else float(n)

    async def start(self) -> None:
        self._base_url = await self.link.connect()
        self._api_key = self.link.key
        await super().start()
