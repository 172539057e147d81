"""Creation-MMBench's result building (judgekit.benchmarks.creation_mmbench.results and its parts):
per-judge rows with intervals, the panel's ensemble, agreement, judge behaviour, comparisons and
Table 4, on judgment records made by hand or drawn by hypothesis."""

from __future__ import annotations

import copy
import zlib

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging.bootstrap import FIGURES, row_key
from judgekit.benchmarks.creation_mmbench.pipeline import Options
from judgekit.benchmarks.creation_mmbench.results import build
from judgekit.judging.behaviour import pairwise_behaviour
from judgekit.judging.intervals import paired_difference, ratio_interval
from judgekit.judging.pairwise import NO_VFS, summarize

POINT = ("much_better", "better", "tie", "worse", "much_worse", "fail", "n_pairwise", "reward", "win_rate",
         "pairwise_parse_ok", "n_vfs", "vfs_fail", "vfs", "vfs_parse_ok", "vfs_ref")
CI = tuple(f"{f}_ci_{end}" for f in FIGURES for end in ("low", "high"))


def rec(judge, model, index, kind, order, *, score=None, vfs=None, vfs_ref=None, task="t1", category="C1",
        length_diff=0, error_kind=None):
    ok = score is not None if kind == "pairwise" else isinstance(vfs, float)
    return {"model": model, "judge": judge, "index": index, "task": task, "category": category, "kind": kind,
            "order": order, "score": score, "vfs": vfs, "vfs_ref": vfs_ref, "ok": ok,
            "error_kind": None if ok else (error_kind or ("no_objective" if vfs == NO_VFS else "parse_failure")),
            "length_diff": length_diff}


# -- drawn panels ---------------------------------------------------------------------------------
_SCORE = st.sampled_from([2, 1, 0, -1, -2, None])
_HALF = st.integers(0, 20).map(lambda v: v / 2)  # VFS values as the parser gives them (exact in floats)


@st.composite
def one_judge(draw, judge="a"):
    """A judge's records on 1-2 candidates x 1-8 items (tasks and categories), dual or not."""
    out = []
    models = draw(st.lists(st.sampled_from(["m1", "m2"]), min_size=1, max_size=2, unique=True))
    n = draw(st.integers(1, 8))
    orders = (0, 1) if draw(st.booleans()) else (0,)
    for model in models:
        for i in range(n):
            where = {"task": f"t{i % 3}", "category": f"C{i % 2}"}
            for order in orders:
                out.append(rec(judge, model, str(i), "pairwise", order, score=draw(_SCORE),
                               length_diff=draw(st.integers(-50, 50)), **where))
                if i % 2 == 0:  # items with visual factuality criteria
                    v = draw(st.one_of(st.none(), st.just(NO_VFS), _HALF))
                    out.append(rec(judge, model, str(i), "vfs", order, vfs=v,
                                   vfs_ref=draw(_HALF) if isinstance(v, float) else None, **where))
    return out


def as_judge(records, judge):
    return [{**r, "judge": judge} for r in records]


def options(samples=50, seed=0):
    return Options(bootstrap_samples=samples, bootstrap_seed=seed)


@settings(max_examples=25, deadline=None)
@given(one_judge())
def test_a_panel_of_one_is_the_single_judge_result(records):
    built = build(records, judges=["a"], candidates=["m1", "m2"], options=options())
    rows = built.summary["results"]
    # the point estimates are summarize's, unchanged; the intervals come on top
    assert [{k: r[k] for k in ("model", "level", "group", *POINT)} for r in rows] == \
        [{k: r[k] for k in ("model", "level", "group", *POINT)} for r in summarize(records)]
    assert all(set(CI) <= set(r) for r in rows)
    assert built.summary["judges"] == ["a"]
    assert not {"per_judge", "ensemble", "agreement"} & set(built.summary)
    assert [r["judge"] for r in built.tables["summary"]] == ["a"] * len(rows)
    # adding a judge leaves the first judge's results as they are, intervals included
    other = as_judge(records, "b")
    for r in other:
        if r["kind"] == "pairwise" and r["score"] is not None:
            r["score"] = -r["score"]
    panel = build(records + other, judges=["a", "b"], candidates=["m1", "m2"], options=options())
    assert panel.summary["results"] == rows and panel.summary["per_judge"]["a"] == rows


