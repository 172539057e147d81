"""Honest small numbers (judging.rates, .multiplicity, .alpha, .honest): each statistic against an
independent computation, the flags firing and not firing, and properties on edge cases."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm, spearmanr

from judgekit.benchmarks.creation_mmbench.results import build
from judgekit.judging.alpha import grouped_alpha
from judgekit.judging.honest import (degenerate_flags, interval_line, model_family, pooled_within_spearman,
                                     self_preference_flags)
from judgekit.judging.multiplicity import adjust_comparisons, bootstrap_p, holm, swap_p, swap_signs
from judgekit.judging.panel import behaviour_rows
from judgekit.judging.rates import wilson
from judgekit.judging.uncertainty import IntervalOptions


# -- Wilson ------------------------------------------------------------------------------------------
def _wilson_by_roots(k, n, level):
    """The Wilson interval as the two roots in p of (k/n - p)^2 = z^2 p (1 - p) / n."""
    z = norm.ppf(0.5 + level / 2)
    ph = k / n
    # (1 + z^2/n) p^2 - (2 ph + z^2/n) p + ph^2 = 0
    roots = np.roots([1 + z * z / n, -(2 * ph + z * z / n), ph * ph])
    return float(min(roots.real)), float(max(roots.real))


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (3, 10), (12, 19), (14, 21), (50, 100), (999, 1000)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_is_the_score_test_inverted(k, n, level):
    lo, hi = wilson(k, n, level)
    want = _wilson_by_roots(k, n, level)
    assert lo == pytest.approx(max(0.0, want[0]), abs=1e-9) and hi == pytest.approx(min(1.0, want[1]), abs=1e-9)


def test_wilson_known_value_and_edges():
    # 14 of 21 first-slot wins: the "about [41, 88] %" range; the textbook 7/10 value
    assert wilson(7, 10) == pytest.approx((0.3968, 0.8922), abs=1e-4)
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0
    assert wilson(0, 0) == (None, None)
    with pytest.raises(ValueError):
        wilson(3, 2)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.floats(0.6, 0.999))
def test_wilson_properties(kn, level):
    k, n = kn
    lo, hi = wilson(k, n, level)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    wider = wilson(k, n, min(0.9999, level + 0.0005))
    assert wider[0] <= lo + 1e-12 and wider[1] >= hi - 1e-12


# -- Holm ------------------------------------------------------------------------------------------
def test_holm_by_hand():
    # sorted: 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5] and holm([]) == []
    assert holm([0.3, 0.4]) == pytest.approx([0.6, 0.6])


def _holm_rejects(p, alpha):
    """Holm's procedure as written in the 1979 paper: step down from the smallest p, rejecting
    while p_(i) <= alpha / (m - i + 1) (i from 1), stopping at the first that is not."""
    m = len(p)
    rejected = set()
    for rank, i in enumerate(sorted(range(m), key=lambda i: (p[i], i))):
        if p[i] <= alpha / (m - rank):
            rejected.add(i)
        else:
            break
    return rejected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_agrees_with_the_step_down_procedure(p, alpha):
    adj = holm(p)
    assert {i for i, a in enumerate(adj) if a <= alpha} == _holm_rejects(p, alpha)
    assert all(a >= q - 1e-15 and a <= 1.0 for a, q in zip(adj, p))
    order = sorted(range(len(p)), key=lambda i: p[i])
    assert all(adj[a] <= adj[b] + 1e-15 for a, b in zip(order, order[1:]))  # monotone in p


def test_adjust_comparisons_keeps_the_raw_flag_and_never_says_more():
    rows = [{"p_value": 0.001, "excludes_zero": True}, {"p_value": 0.03, "excludes_zero": True},
            {"p_value": 0.04, "excludes_zero": True}, {"p_value": None, "excludes_zero": False}]
    info = adjust_comparisons(rows, 0.95)
    assert info["family"] == 3 and info["method"] == "holm"
    assert [r["excludes_zero"] for r in rows] == [True, True, True, False]
    assert [r["excludes_zero_holm"] for r in rows] == [True, False, False, None]
    assert rows[0]["p_holm"] == pytest.approx(0.003) and rows[2]["p_holm"] == pytest.approx(0.06)
    off = [{"p_value": 0.001, "excludes_zero": True}]
    assert adjust_comparisons(off, 0.95, enabled=False)["method"] is None and "p_holm" not in off[0]


def test_bootstrap_p_inverts_the_percentile_interval():
    rng = np.random.default_rng(3)
    for shift in (0.0, 0.5, 1.5, 2.5, 4.0):
        d = rng.normal(shift, 1.0, 4000)
        p = bootstrap_p(d)
        lo, hi = np.quantile(d, [0.025, 0.975])
        excludes = lo > 0 or hi < 0
        if abs(p - 0.05) > 0.01:
            assert excludes == (p < 0.05)
        assert p == pytest.approx(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))
    assert bootstrap_p(np.zeros(10)) == 1.0 and bootstrap_p(np.array([np.nan])) is None


def test_holm_holds_the_familywise_rate_with_equal_candidates():
    """Two equal candidates, three correlated figures and two judges (six comparisons): raw
    "excludes 0" somewhere far more than 5 % of runs; after Holm at most about 5 %."""
    rng = np.random.default_rng(11)
    runs, raw_any, holm_any = 300, 0, 0
    for _ in range(runs):
        rows = []
        common = rng.normal(0, 1, (50, 1))
        for k in range(6):
            d = common * 0.5 + rng.normal(0, 1, (50, 1))
            idx = rng.integers(0, 50, (400, 50))
            stats = d[idx, 0].mean(axis=1)
            lo, hi = np.quantile(stats, [0.025, 0.975])
            rows.append({"p_value": bootstrap_p(stats), "excludes_zero": bool(lo > 0 or hi < 0)})
        adjust_comparisons(rows, 0.95)
        raw_any += any(r["excludes_zero"] for r in rows)
        holm_any += any(r["excludes_zero_holm"] for r in rows)
    assert raw_any / runs > 0.12
    assert holm_any / runs <= 0.10 and raw_any >= 2 * holm_any


def test_swap_p_against_a_plain_loop_and_at_its_ends():
    """swap_p: each random swap set exchanges the two sides' sums of the swapped items; p counts
    the draws at least as far from 0 as the data, plus one, over B + 1."""
    rng = np.random.default_rng(4)
    n, B = 14, 300
    na, nb = rng.integers(-4, 5, (n, 2)).astype(float), rng.integers(-4, 5, (n, 2)).astype(float)
    da, db = rng.integers(1, 3, (n, 2)).astype(float), rng.integers(1, 3, (n, 2)).astype(float)
    signs = swap_signs(np.random.default_rng(9), n, B)
    got = swap_p(na, da, nb, db, signs)
    for c in range(2):
        observed = abs(na[:, c].sum() / da[:, c].sum() - nb[:, c].sum() / db[:, c].sum())
        extreme = 0
        for s in signs:
            keep = s > 0
            a_n = np.where(keep, na[:, c], nb[:, c]).sum()
            a_d = np.where(keep, da[:, c], db[:, c]).sum()
            b_n = np.where(keep, nb[:, c], na[:, c]).sum()
            b_d = np.where(keep, db[:, c], da[:, c]).sum()
            extreme += abs(a_n / a_d - b_n / b_d) >= observed - 1e-12
        assert got[c] == pytest.approx((1 + extreme) / (B + 1))
    same = swap_p(na[:, :1], da[:, :1], na[:, :1], da[:, :1], signs)
    assert same[0] == 1.0  # identical sides: every swap is as extreme as the data
    far = swap_p(np.full((n, 1), 2.0), np.ones((n, 1)), np.full((n, 1), -2.0), np.ones((n, 1)), signs)
    assert far[0] == pytest.approx(1 / (B + 1))  # every item favours a: no swap set is as extreme
    assert np.isnan(swap_p(na[:, :1], np.zeros((n, 1)), nb[:, :1], db[:, :1], signs)[0])


def test_swap_p_holds_its_size_at_small_n():
    """Equal candidates with discrete verdicts on 8 items: the swap test rejects at 5 % in at
    most about 5 % of runs (the bootstrap p rejected in far more)."""
    rng = np.random.default_rng(12)
    runs, swap_rejects, boot_rejects = 600, 0, 0
    for _ in range(runs):
        item = rng.normal(0, 1, (8, 1))
        a = np.clip(np.rint(item + rng.normal(0, 1, (8, 1))), -2, 2)
        b = np.clip(np.rint(item + rng.normal(0, 1, (8, 1))), -2, 2)
        ones = np.ones((8, 1))
        p = swap_p(a, ones, b, ones, swap_signs(rng, 8, 200))[0]
        swap_rejects += p < 0.05
        idx = rng.integers(0, 8, (200, 8))
        boot_rejects += bootstrap_p((a - b)[idx, 0].mean(axis=1)) < 0.05
    assert swap_rejects / runs <= 0.065
    assert boot_rejects > swap_rejects


# -- alpha -------------------------------------------------------------------------------------------
def _panel(rng, groups=("a", "b", "c"), items=30, missing=0.1, spread=1.0):
    ratings = {}
    for gi, g in enumerate(groups):
        for i in range(items):
            for o in (0, 1):
                base = int(np.clip(rng.integers(-2, 3) + gi * spread, -2, 2))
                ratings[(g, i, o)] = {"j1": base, "j2": None if rng.random() < missing else
                                      int(np.clip(base + rng.integers(-1, 2), -2, 2)), "j3": base}
    return ratings


def _pkg(ratings, judges, level, keys=None):
    keys = list(ratings) if keys is None else keys
    m = np.array([[np.nan if ratings[k].get(j) is None else ratings[k][j] for k in keys] for j in judges], float)
    return krippendorff.alpha(reliability_data=m, level_of_measurement=level)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_point_estimates_match_the_krippendorff_package(level):
    rng = np.random.default_rng(5)
    ratings = _panel(rng)
    if level == "ratio":
        ratings = {k: {j: None if v is None else v + 3 for j, v in r.items()} for k, r in ratings.items()}
    judges = ["j1", "j2", "j3"]
    got = grouped_alpha(ratings, judges, level, group=lambda u: u[0], cluster=lambda u: u[1], samples=0,
                        interval_level=0.95, seed=0, key="t")
    assert got["across"][0] == pytest.approx(_pkg(ratings, judges, level), abs=1e-12)
    for g in "abc":
        keys = [k for k in ratings if k[0] == g]
        assert got["groups"][g][0] == pytest.approx(_pkg(ratings, judges, level, keys), abs=1e-12)
    # pooled within: 1 - sum_g n_g D_o,g / sum_g n_g D_e,g, from each group's alpha and its D_e
    one = grouped_alpha({k: v for k, v in ratings.items() if k[0] == "a"}, judges, level, group=lambda u: u[0],
                        cluster=lambda u: u[1], samples=0, interval_level=0.95, seed=0, key="t")
    assert one["within"][0] == pytest.approx(one["across"][0], abs=1e-12)


def test_alpha_within_candidates_ignores_a_gap_between_candidates():
    """Judges that agree no better than chance within each candidate, on candidates far apart:
    pooled across, alpha looks high; pooled within, it stays near 0."""
    rng = np.random.default_rng(2)
    ratings = {}
    for g, centre in (("good", 8.0), ("bad", 2.0)):
        for i in range(200):
            ratings[(g, i, 0)] = {"j1": centre + rng.normal(), "j2": centre + rng.normal()}
    got = grouped_alpha(ratings, ["j1", "j2"], "interval", group=lambda u: u[0], cluster=lambda u: u[1],
                        samples=200, interval_level=0.95, seed=0, key="t")
    assert got["across"][0] > 0.8
    assert abs(got["within"][0]) < 0.2 and got["within"][1] < 0.0 < got["within"][2] + 0.15


def test_alpha_interval_covers_the_population_alpha():
    """Coverage sanity: 60 simulated panels of 80 items; the population alpha (from 40,000 items)
    falls inside the 95 % interval in 85-100 % of them."""
    def draw(rng, n):
        out = {}
        for i in range(n):
            t = rng.normal()
            out[("m", i, 0)] = {"j1": round(2 * (t + 0.7 * rng.normal())) / 2, "j2": round(2 * (t + 0.7 * rng.normal())) / 2}
        return out
    rng = np.random.default_rng(9)
    big = draw(rng, 40_000)
    truth = grouped_alpha(big, ["j1", "j2"], "interval", group=lambda u: u[0], cluster=lambda u: u[1], samples=0,
                          interval_level=0.95, seed=0, key="t")["across"][0]
    hits = 0
    for r in range(60):
        got = grouped_alpha(draw(rng, 80), ["j1", "j2"], "interval", group=lambda u: u[0], cluster=lambda u: u[1],
                            samples=300, interval_level=0.95, seed=r, key="t")["across"]
        hits += got[1] <= truth <= got[2]
    assert 0.85 <= hits / 60 <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m1", "m2"]), st.integers(0, 5), st.sampled_from([0, 1]),
                          st.one_of(st.none(), st.integers(-2, 2)), st.one_of(st.none(), st.integers(-2, 2))),
                max_size=30))
def test_alpha_is_nan_free_and_bounded(units):
    ratings = {(g, i, o): {"a": x, "b": y} for g, i, o, x, y in units}
    got = grouped_alpha(ratings, ["a", "b"], "ordinal", group=lambda u: u[0], cluster=lambda u: u[1], samples=50,
                        interval_level=0.95, seed=0, key="t", groups=["m1", "m2"])
    for a, lo, hi in [*got["groups"].values(), got["across"], got["within"]]:
        for v in (a, lo, hi):
            assert v is None or (math.isfinite(v) and v <= 1.0 + 1e-12)
        if a is not None and lo is not None:
            assert lo <= hi


# -- length correlation within candidates ----------------------------------------------------------
def test_pooled_within_spearman():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=40), rng.normal(size=40)
    assert pooled_within_spearman([(x, y)]) == pytest.approx(spearmanr(x, y).statistic)
    # two candidates, each with no association, one longer and better: across shows it, within not
    xs = [rng.normal(size=50), rng.normal(size=50) + 10]
    ys = [rng.normal(size=50), rng.normal(size=50) + 10]
    assert spearmanr(np.concatenate(xs), np.concatenate(ys)).statistic > 0.6
    assert abs(pooled_within_spearman(list(zip(xs, ys)))) < 0.3
    assert pooled_within_spearman([([1.0], [2.0])]) is None


# -- flags -------------------------------------------------------------------------------------------
def rec(judge, model, index, kind, order, *, score=None, vfs=None, length_diff=0, category="C1"):
    ok = score is not None if kind == "pairwise" else vfs is not None
    return {"model": model, "judge": judge, "index": index, "task": "t1", "category": category, "kind": kind,
            "order": order, "score": score, "vfs": vfs, "vfs_ref": 5.0 if vfs is not None else None, "ok": ok,
            "error_kind": None if ok else "parse_failure", "length_diff": length_diff}


def _records(judge, n, verdict, models=("m1", "m2")):
    """``verdict(model, i, order)`` -> the candidate's score (already negated back for order 1)."""
    return [rec(judge, m, str(i), "pairwise", o, score=verdict(m, i, o), length_diff=i, category=f"C{i % 4}")
            for m in models for i in range(n) for o in (0, 1)]


