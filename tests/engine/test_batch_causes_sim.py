"""Every unanswered batch request carries its real cause, end to end through each provider's real SDK
against the simulator: the call's error (what the console and the failure lists print), the cache's
failure records and summary.json's ``batch.unanswered``.  Before, all three APIs ended as "no batch
answered this request (expired or cancelled)"."""

import asyncio

import pytest

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_CAUSE_KEY"


def spec(api: str, server: SimServer) -> ModelSpec:
    common = dict(api_key_env=KEY_ENV, batch=True, batch_linger_s=0.02, batch_poll_s=0.02, batch_attempts=2)
    if api == "openai":
        return ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, **common)
    if api == "anthropic":
        return ModelSpec(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url, **common)
    return ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.root_url, **common)


def req(i: int) -> ChatRequest:
    return ChatRequest("j", (Message.user(f"Which answer to question {i} is better?"),), GenParams(max_tokens=40),
                       stage="judge", item_id=str(i))


CASES = {
    # Anthropic's errored results, api_error each time: retried, then the provider's type and message
    "anthropic": (dict(batch_request_errors={"api_error": 1.0}), "transient", "errored (api_error)",
                  "the batch request errored: api_error: The request errored: api_error (simulated)"),
    # a failed Gemini batch operation: its error is the cause
    "gemini": (dict(batch_fail_rate=1.0), "batch_failed", "batch failed",
               "[RESOURCE_EXHAUSTED] Enqueued token limit reached"),
    # an OpenAI batch that expires with every request unanswered
    "openai": (dict(batch_expire_rate=1.0, batch_expire_after_s=0.05), "batch_expired", "expired",
               "[batch_expired] This request could not be executed before the completion window expired"),
}


@pytest.mark.parametrize("api", sorted(CASES))
async def test_an_unanswered_request_says_why(api, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-cause-test-0123456789")
    sim, kind, label, text = CASES[api]
    server = SimServer(SimConfig(batch_turnaround_s=0.05, **sim))
    await server.start()
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    e = Engine({"j": spec(api, server)}, cache)
    await e.start()
    try:
        rs = await asyncio.gather(*(e.call(req(i)) for i in range(1 if api == "openai" else 3)))
    finally:
        await e.close()
    try:
        for r in rs:
            assert not r.ok and r.error_kind == kind, r.error
            assert f"in 2 batches; the last one: {label}: " in r.error and text in r.error, r.error
            assert "expired or cancelled" not in r.error
        assert e.savings.as_dict()["batch"]["unanswered"] == {label: len(rs)}
        kinds = await cache.failures_by_kind()
        assert kinds.get(kind, 0) >= 2 * len(rs), kinds  # each batch's failure recorded with its class
    finally:
        await cache.close()
        await server.stop()
