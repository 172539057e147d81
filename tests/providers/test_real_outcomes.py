"""The providers against the simulator's real-API shapes, through the official SDKs (openai and
google-genai): spent quotas, Gemini's RetryInfo, filtered / refused / blocked / budget-spent
replies, truncated replies, reasoning / thinking and cached tokens, x-should-retry."""

from __future__ import annotations

import pytest

from judgekit.config import ModelSpec
from judgekit.errors import (FATAL_ERRORS, Blocked, ContentFiltered, EmptyReply, NoAnswer, NoOutputBudget,
                             ProviderError, QuotaExhausted, RateLimited, Refused, TransientError)
from judgekit.providers import create_provider
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_REAL_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k-real-shapes-0123")


def spec(server: SimServer, model: str, provider: str = "openai", **kw) -> ModelSpec:
    url = server.root_url if provider == "gemini" else server.base_url
    return ModelSpec(provider=provider, model=model, base_url=url, api_key_env=KEY_ENV, **kw)


async def call(server: SimServer, model: str, provider: str = "openai", *, text: str = "Tell me about the harbour.",
               params: GenParams = GenParams(max_tokens=200), **kw):
    """(provider, the response or the ProviderError) of one call."""
    prov = create_provider("m", spec(server, model, provider, **kw))
    await prov.start()
    try:
        return prov, await prov.generate(ChatRequest("m", (Message.user(text),), params))
    except ProviderError as e:
        return prov, e
    finally:
        await prov.close()


@pytest.fixture
async def sim():
    servers: list[SimServer] = []

    async def make(**kw) -> SimServer:
        s = SimServer(SimConfig(**kw))
        await s.start()
        servers.append(s)
        return s

    yield make
    for s in servers:
        await s.stop()


# --------------------------------------------------------------------------------------- quota

@pytest.mark.parametrize("kind", ["insufficient_quota", "credit_balance_exhausted",
                                  "organization_spend_limit_exceeded", "project_spend_limit_exceeded",
                                  "organization_usage_limit_exceeded"])
async def test_openai_quota_codes_stop_the_run(sim, kind):
    s = await sim(quota_exhausted_models={"gpt-4o": kind})
    prov, err = await call(s, "gpt-4o")
    assert type(err) is QuotaExhausted and isinstance(err, FATAL_ERRORS) and not err.retryable
    assert err.reason == kind
    msg = prov.describe_error(err)
    assert msg.startswith("model 'm' (openai gpt-4o): out of quota") and kind in msg and "billing" in msg


async def test_openai_rate_limit_is_not_quota(sim):
    s = await sim(rpm=1, burst_s=1)
    await call(s, "gpt-4o")
    _, err = await call(s, "gpt-4o", text="another")
    assert type(err) is RateLimited and err.retryable and err.retry_after is not None


@pytest.mark.parametrize("kind", ["daily", "free_tier_daily"])
async def test_gemini_per_day_quota_stops_the_run(sim, kind):
    s = await sim(quota_exhausted_models={"gemini-2.5-flash": kind})
    prov, err = await call(s, "gemini-2.5-flash", "gemini")
    assert type(err) is QuotaExhausted and isinstance(err, FATAL_ERRORS)
    assert "PerDay" in err.reason and err.resets == "at midnight Pacific time"
    msg = prov.describe_error(err)
    assert "gemini-2.5-flash" in msg and "PerDay" in msg and "resets at midnight Pacific time" in msg


@pytest.mark.parametrize("free_tier", [True, False])
async def test_gemini_rate_limit_waits_its_retry_info(sim, free_tier):
    # the real API sends no Retry-After: the wait is RetryInfo.retryDelay, the per-minute limit is
    # not a quota, free tier or not
    s = await sim(rpm=1, burst_s=1, gemini_free_tier=free_tier)
    await call(s, "gemini-2.5-flash", "gemini")
    _, err = await call(s, "gemini-2.5-flash", "gemini", text="another")
    assert type(err) is RateLimited and err.retryable
    assert err.retry_after is not None and 1 <= err.retry_after <= 61


# ------------------------------------------------------------------------- replies with no answer

@pytest.mark.parametrize("fault, cls, words", [
    ("content_filter", ContentFiltered, "content_filter"),
    ("refusal", Refused, "refused"),
    ("reasoning_exhausted", NoOutputBudget, "raise max_tokens"),
])
async def test_openai_no_answer_replies_are_classified_not_retried(sim, fault, cls, words):
    s = await sim(reply_fault_models={"o3": fault})
    prov, err = await call(s, "o3", params=GenParams(max_tokens=300))
    assert type(err) is cls and isinstance(err, NoAnswer) and not err.retryable
    assert words in str(err) and err.raw and '"choices"' in err.raw
    assert err.usage is not None and f": {err.kind}: " in prov.describe_error(err)
    assert err.record_text() == f"{err} | reply: {err.raw}"  # what the attempts table keeps
    if fault == "reasoning_exhausted":
        assert err.usage.reasoning_tokens == err.usage.output_tokens == 300


