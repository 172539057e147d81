"""End to end: the quickstart runner with its judge on ``provider = "anthropic"`` (the anthropic SDK
against the simulator's Messages API) gives the very results of the quickstart with the judge on
the simulator's chat-completions endpoint, priced at Claude's rates."""

from __future__ import annotations

import sys
from pathlib import Path

from judgekit.config import RunSpec
from judgekit.runner import RunOptions, run_spec
from judgekit.sim import SimConfig, SimServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from offline_runners import offline_spec

KEY_ENV = "JK_ANTHROPIC_RUN_KEY"


def _first_judge_alone(spec: RunSpec) -> RunSpec:
    """The quickstart with its first judge only (its panel's second judge would stay on the
    simulator's chat endpoint)."""
    data = spec.model_dump(exclude_none=True)
    data["roles"]["judges"] = ["judge"]
    return RunSpec.model_validate(data)


async def test_quickstart_with_a_claude_judge_gives_the_same_results(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-ant-run-0123456789")
    spec = _first_judge_alone(offline_spec("quickstart")[0])
    base = await run_spec(spec, RunOptions(out_dir=tmp_path / "sim", cache_path=tmp_path / "sim.duckdb", limit=2,
                                           yes=True))
    assert base.exit_code == 0, base.message
    data = spec.model_dump(exclude_none=True)
    judge = data["models"]["judge"]
    async with SimServer(SimConfig(**judge["sim"])) as server:
        # the simulator's judge, served through the Messages API; priced and counted as Claude 3.5 Sonnet
        data["models"]["judge"] = {"provider": "anthropic", "model": "sim-judge", "serves": "claude-3-5-sonnet-20241022",
                                   "base_url": server.root_url, "api_key_env": KEY_ENV, "params": judge["params"]}
        out = await run_spec(RunSpec.model_validate(data),
                             RunOptions(out_dir=tmp_path / "claude", cache_path=tmp_path / "claude.duckdb", limit=2,
                                        yes=True))
        served = server.stats()
    assert out.exit_code == 0, out.message
    assert out.summary["status"] == "done" and out.summary["complete"]
    assert out.summary["results"] == base.summary["results"]
    judged = sum(s.calls for name, s in out.stats.stages.items() if name != "candidate")
    assert judged > 0 and served["served_by_api"] == {"anthropic": judged} and served["requests"] == judged
    # the judge's calls are priced (Claude 3.5 Sonnet's rates), the simulated candidates are free
    assert out.summary["cost_usd"] > 0 == base.summary["cost_usd"]


async def test_claude_as_candidate_live_and_as_judge_in_batches_gives_the_same_results(tmp_path, monkeypatch):
    """A candidate answering through the Messages API and the judge through Message Batches (half
    price): the same results as the quickstart on the simulator's chat endpoint."""
    monkeypatch.setenv(KEY_ENV, "sk-ant-run-0123456789")
    spec = _first_judge_alone(offline_spec("quickstart")[0])
    base = await run_spec(spec, RunOptions(out_dir=tmp_path / "sim", cache_path=tmp_path / "sim.duckdb", limit=2,
                                           yes=True))
    assert base.exit_code == 0, base.message
    data = spec.model_dump(exclude_none=True)
    judge, cand = data["models"]["judge"], data["models"]["sim-strong"]
    async with SimServer(SimConfig(**{**judge["sim"], "batch_turnaround_s": 0.2})) as server:
        claude = {"provider": "anthropic", "serves": "claude-3-5-sonnet-20241022", "base_url": server.root_url,
                  "api_key_env": KEY_ENV}
        data["models"]["sim-strong"] = {**claude, "model": cand["model"], "params": cand.get("params", {})}
        data["models"]["judge"] = {**claude, "model": "sim-judge", "params": judge["params"], "batch": True,
                                   "batch_linger_s": 0.05, "batch_poll_s": 0.05}
        out = await run_spec(RunSpec.model_validate(data),
                             RunOptions(out_dir=tmp_path / "claude", cache_path=tmp_path / "claude.duckdb", limit=2,
                                        yes=True))
        served = server.stats()
    assert out.exit_code == 0, out.message
    assert out.summary["results"] == base.summary["results"]
    judged = sum(s.calls for name, s in out.stats.stages.items() if name != "candidate")
    assert served["batches_created"] >= 1 and served["batch_requests_submitted"] == judged
    assert out.summary["batch"]["calls"] == judged
    assert abs(out.summary["batch"]["cost_usd"] * 2 - out.summary["batch"]["live_equivalent_usd"]) < 1e-6
