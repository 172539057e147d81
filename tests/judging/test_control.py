"""Length- and style-controlled figures and Bradley-Terry ratings (judgekit.judging.control).

Each figure is checked against an independent computation written here, in this file's own
words, the way its authors compute it:

* AlpacaEval 2's ``get_length_controlled_winrate``: every annotation twice (label 1 weighted by
  the preference, label 0 by one minus it), the design ``[1, tanh(delta_len / sd(delta_len))]``
  with delta_len = baseline length - model length, a logistic fit without intercept, then the mean
  predicted probability with the length feature set to 0;
* Arena-Hard-Auto v2's ``print_leaderboard_with_style_features``: battles exploded (a strong
  verdict three rows), a one-hot of +1 for the model and -1 for the baseline over all models and
  the baseline, four style features standardised over the battles, the BT log-loss minimised
  over every coefficient, the score sigmoid(theta_model - theta_baseline);

both minimised here by scipy (BFGS), not by the module's Newton solver.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from scipy.optimize import minimize

from judgekit.cli.ui import _fit_tables
from judgekit.judging.control import (ELO_BASE, ELO_SCALE, answer_style, controlled_display, controlled_rows,
                                      controlled_summary, controlled_table, fit_logistic, lc_win_rate,
                                      style_controlled, LC_NOT_IDENTIFIED)
from judgekit.judging import control, logistic
from judgekit.judging.l1_logistic import fit_l1_logistic
from judgekit.judging.uncertainty import FIGURE_MIN_ITEMS, IntervalOptions, min_items_for

NO_CI = IntervalOptions(bootstrap_samples=0)


def _data(seed: int = 3, n_items: int = 60, candidates=("a", "b", "c")):
    """Records (both orders) of candidates against one reference, and each (candidate, item)'s style."""
    rng = np.random.default_rng(seed)
    records, styles = [], {}
    for k, c in enumerate(candidates):
        for i in range(n_items):
            cand = [int(rng.integers(80, 1500)), int(rng.integers(0, 4)), int(rng.integers(0, 9)),
                    int(rng.integers(0, 5))]
            ref = [int(rng.integers(80, 1500)), int(rng.integers(0, 4)), int(rng.integers(0, 9)),
                   int(rng.integers(0, 5))]
            styles[(c, str(i))] = {"candidate": cand, "reference": ref}
            for order in (0, 1):
                z = 0.4 * k - 0.3 + 0.0015 * (cand[0] - ref[0]) + 0.3 * (cand[2] - ref[2]) / 8 + rng.normal(0, 0.9)
                score = int(np.clip(np.round(z), -2, 2))
                records.append({"model": c, "index": str(i), "kind": "pairwise", "order": order, "score": score,
                                "length_diff": cand[0] - ref[0]})
    return records, styles


# --------------------------------------------------------------------------- AlpacaEval transcription
def _alpaca_lc(preference, len_candidate, len_baseline) -> float:
    pref = np.asarray(preference, float)
    delta = np.asarray(len_baseline, float) - np.asarray(len_candidate, float)  # output_1 - output_2
    feature = np.tanh(delta / np.std(delta, ddof=1))  # pandas' std
    X = np.column_stack([np.ones_like(feature), feature])
    Xd = np.vstack([X, X])  # label 1 weighted by the preference, label 0 by its complement
    yd = np.r_[np.ones(len(pref)), np.zeros(len(pref))]
    wd = np.r_[pref, 1.0 - pref]

    def loss(b):
        z = Xd @ b
        return float(np.sum(wd * (np.logaddexp(0.0, z) - yd * z)))

    def grad(b):
        p = 1.0 / (1.0 + np.exp(-(Xd @ b)))
        return Xd.T @ (wd * (p - yd))

    b = minimize(loss, np.zeros(2), jac=grad, method="BFGS", options={"gtol": 1e-11}).x
    test = np.column_stack([np.ones_like(feature), np.zeros_like(feature)])  # no length difference
    return float(np.mean(1.0 / (1.0 + np.exp(-(test @ b)))) * 100.0)


def test_lc_matches_alpaca_eval_transcription():
    records, styles = _data()
    for c in ("a", "b", "c"):
        mine = [r for r in records if r["model"] == c]
        pref = [1.0 if r["score"] > 0 else 0.5 if r["score"] == 0 else 0.0 for r in mine]
        lc = lc_win_rate(pref, [r["length_diff"] for r in mine], penalised=False)["lc_win_rate"]
        cand = [styles[(c, r["index"])]["candidate"][0] for r in mine]
        base = [styles[(c, r["index"])]["reference"][0] for r in mine]
        assert lc == pytest.approx(_alpaca_lc(pref, cand, base), abs=1e-6)


