"""The tasks a worker runs, one module each, all with the same five functions.

A task module defines:

- ``check_model(model: dict) -> None``: raises :class:`BadInput` for a MODEL object the task
  cannot use (every item of the batch then fails with ``bad_input``, nothing is loaded);
- ``check_params(params: dict) -> dict``: the batch's params, checked and with defaults; raises
  :class:`BadInput` (every item of the batch then fails with ``bad_input``).
- ``load_key(model: dict) -> tuple``: what, besides id, revision and dtype, selects the loaded
  object (a pipeline class, an encoder); part of the worker's model-cache key.
- ``load(model: dict, device: str, dtype: torch.dtype) -> object``: load the model (any object;
  the worker measures its torch modules to account memory).
- ``prepare(inputs: dict, store: Store) -> object``: one item's inputs, decoded (images read from
  the store); raises :class:`BadInput`, which fails that item alone.
- ``run(loaded, prepared: list, params: dict, model: dict, store: Store) -> list[dict]``: one
  output per prepared item, in order, for a batch; may raise out-of-memory errors, which the
  worker handles by splitting the batch.

Modules are imported lazily by :func:`get_task`, so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ._common import BadInput

__all__ = ["TASKS", "BadInput", "get_task"]

TASKS = {
    "chat": "judgekit_local.tasks.chat",
    "text_to_image": "judgekit_local.tasks.text_to_image",
    "embed_image": "judgekit_local.tasks.embed",
}


def get_task(name: str) -> ModuleType:
    """The module implementing a task; raises :class:`BadInput` for an unknown name."""
    if name not in TASKS:
        raise BadInput(f"unknown task {name!r}; known: {', '.join(TASKS)}")
    return importlib.import_module(TASKS[name])
