"""The worker as Ray actors: the same worker core (``judgekit_local.worker.WorkerCore``), one
actor per GPU, up to ``workers`` batches at once, and a run that goes on when actors or nodes die.

``pip install 'judgekit[ray]'``; ray is imported when this backend starts, never before.  With
``local.backend = "ray"`` the :class:`~judgekit.local.Batcher` hands its batches to
:class:`RayBackend`, whose ``parallelism`` (= the actors placed) lets it keep that many in flight:

- **placement is checked before it is asked**: the actors' CPUs and GPUs (``cpus_per_worker``,
  ``gpus_per_worker``), with what the other Ray backends of this process asked, are compared with
  the cluster's resources (:func:`placement`).  None fits: one line naming the shortfall; some
  fit: those are placed and a note says so;
- each actor is **placed, checks the store, then starts**: once placed it reads a probe file the
  driver wrote into the store and writes one back, which the driver reads (:meth:`JudgekitWorker.
  probe_store`).  A node that cannot see the store (not mounted there, read-only) is refused by
  name and later actors avoid it.  Then the actor builds its core (importing torch) and says
  hello.  Placement and start-up each wait ``place_timeout_s`` / ``start_timeout_s`` at the start
  of the run; the live view shows both counting;
- a batch goes to **any idle live actor**.  An actor that dies under a batch (killed, out of
  memory, its node lost) fails it with :class:`~judgekit.local.WorkerCrashed` naming the items
  that had their result; the Batcher sends the others again, to whichever actor is free first,
  and a replacement is asked of Ray in the background and joins when placed.  Only when the
  backend has had **no live actor for** ``no_worker_timeout_s`` do batches fail, with
  :class:`WorkersUnavailable` (the items fail, retryable: the rest of the run goes on, and a rerun
  asks them again); a replacement placed later serves again (once placed, batches wait up to that
  limit again for it to start);
- every actor holds one core (its own model cache) and reserves ``gpus_per_worker`` GPUs
  (``num_gpus``; Ray sets ``CUDA_VISIBLE_DEVICES``, so device ``auto`` is the actor's own GPU).
  With no GPU reserved, device ``auto`` means ``cpu``.  Torch runs ``cpus_per_worker`` threads,
  as the subprocess backend's worker does, so the two give the same bits;
- the messages of a batch stream back as the core emits them (the actor's ``run_batch`` is a
  Ray streaming generator; what the core emitted meanwhile travels as one list, since every
  streamed object costs about 0.3 ms);
- :meth:`RayBackend.faults` counts what went wrong (crashes, restarts, lost and refused nodes)
  for ``summary.json`` and the closing lines; worker lines name their node.

Ray: with ``address`` (``local.ray_address``, or ``RAY_ADDRESS``) this joins that cluster;
without, it reuses the Ray this process already initialised, else starts a light local instance
(no dashboard; worker output stays in Ray's log folder).  A Ray instance started here is shut
down when the last backend using it closes.  ``ray.init`` runs off the event loop's thread, which
also keeps Ray from replacing judgekit's SIGTERM handling.  A failed join keeps Ray's own reason
(token authentication, version mismatch, a wrong address) in its one line.  ``ray://`` (Ray
Client) addresses are refused: Ray's streaming generators do not work over Ray Client.

Images and vectors travel through the content-addressed store folder (``store``), which every
actor opens by the driver's path: **on a cluster the store folder must be on a filesystem that
every node mounts at the same path** (NFS, a shared volume), writable; every node needs
``judgekit-local`` (torch, transformers, diffusers) and the driver's Ray and Python versions.
judgekit itself need not be on the nodes: the actor class travels by value.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import re
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..plural import plural
from .backend import (PROTOCOL_VERSION, Backend, LocalError, OnMessage, WorkerCrashed, WorkersUnavailable,
                      WorkerStartError, WorkerState)
from .process import WORKER_PACKAGE, install_command

__all__ = ["RayBackend", "WorkersUnavailable", "DEFAULT_CORE", "PROBE_DIR", "import_ray", "placement",
           "join_error"]

#: what each actor runs: ``"module:Class"``, built as ``Class(store, device=..., memory_budget_gb=...)``
DEFAULT_CORE = "judgekit_local.worker:WorkerCore"
#: what to install when ray is missing
RAY_HINT = "pip install 'judgekit[ray]' (or pip install ray)"
#: the store's folder for the probe files of the store check (removed when the backend closes)
PROBE_DIR = ".probe"

_owned = {"refs": 0}  # live backends using a Ray instance that this process started
#: what each started backend of this process asked of Ray: id -> (label, actors, CPUs, GPUs each)
_asked: dict[int, tuple[str, int, float, float]] = {}


def import_ray():
    """The ray module, or an ImportError that says what to install."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"local.backend = 'ray' needs the package ray: {RAY_HINT} ({e})") from e
    return ray


