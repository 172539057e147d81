"""The statistics pass's batched pieces give the numbers of the plain computations they replace, bit
for bit: ranks by any sort (behaviour), rows of integers packed into one (keys), every subset's
alpha from one set of unit features (alpha), resamples counted block by block and every row group's
percentiles from one quantile call (bootstrap)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging import bootstrap as B
from judgekit.judging import columns as C
from judgekit.judging.agreement import mean_score
from judgekit.judging.alpha import matrix_grouped_alpha, subset_alphas
from judgekit.judging.behaviour import _ranks
from judgekit.judging.behaviour_table import judge_behaviour
from judgekit.judging.columns import first_order
from judgekit.judging.intervals import _draws, _percentiles, _rng
from judgekit.judging.keys import packed
from judgekit.judging.pairwise import NO_VFS, SUM_COLUMNS, ensemble_records, item_sums, summarize
from judgekit.judging.uncertainty import IntervalOptions

PROPS = settings(max_examples=80, deadline=None, derandomize=True, database=None)


def _stable_ranks(xs) -> np.ndarray:
    """Average ranks from a stable argsort (what behaviour._ranks computed before)."""
    x = np.asarray(xs, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], x.size]
    ranks = np.empty(x.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


@PROPS
@given(st.lists(st.sampled_from([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 1e300, -np.inf, np.inf, np.nan]), max_size=40))
def test_ranks_by_any_sort_are_the_stable_argsort_s(xs):
    got, want = _ranks(xs), _stable_ranks(xs)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@PROPS
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 5), st.integers(-(2 ** 40), 2 ** 40)), max_size=30),
       st.booleans())
def test_packed_rows_are_numbered_as_the_rows(rows, huge):
    keys = np.array(rows, dtype=np.int64).reshape(len(rows), 3)
    if huge and len(rows):  # spans whose product overflows: the rows come back as rows
        keys[0, 2], keys[-1, 2] = -(2 ** 62), 2 ** 62
    cols = [keys[:, c] for c in range(3)]
    got = packed(cols)
    assert got.ndim == (2 if huge and len(rows) > 1 else 1) or len(rows) <= 1
    n, first = first_order(got)
    n0, first0 = first_order(keys)
    assert np.array_equal(n, n0) and np.array_equal(first, first0)


@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
def test_every_subset_s_alpha_from_one_set_of_features(level):
    rng = np.random.default_rng(3)
    units, judges = 240, 3
    grid = rng.integers(0, 5, size=(units, judges)).astype(float)
    grid[rng.random(grid.shape) < 0.15] = np.nan
    repeat = rng.integers(0, 3, size=units)
    grid[repeat == 2] = np.minimum(grid[repeat == 2], 2.0)  # repeat 2 rates fewer values (NaN stays NaN)
    group = rng.integers(-1, 4, size=units)
    cluster = first_order(rng.integers(0, 40, size=units))[0]
    subsets = [np.flatnonzero(repeat == r) for r in range(3)] + [np.zeros(0, dtype=np.intp)]
    got = subset_alphas(grid, group, cluster, subsets, ["a", "b", "c", "d"], level)
    for sel, g in zip(subsets, got):
        _, cl = np.unique(cluster[sel], return_inverse=True)
        want = matrix_grouped_alpha(grid[sel], group[sel], cl.ravel(), ["a", "b", "c", "d"],
                                    int(cl.max()) + 1 if sel.size else 0, level, samples=0, interval_level=0.95,
                                    seed=0, key="")
        assert g == want
    assert got[0]["within"][0] is not None


def _plain_resampled(matrix: np.ndarray, options: IntervalOptions, key: str) -> np.ndarray:
    """One bincount of the whole draw, then one product (bootstrap._resampled before blocks)."""
    n = matrix.shape[0]
    blocks = []
    for idx in _draws(_rng(options.bootstrap_seed, key), n, options.bootstrap_samples):
        k = idx.shape[0]
        counts = np.bincount((idx + (np.arange(k) * n)[:, None]).ravel(), minlength=k * n).reshape(k, n)
        blocks.append(counts.astype(float) @ matrix)
    return np.concatenate(blocks)


@pytest.mark.parametrize("block, samples", [(1, 101), (7, 100), (53 * 4, 101), (53 * 9, 10), (1000, 101),
                                           (10 ** 7, 101), (1, 1)])
def test_resamples_counted_in_blocks_give_the_same_sums(monkeypatch, block, samples):
    rng = np.random.default_rng(5)
    matrix = np.column_stack([rng.normal(size=53), rng.integers(0, 3, size=53) * 50.0, rng.random(53) / 3.0,
                              rng.integers(-2, 3, size=53) * 50.0 / 3.0])
    options = IntervalOptions(bootstrap_samples=samples, bootstrap_seed=4)
    monkeypatch.setattr(B, "_COUNT_BLOCK", block)  # blocks of 2 rows (a last one of 3), 4 (a last one of 5), ...
    got, want = B._resampled(matrix, options, "k"), _plain_resampled(matrix, options, "k")
    # whole numbers add up exactly in any order; others to their last bits (BLAS's order of terms
    # may depend on the product's size)
    assert np.array_equal(got[:, 1], want[:, 1])
    scale = np.abs(matrix).sum(axis=0) * matrix.shape[0]  # no resampled sum can be larger
    assert np.all(np.abs(got - want) <= 1e-13 * scale)
    assert np.array_equal(B._resampled(matrix, options, "k", blocks=False), want)


def _one_job(matrix: np.ndarray, options: IntervalOptions, key: str):
    """Each figure's percentiles on its own (bootstrap._intervals before the shared quantile)."""
    width = len(SUM_COLUMNS)
    judges = matrix.shape[1] // width
    nums = [j * width + c for j in range(judges) for c in B._NUM]
    dens = [j * width + c for j in range(judges) for c in B._DEN]
    defined = matrix[:, dens].sum(axis=0) > 0
    if matrix.shape[0] == 0 or not defined.any():
        return [(None, None)] * len(nums)
    sums = _plain_resampled(matrix, options, key)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(sums[:, dens] > 0, sums[:, nums] / np.where(sums[:, dens] > 0, sums[:, dens], 1.0), np.nan)
    return [_percentiles(ratios[:, c], options.interval_level) if defined[c] else (None, None)
            for c in range(len(nums))]


