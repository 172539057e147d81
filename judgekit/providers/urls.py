"""Base URLs as each SDK wants them, whether or not the spec's ends in the API's version.

The SDKs join a base URL and a route differently: the openai SDK posts to ``{base}/chat/completions``
(``/files``, ``/batches``), so its base ends in ``/v1``; Anthropic's posts to ``{base}/v1/messages``
and Google's to ``{base}/v1beta/models/...``, so theirs end before the version; Azure's client
adds ``/openai/deployments/...`` to the resource's endpoint.  A spec may write either form: a
server that answers chat at its root but its Files and Batches only under ``/v1`` (as the
simulator, llama.cpp and LiteLLM do) would otherwise take chat calls and refuse the batch after the
candidates were paid.  So every endpoint of a provider goes to the same, normalised base:

- OpenAI-compatible (``openai``, ``sim``, ``openai_image``): a base URL with no path (``http://host:8000``
  or ``.../``) means the server's ``/v1``; a base with a path (``/v1``, ``/openai/v1``,
  ``/v1beta/openai``, ``/api``) is used as written (a trailing ``/`` dropped).
- ``azure``: the resource endpoint; a trailing ``/openai`` or ``/openai/v1`` is dropped.
- ``anthropic``: a trailing ``/v1`` is dropped.
- ``gemini``: a trailing ``/v1beta``, ``/v1alpha`` or ``/v1`` is taken off and becomes the SDK's
  ``api_version`` (none: the SDK's default, ``v1``).

The cache key keeps the base URL as the spec writes it (a cache made before stays valid).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["openai_base_url", "azure_endpoint", "anthropic_base_url", "gemini_base_url"]


def _path(url: str) -> tuple[object, str]:
    parts = urlsplit(url.strip())
    return parts, parts.path.rstrip("/")


def _with_path(parts, path: str) -> str:
    return urlunsplit(parts._replace(path=path))


def _strip(url: str, suffixes: tuple[str, ...]) -> str:
    parts, path = _path(url)
    for suffix in suffixes:
        if path.lower().endswith(suffix):
            path = path[: -len(suffix)].rstrip("/")
            break
    return _with_path(parts, path)


def openai_base_url(url: str) -> str:
    """The openai SDK's ``base_url`` for an OpenAI-compatible server: a bare host gets ``/v1``."""
    parts, path = _path(url)
    return _with_path(parts, path or "/v1")


def azure_endpoint(url: str) -> str:
    """The Azure client's ``azure_endpoint``: the resource, without ``/openai`` or ``/openai/v1``."""
    return _strip(url, ("/openai/v1", "/openai"))


def anthropic_base_url(url: str) -> str:
    """The anthropic SDK's ``base_url``: without a trailing ``/v1`` (the SDK adds it)."""
    return _strip(url, ("/v1",))


def gemini_base_url(url: str) -> tuple[str, str | None]:
    """The google-genai SDK's ``base_url`` and ``api_version``: a trailing API version (``/v1``,
    ``/v1beta``, ``/v1alpha``) is taken off the URL (the SDK adds one to every path) and becomes the
    version; None: the SDK's default."""
    parts, path = _path(url)
    head, _, last = path.rpartition("/")
    if last.lower() in ("v1", "v1beta", "v1alpha"):
        return _with_path(parts, head.rstrip("/")), last.lower()
    return _with_path(parts, path), None
