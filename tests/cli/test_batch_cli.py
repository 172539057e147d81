"""The batch commands and options: --batch on estimate, batch = true on a provider without a batch API,
`judgekit batches cancel` through the simulator's OpenAI Batch API (real SDK), `cache stats`, and the
next run collecting what a cancelled batch answered."""

import asyncio
import json
import re

import pytest
from oneline import assert_user_error, invoke

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec, RunSpec, load_spec
from judgekit.engine import Engine
from judgekit.engine.batch_status import batches_pending, status_lines
from judgekit.runner import RunOptions, estimate_spec
from judgekit.sim import SimConfig
from judgekit.sim.process import SimThread
from judgekit.types import ChatRequest, GenParams, Message

PRICE = "models.judge.price={input_per_mtok = 2.5, output_per_mtok = 10.0}"


def test_estimate_with_batch_prices_batch_lines_beside_live(tmp_path):
    spec = load_spec("quickstart", [PRICE])
    live = asyncio.run(estimate_spec(spec, RunOptions(cache_path=tmp_path / "c.duckdb"))).estimate
    batch = asyncio.run(estimate_spec(spec, RunOptions(cache_path=tmp_path / "c.duckdb", batch=True))).estimate
    judge = [ln for ln in batch.lines if ln.alias == "judge"]
    assert judge and all(ln.batch for ln in batch.lines)  # every quickstart model is served by the simulator
    for ln, was in zip(batch.lines, live.lines):
        assert ln.live_cost_expected_usd == pytest.approx(was.cost_expected_usd)
        assert ln.cost_expected_usd == pytest.approx(was.cost_expected_usd / 2)
        assert ln.cost_max_usd == pytest.approx(was.cost_max_usd / 2)
    assert live.total_expected_usd > 0 and batch.total_live_expected_usd == pytest.approx(live.total_expected_usd)
    assert batch.total_expected_usd == pytest.approx(live.total_expected_usd / 2)

    r = invoke("estimate", "quickstart", "--cache", tmp_path / "c.duckdb", "--set", PRICE, "--batch")
    assert r.exit_code == 0, r.output
    assert "batch mode for sim-strong, sim-weak, judge" in r.output
    assert "batch exp." in r.output and "live exp." in r.output
    assert "the same calls live would cost" in r.output


def test_batch_on_a_provider_without_a_batch_api_is_one_line(tmp_path):
    r = invoke("estimate", "quickstart", "--cache", tmp_path / "c.duckdb", "--set", "models.judge.provider=local",
               "--set", "models.judge.local.task=chat", "--set", "models.judge.batch=true")
    assert_user_error(r, "quickstart.toml", "models.judge.batch", "provider 'local' has no batch API")


def _req(i):
    return ChatRequest("j", (Message.user(f"Describe picture {i}."),), GenParams(max_tokens=64), stage="judge",
                       item_id=str(i))


def test_cancel_a_runs_batches_then_the_next_run_collects_what_they_answered(tmp_path):
    path = tmp_path / "c.duckdb"
    with SimThread(SimConfig(seed=3, batch_turnaround_s=3.0)) as server:
        model = ModelSpec(provider="sim", model="sim-judge", batch=True, batch_linger_s=0.05, batch_poll_s=0.05,
                          batch_fallback="live", sim={"url": server.base_url})
        spec = RunSpec(name="cancel-me", benchmark="creation_mmbench", data="x", models={"j": model},
                       roles={"candidates": ["j"]})
        lines: list[str] = []

        async def submit_and_leave():
            cache = await CacheStore.open(path, run_id="run1")
            cache.run_started("run1", spec.name, json.dumps({"spec": spec.model_dump(mode="json")}))
            e = Engine(spec.models, cache)
            await e.start()
            calls = [asyncio.ensure_future(e.call(_req(i))) for i in range(4)]
            while not e.batches.live() or not (e.batches.live()[0].status.succeeded >= 1):
                await asyncio.sleep(0.02)  # until the batch has answered a request
            lines.extend(status_lines(e))
            lines.append(batches_pending(e, path, spec.name))
            for c in calls:
                c.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
            await e.close()
            await cache.close()

        asyncio.run(submit_and_leave())
        assert lines[0].startswith("j (sim sim-judge) batches: 1 batch live (") and "4 requests" in lines[0]
        assert f"judgekit batches cancel --cache {path} --spec cancel-me" in lines[1]

        stats = json.loads(invoke("cache", "stats", "--cache", path, "--json").output)
        assert stats["batches"]["live"] == 1 and stats["live_batches"][0]["requests"] == 4
        (batch_id,) = [b["batch_id"] for b in stats["live_batches"]]

        none = invoke("batches", "cancel", "--cache", path, "--spec", "other")
        assert none.exit_code == 0 and "no live batches of spec 'other'" in none.output
        r = invoke("batches", "cancel", "--cache", path, "--spec", "cancel-me")
        assert r.exit_code == 0, r.output
        assert f"{batch_id} (j, run run1, 4 requests): cancelling" in r.output
        (b,) = json.loads(invoke("cache", "stats", "--cache", path, "--json").output)["live_batches"]
        assert b["state"] == "cancelling"  # still live: its answers are collected by the next run

        async def next_run():
            cache = await CacheStore.open(path, run_id="run2")
            e = Engine(spec.models, cache)
            await e.start()
            rs = await asyncio.gather(*(e.call(_req(i)) for i in range(4)))
            await e.close()
            live = await cache.batches(live_only=True)
            await cache.close()
            return rs, live, e

        rs, live, e = asyncio.run(next_run())
        assert all(r.ok for r in rs) and live == []
        st = server.stats()
        assert st["batches_created"] == 1  # nothing submitted again: the rest were asked live
        # what the batch answered before it stopped came from it, the rest live
        assert e.savings.batch_calls >= 1 and e.savings.batch_calls + st["served"] == 4
        assert e.stats.stage("judge").retries == st["served"] == e.savings.batch_retried


