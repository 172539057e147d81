"""Which device and dtype a model runs on.

- device ``"auto"``: ``cuda`` when available, else ``mps``, else ``cpu``; anything else
  (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``) is used as given.
- dtype ``"auto"``: bf16 on CUDA when the GPU supports it, else fp16 on CUDA; fp32 on CPU and
  MPS. ``"bf16"``, ``"fp16"`` and ``"fp32"`` are used as given.
"""

from __future__ import annotations

import torch

__all__ = ["DTYPES", "dtype_name", "empty_cache", "pick_device", "pick_dtype"]

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32"}


def pick_device(spec: str | None = "auto") -> str:
    if spec in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    kind = torch.device(spec).type  # raises on a malformed name
    if kind == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {spec!r}: CUDA is not available in this torch ({torch.__version__})")
    if kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise RuntimeError(f"device {spec!r}: MPS is not available")
    return spec


def pick_dtype(spec: str | None, device: str) -> torch.dtype:
    name = _ALIASES.get(spec, spec) if spec else "auto"
    if name == "auto":
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {spec!r}: use auto, bf16, fp16 or fp32")
    return DTYPES[name]


def dtype_name(dtype: torch.dtype) -> str:
    for name, d in DTYPES.items():
        if d == dtype:
            return name
    return str(dtype).removeprefix("torch.")


def empty_cache(device: str) -> None:
    """Give cached allocator memory back after models or tensors were dropped."""
    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif device.startswith("mps"):
        mps = getattr(torch, "mps", None)
        if mps is not None and hasattr(mps, "empty_cache"):
            mps.empty_cache()