def _l1_fit(X, y, w, C):
    """AlpacaEval's liblinear objective |b|_1 + C sum w * softlogloss, minimised by scipy over the
    positive and negative parts of b (a smooth problem with bounds)."""
    p = X.shape[1]

    def f(v):
        b = v[:p] - v[p:]
        z = X @ b
        return float(v.sum() + C * np.sum(w * (np.logaddexp(0.0, z) - y * z)))

    def g(v):
        b = v[:p] - v[p:]
        gl = C * X.T @ (w * (1.0 / (1.0 + np.exp(-(X @ b))) - y))
        return np.r_[1.0 + gl, 1.0 - gl]

    v = minimize(f, np.zeros(2 * p), jac=g, method="L-BFGS-B", bounds=[(0, None)] * (2 * p),
                 options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000}).x
    return v[:p] - v[p:]


def _alpaca_lc_cv(preference, delta, item):
    """AlpacaEval 2's default: the L1 strength chosen from sklearn's grid 1e-4..1e4 by 5-fold
    cross-validation (held-out mean soft log loss, folds grouped), then refitted on everything."""
    pref, delta = np.asarray(preference, float), np.asarray(delta, float)
    X = np.column_stack([np.ones_like(delta), np.tanh(delta / np.std(delta, ddof=1))])
    order = {i: n for n, i in enumerate(dict.fromkeys(item))}
    fold = np.array([order[i] % 5 for i in item])
    best, best_score = None, -np.inf
    for C in np.logspace(-4, 4, 10):
        score = 0.0
        for f in range(5):
            tr = fold != f
            b = _l1_fit(X[tr], pref[tr], np.ones(tr.sum()), C)
            q = np.clip(1.0 / (1.0 + np.exp(-(X[~tr] @ b))), 1e-15, 1 - 1e-15)
            score -= np.mean(-(pref[~tr] * np.log(q) + (1 - pref[~tr]) * np.log(1 - q)))
        if score > best_score + 1e-12:
            best, best_score = C, score
    b = _l1_fit(X, pref, np.ones(pref.size), best)
    return 100.0 / (1.0 + math.exp(-b[0])), best


def test_lc_matches_alpaca_eval_penalised_cv_transcription():
    records, _ = _data(n_items=40)
    for c in ("a", "b", "c"):
        mine = [r for r in records if r["model"] == c]
        pref = [1.0 if r["score"] > 0 else 0.5 if r["score"] == 0 else 0.0 for r in mine]
        out = lc_win_rate(pref, [r["length_diff"] for r in mine], [r["index"] for r in mine])
        want, C = _alpaca_lc_cv(pref, [r["length_diff"] for r in mine], [r["index"] for r in mine])
        assert out["lc_c"] == pytest.approx(C)
        assert out["lc_win_rate"] == pytest.approx(want, abs=1e-4)
        assert out["lc_identified"] and out["lc_note"] is None


@pytest.mark.parametrize("C", [1e-4, 0.02, 0.6, 21.5, 1e4])
def test_l1_solver_matches_scipy(C):
    rng = np.random.default_rng(7)
    x = np.tanh(rng.normal(0.3, 1.0, 50))
    X = np.column_stack([np.ones(50), x])
    y = rng.choice([0.0, 0.5, 1.0], 50)
    w = rng.integers(1, 3, 50).astype(float)
    got = fit_l1_logistic(X, y, w[None, :], C)[0]
    assert got == pytest.approx(_l1_fit(X, y, w, C), abs=1e-5)
    one = fit_l1_logistic(X[:, :1], y, w[None, :], C)[0]
    assert one == pytest.approx(_l1_fit(X[:, :1], y, w, C), abs=1e-5)


