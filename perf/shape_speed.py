"""Speed before and after a change of shape: every shipped runner, two checkouts, one run.

For each round and each shipped runner, the two checkouts take turns (so both see the same
machine load): a fresh process with the checkout first on ``PYTHONPATH`` imports judgekit, runs
the runner offline exactly as the golden test does (``tests/golden/golden.py``: the seeded
simulator answering at once, the tests' fake local worker) into an empty cache ("cold"), then
again over that cache into a new folder ("warm": every call cached, so the figure is the
pipeline's own work: planning, parsing, records, results, report).  Printed: the median seconds of
each over the rounds, per runner and in total, and after / before.

    .venv/bin/python perf/shape_speed.py --before /tmp/old-checkout [--rounds 3] [RUNNER ...]

``--before`` is another checkout (``git archive COMMIT | tar -x -C /tmp/old``); the driver (this
repository's ``tests/golden``) is the same for both.  About 3 minutes a round for all runners.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_DRIVER = r"""
import json, sys, time, tempfile
from pathlib import Path
t0 = time.perf_counter()
import judgekit.runner  # noqa: F401
imported = time.perf_counter() - t0
sys.path.insert(0, sys.argv[1])
from golden import run_runner
root = Path(sys.argv[3]) / "runs"
t0 = time.perf_counter()
out = run_runner(sys.argv[2], root)
cold = time.perf_counter() - t0
(out.parent / "out").rename(out.parent / "out-cold")
t0 = time.perf_counter()
run_runner(sys.argv[2], root)
warm = time.perf_counter() - t0
import judgekit
print(json.dumps({"import": imported, "cold": cold, "warm": warm, "judgekit": judgekit.__file__}))
"""


def measure(checkout: Path, runner: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=f"{checkout}{os.pathsep}{checkout / 'local'}",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="shape-") as tmp:
        done = subprocess.run([sys.executable, "-c", _DRIVER, str(ROOT / "tests" / "golden"), runner, tmp],
                              env=env, capture_output=True, text=True, cwd=tmp, check=False)
    if done.returncode:
        raise SystemExit(f"{runner} on {checkout}: exit {done.returncode}\n{done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if not figures.pop("judgekit").startswith(str(checkout)):
        raise SystemExit(f"{runner}: the driver imported judgekit from outside {checkout}")
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="the other checkout (its folder goes first on PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("runners", nargs="*", help="shipped runners (default: every one the golden test runs)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from offline_runners import SHIPPED

    runners = args.runners or list(SHIPPED)
    checkouts = {"before": args.before.resolve(), "after": ROOT}
    seen: dict[tuple[str, str, str], list[float]] = {}
    for r in range(args.rounds):
        for runner in runners:
            for name, path in (checkouts.items() if r % 2 == 0 else reversed(checkouts.items())):
                for key, value in measure(path, runner).items():
                    seen.setdefault((runner, name, key), []).append(value)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    def med(runner: str, name: str, key: str) -> float:
        return statistics.median(seen[(runner, name, key)])

    print(f"median of {args.rounds} rounds, seconds (before: {checkouts['before']}; after: {ROOT})")
    print(f"{'runner':<36}{'cold before':>12}{'cold after':>11}{'ratio':>7}{'warm before':>13}{'warm after':>11}{'ratio':>7}")
    totals = {k: 0.0 for k in ("cb", "ca", "wb", "wa")}
    for runner in runners:
        cb, ca = med(runner, "before", "cold"), med(runner, "after", "cold")
        wb, wa = med(runner, "before", "warm"), med(runner, "after", "warm")
        for k, v in zip(totals, (cb, ca, wb, wa)):
            totals[k] += v
        print(f"{runner:<36}{cb:>12.2f}{ca:>11.2f}{ca / cb:>7.2f}{wb:>13.2f}{wa:>11.2f}{wa / wb:>7.2f}")
    t = totals
    print(f"{'total':<36}{t['cb']:>12.2f}{t['ca']:>11.2f}{t['ca'] / t['cb']:>7.2f}{t['wb']:>13.2f}"
          f"{t['wa']:>11.2f}{t['wa'] / t['wb']:>7.2f}")
    ib = statistics.median(v for (_, n, k), vs in seen.items() if n == "before" and k == "import" for v in vs)
    ia = statistics.median(v for (_, n, k), vs in seen.items() if n == "after" and k == "import" for v in vs)
    print(f"import judgekit.runner: {ib:.3f} s before, {ia:.3f} s after ({ia / ib:.2f})")


if __name__ == "__main__":
    main()