def placement(workers: int, cpus: float, gpus: float, total: dict[str, float],
              others: Sequence[tuple[str, int, float, float]] = ()) -> tuple[int, str]:
    """How many of ``workers`` actors of ``cpus`` CPUs and ``gpus`` GPUs each fit in a cluster
    of ``total`` resources once ``others`` (label, actors, CPUs, GPUs each: what this process's
    other backends asked) are served; and the shortfall in words ('' when all fit)."""
    fits = workers
    short: list[str] = []
    for name, per, index in (("CPU", cpus, 2), ("GPU", gpus, 3)):
        if per <= 0:
            continue
        have = float(total.get(name, 0.0))
        taken = sum(o[1] * o[index] for o in others)
        n = max(0, int((have - taken) / per + 1e-9))
        if n < workers:
            by = [f"{o[0]} {o[1]} x {o[index]:g}" for o in others if o[index] > 0]
            short.append(f"{plural(workers, 'actor')} x {per:g} {name} = {workers * per:g} {name} "
                         f"asked, the cluster has {have:g} {name}"
                         + (f" of which {taken:g} are asked by {', '.join(by)}" if by else ""))
        fits = min(fits, n)
    return fits, "; ".join(short)


def join_error(where: str, error: BaseException, logged: Sequence[str] = ()) -> str:
    """One line for a failed ``ray.init``: Ray's reason (its error, the errors it was raised from
    and what Ray logged meanwhile, which is where authentication failures show) and a hint."""
    parts: list[str] = []
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen and len(parts) < 4:
        seen.add(id(e))
        text = " ".join(_trim(str(e), 600).split())
        parts.append(f"{type(e).__name__}: {text}" if text else type(e).__name__)
        e = e.__cause__ or e.__context__
    for line in logged:
        line = " ".join(_trim(line, 400).split())
        if line and not any(line in p for p in parts):
            parts.append(line)
    text = " | ".join(parts)
    low = text.lower()
    hint = ""
    if any(w in low for w in ("auth", "token", "unauthenticated", "permission denied")):
        hint = ("; the cluster has token authentication on: give this process its token (RAY_AUTH_MODE=token "
                "and RAY_AUTH_TOKEN, or the token file ~/.ray/auth_token; `ray get-auth-token` on the head prints it)")
    elif "version" in low and ("mismatch" in low or "match" in low or "differ" in low):
        hint = ("; this process and the cluster must run the same Ray and Python versions (here: ray "
                f"{_ray_version()}, Python {sys.version_info.major}.{sys.version_info.minor})")
    elif any(w in low for w in ("timed out", "timeout", "failed to connect", "unavailable", "connection refused")):
        hint = "; check the address (the head's GCS address, host:6379 by default) and that this machine reaches it"
    return f"cannot start or join {where}: {text}{hint}"


def _ray_version() -> str:
    mod = sys.modules.get("ray")
    return getattr(mod, "__version__", "?") if mod is not None else "?"


