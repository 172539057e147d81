"""GuessBench's figures from a panel of extractors (judgekit.benchmarks.guessbench.panel): each
extractor's Table 2, the majority ensemble, Krippendorff's alpha, the interval columns and the
paired comparisons, worked out by hand on a few sets; and the rules stated generally (a panel of
one is the single extractor's result, identical extractors are their ensemble)."""

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.benchmarks.guessbench.panel import (SetVerdicts, ensemble_records, filled, judge_records,
                                                  panel_summary, verdict_agreement)
from judgekit.judging.uncertainty import IntervalOptions
from judgekit.metrics.guessbench import ACCURACY_COLUMNS, accuracy_rows

T, F, N = True, False, None
OPTS = IntervalOptions(bootstrap_samples=400, bootstrap_seed=3)
JUDGES = ["a", "b", "c"]


def sv(model, task, set_id, verdicts, failed=False):
    return SetVerdicts(model, "cot", task, set_id, set_id == "s1", verdicts, failed)


# two candidates, two sets (s1 short, s2 long), three extractors; "a" steers
SETS = [
    sv("m1", "static", "s1", {"a": [T], "b": [T], "c": [F]}),
    sv("m1", "static", "s2", {"a": [F], "b": [T], "c": [N]}),  # c's reading failed
    sv("m2", "static", "s1", {"a": [T], "b": [F], "c": [F]}),
    sv("m2", "static", "s2", {"a": [], "b": [], "c": []}, failed=True),  # the guess call failed
    sv("m1", "dynamic", "s1", {"a": [F, T], "b": [T, F], "c": [F, F]}),  # a stopped the set at turn 2
    sv("m1", "dynamic", "s2", {"a": [F, F, F], "b": [F, F, T], "c": [F, T, T]}),
    sv("m2", "dynamic", "s1", {"a": [T], "b": [N], "c": [T]}),
    sv("m2", "dynamic", "s2", {"a": [F], "b": [F], "c": [T]}, failed=True),  # failed at turn 2
]


def test_filled_attempts_take_the_last_asked_verdict_or_none_after_a_failure():
    assert filled([F, T], "dynamic", False) == [F, T, T]
    assert filled([T, F], "dynamic", False) == [T, F, F]  # the guess the first stopped at stands
    assert filled([F], "dynamic", True) == [F, N, N]
    assert filled([], "dynamic", True) == [N, N, N]
    assert filled([T], "static", False) == [T] and filled([], "static", True) == [N]


def rows_by_model(rows):
    return {r["model"]: r for r in rows}


def test_each_extractors_table_and_the_majority_ensemble_by_hand():
    out = panel_summary(SETS, JUDGES, OPTS, ["m1", "m2"])
    a, b, c = (rows_by_model(out["per_judge"][j]) for j in JUDGES)
    e = rows_by_model(out["ensemble"]["results"])
    assert out["results"] == out["per_judge"]["a"]
    assert out["ensemble"]["rule"] == "majority"

    def acc(r):
        return [r[k] for k in ("static_all", "dynamic_1_all", "dynamic_2_all", "dynamic_3_all")]

    # a: m1 static s1 right, s2 wrong; dynamic s1 [F,T,T], s2 [F,F,F]
    assert acc(a["m1"]) == [50.0, 0.0, 50.0, 50.0] and (a["m1"]["static_short"], a["m1"]["static_long"]) == (100, 0)
    # a: m2 static s1 right (s2 failed); dynamic s1 [T,T,T], s2 [F,-,-]
    assert acc(a["m2"]) == [100.0, 50.0, 100.0, 100.0]
    assert (a["m2"]["failed_static"], a["m2"]["failed_dynamic"]) == (1, 1)
    # b: m1 dynamic s1 right at turn 1 (carried), s2 at turn 3; m2 dynamic s1 unread (failed), s2 [F,-,-]
    assert acc(b["m1"]) == [100.0, 50.0, 50.0, 100.0]
    assert acc(b["m2"]) == [0.0, 0.0, None, None] and b["m2"]["failed_dynamic"] == 2
    # c: its failed reading of m1 static s2 leaves that set out; right at turn 1 of m2's failed set
    assert acc(c["m1"]) == [0.0, 0.0, 50.0, 50.0] and c["m1"]["failed_static"] == 1
    assert acc(c["m2"]) == [0.0, 100.0, 100.0, 100.0] and c["m2"]["failed_dynamic"] == 0
    # ensemble per turn: m1 static (T,T,F) T, (F,T,-) a tie: wrong; dynamic s1 (F,T,F) F, (T,F,F) F;
    # s2 F, (F,F,T) F, (F,T,T) T; m2 static (T,F,F) F; dynamic s1 (T,-,T) T, s2 (F,F,T) F then failed
    assert acc(e["m1"]) == [50.0, 0.0, 0.0, 50.0]
    assert acc(e["m2"]) == [0.0, 50.0, 100.0, 100.0]
    assert e["m1"]["extraction_no_answer"] is None  # the ensemble extracts nothing