def test_a_judge_that_always_answers_a_is_flagged_and_a_fair_one_is_not():
    # always "A wins": order 0 (baseline first) -> the candidate loses (-1); order 1 -> it wins (+1)
    always_a = _records("lazy", 30, lambda m, i, o: -1 if o == 0 else 1)
    rng = np.random.default_rng(0)
    fair_scores = {(m, i): int(rng.integers(-2, 3)) for m in ("m1", "m2") for i in range(30)}
    fair = _records("fair", 30, lambda m, i, o: fair_scores[(m, i)])
    built = build(always_a + fair, judges=["lazy", "fair"], candidates=["m1", "m2"],
                  options=IntervalOptions(bootstrap_samples=100))
    flags = [f for f in built.summary["flags"] if f["kind"] == "degenerate judge"]
    # the lazy judge, and perhaps the ensemble it drags along; never the fair judge
    assert flags[0]["judge"] == "lazy" and "fair" not in {f["judge"] for f in flags}
    assert "first (Assistant A)" in flags[0]["message"] and "none of 60 items" in flags[0]["message"]
    lazy = next(r for r in built.summary["results"] if r["level"] == "overall")
    assert lazy["win_rate"] == 50.0  # the figure looks fine; only the flag says why it is not
    ties = _records("tie", 30, lambda m, i, o: 0)
    b2 = build(ties, judges=["tie"], candidates=["m1", "m2"], options=IntervalOptions(bootstrap_samples=50))
    assert any("tie" in f["message"] for f in b2.summary["flags"])


