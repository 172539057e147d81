"""MMGenBench's SIM intervals and paired comparisons (judgekit.benchmarks.mmgenbench.results), worked
out by hand; and a judge named for MMGenBench, which has none, is a spec error."""

import numpy as np
import pytest

from judgekit.benchmarks.mmgenbench.pipeline import Options, prepare
from judgekit.benchmarks.mmgenbench.results import sim_comparisons, sim_intervals
from judgekit.judging.uncertainty import IntervalOptions, interval
from judgekit.config import load_spec
from judgekit.errors import SpecError
from judgekit.metrics.mmgenbench import sim_summary

OPTS = IntervalOptions(bootstrap_samples=500, bootstrap_seed=1)
SIMS = {
    ("c1", "g"): {"i1": 0.9, "i2": 0.5, "i3": 0.7, "i4": 0.6, "i5": 0.8},
    ("c2", "g"): {"i1": 0.6, "i2": 0.4, "i4": 0.6},  # i3, i5 failed
}
PATTERNS = {"Count": ["i1", "i2"], "Color": ["i3", "i3"], "Style": ["i9"]}


def rows():
    results, patterns = [], []
    for (c, g), per in SIMS.items():
        s = sim_summary(per, PATTERNS)
        results.append({"model": c, "generator": g, "n": s["n"], "sim_mean": s["mean"]})
        patterns += [{"model": c, "generator": g, "pattern": p, **ps} for p, ps in s["patterns"].items()]
    sim_intervals(results, patterns, SIMS, PATTERNS, OPTS)
    return {r["model"]: r for r in results}, {(r["model"], r["pattern"]): r for r in patterns}


def test_sim_intervals_by_hand():
    results, patterns = rows()
    # two images: the resamples are (x,x), (x,y), (y,x), (y,y), a quarter each, so the 2.5 % and
    # 97.5 % percentiles of the mean are the two SIMs
    assert (patterns[("c1", "Count")]["mean_ci_low"], patterns[("c1", "Count")]["mean_ci_high"]) == (0.5, 0.9)
    assert (patterns[("c2", "Count")]["mean_ci_low"], patterns[("c2", "Count")]["mean_ci_high"]) == (0.4, 0.6)
    # an image listed twice counts twice, as the reference (and sim_summary) counts it, resampled as one: no spread
    assert (patterns[("c1", "Color")]["mean_ci_low"], patterns[("c1", "Color")]["mean_ci_high"]) == (0.7, 0.7)
    # nothing scored: no interval
    assert patterns[("c2", "Color")]["n"] == 0 and patterns[("c2", "Color")]["mean_ci_low"] is None
    assert patterns[("c1", "Style")]["mean_ci_high"] is None
    # five images: the interval of the mean of their SIMs over the scored images
    r = results["c1"]
    assert r["sim_mean"] == pytest.approx(0.7)
    iv = interval({i: (v, 1.0) for i, v in SIMS[("c1", "g")].items()}, OPTS, key="c1:g:sim")
    assert (r["sim_mean_ci_low"], r["sim_mean_ci_high"]) == (iv.low, iv.high)
    assert 0.5 <= r["sim_mean_ci_low"] < 0.7 < r["sim_mean_ci_high"] <= 0.9
    # against a plain percentile bootstrap of the mean, by numpy alone (another stream: close, not equal)
    rng = np.random.default_rng(0)
    v = np.array(list(SIMS[("c1", "g")].values()))
    means = v[rng.integers(0, 5, size=(20000, 5))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    assert r["sim_mean_ci_low"] == pytest.approx(lo, abs=0.03) and r["sim_mean_ci_high"] == pytest.approx(hi, abs=0.03)


def test_intervals_off_leave_the_columns_empty():
    results = [{"model": "c1", "generator": "g", "sim_mean": 0.7}]
    sim_intervals(results, [], SIMS, PATTERNS, IntervalOptions(bootstrap_samples=0))
    assert results[0]["sim_mean_ci_low"] is None and results[0]["sim_mean_ci_high"] is None
    assert sim_comparisons(SIMS, ["c1", "c2"], ["g"], IntervalOptions(bootstrap_samples=0)) == []


def test_candidates_are_compared_on_the_images_both_have():
    (row,) = sim_comparisons(SIMS, ["c1", "c2"], ["g"], OPTS)
    # i1, i2, i4: differences 0.3, 0.1, 0.0 -> mean 0.1333
    assert (row["generator"], row["a"], row["b"], row["items"]) == ("g", "c1", "c2", 3)
    assert row["difference"] == pytest.approx(0.4 / 3) and row["judge"] is None and row["metric"] == "sim"
    assert 0.0 <= row["ci_low"] <= row["difference"] <= row["ci_high"] <= 0.3
    two = {k: {i: v for i, v in per.items() if i in ("i1", "i2")} for k, per in SIMS.items()}
    (row,) = sim_comparisons(two, ["c1", "c2"], ["g"], OPTS)
    # two images: differences 0.3 and 0.1, so the interval is [0.1, 0.3] and excludes 0
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(0.1), pytest.approx(0.3)) and row["excludes_zero"]


@pytest.mark.parametrize("role", ["roles.judge='sim-strong'", "roles.judges=['sim-strong','sim-weak']"])
def test_a_judge_for_mmgenbench_is_a_spec_error(role):
    spec = load_spec("mmgenbench", [role])
    key = role.split("=")[0]
    with pytest.raises(SpecError, match=f"{key}: MMGenBench has no judge \\('sim-strong'\\)"):
        prepare(spec, Options(), limit=1)
