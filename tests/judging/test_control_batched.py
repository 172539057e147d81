"""The batched and fast paths of the controlled figures against their one-at-a-time forms:
every candidate's LC win rate in one call, several L1 fits of padded data sets at once, the
merging of rows by one integer sort, the Bradley-Terry grid evaluated a few resamples at a time,
and the L1 objective's log(1 + exp)."""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.judging import logistic
from judgekit.judging.control import style_controlled
from judgekit.judging.l1_logistic import _softplus, fit_l1_logistic
from judgekit.judging.length_control import lc_win_rate, lc_win_rates
from judgekit.judging.logistic import _aggregate, _unique_rows
from judgekit.judging.uncertainty import IntervalOptions


def _judged(rng, n_items, shift, orders=2):
    items = np.repeat(np.arange(n_items), orders)
    d = np.repeat(rng.normal(shift, 300.0, n_items), orders)
    pref = rng.choice([0.0, 0.5, 1.0], items.size, p=[0.35, 0.15, 0.5])
    return pref.tolist(), d.tolist(), items.tolist()


def test_lc_win_rates_is_each_candidates_lc_win_rate():
    rng = np.random.default_rng(4)
    judged = [_judged(rng, n, s) for n, s in ((40, 50.0), (25, -80.0), (3, 0.0), (60, 300.0))]
    judged.append(([1.0, 0.0, 0.5], [7.0, 7.0, 7.0], ["x", "y", "z"]))  # no length difference: one coefficient
    judged.append(([], [], []))
    opts = IntervalOptions(bootstrap_samples=50, bootstrap_seed=3)
    keys = [f"k{i}" for i in range(len(judged))]
    together = lc_win_rates(judged, opts, keys)
    for one, args, key in zip(together, judged, keys):
        assert one == lc_win_rate(*args, opts, key=key)



def test_lc_win_rates_sharing_one_key_is_each_candidates_own_draw():
    # candidates given one key share its draw (counted once, refitted for each); each must get what
    # a call for it alone with that key gives, whatever the others' items: the same items, the same
    # number in another order, fewer items, none
    rng = np.random.default_rng(8)
    judged = [_judged(rng, 40, s) for s in (50.0, -80.0, 200.0)]
    pref, d, items = _judged(rng, 40, 10.0)
    judged.append((pref, d, [39 - i for i in items]))  # the same items, first seen in reverse order
    judged.append(_judged(rng, 33, -20.0))  # fewer items: its own draw of the key
    judged.append(([], [], []))
    judged.append(_judged(rng, 40, 120.0))  # after another number of items: the first draw again
    opts = IntervalOptions(bootstrap_samples=300, bootstrap_seed=2)
    together = lc_win_rates(judged, opts, ["lc:j"] * len(judged))
    for one, args in zip(together, judged):
        assert one == lc_win_rate(*args, opts, key="lc:j")
    ends = [(r["lc_win_rate_ci_low"], r["lc_win_rate_ci_high"]) for r in together if r["lc_n"]]
    assert len(set(ends)) == len(ends)


def test_lc_at_a_given_c_is_the_single_fit_at_that_c():
    rng = np.random.default_rng(5)
    judged = [_judged(rng, n, s) for n, s in ((30, 20.0), (45, -60.0), (12, 150.0))]
    judged.append(([1.0, 0.0, 1.0, 1.0], [3.0, 3.0, 3.0, 3.0], [0, 0, 1, 1]))
    cs = [0.36, 21.5, 1e-4, 2.78]
    got = lc_win_rates(judged, cs=cs)
    for row, (pref, d, items), C in zip(got, judged, cs):
        y, d = np.asarray(pref), np.asarray(d)
        sd = np.std(d, ddof=1)
        X = np.column_stack([np.ones_like(d), np.tanh(d / sd)]) if sd > 0 else np.ones((d.size, 1))
        beta = fit_l1_logistic(X, y, np.ones((1, y.size)), C)[0]
        assert row["lc_c"] == C
        assert row["lc_win_rate"] == pytest.approx(100.0 / (1.0 + np.exp(-beta[0])), rel=1e-12, abs=1e-12)


