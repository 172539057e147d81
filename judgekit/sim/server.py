"""The simulator's server, every way to run it in one place: :class:`SimServer` (in the caller's
event loop) and the HTTP application behind it (:func:`build_app`, its endpoints listed in
:mod:`judgekit.sim.app`), :class:`SimThread` (own loop in a background thread, for sync code),
:class:`SimProcess` (a ``python -m judgekit.sim`` subprocess, so the server gets its own CPU core;
both in :mod:`judgekit.sim.process`), and :func:`serve_forever` (the CLI body, here).

This module stands above :mod:`judgekit.sim.app` and :mod:`judgekit.sim.process` and names their
classes as it did before they were split out; neither imports it back.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import Any

from judgekit.sim.app import BATCHES_KEY  # noqa: F401  (callers read the batch store's key from here)
from judgekit.sim.app import READY_PREFIX, SimServer, SimStartError, build_app, url_host
from judgekit.sim.config import SimConfig
from judgekit.sim.core import SimStats
from judgekit.sim.process import SimProcess, SimThread
from judgekit.sim.protocol import estimate_prompt_tokens

__all__ = [
    "READY_PREFIX",
    "SimStats",
    "SimStartError",
    "SimServer",
    "SimThread",
    "SimProcess",
    "build_app",
    "estimate_prompt_tokens",
    "serve_forever",
]

# ----------------------------------------------------------------------------------------
# blocking entry point
# ----------------------------------------------------------------------------------------

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _unblock_stop_signals() -> None:
    """Let SIGINT/SIGTERM reach this process even if whoever started it had them blocked.

    A blocked signal mask survives ``fork`` and ``exec``, and a handler installed with
    ``loop.add_signal_handler`` never runs for a blocked signal: a child spawned from a thread
    that blocks SIGTERM would leave the SIGTERM of :meth:`SimProcess.stop` pending forever, and
    ``stop()`` fell through to a kill after 5 s.  Only the main thread (the one that owns the
    signal handlers) changes its mask.
    """
    if hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


async def _serve(config: SimConfig, host: str, port: int, ready_line: bool, exit_with_parent: bool) -> None:
    server = SimServer(config)
    await server.start(host, port)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in _STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, done.set)
        except (NotImplementedError, RuntimeError):  # e.g. Windows
            pass
    if exit_with_parent:
        # the parent holds the write end of our stdin: EOF means it is gone (even after kill -9)
        loop.add_reader(sys.stdin.fileno(), lambda: sys.stdin.buffer.read1(4096) or done.set())
    if ready_line:  # the handshake SimProcess reads (python -m judgekit.sim)
        sys.stdout.write(f"{READY_PREFIX} {server.port}\n")
    else:  # a person at a terminal (judgekit sim serve)
        sys.stdout.write(f"simulator on http://{url_host(host)}:{server.port}/v1 (OpenAI-compatible; "
                         f"Anthropic and Gemini SDKs at http://{url_host(host)}:{server.port}); Ctrl-C stops it\n")
    sys.stdout.flush()
    try:
        await done.wait()
    finally:
        await server.stop()


def serve_forever(
    config: SimConfig | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    ready_line: bool = False,
    exit_with_parent: bool = False,
) -> None:
    """Run a simulator until SIGINT/SIGTERM (or, with ``exit_with_parent``, until its stdin
    reaches end of file: the parent that holds the other end of the pipe has exited).

    Prints exactly one line, flushed, once it listens: with ``ready_line`` the machine-readable
    ``JUDGEKIT_SIM_READY <port>`` that :class:`~judgekit.sim.process.SimProcess` waits for (what
    ``python -m judgekit.sim`` prints), else a line for a person: the URL to point a client at
    and how to stop it (what ``judgekit sim serve`` prints).  Uses uvloop when it is installed.  SIGINT and SIGTERM are
    unblocked first (see :func:`_unblock_stop_signals`), so either one ends it promptly.
    """
    config = config or SimConfig()
    _unblock_stop_signals()
    try:
        import uvloop  # type: ignore[import-not-found]

        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        runner(_serve(config, host, port, ready_line, exit_with_parent))
    except KeyboardInterrupt:
        pass

