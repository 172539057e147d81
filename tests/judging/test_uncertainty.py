"""The interval options every benchmark shares and the figures built from them
(judgekit.judging.uncertainty): interval() and comparisons() against the metric functions on
the same items and keys, intervals off, and the options' bounds."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from judgekit.judging.uncertainty import IntervalOptions, comparisons, interval
from judgekit.judging.intervals import paired_difference, ratio_interval

# item -> (sum of valid verdicts, count of valid verdicts) of three candidates
SUMS = {
    "strong": {f"q{i}": (float((i * 7) % 5 - 1), 2.0) for i in range(30)},
    "weak": {f"q{i}": (float((i * 3) % 5 - 3), 2.0 - (i % 4 == 0)) for i in range(30)},
    "mid": {f"q{i}": (float(i % 3 - 1), 1.0) for i in range(2, 30)},  # two items missing
}


def test_interval_is_ratio_interval_with_the_options():
    opts = IntervalOptions(bootstrap_samples=300, bootstrap_seed=4, interval_level=0.9)
    iv = interval(SUMS["strong"], opts, key="j:strong:reward", scale=50.0)
    nums, dens = zip(*(SUMS["strong"][i] for i in sorted(SUMS["strong"])))  # items in repr order
    assert iv == ratio_interval(nums, dens, samples=300, level=0.9, seed=4, key="j:strong:reward", scale=50.0)
    assert iv.estimate == pytest.approx(50.0 * sum(nums) / sum(dens))
    assert iv.low < iv.estimate < iv.high
    # another key is another stream; the estimate stays
    other = interval(SUMS["strong"], opts, key="j:strong:win", scale=50.0)
    assert other.estimate == iv.estimate and (other.low, other.high) != (iv.low, iv.high)


def test_intervals_off_and_no_items():
    assert interval(SUMS["strong"], IntervalOptions(bootstrap_samples=0), key="k") is None
    assert comparisons(SUMS, IntervalOptions(bootstrap_samples=0), "reward") == []
    empty = interval({}, IntervalOptions(bootstrap_samples=50), key="k")
    assert (empty.estimate, empty.low, empty.high, empty.items) == (None, None, None, 0)


def test_options_defaults_and_bounds():
    opts = IntervalOptions()
    assert (opts.bootstrap_samples, opts.bootstrap_seed, opts.interval_level) == (1000, 0, 0.95)
    assert (opts.min_items_for_interval, opts.holm_adjust) == (20, True)
    for bad in ({"bootstrap_samples": -1}, {"bootstrap_samples": 100_001}, {"bootstrap_seed": -1},
                {"interval_level": 0.5}, {"interval_level": 1.0}, {"bootstrap_samples": "many"}, {"nosuch": 1}):
        with pytest.raises(ValidationError):
            IntervalOptions(**bad)


def test_comparisons_every_pair_in_candidate_order_on_common_items():
    opts = IntervalOptions(bootstrap_samples=400, bootstrap_seed=1)
    rows = comparisons(SUMS, opts, "reward", scale=50.0, key="judge:", candidates=["strong", "weak", "mid"])
    assert [(r["a"], r["b"]) for r in rows] == [("strong", "weak"), ("strong", "mid"), ("weak", "mid")]
    for r in rows:
        a, b = SUMS[r["a"]], SUMS[r["b"]]
        common = sorted(i for i in a if i in b)
        iv = paired_difference([a[i][0] for i in common], [a[i][1] for i in common],
                               [b[i][0] for i in common], [b[i][1] for i in common], samples=400, seed=1,
                               key=f"judge:reward:{r['a']}-{r['b']}", scale=50.0)
        assert r == {"metric": "reward", "a": r["a"], "b": r["b"], "items": len(common), "difference": iv.estimate,
                     "ci_low": iv.low, "ci_high": iv.high, "level": 0.95,
                     "excludes_zero": iv.low > 0 or iv.high < 0, "p_value": r["p_value"]}
        # the p-value is the swap permutation test's: (1 + extreme swaps) / (400 + 1)
        assert 1.0 / 401 <= r["p_value"] <= 1.0
        assert round(r["p_value"] * 401) == pytest.approx(r["p_value"] * 401)
        assert r["difference"] == pytest.approx(50.0 * (sum(a[i][0] for i in common) / sum(a[i][1] for i in common)
                                                        - sum(b[i][0] for i in common) / sum(b[i][1] for i in common)))
    assert rows[0]["items"] == 30 and rows[1]["items"] == 28
    # strong is clearly ahead of weak on these items; excludes_zero says so
    assert rows[0]["difference"] > 0 and rows[0]["excludes_zero"] is True


def test_comparisons_order_and_unknown_candidates():
    opts = IntervalOptions(bootstrap_samples=100)
    default = comparisons(SUMS, opts, "vfs")
    assert [(r["a"], r["b"]) for r in default] == [("strong", "weak"), ("strong", "mid"), ("weak", "mid")]
    swapped = comparisons(SUMS, opts, "vfs", candidates=["weak", "nosuch", "strong"])
    assert [(r["a"], r["b"]) for r in swapped] == [("weak", "strong")]
    assert swapped[0]["difference"] == pytest.approx(-default[0]["difference"])
    # a pair with no common items has no figure, and nothing excludes zero
    rows = comparisons({"a": {"x": (1.0, 1.0)}, "b": {"y": (0.0, 1.0)}}, opts, "acc")
    assert rows[0]["items"] == 0 and rows[0]["difference"] is None and rows[0]["excludes_zero"] is False


def test_a_tie_between_identical_candidates_does_not_exclude_zero():
    rows = comparisons({"a": SUMS["strong"], "b": dict(SUMS["strong"])}, IntervalOptions(bootstrap_samples=100),
                       "reward", scale=50.0)
    assert (rows[0]["difference"], rows[0]["ci_low"], rows[0]["ci_high"], rows[0]["excludes_zero"]) == (0, 0, 0, False)


def test_the_order_items_were_collected_in_does_not_matter():
    opts = IntervalOptions(bootstrap_samples=200, bootstrap_seed=3)
    backwards = {c: dict(reversed(list(items.items()))) for c, items in SUMS.items()}
    assert list(backwards["strong"]) != list(SUMS["strong"])
    assert interval(backwards["weak"], opts, key="k") == interval(SUMS["weak"], opts, key="k")
    assert comparisons(backwards, opts, "reward", candidates=list(SUMS)) == comparisons(SUMS, opts, "reward")
    # items of any hashable kind (MMIE ids, (model, index) pairs) have a fixed order too
    mixed = {3: (1.0, 1.0), "3": (0.0, 1.0), ("a", 1): (2.0, 2.0), 10: (0.0, 0.0)}
    assert interval(mixed, opts, key="m") == interval(dict(reversed(list(mixed.items()))), opts, key="m")


def test_bootstrap_summary_keys_in_order():
    from judgekit.judging.uncertainty import bootstrap_summary

    o = IntervalOptions(bootstrap_samples=200, bootstrap_seed=3, interval_level=0.9)
    assert bootstrap_summary(o) == {"method": "percentile bootstrap over items", "samples": 200, "level": 0.9,
                                    "seed": 3}
    s = bootstrap_summary(o, items="images", fid="note")
    assert list(s) == ["method", "items", "samples", "level", "seed", "fid"] and s["items"] == "images"


def test_pairs_on_the_same_items_and_on_different_items_are_each_paired_difference():
    """Candidates on the same items (listed in any order) share one sorted copy of their sums; a
    pair on different items is compared on its common items; both as paired_difference gives it."""
    opts = IntervalOptions(bootstrap_samples=200, bootstrap_seed=4)
    a = {f"q{i}": (float(50 * (i % 5) - 100), 2.0) for i in range(30)}
    b = {k: (float(50 * ((i * 7) % 5) - 100), 1.0 + i % 2) for i, k in reversed(list(enumerate(a)))}
    c = {k: v for i, (k, v) in enumerate(a.items()) if i % 3}
    rows = comparisons({"a": a, "b": b, "c": c}, opts, "reward", key="j:", candidates=["a", "b", "c"])
    for row in rows:
        sa, sb = {"a": a, "b": b, "c": c}[row["a"]], {"a": a, "b": b, "c": c}[row["b"]]
        common = sorted(set(sa) & set(sb), key=repr)
        iv = paired_difference([sa[i][0] for i in common], [sa[i][1] for i in common], [sb[i][0] for i in common],
                               [sb[i][1] for i in common], samples=200, seed=4, key=f"j:reward:{row['a']}-{row['b']}")
        assert (row["items"], row["difference"], row["ci_low"], row["ci_high"]) == (iv.items, iv.estimate, iv.low,
                                                                                     iv.high)
    assert [r["items"] for r in rows] == [30, 20, 20]


def test_rate_is_the_share_with_its_interval():
    from judgekit.judging.uncertainty import Rate, rate

    outcomes = {f"q{i}": i % 3 != 0 for i in range(25)}  # 16 of 25 pass
    opts = IntervalOptions(bootstrap_samples=400, bootstrap_seed=2)
    r = rate(outcomes, opts, key="strong")
    assert r.value == pytest.approx(100 * 16 / 25) and r.n == 25
    iv = interval({i: (float(v), 1.0) for i, v in outcomes.items()}, opts, key="strong", scale=100)
    assert (r.low, r.high) == (iv.low, iv.high) and r.low < r.value < r.high
    # the order the items come in does not move the interval; the key does
    assert rate(dict(reversed(list(outcomes.items()))), opts, key="strong") == r
    assert (rate(outcomes, opts, key="weak").low, rate(outcomes, opts, key="weak").high) != (r.low, r.high)
    assert rate(outcomes, opts, key="strong", scale=1.0).value == pytest.approx(0.64)
    # intervals off: the share alone; no item: nothing
    assert rate(outcomes, IntervalOptions(bootstrap_samples=0), key="strong") == Rate(r.value, None, None, 25)
    assert rate({}, opts, key="strong") == Rate(None, None, None, 0)
    assert rate({"a": True}, opts, key="k") == Rate(100.0, 100.0, 100.0, 1)
