"""The Brave Search API's image search as a retriever.

One search is ``GET {base_url}/res/v1/images/search?q=...&count=N&safesearch=strict`` with
``Accept: application/json`` and ``X-Subscription-Token: <key>``.  The answer::

    {"type": "images",
     "results": [{"title": ..., "url": <page url>, "source": <domain>,
                  "thumbnail": {"src": <thumbnail url>},
                  "properties": {"url": <original image url>, ...}}, ...]}

Results are taken in order.  For each, the original image (``properties.url``) is downloaded,
and when that fails its thumbnail (``thumbnail.src``, served by Brave's image proxy); the first
result with a usable image wins.  A download fails on an HTTP error, bytes that are not an image
(checked with :func:`judgekit.blobs.sniff_mime`, whatever the Content-Type says), more than
:data:`~judgekit.retrieval.base.MAX_IMAGE_BYTES`, a timeout or a connection error.  After
:data:`~judgekit.retrieval.base.MAX_RESULTS_TRIED` results the retrieval is ``image_error``
with every reason.

The search call's failures raise (see :func:`classify_response`).  Only the search request
carries the key; image downloads go to third-party hosts without it, and only they follow
redirects.  The same class talks to the simulator's copy of the API (``judgekit sim``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import httpx

from ..blobs import sniff_mime
from ..errors import AuthError, BadRequest, ProviderError, RateLimited, TransientError
from ..providers.base import retry_after_from_headers
from .base import MAX_IMAGE_BYTES, MAX_RESULTS_TRIED, Retrieved, Retriever

__all__ = ["BraveImageSearch", "classify_response", "brave_reset_seconds", "DEFAULT_BASE_URL",
           "SEARCH_PATH", "DEFAULT_COUNT", "DOWNLOAD_TIMEOUT_S", "MAX_RETRY_AFTER_S"]

DEFAULT_BASE_URL = "https://api.search.brave.com"
SEARCH_PATH = "/res/v1/images/search"
#: results asked for per search (a few spares for results without a usable image)
DEFAULT_COUNT = 5
#: an image download never waits longer than this, whatever the spec's timeout
DOWNLOAD_TIMEOUT_S = 30.0
#: a 429 never asks the engine to wait longer than this (Brave reports its monthly window too)
MAX_RETRY_AFTER_S = 60.0

_USER_AGENT = "judgekit (image retrieval for evaluations)"


class _ImageFailed(Exception):
    """Internal: one image URL could not be used; the message is the reason."""


def brave_reset_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds until Brave lets the next request through, from its own headers.

    Brave sends one value per window, e.g. ``X-RateLimit-Remaining: 0, 1000`` and
    ``X-RateLimit-Reset: 1, 1419704`` (per second, per month).  The wait is the reset of the
    longest exhausted window, else of the shortest window; None without the headers.
    """
    resets = _numbers(headers.get("x-ratelimit-reset"))
    if not resets:
        return None
    remaining = _numbers(headers.get("x-ratelimit-remaining"))
    exhausted = [r for r, left in zip(resets, remaining) if left <= 0]
    return max(exhausted) if exhausted else min(resets)


def _numbers(value: str | None) -> list[float]:
    out = []
    for part in (value or "").split(","):
        try:
            out.append(float(part.strip()))
        except ValueError:
            pass
    return out


def _error_detail(body: bytes) -> tuple[str, str]:
    """``(code, detail)`` from Brave's ``{"type": "ErrorResponse", "error": {...}}`` body."""
    try:
        obj = json.loads(body)
        err = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(err, dict):
            return str(err.get("code") or ""), str(err.get("detail") or err.get("message") or "")
    except ValueError:
        pass
    return "", body[:200].decode("utf-8", "replace").strip()