def test_every_row_group_s_percentiles_from_one_quantile_call():
    rng = np.random.default_rng(9)
    width = len(SUM_COLUMNS)

    def matrix(n: int, judges: int = 2) -> np.ndarray:
        m = np.zeros((n, judges * width))
        for j in range(judges):
            valid = rng.integers(0, 3, size=n).astype(float)
            m[:, j * width + 0] = 50.0 * rng.integers(-2, 3, size=n) * (valid > 0)
            m[:, j * width + 1] = 100.0 * rng.integers(0, 2, size=n) * (valid > 0)
            m[:, j * width + 2] = valid
            vfs = (rng.random(n) < 0.3).astype(float)  # few VFS items: some resamples have none
            m[:, j * width + 3] = vfs * rng.random(n) * 10
            m[:, j * width + 4] = vfs * 5.0
            m[:, j * width + 5] = vfs
        return m

    jobs = [(matrix(40), "a"), (matrix(3), "b"), (np.zeros((0, 2 * width)), "c"), (matrix(25, 3), "d"),
            (np.zeros((6, 2 * width)), "e")]
    options = IntervalOptions(bootstrap_samples=200, bootstrap_seed=2)
    got = B._all_intervals(jobs, options)
    want = [_one_job(m, options, key) for m, key in jobs]
    assert got == want
    assert any(lo is not None for lo, _ in got[1]) and all(iv == (None, None) for iv in got[4])


