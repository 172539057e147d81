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
    result = coverage.simulate(reps=60, sizes=(3, 100), samples=200, names=names, flags=False)
    for name in names:
        hit3, n3 = result["coverage"][name][3][:2]
        hit100, n100 = result["coverage"][name][100][:2]
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
    result = coverage.simulate(reps=20, sizes=(12, 50), samples=100, names=["reward, no width"], truth_items=3000,
                                flags=False)
    # no closed form registered: its truth is the estimate on a large sample, near the exact one
    exact = synthetic.truth(coverage.MODEL, "judge-1", "cand-a")["reward"]
    assert result["truths"]["reward, no width"] == pytest.approx(exact, abs=2.0)
    assert coverage.outside(result)["reward, no width"] == [12, 50]
    assert all(hit == 0 for hit, *_ in result["coverage"]["reward, no width"].values())


def test_human_labels_styles_and_repeats_leave_the_judgments_of_a_seed_as_they_were():
    model = synthetic.Model()
    plain = synthetic.records(model, 8, np.random.default_rng([0, 8, 1]))
    rep = coverage.replication(model, 8, (0, 8, 1))
    assert list(rep) == plain
    assert set(rep.human) == {(c, f"i{i}") for c in model.quality for i in range(8)}
    assert set(rep.human.values()) <= {-2.0, -1.0, 0.0, 1.0, 2.0}
    assert rep.styles[("cand-a", "i0")]["reference"][0] == 1000
    again = rep.repeated()
    assert len(again) == coverage.REPEATS * len(plain)
    assert sorted({r["repeat"] for r in again}) == list(range(coverage.REPEATS))
    # the repeats share the items' answers (length) but not the judge's noise
    first = {(r["judge"], r["model"], r["index"], r["kind"], r["order"]): r for r in again if r["repeat"] == 0}
    second = [r for r in again if r["repeat"] == 1]
    assert all(first[(r["judge"], r["model"], r["index"], r["kind"], r["order"])]["length_diff"] == r["length_diff"]
               for r in second)
    assert any(first[(r["judge"], r["model"], r["index"], r["kind"], r["order"])]["score"] != r["score"]
               for r in second)


def test_human_labels_follow_the_generating_model():
    # a human label is the latent without slot pull, length bias or judge noise, cut like a verdict
    model = synthetic.Model()
    human: dict = {}
    synthetic.records(model, 4000, np.random.default_rng(5), human=human, vfs=False)
    sd = (model.item_sd ** 2 + model.fit_sd ** 2 + model.human_noise ** 2) ** 0.5
    for cand, q in model.quality.items():
        labels = np.array([v for (c, _), v in human.items() if c == cand])
        expected = float(np.dot(np.arange(-2, 3), synthetic.verdict_probabilities(q, sd)))
        assert labels.mean() == pytest.approx(expected, abs=0.06)


def test_the_new_figures_compute_and_the_small_n_flag_is_read_from_their_rows():
    names = ["reward cand-a (judge-1)", "reward a-b (judge-1)", "lc win rate cand-a (judge-1)",
             "bt rating cand-a (judge-1)", "alpha verdict cand-a", "tie rate cand-a (judge-1)",
             "human spearman cand-a (judge-1)", "reward cand-a (judge-1 x3 repeats)"]
    result = coverage.simulate(reps=4, sizes=(12, 30), samples=100, names=names, truth_items=1500)
    from judgekit.judging.uncertainty import FIGURE_MIN_ITEMS

    # a controlled row (LC, SC with the synthetic styles, BT) is flagged below the LC and SC thresholds
    least = {"lc win rate cand-a (judge-1)": max(FIGURE_MIN_ITEMS["lc_win_rate"], FIGURE_MIN_ITEMS["sc_score"]),
             "bt rating cand-a (judge-1)": max(FIGURE_MIN_ITEMS["lc_win_rate"], FIGURE_MIN_ITEMS["sc_score"]),
             "human spearman cand-a (judge-1)": FIGURE_MIN_ITEMS["spearman"],
             "alpha verdict cand-a": FIGURE_MIN_ITEMS["krippendorff_alpha"]}
    for name in names:
        for n in (12, 30):
            hit, total, flagged = result["coverage"][name][n]
            assert total == 4 and 0 <= hit <= 4
            if result["marked"][name]:
                assert flagged == (4 if n < least.get(name, 20) else 0), (name, n)
            assert coverage.flagged(result, name, n) == (flagged / 4 if result["marked"][name] else float(n < 20))
    # the results rows, comparisons, controlled and agreement rows carry small_n
    assert all(result["marked"][name] for name in ("reward cand-a (judge-1)", "reward a-b (judge-1)",
                                                    "lc win rate cand-a (judge-1)", "human spearman cand-a (judge-1)"))
    assert result["truths"]["reward cand-a (judge-1 x3 repeats)"] == result["truths"]["reward cand-a (judge-1)"]
    assert -1.0 < result["truths"]["human spearman cand-a (judge-1)"] < 1.0
    assert "small-n flag" in coverage.report(result)