def test_lc_not_identified_when_every_answer_is_longer():
    rng = np.random.default_rng(2)
    d = rng.integers(10, 900, 24).astype(float)  # every candidate answer longer
    y = (rng.random(24) < 0.8).astype(float)
    items = [str(i // 2) for i in range(24)]
    out = lc_win_rate(y, d, items, IntervalOptions(bootstrap_samples=50))
    assert out["lc_identified"] is False and "longer" in out["lc_note"]
    row = {"judge": "j", "model": "m", **out, "sc_score": None, "sc_score_ci_low": None, "sc_score_ci_high": None,
           "bt_rating": None, "bt_rating_ci_low": None, "bt_rating_ci_high": None, "rank": None}
    assert controlled_display(row)["LC win %"] == "n/i"
    title, _ = controlled_table({"results": [row]}, False)
    assert LC_NOT_IDENTIFIED in title
    d[3] = -5.0  # one shorter answer: identified
    assert lc_win_rate(y, d, items)["lc_identified"] is True


def test_lc_removes_a_pure_length_effect():
    """A judge that prefers the longer answer and nothing else: the raw win rate follows length,
    the LC win rate sits near 50."""
    rng = np.random.default_rng(0)
    d = rng.normal(300, 400, 4000)  # the candidate is usually longer
    p = 1.0 / (1.0 + np.exp(-2.0 * np.tanh(d / d.std(ddof=1))))
    y = (rng.random(d.size) < p).astype(float)
    out = lc_win_rate(y, d)
    assert y.mean() > 0.65
    assert abs(out["lc_win_rate"] - 50.0) < 4.0 and out["length_coef"] > 1.5


# --------------------------------------------------------------------------- Arena-Hard transcription
def _arena_sc(records, styles, candidates) -> dict[str, float]:
    rows = []  # (model, outcome, features) exploded
    for r in records:
        s = r["score"]
        outcome = 1.0 if s > 0 else 0.5 if s == 0 else 0.0
        rows += [(r["model"], outcome, styles[(r["model"], r["index"])])] * (3 if abs(s) == 2 else 1)
    models = sorted(set(candidates) | {"BASE"})
    X = np.zeros((len(rows), len(models)))
    F = np.zeros((len(rows), 4))
    for n, (m, _, st_) in enumerate(rows):
        X[n, models.index(m)] = 1.0
        X[n, models.index("BASE")] = -1.0
        c, b = np.array(st_["candidate"], float), np.array(st_["reference"], float)
        F[n, 0] = (c[0] - b[0]) / (c[0] + b[0])
        dc, db = c[1:] / c[0], b[1:] / b[0]
        F[n, 1:] = (dc - db) / (dc + db + 1.0)
    F = (F - F.mean(axis=0)) / F.std(axis=0, ddof=1)  # torch.std: unbiased
    A = np.hstack([X, F])
    y = np.array([o for _, o, _ in rows])

    def loss(b):
        z = A @ b
        return float(np.sum(np.logaddexp(0.0, z) - y * z))

    def grad(b):
        return A.T @ (1.0 / (1.0 + np.exp(-(A @ b))) - y)

    b = minimize(loss, np.full(A.shape[1], 0.5), jac=grad, method="BFGS", options={"gtol": 1e-10}).x
    base = b[models.index("BASE")]
    return {m: 100.0 / (1.0 + math.exp(-(b[models.index(m)] - base))) for m in candidates}


def test_style_control_matches_arena_hard_transcription():
    records, styles = _data(seed=5)
    cands = ["a", "b", "c"]
    fit = style_controlled(records, cands, styles=styles)
    expected = _arena_sc(records, styles, cands)
    for c in cands:
        assert 100.0 / (1.0 + math.exp(-fit["theta"][c])) == pytest.approx(expected[c], abs=1e-6)
    assert set(fit["coefs"]) == {"length", "headers", "lists", "bold"}


def test_bt_without_style_is_the_weighted_win_share():
    records, _ = _data(seed=7)
    fit = style_controlled(records, ["a", "b", "c"], style=False)
    for c in "abc":
        w = [(3 if abs(r["score"]) == 2 else 1, 1.0 if r["score"] > 0 else 0.5 if r["score"] == 0 else 0.0)
             for r in records if r["model"] == c]
        share = sum(a * b for a, b in w) / sum(a for a, _ in w)
        assert fit["theta"][c] == pytest.approx(math.log(share / (1 - share)), abs=1e-12)


def test_newton_solver_agrees_with_its_group_fast_path():
    rng = np.random.default_rng(2)
    g = np.sort(rng.integers(0, 4, 300))
    X = np.zeros((300, 4))
    X[np.arange(300), g] = 1.0
    S = rng.normal(size=(300, 2))
    y = (rng.random(300) < 0.6).astype(float)
    W = rng.integers(0, 3, (5, 300)).astype(float) + 0.5
    full = np.hstack([X, S])
    a = fit_logistic(full, y, W, groups=4)
    b = fit_logistic(full, y, W)
    assert np.allclose(a, b, atol=1e-9)


def test_answer_style_counts_markdown_as_arena_hard():
    text = ("# Title\n## Part\n####### not a header\n1. one\n2. two\n- a\n* b\n+ c\n"
            "**bold** and __also__ and **not\nbold**\n```\n# inside code\n- inside\n```\n")
    length, headers, lists, bold = answer_style(text)
    assert (length, headers, lists, bold) == (len(text), 2, 5, 2)
    assert answer_style("") == [0, 0, 0, 0]


# --------------------------------------------------------------------------- intervals and properties
def test_rows_with_intervals_are_reproducible_and_cover_the_estimate():
    records, styles = _data(seed=11, n_items=40)
    opts = IntervalOptions(bootstrap_samples=300, bootstrap_seed=4)
    rows = controlled_rows(records, "j", ["a", "b", "c"], opts, styles)
    again = controlled_rows(records, "j", ["a", "b", "c"], opts, styles)
    assert rows == again
    for r in rows:
        for f in ("lc_win_rate", "sc_score", "bt_rating"):
            assert r[f"{f}_ci_low"] <= r[f] <= r[f"{f}_ci_high"], (f, r)
        assert 1 <= r["rank_ci_low"] <= r["rank"] <= r["rank_ci_high"] <= 3
    assert rows[0]["rank"] == 3  # a is the weakest by construction
    other = controlled_rows(records, "j", ["a", "b", "c"], IntervalOptions(bootstrap_samples=300, bootstrap_seed=5),
                            styles)
    assert other[0]["lc_win_rate_ci_low"] != rows[0]["lc_win_rate_ci_low"]



def test_a_candidates_lc_interval_does_not_depend_on_the_other_candidates():
    # one bootstrap key per judge: a candidate's resamples depend on the seed, the key and its number
    # of items only, so dropping or reordering the other candidates leaves its LC interval as it was
    records, styles = _data(seed=12, n_items=30, candidates=("a", "b", "c", "d"))
    records = [r for r in records if not (r["model"] == "c" and r["index"] in ("3", "17"))]  # c: fewer items
    opts = IntervalOptions(bootstrap_samples=200, bootstrap_seed=6)
    lc = ("lc_win_rate", "lc_win_rate_ci_low", "lc_win_rate_ci_high")

    def intervals(candidates):
        return {r["model"]: tuple(r[f] for f in lc) for r in controlled_rows(records, "j", candidates, opts, styles)}

    every = intervals(["a", "b", "c", "d"])
    assert len({v[1:] for v in every.values()}) == 4  # each candidate its own interval
    for fewer in (["a", "c", "d"], ["d", "c", "a"], ["b"], ["c", "b"]):
        assert intervals(fewer) == {c: every[c] for c in fewer}


def test_no_intervals_when_off():
    records, styles = _data(n_items=10)
    for r in controlled_rows(records, "j", ["a", "b", "c"], NO_CI, styles):
        assert r["lc_win_rate_ci_low"] is None and r["sc_score_ci_high"] is None and r["rank_ci_low"] is None


def _finite(v):
    return v is None or (isinstance(v, (int, float)) and math.isfinite(v))


scores = st.lists(st.tuples(st.sampled_from([-2, -1, 0, 1, 2, None]), st.integers(-500, 500),
                            st.integers(0, 3)), min_size=0, max_size=8)


@settings(max_examples=40, deadline=None)
@given(a=scores, b=scores)
def test_figures_never_nan(a, b):
    """Any verdicts (none, one, all ties, all wins, failures, one candidate with nothing): every
    figure and interval is a finite number or None."""
    records, styles = [], {}
    for c, rows in (("a", a), ("b", b)):
        for i, (s, d, md) in enumerate(rows):
            records.append({"model": c, "index": str(i), "kind": "pairwise", "order": 0, "score": s,
                            "length_diff": d})
            styles[(c, str(i))] = {"candidate": [max(100 + d, 0), md, 0, 0], "reference": [100, 0, md, 0]}
    rows = controlled_rows(records, "j", ["a", "b"], IntervalOptions(bootstrap_samples=20), styles)
    for r in rows:
        for k, v in r.items():
            if k not in ("judge", "model", "style_coefs", "lc_note", "lc_identified", "sc_note", "sc_identified"):
                assert _finite(v), (k, v, r)
        if r["lc_win_rate"] is not None:
            assert 0.0 <= r["lc_win_rate"] <= 100.0


def test_all_ties_sit_at_the_reference():
    records, styles = _data(n_items=12)
    for r in records:
        r["score"] = 0
    for r in controlled_rows(records, "j", ["a", "b", "c"], IntervalOptions(bootstrap_samples=50), styles):
        assert r["lc_win_rate"] == pytest.approx(50.0, abs=1e-9)
        assert r["sc_score"] == pytest.approx(50.0, abs=1e-9)
        assert r["bt_rating"] == pytest.approx(ELO_BASE, abs=1e-9)
        assert r["rank"] == 1  # all tied: everyone shares the best rank


def test_one_candidate_and_no_judgment():
    records, styles = _data(n_items=8, candidates=("a",))
    (row,) = controlled_rows(records, "j", ["a"], IntervalOptions(bootstrap_samples=30), styles)
    assert row["rank"] == 1 and row["rank_ci_low"] == row["rank_ci_high"] == 1
    (empty,) = controlled_rows([], "j", ["a"], IntervalOptions(bootstrap_samples=30), {})
    assert empty["lc_win_rate"] is None and empty["sc_score"] is None and empty["bt_rating"] is None
    assert empty["lc_n"] == 0


def test_elo_scale():
    assert ELO_SCALE * math.log(10.0) == pytest.approx(400.0)


def test_printed_table_fits_80_columns():
    records, styles = _data(n_items=30)
    summary = controlled_summary({"judge": records, "ensemble": records}, ["judge", "ensemble"], ["a", "b", "c"],
                                 IntervalOptions(bootstrap_samples=100), styles)
    title, rows = controlled_table(summary, True)
    cols = list(rows[0])
    cells = [[str(r[c]) for c in cols] for r in rows]
    console = Console(width=80, force_terminal=True, color_system=None, record=True)
    for t in _fit_tables(title, cols, cells, 80, left={"judge", "model"}):
        console.print(t)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text
    for r in rows:
        for c in ("LC win %", "SC %", "BT rating"):
            assert r[c].split(" [")[0] in text
    assert controlled_display(summary["results"][0])["model"] == "a"


@pytest.mark.parametrize("style", [True, False])
def test_grid_refit_matches_the_general_newton_refit(style):
    """The bootstrap's fast path (first step from per-item sums, then float32 grid steps until a
    step is below BOOT_STEP) lands on the minimiser the general Newton solver finds, resample by
    resample."""
    records, styles = _data(n_items=50)
    options = IntervalOptions(bootstrap_samples=200)
    fast = style_controlled(records, ["a", "b", "c"], options, "k", style=style, styles=styles)
    keep = control._refit_groups
    try:
        control._refit_groups = lambda X, y, w, it, n, o, k, f, G, max_iter=12: logistic._refit(
            X, y, w, it, n, o, k, f, groups=G)
        slow = style_controlled(records, ["a", "b", "c"], options, "k", style=style, styles=styles)
    finally:
        control._refit_groups = keep
    assert fast["theta"] == slow["theta"]
    assert np.abs(fast["boot"] - slow["boot"]).max() < 1e-5


@pytest.mark.parametrize("C", [1e-4, 0.02, 0.6, 21.5])
def test_l1_bootstrap_fast_path_matches_the_general_solver(C):
    """refit_from (Newton on the full fit's signs, checked against the optimality conditions, a
    failing resample refitted) gives every resample the minimiser fit_l1_logistic finds; the
    small C's zero the coefficients (all, or the length one), the others keep both."""
    from judgekit.judging.l1_logistic import refit_from
    rng = np.random.default_rng(11)
    n = 40
    X = np.column_stack([np.ones(n), np.tanh(rng.normal(0.2, 1.0, n))])
    y = rng.choice([0.0, 0.5, 1.0], n, p=[0.3, 0.2, 0.5])
    w = np.ones(n)
    item = np.arange(n)
    full = fit_l1_logistic(X, y, w[None, :], C)[0]
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(60)]).astype(float)
    fast = refit_from(X, y, w, item, C, full, [counts[:25], counts[25:]], step_tol=1e-4)
    slow = fit_l1_logistic(X, y, counts * w, C, full, tol=1e-13)
    assert np.abs(fast - slow).max() < 1e-6


