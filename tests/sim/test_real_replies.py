"""The simulator's real-API reply shapes, through the official SDKs: filtered, refused, blocked,
empty and budget-exhausted replies, and the usage details of reasoning/thinking and cached tokens."""

from __future__ import annotations

import pytest
from google import genai
from hypothesis import given, settings
from hypothesis import strategies as hs

from judgekit.sim import SimConfig, estimate_prompt_tokens
from judgekit.sim.api_replies import GEMINI_FAULTS, OPENAI_FAULTS, REFUSAL_TEXT, fault_for
from judgekit.sim.config import REPLY_FAULTS
from judgekit.sim.protocol import _AZURE, _GEMINI, _OPENAI

from sdk_clients import gm, oa  # noqa: E402


def msgs(text: str = "Write about the harbour.") -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def gcfg(max_output_tokens: int | None = None) -> genai.types.GenerateContentConfig:
    return genai.types.GenerateContentConfig(max_output_tokens=max_output_tokens)


# ------------------------------------------------------------------------------- OpenAI


async def test_openai_no_answer_shapes(sim_factory):
    s = await sim_factory(reply_fault_models={"filtered": "content_filter", "refuser": "refusal",
                                              "o3": "reasoning_exhausted", "blank": "empty"})
    c = oa(s)
    r = await c.chat.completions.create(model="filtered", messages=msgs())
    assert r.choices[0].finish_reason == "content_filter" and r.choices[0].message.content is None

    r = await c.chat.completions.create(model="refuser", messages=msgs())
    m = r.choices[0].message
    assert m.content is None and m.refusal == REFUSAL_TEXT and r.choices[0].finish_reason == "stop"

    r = await c.chat.completions.create(model="o3", messages=msgs(), max_completion_tokens=300)
    assert r.choices[0].message.content == "" and r.choices[0].finish_reason == "length"
    u = r.usage
    assert u.completion_tokens == 300 == u.completion_tokens_details.reasoning_tokens

    r = await c.chat.completions.create(model="blank", messages=msgs())
    assert r.choices[0].message.content is None and r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens == 0

    st = s.stats()
    assert st["served_by_fault"] == {"content_filter": 1, "refusal": 1, "reasoning_exhausted": 1, "empty": 1}
    assert st["served"] == 4 and st["served_by_kind"] == {"answer": 4}


async def test_fault_rates_are_deterministic_and_empty_is_per_attempt(sim_factory):
    s = await sim_factory(seed=3, reply_faults={"content_filter": 0.2, "refusal": 0.1, "empty": 0.2})
    c = oa(s)
    outcome: dict[int, str] = {}
    for i in range(200):
        r = await c.chat.completions.create(model="m", messages=msgs(f"question {i}"), max_tokens=5)
        ch = r.choices[0]
        outcome[i] = ("content_filter" if ch.finish_reason == "content_filter" else
                      "refusal" if ch.message.refusal else "empty" if ch.message.content is None else "answer")
    counts = {k: list(outcome.values()).count(k) for k in ("content_filter", "refusal", "empty")}
    assert 20 <= counts["content_filter"] <= 60 and 8 <= counts["refusal"] <= 35 and 20 <= counts["empty"] <= 60
    assert s.stats()["served_by_fault"] == counts
    # a filter or refusal comes back on every retry; an empty reply is drawn again
    for i, kind in outcome.items():
        if kind in ("content_filter", "refusal"):
            r = await c.chat.completions.create(model="m", messages=msgs(f"question {i}"), max_tokens=5)
            assert r.choices[0].finish_reason == "content_filter" or r.choices[0].message.refusal
    recovered = 0
    for i in [i for i, k in outcome.items() if k == "empty"][:10]:
        for _ in range(8):
            r = await c.chat.completions.create(model="m", messages=msgs(f"question {i}"), max_tokens=5)
            if r.choices[0].message.content:
                recovered += 1
                break
    assert recovered == 10


async def test_openai_usage_details(sim_factory):
    s = await sim_factory(reasoning_tokens={"gpt-5": 120}, cached_prompt_share={"gpt-5": 0.5})
    c = oa(s)
    text = "Summarise the story of the lighthouse keeper. " * 20
    r = await c.chat.completions.create(model="gpt-5", messages=msgs(text), max_completion_tokens=400)
    u = r.usage
    visible = round(len(r.choices[0].message.content.split()) * 1.3)
    assert u.completion_tokens_details.reasoning_tokens == 120
    assert u.completion_tokens == visible + 120  # reasoning is inside completion_tokens
    assert u.prompt_tokens == estimate_prompt_tokens(len(text), 0)
    assert u.prompt_tokens_details.cached_tokens == u.prompt_tokens // 2
    assert u.completion_tokens <= 400
    # a budget not above the reasoning spend leaves no text
    r = await c.chat.completions.create(model="gpt-5", messages=msgs(text), max_completion_tokens=100)
    assert r.choices[0].message.content == "" and r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens_details.reasoning_tokens == 100 == r.usage.completion_tokens
    # every reply carries the details, zero by default
    r = await c.chat.completions.create(model="plain", messages=msgs(), max_tokens=10)
    assert r.usage.prompt_tokens_details.cached_tokens == 0
    assert r.usage.completion_tokens_details.reasoning_tokens == 0


# ------------------------------------------------------------------------------- Gemini


