"""The simulator's copy of the OpenAI Images API: ``POST /v1/images/generations``.

Request (OpenAI's shape): ``{model, prompt, n (1..4), size, quality, response_format, seed}``;
``size`` is one of :data:`SIZES` (``auto`` is 1024x1024), ``response_format`` ``b64_json`` (the
default) or ``url`` (then the PNG is served from ``GET /sim/generated/{id}.png``), and ``seed``
is a judgekit extension (absent: 0).  The real API has no seed.

Image ``k`` of a request is ``render(parse(prompt), size, seed=seed + k)``
(:mod:`judgekit.sim.scenes`), mixed with the simulator's own seed when that is not 0; the PNG
carries the parsed scene in its ``judgekit-scene`` chunk.  A caption that keeps more details of
an image's scene therefore makes an image closer to it.  The same prompt, size and seed give the
same bytes; another seed moves and textures the shapes differently.

Response: ``{"created", "data": [{"b64_json" | "url", "revised_prompt"}], "size", "quality",
"output_format", "usage"}`` with gpt-image-1's usage shape (``input_tokens``,
``output_tokens``, ``total_tokens``, ``input_tokens_details``): output tokens per image from
:func:`judgekit.cost.images.generation_output_tokens` (a model outside the gpt-image-1 family is
counted as gpt-image-1), none for ``dall-e-*`` models, which the real API bills per image.

The request goes through the chat pipeline (:meth:`judgekit.sim.core._Core.run`): key, model,
rate limits (TPM charged prompt plus output tokens), injected 5xx, hangs, latency and counters.
A garbage draw answers 200 with a base64 payload that is not an image.  Counters of their own
(:class:`ImageGenStats`) are merged into ``GET /sim/stats``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aiohttp import web

from judgekit.cost.images import generation_output_tokens
from judgekit.sim.protocol import _OPENAI, _BadRequest, _dumps, estimate_prompt_tokens
from judgekit.sim.scenes import parse, render

if TYPE_CHECKING:
    from judgekit.sim.core import Admitted, Served, _Core

__all__ = ["ImageGenSim", "ImageGenStats", "SIZES", "QUALITIES", "GENERATIONS_PATH", "usage_output_tokens"]

GENERATIONS_PATH = "/v1/images/generations"
#: sizes the endpoint accepts (``auto`` draws 1024x1024)
SIZES = ("256x256", "512x512", "1024x1024", "1024x1536", "1536x1024", "auto")
#: qualities accepted (gpt-image's and DALL-E 3's); they only change the usage reported
QUALITIES = ("low", "medium", "high", "auto", "standard", "hd")
_FORMATS = ("b64_json", "url")
_MAX_PROMPT = 32000
_MAX_N = 4
_KEEP_GENERATED = 256  # images kept for url responses (the oldest are dropped)
#: what a garbage draw sends instead of a PNG
GARBAGE_BYTES = b"<html><body>upstream image service error (simulated)</body></html>"


@dataclass(slots=True)
class ImageGenStats:
    """Counters of the image generation endpoints (requests, faults and rate limits are counted
    by the shared pipeline's :class:`~judgekit.sim.core.SimStats`)."""

    images_generated: int = 0
    """Images made by 200 replies (``n`` per request; garbage ones included)."""
    generated_fetches: int = 0
    """``GET /sim/generated/{id}.png`` answered with the image."""
    generated_not_found: int = 0
    """``GET /sim/generated/...`` for an unknown or dropped image."""

    def snapshot(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)


def usage_output_tokens(model: str, size: str, quality: str | None) -> int | None:
    """Output tokens the simulator reports per image: the gpt-image-1 family's table, other
    names counted as gpt-image-1, None (no usage) for DALL-E models."""
    if model.lower().rsplit("/", 1)[-1].startswith("dall-e"):
        return None
    q = quality if quality in ("low", "medium", "high") else None
    n = generation_output_tokens(model, size, q)
    return n if n is not None else generation_output_tokens("gpt-image-1", size, q)


@dataclass(slots=True)
class _ImageRequest:
    model: str
    prompt: str
    n: int
    size: str
    quality: str | None
    response_format: str
    seed: int
    digest: bytes
    prompt_tokens: int
    output_tokens: int | None

    @property
    def rate_tokens(self) -> int:
        return self.prompt_tokens + (self.output_tokens or 0) * self.n

    @property
    def pixels(self) -> tuple[int, int]:
        w, _, h = ("1024x1024" if self.size == "auto" else self.size).partition("x")
        return int(w), int(h)


@lru_cache(maxsize=64)
def _generate(prompt: str, width: int, height: int, seed: int) -> bytes:
    return render(parse(prompt), (width, height), seed=seed, label=True)


class ImageGenSim:
    """State and handlers of the image generation endpoints; requests go through the chat
    core's pipeline (config, seed, key check, rate limiter, faults, counters)."""

    def __init__(self, core: "_Core") -> None:
        self.core = core
        self.stats = ImageGenStats()
        self.generated: OrderedDict[str, bytes] = OrderedDict()

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(GENERATIONS_PATH, self.generations)
        app.router.add_post("/images/generations", self.generations)
        app.router.add_get("/sim/generated/{name}", self.fetch)

    def reset(self) -> None:
        self.stats.reset()
        self.generated.clear()

    # -- requests -----------------------------------------------------------------------------
    def parse_body(self, body: Any) -> _ImageRequest:
        if not isinstance(body, dict):
            raise _BadRequest("request body must be a JSON object")
        model = body.get("model", "dall-e-2")
        if not isinstance(model, str) or not model:
            raise _BadRequest("'model' must be a non-empty string")
        prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise _BadRequest("Missing required parameter: 'prompt'.")
        if len(prompt) > _MAX_PROMPT:
            raise _BadRequest(f"'prompt' is too long: {len(prompt)} characters, at most {_MAX_PROMPT}")
        n = body.get("n", 1)
        if n is None:
            n = 1
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _MAX_N:
            raise _BadRequest(f"'n' must be an integer in [1, {_MAX_N}], got {n!r}")
        size = body.get("size") or "auto"
        if size not in SIZES:
            raise _BadRequest(f"Invalid value: {size!r}. Supported values are: {', '.join(repr(s) for s in SIZES)}.")
        quality = body.get("quality")
        if quality is not None and quality not in QUALITIES:
            raise _BadRequest(f"Invalid value: {quality!r}. Supported values are: "
                              f"{', '.join(repr(q) for q in QUALITIES)}.")
        fmt = body.get("response_format") or "b64_json"
        if fmt not in _FORMATS:
            raise _BadRequest(f"Invalid value: {fmt!r}. Supported values are: 'b64_json' and 'url'.")
        seed = body.get("seed", 0)
        if seed is None:
            seed = 0
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise _BadRequest(f"'seed' must be an integer, got {seed!r}")
        key = "\x1f".join(("images", model, prompt, str(n), size, str(quality), str(seed)))
        digest = hashlib.sha256(self.core.seed_bytes + b"\x1d" + key.encode("utf-8", "surrogatepass")).digest()
        return _ImageRequest(model, prompt, n, size, quality, fmt, seed, digest,
                             estimate_prompt_tokens(len(prompt), 0), usage_output_tokens(model, size, quality))

    async def generations(self, request: web.Request) -> web.Response:
        return await self.core.run(_OPENAI, request, self.parse_body, lambda req, adm: self._answer(request, req, adm))

    async def _answer(self, request: web.Request, req: _ImageRequest, adm: "Admitted") -> "Served":
        from judgekit.sim.core import Served

        w, h = req.pixels
        sim_seed = self.core.config.seed
        images: list[bytes] = []
        for k in range(req.n):
            if adm.garbage:
                images.append(GARBAGE_BYTES)
                continue
            seed = req.seed + k
            if sim_seed:
                seed = int.from_bytes(hashlib.sha256(f"{sim_seed}|{seed}".encode()).digest()[:8], "big")
            images.append(await asyncio.to_thread(_generate, req.prompt.strip(), w, h, seed))
        data: list[dict[str, Any]] = []
        origin = str(request.url.origin())
        for k, png in enumerate(images):
            item: dict[str, Any] = {"revised_prompt": req.prompt}
            if req.response_format == "url":
                name = f"{adm.digest[:10].hex()}{adm.attempt:02d}{k}"
                self._keep(name, png)
                item["url"] = f"{origin}/sim/generated/{name}.png"
            else:
                item["b64_json"] = base64.b64encode(png).decode("ascii")
            data.append(item)
        self.stats.images_generated += len(images)
        payload: dict[str, Any] = {
            "created": int(time.time()),
            "data": data,
            "size": f"{w}x{h}",
            "quality": req.quality or "auto",
            "output_format": "png",
        }
        if req.output_tokens is not None:
            out = req.output_tokens * req.n
            payload["usage"] = {
                "input_tokens": req.prompt_tokens,
                "output_tokens": out,
                "total_tokens": req.prompt_tokens + out,
                "input_tokens_details": {"text_tokens": req.prompt_tokens, "image_tokens": 0},
            }
        return Served(_dumps(payload), "image", adm.garbage)

    def _keep(self, name: str, png: bytes) -> None:
        self.generated[name] = png
        self.generated.move_to_end(name)
        while len(self.generated) > _KEEP_GENERATED:
            self.generated.popitem(last=False)

    async def fetch(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        png = self.generated.get(name[:-4]) if name.endswith(".png") else None
        if png is None:
            self.stats.generated_not_found += 1
            return web.Response(status=404, text="Not Found")
        self.stats.generated_fetches += 1
        return web.Response(body=png, content_type="image/png")
