"""The worker's core: runs one protocol batch at a time and reports through a callback.

:class:`WorkerCore` does no I/O on stdin or stdout: the subprocess loop (``__main__``) and Ray
actors both drive it, passing ``emit``, which receives the protocol's worker -> core messages
(``progress``, ``result``, ``batch_done``, ``log``) as dicts.

A batch goes through these steps; every item gets exactly one ``result``, then ``batch_done``:

1. check the task, the MODEL object and the params (a bad one fails every item, ``bad_input``);
2. prepare each item (decode its images from the store; a bad item fails alone, ``bad_input``);
3. get the model from the cache or load it (``progress`` phase ``loading``, 0/1 then 1/1); a
   failed load fails every remaining item with ``load_failed``;
4. run the prepared items as one batch; on out-of-memory, free memory and split it in halves,
   recursively, a single item that still does not fit failing with ``oom``; on another error,
   retry its items one at a time so that only the item at fault fails (``error``). After each
   sub-batch: its results, then ``progress`` phase ``running`` (done = results so far, of all
   items in the batch).

Model cache: loaded models are kept in LRU order, keyed by task, id, revision, dtype,
trust_remote_code and the task's load key (pipeline class, encoder); pooling is applied per
batch, so an encoder is loaded once whatever pooling a batch asks for. With a memory budget,
least recently used models are unloaded before a load whose estimated size (safetensors headers)
would exceed it, and again after the load by its measured size (parameter and buffer bytes).

Test hook: ``fail_batches_larger_than=N`` (or the environment variable
``JUDGEKIT_LOCAL_FAIL_BATCHES_LARGER_THAN=N``) makes every model run on more than N items raise
a simulated ``torch.OutOfMemoryError`` before it starts, so the splitting can be tested on a
CPU; N=0 makes even single items fail with ``oom``.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import torch

from . import __version__, tiny
from ._memory import estimate, measure
from .device import dtype_name, empty_cache, pick_device, pick_dtype
from .store import Store
from .tasks import BadInput, get_task

__all__ = ["FAIL_BATCHES_ENV", "PROTOCOL_VERSION", "WorkerCore", "is_oom"]

PROTOCOL_VERSION = 1
FAIL_BATCHES_ENV = "JUDGEKIT_LOCAL_FAIL_BATCHES_LARGER_THAN"

Emit = Callable[[dict], None]

# Tracebacks of unexpected errors go to this logger (stderr in the subprocess), never to emit.
log = logging.getLogger("judgekit_local")


def is_oom(exc: BaseException) -> bool:
    """An out-of-memory error from any torch backend."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    # CUDA/MPS say "out of memory"; the CPU allocator says "can't allocate memory".
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:1000] if text else type(exc).__name__


@dataclass
class _Entry:
    obj: Any
    nbytes: int


class _ModelCache:
    """Loaded models in least-recently-used order, within an optional byte budget."""

    def __init__(self, budget_bytes: int | None, device: str) -> None:
        self.budget = budget_bytes
        self.device = device
        self.entries: OrderedDict[tuple, _Entry] = OrderedDict()

    @property
    def used(self) -> int:
        return sum(e.nbytes for e in self.entries.values())

    def get(self, key: tuple) -> Any | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        self.entries.move_to_end(key)
        return entry.obj

    def make_room(self, nbytes: int, keep: tuple | None = None) -> list[tuple]:
        """Unload least recently used models (never ``keep``) until ``nbytes`` more fit."""
        evicted = []
        if self.budget is None:
            return evicted
        for key in list(self.entries):
            if self.used + nbytes <= self.budget:
                break
            if key != keep:
                del self.entries[key]
                evicted.append(key)
        if evicted:
            self.free()
        return evicted

    def add(self, key: tuple, obj: Any, nbytes: int) -> list[tuple]:
        self.entries[key] = _Entry(obj, nbytes)
        return self.make_room(0, keep=key)

    def clear(self) -> None:
        self.entries.clear()
        self.free()

    def free(self) -> None:
        """Release dropped tensors. On an accelerator, collect cycles and give the allocator's
        cache back; on the CPU, reference counting frees them (a full collection costs ~0.2 s)."""
        if self.device != "cpu":
            gc.collect()
            empty_cache(self.device)


