"""The worker as a child process on this machine, spoken to over its pipes (``local/PROTOCOL.md``).

The process starts on the first batch (or on :meth:`SubprocessBackend.start`): ``<command>
--store STORE --device D [--memory-budget-gb N] [--threads T]`` where ``command`` is normally ``[python, "-m",
"judgekit_local"]``.  A reader task parses its stdout lines as they come; its stderr is drained
into a ring of the last lines, which explain a crash.  It runs in its own session, so Ctrl-C
reaches the core only and the core decides when the worker ends: :meth:`close` asks it to shut
down, waits briefly and kills it; if the core dies without closing, the worker sees EOF on its
stdin (which it treats as shutdown) and any process this module started is killed at interpreter
exit.

If the worker dies during a batch, :meth:`run_batch` raises :class:`WorkerCrashed` with the items
that had their result and the stderr tail; the next :meth:`run_batch` starts a new process.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import json
import os
import shlex
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..plural import plural
from .backend import PROTOCOL_VERSION, Backend, OnMessage, WorkerCrashed, WorkerStartError, WorkerState

__all__ = ["SubprocessBackend", "DEFAULT_MODULE"]

#: the worker's module: ``<python> -m judgekit_local``
DEFAULT_MODULE = "judgekit_local"
#: the pip package that provides it (``pip install -e ./local`` from a judgekit checkout)
WORKER_PACKAGE = "judgekit-local"
#: the torch version the worker is tested with (the README's install command pins it)
TORCH_PIN = "torch==2.13.0"


def install_command(python: str | None = None) -> str:
    """The command that installs the worker, torch pinned, run from a judgekit checkout:
    ``pip install "torch==2.13.0" -e ./local`` (with ``python``: ``PYTHON -m pip ...``)."""
    pip = f"{shlex.quote(python)} -m pip" if python else "pip"
    return f'{pip} install "{TORCH_PIN}" -e ./local'

_LINE_LIMIT = 64 * 1024 * 1024  # one protocol line (a batch of long chat answers) may be large
_live_pids: set[int] = set()  # workers this process started and has not seen exit


def _kill_leftovers() -> None:  # at interpreter exit: never leave a worker holding a GPU
    for pid in list(_live_pids):
        try:
            os.kill(pid, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    _live_pids.clear()


atexit.register(_kill_leftovers)


@dataclass(slots=True)
class _Running:
    """The batch in flight."""

    batch_id: str
    total: int
    on_message: OnMessage
    done: asyncio.Future
    finished: set[str]


class SubprocessBackend(Backend):
    """One worker process; batches run one at a time."""

    parallelism = 1

    def __init__(self, command: Sequence[str], *, store: str | os.PathLike[str], device: str = "auto",
                 memory_budget_gb: float | None = None, threads: int | None = None,
                 env: dict[str, str] | None = None,
                 hello_timeout_s: float = 600.0, shutdown_grace_s: float = 5.0, stderr_lines: int = 50,
                 label: str = "worker") -> None:
        self.command = list(command)
        self.store = str(Path(store).resolve())
        self.device = device
        self.memory_budget_gb = memory_budget_gb
        #: torch's threads in the worker (``local.cpus_per_worker``, as a Ray actor's); None: torch's default
        self.threads = threads
        self.env = env
        self.hello_timeout_s = hello_timeout_s
        self.shutdown_grace_s = shutdown_grace_s
        #: what the worker is doing (its hello, the running batch, crashes), for the display
        self.worker = WorkerState(label, device)
        #: processes started
        self.starts = 0
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._proc: asyncio.subprocess.Process | None = None
        self._hello_fut: asyncio.Future | None = None
        self._eof = True
        self._stdout_task: asyncio.Task | None = None
        self._stderr_task: asyncio.Task | None = None
        self._running: _Running | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._killing = False  # a kill of ours is not a crash

    # -- the command -------------------------------------------------------------------------
    @property
    def argv(self) -> list[str]:
        argv = [*self.command, "--store", self.store, "--device", self.device]
        if self.memory_budget_gb is not None:
            argv += ["--memory-budget-gb", f"{self.memory_budget_gb:g}"]
        if self.threads:
            argv += ["--threads", str(int(self.threads))]
        return argv

    def _module(self) -> str | None:
        if "-m" in self.command[:-1]:
            return self.command[self.command.index("-m") + 1]
        return None

    def _install_hint(self, tail: str) -> str:
        module = self._module()
        top = module.split(".")[0] if module else ""
        if module and (f"No module named '{top}'" in tail or f"No module named {top}" in tail):
            return (f"\n{self.command[0]} cannot import {module}: install the worker into that Python with "
                    f"`{install_command(self.command[0])}` (the {WORKER_PACKAGE} package, from the judgekit "
                    f"repository), or set local.python to a Python that has it")
        return ""

    def tail_text(self, lines: int = 20) -> str:
        """The last lines the worker wrote to stderr (and protocol ``log`` messages)."""
        return "\n".join(list(self.stderr_tail)[-lines:])

    @property
    def hello(self) -> dict[str, Any] | None:
        """The hello message of the running worker (``pid``, ``device``, versions), or None."""
        return self.worker.hello

    @property
    def crashes(self) -> int:
        """How many worker processes died on their own."""
        return self.worker.crashes

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None and not self._eof

    async def start(self) -> None:
        """Start the worker and wait for its hello (nothing if it is already running)."""
        if self._closed:
            raise WorkerStartError("the local worker backend is closed")
        if self.alive and self.hello is not None:
            return
        await self._reap()
        self.worker.state = "starting"
        self.worker.hello = None
        self.stderr_tail.clear()  # what a crash message shows is this process's output
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        if self.threads:  # torch's thread pools read these at import
            for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
                env[var] = str(int(self.threads))
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, limit=_LINE_LIMIT, start_new_session=True)
        except OSError as e:
            self.worker.state = "could not start"
            raise WorkerStartError(f"cannot start the local worker `{' '.join(self.command)}`: {e}"
                                   + ("; set local.python to an existing Python executable"
                                      if isinstance(e, FileNotFoundError) else "")) from None
        self._proc = proc
        self._eof = False
        self.starts += 1
        _live_pids.add(proc.pid)
        self._hello_fut = asyncio.get_running_loop().create_future()
        self._stderr_task = asyncio.ensure_future(self._read_stderr(proc))
        self._stdout_task = asyncio.ensure_future(self._read_stdout(proc))
        try:
            hello = await asyncio.wait_for(asyncio.shield(self._hello_fut), self.hello_timeout_s)
        except asyncio.TimeoutError:
            self._hello_fut.cancel()
            await self._kill()
            self.worker.state = "could not start"
            raise WorkerStartError(f"the local worker `{' '.join(self.command)}` said no hello within "
                                   f"{self.hello_timeout_s:g} s\n{self.tail_text()}") from None
        except WorkerStartError:
            self.worker.state = "could not start"
            raise
        if hello.get("protocol") != PROTOCOL_VERSION:
            await self._kill()
            self.worker.state = "could not start"
            raise WorkerStartError(
                f"the local worker ({hello.get('worker', '?')}) speaks protocol {hello.get('protocol')!r}; this "
                f"judgekit speaks {PROTOCOL_VERSION}: install matching versions of judgekit and {WORKER_PACKAGE}")
        self.worker.hello = hello
        self.worker.state = "idle"

    async def close(self) -> None:
        self._closed = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            try:
                if proc.stdin is not None and not proc.stdin.is_closing():
                    proc.stdin.write(b'{"op":"shutdown"}\n')
                    await asyncio.wait_for(proc.stdin.drain(), 1.0)
                    proc.stdin.close()
            except (OSError, asyncio.TimeoutError, RuntimeError):
                pass
            try:
                await asyncio.wait_for(proc.wait(), self.shutdown_grace_s)
            except asyncio.TimeoutError:
                await self._kill()
        await self._reap()
        self.worker.state = "closed"

    async def _kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.returncode is None:
            self._killing = True
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                pass
        await self._reap()

    async def _reap(self) -> None:
        """Forget a dead (or killed) process and its reader tasks; a live one is kept."""
        proc = self._proc
        if proc is not None and proc.returncode is None and not self._eof:
            return
        # its readers end on EOF, and the stdout reader must finish failing the running batch:
        # wait for them rather than cancel
        for task in (self._stdout_task, self._stderr_task):
            if task is not None and not task.done():
                try:
                    await asyncio.wait_for(asyncio.shield(task), 15)
                except asyncio.TimeoutError:
                    task.cancel()
                except Exception:
                    pass
        self._stdout_task = self._stderr_task = None
        if proc is not None:
            if proc.returncode is None:  # closed its stdout yet lives on
                try:
                    proc.kill()
                except ProcessLookupError:
                    pass
                await proc.wait()
            _live_pids.discard(proc.pid)
        self._proc = None
        self._eof = True

    # -- batches -----------------------------------------------------------------------------
    async def run_batch(self, batch: dict[str, Any], on_message: OnMessage) -> None:
        async with self._lock:
            if not self.alive or self.hello is None:
                await self.start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None
            shown = self.worker.begin(batch)
            run = _Running(shown.batch_id, shown.total, on_message, asyncio.get_running_loop().create_future(),
                           shown.finished)
            self._running = run
            try:
                line = json.dumps(batch, ensure_ascii=False, separators=(",", ":")) + "\n"
                try:
                    proc.stdin.write(line.encode("utf-8"))
                    await proc.stdin.drain()
                except (OSError, RuntimeError):
                    pass  # it died: the stdout reader sees EOF and fails `run.done`
                await run.done
            finally:
                self._running = None
                self.worker.end()

    # -- readers -----------------------------------------------------------------------------
    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while True:
            try:
                raw = await proc.stderr.readline()
            except ValueError:  # a line over the limit: keep its start
                raw = b"(a very long stderr line)"
            if not raw:
                return
            self.stderr_tail.append(raw.decode("utf-8", "replace").rstrip()[:2000])

    async def _read_stdout(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while True:
                try:
                    raw = await proc.stdout.readline()
                except ValueError:
                    self.stderr_tail.append("(core) a protocol line over the size limit was dropped")
                    continue
                if not raw:
                    break
                self._dispatch(raw)
        finally:
            if self._proc is proc:
                await self._on_exit(proc)

    def _dispatch(self, raw: bytes) -> None:
        try:
            msg = json.loads(raw)
            kind = msg.get("type")
        except (ValueError, AttributeError):
            self.stderr_tail.append("(stdout) " + raw.decode("utf-8", "replace").rstrip()[:2000])
            return
        if kind == "hello":
            if self._hello_fut is not None and not self._hello_fut.done():
                self._hello_fut.set_result(msg)
            return
        if kind == "log":
            self.stderr_tail.append(f"({msg.get('level', 'log')}) {msg.get('message', '')}"[:2000])
            return
        run = self._running
        if run is None or str(msg.get("batch_id")) != run.batch_id:
            return  # a late message of an abandoned batch
        if kind in ("progress", "result"):
            self.worker.note(msg)  # a result's item joins run.finished (the same set)
            self._deliver(run, msg)
        elif kind == "batch_done":
            if not run.done.done():
                run.done.set_result(None)

    def _deliver(self, run: _Running, msg: dict[str, Any]) -> None:
        try:
            run.on_message(msg)
        except Exception as e:  # a bug in the consumer must not kill the reader
            self.stderr_tail.append(f"(core) handling a {msg.get('type')} message failed: {e!r}")

    async def _on_exit(self, proc: asyncio.subprocess.Process) -> None:
        """stdout closed: the worker is gone (or going).  Fail the hello or the running batch."""
        self._eof = True
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except asyncio.TimeoutError:  # closed its stdout but lives on: it is of no use now
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            await proc.wait()
        _live_pids.discard(proc.pid)
        if self._stderr_task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 2)
            except (asyncio.TimeoutError, Exception):
                pass
        rc = proc.returncode
        tail = self.tail_text()
        if self._hello_fut is not None and not self._hello_fut.done():
            self._hello_fut.set_exception(WorkerStartError(
                f"the local worker `{' '.join(self.command)}` exited before saying hello (exit code {rc})"
                + (f":\n{tail}" if tail else "") + self._install_hint(tail)))
            return
        deliberate = self._closed or self._killing
        self._killing = False
        run = self._running
        if deliberate:
            message = f"the local worker (pid {proc.pid}) was stopped by judgekit"
        else:
            self.worker.crashes += 1
            self.worker.state = f"died (exit code {rc}); restarts on the next batch"
            message = f"the local worker (pid {proc.pid}) died (exit code {rc})"
        if run is not None and not run.done.done():
            run.done.set_exception(WorkerCrashed(
                f"{message} during batch {run.batch_id}; {len(run.finished)} of {plural(run.total, 'item')} "
                "had finished"
                + (f"; its last output:\n{tail}" if tail and not deliberate else ""), run.finished))

    # -- display -----------------------------------------------------------------------------
    def faults(self) -> dict[str, Any]:
        """Processes started, died on their own, and started again after one did."""
        return {"backend": "subprocess", "starts": self.starts, "crashes": self.crashes,
                "restarts": max(0, self.starts - 1)}

    def status(self) -> list[str]:
        return self.worker.lines(self._proc.pid if self._proc is not None else None)
