"""The engine against the simulator over real HTTP, through the real openai SDK."""

import asyncio
import time

import pytest

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import NOT_RUN, Engine, RunStopped
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def model(server, **kw):
    limits = kw.pop("limits", {"max_concurrency": 8})
    return ModelSpec(provider="openai", model=kw.pop("model", "m1"), base_url=server.base_url,
                     api_key_env=kw.pop("api_key_env", None), limits=limits, **kw)


def req(i, alias="a", **kw):
    return ChatRequest(alias, (Message.user(f"question {i}"),), GenParams(max_tokens=kw.pop("max_tokens", 64)),
                       stage="candidate", item_id=str(i), **kw)


async def test_call_then_cache_hit_pays_once(cache):
    async with SimServer(SimConfig(seed=1)) as server:
        engine = Engine({"a": model(server)}, cache)
        await engine.start()
        r1 = await engine.call(req(1))
        assert r1.ok and r1.text and r1.response.usage.output_tokens > 0
        assert r1.response.request_id
        r2 = await engine.call(req(1))
        assert r2.ok and r2.response.cached and r2.text == r1.text
        assert server.stats()["served"] == 1
        st = engine.stats.stage("candidate")
        assert (st.calls, st.cache_hits) == (1, 1)
        await engine.close()


async def test_samples_are_separate_entries(cache):
    async with SimServer(SimConfig(seed=1)) as server:
        engine = Engine({"a": model(server)}, cache)
        await engine.start()
        rs = [await engine.call(req(1, sample_index=k)) for k in range(3)]
        assert all(r.ok for r in rs)
        assert server.stats()["served"] == 3
        await engine.close()


async def test_rate_limits_are_retried_without_failures(cache):
    # the server allows 120/min with a one-second burst; the client is told nothing about it
    async with SimServer(SimConfig(seed=2, rpm=120)) as server:
        engine = Engine({"a": model(server, limits={"max_concurrency": 8, "max_attempts": 10})}, cache)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(12)))
        assert all(r.ok for r in rs)
        st = engine.stats.stage("candidate")
        assert st.rate_limited > 0 and st.retries > 0 and st.failures == 0
        await engine.close()


async def test_client_side_rpm_avoids_429s(cache):
    async with SimServer(SimConfig(seed=2, rpm=300)) as server:
        spec = model(server, limits={"max_concurrency": 8, "requests_per_minute": 300})
        engine = Engine({"a": spec}, cache)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(10)))
        assert all(r.ok for r in rs)
        assert engine.stats.stage("candidate").rate_limited == 0
        await engine.close()


async def test_transient_errors_retry_and_are_recorded(cache):
    async with SimServer(SimConfig(seed=3, error_rate=0.4)) as server:
        engine = Engine({"a": model(server, limits={"max_concurrency": 8, "max_attempts": 8})}, cache)
        engine.retry_wait.wait_for = lambda err, attempt: 0.01  # fast backoff for the test
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(20)))
        assert all(r.ok for r in rs)
        assert engine.stats.stage("candidate").retries > 0
        await cache.flush()
        assert await cache.count_attempts() == engine.stats.stage("candidate").retries
        await engine.close()


async def test_bad_request_fails_the_item_only(cache):
    async with SimServer(SimConfig(seed=1)) as server:
        engine = Engine({"a": model(server)}, cache)
        await engine.start()
        bad = await engine.call(req(1, max_tokens=0))
        good = await engine.call(req(2))
        assert not bad.ok and bad.error_kind == "bad_request" and "max_tokens" in bad.error
        assert good.ok
        # failures are never served as answers
        again = await engine.call(req(1, max_tokens=0))
        assert not again.ok
        assert server.stats()["requests"] >= 3
        await engine.close()


async def test_wrong_key_stops_the_run_fast_naming_the_env_var(cache, monkeypatch):
    monkeypatch.setenv("JK_TEST_KEY", "wrong")
    async with SimServer(SimConfig(seed=1, api_keys=["right"])) as server:
        engine = Engine({"a": model(server, api_key_env="JK_TEST_KEY")}, cache)
        await engine.start()
        with pytest.raises(RunStopped) as e:
            await asyncio.gather(*(engine.call(req(i)) for i in range(50)))
        # stopped at the first refusal: no retries, nothing launched after it (the model's
        # concurrency, 16 by default, bounds what was already in flight beside it)
        assert 1 <= server.stats()["auth_failures"] <= 16
        assert "JK_TEST_KEY" in str(e.value) and "'a'" in str(e.value)
        assert engine.stopping
        await engine.close()


async def test_missing_key_env_var_is_reported_at_start(cache, monkeypatch):
    monkeypatch.delenv("JK_MISSING_KEY", raising=False)
    spec = ModelSpec(provider="openai", model="gpt-4o", api_key_env="JK_MISSING_KEY")
    engine = Engine({"judge": spec}, cache)
    with pytest.raises(RunStopped, match="JK_MISSING_KEY"):
        await engine.start()


