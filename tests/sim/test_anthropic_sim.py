"""The simulator's Messages API in Anthropic's shapes, over real HTTP: replies (content blocks,
stop reasons, usage with cache fields, thinking), errors (bodies, 429 with retry-after and
anthropic-ratelimit-* headers, 529 as an injected fault, the real API's 400s, a spent credit
balance), the key in x-api-key, counters, and the prompt cache (a marked prefix written on
first sight and read after, the minimum sizes, the lifetime, the longest prefix); a request
hashes as its chat-completions twin does."""

from __future__ import annotations

import base64
import io
import json
import time
from datetime import datetime

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict

from judgekit.sim.anthropic_api import CACHE_TTL_S, AnthropicSim, parse_messages
from judgekit.sim.protocol import _parse_openai

SEED = b"7"


def png_b64(size: tuple[int, int], color: tuple[int, int, int] = (1, 2, 3)) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def img(b64: str, **extra) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}, **extra}


def text(t: str, **extra) -> dict:
    return {"type": "text", "text": t, **extra}


def body(*content, model: str = "sim-judge", max_tokens: int | None = 200, **top) -> dict:
    out = {"model": model, "messages": [{"role": "user", "content": list(content) or "Tell me about the harbour."}]}
    if max_tokens is not None:
        out["max_tokens"] = max_tokens
    out.update(top)
    return out


async def post(server, payload, *, key: str | None = "k", raw: bytes | None = None):
    headers = {"anthropic-version": "2023-06-01"}
    if key is not None:
        headers["x-api-key"] = key
    async with aiohttp.ClientSession() as session:
        async with session.post(server.root_url + "/v1/messages", data=raw if raw is not None else json.dumps(payload),
                                headers={**headers, "content-type": "application/json"}) as r:
            return r.status, CIMultiDict(r.headers), await r.json()