def test_unflagged_finds_a_low_row_without_the_flag():
    result = {"reps": 100, "min_items": 20, "marked": {"x": True, "y": False},
              "coverage": {"x": {12: [80, 100, 100], 50: [90, 100, 0], 200: [95, 100, 0]},
                           "y": {12: [80, 100, 0], 50: [90, 100, 0], 200: [96, 100, 0]}}}
    assert coverage.unflagged(result) == {"x": [50], "y": [50]}
    result["coverage"]["x"][12][2] = 99  # one replication's row not flagged
    assert coverage.unflagged(result) == {"x": [12, 50], "y": [50]}
    assert coverage.unflagged(result, floor=85.0) == {"x": [12]}  # y at 12: no flag key, n < 20


def test_the_familywise_family_is_the_runs():
    # run_family (comparisons and Holm alone) gives the family results.build gives, row for row
    recs = coverage.replication(coverage.EQUAL, 12, (0, 12, 1, 7))
    opts = coverage.IntervalOptions(bootstrap_samples=100, bootstrap_seed=1)
    built = coverage._run(recs, opts)["comparisons"]
    alone = coverage.run_family(recs, opts)
    keys = ("judge", "metric", "a", "b", "difference", "p_value", "p_holm", "excludes_zero", "excludes_zero_holm")
    assert [{k: c[k] for k in keys} for c in alone] == [{k: c[k] for k in keys} for c in built]


def test_holm_never_alarms_more_than_the_raw_comparisons():
    got = coverage.familywise(reps=3, sizes=(12,), samples=100)
    assert "Holm" in coverage.familywise_report(got, 3)
    raw, holm, size = got[12]
    assert size == 18 and 0 <= holm <= raw <= 3


def test_the_symmetric_truths_of_a_candidate_level_with_the_baseline():
    # cand-b's quality is the baseline's: its LC win rate is 50 and its BT rating 1000 exactly
    from judgekit.judging.control import _preference, controlled_rows, lc_win_rate

    model = coverage.MODEL
    assert coverage.TRUTHS["lc win rate cand-b (ensemble)"](model) == 50.0
    recs = synthetic.records(model, 20_000, np.random.default_rng([4, 5]), vfs=False, judges=("judge-1",))
    mine = [r for r in recs if r["model"] == "cand-b" and r["score"] is not None]
    lc = lc_win_rate([_preference(int(r["score"])) for r in mine], [float(r["length_diff"]) for r in mine],
                     [r["index"] for r in mine], None, penalised=False)["lc_win_rate"]
    assert lc == pytest.approx(50.0, abs=1.2)  # about 4 standard errors of 20,000 items
    rows = controlled_rows(recs, "judge-1", list(model.quality), coverage.IntervalOptions(bootstrap_samples=0))
    bt = next(r for r in rows if r["model"] == "cand-b")["bt_rating"]
    assert bt == pytest.approx(coverage.TRUTHS["bt rating cand-b (ensemble)"](model), abs=8.0)
