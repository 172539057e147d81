"""Helpers the task modules share: input errors, images from the store, from_pretrained kwargs."""

from __future__ import annotations

import io
import re
from functools import lru_cache
from importlib import metadata
from typing import Any

__all__ = [
    "BadInput",
    "diffusers_dtype_kwarg",
    "hf_kwargs",
    "load_image",
    "transformers_dtype_kwarg",
]


class BadInput(ValueError):
    """An item's (or a batch's params') inputs are unusable: ``error_kind: "bad_input"``."""


def hf_kwargs(model: dict) -> dict[str, Any]:
    """``revision`` and ``trust_remote_code`` for every ``from_pretrained`` (remote code off by default)."""
    kwargs: dict[str, Any] = {"trust_remote_code": bool(model.get("trust_remote_code") or False)}
    if model.get("revision"):
        kwargs["revision"] = model["revision"]
    return kwargs


def _version(dist: str) -> tuple[int, ...]:
    try:
        text = metadata.version(dist)
    except metadata.PackageNotFoundError:
        return (0,)
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


@lru_cache(maxsize=None)
def transformers_dtype_kwarg() -> str:
    """transformers >= 4.56 takes ``dtype=``; older releases only ``torch_dtype=``."""
    return "dtype" if _version("transformers") >= (4, 56) else "torch_dtype"


@lru_cache(maxsize=None)
def diffusers_dtype_kwarg() -> str:
    """Recent diffusers take ``dtype=`` and deprecate ``torch_dtype=``; older ones only the latter."""
    try:
        from diffusers.utils.deprecation_utils import _resolve_dtype  # noqa: F401
    except ImportError:
        return "torch_dtype"
    return "dtype"


def load_image(ref: Any, store) -> Any:
    """A ``{"sha256": ...}`` reference -> an RGB ``PIL.Image``; raises :class:`BadInput`."""
    from PIL import Image

    from ..store import BlobMissing

    if not isinstance(ref, dict) or "sha256" not in ref:
        raise BadInput(f'an image must be {{"sha256": ...}}, got {ref!r:.80}')
    try:
        data = store.read(ref["sha256"])
    except BlobMissing as exc:
        raise BadInput(str(exc)) from None
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
        return img.convert("RGB")
    except Exception as exc:  # PIL raises several types for broken files
        raise BadInput(f"cannot decode image {ref['sha256'][:12]}...: {exc}") from None