def test_degenerate_needs_enough_judgments():
    few = behaviour_rows({"j": _records("j", 2, lambda m, i, o: -1 if o == 0 else 1, models=("m1",))}, ["m1"])
    assert degenerate_flags(few) == []


def test_small_rows_are_flagged_below_the_threshold_only():
    recs = _records("a", 24, lambda m, i, o: 1 if i % 3 else -1)  # 24 items, categories of 6
    built = build(recs, judges=["a"], candidates=["m1", "m2"],
                  options=IntervalOptions(bootstrap_samples=50, min_items_for_interval=20))
    rows = {(r["model"], r["level"], r["group"]): r for r in built.summary["results"]}
    assert rows[("m1", "overall", "overall")]["items"] == 24 and not rows[("m1", "overall", "overall")]["small_n"]
    assert rows[("m1", "category", "C0")]["items"] == 6 and rows[("m1", "category", "C0")]["small_n"]
    assert [d["n"] for d in built.display if d["category"] == "Overall"] == ["24", "24"]
    assert {d["n"] for d in built.display if d["category"] != "Overall"} == {"6!"}
    assert any(f["kind"] == "too few items" and f["rows"] == 8 and f["comparisons"] == 0
               for f in built.summary["flags"])
    assert [c["small_n"] for c in built.summary["comparisons"]] == [False] * 3  # 24 items each
    loose = build(recs, judges=["a"], candidates=["m1", "m2"],
                  options=IntervalOptions(bootstrap_samples=50, min_items_for_interval=5))
    assert not any(f["kind"] == "too few items" for f in loose.summary["flags"])
    assert "n!: under 5 items" in interval_line(loose.summary)
    # the legend names the figures that need more items than the option, where the run has them
    assert "(LC 50, SC 100)" in interval_line({**loose.summary, "controlled": [{"model": "m1"}]})
    assert "(LC 50, SC 100, human agreement 100)" in interval_line(
        {**loose.summary, "controlled": [{}], "human_agreement": [{}]})
    assert "(LC 120, SC 120)" in interval_line(
        {**loose.summary, "intervals": {**loose.summary["intervals"], "min_items_for_interval": 120},
         "controlled": [{}]})
    strict = build(recs, judges=["a"], candidates=["m1", "m2"],
                   options=IntervalOptions(bootstrap_samples=50, min_items_for_interval=30))
    assert all(c["small_n"] for c in strict.summary["comparisons"])
    assert any(f.get("comparisons") == 3 for f in strict.summary["flags"])


