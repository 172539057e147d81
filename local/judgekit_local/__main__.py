"""``python -m judgekit_local --store DIR [--device D] [--memory-budget-gb N] [--threads T]``: the subprocess.

Speaks PROTOCOL.md over the pipes: one JSON object per line. Protocol lines go to the original
stdout (file descriptor 1 is duplicated first); afterwards descriptor 1 and ``sys.stdout``
point at stderr, so whatever a library prints, from Python or from C, lands in the logs, not in
the protocol. Writes the hello line, then runs batches in order until ``shutdown`` or EOF.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import IO


def _protocol_stream() -> IO[str]:
    """The real stdout for protocol lines; fd 1 and sys.stdout now go to stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8", newline="\n")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m judgekit_local",
        description="The judgekit local model worker (line protocol on stdin/stdout, see PROTOCOL.md).",
    )
    p.add_argument("--store", required=True, help="the blob store folder shared with the core")
    p.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N or mps")
    p.add_argument(
        "--memory-budget-gb", type=float, default=None,
        help="unload least recently used models to keep loaded weights under this size",
    )
    p.add_argument(
        "--threads", type=int, default=None,
        help="torch's CPU threads (the core's local.cpus_per_worker; a Ray actor runs as many)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.threads:  # before torch is imported: its thread pools read these
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    out = _protocol_stream()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    logging.getLogger("judgekit_local").setLevel(logging.INFO)

    def send(message: dict) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    from .worker import WorkerCore

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    try:
        core = WorkerCore(args.store, device=args.device, memory_budget_gb=args.memory_budget_gb)
    except Exception as exc:
        print(f"judgekit-local: cannot start: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    try:
        send(core.hello())
        for raw in iter(sys.stdin.buffer.readline, b""):
            line = raw.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                send({"type": "log", "level": "warning", "message": f"malformed line ignored: {exc}"})
                continue
            op = message.get("op") if isinstance(message, dict) else None
            if op == "shutdown":
                break
            if op == "batch":
                try:
                    core.run_batch(message, send)
                except BrokenPipeError:
                    raise
                except Exception as exc:  # run_batch turns problems into results; a last resort
                    send({"type": "log", "level": "error", "message": f"batch failed: {type(exc).__name__}: {exc}"})
            else:
                send({"type": "log", "level": "warning", "message": f"unknown op {op!r} ignored"})
    except BrokenPipeError:  # the core is gone: nothing left to report to
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
