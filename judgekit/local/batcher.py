"""Turns single requests into batches for a :class:`~judgekit.local.backend.Backend`.

``await batcher.submit(task, model_ref, params, inputs)`` returns one item's output.  Requests
that can share a batch (same task, model and params, compared by their canonical JSON) wait in
one group; a group is sent when it holds ``batch_size`` items, or ``max_wait_ms`` after its
oldest item arrived if a worker is free then.  While every worker is busy, groups keep filling up
to ``batch_size``, so a busy worker gets full batches and an idle one waits at most
``max_wait_ms``.  Of the groups ready, the one whose oldest item waited longest goes first.

Results reach their callers as they arrive, not at the end of the batch.  When the worker dies
mid-batch, items with a result keep it and the others go back to the front of their group for a
restarted worker (any free one: with several, the first idle); an item that went through more
than ``max_restarts`` crashes fails with the crash message.  A backend with no live worker for its
limit (:class:`~judgekit.local.backend.WorkersUnavailable`) fails the batch's items, kind
``unavailable``: retryable, and the batcher goes on serving.  A model that failed to load fails the items of later batches at once, with the
same reason, for the life of the batcher.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..plural import plural
from .backend import Backend, WorkerCrashed, WorkersUnavailable, WorkerStartError

__all__ = ["Batcher", "LocalItemError", "group_key"]


class LocalItemError(Exception):
    """One item failed.  ``kind`` is the protocol's ``error_kind`` (``bad_input``,
    ``load_failed``, ``oom``, ``error``) or the core's: ``crash`` (the worker died under it more
    than ``max_restarts`` times), ``unavailable`` (the backend had no live worker for its limit)
    and ``start_failed`` (no worker could be started)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


_canonical = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


def group_key(task: str, model_ref: dict[str, Any], params: dict[str, Any]) -> str:
    """Items with equal keys can share a batch."""
    return _canonical([task, model_ref, params])


@dataclass(slots=True, eq=False)
class _Item:
    item_id: str
    inputs: dict[str, Any]
    future: asyncio.Future
    arrived: float
    crashes: int = 0


@dataclass(slots=True, eq=False)
class _Group:
    key: str
    task: str
    model_ref: dict[str, Any]
    params: dict[str, Any]
    batch_size: int
    max_wait_s: float
    max_restarts: int
    items: list[_Item] = field(default_factory=list)

    @property
    def model_key(self) -> str:
        return _canonical(self.model_ref)