def test_behaviour_rates_carry_wilson_intervals():
    recs = _records("a", 21, lambda m, i, o: (1 if i % 3 else -1) * (1 if o == 0 else -1) if i % 5 else 0)
    built = build(recs, judges=["a"], candidates=["m1", "m2"], options=IntervalOptions(bootstrap_samples=50))
    for b in built.summary["judge_behaviour"]:
        k = b["first_slot_wins"]
        n = k + b["second_slot_wins"]
        assert (b["first_slot_preference_ci_low"], b["first_slot_preference_ci_high"]) == wilson(k, n)
        assert b["swap_consistency_n"] == b["items_both_orders"]
        assert b["tie_rate_ci_low"] <= b["tie_rate"] <= b["tie_rate_ci_high"]


def test_self_preference():
    assert model_family("openai/gpt-4o") == model_family("gpt-4o-mini") == "openai"
    assert model_family("claude-3-5-sonnet-20241022") == model_family("anthropic/claude-opus-4") == "anthropic"
    assert model_family("Qwen/Qwen2-VL-7B-Instruct") == model_family("qwen2.5-vl:7b") == "qwen"
    assert model_family("gemini-2.0-flash") == "google" and model_family("") is None
    flags = self_preference_flags({"judge": "gpt-4o-2024-08-06", "j2": "claude-3-5-sonnet"},
                                  {"mini": "openai/gpt-4o-mini", "qwen": "Qwen2-VL-72B", "opus": "claude-opus-4"})
    assert {(f["judge"], f["model"]) for f in flags} == {("judge", "mini"), ("j2", "opus")}
    assert self_preference_flags({"j": "gemini-1.5-pro"}, {"c": "gpt-4o"}) == []


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.sampled_from([1, 2]), st.booleans())
def test_edge_cases_are_nan_free(n, cands, ties):
    models = ("m1", "m2")[:cands]
    recs = _records("a", n, (lambda m, i, o: 0) if ties else (lambda m, i, o: 1 if (i + o) % 2 else -1), models)
    recs += _records("b", n, lambda m, i, o: 0, models)
    built = build(recs, judges=["a", "b"], candidates=list(models), options=IntervalOptions(bootstrap_samples=30))
    s = built.summary

    def finite(v):
        if isinstance(v, float):
            assert math.isfinite(v)
        elif isinstance(v, dict):
            for x in v.values():
                finite(x)
        elif isinstance(v, list):
            for x in v:
                finite(x)
    finite(s)
    for c in s["comparisons"]:
        assert c["excludes_zero_holm"] in (None, True, False)