def test_interval_columns_by_hand():
    out = panel_summary(SETS, JUDGES, OPTS, ["m1", "m2"])
    a = rows_by_model(out["results"])
    # two sets in a cell: the resamples are (x,x), (x,y), (y,x), (y,y), a quarter each, so the
    # 2.5 % and 97.5 % percentiles are the smaller and the larger value
    assert (a["m1"]["static_all_ci_low"], a["m1"]["static_all_ci_high"]) == (0.0, 100.0)
    assert (a["m1"]["dynamic_2_all_ci_low"], a["m1"]["dynamic_2_all_ci_high"]) == (0.0, 100.0)
    # one set, or sets that agree: no spread
    assert (a["m1"]["static_short_ci_low"], a["m1"]["static_short_ci_high"]) == (100.0, 100.0)
    assert (a["m2"]["dynamic_3_all_ci_low"], a["m2"]["dynamic_3_all_ci_high"]) == (100.0, 100.0)
    # no set: no interval
    b = rows_by_model(out["per_judge"]["b"])
    assert b["m2"]["dynamic_2_all"] is None and b["m2"]["dynamic_2_all_ci_low"] is None
    for r in out["results"] + out["ensemble"]["results"]:
        for col in ACCURACY_COLUMNS:
            if r[col] is not None:
                assert r[f"{col}_ci_low"] <= r[col] <= r[f"{col}_ci_high"]
    # intervals off: the columns stay, empty; the figures do not change
    off = panel_summary(SETS, JUDGES, IntervalOptions(bootstrap_samples=0), ["m1", "m2"])
    assert all(r[f"{c}_ci_low"] is None for r in off["results"] for c in ACCURACY_COLUMNS)
    assert [{k: v for k, v in r.items() if "_ci_" not in k} for r in off["results"]] == [
        {k: v for k, v in r.items() if "_ci_" not in k} for r in out["results"]]
    assert off["comparisons"] == []


def test_comparisons_between_candidates_by_hand():
    out = panel_summary(SETS, JUDGES, OPTS, ["m1", "m2"])
    got = {(c["judge"], c["metric"]): c for c in out["comparisons"]}
    assert {j for j, _ in got} == {"a", "ensemble"}
    s = got[("a", "static_all")]
    # the sets both have: s1 only (m2's s2 failed): right for both
    assert (s["a"], s["b"], s["items"], s["difference"], s["ci_low"], s["ci_high"]) == ("m1", "m2", 1, 0.0, 0.0, 0.0)
    d = got[("a", "dynamic_1_all")]
    # m1 (0, 0) against m2 (1, 0) on s1, s2: -50 points, per-set differences -100 and 0
    assert d["items"] == 2 and d["difference"] == pytest.approx(-50.0)
    assert (d["ci_low"], d["ci_high"]) == (pytest.approx(-100.0), pytest.approx(0.0))
    assert not d["excludes_zero"] and d["approach"] == "cot"


def nominal_alpha(units):
    """Krippendorff's alpha, nominal, from the coincidence matrix (units: lists of the values given)."""
    o = {}
    for vals in units:
        vals = [v for v in vals if v is not None]
        m = len(vals)
        if m < 2:
            continue
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            o[(vals[i], vals[j])] = o.get((vals[i], vals[j]), 0) + 1 / (m - 1)
    n = sum(o.values())
    nc = {}
    for (c, _), w in o.items():
        nc[c] = nc.get(c, 0) + w
    d_o = sum(w for (c, k), w in o.items() if c != k) / n
    d_e = sum(nc[c] * nc[k] for c in nc for k in nc if c != k) / (n * (n - 1))
    return 1 - d_o / d_e


def test_agreement_is_krippendorffs_alpha_over_every_asked_turn():
    got = {r["model"]: r for r in verdict_agreement(SETS, JUDGES)}
    assert list(got) == ["m1", "m2", "all"]
    m1 = [[1, 1, 0], [0, 1, None], [0, 1, 0], [1, 0, 0], [0, 0, 0], [0, 0, 1], [0, 1, 1]]
    m2 = [[1, 0, 0], [1, None, 1], [0, 0, 1]]
    assert got["m1"]["items"] == 7 and got["m2"]["items"] == 3 and got["all"]["items"] == 10
    assert got["m1"]["krippendorff_alpha"] == pytest.approx(nominal_alpha(m1))
    assert got["m2"]["krippendorff_alpha"] == pytest.approx(nominal_alpha(m2))
    assert got["all"]["krippendorff_alpha"] == pytest.approx(nominal_alpha(m1 + m2))
    assert got["all"]["full_agreement"] == pytest.approx(2 / 10)  # m1 s2 turn 1 and m2 s1 turn 1
    assert got["all"]["level"] == "nominal" and got["all"]["quantity"].startswith("extraction verdict")
    # the hand formula itself, on a case worked on paper: o11 = 4, o00 = 2, o01 = o10 = 1 -> 1 - 14/30
    assert nominal_alpha([[1, 1], [0, 0], [1, 0], [1, 1]]) == pytest.approx(16 / 30)