class _CollectRayLog(logging.Handler):
    """What Ray logs (warnings and worse) while ``ray.init`` runs: the cause of a failed join is
    often only there.  Hides the warning that no SIGTERM handler was set: that is the point."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(record.getMessage())
        except Exception:
            pass


class _HideSigtermWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def _actor_class():
    """The actor's class.  Defined in a function so that cloudpickle ships it by value: the
    nodes need the core's package (``judgekit_local``), not judgekit.  Standard library only."""

    class JudgekitWorker:
        """One core, built on the first ``hello``; ``run_batch`` streams lists of the messages
        the core emits."""

        def __init__(self, core: str, store: str, device: str, memory_budget_gb: float | None,
                     threads: int | None = None) -> None:
            if threads:  # before torch is imported: its thread pools read these
                for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
                    os.environ[var] = str(threads)
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            self.args = (core, store, device, memory_budget_gb)
            self.threads = threads
            self.core = None

        @staticmethod
        def probe_store(store: str, name: str, token: str, me: str) -> str:
            """'' when this process reads the driver's probe file ``<store>/.probe/<name>``
            (holding ``token``) and can write its own beside it (``<name>.<me>``, holding
            ``me``), which the driver then reads; else why not, in words."""
            folder = os.path.join(store, ".probe")
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as f:
                    got = f.read()
            except OSError as e:
                return f"cannot read the driver's probe file {path} ({type(e).__name__}: {e.strerror or e})"
            if got != token:
                return f"{path} is not the file the driver wrote (another folder is mounted at {store})"
            mine = f"{path}.{me}"
            try:
                with open(mine + ".tmp", "w", encoding="utf-8") as f:
                    f.write(me)
                os.replace(mine + ".tmp", mine)
            except OSError as e:
                return f"cannot write into {folder} ({type(e).__name__}: {e.strerror or e})"
            return ""

        def ready(self, probe_name: str, token: str) -> dict:
            """Placed: where this actor runs, and the store check's outcome (cheap: no torch)."""
            import socket

            import ray

            node_id = ray.get_runtime_context().get_node_id()
            try:
                ip = ray.util.get_node_ip_address()
            except Exception:
                ip = ""
            me = f"{node_id[:12]}-{os.getpid()}"
            store = self.args[1]
            return {"node_id": node_id, "host": socket.gethostname(), "ip": ip, "pid": os.getpid(),
                    "probe_file": f"{probe_name}.{me}", "me": me,
                    "store_problem": self.probe_store(store, probe_name, token, me)}

        def hello(self) -> dict:
            if self.core is None:
                import importlib

                core, store, device, budget = self.args
                module, _, name = core.partition(":")
                self.core = getattr(importlib.import_module(module), name)(
                    store, device=device, memory_budget_gb=budget)
                torch = sys.modules.get("torch")
                if self.threads and torch is not None:
                    torch.set_num_threads(int(self.threads))
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


class _Refused(Exception):
    """The placed actor's node cannot see the store (the node is now refused)."""


class _LaunchFailed(Exception):
    """Ray could not place or start the actor this time (its node died meanwhile...): try again."""


@dataclass(slots=True, eq=False)
class _Slot:
    """One actor's place.  ``phase``: empty, placing, starting, idle, busy, retrying (a launch
    failed; another follows), waiting (no node that sees the store has room), failed (cannot
    start: a later try would fail alike), closed."""

    index: int
    view: WorkerState
    actor: Any = None
    ready_ref: Any = None
    phase: str = "empty"
    since: float = field(default_factory=time.monotonic)
    first_try: float = field(default_factory=time.monotonic)
    node_id: str = ""
    replacing: bool = False
    error: str = ""
    batches: int = 0
    task: asyncio.Task | None = None

    @property
    def live(self) -> bool:
        return self.phase in ("idle", "busy")