def test_unpenalised_bootstrap_fast_path_matches_the_general_newton_fit():
    """refit_from with C None (the LC interval's unpenalised resamples) gives every resample the
    maximum-likelihood fit fit_logistic finds."""
    from judgekit.judging.l1_logistic import refit_from
    rng = np.random.default_rng(12)
    n = 40
    X = np.column_stack([np.ones(n), np.tanh(rng.normal(0.2, 1.0, n))])
    y = rng.choice([0.0, 0.5, 1.0], n, p=[0.3, 0.2, 0.5])
    w = np.ones(n)
    full = fit_logistic(X, y, w[None, :])[0]
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(60)]).astype(float)
    fast = refit_from(X, y, w, np.arange(n), None, full, [counts[:25], counts[25:]], step_tol=1e-4,
                      fallback=lambda W, start: fit_logistic(X, y, W, start))
    assert np.abs(fast - fit_logistic(X, y, counts * w, full, tol=1e-13)).max() < 1e-6


def _wide_design(n, rng, p_win=(0.3, 0.2, 0.5)):
    X = np.column_stack([np.ones(n), np.tanh(rng.normal(0.2, 1.0, n))])
    y = rng.choice([0.0, 0.5, 1.0], n, p=list(p_win))
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(80)]).astype(float)
    return X, y, np.ones(n), counts


