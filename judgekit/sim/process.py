"""Simulators that run beside the caller: :class:`SimThread` (its own event loop in a
background thread, for sync code) and :class:`SimProcess` (a ``python -m judgekit.sim``
subprocess, so the server gets its own CPU core).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Any

from judgekit.sim.config import SimConfig
from judgekit.sim.app import READY_PREFIX, SimServer, SimStartError, url_host

__all__ = ["SimThread", "SimProcess"]


class SimThread:
    """A simulator running in a background thread with its own event loop (for sync code).

    ``start()`` blocks until it listens; usable as a context manager.
    """

    def __init__(self, config: SimConfig | None = None, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config or SimConfig()
        self.server = SimServer(self.config)
        self._host, self._port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def root_url(self) -> str:
        return self.server.root_url

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self.server.start(self._host, self._port))
        except BaseException as e:  # reported to start()
            self._error = e
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.server.stop())
            loop.close()

    def start(self, timeout: float = 20.0) -> "SimThread":
        """Start the thread and wait until the server listens."""
        if self._thread is not None:
            raise RuntimeError("the simulator thread is already started")
        self._thread = threading.Thread(target=self._run, name="judgekit-sim", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise SimStartError(f"the simulator thread did not start within {timeout} s")
        if self._error is not None:
            raise SimStartError(f"the simulator thread failed to start: {self._error!r}") from self._error
        return self

    def _call(self, fn: Any) -> Any:
        loop = self._loop
        if loop is None or not loop.is_running():
            return fn()

        async def _invoke() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(_invoke(), loop).result(10)

    def stats(self) -> dict[str, Any]:
        """The counters, read on the server's own loop."""
        return self._call(self.server.stats)

    def reset(self) -> None:
        """Zero the counters (see ``POST /sim/reset``)."""
        self._call(self.server.reset)

    def stop(self) -> None:
        """Stop the server and join the thread."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    def __enter__(self) -> "SimThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SimProcess:
    """A simulator in a subprocess (``python -m judgekit.sim``), so it has its own CPU core.

    ``start()`` waits (up to ``startup_timeout`` s) for the ``JUDGEKIT_SIM_READY <port>``
    line; ``stop()`` terminates, then kills.  ``stats()`` reads ``/sim/stats`` over HTTP.
    Usable as a context manager.
    """

    def __init__(
        self,
        config: SimConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 20.0,
        python: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.config = config or SimConfig()
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self.python = python or sys.executable
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self._stderr: Any = None
        self._reader: threading.Thread | None = None

    @property
    def root_url(self) -> str:
        return f"http://{url_host(self.host)}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def command(self) -> list[str]:
        """The command line the subprocess runs."""
        return [
            self.python, "-m", "judgekit.sim",
            "--config-json", self.config.model_dump_json(),
            "--host", self.host,
            "--port", str(self.port),
            "--exit-with-parent",
        ]

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read()[-4000:]
        except (OSError, ValueError):
            return ""

    def start(self) -> "SimProcess":
        """Spawn the server and wait until it listens."""
        if self.proc is not None:
            raise RuntimeError("the simulator process is already started")
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.proc = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.PIPE,  # never written: its EOF tells the child we are gone
            text=True,
            env=env,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        stdout = self.proc.stdout
        assert stdout is not None

        def pump() -> None:  # reads the ready line, then drains stdout until EOF
            for line in stdout:
                lines.put(line)
            lines.put(None)

        self._reader = threading.Thread(target=pump, name="judgekit-sim-stdout", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = lines.get(timeout=max(0.0, left)) if left > 0 else None
            except queue.Empty:
                line = None
            if line is not None and line.startswith(READY_PREFIX):
                self.port = int(line.split()[1])
                return self
            if line is None:  # timeout or EOF
                code = self.proc.poll()
                if code is None and left > 0:  # EOF: the child is exiting, collect its code
                    try:
                        code = self.proc.wait(5)
                    except subprocess.TimeoutExpired:
                        pass
                self._kill()
                why = (
                    f"exited with code {code}"
                    if code is not None
                    else f"did not report ready within {self.startup_timeout:g} s"
                )
                raise SimStartError(
                    f"judgekit simulator subprocess {why}.\ncommand: {' '.join(self.command()[:3])} ...\n"
                    f"stderr:\n{self._read_stderr() or '(empty)'}"
                )

    def _kill(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()

    def stop(self) -> None:
        """Terminate the subprocess (kill it if it does not exit within 5 s)."""
        if self.proc is None:
            return
        self._kill()
        self.proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _get(self, path: str, method: str = "GET") -> dict[str, Any]:
        req = urllib.request.Request(self.root_url + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict[str, Any]:
        """The counters, from ``GET /sim/stats``."""
        return self._get("/sim/stats")

    def reset(self) -> dict[str, Any]:
        """``POST /sim/reset``; returns the zeroed counters."""
        return self._get("/sim/reset", "POST")

    def __enter__(self) -> "SimProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