def reset_in(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() - time.time()


# ------------------------------------------------------------------------------ replies

async def test_a_reply_in_the_messages_shape(sim_factory):
    s = await sim_factory(seed=7, rpm=600, tpm=100_000)
    status, headers, data = await post(s, body())
    assert status == 200
    assert data["type"] == "message" and data["role"] == "assistant" and data["model"] == "sim-judge"
    assert data["id"].startswith("msg_") and data["stop_reason"] in ("end_turn", "max_tokens")
    assert [b["type"] for b in data["content"]] == ["text"] and data["content"][0]["text"].strip()
    u = data["usage"]
    assert u["input_tokens"] > 0 and u["output_tokens"] > 0
    assert u["cache_creation_input_tokens"] == u["cache_read_input_tokens"] == 0
    assert u["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    assert headers["request-id"].startswith("req_")
    assert headers["anthropic-ratelimit-requests-limit"] == "600"
    assert headers["anthropic-ratelimit-tokens-limit"] == "100000"
    assert 0 <= reset_in(headers["anthropic-ratelimit-requests-reset"]) <= 2
    assert not any(h.lower().startswith("x-ratelimit") for h in headers)
    stats = s.stats()
    assert stats["requests"] == stats["served"] == 1 and stats["served_by_api"] == {"anthropic": 1}


async def test_thinking_stop_sequences_and_a_truncated_reply(sim_factory):
    s = await sim_factory(seed=7, reasoning_tokens={"thinker": 50})
    _, _, plain = await post(s, body(max_tokens=4000))
    text = plain["content"][0]["text"]
    word = text.split()[3]
    _, _, stopped = await post(s, body(max_tokens=4000, stop_sequences=[word]))
    assert stopped["stop_reason"] == "stop_sequence" and stopped["stop_sequence"] == word
    assert stopped["content"][0]["text"] == text[:text.index(word)]
    _, _, cut = await post(s, body(max_tokens=5))
    assert cut["stop_reason"] == "max_tokens" and cut["content"][0]["text"]
    _, _, thought = await post(s, body(model="thinker", max_tokens=400))
    assert [b["type"] for b in thought["content"]] == ["thinking", "text"]
    assert thought["usage"]["output_tokens"] > 50
    _, _, spent = await post(s, body(model="thinker", max_tokens=50))
    assert spent["stop_reason"] == "max_tokens" and [b["type"] for b in spent["content"]] == ["thinking"]
    assert spent["usage"]["output_tokens"] == 50


@pytest.mark.parametrize("fault, stop, content", [
    ("refusal", "refusal", []), ("empty", "end_turn", []), ("content_filter", "end_turn", ["text"]),
])
async def test_reply_faults_in_the_messages_shape(sim_factory, fault, stop, content):
    s = await sim_factory(reply_fault_models={"sim-judge": fault})
    status, _, data = await post(s, body(max_tokens=4000))
    assert status == 200 and data["stop_reason"] == stop and [b["type"] for b in data["content"]] == content
    assert s.stats()["served_by_fault"] == ({} if fault == "content_filter" else {fault: 1})


# ------------------------------------------------------------------------------ errors

def is_error(data: dict, etype: str) -> bool:
    return data["type"] == "error" and data["error"]["type"] == etype and data["request_id"].startswith("req_")


async def test_a_429_says_when_to_retry_in_anthropics_headers(sim_factory):
    s = await sim_factory(rpm=60)
    first = await post(s, body())
    status, headers, data = await post(s, body(max_tokens=201))
    assert first[0] == 200 and first[1]["anthropic-ratelimit-requests-remaining"] == "0"
    assert status == 429 and is_error(data, "rate_limit_error")
    assert "rate limit for your organization" in data["error"]["message"] and "60 requests per minute" in \
        data["error"]["message"]
    assert headers["retry-after"] == "1" and headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert 0 < reset_in(headers["anthropic-ratelimit-requests-reset"]) <= 1.5
    assert "retry-after-ms" not in {h.lower() for h in headers}
    assert s.stats()["rate_limited"] == 1


async def test_injected_faults_are_500_api_error_or_529_overloaded(sim_factory):
    s = await sim_factory(error_rate=1.0)
    seen = [await post(s, body(text(f"question {i}"))) for i in range(24)]
    statuses = [st_ for st_, _, _ in seen]
    assert set(statuses) == {500, 529}
    assert all(is_error(d, "overloaded_error" if st_ == 529 else "api_error") for st_, _, d in seen)
    stats = s.stats()
    assert stats["errors_injected"] == 24 and stats["anthropic_overloaded"] == statuses.count(529)


@pytest.mark.parametrize("payload, words", [
    (body(max_tokens=None), "max_tokens: Field required"),
    (body(model="claude-sonnet-4-5", temperature=0.0, top_p=0.9), "cannot both be specified"),
    (body(model="claude-3-7-sonnet-latest", max_tokens=4000, thinking={"type": "enabled", "budget_tokens": 500}),
     "greater than or equal to 1024"),
    (body(model="claude-3-7-sonnet-latest", max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 2000}),
     "must be greater than `thinking.budget_tokens`"),
    (body(model="claude-3-7-sonnet-latest", max_tokens=4000, temperature=0.0,
          thinking={"type": "enabled", "budget_tokens": 2000}), "may only be set to 1"),
    (body(*[text(f"t{i}", cache_control={"type": "ephemeral"}) for i in range(5)]),
     "A maximum of 4 blocks with cache_control"),
    (body({"type": "document", "source": {}}), "unsupported content block type 'document'"),
    (body({"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "Qk0="}}),
     "media_type"),
    (body(text("")), "non-empty"),
    ({"model": "m", "max_tokens": 5, "messages": []}, "at least one message"),
])
async def test_the_real_apis_400s(sim_factory, payload, words):
    s = await sim_factory()
    status, _, data = await post(s, payload)
    assert status == 400 and is_error(data, "invalid_request_error") and words in data["error"]["message"]
    assert s.stats()["bad_requests"] == 1


async def test_parameter_rules_can_be_turned_off(sim_factory):
    s = await sim_factory(model_param_rules=False)
    status, _, _ = await post(s, body(model="claude-sonnet-4-5", temperature=0.0, top_p=0.9))
    assert status == 200


async def test_the_key_travels_in_x_api_key(sim_factory):
    s = await sim_factory(api_keys=["sk-right"])
    ok = await post(s, body(), key="sk-right")
    wrong = await post(s, body(), key="sk-wrong")
    missing = await post(s, body(), key=None)
    assert ok[0] == 200
    for status, _, data in (wrong, missing):
        assert status == 401 and is_error(data, "authentication_error") and data["error"]["message"] == \
            "invalid x-api-key"
    assert s.stats()["auth_failures"] == 2


async def test_a_spent_credit_balance_and_an_unknown_model(sim_factory):
    s = await sim_factory(quota_exhausted_models={"broke": "credit_balance_exhausted"}, models=["sim-judge", "broke"])
    status, headers, data = await post(s, body(model="broke"))
    assert status == 400 and is_error(data, "invalid_request_error")
    assert data["error"]["message"].startswith("Your credit balance is too low") and "retry-after" not in headers
    status, _, data = await post(s, body(model="nobody"))
    assert status == 404 and is_error(data, "not_found_error")


# ------------------------------------------------------------------------------ prompt cache

LONG = "You are a careful and fair judge of creative writing. " * 90  # about 1,200 tokens


async def test_a_marked_prefix_is_written_once_then_read(sim_factory):
    s = await sim_factory(seed=1)
    system = [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]
    usages = []
    for i in range(3):
        _, _, data = await post(s, body(text(f"Answer {i}"), system=system))
        usages.append(data["usage"])
    written = usages[0]["cache_creation_input_tokens"]
    assert written == (len(LONG) + 3) // 4 and usages[0]["cache_read_input_tokens"] == 0
    for u in usages[1:]:
        assert (u["cache_read_input_tokens"], u["cache_creation_input_tokens"]) == (written, 0)
    # the same content unmarked, or another model: nothing read
    _, _, plain = await post(s, body(text("Answer 9"), system=LONG))
    _, _, other = await post(s, body(text("Answer 9"), system=system, model="other-judge"))
    assert plain["usage"]["cache_read_input_tokens"] == 0 and other["usage"]["cache_read_input_tokens"] == 0
    assert other["usage"]["cache_creation_input_tokens"] == written
    stats = s.stats()
    assert (stats["anthropic_cache_writes"], stats["anthropic_cache_hits"]) == (2, 2)
    assert stats["anthropic_cache_read_tokens"] == 2 * written
    s.reset()  # forgets the cache too
    _, _, again = await post(s, body(text("Answer 0"), system=system))
    assert again["usage"]["cache_creation_input_tokens"] == written


async def test_an_image_prefix_counts_claudes_image_tokens(sim_factory):
    s = await sim_factory()
    big, small = png_b64((1092, 1092)), png_b64((320, 240))
    _, _, first = await post(s, body(img(big, cache_control={"type": "ephemeral"}), text("A?")))
    _, _, second = await post(s, body(img(big, cache_control={"type": "ephemeral"}), text("B?")))
    assert first["usage"]["cache_creation_input_tokens"] == 1590  # 1092 x 1092 / 750, as Claude counts it
    assert second["usage"]["cache_read_input_tokens"] == 1590
    _, _, tiny = await post(s, body(img(small, cache_control={"type": "ephemeral"}), text("A?")))
    assert tiny["usage"]["cache_creation_input_tokens"] == 0  # 103 tokens: under the minimum, not cached
    assert tiny["usage"]["input_tokens"] == 103 + 1


def test_the_cache_keeps_a_prefix_five_minutes_minimums_and_the_longest_prefix():
    sim = AnthropicSim(core=None)
    now = [1000.0]
    sim.clock = lambda: now[0]
    a, b, c = b"a" * 32, b"b" * 32, b"c" * 32
    assert sim.prefix_cache("claude-x", ((a, 1023),)) == (0, 0)  # under 1,024: not cached
    assert sim.prefix_cache("claude-x", ((a, 1500),)) == (0, 1500)
    now[0] += CACHE_TTL_S - 1
    assert sim.prefix_cache("claude-x", ((a, 1500),)) == (1500, 0)  # a read refreshes the lifetime
    now[0] += CACHE_TTL_S - 1
    assert sim.prefix_cache("claude-x", ((a, 1500), (b, 4000))) == (1500, 2500)  # read a, write the rest
    assert sim.prefix_cache("claude-x", ((a, 1500), (b, 4000))) == (4000, 0)
    assert sim.prefix_cache("claude-x", ((a, 1500), (c, 3000))) == (1500, 1500)
    now[0] += CACHE_TTL_S + 1
    assert sim.prefix_cache("claude-x", ((a, 1500),)) == (0, 1500)  # expired
    assert sim.prefix_cache("claude-3-5-haiku-20241022", ((c, 2047),)) == (0, 0)  # Haiku 3.5's minimum: 2,048
    assert sim.prefix_cache("claude-3-5-haiku-20241022", ((c, 2048),)) == (0, 2048)
    d = b"d" * 32  # (a real request's hash covers its model)
    assert sim.prefix_cache("claude-haiku-4-5", ((d, 4095),)) == (0, 0)  # Haiku 4.5's: 4,096
    assert sim.prefix_cache("claude-haiku-4-5", ((d, 4096),)) == (0, 4096)


# every model as Anthropic's prompt-caching guide lists it: (name, its minimum)
MINIMUMS = [("claude-opus-4-5-20251101", 4096), ("claude-opus-4-5", 4096), ("claude-opus-4-6", 4096),
            ("anthropic/claude-opus-4-7", 4096), ("claude-haiku-4-5-20251001", 4096), ("claude-haiku-4-5", 4096),
            ("claude-3-5-haiku-20241022", 2048), ("claude-3-5-haiku-latest", 2048), ("claude-3-haiku-20240307", 2048),
            ("claude-opus-4-1-20250805", 1024), ("claude-opus-4-20250514", 1024), ("claude-sonnet-4-5-20250929", 1024),
            ("claude-sonnet-4-20250514", 1024), ("claude-3-7-sonnet-20250219", 1024),
            ("claude-3-5-sonnet-20241022", 1024), ("claude-3-opus-20240229", 1024), ("sim-judge", 1024)]


@pytest.mark.parametrize("model, minimum", MINIMUMS)
def test_each_claude_models_minimum(model, minimum):
    from judgekit.providers.anthropic_wire import prompt_cache_min_tokens

    assert prompt_cache_min_tokens(model) == minimum
    sim = AnthropicSim(core=None)
    sim.clock = lambda: 1000.0
    assert sim.prefix_cache(model, ((b"p" * 32, minimum - 1),)) == (0, 0)
    assert sim.prefix_cache(model, ((b"p" * 32, minimum - 1),)) == (0, 0)  # never written: never read
    assert sim.prefix_cache(model, ((b"q" * 32, minimum),)) == (0, minimum)
    assert sim.prefix_cache(model, ((b"q" * 32, minimum),)) == (minimum, 0)


async def test_a_prefix_under_the_models_minimum_is_neither_written_nor_read_over_http(sim_factory):
    """About 3,000 tokens marked: Sonnet 4.5 and Haiku 3.5 write then read them; Haiku 4.5 and
    Opus 4.5 (4,096) do neither, and bill every token as plain input, as the real API does."""
    models = ["claude-sonnet-4-5", "claude-3-5-haiku-20241022", "claude-haiku-4-5", "claude-opus-4-5"]
    s = await sim_factory(seed=3, models=models)
    system = [{"type": "text", "text": LONG * 2 + LONG[:len(LONG) // 2],
               "cache_control": {"type": "ephemeral"}}]
    prefix = (len(system[0]["text"]) + 3) // 4
    assert 2048 < prefix < 4096
    for model in models:
        got = []
        for i in range(2):
            status, _, data = await post(s, body(text(f"Answer {i}"), system=system, model=model))
            assert status == 200
            got.append(data["usage"])
        if model in ("claude-haiku-4-5", "claude-opus-4-5"):
            for u in got:
                assert (u["cache_creation_input_tokens"], u["cache_read_input_tokens"]) == (0, 0)
                assert u["cache_creation"]["ephemeral_5m_input_tokens"] == 0 and u["input_tokens"] > prefix
        else:
            assert (got[0]["cache_creation_input_tokens"], got[0]["cache_read_input_tokens"]) == (prefix, 0)
            assert (got[1]["cache_creation_input_tokens"], got[1]["cache_read_input_tokens"]) == (0, prefix)
    stats = s.stats()
    assert (stats["anthropic_cache_writes"], stats["anthropic_cache_hits"]) == (2, 2)


# ------------------------------------------------------------------------------ the request hash

_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_IMAGES = ["iVBORw0KGgoAAAA" + c * 8 for c in "ABC"]
_parts = st.lists(st.one_of(_texts.map(lambda t: ("t", t)), st.sampled_from(_IMAGES).map(lambda i: ("i", i))),
                  min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(system=st.one_of(st.none(), _texts), turns=st.lists(_parts, min_size=1, max_size=3),
       max_tokens=st.integers(1, 5000), temperature=st.one_of(st.none(), st.sampled_from([0, 0.5, 1])),
       top_p=st.one_of(st.none(), st.sampled_from([0.9, 1])))
def test_a_request_hashes_as_its_chat_completions_twin(system, turns, max_tokens, temperature, top_p):
    def anth(kind, value):
        return {"type": "text", "text": value} if kind == "t" else img(value)

    def oai(kind, value):
        return {"type": "text", "text": value} if kind == "t" else {
            "type": "image_url", "image_url": {"url": f"data:image/png;base64,{value}"}}

    roles = ["user" if i % 2 == 0 else "assistant" for i in range(len(turns))]
    a = {"model": "m", "max_tokens": max_tokens,
         "messages": [{"role": r, "content": [anth(*p) for p in parts]} for r, parts in zip(roles, turns)]}
    o = {"model": "m", "max_tokens": max_tokens,
         "messages": [{"role": r, "content": [oai(*p) for p in parts]} for r, parts in zip(roles, turns)]}
    for k, v in (("temperature", temperature), ("top_p", top_p)):
        if v is not None:
            a[k] = o[k] = v
    if system is not None:
        a["system"] = system
        o["messages"].insert(0, {"role": "system", "content": system})
    mine, twin = parse_messages(a, SEED, rules=False), _parse_openai(o, SEED)
    assert mine.digest == twin.digest
    assert (mine.text, mine.images, mine.last_user_text, mine.max_tokens) == (
        twin.text, twin.images, twin.last_user_text, twin.max_tokens)
    # cache marks and a system prompt as blocks change nothing of the hash
    marked = json.loads(json.dumps(a))
    marked["messages"][0]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    if system is not None:
        marked["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    assert parse_messages(marked, SEED, rules=False).digest == mine.digest