@settings(max_examples=25, deadline=None)
@given(one_judge(), st.integers(2, 3))
def test_the_ensemble_of_identical_judges_is_that_judge(records, k):
    judges = ["a", "b", "c"][:k]
    panel = [r for j in judges for r in as_judge(records, j)]
    built = build(panel, judges=judges, candidates=["m1", "m2"], options=options())
    s = built.summary
    assert s["ensemble"]["results"] == s["results"] == s["per_judge"]["b"]
    assert s["ensemble"]["rules"] == {"pairwise verdict": "mean", "vfs": "mean"}
    majority = build(panel, judges=judges, candidates=["m1", "m2"], options=options(), ensemble="majority").summary
    assert majority["ensemble"]["results"] == s["results"]
    assert majority["ensemble"]["rules"] == {"pairwise verdict": "majority", "vfs": "mean"}
    for a in s["agreement"]:
        assert a["full_agreement"] in (None, 1.0)
        assert a["krippendorff_alpha"] in (None, 1.0)
    if len({r["score"] for r in records if r["kind"] == "pairwise" and r["score"] is not None}) >= 2:
        pooled = next(a for a in s["agreement"] if (a["quantity"], a["model"]) == ("pairwise verdict", "all"))
        assert pooled["krippendorff_alpha_across"] == 1.0
        # pooled within candidates: defined only when some candidate's own verdicts vary
        varies = any(len({r["score"] for r in records if r["kind"] == "pairwise" and r["score"] is not None
                          and r["model"] == m}) >= 2 for m in ("m1", "m2"))
        assert pooled["krippendorff_alpha"] == (1.0 if varies else None)
    behaviour = {(b["judge"], b["model"]): {k: v for k, v in b.items() if k != "judge"} for b in s["judge_behaviour"]}
    for (judge, model), b in behaviour.items():
        assert b == behaviour[("a", model)]


# -- intervals --------------------------------------------------------------------------------------
def _hand_records():
    """Judge a and b on m1 and m2, items 1-4 (tasks t1 t1 t2 t2), both orders; VFS on items 1 and 3."""
    scores = {  # (judge, model, index) -> (order 0, order 1) candidate's scores
        ("a", "m1", "1"): (2, 1), ("a", "m1", "2"): (1, None), ("a", "m1", "3"): (0, -1), ("a", "m1", "4"): (-2, 0),
        ("a", "m2", "1"): (-1, -1), ("a", "m2", "2"): (0, 0), ("a", "m2", "3"): (1, 2), ("a", "m2", "4"): (-2, -2),
        ("b", "m1", "1"): (1, 1), ("b", "m1", "2"): (2, 1), ("b", "m1", "3"): (-1, -1), ("b", "m1", "4"): (-2, 0),
        ("b", "m2", "1"): (-1, 0), ("b", "m2", "2"): (1, 0), ("b", "m2", "3"): (1, 1), ("b", "m2", "4"): (None, -2),
    }
    vfs = {("a", "m1", "1"): ((7.0, 5.0), (6.0, 6.0)), ("a", "m1", "3"): ((4.0, 8.0), (None, None)),
           ("a", "m2", "1"): ((3.0, 7.0), (2.0, 6.0)), ("a", "m2", "3"): ((9.0, 4.0), (8.5, 5.0)),
           ("b", "m1", "1"): ((8.0, 5.0), (7.0, 5.0)), ("b", "m1", "3"): ((5.0, 7.0), (4.0, 6.0)),
           ("b", "m2", "1"): ((2.0, 8.0), (NO_VFS, None)), ("b", "m2", "3"): ((9.0, 3.0), (9.0, 4.0))}
    out = []
    for (judge, model, index), (s0, s1) in scores.items():
        where = {"task": "t1" if index in "12" else "t2", "category": "C1"}
        for order, s in ((0, s0), (1, s1)):
            out.append(rec(judge, model, index, "pairwise", order, score=s, length_diff=int(index) * 10 - 25, **where))
            if (judge, model, index) in vfs:
                v, ref = vfs[(judge, model, index)][order]
                out.append(rec(judge, model, index, "vfs", order, vfs=v, vfs_ref=ref, **where))
    return out