def test_unpenalised_bootstrap_float32_sums_land_on_the_float64_fit(monkeypatch):
    """From F32_ROWS rows the Newton sums after the first step are taken in float32 (no float64
    pass at all here); every resample still lands within 1e-6 of the maximum-likelihood fit, as
    the float64 steps do."""
    from judgekit.judging import l1_logistic
    rng = np.random.default_rng(13)
    n = l1_logistic.F32_ROWS + 100
    X, y, w, counts = _wide_design(n, rng)
    full = fit_logistic(X, y, w[None, :])[0]
    exact_calls = []
    keep = l1_logistic._RowSums.exact
    monkeypatch.setattr(l1_logistic._RowSums, "exact", lambda self, *a: exact_calls.append(1) or keep(self, *a))
    fast = l1_logistic.refit_from(X, y, w, np.arange(n), None, full, [counts[:50], counts[50:]], step_tol=1e-4,
                                  fallback=lambda W, start: fit_logistic(X, y, W, start))
    assert not exact_calls
    slow = fit_logistic(X, y, counts * w, full, tol=1e-13)
    assert np.abs(fast - slow).max() < 1e-6


def test_a_resample_running_off_gets_the_float64_steps_throughout(monkeypatch):
    """A resample whose fit does not settle within max_iter steps (every loss left out: the
    candidate term runs off) is fitted again with float64 sums from the start, so it ends exactly
    where the float64-only refit ends it; the others' win rates agree with its to 1e-6 of them
    (these near-separated fits stop within 1e-5 of a coefficient, at log-odds near 5)."""
    from judgekit.judging import l1_logistic
    rng = np.random.default_rng(14)
    n = l1_logistic.F32_ROWS + 50
    X, y, w, _ = _wide_design(n, rng, p_win=(0.0, 0.0, 1.0))
    y[:3] = 0.0  # three losses, left out by some resamples
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(80)]).astype(float)
    counts[:5, :3] = 0.0  # these five have no loss
    full = fit_logistic(X, y, w[None, :])[0]

    def refit():
        return l1_logistic.refit_from(X, y, w, np.arange(n), None, full, [counts], step_tol=1e-4, max_iter=6,
                                      fallback=lambda W, start: fit_logistic(X, y, W, start, max_iter=60, tol=1e-10))

    fast = refit()
    monkeypatch.setattr(l1_logistic, "F32_ROWS", 10 ** 9)
    slow = refit()
    assert np.array_equal(fast[:5], slow[:5])
    rate_fast, rate_slow = 1.0 / (1.0 + np.exp(-fast[5:, 0])), 1.0 / (1.0 + np.exp(-slow[5:, 0]))
    assert np.abs(rate_fast / rate_slow - 1.0).max() < 1e-6


