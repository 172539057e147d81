"""Image retrievers as providers, so every retrieval goes through the engine like a model call
(rate limits, retries, the cache, resume and accounting come for free).

A retrieval request is a :class:`~judgekit.types.ChatRequest` whose last message's text is the
query.  The response's ``text`` is :meth:`Retrieved.to_json() <judgekit.retrieval.Retrieved.to_json>`
(``finish_reason`` is its status); the image bytes go to the engine's
:class:`~judgekit.blobs.BlobStore` (the attribute ``blobs``, set by the engine) under their
sha256, so a cached retrieval names its image without carrying it.  Usage is zero tokens.

- ``brave``: :class:`BraveProvider`, the Brave Search API (key in ``BRAVE_SEARCH_API_KEY``);
- ``sim_image_search``: :class:`SimImageSearchProvider`, the simulator's copy of that API
  (shares the simulator process of ``sim`` models with the same ``sim`` settings);
- ``image_folder``: :class:`ImageFolderProvider`, a local folder of labelled images (``path``).
"""

from __future__ import annotations

import asyncio
import time
from abc import abstractmethod

from ..blobs import BlobStore
from ..errors import BadRequest, SpecError
from ..retrieval.base import Retriever
from ..types import ChatRequest, ChatResponse, Usage
from .base import Provider
from .replies import sha256_at
from .sim import SimulatorLink, UsesSimulator

__all__ = ["RetrievalProvider", "BraveProvider", "SimImageSearchProvider", "ImageFolderProvider",
           "query_of"]

# simulator settings that change what its image search answers (faults and limits do not)
_SEARCH_RESPONSE_FIELDS = ("seed", "search_results", "search_no_result_rate", "search_broken_image_rate")


def query_of(request: ChatRequest) -> str:
    """The query of a retrieval request: the text of its last message, stripped."""
    return request.messages[-1].text().strip() if request.messages else ""


class RetrievalProvider(Provider):
    """Adapter from a :class:`~judgekit.retrieval.Retriever` to the provider interface."""

    #: where retrieved images are stored; set by the engine before the first call
    blobs: BlobStore | None
    stores_outputs = True  # the image it found

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self.retriever: Retriever | None = None

    @abstractmethod
    async def make_retriever(self) -> Retriever:
        """The retriever this provider wraps (called by ``start()``)."""

    @property
    def identity(self) -> str:
        if self.retriever is None:
            return f"{self.kind}:not-started"
        return self.retriever.identity

    def output_blobs(self, response: ChatResponse) -> tuple[str, ...]:
        return sha256_at(response.text, None)

    async def start(self) -> None:
        if self.retriever is None:
            retriever = await self.make_retriever()
            await retriever.start()
            self.retriever = retriever

    async def generate(self, request: ChatRequest) -> ChatResponse:
        query = query_of(request)
        if not query:
            raise BadRequest("image retrieval needs a query: the request's last message has no text")
        if self.blobs is None:
            raise RuntimeError(f"model '{self.alias}' ({self.kind}): no blob store to keep retrieved images "
                               "in (the engine sets provider.blobs)")
        if self.retriever is None:
            raise RuntimeError(f"model '{self.alias}' ({self.kind}): start() was not called")
        t0 = time.perf_counter()
        found = await self.retriever.search(query)
        if found.status == "ok" and found.data is not None:
            sha = await asyncio.to_thread(self.blobs.put, found.data, found.mime)
            found.sha256 = sha
        return ChatResponse(
            text=found.to_json(),
            usage=Usage(0, 0),
            finish_reason=found.status,
            latency_s=time.perf_counter() - t0,
        )

    async def close(self) -> None:
        if self.retriever is not None:
            retriever, self.retriever = self.retriever, None
            await retriever.close()


class BraveProvider(RetrievalProvider):
    """The Brave Search API's image search; ``base_url`` defaults to Brave's."""

    kind = "brave"

    async def make_retriever(self) -> Retriever:
        from ..retrieval.brave import BraveImageSearch

        return BraveImageSearch(api_key=self.api_key(), base_url=self.spec.base_url,
                                timeout_s=self.spec.limits.timeout_s or 60.0, source=self.kind)


class SimImageSearchProvider(UsesSimulator, RetrievalProvider):
    """The simulator's Brave-shaped image search.  Settings from the spec's ``sim`` table (any
    :class:`judgekit.sim.SimConfig` field, or ``url`` of a simulator already running); aliases
    with the same settings, chat ``sim`` models included, share one simulator process."""

    kind = "sim_image_search"

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self.link = SimulatorLink(spec.sim)

    @property
    def identity(self) -> str:
        return "sim_image_search:" + self.link.identity(_SEARCH_RESPONSE_FIELDS)

    async def make_retriever(self) -> Retriever:
        from ..retrieval.brave import BraveImageSearch

        await self.link.connect()  # search lives at the server's root, not under /v1
        self.remember_secret(self.link.key)
        return BraveImageSearch(api_key=self.link.key, base_url=self.link.root_url,
                                timeout_s=self.spec.limits.timeout_s or 60.0, source=self.kind)


class ImageFolderProvider(RetrievalProvider):
    """A local folder of labelled images (the spec's ``path``), matched with the default
    ``min_similarity`` of :class:`~judgekit.retrieval.ImageFolderRetriever`."""

    kind = "image_folder"

    async def make_retriever(self) -> Retriever:
        from ..retrieval.folder import ImageFolderRetriever

        if not self.spec.path:
            raise SpecError(f"model '{self.alias}' (image_folder): needs path, the folder of labelled images")
        return ImageFolderRetriever(self.spec.path)