def test_the_runner_adjusts_comparisons_a_benchmark_left_raw():
    from types import SimpleNamespace

    from judgekit.runner import _add_holm
    rows = [{"p_value": 0.01, "excludes_zero": True}, {"p_value": 0.02, "excludes_zero": True}]
    summary = {"comparisons": rows, "intervals": {"method": "percentile bootstrap over items", "level": 0.95}}
    _add_holm(summary, SimpleNamespace(holm_adjust=True))
    assert [r["p_holm"] for r in rows] == pytest.approx([0.02, 0.02])
    assert summary["intervals"]["multiple_comparisons"]["family"] == 2
    done = [{"p_value": 0.01, "excludes_zero": True, "p_holm": 0.5, "excludes_zero_holm": False}]
    _add_holm({"comparisons": done, "intervals": {"method": "x", "level": 0.95}}, SimpleNamespace())
    assert done[0]["p_holm"] == 0.5  # a benchmark's own adjustment is left alone


def test_the_runner_flags_a_judge_of_the_baselines_family():
    from types import SimpleNamespace

    from judgekit.runner import _add_self_preference
    models = {"gpt": SimpleNamespace(provider="openai", model="gpt-4o-2024-08-06"),
              "qwen": SimpleNamespace(provider="openai", model="qwen2.5-vl-72b"),
              "sim": SimpleNamespace(provider="sim", model="sim-judge")}
    spec = SimpleNamespace(models=models, roles=SimpleNamespace(judges=["gpt", "sim"], judge="gpt", candidates=["qwen"]))
    summary = {"baseline_model": "gpt-4o"}
    _add_self_preference(summary, spec)
    assert [(f["judge"], f["model"]) for f in summary["flags"]] == [("gpt", "baseline")]
    quiet = {}
    _add_self_preference(quiet, spec)
    assert "flags" not in quiet