def test_ctrl_c_while_waiting_on_a_batch_ends_at_once_and_says_how_to_resume_or_cancel(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from judgekit.sim import SimProcess

    judge = load_spec("quickstart").models["judge"].sim
    server = SimProcess(SimConfig(**judge, batch_turnaround_s=600.0))  # a batch that takes ten minutes
    server.start()
    try:
        cache = tmp_path / "c.duckdb"
        p = subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "run", "quickstart", "--cache", str(cache),
                              "--out", str(tmp_path / "out"), "--set", f"models.judge.sim.url={server.base_url}",
                              "--set", "models.judge.batch_poll_s=0.1", "--set", "models.judge.batch_linger_s=0.1",
                              *[f"--set=models.{c}.{k}" for c in ("sim-strong", "sim-weak")  # quick candidates' batches
                                for k in ("sim.batch_turnaround_s=0.2", "batch_poll_s=0.05", "batch_linger_s=0.1")],
                              "--batch"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while server.stats()["batches_created"] < 1:  # the judge's (the candidates' go to their own simulator)
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        server.stop()
    assert p.returncode == 130, err
    assert "batches: 1 batch live" in out  # the live display showed the wait
    assert (re.search(r"\d+ batch(es)? \(", err) and "still running at the provider and recorded in the cache" in err
            and f"judgekit batches cancel --cache {cache} --spec quickstart" in err)
    assert "resume with: judgekit run quickstart" in err and "--batch" in err.splitlines()[-1]
    stats = json.loads(invoke("cache", "stats", "--cache", cache, "--json").output)
    assert stats["batches"]["live"] == 1 and stats["live_batches"][0]["alias"] == "judge"


@pytest.mark.parametrize("created", [True, False])
def test_cancel_sees_a_batch_whose_creation_a_killed_run_did_not_record(tmp_path, monkeypatch, created):
    """A run dies between the create call and the batch's record: `cache stats` shows the batch as
    being created, and `batches cancel` finds it at the provider by its wave and cancels it (or, if
    the provider never made it, says so and forgets it); the next run submits nothing twice."""
    path = tmp_path / "c.duckdb"
    with SimThread(SimConfig(seed=3, batch_turnaround_s=3.0)) as server:
        model = ModelSpec(provider="sim", model="sim-judge", batch=True, batch_linger_s=0.05, batch_poll_s=0.05,
                          batch_fallback="live", sim={"url": server.base_url})
        spec = RunSpec(name="orphan", benchmark="creation_mmbench", data="x", models={"j": model},
                       roles={"candidates": ["j"]})

        async def die_at_the_create():
            cache = await CacheStore.open(path, run_id="run1")
            cache.run_started("run1", spec.name, json.dumps({"spec": spec.model_dump(mode="json")}))
            e = Engine(spec.models, cache)
            await e.start()
            batches = e.providers["j"]._client.batches
            create = batches.create

            async def dying(*a, **kw):
                if created:
                    await create(*a, **kw)  # the reply is read, the record never written
                raise asyncio.CancelledError

            monkeypatch.setattr(batches, "create", dying)
            await asyncio.gather(*(e.call(_req(i)) for i in range(4)))
            await e.close()
            await cache.close()

        asyncio.run(die_at_the_create())
        assert server.stats()["batches_created"] == int(created)
        (b,) = json.loads(invoke("cache", "stats", "--cache", path, "--json").output)["live_batches"]
        assert b["state"] == "creating" and b["requests"] == 4 and b["batch_id"].startswith("intent:")
        r = invoke("batches", "cancel", "--cache", path, "--spec", "orphan")
        assert r.exit_code == 0, r.output
        live = json.loads(invoke("cache", "stats", "--cache", path, "--json").output)["live_batches"]
        if created:
            (b,) = live
            assert not b["batch_id"].startswith("intent:") and b["state"] == "cancelling"
            assert f"{b['batch_id']} (j, run run1, 4 requests): cancelling" in r.output
        else:
            assert live == [] and "never created" in r.output

        async def next_run():
            cache = await CacheStore.open(path, run_id="run2")
            e = Engine(spec.models, cache)
            await e.start()
            rs = await asyncio.gather(*(e.call(_req(i)) for i in range(4)))
            await e.close()
            await cache.close()
            return rs

        assert all(r.ok for r in asyncio.run(next_run()))
        st = server.stats()
        # each request went out once: in the adopted (then cancelled) batch, or in the one batch made now;
        # what the cancelled batch left unanswered was asked live
        assert st["batches_created"] == 1 and st["batch_requests_submitted"] == 4