def _sums(records, judge, model, indices):
    """Per item (in order): (50 x sum of valid scores, 100 x wins, valid, sum of VFS, sum of VFS ref, valid VFS),
    written out plainly."""
    out = []
    for index in indices:
        mine = [r for r in records if (r["judge"], r["model"], r["index"]) == (judge, model, index)]
        sc = [r["score"] for r in mine if r["kind"] == "pairwise" and r["score"] is not None]
        vf = [r for r in mine if r["kind"] == "vfs" and isinstance(r["vfs"], float)]
        out.append((50.0 * sum(sc), 100.0 * sum(s > 0 for s in sc), len(sc), sum(r["vfs"] for r in vf),
                    sum(r["vfs_ref"] for r in vf), len(vf)))
    return out


def test_every_rows_interval_is_the_ratio_interval_of_its_items():
    records = _hand_records()
    built = build(records, judges=["a", "b"], candidates=["m1", "m2"], options=options(200, seed=3))
    figures = {"reward": (0, 2), "win_rate": (1, 2), "vfs": (3, 5), "vfs_ref": (4, 5)}
    checked = 0
    for judge, rows in built.summary["per_judge"].items():
        for row in rows:
            indices = {"overall": ["1", "2", "3", "4"], "t1": ["1", "2"], "t2": ["3", "4"], "C1": ["1", "2", "3", "4"]}
            sums = _sums(records, judge, row["model"], indices[row["group"]])
            for figure, (num, den) in figures.items():
                iv = ratio_interval([s[num] for s in sums], [s[den] for s in sums], samples=200, seed=3,
                                    key=row_key(row["model"], row["level"], row["group"]))
                assert iv.estimate == pytest.approx(row[figure])
                assert (row[f"{figure}_ci_low"], row[f"{figure}_ci_high"]) == (round(iv.low, 2), round(iv.high, 2))
                assert row[f"{figure}_ci_low"] - 0.01 <= row[figure] <= row[f"{figure}_ci_high"] + 0.01
                checked += 1
    assert checked == 2 * 2 * 4 * 4  # judges x models x (overall, category, two tasks) x figures
    # by hand: judge a on m1 overall, Reward = 50 x (3 + 1 - 1 - 2) / 7 valid scores
    a_m1 = next(r for r in built.summary["results"] if r["model"] == "m1" and r["level"] == "overall")
    assert a_m1["reward"] == pytest.approx(50 / 7) and a_m1["vfs"] == pytest.approx(17 / 3)
    # the same seed gives the same intervals, another seed others
    again = build(records, judges=["a", "b"], candidates=["m1", "m2"], options=options(200, seed=3))
    other = build(records, judges=["a", "b"], candidates=["m1", "m2"], options=options(200, seed=4))
    assert again.summary["per_judge"] == built.summary["per_judge"]
    assert other.summary["per_judge"] != built.summary["per_judge"]


def test_intervals_off():
    built = build(_hand_records(), judges=["a"], candidates=["m1", "m2"], options=options(0))
    assert not any(k.endswith(("_ci_low", "_ci_high")) for r in built.summary["results"] for k in r)
    assert built.summary["comparisons"] == [] and built.summary["intervals"]["samples"] == 0
    assert built.display[0]["Reward"].count("[") == 0