@pytest.mark.parametrize("judge, candidate, family", [
    ("gpt-4o", "gpt-4o-mini", "openai"), ("openai/gpt-4o-2024-08-06", "gpt-4.1-nano", "openai"),
    ("o3-mini", "chatgpt-4o-latest", "openai"),
    ("claude-3-5-sonnet-20241022", "claude-3-haiku-20240307", "anthropic"),
    ("claude-opus-4-1", "anthropic/claude-sonnet-4", "anthropic"),
    ("gemini-1.5-pro", "gemini-2.0-flash", "google"), ("models/gemini-2.5-pro", "google/gemma-3-27b-it", "google"),
    ("Qwen/Qwen2.5-VL-72B-Instruct", "/models/Qwen2-VL-7B-Instruct/", "qwen"),  # a local folder, trailing /
])
def test_self_preference_for_real_model_names(judge, candidate, family):
    (flag,) = self_preference_flags({"j": judge}, {"c": candidate})
    assert flag["family"] == family and flag["judge"] == "j" and flag["model"] == "c"


@pytest.mark.parametrize("judge", ["gpt-4o", "claude-3-5-sonnet-20241022", "gemini-1.5-pro"])
@pytest.mark.parametrize("candidate", ["/models/my-vlm", "/data/ckpt/finetune-step-500/", "gemini-1.5-pro-local"])
def test_no_self_preference_across_families_or_for_a_local_model_of_no_family(judge, candidate):
    same = model_family(judge) == "google" and candidate.startswith("gemini")
    assert bool(self_preference_flags({"j": judge}, {"c": candidate})) == same


def _spec(runner: str, sets: list[str]):
    from judgekit.config import load_spec
    return load_spec(runner, sets)