def test_one_extractor_has_no_panel_keys():
    out = panel_summary(SETS, ["a"], OPTS, ["m1", "m2"])
    assert set(out) == {"results", "comparisons", "intervals"}
    assert out["intervals"]["samples"] == 400 and out["intervals"]["seed"] == 3


# ------------------------------------------------------------------------------ properties


@st.composite
def single_flows(draw):
    """Sets as one extractor's flows make them: static one verdict (or a failed call); dynamic wrong
    guesses until a right one stops the set, or a failed call after some turns."""
    out = []
    for model, approach, task in ((m, a, t) for m in ("m1", "m2") for a in ("cot", "no_cot")
                                  for t in ("static", "dynamic")):
        for k in range(draw(st.integers(0, 3))):
            failed = draw(st.booleans())
            if task == "static":
                v = [] if failed else [draw(st.booleans())]
            elif failed:  # wrong guesses, then a failed call
                v = [False] * draw(st.integers(0, 2))
            else:  # right at attempt `at` (the set stops there), or wrong three times
                at = draw(st.integers(1, 4))
                v = [False] * (at - 1) + [True] if at <= 3 else [False] * 3
            out.append(SetVerdicts(model, approach, task, f"s{k}", draw(st.booleans()), {"x": v}, failed))
    return out


def old_correct(s):
    """What run_set reports for one extractor (out.correct), and the pipeline read before panels."""
    got = s.verdicts["x"]
    if s.failed:
        return [None] if s.task == "static" else got + [None] * (3 - len(got))
    if s.task == "static":
        return got
    return got + [True] * (3 - len(got)) if any(got) else got


def strip(rows):
    return [{k: v for k, v in r.items() if "_ci_" not in k and not k.startswith("extraction_")} for r in rows]


@settings(max_examples=60, deadline=None)
@given(single_flows())
def test_a_panel_of_one_is_the_single_extractor_result(sets):
    old = accuracy_rows([{"model": s.model, "approach": s.approach, "task": s.task, "set_id": s.set_id,
                          "short": s.short, "correct": old_correct(s)[0] if s.task == "static" else old_correct(s)}
                         for s in sets])
    out = panel_summary(sets, ["x"], IntervalOptions(bootstrap_samples=0), ["m1", "m2"])
    assert strip(out["results"]) == old
    assert "per_judge" not in out and "ensemble" not in out


@settings(max_examples=40, deadline=None)
@given(single_flows(), st.integers(2, 4))
def test_identical_extractors_are_their_ensemble_and_agree_fully(sets, n):
    names = [f"j{i}" for i in range(n)]
    same = [SetVerdicts(s.model, s.approach, s.task, s.set_id, s.short, {j: s.verdicts["x"] for j in names},
                        s.failed) for s in sets]
    assert ensemble_records(same, names) == judge_records(same, names[0])
    out = panel_summary(same, names, IntervalOptions(bootstrap_samples=0), ["m1", "m2"])
    assert strip(out["ensemble"]["results"]) == strip(out["per_judge"][names[0]])
    for a in out["agreement"]:
        assert a["krippendorff_alpha"] in (1.0, None)  # None: nothing to agree on (one value only)
        assert a["full_agreement"] in (1.0, None)


@settings(max_examples=40, deadline=None)
@given(single_flows())
def test_the_ensemble_of_two_calls_a_turn_right_only_when_both_do(sets):
    # two extractors: the second reads every turn the other way; a tie is wrong, so the ensemble
    # calls nothing right
    flipped = [SetVerdicts(s.model, s.approach, s.task, s.set_id, s.short,
                           {"x": s.verdicts["x"], "y": [None if v is None else not v for v in s.verdicts["x"]]},
                           s.failed) for s in sets]
    for rec in ensemble_records(flipped, ["x", "y"]):
        vals = rec["correct"] if isinstance(rec["correct"], list) else [rec["correct"]]
        assert not any(vals)


def test_comparisons_cover_every_pair_once():
    sets = [sv(m, "static", s, {"a": [T]}) for m in ("m1", "m2", "m3") for s in ("s1", "s2")]
    out = panel_summary(sets, ["a"], OPTS, ["m3", "m1", "m2"])
    pairs = [(c["a"], c["b"]) for c in out["comparisons"] if c["metric"] == "static_all"]
    assert pairs == list(combinations(["m3", "m1", "m2"], 2))