class Batcher:
    """Batches requests for one backend and runs up to ``backend.parallelism`` batches at once."""

    def __init__(self, backend: Backend, *, batch_size: int = 8, max_wait_ms: float = 20,
                 max_restarts: int = 3) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.backend = backend
        self.batch_size = batch_size
        self.max_wait_s = max_wait_ms / 1000.0
        self.max_restarts = max_restarts
        self._groups: dict[str, _Group] = {}
        self._wake = asyncio.Event()
        self._ids = itertools.count(1)
        self._batch_ids = itertools.count(1)
        self._scheduler: asyncio.Task | None = None
        self._running: set[asyncio.Task] = set()
        self._load_failed: dict[str, str] = {}  # model key -> reason
        self._closed = False
        #: counters for the display and tests
        self.batches_sent = 0
        self.items_done = 0
        self.items_failed = 0
        self.items_resent = 0
        self.items_unavailable = 0

    # -- the caller's side -------------------------------------------------------------------
    async def submit(self, task: str, model_ref: dict[str, Any], params: dict[str, Any],
                     inputs: dict[str, Any], *, batch_size: int | None = None, max_wait_ms: float | None = None,
                     max_restarts: int | None = None) -> dict[str, Any]:
        """The item's ``output``; raises :class:`LocalItemError` when it fails.

        ``batch_size``, ``max_wait_ms`` and ``max_restarts`` override the batcher's for this
        item (aliases sharing a worker may batch differently); items batch together only when
        these agree too."""
        if self._closed:
            raise LocalItemError("error", "the local model batcher is closed")
        size = self.batch_size if batch_size is None else max(1, int(batch_size))
        wait = self.max_wait_s if max_wait_ms is None else max_wait_ms / 1000.0
        restarts = self.max_restarts if max_restarts is None else max_restarts
        key = f"{group_key(task, model_ref, params)}|{size}|{wait!r}|{restarts}"
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(key, task, model_ref, params, size, wait, restarts)
        reason = self._load_failed.get(group.model_key)
        if reason is not None:
            raise LocalItemError("load_failed", reason)
        item = _Item(f"i{next(self._ids)}", inputs, asyncio.get_running_loop().create_future(), time.monotonic())
        group.items.append(item)
        self._ensure_scheduler()
        self._wake.set()
        try:
            return await item.future
        except asyncio.CancelledError:
            if item in group.items:  # not sent yet: drop it
                group.items.remove(item)
            raise

    def faults(self) -> dict[str, Any]:
        """The backend's faults (:meth:`Backend.faults`) with the items sent again after a crash
        and those failed for want of a live worker."""
        return {**self.backend.faults(), "items_resent": self.items_resent,
                "items_unavailable": self.items_unavailable}

    def pending(self) -> int:
        """Items waiting for a batch."""
        return sum(len(g.items) for g in self._groups.values())

    def status(self) -> list[str]:
        lines = list(self.backend.status())
        waiting = [g for g in self._groups.values() if g.items]
        if waiting:
            n = sum(len(g.items) for g in waiting)
            groups = len(waiting)
            lines.append(f"queued {plural(n, 'item')} in {plural(groups, 'group')}; "
                         f"{self.items_done} done, {self.items_failed} failed")
        return lines

    async def close(self) -> None:
        """Stop scheduling; pending and running items fail.  Does not close the backend."""
        self._closed = True
        tasks = [t for t in (self._scheduler, *self._running) if t is not None]
        for t in tasks:
            t.cancel()
        for t in tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):
                pass
        for g in self._groups.values():
            for it in g.items:
                if not it.future.done():
                    it.future.set_exception(LocalItemError("error", "the local model batcher was closed"))
            g.items.clear()

    # -- scheduling --------------------------------------------------------------------------
    def _ensure_scheduler(self) -> None:
        if self._scheduler is None or self._scheduler.done():
            self._scheduler = asyncio.ensure_future(self._schedule())

    def _pick(self, now: float) -> tuple[_Group | None, float | None]:
        """The group to send now, or (None, seconds until one may be ready)."""
        best: _Group | None = None
        wait: float | None = None
        for g in self._groups.values():
            if not g.items:
                continue
            oldest = g.items[0].arrived
            ready_at = oldest + g.max_wait_s
            if len(g.items) >= g.batch_size or ready_at <= now:
                if best is None or oldest < best.items[0].arrived:
                    best = g
            else:
                left = ready_at - now
                wait = left if wait is None else min(wait, left)
        return best, wait

    async def _schedule(self) -> None:
        free = asyncio.Semaphore(max(1, int(getattr(self.backend, "parallelism", 1))))
        while not self._closed:
            await free.acquire()  # a worker is free; now find it a batch
            while True:
                self._wake.clear()
                group, wait = self._pick(time.monotonic())
                if group is not None:
                    break
                if not any(g.items for g in self._groups.values()):
                    wait = None
                try:
                    await asyncio.wait_for(self._wake.wait(), wait)
                except asyncio.TimeoutError:
                    pass
            items = group.items[: group.batch_size]
            del group.items[: len(items)]
            task = asyncio.ensure_future(self._run(group, items))
            self._running.add(task)
            task.add_done_callback(lambda t: (self._running.discard(t), free.release()))
            # drop empty groups so their keys do not pile up
            for k in [k for k, g in self._groups.items() if not g.items]:
                del self._groups[k]

    async def _run(self, group: _Group, items: list[_Item]) -> None:
        items = [it for it in items if not it.future.done()]  # callers that gave up
        reason = self._load_failed.get(group.model_key)
        if reason is not None:
            for it in items:
                self._fail(it, "load_failed", reason)
            return
        if not items:
            return
        by_id = {it.item_id: it for it in items}
        batch_id = f"b{next(self._batch_ids)}"
        batch = {"op": "batch", "batch_id": batch_id, "task": group.task, "model": group.model_ref,
                 "params": group.params, "items": [{"item_id": it.item_id, "inputs": it.inputs} for it in items]}

        def on_message(msg: dict[str, Any]) -> None:
            if msg.get("type") != "result":
                return
            it = by_id.pop(str(msg.get("item_id")), None)
            if it is None:
                return
            if msg.get("ok"):
                self.items_done += 1
                if not it.future.done():
                    it.future.set_result(msg.get("output") or {})
                return
            kind = str(msg.get("error_kind") or "error")
            error = str(msg.get("error") or "the worker gave no reason")
            if kind == "load_failed":
                self._load_failed.setdefault(group.model_key, error)
            self._fail(it, kind, error)

        self.batches_sent += 1
        try:
            await self.backend.run_batch(batch, on_message)
        except WorkerCrashed as e:
            self._after_crash(group, list(by_id.values()), str(e))
            return
        except WorkersUnavailable as e:
            for it in by_id.values():
                self.items_unavailable += 1
                self._fail(it, "unavailable", str(e))
            return
        except WorkerStartError as e:
            for it in by_id.values():
                self._fail(it, "start_failed", str(e))
            return
        except asyncio.CancelledError:
            for it in by_id.values():
                self._fail(it, "error", "the local model batcher was closed")
            raise
        except Exception as e:  # a backend bug: fail the batch, keep serving
            for it in by_id.values():
                self._fail(it, "error", f"the local backend failed: {e!r}")
            return
        for it in by_id.values():  # batch_done without a result for it: a worker bug
            self._fail(it, "error", f"the worker finished batch {batch_id} without a result for this item")

    def _after_crash(self, group: _Group, unfinished: list[_Item], message: str) -> None:
        again: list[_Item] = []
        for it in unfinished:
            if it.future.done():
                continue
            it.crashes += 1
            if it.crashes > group.max_restarts:
                self._fail(it, "crash", f"{message}\n(the worker died {it.crashes} times with this item in its "
                                        f"batch; max_restarts = {group.max_restarts})")
            else:
                again.append(it)
        if again:
            self.items_resent += len(again)
            live = self._groups.get(group.key)
            if live is None:
                live = self._groups[group.key] = _Group(group.key, group.task, group.model_ref, group.params,
                                                        group.batch_size, group.max_wait_s, group.max_restarts)
            live.items[:0] = again  # to the front, with their first arrival time: ready at once
            self._ensure_scheduler()
            self._wake.set()

    def _fail(self, it: _Item, kind: str, message: str) -> None:
        self.items_failed += 1
        if not it.future.done():
            it.future.set_exception(LocalItemError(kind, message))