def test_lc_interval_is_the_unpenalised_fits_and_holds_the_point():
    """The LC win rate keeps AlpacaEval's penalised point; its interval is the unpenalised fit's
    percentile interval over the same resamples, stretched to hold the point."""
    records, _ = _data(n_items=25)
    mine = [r for r in records if r["model"] == "b"]
    args = ([float(r["score"] > 0) if r["score"] else 0.5 for r in mine], [float(r["length_diff"]) for r in mine],
            [r["index"] for r in mine])
    opts = IntervalOptions(bootstrap_samples=300, bootstrap_seed=2)
    pen = lc_win_rate(*args, opts, key="k")
    plain = lc_win_rate(*args, opts, key="k", penalised=False)
    assert pen["lc_win_rate"] == lc_win_rate(*args)["lc_win_rate"]  # the point: the penalised fit's
    assert pen["lc_win_rate_ci_low"] == pytest.approx(min(plain["lc_win_rate_ci_low"], pen["lc_win_rate"]))
    assert pen["lc_win_rate_ci_high"] == pytest.approx(max(plain["lc_win_rate_ci_high"], pen["lc_win_rate"]))
    assert pen["lc_win_rate_ci_low"] <= pen["lc_win_rate"] <= pen["lc_win_rate_ci_high"]


def test_sc_flag_reads_the_candidates_lengths_against_the_average_it_is_read_at():
    """SC is read at the battles' average style: a candidate all of whose length features lie on
    one side of it is flagged (the quickstart: one candidate always longer, the other always
    shorter); candidates all longer than the reference, by amounts around the average, are not."""
    rng = np.random.default_rng(4)

    def run(lengths):
        records, styles = [], {}
        for c, (lo, hi) in lengths.items():
            for i in range(15):
                cand = int(rng.integers(lo, hi))
                styles[(c, str(i))] = {"candidate": [cand, 0, int(rng.integers(0, 3)), 0], "reference": [300, 0, 1, 0]}
                for order in (0, 1):
                    records.append({"model": c, "index": str(i), "kind": "pairwise", "order": order,
                                    "score": int(rng.integers(-2, 3)), "length_diff": cand - 300})
        return {r["model"]: r for r in controlled_rows(records, "j", list(lengths), NO_CI, styles)}

    split = run({"long": (400, 900), "short": (50, 250)})
    assert not split["long"]["sc_identified"] and "longer" in split["long"]["sc_note"]
    assert not split["short"]["sc_identified"] and "shorter" in split["short"]["sc_note"]
    assert controlled_display(split["long"])["SC %"] == "n/i"
    assert LC_NOT_IDENTIFIED in controlled_table({"results": list(split.values())}, False)[0]
    both_longer = run({"a": (350, 900), "b": (320, 950)})
    assert all(r["sc_identified"] and r["sc_note"] is None for r in both_longer.values())
    assert all(not r["lc_identified"] for r in both_longer.values())  # LC is read at no length difference


