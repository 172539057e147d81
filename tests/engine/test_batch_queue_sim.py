"""A wave three times the organisation's enqueued-token limit finishes in batch mode: the engine
through the real openai SDK against the simulator with its limit on (``batch_queue_tokens``),
with judgekit's setting at that limit and without it (a refusal, then halving)."""

import asyncio

import pytest

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.sim import SimConfig, SimServer
from judgekit.sim.protocol import estimate_prompt_tokens
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_QUEUE_KEY"
N = 24


def text(i: int) -> str:
    return f"Question {i:02d}: " + " ".join(f"word{j}" for j in range(30))


def req(i: int) -> ChatRequest:
    return ChatRequest("j", (Message.user(text(i)),), GenParams(max_tokens=50), stage="judge", item_id=str(i))


@pytest.fixture
async def setup(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-queue-test")
    wave = N * estimate_prompt_tokens(len(text(0)), 0)  # the simulator's count of the wave
    server = SimServer(SimConfig(batch_turnaround_s=0.3, batch_queue_tokens=wave // 3))
    await server.start()
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    yield server, cache, wave // 3
    if not cache.closed:
        await cache.close()
    await server.stop()


def judge(server: SimServer, **kw) -> ModelSpec:
    return ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, api_key_env=KEY_ENV, batch=True,
                     batch_linger_s=0.05, batch_poll_s=0.05, batch_attempts=1, **kw)


async def run(server, cache, spec):
    e = Engine({"j": spec}, cache)
    await e.start()
    try:
        rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
    finally:
        await e.close()
    return e, rs


async def test_with_the_setting_the_wave_runs_in_batches_that_fit(setup):
    server, cache, limit = setup
    e, rs = await run(server, cache, judge(server, batch_queue_tokens=limit))
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok][:3]
    st = server.stats()
    assert st["batch_requests_answered"] == N and st["batches_created"] >= 3
    assert st["batches_by_status"].get("failed", 0) == 0  # judgekit's estimate kept each batch within the queue
    assert e.savings.batch_calls == N


async def test_without_the_setting_refusals_halve_the_batches_until_they_fit(setup):
    server, cache, limit = setup
    e, rs = await run(server, cache, judge(server))
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok][:3]
    st = server.stats()
    assert st["batch_requests_answered"] == N
    assert st["batches_by_status"]["failed"] >= 1  # the whole wave, three times the limit, was refused first
    assert e.batches.lanes["j"].queue.refusals == st["batches_by_status"]["failed"]
    assert (await cache.failures_by_kind())["batch_queue_full"] >= N  # each refused request recorded