@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal", "ratio"])
def test_the_pooled_alpha_counted_with_the_groups_is_its_own(level):
    from judgekit.judging.agreement_table import group_alphas

    rng = np.random.default_rng(11)
    for trial in range(60):
        judges, units, groups = int(rng.integers(2, 5)), int(rng.integers(1, 50)), int(rng.integers(1, 5))
        m = rng.integers(0, 5, size=(judges, units)).astype(float) + (rng.random((judges, units)).round(1)
                                                                        if trial % 3 == 0 else 0.0)
        m[rng.random(m.shape) < 0.3] = np.nan
        group = rng.integers(-1 if trial % 2 else 0, groups, size=units)  # some units of no group
        want = group_alphas(m, group, groups, level) + group_alphas(m, np.zeros(units, dtype=np.intp), 1, level)
        assert group_alphas(m, group, groups, level, pooled=True) == want


MODELS = ("m-a", "m-b", "m-c")


def _records(seed: int, judge: str) -> list[dict]:
    """A judge's pairwise and VFS judgments with the awkward cases: failures, VFS left out, failed
    candidates (no judge call), an item judged in one order only, two repeats, a record of another
    kind."""
    rng = np.random.default_rng(seed)
    out = []
    for rep in range(2):
        for m in MODELS:
            for i in range(8):
                for order in ((0,) if i == 7 else (0, 1)):
                    base = {"model": m, "index": f"i{i}", "task": f"t{i % 3}", "category": f"c{i % 2}",
                            "order": order, "repeat": rep, "judge": judge,
                            "length_diff": None if i == 6 else int(rng.integers(-300, 300))}
                    err = "candidate_failed" if rng.random() < 0.05 else None
                    score = None if rng.random() < 0.1 else int(rng.integers(-2, 3))
                    vfs = [None, NO_VFS, 3, 6.5, 8][int(rng.integers(0, 5))]
                    out.append({**base, "kind": "pairwise", "score": score, "error_kind": err})
                    out.append({**base, "kind": "vfs", "vfs": vfs, "vfs_ref": None if vfs in (None, NO_VFS) else 5,
                                "error_kind": err})
    out.append({"model": "m-a", "index": "i0", "kind": "other", "judge": judge})
    return out


def test_intervals_from_the_columns_are_the_record_walk_s():
    from judgekit.judging.bootstrap import add_intervals

    judges = {j: _records(k, j) for k, j in enumerate(("j1", "j2", "j3"))}
    ensemble = ensemble_records([r for rs in judges.values() for r in rs], pairwise_rule=mean_score,
                                score_rule=mean_score)
    everyone = {**judges, "ensemble": ensemble}
    options = IntervalOptions(bootstrap_samples=60, bootstrap_seed=3)
    got = {j: summarize(r) for j, r in everyone.items()}
    walked = {j: summarize(r) for j, r in everyone.items()}
    add_intervals(got, everyone, options, {j: item_sums(r) for j, r in everyone.items()})
    add_intervals(walked, {j: tuple(r) for j, r in reversed(everyone.items())}, options)
    assert got == walked and any(r.get("vfs_ci_low") is not None for r in got["j1"])


def test_behaviour_reads_odd_scores_and_calls_as_the_record_walk():
    recs = _records(11, "j")
    odd = [True, np.int64(1), np.float64(-0.5), float("nan"), -2, None]
    pairwise = [k for k, r in enumerate(recs) if r.get("kind") == "pairwise"]
    for k, s in zip(pairwise[::7], odd * 10):
        recs[k] = {**recs[k], "score": s, "averaged": True}
    vfs = [k for k, r in enumerate(recs) if r.get("kind") == "vfs"]
    recs[vfs[0]] = {**recs[vfs[0]], "vfs": float("nan")}  # a value, not a failure
    for variant in (recs, [r for r in recs if r.get("error_kind") != "candidate_failed"]):
        assert judge_behaviour(variant, [*MODELS, None]) == judge_behaviour(tuple(variant), [*MODELS, None])
        col = C.columns(variant)
        assert col.called.tolist() == [r.get("error_kind") != "candidate_failed" for r in variant]
    plain = [r for r in recs if type(r.get("score")) in (int, float, type(None))]
    assert judge_behaviour(plain, [*MODELS, None]) == judge_behaviour(tuple(plain), [*MODELS, None])
    assert C.columns(plain).plain_scores and not C.columns(recs).plain_scores