def classify_response(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """The judgekit error for a search answered with ``status`` >= 400.

    429 -> RateLimited (wait from ``Retry-After`` and friends, else Brave's
    ``X-RateLimit-Reset``, capped at :data:`MAX_RETRY_AFTER_S`); 401/403, and Brave's 422
    ``SUBSCRIPTION_TOKEN_INVALID`` -> AuthError; 408, 409 and 5xx -> TransientError; other
    4xx (400, 404, 422) -> BadRequest.
    """
    code, detail = _error_detail(body)
    msg = f"HTTP {status}" + (f" {code}" if code else "") + (f": {detail}" if detail else "")
    if status == 429:
        wait = retry_after_from_headers(headers)
        if wait is None:
            wait = brave_reset_seconds(headers)
        if wait is not None and wait > MAX_RETRY_AFTER_S:
            msg += f" (quota resets in {wait:.0f} s)"
            wait = MAX_RETRY_AFTER_S
        return RateLimited(msg, status=status, retry_after=wait)
    if status in (401, 403) or "TOKEN" in code.upper():
        return AuthError(msg, status=status)
    if status in (408, 409) or status >= 500:
        return TransientError(msg, status=status, retry_after=retry_after_from_headers(headers))
    return BadRequest(msg, status=status)


class BraveImageSearch(Retriever):
    """Image search through the Brave Search API (or anything that answers in its shape).

    ``client`` replaces the httpx client (tests pass one with a mock transport); otherwise one
    is created at ``start()`` and shared by every search of this retriever.
    """

    name = "brave"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        count: int = DEFAULT_COUNT,
        safesearch: str = "strict",
        max_results_tried: int = MAX_RESULTS_TRIED,
        max_image_bytes: int = MAX_IMAGE_BYTES,
        source: str | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.api_key = api_key
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout_s = timeout_s
        self.count = count
        self.safesearch = safesearch
        self.max_results_tried = max_results_tried
        self.max_image_bytes = max_image_bytes
        self.source = source or self.name
        self._client = client
        self._own_client = client is None

    @property
    def search_url(self) -> str:
        return self.base_url + SEARCH_PATH

    @property
    def identity(self) -> str:
        # the endpoint and every parameter that changes the results (the key does not)
        return f"{self.search_url}?count={self.count}&safesearch={self.safesearch}"

    async def start(self) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s),
                follow_redirects=False,
                headers={"User-Agent": _USER_AGENT},
            )
            self._own_client = True

    async def close(self) -> None:
        if self._client is not None and self._own_client:
            await self._client.aclose()
        self._client = None

    async def search(self, query: str) -> Retrieved:
        query = query.strip()
        if not query:
            raise BadRequest("empty image search query")
        results = await self._results(query)
        if not results:
            return Retrieved(status="no_result", query=query, source=self.source)
        reasons: list[str] = []
        for rank, result in enumerate(results[: self.max_results_tried], start=1):
            urls = _image_urls(result)
            if not urls:
                reasons.append(f"result {rank}: no image URL")
                continue
            for url in urls:
                try:
                    data, mime = await self._download(url)
                except _ImageFailed as e:
                    reasons.append(f"result {rank}: {e} ({url})")
                    continue
                return Retrieved(
                    status="ok",
                    query=query,
                    data=data,
                    mime=mime,
                    url=url,
                    page_url=_str(result.get("url")),
                    title=_str(result.get("title")),
                    source=self.source,
                )
        return Retrieved(status="image_error", query=query, source=self.source, error="; ".join(reasons))

    # -- the API call ---------------------------------------------------------------------------
    async def _results(self, query: str) -> list[dict[str, Any]]:
        client = self._require_client()
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["X-Subscription-Token"] = self.api_key
        params = {"q": query, "count": str(self.count), "safesearch": self.safesearch}
        try:
            resp = await client.get(self.search_url, params=params, headers=headers)
        except httpx.TimeoutException as e:
            raise TransientError(f"timeout: {type(e).__name__}: {e}") from e
        except httpx.HTTPError as e:  # connection refused/reset, protocol errors
            raise TransientError(f"connection error: {type(e).__name__}: {e}") from e
        if resp.status_code >= 400:
            raise classify_response(resp.status_code, resp.headers, resp.content)
        try:
            body = resp.json()
        except ValueError:
            raise TransientError(f"malformed image search response (not JSON): {resp.text[:200]!r}") from None
        results = body.get("results") if isinstance(body, dict) else None
        if results is None and isinstance(body, dict) and body.get("type") == "images":
            return []
        if not isinstance(results, list):
            raise TransientError(f"malformed image search response: {str(body)[:200]}")
        return [r for r in results if isinstance(r, dict)]

    # -- image downloads ------------------------------------------------------------------------
    async def _download(self, url: str) -> tuple[bytes, str]:
        if not url.startswith(("http://", "https://")):
            raise _ImageFailed("not an http(s) URL")
        client = self._require_client()
        timeout = httpx.Timeout(min(self.timeout_s, DOWNLOAD_TIMEOUT_S))
        try:
            async with client.stream("GET", url, follow_redirects=True, timeout=timeout,
                                     headers={"Accept": "image/*"}) as resp:
                if resp.status_code >= 400:
                    raise _ImageFailed(f"HTTP {resp.status_code}")
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_image_bytes:
                    raise _ImageFailed(f"larger than {self.max_image_bytes} bytes ({declared})")
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_image_bytes:
                        raise _ImageFailed(f"larger than {self.max_image_bytes} bytes")
                    chunks.append(chunk)
                content_type = resp.headers.get("content-type", "?")
        except httpx.TimeoutException:
            raise _ImageFailed("download timed out") from None
        except httpx.HTTPError as e:
            raise _ImageFailed(f"download failed: {type(e).__name__}: {e}") from None
        data = b"".join(chunks)
        mime = sniff_mime(data)
        if mime is None:
            raise _ImageFailed(f"not an image (content-type {content_type}, {len(data)} bytes)")
        return data, mime

    def _require_client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise RuntimeError("BraveImageSearch.start() was not called")
        return self._client


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _image_urls(result: Mapping[str, Any]) -> list[str]:
    """The original image URL, then the thumbnail's (without blanks and duplicates)."""
    props = result.get("properties")
    thumb = result.get("thumbnail")
    urls = [
        props.get("url") if isinstance(props, Mapping) else None,
        thumb.get("src") if isinstance(thumb, Mapping) else None,
    ]
    out: list[str] = []
    for u in urls:
        if isinstance(u, str):
            u = u.strip()
            if u and u not in out:
                out.append(u)
    return out
