"""Bootstrap intervals of ratio-of-sums figures (judgekit.judging.intervals): against a plain-Python
reference over the same seeded draws, against closed forms (a binomial proportion, a normal mean),
reproducibility, and the edge cases (zero denominators, empty and invalid input, blocks)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging import intervals
from judgekit.judging.intervals import Interval, paired_difference, ratio_interval, shown, with_interval

PROPS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def _draws(seed: int, key: str, n: int, samples: int) -> list[list[int]]:
    """The documented stream: a SeedSequence of (seed, CRC-32 of the key), one (samples x n) matrix."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(key.encode("utf-8"))]))
    return rng.integers(0, n, size=(samples, n)).tolist()


def _quantile(sorted_values: list[float], p: float) -> float:
    """Linear interpolation between order statistics (Hyndman-Fan type 7)."""
    h = (len(sorted_values) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def _reference(num, den, *, samples, level=0.95, seed=0, key="", scale=1.0):
    """scale * sum(num)/sum(den) and its percentile interval, in plain Python over the same draws."""
    n = len(num)
    stats = []
    for row in _draws(seed, key, n, samples):
        top = sum(num[i] for i in row)
        bottom = sum(den[i] for i in row)
        if bottom > 0:
            stats.append(scale * top / bottom)
    stats.sort()
    tail = (1 - level) / 2
    return scale * sum(num) / sum(den), _quantile(stats, tail), _quantile(stats, 1 - tail)


def _close(iv: Interval, expected: tuple[float, float, float], rel: float = 1e-9) -> None:
    assert (iv.estimate, iv.low, iv.high) == pytest.approx(expected, rel=rel, abs=1e-12)


# --- against the reference computation ----------------------------------------------------------

def test_equals_a_plain_python_reference_over_the_same_draws():
    rng = np.random.default_rng(11)
    num = rng.integers(-4, 9, size=40).astype(float).tolist()  # e.g. an item's summed verdicts
    den = rng.integers(1, 3, size=40).astype(float).tolist()  # and its count of valid verdicts
    iv = ratio_interval(num, den, samples=500, seed=3, key="judge:model:all:reward", scale=50.0)
    _close(iv, _reference(num, den, samples=500, seed=3, key="judge:model:all:reward", scale=50.0))
    assert (iv.items, iv.samples, iv.level, iv.seed) == (40, 500, 0.95, 3)


def test_other_levels_use_their_tails():
    num = [float(i % 7) for i in range(30)]
    den = [1.0 + (i % 2) for i in range(30)]
    for level in (0.5, 0.8, 0.99):
        _close(ratio_interval(num, den, samples=300, level=level, key="x"),
               _reference(num, den, samples=300, level=level, key="x"))


def test_zero_denominator_items_are_drawn_and_empty_resamples_left_out():
    # item 0 had every judgment fail (0/0); resamples of only that item have no figure
    num, den = [0.0, 3.0, 1.0], [0.0, 2.0, 1.0]
    iv = ratio_interval(num, den, samples=400, key="z")
    _close(iv, _reference(num, den, samples=400, key="z"))
    assert iv.items == 3 and iv.estimate == pytest.approx(4 / 3)
    # two items, one of them 0/0: a quarter of the resamples draw it twice and are left out
    iv2 = ratio_interval([0.0, 5.0], [0.0, 2.0], samples=200, key="z2")
    assert iv2.estimate == iv2.low == iv2.high == 2.5


def test_reproducible_with_the_same_seed_and_key_and_not_otherwise():
    rng = np.random.default_rng(5)
    num = rng.random(60).tolist()
    den = [1.0] * 60
    a = ratio_interval(num, den, samples=300, seed=1, key="k")
    assert a == ratio_interval(num, den, samples=300, seed=1, key="k")
    others = [ratio_interval(num, den, samples=300, seed=2, key="k"),
              ratio_interval(num, den, samples=300, seed=1, key="k2"),
              ratio_interval(num, den, samples=300, seed=1 + 2**32, key="k"),
              ratio_interval(num, den, samples=300, seed=2**32, key="k")]
    for other in others:
        assert other.estimate == a.estimate
        assert (other.low, other.high) != (a.low, a.high), other  # seeds 2**32 apart too
    # the stream is the documented one: a later version may not silently change every interval
    assert (a.low, a.high) == pytest.approx(_reference(num, den, samples=300, seed=1, key="k")[1:], rel=1e-9)


def test_a_big_input_in_several_blocks_equals_one_block(monkeypatch):
    rng = np.random.default_rng(2)
    num = rng.integers(0, 2, size=5000).astype(float)
    den = np.ones(5000)
    assert intervals._BLOCK // 5000 < 2000  # the default splits 2,000 samples of 5,000 items into blocks
    blocks = ratio_interval(num, den, samples=2000, seed=4, key="guess")
    monkeypatch.setattr(intervals, "_BLOCK", 10**12)
    one = ratio_interval(num, den, samples=2000, seed=4, key="guess")
    assert blocks == one
    monkeypatch.setattr(intervals, "_BLOCK", 5000 * 7)  # 7 rows a block, 286 blocks, the last short
    assert ratio_interval(num, den, samples=2000, seed=4, key="guess") == one


# --- closed forms -------------------------------------------------------------------------------

def test_a_binomial_proportion_matches_wald_and_wilson():
    n, k = 2000, 600  # p = 0.3
    num = [1.0] * k + [0.0] * (n - k)
    iv = ratio_interval(num, [1.0] * n, samples=2000, seed=0, key="acc")
    p, z = k / n, 1.959963984540054
    half = z * math.sqrt(p * (1 - p) / n)
    wald = (p - half, p + half)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    w = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    wilson = (centre - w, centre + w)
    assert iv.estimate == p
    for lo, hi in (wald, wilson):
        assert abs(iv.low - lo) < 0.005 and abs(iv.high - hi) < 0.005, (iv, lo, hi)
    # and the width is the binomial one, not e.g. a standard deviation's
    assert (iv.high - iv.low) == pytest.approx(2 * half, rel=0.1)


def test_a_normal_mean_is_mean_plus_minus_1_96_sd_over_root_n():
    n, sd = 2000, 2.0
    values = np.random.default_rng(9).normal(10.0, sd, size=n)
    iv = ratio_interval(values, np.ones(n), samples=2000, seed=0, key="vfs")
    half = 1.959963984540054 * sd / math.sqrt(n)
    assert iv.estimate == pytest.approx(values.mean(), rel=1e-12)
    assert iv.low == pytest.approx(values.mean() - half, abs=0.1 * half)
    assert iv.high == pytest.approx(values.mean() + half, abs=0.1 * half)


# --- properties ---------------------------------------------------------------------------------

_items = st.lists(st.tuples(st.floats(-100, 100, allow_nan=False), st.floats(0.01, 50, allow_nan=False)),
                  min_size=5, max_size=40)


@PROPS
@given(_items, st.integers(0, 2**40))
def test_the_estimate_lies_in_its_interval(items, seed):
    iv = ratio_interval([a for a, _ in items], [b for _, b in items], samples=200, seed=seed, key="p")
    eps = 1e-12 * max(1.0, abs(iv.estimate))
    assert iv.low - eps <= iv.estimate <= iv.high + eps, (iv, items)


@PROPS
@given(_items, st.sampled_from([50.0, 100.0, 0.5, -2.0]))
def test_scale_multiplies_everything(items, scale):
    num, den = [a for a, _ in items], [b for _, b in items]
    one = ratio_interval(num, den, samples=200, key="s")
    scaled = ratio_interval(num, den, samples=200, key="s", scale=scale)
    lo, hi = sorted((scale * one.low, scale * one.high))
    assert scaled.estimate == pytest.approx(scale * one.estimate, rel=1e-9, abs=1e-9)
    assert (scaled.low, scaled.high) == pytest.approx((lo, hi), rel=1e-9, abs=1e-9)


# --- edge cases and bad input -------------------------------------------------------------------

def test_empty_input_and_no_denominator_give_no_figure():
    assert ratio_interval([], [], samples=100) == Interval(None, None, None, 0, 100, 0.95, 0)
    assert ratio_interval([0.0, 0.0], [0.0, 0.0], samples=100, seed=2) == Interval(None, None, None, 2, 100, 0.95, 2)


@pytest.mark.parametrize("num, den, match", [
    ([1.0, 2.0], [1.0], "equally long"),
    ([[1.0]], [[1.0]], "equally long"),
    ([1.0, 2.0], [1.0, -1.0], "negative"),
    ([1.0, float("nan")], [1.0, 1.0], "finite"),
    ([1.0, 1.0], [1.0, float("inf")], "finite"),
])
def test_invalid_input_raises(num, den, match):
    with pytest.raises(ValueError, match=match):
        ratio_interval(num, den, samples=10)


@pytest.mark.parametrize("kwargs, match", [({"samples": 0}, "at least 1"), ({"level": 1.0}, "between 0 and 1"),
                                           ({"level": 0.0}, "between 0 and 1"), ({"seed": -1}, "seed")])
def test_invalid_settings_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ratio_interval([1.0, 2.0], [1.0, 1.0], **{"samples": 10, **kwargs})


# --- paired differences -------------------------------------------------------------------------

def _pair_data(n=50, seed=1):
    rng = np.random.default_rng(seed)
    den = rng.integers(1, 3, size=n).astype(float)
    return (rng.integers(-2, 3, size=n) * den).tolist(), den.tolist(), \
        (rng.integers(-2, 3, size=n) * den).tolist(), den.tolist()


def test_identical_sides_differ_by_exactly_zero():
    na, da, _, _ = _pair_data()
    iv = paired_difference(na, da, na, da, samples=300, key="c")
    assert (iv.estimate, iv.low, iv.high) == (0.0, 0.0, 0.0)


def test_a_minus_b_is_minus_b_minus_a():
    na, da, nb, db = _pair_data()
    ab = paired_difference(na, da, nb, db, samples=400, seed=2, key="c")
    ba = paired_difference(nb, db, na, da, samples=400, seed=2, key="c")
    assert ab.estimate == -ba.estimate
    assert ab.low == pytest.approx(-ba.high, rel=1e-9) and ab.high == pytest.approx(-ba.low, rel=1e-9)


def test_known_cases():
    na, da, _, _ = _pair_data()
    # against a side of zeros on the same draws, the difference is A's own interval
    alone = ratio_interval(na, da, samples=300, seed=5, key="c", scale=50.0)
    vs_zero = paired_difference(na, da, [0.0] * len(na), [1.0] * len(na), samples=300, seed=5, key="c", scale=50.0)
    assert (vs_zero.estimate, vs_zero.low, vs_zero.high) == pytest.approx((alone.estimate, alone.low, alone.high),
                                                                           rel=1e-12)
    # B is A lowered by 0.5 a judgment on every item: every resample differs by exactly 0.5
    nb = [a - 0.5 * d for a, d in zip(na, da)]
    shift = paired_difference(na, da, nb, da, samples=300, key="c")
    assert (shift.estimate, shift.low, shift.high) == pytest.approx((0.5, 0.5, 0.5), rel=1e-9)


def test_paired_difference_against_a_reference_over_the_same_draws():
    na, da, nb, db = _pair_data(n=25, seed=4)
    iv = paired_difference(na, da, nb, db, samples=300, seed=1, key="d", scale=50.0)
    stats = []
    for row in _draws(1, "d", 25, 300):
        stats.append(50.0 * (sum(na[i] for i in row) / sum(da[i] for i in row)
                             - sum(nb[i] for i in row) / sum(db[i] for i in row)))
    stats.sort()
    expected = (50.0 * (sum(na) / sum(da) - sum(nb) / sum(db)), _quantile(stats, 0.025), _quantile(stats, 0.975))
    _close(iv, expected)


def test_paired_difference_needs_the_same_items():
    with pytest.raises(ValueError, match="same items"):
        paired_difference([1.0, 2.0], [1.0, 1.0], [1.0], [1.0], samples=10)
    assert paired_difference([], [], [], [], samples=10).estimate is None
    assert paired_difference([1.0], [0.0], [1.0], [1.0], samples=10).estimate is None


# --- presentation -------------------------------------------------------------------------------

def test_shown_and_with_interval():
    iv = Interval(12.345, 8.06, 16.04, 10, 100, 0.95, 0)
    assert shown(iv.estimate, iv.low, iv.high) == "12.3 [8.1, 16.0]"
    assert shown(3.0, None, None, digits=2) == "3.00"
    assert shown(None, 1.0, 2.0) == "-"
    assert with_interval({"reward": 12.35}, "reward", iv) == {"reward": 12.35, "reward_ci_low": 8.06,
                                                              "reward_ci_high": 16.04}
    assert with_interval({}, "vfs", Interval(None, None, None, 0, 10, 0.95, 0)) == {"vfs_ci_low": None,
                                                                                    "vfs_ci_high": None}


# -- the packed sums: the same floats, bit for bit ---------------------------------------------------
_WHOLE = st.one_of(st.integers(-300, 300), st.integers(-10**6, 10**6)).map(float)
_ANY = st.one_of(_WHOLE, st.floats(-1e6, 1e6, allow_nan=False), st.just(-0.0), st.just(0.0),
                 st.integers(-2**52, 2**52).map(float))


@PROPS
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.lists(_WHOLE, min_size=n, max_size=n), min_size=2, max_size=4),
    st.lists(st.lists(_ANY, min_size=n, max_size=n), min_size=1, max_size=2))), st.integers(0, 2**31))
def test_resampled_sums_are_the_gathered_sums_bit_for_bit(columns, seed):
    whole, mixed = columns
    rng = np.random.default_rng(seed)
    for cols in (whole, whole + mixed, mixed + whole):
        arrays = [np.asarray(c, dtype=float) for c in cols]
        n = arrays[0].size
        idx = rng.integers(0, n, size=(7, n))
        got = intervals._resampled_sums(arrays, idx)
        for col, sums in zip(arrays, got):
            expected = col[idx].sum(axis=1)
            assert np.array_equal(sums, expected)
            assert np.array_equal(np.signbit(sums), np.signbit(expected))


def test_verdict_sums_are_packed_and_a_fraction_or_a_negative_zero_is_not():
    reward, valid = np.array([100.0, -50.0, 0.0, 200.0]), np.array([2.0, 1.0, 0.0, 2.0])
    assert intervals._packing((reward, valid, reward, valid)) is not None
    assert intervals._packing((reward + 1 / 3, valid)) is None
    assert intervals._packing((np.array([0.0, -0.0]), valid[:2])) is None
    assert intervals._packing((np.array([2.0 ** 50, 1.0]), valid[:2])) is None  # sums near 2**53: gathered
