"""judgekit: fast, resumable, cost-bounded judge-heavy evaluations of multimodal models.

The public API, importable from here (loaded on first use, so ``import judgekit`` stays cheap)::

    spec = judgekit.load_spec("quickstart", ["options.dual=false"])
    outcome = asyncio.run(judgekit.run_spec(spec, judgekit.RunOptions(limit=5)))

A finished run's judgments, one row per item x candidate x judge x order::

    df = judgekit.results("judgekit-out/quickstart")   # results.parquet as a pandas DataFrame

Metric functions a notebook can call directly live in :mod:`judgekit.metrics`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_spec": "judgekit.config",
    "RunSpec": "judgekit.config",
    "ModelSpec": "judgekit.config",
    "run_spec": "judgekit.runner",
    "estimate_spec": "judgekit.runner",
    "RunOptions": "judgekit.runner",
    "RunOutcome": "judgekit.runner",
    "Engine": "judgekit.engine",
    "CallResult": "judgekit.engine",
    "RunStopped": "judgekit.engine",
    "CacheStore": "judgekit.cache.store",
    "ChatRequest": "judgekit.types",
    "ChatResponse": "judgekit.types",
    "GenParams": "judgekit.types",
    "Message": "judgekit.types",
    "TextPart": "judgekit.types",
    "ImagePart": "judgekit.types",
    "JudgekitError": "judgekit.errors",
    "SpecError": "judgekit.errors",
    "DataError": "judgekit.errors",
    "results": "judgekit.report.tidy",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'judgekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
