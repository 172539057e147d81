"""Image retrieval: one real image for a text query, behind a small interface.

- :class:`Retriever`: ``start()``, ``async search(query) -> Retrieved``, ``close()``, and an
  ``identity`` for cache keys;
- :class:`BraveImageSearch`: the Brave Search API's image search (or the simulator's copy);
- :class:`ImageFolderRetriever`: a local folder of labelled images, matched by text similarity.

Retrievers reach the engine as providers (:mod:`judgekit.providers.retrieval`), so every
retrieval gets the engine's rate limits, retries, cache, resume and accounting.  The concrete
retrievers are imported lazily (the web one needs httpx).
"""

from __future__ import annotations

from typing import Any

from .base import MAX_IMAGE_BYTES, MAX_RESULTS_TRIED, Retrieved, Retriever, Status

__all__ = [
    "Retrieved",
    "Retriever",
    "Status",
    "BraveImageSearch",
    "ImageFolderRetriever",
    "MAX_IMAGE_BYTES",
    "MAX_RESULTS_TRIED",
]


def __getattr__(name: str) -> Any:
    if name == "BraveImageSearch":
        from .brave import BraveImageSearch

        return BraveImageSearch
    if name == "ImageFolderRetriever":
        from .folder import ImageFolderRetriever

        return ImageFolderRetriever
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