def test_comparisons_are_paired_differences_on_common_items():
    records = _hand_records()
    built = build(records, judges=["a", "b"], candidates=["m2", "m1"], options=options(200))
    comps = built.summary["comparisons"]
    assert {(c["judge"], c["metric"]) for c in comps} == {(j, m) for j in ("a", "ensemble")
                                                          for m in ("reward", "win_rate", "vfs")}
    c = next(c for c in comps if (c["judge"], c["metric"]) == ("a", "reward"))
    assert (c["a"], c["b"], c["items"]) == ("m2", "m1", 4)  # candidates' order
    s2, s1 = _sums(records, "a", "m2", "1234"), _sums(records, "a", "m1", "1234")
    iv = paired_difference([s[0] for s in s2], [s[2] for s in s2], [s[0] for s in s1], [s[2] for s in s1],
                           samples=200, seed=0, key="a:reward:m2-m1")
    assert c["difference"] == iv.estimate  # the point estimate exactly as a pair's own bootstrap gives it
    # the interval: one draw of the 4 items (the stream "a:comparisons") shared by every pair and
    # figure of judge a, written out here: each resample's Reward of m2 minus m1's, percentiles
    idx = np.random.default_rng(np.random.SeedSequence([0, zlib.crc32(b"a:comparisons")])).integers(0, 4, (200, 4))
    num2, den2 = np.array([s[0] for s in s2]), np.array([s[2] for s in s2])
    num1, den1 = np.array([s[0] for s in s1]), np.array([s[2] for s in s1])
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = num2[idx].sum(1) / den2[idx].sum(1) - num1[idx].sum(1) / den1[idx].sum(1)
    diff = diff[~np.isnan(diff)]
    assert (c["ci_low"], c["ci_high"]) == pytest.approx(tuple(np.quantile(diff, [0.025, 0.975])))
    overall = {r["model"]: r["reward"] for r in built.summary["results"] if r["level"] == "overall"}
    assert c["difference"] == pytest.approx(overall["m2"] - overall["m1"])
    assert c["excludes_zero"] == (c["ci_low"] > 0 or c["ci_high"] < 0)
    # the same draw serves Win Rate: its resampled differences come from the same items
    w = next(c for c in comps if (c["judge"], c["metric"]) == ("a", "win_rate"))
    win2, win1 = np.array([s[1] for s in s2]), np.array([s[1] for s in s1])
    with np.errstate(invalid="ignore", divide="ignore"):
        wdiff = win2[idx].sum(1) / den2[idx].sum(1) - win1[idx].sum(1) / den1[idx].sum(1)
    wdiff = wdiff[~np.isnan(wdiff)]
    assert (w["ci_low"], w["ci_high"]) == pytest.approx(tuple(np.quantile(wdiff, [0.025, 0.975])))


