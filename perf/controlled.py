"""Time the length- and style-controlled figures and BT ratings (judgekit.judging.control) at full
size: 765 items x 20 candidates, both orders, 1000 bootstrap resamples, one judge.

    python perf/controlled.py   # prints CPU seconds per figure and in all

One core: BLAS is held to one thread (process time would otherwise add up every thread's).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from judgekit.judging.control import controlled_rows, lc_win_rate, style_controlled  # noqa: E402
from judgekit.judging.uncertainty import IntervalOptions  # noqa: E402


def synthetic(n_items: int = 765, n_cands: int = 20, seed: int = 1):
    rng = np.random.default_rng(seed)
    records, styles = [], {}
    for k in range(n_cands):
        for i in range(n_items):
            cand = [int(rng.integers(50, 2000)), *map(int, rng.integers(0, [5, 10, 6]))]
            ref = [int(rng.integers(50, 2000)), *map(int, rng.integers(0, [5, 10, 6]))]
            styles[(f"m{k}", str(i))] = {"candidate": cand, "reference": ref}
            for order in (0, 1):
                z = 0.1 * k + 0.001 * (cand[0] - ref[0]) + rng.normal()
                records.append({"model": f"m{k}", "index": str(i), "kind": "pairwise", "order": order,
                                "score": int(np.clip(np.round(z), -2, 2)), "length_diff": cand[0] - ref[0]})
    return records, styles, [f"m{k}" for k in range(n_cands)]


def main() -> None:
    records, styles, cands = synthetic()
    options = IntervalOptions()
    t = time.process_time()
    for c in cands:
        mine = [r for r in records if r["model"] == c]
        lc_win_rate([1.0 if r["score"] > 0 else 0.5 if r["score"] == 0 else 0.0 for r in mine],
                    [r["length_diff"] for r in mine], [r["index"] for r in mine], options, key=c)
    lc = time.process_time() - t
    t = time.process_time()
    style_controlled(records, cands, options, "sc", styles=styles)
    sc = time.process_time() - t
    t = time.process_time()
    style_controlled(records, cands, options, "bt", style=False)
    bt = time.process_time() - t
    t = time.process_time()
    controlled_rows(records, "judge", cands, options, styles)
    every = time.process_time() - t
    t = time.process_time()
    for judge in ("judge", "judge-2", "judge-3"):
        controlled_rows(records, judge, cands, options, styles)
    three = time.process_time() - t
    print(f"765 items x 20 candidates x 2 orders, {options.bootstrap_samples} resamples, CPU s: LC {lc:.2f}, "
          f"SC {sc:.2f}, BT {bt:.2f}; controlled_rows in all {every:.2f}, for 3 judges {three:.2f}")


if __name__ == "__main__":
    main()
