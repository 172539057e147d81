"""Agreement with human labels at full size: how long every figure's interval takes.

A synthetic run of 765 items x 20 candidates judged in both orders by 3 judges and their ensemble
(4 "judges"), each (candidate, item) with a human label -2..+2; every figure (kappa unweighted,
linear and quadratic, Spearman, Kendall, MAE, consistency) with its 1,000-resample interval, per
candidate and pooled (:func:`judgekit.judging.human_agreement.agreement_rows`, after
:func:`~judgekit.judging.human_agreement.unit_values` reads the records). CPU seconds, one process.

    .venv/bin/python perf/human_agreement.py [--items 765] [--candidates 20] [--judges 4] [--samples 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judgekit.judging.human_agreement import HumanLabels, agreement_rows, unit_values
from judgekit.judging.uncertainty import IntervalOptions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=765)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--judges", type=int, default=4)
    ap.add_argument("--samples", type=int, default=1000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    truth = rng.integers(-2, 3, size=(a.candidates, a.items))
    labels = HumanLabels("synthetic", {(f"m{c}", str(i), None): [float(truth[c, i])]
                                       for c in range(a.candidates) for i in range(a.items)})
    noise = rng.integers(-1, 2, size=(a.judges, a.candidates, a.items, 2))
    records = {f"j{j}": [{"model": f"m{c}", "index": str(i), "kind": "pairwise", "order": o,
                          "score": int(np.clip(truth[c, i] + noise[j, c, i, o], -2, 2))}
                         for c in range(a.candidates) for i in range(a.items) for o in (0, 1)]
               for j in range(a.judges)}
    t0 = time.process_time()
    values = {j: unit_values(r, False) for j, r in records.items()}
    t1 = time.process_time()
    rows = agreement_rows(values, labels, [f"m{c}" for c in range(a.candidates)],
                          IntervalOptions(bootstrap_samples=a.samples))
    t2 = time.process_time()
    print(f"{a.items} items x {a.candidates} candidates x {a.judges} judges, {a.samples} resamples: "
          f"reading the records {t1 - t0:.2f} s CPU, every figure with its interval {t2 - t1:.2f} s CPU "
          f"({len(rows)} rows)")


if __name__ == "__main__":
    main()