def test_a_rating_without_a_finite_value_prints_inf():
    from judgekit.judging.control import LOGIT_CAP, rating_text
    top, bottom = ELO_BASE + ELO_SCALE * LOGIT_CAP, ELO_BASE - ELO_SCALE * LOGIT_CAP
    assert rating_text(1482.4, 1209.0, top) == "1482 [1209, inf]"
    assert rating_text(bottom, bottom, 700.0) == "-inf [-inf, 700]"
    assert rating_text(1000.0) == "1000" and rating_text(None) == "-"
    records, styles = _data(n_items=6, candidates=("a",))
    for r in records:
        r["score"] = 2  # wins every battle: no finite rating
    (row,) = controlled_rows(records, "j", ["a"], IntervalOptions(bootstrap_samples=20), styles)
    assert controlled_display(row)["BT rating"] == "inf [inf, inf]"


# --------------------------------------------------------------------------- n, small-n, repeats' spread
def test_rows_carry_their_items_and_the_small_n_flag():
    records, styles = _data(n_items=60)
    records = [r for r in records if not (r["model"] == "b" and int(r["index"]) >= 9)]  # b: 9 items
    opts = IntervalOptions(bootstrap_samples=0, min_items_for_interval=10)
    rows = {r["model"]: r for r in controlled_rows(records, "j", ["a", "b", "c"], opts)}  # no SC: LC's threshold
    assert {c: r["items"] for c, r in rows.items()} == {"a": 60, "b": 9, "c": 60}
    assert [rows[c]["small_n"] for c in "abc"] == [False, True, False]
    assert controlled_display(rows["b"])["n"] == "9!" and controlled_display(rows["a"])["n"] == "60"
    (empty,) = controlled_rows([], "j", ["a"], opts, {})
    assert empty["items"] == 0 and empty["small_n"]


def test_lc_and_sc_rows_are_flagged_below_their_own_thresholds():
    """The LC and SC intervals need more items than the others (FIGURE_MIN_ITEMS, measured by
    perf/coverage.py): a row with either figure is flagged below its threshold; the option only
    raises the thresholds."""
    lc, sc = FIGURE_MIN_ITEMS["lc_win_rate"], FIGURE_MIN_ITEMS["sc_score"]
    assert 20 < lc < sc
    records, styles = _data(n_items=sc)
    records = [r for r in records if r["model"] != "b" or int(r["index"]) < lc]  # b: exactly the LC threshold
    records = [r for r in records if r["model"] != "c" or int(r["index"]) < lc - 1]  # c: one item fewer
    opts = IntervalOptions(bootstrap_samples=0)
    with_sc = {r["model"]: r["small_n"] for r in controlled_rows(records, "j", ["a", "b", "c"], opts, styles)}
    assert with_sc == {"a": False, "b": True, "c": True}
    lc_only = {r["model"]: r["small_n"] for r in controlled_rows(records, "j", ["a", "b", "c"], opts, None)}
    assert lc_only == {"a": False, "b": False, "c": True}
    higher = IntervalOptions(bootstrap_samples=0, min_items_for_interval=sc + 1)
    assert all(r["small_n"] for r in controlled_rows(records, "j", ["a", "b", "c"], higher, styles))
    assert min_items_for(IntervalOptions(min_items_for_interval=5), ["lc_win_rate"]) == lc


def _repeated(records, k, flip_every=0):
    """Each record asked k times (``repeat`` r); with ``flip_every``, repeat r > 0 negates every
    flip_every-th verdict, so the repeats disagree."""
    out = []
    for rep in range(k):
        for n, r in enumerate(records):
            s = r["score"]
            if rep and flip_every and n % flip_every == rep % flip_every and s is not None:
                s = -s
            out.append({**r, "score": s, "repeat": rep})
    return out