def test_l1_fits_of_padded_data_sets_are_each_sets_own_fit():
    rng = np.random.default_rng(6)
    sets = []
    for n in (20, 35, 8):
        X = np.column_stack([np.ones(n), np.tanh(rng.normal(0.0, 1.0, n))])
        sets.append((X, rng.choice([0.0, 0.5, 1.0], n), rng.integers(1, 4, n).astype(float)))
    rows = max(s[0].shape[0] for s in sets)
    X, y, w = np.zeros((3, rows, 2)), np.full((3, rows), 0.5), np.zeros((3, rows))
    for k, (Xk, yk, wk) in enumerate(sets):
        X[k, :yk.size], y[k, :yk.size], w[k, :yk.size] = Xk, yk, wk
    C = np.array([0.05, 3.0, 500.0, 0.6, 0.02, 1e-4])
    of = np.array([0, 1, 2, 2, 0, 1])
    got = fit_l1_logistic(X, y, w[of], C, of=of)
    for b in range(of.size):
        Xk, yk, wk = sets[of[b]]
        want = fit_l1_logistic(Xk, yk, wk[None, :], C[b])[0]
        assert got[b] == pytest.approx(want, rel=1e-10, abs=1e-12)


def test_aggregate_by_integer_keys_is_the_row_sort():
    rng = np.random.default_rng(7)
    n, groups = 300, 3
    group = rng.integers(0, groups, n)
    item = rng.integers(0, 40, n)
    feature = np.tanh((group * 100 + item) / 50.0)  # one design row per (group, item): the fast path
    for X_rest in (feature[:, None], np.column_stack([feature, rng.normal(size=n)])):  # the other: the row sort
        onehot = np.eye(groups)[group]
        X = np.column_stack([onehot, X_rest])
        y, w = rng.choice([0.0, 0.5, 1.0], n), rng.integers(1, 4, n).astype(float)
        got = _aggregate(X, y, w, item, groups)
        keys = np.column_stack([group[:, None].astype(float), item[:, None].astype(float), X_rest])
        first, inverse = _unique_rows(keys)
        wsum = np.bincount(inverse, weights=w)
        want = (X[first], np.bincount(inverse, weights=w * y) / wsum, wsum, item[first])
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
        by_group = _aggregate(X_rest, y, w, item, group=group)  # each row's group given, X without it
        assert np.array_equal(by_group[0], X_rest[first]) and np.array_equal(by_group[4], group[first])


def test_bt_grid_a_few_resamples_at_a_time_is_the_whole_grid(monkeypatch):
    rng = np.random.default_rng(8)
    records, styles = [], {}
    for k, c in enumerate("abcd"):
        for i in range(40):
            cand = [int(rng.integers(80, 1500)), *map(int, rng.integers(0, 6, 3))]
            ref = [int(rng.integers(80, 1500)), *map(int, rng.integers(0, 6, 3))]
            styles[(c, str(i))] = {"candidate": cand, "reference": ref}
            for order in (0, 1):
                score = int(np.clip(np.round(0.3 * k - 0.4 + rng.normal(0, 1.0)), -2, 2))
                records.append({"model": c, "index": str(i), "kind": "pairwise", "order": order, "score": score})
    opts = IntervalOptions(bootstrap_samples=150)
    small = style_controlled(records, list("abcd"), opts, "k", styles=styles)
    monkeypatch.setattr(logistic, "GRID_CHUNK", 10_000)
    whole = style_controlled(records, list("abcd"), opts, "k", styles=styles)
    assert small["theta"] == whole["theta"]
    assert np.allclose(small["boot"], whole["boot"], rtol=1e-9, atol=0.0)


def test_softplus_is_logaddexp():
    x = np.concatenate([np.random.default_rng(9).normal(0.0, 20.0, 5000), [0.0, -0.0, 800.0, -800.0, 1e-300]])
    assert np.allclose(_softplus(x), np.logaddexp(0.0, x), rtol=4e-16, atol=0.0)


def test_spread_of_a_list_by_masks_is_the_spread_of_each_repeats_records():
    """A list's repeats are read through masks over its shared columns; any other iterable's as
    lists of records: the same figures."""
    from judgekit.judging.control import controlled_spread

    rng = np.random.default_rng(10)
    records, styles = [], {}
    for c in "ab":
        for i in range(30):
            length = int(rng.integers(80, 900))
            styles[(c, str(i))] = {"candidate": [length, 1, 2, 0], "reference": [400, 0, 1, 1]}
            for rep in range(3):
                for order in (0, 1):
                    records.append({"model": c, "index": str(i), "kind": "pairwise", "order": order, "repeat": rep,
                                    "score": int(rng.integers(-2, 3)), "length_diff": length - 400})
    opts = IntervalOptions(bootstrap_samples=0)
    assert controlled_spread(records, "j", ["a", "b"], opts, styles, 3) == \
        controlled_spread(tuple(records), "j", ["a", "b"], opts, styles, 3)
