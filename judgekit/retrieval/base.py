"""What a retriever returns, and the interface every retriever implements.

A retriever turns a text query (a model's guess) into ONE real image.  Two kinds of failure are
kept apart:

- the *API* failed (rate limited, 5xx, timeout, bad key, bad request): the retriever RAISES a
  :class:`~judgekit.errors.ProviderError` subclass, so the engine retries, waits or stops exactly
  as it does for a model call;
- the API answered, but about the *result*: no result at all, or no result whose image could be
  fetched.  These are values, :class:`Retrieved` with ``status`` ``"no_result"`` or
  ``"image_error"`` (with the reason in ``error``), cached like any answer.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ..blobs import sniff_mime

__all__ = ["Retrieved", "Retriever", "Status", "MAX_IMAGE_BYTES", "MAX_RESULTS_TRIED"]

Status = Literal["ok", "no_result", "image_error"]
_STATUSES = frozenset(get_args(Status))

#: an image larger than this is refused (and the next result tried)
MAX_IMAGE_BYTES = 10 * 1024 * 1024
#: results whose image is tried before the retrieval ends as ``image_error``
MAX_RESULTS_TRIED = 3

# the serialised fields, in the order they are written
_JSON_FIELDS = ("status", "query", "sha256", "mime", "url", "page_url", "title", "source", "error")


@dataclass(kw_only=True, slots=True)
class Retrieved:
    """The outcome of one retrieval.

    ``to_json()`` is what the engine caches (the bytes never go into the cache: they live in a
    :class:`~judgekit.blobs.BlobStore` under ``sha256``).
    """

    status: Status
    """``ok``: an image was found and fetched; ``no_result``: nothing matched the query;
    ``image_error``: results were found but no image could be fetched (see ``error``)."""
    query: str
    """The query as searched."""
    sha256: str | None = None
    """Content hash of the image bytes (the blob's name); set from ``data`` when not given."""
    mime: str | None = None
    """The image type, sniffed from the bytes (``image/png``, ``image/jpeg``...)."""
    url: str | None = None
    """Where the image came from: its URL, or its file path for a local folder."""
    page_url: str | None = None
    """The web page that shows the image, when known."""
    title: str | None = None
    """The result's title (web search) or label (local folder)."""
    source: str
    """The retriever's name (``brave``, ``image_folder``...)."""
    error: str | None = None
    """Why there is no image (``image_error``, and a note for some ``no_result``)."""
    data: bytes | None = field(default=None, repr=False, compare=False)
    """The image bytes (``ok`` only); never serialised."""

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise ValueError(f"Retrieved.status must be one of {sorted(_STATUSES)}, not {self.status!r}")
        if self.data is not None:
            if self.sha256 is None:
                self.sha256 = hashlib.sha256(self.data).hexdigest()
            if self.mime is None:
                self.mime = sniff_mime(self.data)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> str:
        """JSON of every field but ``data``, always in the same key order."""
        return json.dumps({k: getattr(self, k) for k in _JSON_FIELDS}, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "Retrieved":
        """The inverse of :meth:`to_json` (``data`` is None: read it from the blob store).
        Unknown keys are ignored; a missing ``status``, ``query`` or ``source`` is a ValueError."""
        try:
            obj: Any = json.loads(text)
        except ValueError as e:
            raise ValueError(f"not a Retrieved record: {e}") from None
        if not isinstance(obj, dict):
            raise ValueError(f"not a Retrieved record: {text[:80]!r}")
        missing = [k for k in ("status", "query", "source") if not isinstance(obj.get(k), str)]
        if missing:
            raise ValueError(f"not a Retrieved record: missing {', '.join(missing)}")
        return cls(**{k: obj.get(k) for k in _JSON_FIELDS})


class Retriever(ABC):
    """Finds one real image for a text query.

    ``search`` makes ONE attempt: API failures raise :class:`~judgekit.errors.ProviderError`
    subclasses (the engine retries them); outcomes about the results are :class:`Retrieved`
    values.  ``start`` before the first search, ``close`` after the last.
    """

    name: str = ""

    @property
    @abstractmethod
    def identity(self) -> str:
        """Everything that changes what ``search`` returns for a query, as a string that goes
        into cache keys (an endpoint URL; a folder's path and index fingerprint)."""

    async def start(self) -> None:
        """Open clients or build the index."""

    @abstractmethod
    async def search(self, query: str) -> Retrieved:
        """One image for ``query``."""

    async def close(self) -> None:
        """Release clients."""
