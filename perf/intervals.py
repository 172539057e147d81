"""Bootstrap intervals at full size: how long the seeded item bootstrap takes.

1. A synthetic full Creation-MMBench result: 765 items in 51 tasks (15 each) and 4 categories,
   3 candidates, a panel of 3 judges, 4 figures (Reward, Win Rate, VFS, VFS ref; each item's two
   orders pooled), 1,000 resamples, every row (overall, each category, each task):
   a. the generic path, one :func:`judgekit.judging.intervals.ratio_interval` per figure and row
      (what a benchmark calling :func:`judgekit.judging.uncertainty.interval` per figure pays);
   b. the paired comparisons of the candidates (3 pairs x 3 figures x 3 judges, overall), through
      :func:`judgekit.judging.uncertainty.comparisons`;
   c. the judging core's pairwise path (``judgekit.judging.bootstrap.add_intervals``, Creation-MMBench's
      and the generic pairwise benchmark's: one draw per row
      group shared by the judges and figures), when that module is there.
2. A GuessBench-sized accuracy: 10,000 right/wrong items, one interval.

Wall and CPU seconds of each, in one process (NumPy may use more than one thread: CPU > wall).

    .venv/bin/python perf/intervals.py [--samples 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from judgekit.judging.uncertainty import IntervalOptions, comparisons, interval
from judgekit.judging.intervals import ratio_interval

ITEMS, TASKS, CATEGORIES = 765, 51, 4
CANDIDATES = ("cand-a", "cand-b", "cand-c")
JUDGES = ("judge-1", "judge-2", "judge-3")
# figure -> (scale, how an item's two orders give (numerator, denominator))
FIGURES = ("reward", "win_rate", "vfs", "vfs_ref")


def synthetic_creation(seed: int = 0) -> dict:
    """judge -> candidate -> figure -> (num, den) arrays over the 765 items, plus the items' task
    and category; verdicts -2..+2 with 2 % parse failures, VFS 0..10 with 3 % failures."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(TASKS), ITEMS // TASKS)
    category = task % CATEGORIES
    data: dict = {}
    for j in JUDGES:
        for c, quality in zip(CANDIDATES, (0.3, 0.0, -0.3)):
            verdicts = np.clip(np.rint(rng.normal(quality, 1.0, size=(ITEMS, 2))), -2, 2)
            ok = rng.random((ITEMS, 2)) > 0.02
            vfs = np.clip(np.rint(rng.normal(6 + 2 * quality, 2.0, size=(ITEMS, 2))), 0, 10)
            vfs_ref = np.clip(np.rint(rng.normal(6, 2.0, size=(ITEMS, 2))), 0, 10)
            vok = rng.random((ITEMS, 2)) > 0.03
            valid = ok.sum(axis=1).astype(float)
            vvalid = vok.sum(axis=1).astype(float)
            data.setdefault(j, {})[c] = {
                "reward": ((verdicts * ok).sum(axis=1), valid),
                "win_rate": (((verdicts > 0) & ok).sum(axis=1).astype(float), valid),
                "vfs": ((vfs * vok).sum(axis=1), vvalid),
                "vfs_ref": ((vfs_ref * vok).sum(axis=1), vvalid),
            }
    return {"figures": data, "task": task, "category": category}


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """The best wall and CPU seconds of ``repeat`` runs, and the last result."""
    best_wall = best_cpu = float("inf")
    out = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu, out


def generic(synth: dict, samples: int) -> int:
    """Every row's every figure through ratio_interval; the number of intervals."""
    rows = [("overall", "overall", np.ones(ITEMS, dtype=bool))]
    rows += [("category", str(k), synth["category"] == k) for k in range(CATEGORIES)]
    rows += [("task", str(t), synth["task"] == t) for t in range(TASKS)]
    count = 0
    for j, per_candidate in synth["figures"].items():
        for c, figs in per_candidate.items():
            for level, group, mask in rows:
                for f in FIGURES:
                    num, den = figs[f]
                    ratio_interval(num[mask], den[mask], samples=samples, key=f"{j}:{c}:{level}:{group}:{f}",
                                   scale=50.0 if f == "reward" else 100.0 if f == "win_rate" else 1.0)
                    count += 1
    return count


def paired(synth: dict, samples: int) -> int:
    options = IntervalOptions(bootstrap_samples=samples)
    count = 0
    for j, per_candidate in synth["figures"].items():
        for f in ("reward", "win_rate", "vfs"):
            per = {c: {i: (float(n), float(d)) for i, (n, d) in enumerate(zip(*figs[f]))}
                   for c, figs in per_candidate.items()}
            count += len(comparisons(per, options, f, key=f"{j}:", candidates=CANDIDATES))
    return count


