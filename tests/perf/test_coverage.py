"""perf/coverage.py and its synthetic judges (perf/_synthetic.py): the closed-form truths against
a large sample, the coverage it measures where the answer is known, and its plug-in registry."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

PERF = Path(__file__).resolve().parents[2] / "perf"
sys.path.insert(0, str(PERF))

import _synthetic as synthetic  # noqa: E402

# by its path, under another name: ``coverage`` is also the coverage.py package's name
_spec = importlib.util.spec_from_file_location("perf_coverage", PERF / "coverage.py")
coverage = importlib.util.module_from_spec(_spec)
sys.modules["perf_coverage"] = coverage
_spec.loader.exec_module(coverage)

from judgekit.judging.pairwise import summarize  # noqa: E402


def test_the_closed_form_truths_are_what_a_large_sample_gives():
    model = synthetic.Model()
    recs = synthetic.records(model, 20_000, np.random.default_rng(7))
    for judge in model.judges:
        rows = summarize([r for r in recs if r["judge"] == judge.name], levels=("overall",))
        for row in rows:
            true = synthetic.truth(model, judge.name, row["model"])
            assert row["reward"] == pytest.approx(true["reward"], abs=1.5)
            assert row["win_rate"] == pytest.approx(true["win_rate"], abs=1.5)
            assert row["vfs"] == pytest.approx(true["vfs"], abs=0.06)
            assert row["vfs_ref"] == pytest.approx(true["vfs_ref"], abs=0.06)


def test_verdict_probabilities_against_a_direct_simulation():
    rng = np.random.default_rng(3)
    x = rng.normal(0.4, 1.3, size=400_000)
    counts = np.bincount(np.searchsorted(np.asarray(synthetic.CUTS), x), minlength=5) / x.size
    assert np.allclose(synthetic.verdict_probabilities(0.4, 1.3), counts, atol=0.005)
    v = np.clip(np.rint(rng.normal(8.7, 2.0, size=400_000)), 0, 10)
    assert synthetic.vfs_expectation(8.7, 2.0) == pytest.approx(v.mean(), abs=0.01)


def test_the_records_have_every_judgment_in_both_orders():
    model = synthetic.Model()
    recs = synthetic.records(model, 5, np.random.default_rng(0))
    assert len(recs) == 5 * len(model.quality) * len(model.judges) * 2 * 2
    keys = {(r["judge"], r["model"], r["index"], r["kind"], r["order"]) for r in recs}
    assert len(keys) == len(recs)
    for r in recs:
        assert r["ok"] == (r["score"] is not None if r["kind"] == "pairwise" else r["vfs"] is not None)


def test_small_rows_undercover_and_large_ones_do_not():
    names = ["reward cand-a (judge-1)", "reward a-b (judge-1)"]
    result = coverage.simulate(reps=60, sizes=(3, 100), samples=200, names=names)
    for name in names:
        hit3, n3 = result["coverage"][name][3]
        hit100, n100 = result["coverage"][name][100]
        assert n3 > 50 and n100 == 60
        assert hit3 / n3 < 0.9  # about 75 % at 3 items (issue 27)
        assert hit100 / n100 > 0.85
        assert 3 in coverage.outside(result)[name]
    for family, per_n in result["alarms"].items():
        size = per_n[100][1] // 60
        assert size == {"b-c reward (judge-1), one figure": 1}.get(family, 3 if "(judge-1)" in family else 6)
        assert 0 <= per_n[100][0] <= 60 and per_n[100][2] >= per_n[100][0]
    text = coverage.report(result)
    assert "reward cand-a (judge-1)" in text and "n=100" in text


def test_a_new_figure_plugs_in_and_a_too_narrow_one_is_flagged(monkeypatch):
    point = coverage.row_figure("judge-1", "cand-a", "reward")

    def no_width(recs, options):
        est, _, _ = point(recs, options)
        return est, est, est

    monkeypatch.setitem(coverage.REGISTRY, "reward, no width", no_width)
    result = coverage.simulate(reps=20, sizes=(12, 50), samples=100, names=["reward, no width"], truth_items=3000)
    # no closed form registered: its truth is the estimate on a large sample, near the exact one
    exact = synthetic.truth(coverage.MODEL, "judge-1", "cand-a")["reward"]
    assert result["truths"]["reward, no width"] == pytest.approx(exact, abs=2.0)
    assert coverage.outside(result)["reward, no width"] == [12, 50]
    assert all(hit == 0 for hit, _ in result["coverage"]["reward, no width"].values())
