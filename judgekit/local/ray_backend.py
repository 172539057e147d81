"""The worker as Ray actors: the same worker core (``judgekit_local.worker.WorkerCore``), one
actor per GPU, up to ``workers`` batches at once.

``pip install 'judgekit[ray]'``; ray is imported when this backend starts, never before.  With
``local.backend = "ray"`` the :class:`~judgekit.local.Batcher` hands its batches to
:class:`RayBackend`, whose ``parallelism`` (= ``workers``) lets it keep that many in flight, each
on an idle actor:

- every actor holds one core (its own model cache) and reserves ``gpus_per_worker`` GPUs
  (``num_gpus``; Ray sets ``CUDA_VISIBLE_DEVICES``, so device ``auto`` is the actor's own GPU).
  With no GPU reserved, device ``auto`` means ``cpu``: an actor never uses a GPU Ray did not give
  it.  CPU actors on a Ray instance started here share its CPUs evenly (Ray sets each actor's
  ``OMP_NUM_THREADS`` from its share); GPU actors reserve one CPU;
- the messages of a batch stream back as the core emits them (the actor's ``run_batch`` is a
  Ray streaming generator; what the core emitted meanwhile travels as one list, since every
  streamed object costs about 0.3 ms), so results reach their callers, and progress the live
  display, mid-batch;
- an actor that dies (``RayActorError``: killed, out of memory, its node lost) fails the batch
  with :class:`~judgekit.local.WorkerCrashed`, naming the items that had their result; the
  Batcher sends the others again, and the slot gets a new actor for its next batch.

Ray: with ``address`` (``local.ray_address``, or ``RAY_ADDRESS``) this joins that cluster;
without, it reuses the Ray this process already initialised, else starts a light local instance
(no dashboard; worker output stays in Ray's log folder).  A Ray instance started here is shut
down when the last backend using it closes.  ``ray.init`` runs off the event loop's thread, which
also keeps Ray from replacing judgekit's SIGTERM handling.

Images and vectors still travel through the content-addressed store folder (``store``), which
every actor opens by path.  On one machine it is simply shared; **on a cluster the store folder
must be on a filesystem that every node mounts at the same path** (NFS, a shared volume), and
every node needs ``judgekit-local`` (torch, transformers, diffusers) and the driver's Ray version.
judgekit itself need not be on the nodes: the actor class travels by value.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .backend import PROTOCOL_VERSION, Backend, LocalError, OnMessage, WorkerCrashed, WorkerStartError, WorkerState
from .process import WORKER_PACKAGE

__all__ = ["RayBackend", "DEFAULT_CORE", "import_ray"]

#: what each actor runs: ``"module:Class"``, built as ``Class(store, device=..., memory_budget_gb=...)``
DEFAULT_CORE = "judgekit_local.worker:WorkerCore"
#: what to install when ray is missing
RAY_HINT = "pip install 'judgekit[ray]' (or pip install ray)"

_owned = {"refs": 0}  # live backends using a Ray instance that this process started


def import_ray():
    """The ray module, or an ImportError that says what to install."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"local.backend = 'ray' needs the package ray: {RAY_HINT} ({e})") from e
    return ray


class _HideSigtermWarning(logging.Filter):
    """``ray.init`` off the main thread warns that it set no SIGTERM handler: that is the point."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def _actor_class():
    """The actor's class.  Defined in a function so that cloudpickle ships it by value: the
    nodes need the core's package (``judgekit_local``), not judgekit.  Standard library only."""

    class JudgekitWorker:
        """One core; ``run_batch`` streams lists of the messages the core emits."""

        def __init__(self, core: str, store: str, device: str, memory_budget_gb: float | None) -> None:
            import importlib

            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            module, _, name = core.partition(":")
            self.core = getattr(importlib.import_module(module), name)(
                store, device=device, memory_budget_gb=memory_budget_gb)

        def hello(self) -> dict:
            return self.core.hello()

        def run_batch(self, batch: dict):
            import queue
            import threading
            import traceback

            end = object()
            q: queue.SimpleQueue = queue.SimpleQueue()

            def work() -> None:
                try:
                    self.core.run_batch(batch, q.put)
                except BaseException as e:  # the core turns item problems into results: this is a bug
                    q.put(RuntimeError(f"the worker core raised {e!r}\n{traceback.format_exc()[-4000:]}"))
                finally:
                    q.put(end)

            threading.Thread(target=work, name="judgekit-batch", daemon=True).start()
            while True:
                got = [q.get()]
                while True:  # what arrived meanwhile goes in the same reply
                    try:
                        got.append(q.get_nowait())
                    except queue.Empty:
                        break
                messages = [m for m in got if isinstance(m, dict)]
                if messages:
                    yield messages
                for m in got:
                    if isinstance(m, BaseException):
                        raise m
                if any(m is end for m in got):
                    return

    return JudgekitWorker


