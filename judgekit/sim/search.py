"""The simulator's image search: Brave Search API's ``GET /res/v1/images/search`` and the images
its results point at.

``GET /res/v1/images/search?q=...&count=N&safesearch=strict``
    Answers in Brave's JSON shape (``{"type": "images", "results": [...]}``) with
    ``min(count, SimConfig.search_results)`` results.  The ``X-Subscription-Token`` header must
    be one of ``SimConfig.api_keys`` when that is set (401 otherwise); a missing ``q``, a bad
    ``count`` or ``safesearch`` is a 422 (Brave's ``VALIDATION``).  The chat endpoints' rate
    limiter also limits searches, as the model name :data:`SEARCH_BUCKET` (429 with
    ``Retry-After``).  Errors have Brave's body: ``{"type": "ErrorResponse", "error": {"status",
    "code", "detail", ...}}``.
``GET /sim/images/{slug}.png?q=...&n=K``
    Result K's image: a deterministic PNG (128 x 128; 64 x 64 with ``thumb=1``) of a colour
    drawn from the seed, query and K, with the query written on it, carrying the PNG text
    chunks ``judgekit-label`` (the query, lower-cased and stripped) and ``judgekit-kind``
    (``photo``): what the simulated VLM reads to "see" the image.

Faults (``SimConfig.search_*``), all deterministic: zero results for a share of queries
(``search_no_result_rate``); a 500 or 503 for a share of attempts, drawn per (query, attempt
number) so a retry can succeed (``search_error_rate``); a 404 for the first result's image and
thumbnail for a share of queries (``search_broken_image_rate``).  Queries are compared
lower-cased and stripped.

The counters (:class:`SearchStats`) are merged into ``GET /sim/stats`` by
:mod:`judgekit.sim.app`.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import time
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web

from judgekit.sim.protocol import _JSON, _dumps

if TYPE_CHECKING:
    from judgekit.sim.core import _Core

__all__ = ["ImageSearchSim", "SearchStats", "render_image", "SEARCH_PATH", "SEARCH_BUCKET",
           "LABEL_CHUNK", "KIND_CHUNK"]

SEARCH_PATH = "/res/v1/images/search"
#: the "model" name under which searches are charged to the simulator's rate limiter
SEARCH_BUCKET = "image-search"
#: PNG text chunk holding the label an image shows
LABEL_CHUNK = "judgekit-label"
#: PNG text chunk holding what kind of picture it is
KIND_CHUNK = "judgekit-kind"

_MAX_COUNT = 200
_SAFESEARCH = frozenset({"off", "strict"})
_U64 = float(1 << 64)
_SLUG = re.compile(r"[^a-z0-9]+")
_PAGE_HOST = "images.sim.judgekit.invalid"


@dataclass(slots=True)
class SearchStats:
    """Counters of the image search endpoints."""

    search_requests: int = 0
    """Every search request received."""
    searches_served: int = 0
    """Searches answered 200 (with or without results)."""
    search_no_results: int = 0
    """Searches answered 200 with zero results."""
    search_errors_injected: int = 0
    search_rate_limited: int = 0
    search_auth_failures: int = 0
    search_bad_requests: int = 0
    images_served: int = 0
    images_not_found: int = 0

    def snapshot(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)


def _norm_query(q: str) -> str:
    return q.strip().lower()


def _slug(label: str) -> str:
    return _SLUG.sub("-", label).strip("-")[:60] or "image"


@lru_cache(maxsize=1024)
def render_image(label: str, n: int = 1, size: int = 128, seed: int = 0) -> bytes:
    """The PNG of result ``n`` for ``label``: same arguments, same bytes."""
    import io
    import textwrap

    from PIL import Image, ImageDraw, ImageFont
    from PIL.PngImagePlugin import PngInfo

    h = hashlib.sha256(f"{seed}|{label}|{n}".encode()).digest()
    colour = (48 + h[0] % 176, 48 + h[1] % 176, 48 + h[2] % 176)
    ink = (0, 0, 0) if 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2] > 128 else (255, 255, 255)
    im = Image.new("RGB", (size, size), colour)
    draw = ImageDraw.Draw(im)
    font = ImageFont.load_default()
    lines = textwrap.wrap(label, width=max(4, size // 8))[: max(1, size // 14)]
    for i, line in enumerate(lines):
        draw.text((4, 4 + 13 * i), line, fill=ink, font=font)
    info = PngInfo()
    info.add_text(LABEL_CHUNK, label)  # non-Latin-1 text goes as an iTXt chunk
    info.add_text(KIND_CHUNK, "photo")
    buf = io.BytesIO()
    im.save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


class ImageSearchSim:
    """State and handlers of the image search endpoints; shares the chat core's config, seed and
    rate limiter."""

    def __init__(self, core: "_Core") -> None:
        self.core = core
        self.config = core.config
        self.stats = SearchStats()
        self.attempts: dict[str, int] = {}
        self._seed = str(self.config.seed).encode()
        self.keys = frozenset(self.config.api_keys) if self.config.api_keys is not None else None
        self._ids = 0

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get(SEARCH_PATH, self.search)
        app.router.add_get("/sim/images/{name}", self.image)

    def reset(self) -> None:
        self.stats.reset()
        self.attempts.clear()

    # -- deterministic draws ----------------------------------------------------------------------
    def _u(self, *parts: object) -> float:
        """A uniform draw in [0, 1) from the seed and ``parts``."""
        h = hashlib.sha256(b"|".join([self._seed, *(str(p).encode() for p in parts)])).digest()
        return int.from_bytes(h[:8], "big") / _U64

    def no_result(self, query: str) -> bool:
        return self._u("search-no-result", _norm_query(query)) < self.config.search_no_result_rate

    def broken(self, query: str) -> bool:
        return self._u("search-broken-image", _norm_query(query)) < self.config.search_broken_image_rate

    # -- responses --------------------------------------------------------------------------------
    def _error(self, status: int, code: str, detail: str, headers: dict[str, str] | None = None) -> web.Response:
        self._ids += 1
        body = {
            "type": "ErrorResponse",
            "error": {"id": f"sim-{self._ids:012d}", "status": status, "code": code, "detail": detail, "meta": {}},
            "time": int(time.time()),
        }
        return web.Response(status=status, body=_dumps(body), content_type=_JSON, headers=headers)

    async def search(self, request: web.Request) -> web.Response:
        st = self.stats
        st.search_requests += 1
        cfg = self.config
        if self.keys is not None and request.headers.get("X-Subscription-Token") not in self.keys:
            st.search_auth_failures += 1
            return self._error(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.")
        q = request.query.get("q", "")
        count_raw = request.query.get("count", "50")
        safesearch = request.query.get("safesearch", "strict")
        problem = None
        if not q.strip():
            problem = "q: the query must not be empty"
        elif not count_raw.isdigit() or not 1 <= int(count_raw) <= _MAX_COUNT:
            problem = f"count: must be an integer in [1, {_MAX_COUNT}], not {count_raw!r}"
        elif safesearch not in _SAFESEARCH:
            problem = f"safesearch: must be one of {sorted(_SAFESEARCH)}, not {safesearch!r}"
        if problem is not None:
            st.search_bad_requests += 1
            return self._error(422, "VALIDATION", f"Unable to validate request parameter(s): {problem}")
        decision = self.core.limiter.check(SEARCH_BUCKET, 0)
        if not decision.allowed:
            st.search_rate_limited += 1
            wait = decision.retry_after_s
            h = dict(decision.headers)
            h["Retry-After"] = str(max(1, math.ceil(wait)))
            h["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
            return self._error(429, "RATE_LIMITED", f"Request rate limit exceeded for plan (simulated: {cfg.rpm} "
                                                    "requests per minute).", headers=h)
        query = _norm_query(q)
        attempt = self.attempts.get(query, 0) + 1
        self.attempts[query] = attempt
        delay_ms = cfg.latency_ms
        if cfg.latency_jitter_ms:
            delay_ms += cfg.latency_jitter_ms * (2.0 * self._u("search-latency", query, attempt) - 1.0)
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000.0)
        u_err = self._u("search-error", query, attempt)
        if u_err < cfg.search_error_rate:
            st.search_errors_injected += 1
            status = 500 if u_err < cfg.search_error_rate / 2 else 503
            return self._error(status, "INTERNAL_ERROR" if status == 500 else "SERVICE_UNAVAILABLE",
                               "The server had an error while processing the search (simulated).",
                               headers=decision.headers or None)
        n_results = 0 if self.no_result(query) else min(int(count_raw), cfg.search_results)
        origin = str(request.url.origin())
        slug = _slug(query)
        results = [self._result(origin, q.strip(), query, slug, k) for k in range(1, n_results + 1)]
        st.searches_served += 1
        if not results:
            st.search_no_results += 1
        payload = {
            "type": "images",
            "query": {"original": q, "spellcheck_off": True, "show_strict_warning": False},
            "results": results,
            "extra": {"might_be_offensive": False},
        }
        return web.Response(body=_dumps(payload), content_type=_JSON, headers=decision.headers or None)

    def _result(self, origin: str, original: str, query: str, slug: str, k: int) -> dict[str, Any]:
        image = f"{origin}/sim/images/{slug}.png?q={quote(query)}&n={k}"
        page = f"https://{_PAGE_HOST}/{slug}/{k}"
        return {
            "type": "image_result",
            "title": f"{original} - simulated photo {k}",
            "url": page,
            "source": _PAGE_HOST,
            "page_fetched": "2025-01-01T00:00:00Z",
            "thumbnail": {"src": image + "&thumb=1", "width": 64, "height": 64},
            "properties": {"url": image, "placeholder": image + "&thumb=1", "width": 128, "height": 128},
            "meta_url": {"scheme": "https", "netloc": _PAGE_HOST, "hostname": _PAGE_HOST, "path": f"/{slug}/{k}"},
            "confidence": "high",
        }

    async def image(self, request: web.Request) -> web.Response:
        st = self.stats
        name = request.match_info["name"]
        q = request.query.get("q", "")
        n_raw = request.query.get("n", "1")
        label = _norm_query(q)
        if not name.endswith(".png") or not label or not n_raw.isdigit() or int(n_raw) < 1:
            st.images_not_found += 1
            return web.Response(status=404, text="Not Found")
        n = int(n_raw)
        if n == 1 and self.broken(label):
            st.images_not_found += 1
            return web.Response(status=404, text="Not Found (simulated broken image)")
        size = 64 if request.query.get("thumb") == "1" else 128
        st.images_served += 1
        return web.Response(body=render_image(label, n, size, self.config.seed), content_type="image/png")