class WorkerCore:
    """Loads models, runs batches, emits protocol messages (see the module docstring)."""

    def __init__(
        self,
        store_dir: str | os.PathLike[str],
        device: str = "auto",
        memory_budget_gb: float | None = None,
        *,
        fail_batches_larger_than: int | None = None,
    ) -> None:
        self.store = Store(store_dir)
        self.device = pick_device(device)
        budget = None if memory_budget_gb is None else int(memory_budget_gb * 1024**3)
        self._cache = _ModelCache(budget, self.device)
        if fail_batches_larger_than is None and os.environ.get(FAIL_BATCHES_ENV, "").strip():
            fail_batches_larger_than = int(os.environ[FAIL_BATCHES_ENV])
        self.fail_batches_larger_than = fail_batches_larger_than
        self._lock = threading.Lock()

    # -- introspection -------------------------------------------------------------------

    def hello(self) -> dict:
        return {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "worker": f"judgekit-local {__version__}",
            "pid": os.getpid(),
            "device": self.device,
            "torch": torch.__version__,
            "transformers": _dist_version("transformers"),
            "diffusers": _dist_version("diffusers"),
        }

    def loaded_models(self) -> list[dict]:
        """The cached models, least recently used first: their key and measured bytes."""
        return [{"key": k, "nbytes": e.nbytes} for k, e in self._cache.entries.items()]

    def unload_all(self) -> None:
        self._cache.clear()

    # -- batches -------------------------------------------------------------------------

    def run_batch(self, batch: dict, emit: Emit) -> None:
        """Run one batch; ``emit`` gets every message, ``batch_done`` last. Never raises for
        a problem with the batch, its items or its model: those become results."""
        with self._lock:
            _Batch(self, batch, emit).run()


