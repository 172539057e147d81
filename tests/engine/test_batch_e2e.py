"""Batch mode end to end against the simulator's OpenAI Batch API, through the real openai SDK:
the quickstart with its judge in batch mode gives the live run's results at half the judge's cost,
and a run SIGKILLed while its batches run, started again, submits nothing twice."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgekit.config import load_spec
from judgekit.runner import RunOptions, run_spec
from judgekit.sim import SimConfig, SimProcess

PRICE = "models.judge.price={input_per_mtok = 2.5, output_per_mtok = 10.0}"
BATCH = ["models.judge.batch=true", "models.judge.batch_linger_s=0.2", "models.judge.batch_poll_s=0.1"]
TABLES = ("answers.csv", "judgments.csv", "summary.csv")


async def _run(tmp: Path, name: str, overrides: list[str]):
    spec = load_spec("quickstart", [PRICE, "models.judge.sim.batch_turnaround_s=0.3", 'roles.judges=["judge"]',
                                    *overrides])  # the quickstart's first judge alone
    out = await run_spec(spec, RunOptions(out_dir=tmp / name, cache_path=tmp / f"{name}.duckdb", yes=True))
    assert out.exit_code == 0, out.message
    return out


@pytest.fixture(scope="module")
def live_run(tmp_path_factory):
    """The quickstart with every call live: the reference."""
    import asyncio

    tmp = tmp_path_factory.mktemp("live")
    out = asyncio.run(_run(tmp, "live", []))
    return tmp / "live", out.summary


async def test_the_judge_in_batch_mode_gives_the_same_results_at_half_the_cost(tmp_path, live_run):
    live_dir, live = live_run
    out = await _run(tmp_path, "batch", BATCH)
    for name in TABLES:
        assert (tmp_path / "batch" / name).read_bytes() == (live_dir / name).read_bytes(), name
    batch = out.summary
    judge_calls = batch["batch"]["calls"]
    assert judge_calls == 92 and batch["paid_calls"] == live["paid_calls"] == 116  # 24 candidate calls stay live
    # the candidates are free (the simulator): the cost is the judge's, for the same tokens
    assert live["cost_usd"] > 0
    assert batch["cost_usd"] == pytest.approx(live["cost_usd"] / 2, rel=1e-4)
    assert batch["batch"]["live_equivalent_usd"] == pytest.approx(live["cost_usd"], rel=1e-4)
    assert batch["batch"]["saved_usd"] == pytest.approx(live["cost_usd"] / 2, rel=1e-4)
    assert live["batch"]["calls"] == 0


def _judgekit(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def _batch_recorded(cache: Path, *, intent: bool = False) -> bool:
    """Whether a run's write-ahead log beside ``cache`` holds a batch record (with ``intent``: the
    record of a batch about to be created, made before the create call)."""
    for seg in cache.parent.glob(cache.name + ".wal.*"):
        try:
            lines = seg.read_bytes().splitlines()
        except OSError:  # a segment folded into the database meanwhile
            continue
        if any(b'"op":"batch"' in ln and (b'"intent:' in ln) == intent for ln in lines):
            return True
    return False


def test_a_run_killed_while_its_batches_run_submits_nothing_twice(tmp_path, live_run):
    live_dir, _ = live_run
    judge = load_spec("quickstart").models["judge"].sim  # the judge's simulator, batches taking 2 s
    server = SimProcess(SimConfig(**judge, batch_turnaround_s=3.0))
    server.start()
    try:
        args = ["run", "quickstart", "--cache", str(tmp_path / "c.duckdb"), "--out", str(tmp_path / "out"),
                "--set", PRICE, "--set", f"models.judge.sim.url={server.base_url}", "--set", 'roles.judges=["judge"]',
                *sum((["--set", o] for o in BATCH), [])]
        first = _judgekit(*args)
        deadline = time.monotonic() + 60
        # until the server has created a batch, then (up to a second, well inside its 3 s run) until
        # the client's record of it is in the cache's write-ahead log.  The record can be folded
        # into the database before this loop reads the log (then it is not seen here): the kill
        # comes anyway while the batch runs, and whether or not the record was written, the rerun
        # must not submit it again (a kill before the record is the next test's: the orphan is
        # adopted by its wave)
        while server.stats()["batches_created"] == 0:
            assert first.poll() is None, first.stdout.read()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        created = time.monotonic()
        while not _batch_recorded(tmp_path / "c.duckdb") and time.monotonic() - created < 1.0:
            time.sleep(0.02)
        assert first.poll() is None, first.stdout.read()
        os.kill(first.pid, signal.SIGKILL)  # its batch is in progress at the server
        first.wait(30)
        first.stdout.close()
        before = server.stats()
        assert before["batches_created"] >= 1 and before["batch_requests_submitted"] > 0

        second = _judgekit(*args)
        text, _ = second.communicate(timeout=120)
        assert second.returncode == 0, text
        after = server.stats()
        # every judge request went to the server in a batch exactly once: none of those the killed
        # run submitted was submitted again
        assert after["batch_requests_submitted"] == 92, text
        if before["batch_requests_submitted"] == 92:  # the killed run had submitted them all
            assert after["batches_created"] == before["batches_created"]
        else:
            assert after["batches_created"] > before["batches_created"]
        for name in TABLES:
            assert (tmp_path / "out" / name).read_bytes() == (live_dir / name).read_bytes(), name
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["status"] == "done" and summary["batch"]["calls"] == 92  # all answered by batches
        print(f"killed run: {before['batches_created']} batch(es), {before['batch_requests_submitted']} requests; "
              f"after the restart: {after['batches_created']} batch(es), {after['batch_requests_submitted']} requests")
    finally:
        server.stop()


def test_a_run_killed_after_the_create_request_before_its_reply_pays_nothing_twice(tmp_path, live_run, monkeypatch):
    """kill -9 while the provider has created the batch and its reply is on the way (the window
    of issue 24 point 1): the rerun finds the batch by its wave, collects it, creates none."""
    import asyncio
    import threading

    from judgekit.sim.openai_batch_api import OpenAIBatchSim
    from judgekit.sim.process import SimThread

    live_dir, _ = live_run
    created, release = threading.Event(), threading.Event()
    original = OpenAIBatchSim.create_batch

    async def held(self, request):
        resp = await original(self, request)
        if not created.is_set():  # the first create: made, its reply held back
            created.set()
            while not release.is_set():
                await asyncio.sleep(0.02)
        return resp

    monkeypatch.setattr(OpenAIBatchSim, "create_batch", held)
    judge = load_spec("quickstart").models["judge"].sim
    server = SimThread(SimConfig(**judge, batch_turnaround_s=0.5))  # in this process: its handler is patched
    server.start()
    try:
        args = ["run", "quickstart", "--cache", str(tmp_path / "c.duckdb"), "--out", str(tmp_path / "out"),
                "--set", PRICE, "--set", f"models.judge.sim.url={server.base_url}", "--set",
                'roles.judges=["judge"]', *sum((["--set", o] for o in BATCH), [])]
        first = _judgekit(*args)
        assert created.wait(90), "no batch was created"
        os.kill(first.pid, signal.SIGKILL)  # the batch exists at the server; the client never read its reply
        first.wait(30)
        first.stdout.close()
        release.set()
        before = server.stats()
        orphaned = before["batch_requests_submitted"]  # the first wave (all 92 unless the judge calls came apart)
        assert before["batches_created"] == 1 and orphaned > 0
        assert _batch_recorded(tmp_path / "c.duckdb", intent=True)  # only the intent is in the log
        assert not _batch_recorded(tmp_path / "c.duckdb")

        second = _judgekit(*args)
        text, _ = second.communicate(timeout=120)
        assert second.returncode == 0, text
        after = server.stats()
        assert after["batch_requests_submitted"] == 92, text  # each judge request once: the orphan's not again
        assert (after["batches_created"] == 1) == (orphaned == 92), text
        for name in TABLES:
            assert (tmp_path / "out" / name).read_bytes() == (live_dir / name).read_bytes(), name
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["status"] == "done" and summary["batch"]["calls"] == 92
    finally:
        release.set()
        server.stop()
