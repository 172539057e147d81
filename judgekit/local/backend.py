"""What runs batches for local models: the :class:`Backend` interface and its exceptions.

A backend hands one batch (a protocol ``batch`` message, see ``local/PROTOCOL.md``) to a worker
and reports every ``progress`` and ``result`` message as it arrives; it knows nothing of
batching policy, cache keys or the engine.  Implementations: :class:`~judgekit.local.process.
SubprocessBackend` (one worker process on this machine) and :class:`~judgekit.local.ray_backend.
RayBackend` (Ray actors).

Exceptions::

    LocalError
    ├── WorkerStartError   the worker cannot start or speaks another protocol: nothing will run
    ├── WorkerCrashed      the worker died during a batch; ``finished_item_ids`` had results
    └── WorkersUnavailable no live worker for the backend's limit (Ray: lost nodes, a full
                           cluster): this batch's items fail, retryable; the run goes on
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable

from ..plural import plural

__all__ = ["Backend", "LocalError", "WorkerStartError", "WorkerCrashed", "WorkersUnavailable", "WorkerState", "PROTOCOL_VERSION",
           "OnMessage", "short_model_name"]

#: the protocol version of ``local/PROTOCOL.md`` this core speaks
PROTOCOL_VERSION = 1

#: called with each ``progress`` / ``result`` message of a running batch, on the event loop
OnMessage = Callable[[dict[str, Any]], None]


class LocalError(Exception):
    """Base of the errors of the local-model machinery."""


class WorkerStartError(LocalError):
    """The worker could not be started (no such Python, module not installed, wrong protocol,
    exited before saying hello).  Retrying will not help; the message says what to fix."""


class WorkerCrashed(LocalError):
    """The worker died while running a batch.

    ``finished_item_ids`` are the items whose result message had arrived (and was passed to
    ``on_message``) before it died; the others had none and may be sent again.
    """

    def __init__(self, message: str, finished_item_ids: frozenset[str] | set[str] = frozenset()) -> None:
        super().__init__(message)
        self.finished_item_ids = frozenset(finished_item_ids)


class WorkersUnavailable(LocalError):
    """The backend has had no live worker for its limit (``local.no_worker_timeout_s``): the
    batch's items fail, retryable by a rerun; the rest of the run goes on."""


class Backend(ABC):
    """Runs protocol batches on one or more workers."""

    #: how many batches may run at once (one per worker)
    parallelism: int = 1

    @abstractmethod
    async def start(self) -> None:
        """Prepare to run batches (may start the worker now or on the first batch).  Raises
        :class:`WorkerStartError` when the worker cannot run at all."""

    @abstractmethod
    async def run_batch(self, batch: dict[str, Any], on_message: OnMessage) -> None:
        """Send ``batch`` and return once its ``batch_done`` arrives, calling ``on_message`` for
        every ``progress`` and ``result`` message of it as it arrives.  Raises
        :class:`WorkerCrashed` when the worker dies first (the next call starts a new one) and
        :class:`WorkerStartError` when no worker can be started."""

    @abstractmethod
    async def close(self) -> None:
        """Stop the workers: ask them to shut down, wait briefly, then kill them."""

    def faults(self) -> dict[str, Any]:
        """What went wrong with the workers (started, crashed...), for ``summary.json``."""
        return {}

    @abstractmethod
    def status(self) -> list[str]:
        """Short lines for the live display, e.g. ``worker pid 123 (cpu): loading tiny-clip 0/1``.
        Cheap: called several times a second on the event loop."""


def short_model_name(model_id: str) -> str:
    """``org/name`` or ``/path/to/name`` -> ``name`` (for the display)."""
    return model_id.rstrip("/").rsplit("/", 1)[-1] or model_id


@dataclass(slots=True)
class _Batch:
    batch_id: str
    task: str
    total: int
    model: str
    finished: set[str] = field(default_factory=set)
    phase: str = "sent"
    progress_done: int = 0
    progress_total: int = 0
    message: str = ""
    started: float = field(default_factory=time.monotonic)


class WorkerState:
    """What one worker is doing, from the messages it sent, for :meth:`Backend.status`."""

    def __init__(self, label: str, device: str) -> None:
        self.label = label
        self.device = device
        self.hello: dict[str, Any] | None = None
        #: the machine it runs on, when that is not this one (a Ray node)
        self.node = ""
        self.state = "not started"
        self.crashes = 0
        self.batch: _Batch | None = None

    def begin(self, batch: dict[str, Any]) -> _Batch:
        self.batch = _Batch(str(batch["batch_id"]), str(batch.get("task", "")), len(batch.get("items", ())),
                            short_model_name(str((batch.get("model") or {}).get("id", ""))))
        self.state = "running"
        return self.batch

    def end(self) -> None:
        self.batch = None
        if self.state == "running":
            self.state = "idle"

    def note(self, msg: dict[str, Any]) -> None:
        """Update from a ``progress`` or ``result`` message of the running batch."""
        b = self.batch
        if b is None:
            return
        if msg.get("type") == "progress":
            b.phase = str(msg.get("phase") or b.phase)
            b.model = short_model_name(str(msg.get("model") or b.model))
            b.progress_done = int(msg.get("done") or 0)
            b.progress_total = int(msg.get("total") or 0)
            b.message = str(msg.get("message") or "")
        elif msg.get("type") == "result":
            b.finished.add(str(msg.get("item_id")))
            if b.phase in ("sent", "loading"):
                b.phase = "running"

    def lines(self, pid: int | None = None) -> list[str]:
        hello = self.hello or {}
        device = hello.get("device") or self.device
        pid = hello.get("pid") or pid
        who = f"{self.label} pid {pid}" if pid else self.label
        who += f" on {self.node} ({device})" if self.node else f" ({device})"
        crashes = f", {plural(self.crashes, 'crash')}" if self.crashes else ""
        b = self.batch
        if b is None:
            return [f"{who}: {self.state}{crashes}"]
        if b.phase in ("loading", "running") and b.progress_total:
            doing = f"{b.phase} {b.model} {b.progress_done}/{b.progress_total}"
        else:
            doing = f"{b.phase} {b.model}".strip()
        if b.message and b.phase == "loading":
            doing += f" ({b.message})"
        return [f"{who}: {doing}{crashes}",
                f"batch {b.batch_id} {b.task} {len(b.finished)}/{b.total}, {time.monotonic() - b.started:.0f}s"]