class _Batch:
    """One batch's run: the bookkeeping of which items have their result."""

    def __init__(self, core: WorkerCore, batch: dict, emit: Emit) -> None:
        self.core, self.emit = core, emit
        batch = batch if isinstance(batch, dict) else {}
        self.batch_id = batch.get("batch_id")
        self.task_name = batch.get("task")
        self.model = batch.get("model")
        self.params = batch.get("params") or {}
        self.item_ids: list[Any] = []
        self.inputs: dict[Any, Any] = {}
        for item in batch.get("items") or []:
            if isinstance(item, dict) and item.get("item_id") is not None:
                if item["item_id"] not in self.inputs:
                    self.item_ids.append(item["item_id"])
                self.inputs[item["item_id"]] = item.get("inputs")
            else:
                self.log("warning", f"batch {self.batch_id}: an item without item_id was skipped")
        self.answered: set[Any] = set()
        self.model_name = self.model.get("id") if isinstance(self.model, dict) else None

    # messages

    def log(self, level: str, message: str) -> None:
        self.emit({"type": "log", "level": level, "message": message})

    def progress(self, phase: str, done: int, total: int, message: str) -> None:
        self.emit({
            "type": "progress", "batch_id": self.batch_id, "phase": phase,
            "model": self.model_name, "done": done, "total": total, "message": message,
        })

    def ok(self, item_id: Any, output: dict, latency: float) -> None:
        self.emit({
            "type": "result", "batch_id": self.batch_id, "item_id": item_id, "ok": True,
            "output": output, "latency_s": round(latency, 4),
        })
        self.answered.add(item_id)  # after: an output emit cannot send still gets an error result

    def fail(self, item_ids: list, kind: str, error: str, latency: float = 0.0) -> None:
        for item_id in item_ids:
            if item_id in self.answered:
                continue
            self.emit({
                "type": "result", "batch_id": self.batch_id, "item_id": item_id, "ok": False,
                "error": error, "error_kind": kind, "latency_s": round(latency, 4),
            })
            self.answered.add(item_id)

    # steps

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # a bug of ours: the items fail, the worker goes on
            log.exception("batch %s failed", self.batch_id)
            self.fail(self.item_ids, "error", f"worker error: {_reason(exc)}")
        finally:
            self.emit({"type": "batch_done", "batch_id": self.batch_id})

    def _run(self) -> None:
        if not self.item_ids:
            return
        try:
            task = get_task(self.task_name)
            if not isinstance(self.model, dict) or not isinstance(self.model.get("id"), str):
                raise BadInput('model must be an object with an "id" string')
            task.check_model(self.model)
            if not isinstance(self.params, dict):
                raise BadInput("params must be an object")
            params = task.check_params(self.params)
            dtype = pick_dtype(self.model.get("dtype"), self.core.device)
        except (BadInput, ValueError) as exc:
            self.fail(self.item_ids, "bad_input", str(exc))
            return

        prepared: list[tuple[Any, Any]] = []
        for item_id in self.item_ids:
            try:
                prepared.append((item_id, task.prepare(self.inputs[item_id], self.core.store)))
            except BadInput as exc:
                self.fail([item_id], "bad_input", str(exc))
            except Exception as exc:
                self.fail([item_id], "bad_input", _reason(exc))
        if not prepared:
            return

        loaded = self._load(task, dtype)
        if loaded is None:
            return
        self._run_chunk(task, loaded, prepared, params)

    def _load(self, task: Any, dtype: torch.dtype) -> Any | None:
        model, cache = self.model, self.core._cache
        key = (
            self.task_name, model["id"], model.get("revision"), dtype_name(dtype),
            bool(model.get("trust_remote_code")), *task.load_key(model),
        )
        obj = cache.get(key)
        if obj is not None:
            return obj
        self.progress("loading", 0, 1, "loading weights")
        t0 = time.perf_counter()
        error = None
        for attempt in (1, 2):
            try:
                source = dict(model, id=tiny.resolve(model["id"]))  # tiny:NAME -> its built folder
                needed = estimate(source["id"], model.get("revision"), dtype)
                for gone in cache.make_room(needed or 0):
                    self.log("info", f"unloaded {gone[1]} to make room for {model['id']}")
                obj = task.load(source, self.core.device, dtype)
                break
            except Exception as exc:
                log.warning("cannot load %s", model["id"], exc_info=True)
                error = _reason(exc)
                oom = is_oom(exc)
            obj = None
            cache.free()
            if not (oom and attempt == 1 and cache.entries):
                break
            self.log("warning", f"out of memory loading {model['id']}: unloading every model and retrying")
            cache.clear()
        if obj is None:
            self.fail(self.item_ids, "load_failed", f"cannot load {model['id']}: {error}")
            return None
        for gone in cache.add(key, obj, measure(obj)):
            self.log("info", f"unloaded {gone[1]} (memory budget)")
        self.progress("loading", 1, 1, f"loaded in {time.perf_counter() - t0:.1f}s")
        return obj

    def _run_chunk(self, task: Any, loaded: Any, chunk: list[tuple[Any, Any]], params: dict) -> None:
        ids = [item_id for item_id, _ in chunk]
        t0 = time.perf_counter()
        failure = None
        try:
            limit = self.core.fail_batches_larger_than
            if limit is not None and len(chunk) > limit:
                raise torch.OutOfMemoryError(
                    f"simulated out of memory: {len(chunk)} items > fail_batches_larger_than={limit}"
                )
            outputs = task.run(loaded, [p for _, p in chunk], params, self.model, self.core.store)
            if len(outputs) != len(chunk):
                raise RuntimeError(f"task returned {len(outputs)} outputs for {len(chunk)} items")
        except BadInput as exc:
            failure = ("bad_input", str(exc))
        except Exception as exc:
            failure = ("oom" if is_oom(exc) else "error", _reason(exc))
            if failure[0] == "error":
                log.warning("%s on %d item(s) of batch %s", failure[1], len(chunk), self.batch_id, exc_info=True)
        latency = time.perf_counter() - t0

        if failure is None:
            for item_id, output in zip(ids, outputs):
                self.ok(item_id, output, latency)
        else:
            kind, reason = failure
            if kind == "oom":
                self.core._cache.free()  # the failed run's tensors are gone with its frames
            if kind in ("oom", "error") and len(chunk) > 1:
                if kind == "oom":
                    half = len(chunk) // 2
                    parts = [chunk[:half], chunk[half:]]
                    self.log("warning", f"out of memory on {len(chunk)} items: splitting the batch")
                else:
                    parts = [[c] for c in chunk]
                    self.log("warning", f"{reason}: retrying {len(chunk)} items one at a time")
                for part in parts:
                    self._run_chunk(task, loaded, part, params)
                return
            self.fail(ids, kind, reason, latency)
        self.progress("running", len(self.answered), len(self.item_ids), f"{len(chunk)} item(s) done")
