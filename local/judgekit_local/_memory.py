"""How much memory a model takes: measured once loaded, estimated from its files before.

- :func:`measure`: the bytes of every parameter and buffer of the ``torch.nn.Module`` objects
  reachable from a loaded object (a model, a processor+model bundle, a diffusers pipeline's
  components), each tensor counted once; an object with an integer ``nbytes`` attribute (a
  plug-in encoder) reports its own size.
- :func:`estimate`: before loading, from the checkpoint's safetensors headers (tensor shapes,
  counted at the dtype it will be loaded in), for a local folder or a hub snapshot already in the
  local cache; ``None`` when it cannot tell (the budget is then enforced after the load).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import torch

__all__ = ["estimate", "measure"]


def measure(obj: Any) -> int:
    seen_objects: set[int] = set()
    seen_tensors: set[tuple] = set()
    total = 0

    def count(t: torch.Tensor) -> None:
        nonlocal total
        ptr = t.data_ptr()
        key = (ptr, t.numel(), t.dtype) if ptr else (id(t),)
        if key not in seen_tensors:
            seen_tensors.add(key)
            total += t.numel() * t.element_size()

    def visit(o: Any, depth: int) -> None:
        nonlocal total
        if depth > 4 or id(o) in seen_objects or o is None or isinstance(o, (str, bytes, int, float)):
            return
        seen_objects.add(id(o))
        if isinstance(o, torch.nn.Module):
            for t in o.parameters():
                count(t)
            for t in o.buffers():
                count(t)
        elif isinstance(o, torch.Tensor):
            count(o)
        elif isinstance(o, dict):
            for v in list(o.values()):
                visit(v, depth + 1)
        elif isinstance(o, (list, tuple)):
            for v in o:
                visit(v, depth + 1)
        elif isinstance(getattr(o, "nbytes", None), int) and type(o).__module__ != "numpy":
            total += o.nbytes
        elif hasattr(o, "__dict__"):
            for v in list(vars(o).values()):
                visit(v, depth + 1)

    visit(obj, 0)
    return total


_SAFETENSORS_BYTES = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2,
    "I16": 2, "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1,
}
_FLOAT = {"F64", "F32", "F16", "BF16"}


def _safetensors_bytes(path: Path, element_size: int) -> int:
    """The bytes of a safetensors file's tensors, floating ones counted at ``element_size``."""
    with path.open("rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    total = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        numel = 1
        for d in info["shape"]:
            numel *= d
        size = element_size if info["dtype"] in _FLOAT else _SAFETENSORS_BYTES.get(info["dtype"], 4)
        total += numel * size
    return total


def _local_folder(model_id: str, revision: str | None) -> Path | None:
    p = Path(model_id)
    if p.is_dir():
        return p
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model_id, revision=revision, local_files_only=True))
    except Exception:
        return None


def estimate(model_id: str, revision: str | None, dtype: torch.dtype) -> int | None:
    """Bytes the model's weights will take once loaded in ``dtype``, or None when unknown."""
    folder = _local_folder(model_id, revision)
    if folder is None:
        return None
    element_size = torch.empty((), dtype=dtype).element_size()
    total, found = 0, False
    by_folder: dict[Path, list[Path]] = {}
    for f in folder.rglob("*.safetensors"):
        by_folder.setdefault(f.parent, []).append(f)
    for files in by_folder.values():
        # diffusers repos keep variants side by side (x.safetensors, x.fp16.safetensors): count one.
        plain = [f for f in files if f.name.count(".") == 1]
        for f in plain or files:
            try:
                total += _safetensors_bytes(f, element_size)
                found = True
            except (OSError, ValueError, KeyError, struct.error):
                continue
    return total if found else None
