"""judgekit-local: the worker that runs open models for judgekit on a local GPU (or CPU).

The core starts it as ``python -m judgekit_local --store DIR`` and speaks the line protocol of
``PROTOCOL.md`` with it; Ray actors use :class:`judgekit_local.worker.WorkerCore` directly.
Importing this package imports no torch: ``judgekit_local.presets`` is plain data, readable
where torch is not installed. The public pieces:

- ``judgekit_local.worker.WorkerCore``: ``hello()``, ``run_batch(batch, emit)``;
- ``judgekit_local.store.Store``: the content-addressed blob store;
- ``judgekit_local.presets.TEXT_TO_IMAGE_PRESETS``: MMGenBench's reference generation settings;
- ``judgekit_local.testing``: tiny random-weight models for tests (``build_tiny_clip``,
  ``build_tiny_vlm``, ``build_tiny_diffusion``).
"""

__version__ = "0.1.0"

__all__ = ["WorkerCore", "__version__"]


def __getattr__(name: str):
    if name == "WorkerCore":  # lazy: importing the package must not import torch
        from .worker import WorkerCore

        return WorkerCore
    raise AttributeError(f"module 'judgekit_local' has no attribute {name!r}")