def test_self_preference_through_the_generic_pairwise_and_rubric_benchmarks():
    from judgekit.runner import _add_self_preference
    local = 'models.sim-strong={provider="local", model="/models/my-vlm/", local={task="chat"}}'
    # pairwise: a Claude judge, a Claude baseline (its answers are what the candidates are judged
    # against), a local candidate of no family
    spec = _spec("runners/pairwise_quickstart.toml", [
        'models.judge={provider="anthropic", model="claude-3-5-sonnet-20241022"}',
        'models.baseline={provider="anthropic", model="claude-3-haiku-20240307"}', local])
    summary: dict = {}
    _add_self_preference(summary, spec)
    assert [(f["judge"], f["model"], f["family"]) for f in summary["flags"]] == [("judge", "baseline", "anthropic")]
    # rubric: a panel of gpt-4o (an Azure deployment serving it) and Gemini; candidates gpt-4o-mini and local
    spec = _spec("runners/rubric_quickstart.toml", [
        'models.judge={provider="azure", model="eval-deployment", serves="gpt-4o", base_url="https://x.example"}',
        'models.judge-2={provider="gemini", model="gemini-2.0-flash"}',
        'models.sim-weak={provider="openai", model="gpt-4o-mini"}', local])
    summary = {}
    _add_self_preference(summary, spec)
    assert [(f["judge"], f["model"], f["family"]) for f in summary["flags"]] == [("judge", "sim-weak", "openai")]
    # no real judge model (the simulator): nothing to say
    summary = {}
    _add_self_preference(summary, _spec("runners/rubric_quickstart.toml", [local]))
    assert "flags" not in summary


def test_adjust_summary_once_and_the_printed_holm_column():
    from judgekit.judging.multiplicity import adjust_summary, excludes_cell, holm
    rows = [{"p_value": p, "excludes_zero": p < 0.05} for p in (0.001, 0.02, 0.04, 0.3)]
    summary = {"comparisons": rows, "intervals": {"method": "percentile bootstrap over items", "level": 0.95}}
    adjust_summary(summary)
    # Holm by hand: sorted p times (m - rank + 1), running max, capped at 1
    assert [r["p_holm"] for r in rows] == pytest.approx([0.004, 0.06, 0.08, 0.3])
    assert [r["p_holm"] for r in rows] == pytest.approx(holm([r["p_value"] for r in rows]))
    assert [excludes_cell(r) for r in rows] == [{"excludes 0 raw/Holm": v} for v in ("yes/yes", "yes/no", "yes/no",
                                                                                    "no/no")]
    assert summary["intervals"]["multiple_comparisons"]["family"] == 4
    rows[0]["p_holm"] = 0.5  # adjusted already: left alone
    adjust_summary(summary)
    assert rows[0]["p_holm"] == 0.5
    plain = [{"p_value": 0.01, "excludes_zero": True}]
    adjust_summary({"comparisons": plain, "intervals": {"method": None}})  # no intervals: nothing
    assert "p_holm" not in plain[0] and excludes_cell(plain[0], "interval excludes 0") == {"interval excludes 0": "yes"}
    off = [{"p_value": 0.01, "excludes_zero": True}]
    adjust_summary({"comparisons": off, "intervals": {"method": "m", "level": 0.95}}, enabled=False)
    assert excludes_cell(off[0]) == {"excludes 0": "yes"}


def test_alpha_spread_between_repeats_is_each_repeats_own_alpha():
    from judgekit.judging.honest import alpha_repeat_spread
    rng = np.random.default_rng(8)
    judges = ["j1", "j2", "j3"]
    ratings = {}
    for rep in range(3):  # each repeat its own panel: units (candidate, item, order, repeat)
        for (g, i, o), r in _panel(rng).items():
            ratings[(g, i, o, rep)] = r
    got = alpha_repeat_spread(ratings, judges, "interval", ["a", "b", "c"])
    for g in "abc":
        per = [_pkg(ratings, judges, "interval", [k for k in ratings if k[0] == g and k[3] == rep]) for rep in range(3)]
        assert got[g]["alpha_repeat_sd"] == pytest.approx(float(np.std(per, ddof=1)), abs=1e-12)
        assert got[g]["alpha_repeat_range"] == pytest.approx(max(per) - min(per), abs=1e-12)
    assert got["all"]["alpha_repeat_sd"] > 0
    one = {k: v for k, v in ratings.items() if k[3] == 0}
    assert alpha_repeat_spread(one, judges, "interval", ["a", "b", "c"]) == {}