# -- ensemble, agreement, behaviour --------------------------------------------------------------------
def test_ensemble_agreement_and_behaviour_of_a_two_judge_panel():
    records = _hand_records()
    built = build(records, judges=["a", "b"], candidates=["m1", "m2"], options=options(50))
    s = built.summary
    ens = {r["model"]: r for r in s["ensemble"]["results"] if r["level"] == "overall"}
    # m1, the mean of two (the default): (2,1)->1.5 (1,1)->1 | (1,2)->1.5 (None,1)->1 | (0,-1)->-0.5 (-1,-1)->-1
    # | (-2,-2)->-2 (0,0)->0; wins: the five above 0, ties: one
    assert ens["m1"]["reward"] == pytest.approx(50 * (1.5 + 1 + 1.5 + 1 - 0.5 - 1 - 2 + 0) / 8)
    assert ens["m1"]["win_rate"] == pytest.approx(100 * 4 / 8) and ens["m1"]["tie"] == 1
    assert (ens["m1"]["much_better"], ens["m1"]["better"], ens["m1"]["worse"], ens["m1"]["much_worse"]) == (2, 2, 2, 1)
    maj = build(records, judges=["a", "b"], candidates=["m1", "m2"], options=options(50), ensemble="majority").summary
    maj_m1 = next(r for r in maj["ensemble"]["results"] if r["level"] == "overall" and r["model"] == "m1")
    # m1, majority of two: (2,1)->1 (1,1)->1 | (1,2)->1 (None,1)->1 | (0,-1)->0 (-1,-1)->-1 | (-2,-2)->-2 (0,0)->0
    assert maj_m1["reward"] == pytest.approx(50 * (1 + 1 + 1 + 1 + 0 - 1 - 2 + 0) / 8)
    assert "majority" in maj["ensemble"]["description"]
    # m1 VFS, mean of the judges' valid values per order: (7+8)/2, (6+7)/2, (4+5)/2, 4 -> mean of the four
    assert ens["m1"]["vfs"] == pytest.approx((7.5 + 6.5 + 4.5 + 4.0) / 4)
    assert ens["m1"]["vfs_ref"] == pytest.approx((5.0 + 5.5 + 7.5 + 6.0) / 4)
    assert s["ensemble"]["rule"] == "mean/mean" and "> 0" in s["ensemble"]["description"]

    agreement = {(a["quantity"], a["model"]): a for a in s["agreement"]}
    assert set(agreement) == {(q, m) for q in ("pairwise verdict", "vfs") for m in ("m1", "m2", "all")}
    # m1's verdicts rated per (item, order) by a and b, checked with the package directly
    a_m1 = [2, 1, 1, np.nan, 0, -1, -2, 0]
    b_m1 = [1, 1, 2, 1, -1, -1, -2, 0]
    want = krippendorff.alpha(reliability_data=[a_m1, b_m1], level_of_measurement="ordinal")
    got = agreement[("pairwise verdict", "m1")]
    assert got["krippendorff_alpha"] == pytest.approx(want) and got["items"] == 7 and got["level"] == "ordinal"
    assert got["full_agreement"] == pytest.approx(4 / 7)
    assert agreement[("vfs", "all")]["level"] == "interval"
    assert agreement[("vfs", "m2")]["items"] == 3  # b's item 1 order 1 was left out

    rows = {(b["judge"], b["model"]): b for b in s["judge_behaviour"]}
    assert set(rows) == {(j, m) for j in ("a", "b", "ensemble") for m in ("m1", "m2", "all")}
    mine = [{"item": (r["model"], r["index"]), "order": r["order"], "score": r["score"],
             "length_diff": r["length_diff"]} for r in records if r["judge"] == "a" and r["kind"] == "pairwise"]
    pooled = pairwise_behaviour(mine)  # pooled across candidates: kept as length_correlation_across
    assert rows[("a", "all")]["length_correlation_across"] == pooled.pop("length_correlation")
    assert {k: v for k, v in rows[("a", "all")].items() if k in pooled} == pooled
    # the "all" row's length correlation is pooled within candidates: ranks within each candidate,
    # centred, then one Pearson r (scipy's ranks, numpy's r)
    from scipy.stats import rankdata
    xs, ys = [], []
    for m in ("m1", "m2"):
        d = [(r["length_diff"], r["score"]) for r in records if r["judge"] == "a" and r["kind"] == "pairwise"
             and r["model"] == m and r["score"] is not None and r["length_diff"] is not None]
        rx, ry = rankdata([x for x, _ in d]), rankdata([y for _, y in d])
        xs += list(rx - rx.mean())
        ys += list(ry - ry.mean())
    want_rho = float(np.dot(xs, ys) / np.sqrt(np.dot(xs, xs) * np.dot(ys, ys)))
    assert rows[("a", "all")]["length_correlation"] == pytest.approx(want_rho)
    assert rows[("a", "m1")]["parse_failures"] == 1 and rows[("a", "m1")]["judgments"] == 8
    assert rows[("a", "m1")]["vfs_judgments"] == 4 and rows[("a", "m1")]["vfs_parse_failures"] == 1
    assert rows[("b", "m2")]["vfs_judgments"] == 3  # the judgment left out is no failure
    assert rows[("a", "m1")]["swap_consistency"] == pytest.approx(1 / 3)  # items 1, 3, 4: +/+ agree, 0/- and -/0 not
    # the printed tables: per judge overall, agreement, behaviour, comparisons
    titles = [t for t, _ in built.more_displays]
    assert titles[1:] == ["Per judge, overall", "Judge agreement (Krippendorff's alpha)", "Judge behaviour",
                      "Paired comparisons (overall, a - b)"]
    assert titles[0].startswith("Length-controlled win rate")  # judging.control's table first
    assert [(r["judge"], r["model"]) for r in built.summary["controlled"]["results"]] == [
        (j, m) for j in ("a", "ensemble") for m in ("m1", "m2")]
    assert built.display[0]["Reward"].count("[") == 1 and built.tables["agreement"][0]["judges"] == "a, b"