def creation_records(synth: dict) -> dict[str, list[dict]]:
    """The same result as Creation-MMBench judgment records (pairwise and VFS, both orders)."""
    rng = np.random.default_rng(1)
    out: dict[str, list[dict]] = {}
    for j in JUDGES:
        recs = out.setdefault(j, [])
        for c in CANDIDATES:
            for i in range(ITEMS):
                task, cat = f"task{synth['task'][i]}", f"cat{synth['category'][i]}"
                for order in (0, 1):
                    score = None if rng.random() < 0.02 else int(rng.integers(-2, 3))
                    vfs = None if rng.random() < 0.03 else int(rng.integers(0, 11))
                    base = {"model": c, "index": str(i), "task": task, "category": cat, "order": order}
                    recs.append({**base, "kind": "pairwise", "score": score})
                    recs.append({**base, "kind": "vfs", "vfs": vfs, "vfs_ref": None if vfs is None else 6})
    return out


def agreement_at_scale(samples: int) -> int:
    """Krippendorff's alpha of 3 judges with item-bootstrap intervals, per candidate, pooled within
    and across candidates, on 765 items x 20 candidates x 2 orders (the honesty pass's agreement)."""
    from judgekit.judging.alpha import grouped_alpha

    rng = np.random.default_rng(4)
    judges = ["j1", "j2", "j3"]
    verdicts, vfs = {}, {}
    for c in range(20):
        for i in range(765):
            for o in (0, 1):
                b = int(rng.integers(-2, 3))
                verdicts[(c, i, o)] = {j: int(np.clip(b + rng.integers(-1, 2), -2, 2)) for j in judges}
                v = float(rng.integers(0, 21)) / 2
                vfs[(c, i, o)] = {j: min(10.0, v + float(rng.integers(0, 2)) / 2) for j in judges}
    for ratings, level in ((verdicts, "ordinal"), (vfs, "interval")):
        grouped_alpha(ratings, judges, level, group=lambda u: u[0], cluster=lambda u: u[1], samples=samples,
                      interval_level=0.95, seed=0, key=level, groups=list(range(20)))
    return 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the best is printed")
    args = ap.parse_args()
    synth = synthetic_creation()
    print(f"Creation-MMBench, synthetic: {ITEMS} items, {TASKS} tasks, {CATEGORIES} categories, "
          f"{len(CANDIDATES)} candidates x {len(JUDGES)} judges x {len(FIGURES)} figures, {args.samples} resamples")
    wall, cpu, n = _timed(lambda: generic(synth, args.samples), args.repeat)
    print(f"  a. one ratio_interval per figure and row: {n} intervals in {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"({1000 * wall / n:.2f} ms each)")
    wall, cpu, n = _timed(lambda: paired(synth, args.samples), args.repeat)
    print(f"  b. paired comparisons, overall: {n} differences in {wall:.2f} s wall, {cpu:.2f} s CPU")
    try:
        from judgekit.judging.bootstrap import add_intervals
        from judgekit.judging.pairwise import summarize
    except ImportError as e:
        print(f"  c. judging.bootstrap.add_intervals: not available here ({e})")
    else:
        records = creation_records(synth)
        options = IntervalOptions(bootstrap_samples=args.samples)

        def creation() -> int:
            rows = {j: summarize(records[j]) for j in JUDGES}
            add_intervals(rows, records, options)
            return sum(len(r) for r in rows.values())

        rows_wall, rows_cpu, _ = _timed(lambda: {j: summarize(records[j]) for j in JUDGES}, args.repeat)
        wall, cpu, n = _timed(creation, args.repeat)
        print(f"  c. judging.bootstrap.add_intervals: {n} rows x {len(FIGURES)} figures in "
              f"{wall - rows_wall:.2f} s wall, {cpu - rows_cpu:.2f} s CPU (building the rows: {rows_wall:.2f} s "
              f"wall, {rows_cpu:.2f} s CPU, not counted)")

    try:
        from judgekit.judging.alpha import grouped_alpha
    except ImportError as e:
        print(f"  d. judging.alpha.grouped_alpha: not available here ({e})")
    else:
        wall, cpu, n = _timed(lambda: agreement_at_scale(args.samples), args.repeat)
        print(f"  d. alpha with intervals, within and across candidates (judging.alpha), 765 items x 20 candidates "
              f"x 2 orders x 3 judges, verdict (ordinal) and VFS (interval): {wall:.2f} s wall, {cpu:.2f} s CPU")

    n = 10_000
    rng = np.random.default_rng(2)
    right = (rng.random(n) < 0.62).astype(float)
    opts = IntervalOptions(bootstrap_samples=args.samples)
    wall, cpu, iv = _timed(lambda: interval({i: (right[i], 1.0) for i in range(n)}, opts, key="guess:acc",
                                            scale=100.0), args.repeat)
    print(f"GuessBench-sized accuracy: {n:,} items, {args.samples} resamples: {iv.estimate:.2f} "
          f"[{iv.low:.2f}, {iv.high:.2f}] in {wall:.2f} s wall, {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
