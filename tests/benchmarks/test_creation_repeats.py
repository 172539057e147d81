"""Creation-MMBench's quickstart (2 candidates, 2 simulated judges) with ``judge_repeats = 2``:
twice the judge calls of both kinds, the estimate counts them, a rerun pays nothing, repeat 0 is
the one-repeat run's cache entry, and every figure's spread is in the results and the printout."""

import asyncio
from pathlib import Path

import pytest

from judgekit.config import load_spec
from judgekit.runner import RunOptions, estimate_spec, run_spec

QUICKSTART = str(Path(__file__).resolve().parents[2] / "runners" / "quickstart.toml")


def _run(tmp, out, *overrides):
    spec = load_spec(QUICKSTART, list(overrides))
    return asyncio.run(run_spec(spec, RunOptions(out_dir=tmp / out, cache_path=tmp / "cache.duckdb")))


def _judge_calls(tmp, *overrides):
    spec = load_spec(QUICKSTART, list(overrides))
    est = asyncio.run(estimate_spec(spec, RunOptions(out_dir=tmp / "est", cache_path=tmp / "cache.duckdb")))
    return sum(line.calls_to_make for line in est.estimate.lines if line.stage in ("pairwise", "vfs"))


def test_quickstart_with_two_repeats(tmp_path):
    before1, before2 = _judge_calls(tmp_path), _judge_calls(tmp_path, "options.judge_repeats=2")
    assert before1 > 0 and before2 == 2 * before1
    one = _run(tmp_path, "one")
    assert one.exit_code == 0, one.message
    two = _run(tmp_path, "two", "options.judge_repeats=2")
    assert two.exit_code == 0, two.message
    assert two.summary["calls_by_provider"]["sim"] == before1  # repeat 1 only: repeat 0 was cached
    assert _judge_calls(tmp_path, "options.judge_repeats=2") == 0  # every repeat cached: none left to pay
    again = _run(tmp_path, "again", "options.judge_repeats=2")
    assert again.summary.get("calls_by_provider", {}).get("sim", 0) == 0
    s = two.summary
    for rows in (s["results"], *s["per_judge"].values(), s["ensemble"]["results"]):
        overall = [r for r in rows if r["level"] == "overall"]
        assert overall and all(r["reward_repeat_sd"] is not None and r["vfs_repeat_sd"] is not None
                               for r in overall)
        # with two repeats the SD is the range over sqrt(2)
        assert all(r["win_rate_repeat_sd"] == pytest.approx(r["win_rate_repeat_range"] / 2 ** 0.5) for r in overall)
    title, rows = next((t, r) for t, r in two.result.more_displays if "spread" in t)
    assert len(rows) == 3 * 2
    assert "reward_repeat_sd" not in one.summary["results"][0]