def test_a_judgment_without_a_judge_call_says_nothing_about_the_judge():
    records = _hand_records()
    failed = copy.deepcopy([r for r in records if r["judge"] == "a" and r["model"] == "m1"])
    for r in failed:
        r.update(score=None, vfs=None, vfs_ref=None, ok=False, error_kind="candidate_failed", length_diff=None)
    built = build(failed, judges=["a"], candidates=["m1"], options=options(0))
    b = next(b for b in built.summary["judge_behaviour"] if b["model"] == "all")
    assert b["judgments"] == 0 and b["vfs_judgments"] == 0 and b["parse_failure_rate"] is None
    assert built.summary["results"][0]["fail"] > 0  # still counted as failures in the results


# -- Table 4 ---------------------------------------------------------------------------------------
def test_table4_rows_by_hand():
    records = _hand_records()
    human = {("m1", "1"): 1.5, ("m1", "3"): -1.0, ("", "2"): 2.0, ("m2", "4"): 0.0}  # ("", i): any model
    built = build(records, judges=["a", "b"], candidates=["m1", "m2"], options=options(0), human=human)
    rows = {(r["judge"], r["model"]): r for r in built.summary["human_alignment"]}
    assert list(rows) == [(j, m) for j in ("a", "b", "ensemble") for m in ("m1", "m2", "overall")]
    a1 = rows[("a", "m1")]
    # dual J: item 1 (2+1)/2 = 1.5 vs 1.5 -> 0; item 2 (1)/1 = 1 vs 2 -> 1; item 3 (0-1)/2 = -0.5 vs -1 -> 0.5
    assert a1["items"] == 3 and a1["dual_mae"] == pytest.approx(1.5 / 3) and a1["dual_consistency"] == 100.0
    # single J (order 0): 2 vs 1.5 -> 0.5; 1 vs 2 -> 1; 0 vs -1 -> 1
    assert a1["single_items"] == 3 and a1["single_mae"] == pytest.approx(2.5 / 3)
    assert a1["single_consistency"] == 100.0
    assert (a1["mae"], a1["consistency"]) == (a1["dual_mae"], a1["dual_consistency"])
    b2 = rows[("b", "m2")]
    # m2: item 2 (1+0)/2 = 0.5 vs 2 -> 1.5; item 4 (-2) vs 0 -> 2 | single: 1 vs 2 -> 1; item 4 order 0 failed
    assert (b2["items"], b2["dual_mae"], b2["dual_consistency"]) == (2, pytest.approx(1.75), 0.0)
    assert (b2["single_items"], b2["single_mae"], b2["single_consistency"]) == (1, 1.0, 100.0)
    ov = rows[("a", "overall")]  # a's items pooled over m1 and m2 (m2: item 2 0 vs 2 -> 2, item 4 -2 vs 0 -> 2)
    assert ov["items"] == 5 and ov["dual_mae"] == pytest.approx((0 + 1 + 0.5 + 2 + 2) / 5)
    assert ov["dual_consistency"] == pytest.approx(60.0)
    # the ensemble's J is its majority verdicts': m1 item 1 orders 0 and 1 -> 1, 1 (J 1 vs 1.5)
    assert rows[("ensemble", "m1")]["items"] == 3
    assert built.tables["human_alignment"] == built.summary["human_alignment"]

    single = [r for r in records if r["order"] == 0]
    only = build(single, judges=["a"], candidates=["m1", "m2"], options=options(0), human=human, dual=False)
    s1 = next(r for r in only.summary["human_alignment"] if r["model"] == "m1")
    assert s1["dual_mae"] is None and s1["dual_consistency"] is None
    assert (s1["single_mae"], s1["mae"], s1["items"]) == (a1["single_mae"], a1["single_mae"], 3)
