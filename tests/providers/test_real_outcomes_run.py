"""Whole runs against the simulator's real-API shapes: a spent quota stops the run at its first
calls; filtered and refused replies are counted failures of their kind, kept with the reply in the
attempts table, never cached, not retried, and asked again by a rerun."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from judgekit.config import RunSpec
from judgekit.runner import RunOptions, run_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from offline_runners import offline_spec  # noqa: E402


def quickstart(**sim_by_alias: dict) -> RunSpec:
    """The quickstart runner offline, with more simulator settings for some aliases."""
    spec, _ = offline_spec("quickstart")
    data = spec.model_dump(exclude_none=True)
    for alias, extra in sim_by_alias.items():
        data["models"][alias]["sim"].update(extra)
    return RunSpec.model_validate(data)


def rows(cache: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(cache), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


async def test_a_spent_quota_stops_the_run_at_once(tmp_path):
    spec = quickstart(judge={"quota_exhausted_models": {"sim-judge": "insufficient_quota"}})
    cache = tmp_path / "c.duckdb"
    out = await run_spec(spec, RunOptions(out_dir=tmp_path / "o", cache_path=cache, limit=3, yes=True))
    assert out.exit_code == 1
    assert "out of quota (insufficient_quota)" in out.message and "'judge'" in out.message
    assert "billing" in out.message
    quota = rows(cache, "select key from attempts where error_kind = 'quota'")
    # the calls that were in flight when the first answer came, each asked once: no retry, no wait
    assert 1 <= len(quota) <= spec.models["judge"].limits.max_concurrency
    assert len({k for (k,) in quota}) == len(quota)
    assert sum(s.retries for s in out.stats.stages.values()) == 0
    assert rows(cache, "select count(*) from attempts where error_kind <> 'quota'") == [(0,)]


async def test_filtered_and_refused_replies_are_counted_never_cached_and_asked_again(tmp_path):
    spec = quickstart(judge={"reply_faults": {"content_filter": 0.15, "refusal": 0.15}},
                      **{"sim-weak": {"reply_faults": {"refusal": 0.3}}})
    cache = tmp_path / "c.duckdb"
    opts = RunOptions(out_dir=tmp_path / "o", cache_path=cache, limit=4, yes=True)
    first = await run_spec(spec, opts)
    assert first.exit_code == 1 and "failed calls remain" in first.message
    failed = rows(cache, "select key, error_kind, message from attempts")
    kinds = {k for _, k, _ in failed}
    assert kinds == {"filtered", "refused"}, kinds
    # each kept with the reply it came in, asked once (not retried)
    assert all("| reply: " in m and '"choices"' in m for _, _, m in failed)
    assert len({k for k, _, _ in failed}) == len(failed)
    assert sum(s.retries for s in first.stats.stages.values()) == 0
    assert sum(s.failures for s in first.stats.stages.values()) == len(failed)
    # never cached, and the items are listed as failed with the kind
    keys = ", ".join(f"'{k}'" for k, _, _ in failed)
    assert rows(cache, f"select count(*) from responses where key in ({keys})") == [(0,)]
    listed = " ".join(first.failed_items)
    assert ": filtered: " in listed and ": refused: " in listed
    assert any("sim-weak item" in f and "refused" in f for f in first.failed_items)
    # a rerun asks again exactly the calls that failed (the simulator refuses them again)
    paid = rows(cache, "select count(*) from responses")[0][0]
    again = await run_spec(spec, opts)
    assert again.exit_code == 1
    assert rows(cache, "select count(*) from responses")[0][0] == paid
    asked = rows(cache, "select key, count(*) from attempts group by key")
    assert {k for k, _ in asked} == {k for k, _, _ in failed} and all(n == 2 for _, n in asked)
