"""``judge_repeats`` on the rubric benchmark (its quickstart: 3 candidates, 2 simulated judges):
twice the judge calls, none paid twice on a rerun, and each judge's score spread against the
per-repeat mean scores recomputed from judgments.csv."""

import asyncio
import csv
import statistics
from pathlib import Path

import pytest

from judgekit.config import load_spec
from judgekit.runner import RunOptions, run_spec

SPEC = str(Path(__file__).resolve().parents[2] / "runners" / "rubric_quickstart.toml")


def _run(tmp, out, *overrides):
    spec = load_spec(SPEC, list(overrides))
    return asyncio.run(run_spec(spec, RunOptions(out_dir=tmp / out, cache_path=tmp / "cache.duckdb")))


def test_rubric_repeats(tmp_path):
    one = _run(tmp_path, "one")
    assert one.exit_code == 0, one.message
    judged_once = len(list(csv.DictReader(open(tmp_path / "one" / "judgments.csv"))))
    two = _run(tmp_path, "two", "options.judge_repeats=2")
    assert two.exit_code == 0, two.message
    judgments = list(csv.DictReader(open(tmp_path / "two" / "judgments.csv")))
    assert len(judgments) == 2 * judged_once
    assert _run(tmp_path, "again", "options.judge_repeats=2").summary.get("calls_by_provider", {}).get("sim", 0) == 0
    s = two.summary
    scale = (1, 10)  # runners/rubric_quickstart.toml's options.scale
    for judge, rows in s["per_judge"].items():
        for r in (r for r in rows if r["level"] == "overall"):
            per = []
            for rep in "01":
                v = [float(j["score"]) for j in judgments if j["judge"] == judge and j["model"] == r["model"]
                     and j["repeat"] == rep and j["score"] != ""]
                per.append(sum(v) / len(v))
            assert r["score_repeat_sd"] == pytest.approx(statistics.stdev(per), abs=1e-3)
            assert r["score_repeat_range"] == pytest.approx(abs(per[0] - per[1]), abs=1e-3)
            assert r["pct_repeat_sd"] == pytest.approx(100 * statistics.stdev(per) / (scale[1] - scale[0]), abs=0.01)
    title, rows = two.result.more_displays[-1]
    assert title == "Judge-induced spread over 2 repeats: SD (range)" and rows
