"""``judge_repeats`` end to end on the generic pairwise benchmark, against the simulator: k = 1 is
the run it was (the same cache entries); k = 3 makes 3x the judge calls, each repeat its own cache
entry with its own (varying) verdicts; a resumed run pays for none twice; the estimate and its
cost bound (what --max-cost checks) count the repeats; the spread columns match each repeat's
figures recomputed from the judgments; a panel's ensemble is made per repeat."""

import asyncio
import json
import statistics

import pytest
from pairwise_helpers import QUESTIONS, run, write_case
from run_helpers import read_csv

from judgekit.config import load_spec
from judgekit.runner import RunOptions, estimate_spec

N = len(QUESTIONS)
PRICED = ('models.judge.price={input_per_mtok = 2.5, output_per_mtok = 10}',
          'models.judge-2.price={input_per_mtok = 2.5, output_per_mtok = 10}')
PANEL = 'candidates = ["my-vlm"]\njudges = ["judge", "judge-2"]\nbaseline = "baseline"'


def _estimate(spec_path, *overrides):
    spec = load_spec(str(spec_path), list(overrides))
    root = spec_path.parent
    est = asyncio.run(estimate_spec(spec, RunOptions(out_dir=root / "est", cache_path=root / "cache.duckdb")))
    calls = {}
    for line in est.estimate.lines:
        calls[line.stage] = calls.get(line.stage, 0) + line.calls_to_make
    judge_max = sum(line.cost_max_usd or 0.0 for line in est.estimate.lines if line.stage == "judge")
    return calls, judge_max


def test_estimate_and_its_bound_count_the_repeats(tmp_path):
    spec = write_case(tmp_path, roles=PANEL)
    one, max1 = _estimate(spec, *PRICED)
    three, max3 = _estimate(spec, *PRICED, "options.judge_repeats=3")
    assert one["judge"] == 2 * 2 * N and three["judge"] == 3 * one["judge"]
    assert three["candidate"] == one["candidate"] and three["baseline"] == one["baseline"]
    assert max1 > 0 and max3 == pytest.approx(3 * max1)


def test_repeats_in_the_cache_key_and_the_figures(tmp_path):
    spec = write_case(tmp_path, roles=PANEL)
    plain = run(spec, "plain")
    assert plain.exit_code == 0, plain.message
    plain_calls = plain.summary["calls_by_provider"]["sim"]
    again = run(spec, "k1", "options.judge_repeats=1")  # k = 1: the very same requests, all cached
    assert again.summary.get("calls_by_provider", {}).get("sim", 0) == 0
    assert (tmp_path / "k1" / "summary.csv").read_text() == (tmp_path / "plain" / "summary.csv").read_text()
    assert "judge_repeats" not in again.summary
    assert "repeat" not in read_csv(tmp_path / "k1" / "judgments.csv")[0]

    o = run(spec, "k3", "options.judge_repeats=3")
    assert o.exit_code == 0, o.message
    judge_calls = plain_calls - 2 * N  # the plain run's judge calls (besides baseline and candidate)
    assert o.summary["calls_by_provider"]["sim"] == 2 * judge_calls  # repeats 1 and 2; repeat 0 cached
    resumed = run(spec, "k3b", "options.judge_repeats=3")
    assert resumed.summary.get("calls_by_provider", {}).get("sim", 0) == 0  # nothing paid twice

    s = o.summary
    assert s["judge_repeats"] == 3
    judgments = read_csv(tmp_path / "k3" / "judgments.csv")
    assert len(judgments) == 3 * 2 * 2 * N
    # the repeats are other judgments, not copies (the simulator reads each repeat's seed)
    by = {}
    for j in judgments:
        by.setdefault((j["judge"], j["index"], j["order"]), []).append(j["judge_text"])
    assert sum(len(set(texts)) > 1 for texts in by.values()) > len(by) // 2
    # spread: each repeat's Reward and Win Rate from the judgments, then their SD and range
    row = next(r for r in s["results"] if r["level"] == "overall")
    for fig in ("reward", "win_rate"):
        per = []
        for rep in "012":
            scores = [int(j["score"]) for j in judgments if j["judge"] == "judge" and j["repeat"] == rep
                      and j["score"] != ""]
            per.append(50.0 * sum(scores) / len(scores) if fig == "reward"
                       else 100.0 * sum(x > 0 for x in scores) / len(scores))
        assert row[f"{fig}_repeat_sd"] == pytest.approx(statistics.stdev(per))
        assert row[f"{fig}_repeat_range"] == pytest.approx(max(per) - min(per))
        pooled = [int(j["score"]) for j in judgments if j["judge"] == "judge" and j["score"] != ""]
        if fig == "reward":
            assert row["reward"] == pytest.approx(50.0 * sum(pooled) / len(pooled))
    ens = next(r for r in s["ensemble"]["results"] if r["level"] == "overall")
    assert ens["n_pairwise"] == 3 * 2 * N and ens["reward_repeat_sd"] is not None
    csv_row = next(r for r in read_csv(tmp_path / "k3" / "summary.csv") if r["level"] == "overall")
    assert float(csv_row["reward_repeat_sd"]) == pytest.approx(row["reward_repeat_sd"])
    shown = dict(o.result.more_displays)  # the spread tables found by their titles
    rows = shown["Judge-induced spread over 3 repeats: SD (range)"]
    assert {r["judge"] for r in rows} == {"judge", "judge-2", "ensemble"}
    controlled = shown["LC/SC/BT spread over 3 repeats: SD (range)"]  # the controlled figures' spread
    assert {r["judge"] for r in controlled} == {"judge", "ensemble"}
    assert all("bt_rating_repeat_sd" in r for r in s["controlled"]["results"])
    report = json.loads((tmp_path / "k3" / "report.json").read_text())
    assert any(t["title"].startswith("Judge-induced spread") for t in report["tables"])
