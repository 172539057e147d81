"""A stop keeps what was paid, and a run's spend is the sum of its processes (issue 24, points 4
and 7): `judgekit run` (a subprocess, the openai SDK) against a small OpenAI-compatible server
that answers in 50-200 ms and bills every request it answers (the one of
tests/cli/test_stop_keeps_paid.py, each call $0.20), a rubric run of N items (N candidate calls
at concurrency 256, then N judge calls).  Each scenario stops the first process once the server
has had 256 requests in flight (SIGINT, SIGTERM; SIGKILL once half the candidates' calls are
served), then runs the same command again to the end.

Prints per scenario: requests the server answered (billed) for the first process, calls that
process kept, requests answered twice over both processes (paid twice), and the spend the rerun's
summary.json and closing line report for the run against what the server billed.

    .venv/bin/python perf/stop_spend.py [--items 2000] [--before /tmp/old-checkout]

``--before`` runs judgekit from another checkout (PYTHONPATH), e.g. ``git archive`` of an older
commit, for a before/after figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cli"))

import test_stop_keeps_paid as t  # noqa: E402


def scenario(sig: signal.Signals, items: int, before: str | None) -> str:
    t.ITEMS = items
    rng = random.Random(0)
    srv = t.BillingServer(lambda: 0.05 + 0.15 * rng.random(), gate=256)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    if before:
        os.environ["PYTHONPATH"] = before
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            os.chdir(tmp)  # `python -m` puts the working folder first on the path: not this checkout
            spec = t._spec(tmp, srv.url)
            p = t._judgekit(spec, tmp)
            t._wait_in_flight(p, srv, 256)
            if sig == signal.SIGKILL:  # kill -9 halfway through the candidates' calls
                while srv.served < items // 2 and p.poll() is None:
                    time.sleep(0.005)
            p.send_signal(sig)
            out, err = p.communicate(timeout=120)
            time.sleep(0.3)  # requests a killed client left behind finish at the server
            served_first = srv.served
            kept = None
            try:
                rec = [r for s, r in t._records(tmp / "c.duckdb") if s != "running"]
                kept = rec[-1]["paid_calls"] if rec else None
            except Exception:
                pass
            p = t._judgekit(spec, tmp)
            out2, err2 = p.communicate(timeout=600)
            twice = sum(n - 1 for n in srv.bodies.values() if n > 1)
            summary = json.loads((tmp / "out" / "summary.json").read_text())
            printed = re.findall(r"spent \$([\d,.]+)", out2)
            billed = srv.served * t.CALL_USD
            landed = re.search(r"of [\d,]+ calls in flight at the stop[^(\n]*", err)
            return (f"{sig.name}: first process: server billed {served_first:,}, it kept "
                    f"{'?' if kept is None else f'{kept:,}'}; {landed[0] if landed else 'no landing note'}\n"
                    f"  over both processes: {srv.served:,} billed for {2 * items:,} distinct calls, {twice:,} paid twice; "
                    f"billed ${billed:,.2f}; summary.json paid_calls {summary['paid_calls']:,}, cost_usd ${summary['cost_usd']:,.2f} "
                    f"({summary['cost_usd'] / billed:.1%}), closing line ${printed[-1] if printed else '?'}")
    finally:
        os.chdir(ROOT)
        os.environ.pop("PYTHONPATH", None)
        srv.shutdown()
        srv.server_close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--before", default=None, help="another checkout to run judgekit from")
    args = ap.parse_args()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        print(scenario(sig, args.items, args.before), flush=True)


if __name__ == "__main__":
    main()
