"""Providers by name, each imported lazily so a missing SDK only matters when it is used.

- ``openai``: the OpenAI API and any OpenAI-compatible server (``base_url``); ``azure`` the same
  SDK's Azure client;
- ``gemini``: the google-genai SDK;
- ``anthropic``: Claude through the anthropic SDK (the Messages API);
- ``sim``: judgekit's simulator, over real HTTP through the openai SDK;
- ``local``: models run by the judgekit-local worker process (torch lives there, never here);
- image retrievers (:mod:`judgekit.providers.retrieval`): ``brave`` (the Brave Search API's image
  search), ``sim_image_search`` (the simulator's copy of it), ``image_folder`` (a local folder of
  labelled images);
- image generators (:mod:`judgekit.providers.images`): ``openai_image`` (the OpenAI Images API, or a
  compatible server at ``base_url``), ``sim_image`` (the simulator's copy of it).
"""

from __future__ import annotations

import importlib

from .base import Provider

__all__ = ["Provider", "create_provider", "PROVIDERS"]

#: provider name -> (module, class, pip package that provides its SDK)
PROVIDERS = {
    "openai": ("judgekit.providers.openai", "OpenAIProvider", "openai[aiohttp]"),
    "azure": ("judgekit.providers.openai", "OpenAIProvider", "openai[aiohttp]"),
    "gemini": ("judgekit.providers.gemini", "GeminiProvider", "google-genai"),
    "anthropic": ("judgekit.providers.anthropic", "AnthropicProvider", "anthropic[aiohttp]"),
    "sim": ("judgekit.providers.sim", "SimProvider", "openai[aiohttp]"),
    "local": ("judgekit.providers.local", "LocalProvider", "judgekit"),
    "brave": ("judgekit.providers.retrieval", "BraveProvider", "httpx"),
    "sim_image_search": ("judgekit.providers.retrieval", "SimImageSearchProvider", "httpx"),
    "image_folder": ("judgekit.providers.retrieval", "ImageFolderProvider", "httpx"),
    "openai_image": ("judgekit.providers.images", "OpenAIImageProvider", "openai[aiohttp]"),
    "sim_image": ("judgekit.providers.images", "SimImageProvider", "openai[aiohttp]"),
}


def create_provider(alias: str, spec) -> Provider:
    """Instantiate the provider a model spec names.  Nothing is connected until ``start()``."""
    try:
        module, cls, package = PROVIDERS[spec.provider]
    except KeyError:
        raise ValueError(f"unknown provider {spec.provider!r} (known: {', '.join(PROVIDERS)})") from None
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"provider '{spec.provider}' needs the package {package}: pip install '{package}' ({e})") from e
    return getattr(mod, cls)(alias, spec)
