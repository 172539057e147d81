"""Issue 24 point 6 from the outside: a model priced by a spec's ``price`` override (input and
output prices only) is charged what the provider bills for prompt-cache reads and writes, through
each provider's official SDK against a small scripted server (real HTTP): the reply's cost, the
cost cap's spent figure and the "prompt cache saved" figure all use the cache rates (Anthropic:
reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x; OpenAI and Azure: reads 0.5x; Gemini: reads
0.25x), and the saved figure is not zero."""

from __future__ import annotations

import pytest
from odd_server import OddServer, Reply, completion, gemini_reply

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.prices import PriceOverride
from judgekit.engine import Engine
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_PRICE_TEST_KEY"
PRICE = PriceOverride(input_per_mtok=3.0, output_per_mtok=15.0)
# 10,000 input tokens: 6,000 read from the cache, 2,500 written to it (500 of them for an hour), 100 out
PLAIN = (10_000 * 3.0 + 100 * 15.0) / 1e6
PROMPT = "Rate the answer below for clarity and accuracy. " * 250  # 12,250 bytes: it may hold 10,000 tokens


def anthropic_message() -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "my-claude",
            "content": [{"type": "text", "text": "Rating: [[7]]"}], "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1_500, "cache_read_input_tokens": 6_000, "cache_creation_input_tokens": 2_500,
                      "cache_creation": {"ephemeral_5m_input_tokens": 2_000, "ephemeral_1h_input_tokens": 500},
                      "output_tokens": 100}}


OPENAI_USAGE = {"prompt_tokens": 10_000, "completion_tokens": 100, "total_tokens": 10_100,
                "prompt_tokens_details": {"cached_tokens": 6_000}}
GEMINI_USAGE = {"promptTokenCount": 10_000, "candidatesTokenCount": 100, "cachedContentTokenCount": 6_000,
                "totalTokenCount": 10_100}

CASES = {
    # provider: (model, the server's reply, what the call costs by hand)
    "anthropic": ("my-claude", anthropic_message(),
                  (1_500 * 3.0 + 6_000 * 0.3 + 2_000 * 3.75 + 500 * 6.0 + 100 * 15.0) / 1e6),
    "openai": ("my-gpt", completion("Rating: [[7]]", usage=OPENAI_USAGE), (4_000 * 3.0 + 6_000 * 1.5 + 1_500) / 1e6),
    "azure": ("my-deployment", completion("Rating: [[7]]", usage=OPENAI_USAGE),
              (4_000 * 3.0 + 6_000 * 1.5 + 1_500) / 1e6),
    "gemini": ("my-gemini", gemini_reply([{"text": "Rating: [[7]]"}], usage=GEMINI_USAGE),
               (4_000 * 3.0 + 6_000 * 0.75 + 1_500) / 1e6),
}


def spec(provider: str, model: str, url: str) -> ModelSpec:
    extra = {"api_version": "2024-10-21"} if provider == "azure" else {}
    base = url + "/v1" if provider == "openai" else url
    return ModelSpec(provider=provider, model=model, base_url=base, api_key_env=KEY_ENV, price=PRICE,
                     params={"max_tokens": 200}, **extra)


@pytest.mark.parametrize("provider", sorted(CASES))
async def test_an_override_charges_cache_reads_and_writes_at_their_rates(provider, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-key-0123456789")
    model, body, expected = CASES[provider]
    cache = await CacheStore.open(tmp_path / "cache.duckdb", run_id="t")
    try:
        async with OddServer(Reply(200, body)) as server:
            engine = Engine({"judge": spec(provider, model, server.url)}, cache, max_cost_usd=1.0)
            await engine.start()
            try:
                r = await engine.call(ChatRequest("judge", (Message.user(PROMPT),),
                                                  GenParams(max_tokens=200), stage="judge", item_id="1"))
            finally:
                await engine.close()
    finally:
        await cache.close()
    assert r.ok, r.error
    u = r.response.usage
    assert (u.input_tokens, u.cached_input_tokens, u.output_tokens) == (10_000, 6_000, 100)
    if provider == "anthropic":
        assert (u.cache_write_tokens, u.cache_write_1h_tokens) == (2_500, 500)
    assert r.response.cost_usd == pytest.approx(expected)
    assert engine.cap.spent == pytest.approx(expected)  # what the cap counts
    saved = engine.savings.as_dict()["prompt_cache"]
    assert saved["calls"] == 1 and saved["cached_input_tokens"] == 6_000
    assert saved["saved_usd"] == pytest.approx(PLAIN - expected, abs=1e-6) and saved["saved_usd"] > 0.005
    assert engine.stats.stage("judge").over_reservation == 0  # the reservation held what was billed
