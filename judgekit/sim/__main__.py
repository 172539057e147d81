"""``python -m judgekit.sim``: run a simulator until interrupted.

Prints ``JUDGEKIT_SIM_READY <port>`` on stdout once it listens.  Flags set the common
:class:`~judgekit.sim.config.SimConfig` fields; ``--config-json`` gives a whole config whose
fields override the flags.  It answers every built-in benchmark's requests (their simulated
behaviours, :mod:`judgekit.sim.behaviours`); ``--benchmark NAME`` adds a plugin benchmark's.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Sequence

from pydantic import ValidationError

from judgekit.sim.config import SimConfig
from judgekit.sim.server import serve_forever

__all__ = ["build_parser", "parse_args", "main"]


def _finite(text: str) -> float:
    """A number flag: nan and infinities are refused (as in every SimConfig field)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m judgekit.sim``."""
    p = argparse.ArgumentParser(
        prog="python -m judgekit.sim",
        description="Run judgekit's simulated OpenAI/Gemini-compatible API server.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    p.add_argument("--seed", type=int, default=None, help="seed of every deterministic draw")
    p.add_argument("--latency-ms", type=_finite, default=None, help="mean answer delay")
    p.add_argument("--latency-jitter-ms", type=_finite, default=None, help="+/- spread of the delay")
    p.add_argument("--rpm", type=int, default=None, help="requests per minute per model")
    p.add_argument("--tpm", type=int, default=None, help="tokens per minute per model")
    p.add_argument("--error-rate", type=_finite, default=None, help="share of injected 5xx")
    p.add_argument("--hang-rate", type=_finite, default=None, help="share of hanging requests")
    p.add_argument("--garbage-rate", type=_finite, default=None, help="share of unparseable judge replies")
    p.add_argument("--api-key", action="append", default=None, dest="api_keys",
                   help="accepted API key (repeatable); none given: any key")
    p.add_argument("--benchmark", action="append", default=None, dest="benchmarks", metavar="NAME",
                   help="a plugin benchmark whose simulated behaviour to add (repeatable; every built-in "
                        "benchmark's is always on)")
    p.add_argument("--exit-with-parent", action="store_true",
                   help="exit when stdin reaches end of file (the parent holding the pipe is gone)")
    p.add_argument("--config-json", default=None,
                   help="a SimConfig as JSON; its fields override the flags above")
    return p


def parse_args(argv: Sequence[str] | None = None) -> tuple[SimConfig, str, int]:
    """Parse the command line into ``(config, host, port)``."""
    args = build_parser().parse_args(argv)
    fields: dict[str, Any] = {}
    for name in ("seed", "latency_ms", "latency_jitter_ms", "rpm", "tpm", "error_rate",
                 "hang_rate", "garbage_rate", "api_keys", "benchmarks"):
        value = getattr(args, name)
        if value is not None:
            fields[name] = value
    if args.config_json:
        override = json.loads(args.config_json)
        if not isinstance(override, dict):
            raise SystemExit("--config-json must be a JSON object")
        fields.update(override)
    try:
        return SimConfig.model_validate(fields), args.host, args.port
    except ValidationError as e:  # one line naming the settings, exit 2 (argparse's own errors' code)
        problems = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())
        print(f"python -m judgekit.sim: invalid settings: {problems}", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: parse the flags and serve until SIGINT/SIGTERM."""
    from judgekit.errors import SpecError

    config, host, port = parse_args(argv)
    flags = build_parser().parse_args(argv)
    try:
        serve_forever(config, host, port, ready_line=True, exit_with_parent=flags.exit_with_parent)
    except SpecError as e:  # a --benchmark whose simulated behaviour cannot be loaded: one line, exit 2
        print(f"python -m judgekit.sim: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
