"""Creation-MMBench's Table 4 and the judging core's human agreement read the same J and P: on the
same records and ratings, the core's MAE and consistency are Table 4's dual columns, per judge,
per candidate and pooled (``overall`` there, ``all`` here)."""

from __future__ import annotations

import random

import pytest

from judgekit.benchmarks.creation_mmbench.human import OVERALL, table4_rows
from judgekit.judging.human_agreement import ALL, agreement_rows, labels_from_ratings, unit_values
from judgekit.judging.uncertainty import IntervalOptions


def test_core_mae_and_consistency_are_table4s_dual_columns():
    rnd = random.Random(3)
    models = ["a", "b"]
    raters = {(m, str(i)): {f"human_{r}": float(rnd.randint(-2, 2)) for r in range(rnd.randint(1, 3))}
              for m in models for i in range(15)}
    raters[("", "99")] = {"human_0": 1.0}  # a row without a model: every candidate's item 99
    by_judge = {}
    for judge in ("j1", "j2"):
        recs = []
        for m in models:
            for i in [*range(15), 99]:
                for order in (0, 1):
                    score = rnd.choice([-2, -1, 0, 1, 2, None])
                    recs.append({"judge": judge, "model": m, "index": str(i), "kind": "pairwise", "order": order,
                                 "score": score})
                    recs.append({"judge": judge, "model": m, "index": str(i), "kind": "vfs", "order": order,
                                 "score": None, "vfs": 5})
        by_judge[judge] = recs
    human = {k: sum(v.values()) / len(v) for k, v in raters.items() if v}
    t4 = table4_rows(by_judge, human, models, dual=True)
    labels = labels_from_ratings("ratings.csv", raters)
    rows = agreement_rows({j: unit_values(r, False) for j, r in by_judge.items()}, labels, models,
                          IntervalOptions(bootstrap_samples=0))
    for r in t4:
        mine = next(x for x in rows if x["judge"] == r["judge"] and x["model"] == (ALL if r["model"] == OVERALL
                                                                                    else r["model"]))
        assert mine["n"] == r["items"]
        assert mine["mae"] == pytest.approx(r["dual_mae"], abs=1e-12)
        assert mine["consistency"] == pytest.approx(r["dual_consistency"], abs=1e-12)
