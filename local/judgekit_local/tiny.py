"""``tiny:NAME`` model ids: the tiny random-weight models of :mod:`judgekit_local.testing`, built
on first use into a cache folder and loaded from there like any checkpoint.

They let a shipped runner (the MMGenBench and MMIE samples) run its local stages on a machine with
no model hub: ``model = "tiny:sd"`` is a real diffusers Stable Diffusion pipeline, ``tiny:clip`` a
real transformers CLIP vision encoder, ``tiny:vlm`` a real LLaVA-style image-text-to-text model,
``tiny:internvl`` an InternVL-shaped remote-code chat model (``chat_api = "internvl"``, needs
``trust_remote_code``), each with seeded random weights, so every machine builds the same
weights.  What they draw, encode or say is noise: they exercise the pipeline, never a model's
quality.

The folder is ``$JUDGEKIT_LOCAL_TINY_DIR``, else ``$XDG_CACHE_HOME/judgekit-local/tiny``, else
``~/.cache/judgekit-local/tiny``; one sub-folder per model and builder version, written to a
temporary folder and renamed into place, so two workers building at once both end up with one
complete copy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

from . import testing

__all__ = ["TINY_PREFIX", "TINY_MODELS", "TINY_DIR_ENV", "is_tiny", "tiny_dir", "resolve"]

TINY_PREFIX = "tiny:"
TINY_DIR_ENV = "JUDGEKIT_LOCAL_TINY_DIR"
#: name -> (builder, version): bump the version when a builder changes its model
TINY_MODELS = {
    "clip": (testing.build_tiny_clip, 1),
    "vlm": (testing.build_tiny_vlm, 1),
    "sd": (testing.build_tiny_diffusion, 1),
    "internvl": (testing.build_tiny_internvl, 1),
}

_lock = threading.Lock()


def is_tiny(model_id: str) -> bool:
    return model_id.startswith(TINY_PREFIX)


def tiny_dir() -> Path:
    env = os.environ.get(TINY_DIR_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "judgekit-local" / "tiny"


def resolve(model_id: str) -> str:
    """The folder to load ``model_id`` from: built on first use for ``tiny:NAME``; any other id is
    returned unchanged.  An unknown tiny name is a ValueError listing the known ones."""
    if not is_tiny(model_id):
        return model_id
    name = model_id[len(TINY_PREFIX):]
    try:
        builder, version = TINY_MODELS[name]
    except KeyError:
        raise ValueError(f"unknown tiny model {model_id!r} (known: "
                         f"{', '.join(TINY_PREFIX + n for n in TINY_MODELS)})") from None
    target = tiny_dir() / f"{name}-v{version}"
    if (target / ".complete").exists():
        return str(target)
    with _lock:
        if (target / ".complete").exists():
            return str(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
        try:
            builder(tmp)
            (tmp / ".complete").write_text("ok\n", encoding="utf-8")
            try:
                os.rename(tmp, target)
            except OSError:  # another process finished first: keep its copy
                if not (target / ".complete").exists():
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return str(target)