class RayBackend(Backend):
    """Up to ``workers`` Ray actors, each one worker core; one batch per actor at a time."""

    def __init__(self, command: Sequence[str] | None = None, *, store: str | os.PathLike[str],
                 device: str = "auto", memory_budget_gb: float | None = None, address: str | None = None,
                 workers: int = 1, gpus_per_worker: float = 0, cpus_per_worker: int = 1,
                 core: str = DEFAULT_CORE, runtime_env: dict[str, Any] | None = None,
                 place_timeout_s: float = 60.0, start_timeout_s: float = 60.0, no_worker_timeout_s: float = 60.0,
                 log_lines: int = 50, label: str = "ray worker") -> None:
        """``command`` is the subprocess backend's worker command: only its Python is used, when it
        is another one than this (``local.python``): Ray starts the actors with it
        (``runtime_env.py_executable``; it needs the same Ray and judgekit-local).  ``core`` is
        the class each actor builds; ``runtime_env`` goes to every actor (tests use it for
        ``env_vars``).  ``cpus_per_worker``: the CPUs each actor reserves and the threads torch
        runs there."""
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if cpus_per_worker < 1:
            raise ValueError("cpus_per_worker must be at least 1")
        self.command = list(command) if command else None
        self.store = str(Path(store).resolve())
        self.device = device
        self.memory_budget_gb = memory_budget_gb
        self.address = address
        self.workers = workers
        self.gpus_per_worker = gpus_per_worker
        self.cpus_per_worker = int(cpus_per_worker)
        self.core = core
        self.runtime_env = runtime_env
        self.place_timeout_s = place_timeout_s
        self.start_timeout_s = start_timeout_s
        self.no_worker_timeout_s = no_worker_timeout_s
        self.label = label
        #: batches that may run at once: one per actor placed (the Batcher reads this)
        self.parallelism = workers
        #: actors that said hello; how many died under a batch; replacements that said hello
        self.starts = 0
        self.crashes = 0
        self.restarts = 0
        #: node names: lost (an actor died with its node) and refused (cannot see the store)
        self.lost_nodes: dict[str, str] = {}
        self.refused_nodes: dict[str, str] = {}
        #: one-line notes for the run (fewer actors placed than asked, a refused node)
        self.notes: list[str] = []
        #: the workers' last ``log`` messages and the core's notes on them (as the subprocess's stderr)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=log_lines)
        self._ray = None
        self._cls = None
        self._slots = [self._new_slot(i + 1) for i in range(workers)]
        self._changed: asyncio.Event | None = None
        self._start_lock: asyncio.Lock | None = None
        self._started = False
        self._owns_ray = False
        self._closed = False
        self._state = "not started"
        self._none_live_since: float | None = None
        self._probe_name = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._probe_token = secrets.token_hex(16)
        self._node_names: dict[str, str] = {}
        self._watchers: set[asyncio.Task] = set()
        #: how often a dead actor's node is looked up, until Ray says whether it is lost
        self.node_check_s = 2.0

    def _new_slot(self, index: int) -> _Slot:
        return _Slot(index, WorkerState(f"{self.label} {index}", self._actor_device()))

    # -- Ray ---------------------------------------------------------------------------------
    def _connect(self) -> None:
        """Join or start Ray (blocking: runs in a thread)."""
        address = self.address or os.environ.get("RAY_ADDRESS")
        if address and address.startswith("ray://"):
            raise WorkerStartError(
                f"local.ray_address {address!r} is a Ray Client address: the workers stream their results back, "
                "and Ray's streaming generators do not work over Ray Client. Run judgekit on a node of the "
                "cluster (or a machine that joins it) and give the head's GCS address (host:6379)")
        ray = import_ray()
        if ray.is_initialized():
            self._ray = ray
            return
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "logging_level": logging.WARNING, "ignore_reinit_error": True}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = os.cpu_count() or 1
        collect, hide = _CollectRayLog(), _HideSigtermWarning()
        worker_log, ray_log = logging.getLogger("ray._private.worker"), logging.getLogger("ray")
        worker_log.addFilter(hide)
        ray_log.addHandler(collect)
        try:
            ray.init(**kwargs)
        except Exception as e:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise WorkerStartError(join_error(where, e, collect.lines)) from None
        finally:
            worker_log.removeFilter(hide)
            ray_log.removeHandler(collect)
        self._ray = ray
        self._owns_ray = True
        _owned["refs"] += 1

    def _actor_options(self, node_id: str | None = None) -> dict[str, Any]:
        options: dict[str, Any] = {"num_cpus": self.cpus_per_worker, "num_gpus": self.gpus_per_worker,
                                   "max_restarts": 0, "max_task_retries": 0}
        if node_id is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
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
        retry starting its workers until the start-up limit."""
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

    def _need(self) -> str:
        need = f"{self.cpus_per_worker} CPU"
        return need + (f" + {self.gpus_per_worker:g} GPU" if self.gpus_per_worker else "")

    # -- the store probe ---------------------------------------------------------------------
    def _probe_folder(self) -> Path:
        return Path(self.store) / PROBE_DIR

    def _write_probe(self) -> None:
        folder = self._probe_folder()
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{self._probe_name}.tmp"
        tmp.write_text(self._probe_token, encoding="utf-8")
        os.replace(tmp, folder / self._probe_name)

    def _read_probe_back(self, probe_file: str, me: str) -> str:
        """'' when the actor's probe file reached this machine's store; else why not."""
        path = self._probe_folder() / probe_file
        try:
            got = path.read_text(encoding="utf-8")
        except OSError:
            return f"what it writes into {self.store} does not reach this machine's store (no {path.name})"
        try:
            path.unlink()
        except OSError:
            pass
        return "" if got == me else f"{path} does not hold what the actor wrote"

    def _remove_probes(self) -> None:
        folder = self._probe_folder()
        try:
            for p in folder.glob(f"{self._probe_name}*"):
                p.unlink(missing_ok=True)
            folder.rmdir()  # only when empty (another run's probe keeps it)
        except OSError:
            pass

    # -- actors ------------------------------------------------------------------------------
    def _node_name(self, info: dict[str, Any]) -> str:
        where = info.get("host") or info.get("ip") or "?"
        if info.get("ip") and info.get("ip") != where:
            where = f"{where} ({info['ip']})"
        return f"{where} node {str(info.get('node_id', ''))[:8]}"

    def _allowed_node(self) -> str | None:
        """Where to place the next actor when some nodes are refused: an alive node not refused
        with room for it (most free first); None (place anywhere) when none is refused.  Raises
        LookupError when every node is refused or full."""
        if not self.refused_nodes:
            return None
        best, room = None, -1.0
        for node in self._ray.nodes():
            nid = node.get("NodeID", "")
            if not node.get("Alive") or nid in self.refused_nodes:
                continue
            total = node.get("Resources") or {}
            if total.get("CPU", 0) < self.cpus_per_worker or total.get("GPU", 0) < self.gpus_per_worker:
                continue
            free = float(total.get("GPU" if self.gpus_per_worker else "CPU", 0))
            if free > room:
                best, room = nid, free
        if best is None:
            raise LookupError("no node that sees the store can hold the actor")
        return best

    def _spawn(self, slot: _Slot) -> None:
        """Ask Ray for a new actor in ``slot`` (returns at once; ``ready`` comes when placed)."""
        ray = self._ray
        if self._cls is None:
            self._cls = ray.remote(_actor_class())
        node = self._allowed_node()
        slot.actor = self._cls.options(**self._actor_options(node)).remote(
            self.core, self.store, self._actor_device(), self.memory_budget_gb, self.cpus_per_worker)
        slot.ready_ref = slot.actor.ready.remote(self._probe_name, self._probe_token)
        slot.view.hello = None
        slot.view.node = ""
        slot.node_id = ""
        self._phase(slot, "placing")

    def _phase(self, slot: _Slot, phase: str) -> None:
        slot.phase, slot.since = phase, time.monotonic()
        slot.view.state = {"idle": "idle", "busy": "running"}.get(phase, phase)
        if any(s.live for s in self._slots):
            self._none_live_since = None
        elif self._none_live_since is None:
            self._none_live_since = time.monotonic()
        if self._changed is not None:
            self._changed.set()

    async def _launch(self, slot: _Slot) -> None:
        """Place one actor in ``slot``, check its store, wait for its hello.  Raises _Refused,
        _LaunchFailed (may go better next time) or WorkerStartError (will not)."""
        ray = self._ray
        try:
            self._spawn(slot)
        except LookupError as e:
            raise _LaunchFailed(str(e)) from None
        try:
            info = await slot.ready_ref
        except ray.exceptions.RayError as e:
            self._discard(slot, "retrying")
            raise self._start_error(e, placed=False) from None
        slot.node_id = str(info.get("node_id", ""))
        name = self._node_names[slot.node_id] = self._node_name(info)
        slot.view.node = name
        problem = info.get("store_problem") or await asyncio.to_thread(
            self._read_probe_back, str(info.get("probe_file")), str(info.get("me")))
        if problem:
            self._discard(slot, "retrying")
            if slot.node_id not in self.refused_nodes:
                self.refused_nodes[slot.node_id] = name
                note = f"{self.label}s: node {name} refused: it cannot see the store {self.store}: {problem}"
                self.notes.append(note)
                self.stderr_tail.append(f"(core) {note}")
            raise _Refused(problem)
        self._phase(slot, "starting")
        if self._none_live_since is not None:  # one is coming: batches wait for it (a limit more)
            self._none_live_since = time.monotonic()
        try:
            hello = await slot.actor.hello.remote()
        except ray.exceptions.RayError as e:
            self._discard(slot, "retrying")
            raise self._start_error(e, placed=True) from None
        if hello.get("protocol") != PROTOCOL_VERSION:
            self._discard(slot, "failed")
            raise WorkerStartError(
                f"the local worker ({hello.get('worker', '?')}) speaks protocol {hello.get('protocol')!r}; this "
                f"judgekit speaks {PROTOCOL_VERSION}: install matching versions of judgekit and {WORKER_PACKAGE}")
        slot.view.hello = hello
        self.starts += 1

    def _start_error(self, e: BaseException, placed: bool) -> Exception:
        """A RayError while placing or starting: WorkerStartError when retrying cannot help."""
        text = _trim(str(e))
        module = self.core.split(":")[0].split(".")[0]
        if f"No module named '{module}'" in text:
            return WorkerStartError(
                f"{self.label} could not start ({type(e).__name__}): {text}\nthe Ray workers' Python cannot "
                f"import {module}: install {WORKER_PACKAGE} (`{install_command()}` from the judgekit repository) "
                "wherever the actors run")
        if isinstance(e, self._ray.exceptions.RuntimeEnvSetupError) or "creation task" in text:
            return WorkerStartError(f"{self.label} could not start ({type(e).__name__}): {text}")
        return _LaunchFailed(f"{'start' if placed else 'placement'} failed ({type(e).__name__}): "
                             f"{_trim(text, 400)}")

    async def _bring_up(self, slot: _Slot) -> None:
        """Launch until the slot has a live actor (or cannot have one: ``failed``)."""
        slot.first_try = time.monotonic()
        wait = 1.0
        while not self._closed:
            try:
                await self._launch(slot)
            except _Refused:
                continue  # the next one avoids the refused node
            except _LaunchFailed as e:
                slot.error = str(e)
                self._phase(slot, "waiting" if "no node" in slot.error else "retrying")
                await asyncio.sleep(wait)
                wait = min(30.0, wait * 2)
                continue
            except WorkerStartError as e:
                slot.error = str(e)
                self._phase(slot, "failed")
                return
            if slot.replacing:
                self.restarts += 1
            slot.error = ""
            self._phase(slot, "idle")
            return

    def _replace(self, slot: _Slot) -> None:
        """Ask for a new actor in the background; it joins when placed."""
        slot.replacing = True
        if not self._closed and (slot.task is None or slot.task.done()):
            slot.task = asyncio.ensure_future(self._bring_up(slot))

    def _discard(self, slot: _Slot, phase: str) -> None:
        """Kill the slot's actor (if any) and leave the slot empty, in ``phase``."""
        actor, slot.actor, slot.ready_ref, slot.view.hello = slot.actor, None, None, None
        self._phase(slot, phase)
        if actor is not None:
            try:
                self._ray.kill(actor, no_restart=True)
            except Exception:
                pass

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Join or start Ray, check placement, place the actors and wait (within the limits) for
        each one's hello.  Goes on with those that started when at least one did."""
        if self._closed:
            raise WorkerStartError("the local worker backend is closed")
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._started:
                return
            self._changed = asyncio.Event()
            self._state = "starting"
            python = self._python()
            if python:
                await self._check_python(python)
            if self._ray is None:
                await asyncio.to_thread(self._connect)
            await self._check_placement()
            _asked[id(self)] = (self.label, len(self._slots), float(self.cpus_per_worker), float(self.gpus_per_worker))
            await asyncio.to_thread(self._write_probe)
            for slot in self._slots:
                slot.task = asyncio.ensure_future(self._bring_up(slot))
            try:
                await self._wait_started()
            except BaseException:
                await self._stop_slots("could not start")
                self._state = "could not start"
                _asked.pop(id(self), None)
                raise
            self._started = True
            self._state = "running"

    async def _check_placement(self) -> None:
        total = await asyncio.to_thread(self._ray.cluster_resources)
        others = [a for k, a in _asked.items() if k != id(self)]
        fits, short = placement(self.workers, self.cpus_per_worker, self.gpus_per_worker, total, others)
        if fits == 0:
            raise WorkerStartError(f"{self.label}s cannot be placed: {short}; lower workers, cpus_per_worker or "
                                   "gpus_per_worker, or add nodes")
        if fits < self.workers:
            del self._slots[fits:]
            self.parallelism = fits
            note = f"{self.label}s: placing {fits} of {self.workers} actors ({short})"
            self.notes.append(note)
            self.stderr_tail.append(f"(core) {note}")

    def _over(self, slot: _Slot, now: float) -> bool:
        """Past the start's limits: placing or starting too long, or cannot start."""
        if slot.phase == "failed":
            return True
        if slot.phase == "placing":
            return now - slot.since > self.place_timeout_s
        if slot.phase == "starting":
            return now - slot.since > self.start_timeout_s
        return now - slot.first_try > self.place_timeout_s + self.start_timeout_s  # retrying, waiting

    async def _wait_started(self) -> None:
        assert self._changed is not None
        while True:
            now = time.monotonic()
            live = [s for s in self._slots if s.live]
            pending = [s for s in self._slots if not s.live and not self._over(s, now)]
            if not pending:
                break
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), 0.5)
            except asyncio.TimeoutError:
                pass
        if live:
            late = len(self._slots) - len(live)
            if late:
                note = (f"{self.label}s: {len(live)} of {len(self._slots)} actors started; the other {late} join when "
                        "placed")
                self.notes.append(note)
                self.stderr_tail.append(f"(core) {note}")
            return
        failed = [s for s in self._slots if s.phase == "failed"]
        if failed:
            raise WorkerStartError(failed[0].error)
        slot = self._slots[0]
        if slot.phase == "placing":
            total = await asyncio.to_thread(self._ray.cluster_resources)
            free = await asyncio.to_thread(self._ray.available_resources)
            raise WorkerStartError(
                f"{slot.view.label} was not placed within {self.place_timeout_s:g} s (each actor needs {self._need()}; "
                f"the cluster has {_resources(total)}, free now {_resources(free)}; local.place_timeout_s waits longer)")
        if slot.phase == "starting":
            raise WorkerStartError(f"{slot.view.label} on {slot.view.node} did not start within "
                                   f"{self.start_timeout_s:g} s (local.start_timeout_s waits longer)")
        refused = f"; refused: {', '.join(self.refused_nodes.values())}" if self.refused_nodes else ""
        raise WorkerStartError(f"{slot.view.label} could not start: {slot.error or slot.phase}{refused}")

    async def _stop_slots(self, phase: str) -> None:
        for slot in self._slots:
            if slot.task is not None and not slot.task.done():
                slot.task.cancel()
                try:
                    await slot.task
                except (asyncio.CancelledError, Exception):
                    pass
            if self._ray is not None:
                self._discard(slot, phase)

    async def close(self) -> None:
        """Kill the actors (they hold nothing to flush: blobs are renamed into place whole), and
        shut Ray down if this process started it and no other backend still uses it."""
        if self._closed:
            return
        self._closed = True
        _asked.pop(id(self), None)
        for task in list(self._watchers):
            task.cancel()
        await self._stop_slots("closed")
        self._state = "closed"
        await asyncio.to_thread(self._remove_probes)
        if self._owns_ray:
            self._owns_ray = False
            _owned["refs"] -= 1
            if _owned["refs"] <= 0 and self._ray.is_initialized():
                await asyncio.to_thread(self._ray.shutdown)

    # -- batches -----------------------------------------------------------------------------
    async def run_batch(self, batch: dict[str, Any], on_message: OnMessage) -> None:
        if not self._started:
            await self.start()
        slot = await self._take()
        try:
            await self._run_on(slot, batch, on_message)
        finally:
            if slot.phase == "busy":
                self._phase(slot, "idle")

    async def _take(self) -> _Slot:
        """An idle live actor (the first free); waits while none is, up to
        ``no_worker_timeout_s`` of having none live: then :class:`WorkersUnavailable`."""
        assert self._changed is not None
        while True:
            if self._closed:
                raise WorkerStartError("the local worker backend is closed")
            for slot in self._slots:
                if slot.phase == "idle":
                    self._phase(slot, "busy")
                    return slot
            left = None
            if self._none_live_since is not None:
                left = self._none_live_since + self.no_worker_timeout_s - time.monotonic()
                if left <= 0:
                    raise WorkersUnavailable(self._unavailable())
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    def _unavailable(self) -> str:
        since = time.monotonic() - (self._none_live_since or time.monotonic())
        why = "; ".join(dict.fromkeys(s.error for s in self._slots if s.error)) or \
            f"the replacements wait for placement (each needs {self._need()})"
        lost = f"; lost nodes: {', '.join(self.lost_nodes.values())}" if self.lost_nodes else ""
        return (f"no live {self.label} for {since:.0f} s (local.no_worker_timeout_s = {self.no_worker_timeout_s:g}): "
                f"{why}{lost}")

    async def _run_on(self, slot: _Slot, batch: dict[str, Any], on_message: OnMessage) -> None:
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
            await self._crashed(slot, actor, run.batch_id, run.total, run.finished, e)
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

    def _node_lost(self, node_id: str, error: BaseException) -> bool:
        """Did the actor die with its node?  Ray's words, else the node table (blocking)."""
        if not node_id:
            return False
        text = str(error).lower()
        if "node" in text and any(w in text for w in ("died", "dead", "removed", "failed health")):
            return True
        try:
            return any(n.get("NodeID") == node_id and not n.get("Alive") for n in self._ray.nodes())
        except Exception:
            return False

    def _watch(self, task: asyncio.Task) -> None:
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    async def _watch_node(self, node_id: str, name: str, for_s: float = 120.0) -> None:
        """Count the node lost if Ray marks it dead within ``for_s`` of its actor's death."""
        t0 = time.monotonic()
        while not self._closed and time.monotonic() - t0 < for_s and node_id not in self.lost_nodes:
            await asyncio.sleep(self.node_check_s)
            try:
                nodes = await asyncio.to_thread(self._ray.nodes)
            except Exception:
                continue
            if any(n.get("NodeID") == node_id and not n.get("Alive") for n in nodes):
                self.lost_nodes[node_id] = name
                self.stderr_tail.append(f"(core) node {name} lost")

    async def _crashed(self, slot: _Slot, actor: Any, batch_id: str, total: int, finished: set[str],
                       error: BaseException) -> None:
        """The actor died under a batch: empty its slot, ask for a replacement, raise WorkerCrashed."""
        pid = (slot.view.hello or {}).get("pid")
        node, node_id = slot.view.node, slot.node_id
        deliberate = self._closed
        who = f"{slot.view.label}" + (f" (pid {pid}" + (f" on {node}" if node else "") + ")" if pid else "")
        lost = False
        if slot.actor is actor:
            self._discard(slot, "closed" if deliberate else "retrying")
            if not deliberate:
                self.crashes += 1
                slot.view.crashes += 1
                lost = await asyncio.to_thread(self._node_lost, node_id, error)
                if lost:
                    self.lost_nodes[node_id] = node
                elif node_id:  # Ray marks a node dead only once its heartbeats are missed
                    self._watch(asyncio.ensure_future(self._watch_node(node_id, node)))
                self._replace(slot)
        what = "was stopped by judgekit" if deliberate else ("died with its node" if lost else "died")
        reason = "" if deliberate else f" ({type(error).__name__}): {_trim(str(error), 1500)}"
        self.stderr_tail.append(f"(core) {who} {what} during batch {batch_id}")
        raise WorkerCrashed(f"{who} {what} during batch {batch_id}; {len(finished)} of {plural(total, 'item')} had "
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

    @property
    def live(self) -> int:
        """Actors alive and started now."""
        return sum(s.live for s in self._slots)

    def faults(self) -> dict[str, Any]:
        """What went wrong with the actors, for the summary: how many were asked and placed,
        live now, started, died under a batch, replaced; the nodes lost and refused; notes."""
        return {"backend": "ray", "actors_asked": self.workers, "actors": len(self._slots), "live": self.live,
                "starts": self.starts, "crashes": self.crashes, "restarts": self.restarts,
                "lost_nodes": sorted(self.lost_nodes.values()), "refused_nodes": sorted(self.refused_nodes.values()),
                "notes": list(self.notes)}

    def status(self) -> list[str]:
        """Per actor: one line when idle, two when busy (as the subprocess backend's worker), one
        counting the wait while it is placed or starts; a line counting the time with no live
        actor; the notes."""
        if not self._started and self._changed is None:
            return [f"{self.label}s ({self._actor_device()}): {self._state}"]
        now = time.monotonic()
        lines: list[str] = []
        for slot in self._slots:
            if slot.live or slot.phase == "closed":
                lines += slot.view.lines()
            else:
                lines.append(self._waiting_line(slot, now))
        live = self.live
        if self._started and not self._closed and live < len(self._slots):
            lost = f", {plural(len(self.lost_nodes), 'node')} lost" if self.lost_nodes else ""
            lines.append(f"{self.label}s: {live} of {len(self._slots)} live, {self.crashes} died{lost}")
        if self._none_live_since is not None and self._started and not self._closed:
            lines.append(f"{self.label}s: no live actor for {now - self._none_live_since:.0f} s of "
                         f"{self.no_worker_timeout_s:g}; then their items fail (a rerun asks them again)")
        lines += [f"note: {n}" for n in self.notes[-3:]]
        return lines

    def _waiting_line(self, slot: _Slot, now: float) -> str:
        who = slot.view.label
        el = now - slot.since
        crashes = f", {plural(slot.view.crashes, 'crash')}" if slot.view.crashes else ""
        starting = not self._started
        if slot.phase == "placing":
            limit = f" of {self.place_timeout_s:g}" if starting else ""
            more = " (a replacement: used when placed)" if slot.replacing else ""
            return f"{who}: waiting for placement ({self._need()}) {el:.0f} s{limit}{more}{crashes}"
        if slot.phase == "starting":
            limit = f" of {self.start_timeout_s:g}" if starting else ""
            return f"{who} on {slot.view.node}: starting {el:.0f} s{limit}{crashes}"
        if slot.phase in ("retrying", "waiting"):
            return f"{who}: {slot.phase} ({slot.error or 'its actor died'}){crashes}"
        if slot.phase == "failed":
            return f"{who}: could not start: {_trim(slot.error, 300)}"
        return f"{who}: {slot.phase}{crashes}"


def _resources(res: dict[str, float]) -> str:
    keys = [k for k in ("CPU", "GPU") if k in res] or sorted(k for k in res if not k.startswith("node:"))[:4]
    return ", ".join(f"{res[k]:g} {k}" for k in keys) or "nothing"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _trim(text: str, limit: int = 3000) -> str:
    """Ray's error text without its colour codes, its end kept when long."""
    text = _ANSI.sub("", text).strip()
    return text if len(text) <= limit else "..." + text[-limit:]