@pytest.mark.parametrize("fault, reason", [
    ("prompt_blocked_safety", "SAFETY"),
    ("prompt_blocked_other", "OTHER"),
    ("prompt_blocked_prohibited", "PROHIBITED_CONTENT"),
])
async def test_gemini_blocked_prompt_has_no_candidates(sim_factory, fault, reason):
    s = await sim_factory(reply_fault_models={"gemini-2.5-flash": fault})
    r = await gm(s).aio.models.generate_content(model="gemini-2.5-flash", contents="Tell me a story.")
    assert not r.candidates and r.text is None
    assert r.prompt_feedback.block_reason == genai.types.BlockedReason(reason)
    assert r.usage_metadata.prompt_token_count > 0 and r.usage_metadata.candidates_token_count is None
    assert s.stats()["served_by_fault"] == {fault: 1}


@pytest.mark.parametrize("fault, finish", [
    ("finish_safety", "SAFETY"),
    ("finish_recitation", "RECITATION"),
    ("finish_prohibited", "PROHIBITED_CONTENT"),
    ("content_filter", "SAFETY"),  # the OpenAI name maps to Gemini's equivalent
])
async def test_gemini_candidate_stopped_without_text(sim_factory, fault, finish):
    s = await sim_factory(reply_fault_models={"gemini-2.5-flash": fault})
    r = await gm(s).aio.models.generate_content(model="gemini-2.5-flash", contents="Tell me a story.")
    cand = r.candidates[0]
    assert cand.finish_reason == genai.types.FinishReason(finish)
    assert cand.content is None and r.text is None
    if finish == "SAFETY":
        assert any(rating.blocked for rating in cand.safety_ratings)


async def test_gemini_thinking_usage_and_exhausted_budget(sim_factory):
    s = await sim_factory(reasoning_tokens={"gemini-2.5-pro": 1500}, cached_prompt_share={"gemini-2.5-pro": 0.25},
                          reply_fault_models={"gemini-blank": "empty", "gemini-refuser": "refusal"})
    g = gm(s)
    text = "Describe the old mill by the river in detail. " * 10
    r = await g.aio.models.generate_content(model="gemini-2.5-pro", contents=text, config=gcfg(4000))
    u = r.usage_metadata
    assert r.text and u.thoughts_token_count == 1500
    assert u.candidates_token_count == round(len(r.text.split()) * 1.3)  # thoughts are not in here
    assert u.total_token_count == u.prompt_token_count + u.candidates_token_count + 1500
    assert u.cached_content_token_count == int(u.prompt_token_count * 0.25)
    # the budget goes to thinking: MAX_TOKENS before any text
    r = await g.aio.models.generate_content(model="gemini-2.5-pro", contents=text, config=gcfg(1000))
    cand = r.candidates[0]
    assert cand.finish_reason == genai.types.FinishReason.MAX_TOKENS and r.text is None
    assert not (cand.content and cand.content.parts)
    assert r.usage_metadata.thoughts_token_count == 1000 and r.usage_metadata.candidates_token_count is None
    # empty with STOP; a refusal has no Gemini shape, so the answer is served
    r = await g.aio.models.generate_content(model="gemini-blank", contents="hi")
    assert r.candidates[0].finish_reason == genai.types.FinishReason.STOP and r.text is None
    r = await g.aio.models.generate_content(model="gemini-refuser", contents="hi")
    assert r.text
    # a model with no thinking reports no thoughts
    r = await g.aio.models.generate_content(model="gemini-plain", contents="hi")
    assert r.usage_metadata.thoughts_token_count is None
    st = s.stats()
    assert st["served_by_fault"] == {"thinking_exhausted": 1, "empty": 1}
    assert st["served_by_api"] == {"gemini": 5}


# ------------------------------------------------------------------------------- the draw


_FAULT = hs.sampled_from(REPLY_FAULTS)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(shares=hs.dictionaries(_FAULT, hs.floats(0, 0.25), max_size=4),
       pinned=hs.one_of(hs.none(), _FAULT),
       api=hs.sampled_from([_OPENAI, _AZURE, _GEMINI]),
       digest=hs.binary(min_size=32, max_size=32), attempt=hs.integers(1, 50))
def test_fault_draw_property(shares, pinned, api, digest, attempt):
    """The outcome is always one the calling API has, the same for the same draw, and a pinned
    model's outcome wins (mapped to the API's name, or an answer where it has none)."""
    cfg = SimConfig(reply_faults=shares, reply_fault_models={"p": pinned} if pinned else {})
    allowed = GEMINI_FAULTS if api == _GEMINI else OPENAI_FAULTS
    for model in ("m", "p"):
        f = fault_for(cfg, api, model, digest, attempt)
        assert f is None or f in allowed
        assert f == fault_for(cfg, api, model, digest, attempt)
        if f is not None and f != "empty" and model == "m":  # sticky outcomes ignore the attempt
            assert fault_for(cfg, api, model, digest, attempt + 1) == f
    if pinned is not None:
        f = fault_for(cfg, api, "p", digest, attempt)
        equivalent = {"content_filter": "finish_safety", "reasoning_exhausted": "thinking_exhausted"}
        names = {pinned, equivalent.get(pinned), {v: k for k, v in equivalent.items()}.get(pinned)}
        assert f in names or (f is None and not (names & allowed))


def test_fault_draw_matches_configured_shares():
    cfg = SimConfig(reply_faults={"refusal": 0.25, "empty": 0.25})
    got = {"refusal": 0, "empty": 0, None: 0}
    import hashlib

    for i in range(4000):
        got[fault_for(cfg, _OPENAI, "m", hashlib.sha256(str(i).encode()).digest(), 1)] += 1
    assert 850 <= got["refusal"] <= 1150 and 850 <= got["empty"] <= 1150
