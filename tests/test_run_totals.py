"""judgekit.run_totals: which processes make a run, and what each one is counted for (a real
cache file; the end-to-end kills are in tests/cli/test_stop_keeps_paid.py and
tests/engine/test_batch_spend_kill.py)."""

import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.cache.store import CacheStore, RequestMeta
from judgekit.engine.savings import Savings
from judgekit.engine.stats import RunStats
from judgekit.run_totals import earlier_processes, run_totals
from judgekit.types import ChatResponse, Usage


def _spec_json(folder) -> str:
    return json.dumps({"spec": {}, "run": {"out_dir": str(folder.resolve()), "max_cost_usd": None}})


async def _process(path, run_id, name, folder, *, paid=(), record=None):
    """One earlier process: its runs row, the responses it put (cost each), its record or none (killed)."""
    cache = await CacheStore.open(path, run_id=run_id)
    cache.run_started(run_id, name, _spec_json(folder))
    for i, cost in enumerate(paid):
        cache.put(f"{run_id}-{i}", RequestMeta("openai", "gpt-4o-mini", "u"),
                  ChatResponse(text="an answer", usage=Usage(10, 5), cost_usd=cost))
    if record is not None:
        status, summary = record
        cache.run_finished(run_id, status, json.dumps(summary))
    await cache.close()


def _engine(spent: float, calls: int):
    stats = RunStats()
    stats.stage("judge").cost_usd = spent
    stats.stage("judge").calls = calls
    return SimpleNamespace(stats=stats, savings=Savings(), providers={})


async def test_the_run_is_its_processes_into_the_folder_since_the_last_done(tmp_path):
    path, out, other = tmp_path / "c.duckdb", tmp_path / "out", tmp_path / "elsewhere"
    await _process(path, "a-done", "spec", out, paid=[5.0], record=("done", {"cost_usd": 5.0, "paid_calls": 1}))
    await _process(path, "b-killed", "spec", out, paid=[0.25, 0.5])  # no record: counted from the cache
    await _process(path, "c-other-folder", "spec", other, paid=[7.0], record=("interrupted", {"cost_usd": 7.0}))
    await _process(path, "d-other-spec", "another", out, paid=[9.0])
    await _process(path, "e-stopped", "spec", out, paid=[1.0],
                   record=("interrupted", {"cost_usd": 1.5, "paid_calls": 1,  # a billed failure beside its answer
                                           "batch": {"calls": 1, "cost_usd": 1.0, "live_equivalent_usd": 2.0,
                                                     "unanswered": {"expired": 2}}}))
    cache = await CacheStore.open(path, run_id="f-now")
    try:
        cache.run_started("f-now", "spec", _spec_json(out))
        t = await run_totals(cache, _engine(0.125, 3), "spec", out, "f-now")
    finally:
        await cache.close()
    assert [(p["run_id"], p["status"], p["counted_from"]) for p in t["earlier_processes"]] == [
        ("b-killed", "killed", "cache"), ("e-stopped", "interrupted", "record")]
    assert [p["cost_usd"] for p in t["earlier_processes"]] == [0.75, 1.5]
    assert t["cost_usd"] == pytest.approx(0.75 + 1.5 + 0.125) and t["paid_calls"] == 2 + 1 + 3
    assert t["this_process"]["cost_usd"] == 0.125 and t["this_process"]["paid_calls"] == 3
    assert t["batch"]["calls"] == 1 and t["batch"]["saved_usd"] == 1.0 and t["batch"]["unanswered"] == {"expired": 2}


async def test_a_first_process_is_the_whole_run(tmp_path):
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="only")
    try:
        cache.run_started("only", "spec", _spec_json(tmp_path / "out"))
        t = await run_totals(cache, _engine(0.5, 2), "spec", tmp_path / "out", "only")
    finally:
        await cache.close()
    assert t["earlier_processes"] == [] and (t["cost_usd"], t["paid_calls"]) == (0.5, 2)


_STATUSES = ("done", "interrupted", "stopped", "failed_items", "running")


@given(st.lists(st.tuples(st.sampled_from(_STATUSES), st.sampled_from(["/out", "/other", None]), st.booleans()),
                max_size=12))
def test_the_earlier_processes_are_those_into_the_folder_after_its_last_done(history):
    """``history``: processes oldest first, as (status, folder (None: a record of an older version),
    left a record)."""
    rows = []
    for i, (status, folder, recorded) in enumerate(history):
        spec_json = json.dumps({"spec": {}, "run": {"out_dir": folder}} if folder else {"name": "old"})
        rows.append((f"r{i}", status, spec_json, json.dumps({"cost_usd": 1.0}) if recorded else None))
    found = earlier_processes(rows[::-1], "/out")
    mine = [i for i, (_, folder, _) in enumerate(history) if folder == "/out"]
    last_done = max((i for i in mine if history[i][0] == "done"), default=-1)
    # every process into the folder after its last done, none other, oldest first
    assert [rid for rid, _, _ in found] == [f"r{i}" for i in mine if i > last_done]
    for rid, status, record in found:
        i = int(rid[1:])
        assert (record is None) == (not history[i][2])
        assert status == ("killed" if record is None and history[i][0] == "running" else history[i][0])