async def test_an_empty_reply_with_no_reason_is_retried(sim):
    s = await sim(reply_fault_models={"m": "empty"})
    _, err = await call(s, "m")
    assert type(err) is EmptyReply and err.retryable and isinstance(err, TransientError)


@pytest.mark.parametrize("fault, cls, words", [
    ("prompt_blocked_safety", Blocked, "blockReason SAFETY"),
    ("prompt_blocked_other", Blocked, "blockReason OTHER"),
    ("prompt_blocked_prohibited", Blocked, "blockReason PROHIBITED_CONTENT"),
    ("finish_safety", ContentFiltered, "SAFETY"),
    ("finish_recitation", ContentFiltered, "RECITATION"),
    ("finish_prohibited", ContentFiltered, "PROHIBITED_CONTENT"),
    ("thinking_exhausted", NoOutputBudget, "raise max_tokens"),
    ("empty", EmptyReply, "no text"),
])
async def test_gemini_no_answer_replies_are_classified(sim, fault, cls, words):
    s = await sim(reply_fault_models={"gemini-2.5-flash": fault})
    _, err = await call(s, "gemini-2.5-flash", "gemini")
    assert type(err) is cls, err
    assert words in str(err) and err.raw
    assert err.retryable is (cls is EmptyReply)
    if fault == "thinking_exhausted":  # thoughts are billed as output
        assert err.usage.reasoning_tokens > 0 and err.usage.output_tokens == err.usage.reasoning_tokens


async def test_a_truncated_reply_is_an_answer_marked_length_on_both_apis(sim):
    s = await sim()
    text = "Describe the old harbour, its boats and its people in detail. " * 3
    for provider, model in (("openai", "gpt-4o"), ("gemini", "gemini-2.0-flash")):
        _, r = await call(s, model, provider, text=text, params=GenParams(max_tokens=3))
        assert not isinstance(r, ProviderError), r
        assert r.text.strip() and r.finish_reason == "length" and r.truncated, (provider, r)
        _, r = await call(s, model, provider, text=text, params=GenParams(max_tokens=2000))
        assert r.finish_reason == "stop" and not r.truncated


# ------------------------------------------------------------------- reasoning, thinking, cached

async def test_openai_reasoning_and_cached_tokens_are_read(sim):
    s = await sim(reasoning_tokens={"gpt-5": 120}, cached_prompt_share={"gpt-5": 0.5})
    _, r = await call(s, "gpt-5", text="Summarise the story of the lighthouse keeper. " * 20,
                      params=GenParams(max_tokens=400))
    u = r.usage
    assert u.reasoning_tokens == 120 and u.output_tokens > 120  # reasoning is inside the output
    assert u.cached_input_tokens == u.input_tokens // 2 > 0


async def test_gemini_thoughts_are_billed_as_output(sim):
    s = await sim(reasoning_tokens={"gemini-2.5-pro": 1500}, cached_prompt_share={"gemini-2.5-pro": 0.25})
    _, r = await call(s, "gemini-2.5-pro", "gemini", text="Summarise the story of the lighthouse keeper. " * 20,
                      params=GenParams(max_tokens=4000))
    u = r.usage
    assert u.reasoning_tokens == 1500 and u.output_tokens > 1500  # candidates + thoughts
    assert 0 < u.cached_input_tokens < u.input_tokens


# ---------------------------------------------------------------------------- x-should-retry

async def test_x_should_retry_false_makes_a_retryable_error_final(sim):
    s = await sim(error_rate=1.0, should_retry_false=["server_error"])
    _, err = await call(s, "gpt-4o")
    assert isinstance(err, TransientError) and not err.retryable and "x-should-retry: false" in str(err)
    s2 = await sim(error_rate=1.0)
    _, err = await call(s2, "gpt-4o")
    assert isinstance(err, TransientError) and err.retryable


@pytest.mark.parametrize("status", [400, 422])
async def test_x_should_retry_true_makes_a_4xx_retryable(status):
    from odd_server import OddServer, Reply

    body = {"error": {"message": "try me again", "type": "invalid_request_error", "code": None}}
    async with OddServer(Reply(status, body, headers={"x-should-retry": "true"}), Reply(status, body)) as server:
        prov = create_provider("m", ModelSpec(provider="openai", model="gpt-4o", base_url=server.url + "/v1",
                                              api_key_env=KEY_ENV))
        await prov.start()
        errors = []
        for _ in range(2):
            try:
                await prov.generate(ChatRequest("m", (Message.user("hi"),), GenParams(max_tokens=5)))
            except ProviderError as e:
                errors.append(e)
        await prov.close()
    assert type(errors[0]) is TransientError and errors[0].retryable and "x-should-retry: true" in str(errors[0])
    assert not errors[1].retryable and errors[1].kind == "bad_request"


async def test_quota_with_x_should_retry_false_stays_quota(sim):
    s = await sim(quota_exhausted_models={"gpt-4o": "insufficient_quota"}, should_retry_false=["quota"])
    _, err = await call(s, "gpt-4o")
    assert type(err) is QuotaExhausted