def test_controlled_spread_is_the_sd_and_range_of_each_repeats_own_fit():
    records, styles = _data(seed=5, n_items=30)
    reps = _repeated(records, 3, flip_every=4)
    opts = IntervalOptions(bootstrap_samples=50)
    got = control.controlled_spread(reps, "j", ["a", "b", "c"], opts, styles, 3)
    # independently: each repeat's records alone through the point fit, then numpy's SD and range;
    # the LC win rate refitted (by scipy) at the inverse strength chosen on the pooled repeats
    pooled = {r["model"]: r["lc_c"] for r in controlled_rows(reps, "j", ["a", "b", "c"], NO_CI, styles)}
    per = [controlled_rows([r for r in reps if r["repeat"] == k], "j", ["a", "b", "c"], NO_CI, styles)
           for k in range(3)]
    assert any(per[k][i]["lc_c"] != pooled[c] for k in range(3) for i, c in enumerate("abc"))  # a choice differs
    for k in range(3):
        for i, c in enumerate("abc"):
            mine = [r for r in reps if r["repeat"] == k and r["model"] == c]
            y = np.array([1.0 if r["score"] > 0 else 0.5 if r["score"] == 0 else 0.0 for r in mine])
            d = np.array([r["length_diff"] for r in mine], dtype=float)
            X = np.column_stack([np.ones_like(d), np.tanh(d / np.std(d, ddof=1))])
            per[k][i]["lc_win_rate"] = 100.0 / (1.0 + math.exp(-_l1_fit(X, y, np.ones(y.size), pooled[c])[0]))
    for i, c in enumerate("abc"):
        for f in ("lc_win_rate", "sc_score", "bt_rating"):
            vs = np.array([per[k][i][f] for k in range(3)])
            assert got[c][f"{f}_repeat_sd"] == pytest.approx(float(np.sqrt(((vs - vs.mean()) ** 2).sum() / 2)),
                                                             abs=1e-4)
            assert got[c][f"{f}_repeat_range"] == pytest.approx(float(np.ptp(vs)), abs=1e-4)
            assert got[c][f"{f}_repeat_sd"] > 0
    # identical repeats: no spread; one repeat: nothing to measure
    same = control.controlled_spread(_repeated(records, 2), "j", ["a", "b", "c"], opts, styles, 2)
    assert all(v == pytest.approx(0.0, abs=1e-9) for per_c in same.values() for v in per_c.values())
    assert control.controlled_spread(records, "j", ["a"], opts, styles, 1) == {}


def test_controlled_spread_leaves_out_a_rating_with_no_finite_value():
    records, styles = _data(seed=2, n_items=12, candidates=("a", "b"))
    reps = _repeated(records, 2)
    for r in reps:  # a wins every battle in repeat 1: its BT rating there is held at the cap
        if r["model"] == "a" and r["repeat"] == 1:
            r["score"] = 2
    got = control.controlled_spread(reps, "j", ["a", "b"], NO_CI, styles, 2)
    assert got["a"]["bt_rating_repeat_sd"] is None and got["a"]["bt_rating_repeat_range"] is None
    assert got["b"]["bt_rating_repeat_sd"] is not None


def test_summary_with_repeats_has_the_spread_and_its_table_fits_80_columns():
    records, styles = _data(seed=5, n_items=25)
    reps = _repeated(records, 2, flip_every=3)
    opts = IntervalOptions(bootstrap_samples=40)
    summary = controlled_summary({"judge": reps, "ensemble": reps}, ["judge", "ensemble"], ["a", "b", "c"], opts,
                                 styles, repeats=2)
    assert summary["judge_repeats"] == 2
    assert all("lc_win_rate_repeat_sd" in r and "bt_rating_repeat_range" in r for r in summary["results"])
    title, rows, note = control.controlled_spread_table(summary)
    assert "2 repeats" in title and len(rows) == 6
    first = summary["results"][0]
    assert rows[0]["BT rating"] == f"{first['bt_rating_repeat_sd']:.0f} ({first['bt_rating_repeat_range']:.0f})"
    cols = list(rows[0])
    console = Console(width=80, force_terminal=True, color_system=None, record=True)
    for t in _fit_tables(title, cols, [[str(r[c]) for c in cols] for r in rows], 80, left={"judge", "model"}):
        console.print(t)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines()) and "…" not in text
    # without repeats: no spread keys, no table
    plain = controlled_summary({"judge": records}, ["judge"], ["a", "b", "c"], NO_CI, styles)
    assert "judge_repeats" not in plain and control.controlled_spread_table(plain) is None
    assert not any(k.endswith("_repeat_sd") for r in plain["results"] for k in r)


def test_averaged_verdicts_of_a_mean_ensemble_keep_their_sign():
    """A mean ensemble's averaged verdict (+0.5: one judge +1, the other 0) is a win for the LC fit
    and the BT battles, not a tie; +-1.5 is a strong one, as the ensemble's own counts say."""
    from judgekit.judging.control import _preference, _verdict

    assert [_preference(v) for v in (0.5, -0.5, 0.0, 1.5)] == [1.0, 0.0, 0.5, 1.0]
    assert [_verdict(v) for v in (0.5, 1.0, 1.5, 2.0, -0.5, -1.5, 0.0, -2)] == [1, 1, 2, 2, -1, -2, 0, -2]
