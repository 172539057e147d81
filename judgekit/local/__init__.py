"""Local models, the core's side: batches for a worker process that has torch (the core has not).

The worker (the ``judgekit-local`` distribution, ``python -m judgekit_local``) and the core speak
the line protocol of ``local/PROTOCOL.md``; images and vectors travel by sha256 through the run's
blob store (:mod:`judgekit.blobs`).  Layers, each knowing only the one below:

- :class:`Batcher` groups compatible requests into batches and maps results back to callers;
- :class:`Backend` runs one batch on a worker: :class:`SubprocessBackend` (a child process on
  this machine) or ``judgekit.local.ray_backend.RayBackend`` (Ray actors, ``pip install
  'judgekit[ray]'``);
- :mod:`judgekit.local.presets`: the reference text-to-image presets, as data;
- :mod:`judgekit.local.faults`: the workers' faults (crashes, restarts, lost and refused nodes)
  for ``summary.json`` and the closing lines.

The engine reaches all of this through ``judgekit.providers.local.LocalProvider``.
"""

from __future__ import annotations

import sys
from array import array

from .backend import PROTOCOL_VERSION, Backend, LocalError, WorkerCrashed, WorkersUnavailable, WorkerStartError
from .batcher import Batcher, LocalItemError, group_key
from .presets import PRESETS, Preset
from .process import SubprocessBackend

__all__ = [
    "Backend",
    "SubprocessBackend",
    "Batcher",
    "LocalError",
    "LocalItemError",
    "WorkerCrashed",
    "WorkerStartError",
    "WorkersUnavailable",
    "PROTOCOL_VERSION",
    "PRESETS",
    "Preset",
    "group_key",
    "read_vector",
]


def read_vector(blobs, sha256: str) -> list[float]:
    """An embedding from the blob store (``blobs``: a :class:`judgekit.blobs.BlobStore`): raw
    little-endian float32, as the worker writes it.  Raises BlobMissing when it is not there and
    ValueError when its size is not a whole number of float32."""
    data = blobs.get(sha256)
    if len(data) % 4:
        raise ValueError(f"blob {sha256[:12]}... is {len(data)} bytes: not float32 values")
    values = array("f")
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tolist()
