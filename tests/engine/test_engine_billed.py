"""Calls are charged as the providers bill them, through the official SDKs against the simulator's
usage details: Gemini thoughts as output, OpenAI reasoning inside the completion tokens (not
twice), cached prompt tokens at the cached rate, and a reply whose budget went into reasoning is
charged what it was billed though it carries no answer."""

from __future__ import annotations

import pytest

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.prices import price_usd, usage_usd
from judgekit.engine import Engine
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message, Usage

TEXT = "Describe the old mill by the river in detail, with its wheel, its miller and the weir. " * 12


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def req(alias: str, max_tokens: int, item: str = "1") -> ChatRequest:
    return ChatRequest(alias, (Message.user(TEXT),), GenParams(max_tokens=max_tokens), stage="judge", item_id=item)


async def test_gemini_thoughts_and_cached_prompt_are_charged_as_billed(cache, monkeypatch):
    monkeypatch.setenv("JK_GEMINI_KEY", "sim-gemini-key-123")
    cfg = SimConfig(reasoning_tokens={"gemini-2.5-pro": 1500}, cached_prompt_share={"gemini-2.5-pro": 0.25})
    async with SimServer(cfg) as server:
        spec = ModelSpec(provider="gemini", model="gemini-2.5-pro", base_url=server.root_url,
                         api_key_env="JK_GEMINI_KEY")
        engine = Engine({"judge": spec}, cache, max_cost_usd=5.0)
        await engine.start()
        r = await engine.call(req("judge", 4000))
        assert r.ok, r.error
        u = r.response.usage
        assert u.reasoning_tokens == 1500 and u.output_tokens > 1500  # thoughts + the answer's tokens
        assert u.cached_input_tokens == int(u.input_tokens * 0.25) > 0
        assert r.response.cost_usd == pytest.approx(usage_usd("gemini", "gemini-2.5-pro", u))
        # the thoughts are most of the bill: 1,500 x $10 / Mtok on top of the answer (judgekit
        # charged the answer alone)
        answer_only = price_usd("gemini", "gemini-2.5-pro", u.input_tokens, u.output_tokens - 1500,
                                cached_input_tokens=u.cached_input_tokens)
        assert r.response.cost_usd == pytest.approx(answer_only + 0.015)
        assert engine.stats.stage("judge").over_reservation == 0  # the reservation held the thoughts
        await engine.close()


async def test_openai_reasoning_counted_once_and_cached_prompt_at_the_cached_rate(cache):
    cfg = SimConfig(reasoning_tokens={"o3": 120}, cached_prompt_share={"o3": 0.5})
    async with SimServer(cfg) as server:
        spec = ModelSpec(provider="openai", model="o3", base_url=server.base_url)
        engine = Engine({"judge": spec}, cache, max_cost_usd=5.0)
        await engine.start()
        r = await engine.call(req("judge", 400))
        assert r.ok, r.error
        u = r.response.usage
        assert u.reasoning_tokens == 120 and u.output_tokens > 120  # inside completion_tokens
        assert u.cached_input_tokens == u.input_tokens // 2 > 0
        assert r.response.cost_usd == pytest.approx(
            ((u.input_tokens - u.cached_input_tokens) * 2.0 + u.cached_input_tokens * 0.5 + u.output_tokens * 8.0) / 1e6)
        assert u.output_tokens <= 400  # max_completion_tokens bounds reasoning and text together
        assert engine.stats.stage("judge").usage_anomalies == 0

        # a budget the reasoning spends whole: no answer, but billed, and charged so
        first = engine.stats.spent_usd
        r = await engine.call(req("judge", 100, item="2"))
        assert not r.ok and r.error_kind == "no_output_budget"
        billed = Usage(u.input_tokens, 100, cached_input_tokens=u.input_tokens // 2, reasoning_tokens=100)
        assert engine.stats.spent_usd - first == pytest.approx(usage_usd("openai", "o3", billed))
        assert engine.cap.spent == pytest.approx(engine.stats.spent_usd)
        await engine.close()