@dataclass(slots=True, eq=False)
class _Slot:
    """One actor's place; an actor that died is replaced on the slot's next batch."""

    index: int
    view: WorkerState
    actor: Any = None
    hello_ref: Any = None
    batches: int = 0


class RayBackend(Backend):
    """``workers`` Ray actors, each one worker core; one batch per actor at a time."""

    def __init__(self, command: Sequence[str] | None = None, *, store: str | os.PathLike[str],
                 device: str = "auto", memory_budget_gb: float | None = None, address: str | None = None,
                 workers: int = 1, gpus_per_worker: float = 0, cpus_per_worker: float | None = None,
                 core: str = DEFAULT_CORE, runtime_env: dict[str, Any] | None = None,
                 hello_timeout_s: float = 900.0, log_lines: int = 50, label: str = "ray worker") -> None:
        """``command`` is the subprocess backend's worker command: only its Python is used, when it
        is another one than this (``local.python``): Ray starts the actors with it
        (``runtime_env.py_executable``; it needs the same Ray and judgekit-local).  ``core`` is
        the class each actor builds; ``runtime_env`` goes to every actor (tests use it for
        ``env_vars``).  ``cpus_per_worker``: default one per GPU actor, an even share of a Ray
        instance started here for CPU actors, else one."""
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.command = list(command) if command else None
        self.store = str(Path(store).resolve())
        self.device = device
        self.memory_budget_gb = memory_budget_gb
        self.address = address
        self.workers = workers
        self.gpus_per_worker = gpus_per_worker
        self.cpus_per_worker = cpus_per_worker
        self.core = core
        self.runtime_env = runtime_env
        self.hello_timeout_s = hello_timeout_s
        self.label = label
        #: batches that may run at once: one per actor (the Batcher reads this)
        self.parallelism = workers
        #: actors started, and how many died under a batch
        self.starts = 0
        self.crashes = 0
        #: the workers' last ``log`` messages and the core's notes on them (as the subprocess's stderr)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=log_lines)
        self._ray = None
        self._cls = None
        self._slots = [_Slot(i + 1, WorkerState(f"{label} {i + 1}", self._actor_device())) for i in range(workers)]
        self._idle: asyncio.Queue[_Slot] | None = None
        self._start_lock: asyncio.Lock | None = None
        self._started = False
        self._owns_ray = False
        self._local_instance = False
        self._closed = False
        self._state = "not started"

    # -- Ray ---------------------------------------------------------------------------------
    def _connect(self) -> None:
        """Join or start Ray (blocking: runs in a thread)."""
        ray = import_ray()
        if ray.is_initialized():
            self._ray = ray
            return
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "logging_level": logging.WARNING, "ignore_reinit_error": True}
        address = self.address or os.environ.get("RAY_ADDRESS")
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = os.cpu_count() or 1
        hide = _HideSigtermWarning()
        worker_log = logging.getLogger("ray._private.worker")
        worker_log.addFilter(hide)
        try:
            ray.init(**kwargs)
        except Exception as e:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise WorkerStartError(f"cannot start or join {where}: {e}") from None
        finally:
            worker_log.removeFilter(hide)
        self._ray = ray
        self._owns_ray = True
        self._local_instance = not address
        _owned["refs"] += 1

    def _actor_options(self) -> dict[str, Any]:
        cpus = self.cpus_per_worker
        if cpus is None:
            if self.gpus_per_worker > 0 or not self._local_instance:
                cpus = 1
            else:
                cpus = max(1, int(self._ray.cluster_resources().get("CPU", 1) // self.workers))
        options: dict[str, Any] = {"num_cpus": cpus, "num_gpus": self.gpus_per_worker, "max_restarts": 0,
                                   "max_task_retries": 0}
        runtime_env = dict(self.runtime_env or {})
        python = self._python()
        if python and "py_executable" not in runtime_env:
            runtime_env["py_executable"] = python
        if runtime_env:
            options["runtime_env"] = runtime_env
        return options

    def _python(self) -> str | None:
        """The Python of ``command`` when it is not this one (``local.python``), else None."""
        if not self.command or len(self.command) < 3 or self.command[1] != "-m":
            return None  # not `<python> -m module` (a JUDGEKIT_LOCAL_WORKER wrapper): Ray's own Python
        python = self.command[0]
        try:
            if Path(python).resolve() == Path(sys.executable).resolve():
                return None
        except OSError:
            pass
        return python

    async def _check_python(self, python: str) -> None:
        """Fail fast when the actors' Python lacks ray or the core's package: Ray would otherwise
        retry starting its workers until the hello timeout."""
        module = self.core.split(":")[0].split(".")[0]
        code = f"import ray, {module}"
        try:
            proc = await asyncio.create_subprocess_exec(python, "-c", code, stdin=asyncio.subprocess.DEVNULL,
                                                        stdout=asyncio.subprocess.DEVNULL,
                                                        stderr=asyncio.subprocess.PIPE)
            _, err = await asyncio.wait_for(proc.communicate(), 300)
        except (OSError, asyncio.TimeoutError) as e:
            raise WorkerStartError(f"local.python {python!r} cannot run: {e!r}") from None
        if proc.returncode != 0:
            raise WorkerStartError(
                f"local.python {python!r} cannot `{code}` (the Ray actors would run on it): "
                f"{err.decode('utf-8', 'replace').strip()[-1000:]}\ninstall ray (the driver's version) and "
                f"{WORKER_PACKAGE} into it, or leave local.python unset to use this Python")

    def _actor_device(self) -> str:
        if self.device in ("", "auto") and not self.gpus_per_worker:
            return "cpu"
        return self.device

    def _spawn(self, slot: _Slot) -> None:
        """Place a new actor in ``slot`` (returns at once; its hello comes later)."""
        if self._cls is None:
            self._cls = self._ray.remote(_actor_class())
        slot.actor = self._cls.options(**self._actor_options()).remote(
            self.core, self.store, self._actor_device(), self.memory_budget_gb)
        slot.hello_ref = slot.actor.hello.remote()
        slot.view.hello = None
        slot.view.state = "starting"
        self.starts += 1

    async def _ready(self, slot: _Slot) -> None:
        """Wait for the slot's actor to say hello (placing one if the slot is empty)."""
        if slot.actor is None:
            self._spawn(slot)
        if slot.view.hello is not None:
            return
        ray = self._ray
        try:
            hello = await asyncio.wait_for(slot.hello_ref, self.hello_timeout_s)
        except asyncio.TimeoutError:
            self._discard(slot, "could not start")
            need = f"{self.gpus_per_worker:g} GPU" if self.gpus_per_worker else "CPU"
            raise WorkerStartError(
                f"{slot.view.label} was not placed within {self.hello_timeout_s:g} s (each actor needs {need}; the "
                f"cluster has {ray.cluster_resources()}, free now {ray.available_resources()})") from None
        except ray.exceptions.RayError as e:
            self._discard(slot, "could not start")
            text = str(e)
            module = self.core.split(":")[0].split(".")[0]
            hint = ""
            if f"No module named '{module}'" in text:
                hint = (f"\nthe Ray workers' Python cannot import {module}: install {WORKER_PACKAGE} (`pip install -e "
                        f"local` in the judgekit repository) wherever the actors run")
            raise WorkerStartError(f"{slot.view.label} could not start ({type(e).__name__}): "
                                   f"{_trim(text)}{hint}") from None
        if hello.get("protocol") != PROTOCOL_VERSION:
            self._discard(slot, "could not start")
            raise WorkerStartError(
                f"the local worker ({hello.get('worker', '?')}) speaks protocol {hello.get('protocol')!r}; this "
                f"judgekit speaks {PROTOCOL_VERSION}: install matching versions of judgekit and {WORKER_PACKAGE}")
        slot.view.hello = hello
        slot.view.state = "idle"

    def _discard(self, slot: _Slot, state: str) -> None:
        """Kill the slot's actor (if any) and leave the slot empty."""
        actor, slot.actor, slot.hello_ref, slot.view.hello = slot.actor, None, None, None
        slot.view.state = state
        if actor is not None:
            try:
                self._ray.kill(actor, no_restart=True)
            except Exception:
                pass

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Join or start Ray, place the actors and wait for each one's hello."""
        if self._closed:
            raise WorkerStartError("the local worker backend is closed")
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._started:
                return
            self._state = "starting"
            python = self._python()
            if python:
                await self._check_python(python)
            if self._ray is None:
                await asyncio.to_thread(self._connect)
            for slot in self._slots:
                if slot.actor is None:
                    self._spawn(slot)  # all at once: they start in parallel
            results = await asyncio.gather(*(self._ready(s) for s in self._slots), return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                for slot in self._slots:
                    self._discard(slot, "could not start")
                self._state = "could not start"
                if isinstance(errors[0], WorkerStartError):
                    raise errors[0]
                raise WorkerStartError(f"the local worker could not start as a Ray actor: {errors[0]!r}")
            self._idle = asyncio.Queue()
            for slot in self._slots:
                self._idle.put_nowait(slot)
            self._started = True
            self._state = "idle"

    async def close(self) -> None:
        """Kill the actors (they hold nothing to flush: blobs are renamed into place whole), and
        shut Ray down if this process started it and no other backend still uses it."""
        if self._closed:
            return
        self._closed = True
        if self._ray is not None:
            for slot in self._slots:
                self._discard(slot, "closed")
        self._state = "closed"
        if self._owns_ray:
            self._owns_ray = False
            _owned["refs"] -= 1
            if _owned["refs"] <= 0 and self._ray.is_initialized():
                await asyncio.to_thread(self._ray.shutdown)

    # -- batches -----------------------------------------------------------------------------
    async def run_batch(self, batch: dict[str, Any], on_message: OnMessage) -> None:
        if not self._started:
            await self.start()
        assert self._idle is not None
        slot = await self._idle.get()
        try:
            await self._run_on(slot, batch, on_message)
        finally:
            self._idle.put_nowait(slot)

    async def _run_on(self, slot: _Slot, batch: dict[str, Any], on_message: OnMessage) -> None:
        if self._closed:
            raise WorkerStartError("the local worker backend is closed")
        await self._ready(slot)  # a slot whose actor died gets a new one here
        ray = self._ray
        actor, view = slot.actor, slot.view
        run = view.begin(batch)
        slot.batches += 1
        try:
            stream = actor.run_batch.options(num_returns="streaming").remote(batch)
            async for ref in stream:
                for msg in await ref:
                    if self._handle(slot, msg, on_message):
                        return
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError) as e:
            self._crashed(slot, actor, run.batch_id, run.total, run.finished, e)
        except ray.exceptions.RayTaskError as e:
            raise LocalError(f"{view.label} failed on batch {run.batch_id}: {_trim(str(e))}") from None
        finally:
            view.end()
        # the stream ended without batch_done (a core bug): the Batcher fails what is left

    def _handle(self, slot: _Slot, msg: dict[str, Any], on_message: OnMessage) -> bool:
        """Deliver one message of the running batch; True at its ``batch_done``."""
        kind = msg.get("type")
        if kind == "log":
            self.stderr_tail.append(f"({slot.view.label} {msg.get('level', 'log')}) {msg.get('message', '')}"[:2000])
            return False
        run = slot.view.batch
        if run is None or str(msg.get("batch_id")) != run.batch_id:
            return False
        if kind == "batch_done":
            return True
        if kind not in ("progress", "result"):
            return False
        slot.view.note(msg)
        try:
            on_message(msg)
        except Exception as e:  # a bug in the consumer must not end the batch
            self.stderr_tail.append(f"(core) handling a {kind} message failed: {e!r}")
        return False

    def _crashed(self, slot: _Slot, actor: Any, batch_id: str, total: int, finished: set[str],
                 error: BaseException) -> None:
        """The actor died under a batch: empty its slot, raise WorkerCrashed."""
        pid = (slot.view.hello or {}).get("pid")
        deliberate = self._closed
        who = f"{slot.view.label}" + (f" (pid {pid})" if pid else "")
        if slot.actor is actor:
            self._discard(slot, "closed" if deliberate else "died; restarts on its next batch")
            if not deliberate:
                self.crashes += 1
                slot.view.crashes += 1
        what = "was stopped by judgekit" if deliberate else "died"
        reason = "" if deliberate else f" ({type(error).__name__}): {_trim(str(error), 1500)}"
        self.stderr_tail.append(f"(core) {who} {what} during batch {batch_id}")
        raise WorkerCrashed(f"{who} {what} during batch {batch_id}; {len(finished)} of {total} items had "
                            f"finished{reason}", set(finished)) from None

    # -- introspection -----------------------------------------------------------------------
    @property
    def actors(self) -> list[Any]:
        """The actor handles, by slot (None where one died or was not started)."""
        return [s.actor for s in self._slots]

    @property
    def batches_per_actor(self) -> list[int]:
        """Batches each slot has run (its replacement actors included)."""
        return [s.batches for s in self._slots]

    def status(self) -> list[str]:
        """One line per idle actor, two per busy one (as the subprocess backend's worker)."""
        if not self._started and not self._closed:
            return [f"{self.label}s ({self._actor_device()}): {self._state}"]
        return [line for slot in self._slots for line in slot.view.lines()]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _trim(text: str, limit: int = 3000) -> str:
    """Ray's error text without its colour codes, its end kept when long."""
    text = _ANSI.sub("", text).strip()
    return text if len(text) <= limit else "..." + text[-limit:]