async def test_unknown_model_stops_the_run(cache):
    async with SimServer(SimConfig(seed=1, models=["m1"])) as server:
        engine = Engine({"a": model(server, model="nope")}, cache)
        await engine.start()
        with pytest.raises(RunStopped, match="nope"):
            await engine.call(req(1))
        await engine.close()


async def test_budget_stops_launching_calls(cache):
    async with SimServer(SimConfig(seed=1)) as server:
        spec = model(server, price={"input_per_mtok": 1_000_000, "output_per_mtok": 1_000_000},
                     limits={"max_concurrency": 1})
        engine = Engine({"a": spec}, cache, max_cost_usd=50.0)
        await engine.start()
        rs = [await engine.call(req(i)) for i in range(5)]
        # at this price a call may cost > $50 (its input + 64 output tokens): none is launched
        assert all(r.error_kind == NOT_RUN for r in rs)
        assert server.stats()["requests"] == 0
        assert "max-cost" in engine.stop_reason
        await engine.close()


async def test_tokens_per_minute_counted_before_sending_and_reconciled(cache):
    # 6,000 tokens/min = 100/s; each call reserves its prompt + max_tokens (64) before it is sent
    async with SimServer(SimConfig(seed=4)) as server:
        spec = model(server, model="gpt-4o", limits={"max_concurrency": 8, "tokens_per_minute": 6000})
        engine = Engine({"a": spec}, cache)
        await engine.start()
        bucket = engine._bucket_of["a"]
        t0 = time.monotonic()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(4)))
        elapsed = time.monotonic() - t0
        assert all(r.ok for r in rs)
        # ~75 tokens reserved per call: 4 calls need ~300 tokens, the bucket starts with 100
        assert elapsed > 1.0
        before = bucket.tpm.tokens
        bucket.on_success(reserved_tokens=75, used_tokens=30)  # reconcile with the reported usage
        assert bucket.tpm.tokens == min(bucket.tpm.capacity, before + 45)
        await engine.close()


async def test_hung_requests_time_out_and_are_retried(cache):
    async with SimServer(SimConfig(seed=5, hang_rate=0.5, hang_s=30)) as server:
        spec = model(server, limits={"max_concurrency": 8, "timeout_s": 0.3, "max_attempts": 10})
        engine = Engine({"a": spec}, cache)
        engine.retry_wait.wait_for = lambda err, attempt: 0.01
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(8)))
        assert all(r.ok for r in rs)
        assert engine.stats.stage("candidate").retries > 0
        await cache.flush()
        kinds = await cache.failures_by_kind()
        assert set(kinds) == {"transient"}
        await engine.close()


async def test_identical_calls_in_flight_are_paid_once(cache):
    async with SimServer(SimConfig(seed=1, latency_ms=80)) as server:
        engine = Engine({"a": model(server)}, cache)
        await engine.start()
        same = [ChatRequest("a", (Message.user("one question"),), GenParams(max_tokens=32), stage=s)
                for s in ("cot", "self_refine", "image_retrieval")]
        rs = await asyncio.gather(*(engine.call(r) for r in same))
        assert all(r.ok for r in rs) and len({r.text for r in rs}) == 1
        assert server.stats()["served"] == 1
        assert engine.stats.paid_calls == 1 and engine.stats.cache_hits == 2
        # and once finished, a twin whose cache lookup raced the write is still not paid again
        assert (await engine.call(same[0])).ok and server.stats()["served"] == 1
        await engine.close()


async def test_a_failed_call_in_flight_fails_its_twins_too(cache):
    async with SimServer(SimConfig(seed=1, error_rate=1.0, latency_ms=20)) as server:
        engine = Engine({"a": model(server, limits={"max_concurrency": 8, "max_attempts": 2})}, cache)
        await engine.start()
        r = ChatRequest("a", (Message.user("q"),), GenParams(max_tokens=8), stage="x")
        rs = await asyncio.gather(engine.call(r), engine.call(r))
        assert [x.error_kind for x in rs] == ["transient", "transient"]
        assert server.stats()["errors_injected"] == 2  # two attempts of ONE call
        await engine.close()


async def test_the_calls_out_at_a_stop_are_counted_when_it_comes(cache):
    # the closing message's "of N calls in flight at the stop, M landed" reads N from the stop
    # itself: a watcher that wakes later would see fewer out than later land (55 out, 60 landed)
    async with SimServer(SimConfig(seed=1, latency_ms=150)) as server:
        engine = Engine({"a": model(server, limits={"max_concurrency": 16})}, cache)
        await engine.start()
        calls = [asyncio.create_task(engine.call(req(i))) for i in range(40)]
        while engine.in_flight < 16:
            await asyncio.sleep(0.005)
        engine.stop("interrupted")
        out = engine.in_flight
        results = await asyncio.gather(*calls)
        assert engine.in_flight_at_stop == out == 16
        assert engine.landed_after_stop == out
        assert sum(r.ok for r in results) == out  # what was out landed and was kept; the rest not made
        await engine.close()
