"""The Anthropic Messages API's wire format, offline: the request body (system, images in order,
prompt-cache marks), the parameters a Claude model takes, the reply read into a ChatResponse or
the failure it stands for, usage and its price with cache reads and writes, rate-limit headers,
image tokens and request sizes."""

from __future__ import annotations

import copy
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.config import ModelSpec
from judgekit.cost.images import image_tokens
from judgekit.cost.prices import usage_usd
from judgekit.errors import (EmptyReply, MalformedReply, NoOutputBudget, Refused, RequestTooLarge, SpecError,
                             UnsupportedParameter)
from judgekit.providers.anthropic import anthropic_retry_after
from judgekit.providers.anthropic_wire import (CACHE_CONTROL, engine_rate_headers, message_params, message_response,
                                               parse_reset)
from judgekit.providers.params import (ANTHROPIC_DEFAULT_MAX_TOKENS, allowed_params, anthropic_params, check_models,
                                       claude_version, family_of, unsupported)
from judgekit.providers.sizes import ANTHROPIC_IMAGE_B64_MAX, check_anthropic_size
from judgekit.types import GenParams, ImagePart, Message, TextPart, Usage


def png(width: int, height: int, payload: bytes = b"") -> ImagePart:
    """An image of the given size as far as judgekit reads it (a PNG header; the pixels do not matter)."""
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big")
    return ImagePart(header + payload, "image/png")


A, B, C = png(10, 10, b"a"), png(20, 10, b"b"), png(10, 20, b"c")


def claude(model: str = "claude-3-5-sonnet-20241022", **kw) -> ModelSpec:
    return ModelSpec(provider="anthropic", model=model, **kw)


def marks(body: dict) -> list[tuple[str, int]]:
    """Where the cache_control marks are: ("system", i) or (f"messages.{t}", i)."""
    found = [("system", i) for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    for t, turn in enumerate(body["messages"]):
        found += [(f"messages.{t}", i) for i, b in enumerate(turn["content"]) if "cache_control" in b]
    return found


def unmarked(body: dict) -> dict:
    out = copy.deepcopy(body)
    for block in [*out.get("system", []), *(b for t in out["messages"] for b in t["content"])]:
        block.pop("cache_control", None)
    return out


# ---------------------------------------------------------------------------------- request

def test_body_keeps_the_order_of_text_and_images_and_puts_the_system_prompt_apart():
    msgs = (Message.system("Be a fair judge."), Message.user(A, "first", B, "", "second", C))
    body = message_params("claude-x", msgs, {"max_tokens": 9})
    assert body["model"] == "claude-x" and body["max_tokens"] == 9
    assert body["system"] == [{"type": "text", "text": "Be a fair judge."}]
    blocks = body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["image", "text", "image", "text", "image"]  # the empty text is left out
    assert [b["source"]["data"] for b in blocks if b["type"] == "image"] == [A.b64(), B.b64(), C.b64()]
    assert all(b["source"] == {"type": "base64", "media_type": "image/png", "data": b["source"]["data"]}
               for b in blocks if b["type"] == "image")
    assert [b["text"] for b in blocks if b["type"] == "text"] == ["first", "second"]
    assert marks(body) == []


def test_a_multi_turn_request_keeps_its_roles():
    msgs = (Message.user("q"), Message("assistant", (TextPart("a"),)), Message.user("follow"))
    body = message_params("m", msgs, {"max_tokens": 1})
    assert "system" not in body
    assert [(t["role"], t["content"][0]["text"]) for t in body["messages"]] == [("user", "q"), ("assistant", "a"),
                                                                               ("user", "follow")]


def test_an_image_type_the_api_refuses_is_a_bad_request_before_sending():
    from judgekit.errors import BadRequest

    with pytest.raises(BadRequest, match="image/bmp"):
        message_params("m", (Message.user(ImagePart(b"BM..", "image/bmp", width=1, height=1), "x"),), {})


@pytest.mark.parametrize("msgs, expected", [
    # Creation-MMBench's judge turn: the item's images, then instruction and answers in one text
    ((Message.user(A, B, "judge these"),), [("messages.0", 1)]),
    ((Message.system("sys"), Message.user(A, "judge")), [("system", 0), ("messages.0", 0)]),
    # an instruction before the images: the mark is on the last image before the last text
    ((Message.user("instruction", A, B, "answers"),), [("messages.0", 2)]),
    ((Message.user(A, "t1", B, "t2"),), [("messages.0", 2)]),
    # nothing fixed to mark: no image before the last text, or no text after the images
    ((Message.user("only text"),), []),
    ((Message.user("text", A),), []),
    ((Message.user(A, B),), []),
    # only the first user turn is marked (the follow-up of a re-ask repeats the whole first exchange)
    ((Message.user(A, "q"), Message("assistant", (TextPart("a"),)), Message.user(B, "again")), [("messages.0", 0)]),
    ((Message.system("s"),  Message.user("no images")), [("system", 0)]),
])
def test_cache_marks_sit_at_the_end_of_the_fixed_prefix(msgs, expected):
    body = message_params("m", msgs, {"max_tokens": 5}, cache_prefix=True)
    assert marks(body) == expected
    for where, i in expected:
        block = body["system"][i] if where == "system" else body["messages"][int(where[9:])]["content"][i]
        assert block["cache_control"] == CACHE_CONTROL
    # the marks change nothing else: same blocks, same order
    assert unmarked(body) == message_params("m", msgs, {"max_tokens": 5})


_part = st.one_of(st.sampled_from([A, B, C]), st.text(max_size=5).map(TextPart))


@settings(max_examples=200, deadline=None)
@given(system=st.lists(st.text(max_size=4), max_size=2),
       turns=st.lists(st.lists(_part, max_size=6), min_size=1, max_size=3))
def test_cache_marks_never_move_content_and_stay_within_the_limit(system, turns):
    msgs = tuple(Message.system(s) for s in system) + tuple(
        Message("user" if i % 2 == 0 else "assistant", tuple(parts)) for i, parts in enumerate(turns))
    body = message_params("m", msgs, {"max_tokens": 1}, cache_prefix=True)
    assert unmarked(body) == message_params("m", msgs, {"max_tokens": 1})
    found = marks(body)
    assert len(found) <= 2
    for where, i in found:
        if where == "system":
            assert i == len(body["system"]) - 1
        else:  # an image of the first user turn, with a text block after it
            blocks = body["messages"][int(where[9:])]["content"]
            assert where == "messages.0" and blocks[i]["type"] == "image"
            assert any(b["type"] == "text" for b in blocks[i + 1:])
            assert not any(b["type"] == "image" for b in blocks[i + 1:max(j for j, b in enumerate(blocks)
                                                                            if b["type"] == "text")])


# ------------------------------------------------------------------------------- parameters

def test_claude_versions_read_from_names():
    assert [claude_version(n) for n in ("claude-3-5-sonnet-20241022", "claude-3-opus-20240229",
                                        "claude-sonnet-4-20250514", "claude-opus-4-1-20250805", "claude-haiku-4-5",
                                        "anthropic/claude-3-7-sonnet-latest", "sim-judge", "claude-2.1")] == [
        (3, 5), (3, 0), (4, 0), (4, 1), (4, 5), (3, 7), None, None]
    assert family_of(claude()) == "claude"


def test_fields_sent_max_tokens_always_and_no_seed():
    assert anthropic_params("j", claude(), GenParams(temperature=0.0, seed=3)) == {
        "max_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS, "temperature": 0.0}
    assert anthropic_params("j", claude(), GenParams(max_tokens=100, top_p=0.9)) == {"max_tokens": 100, "top_p": 0.9}
    thinking = claude("claude-3-7-sonnet-20250219")
    assert anthropic_params("j", thinking, GenParams(thinking_budget=2048)) == {
        "max_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS + 2048, "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert anthropic_params("j", thinking, GenParams(max_tokens=8000, thinking_budget=0)) == {"max_tokens": 8000}


@pytest.mark.parametrize("model, params, rejected", [
    ("claude-3-5-sonnet-20241022", GenParams(reasoning_effort="high"), ["reasoning_effort"]),
    ("claude-3-5-sonnet-20241022", GenParams(thinking_budget=2048), ["thinking_budget"]),
    ("claude-3-7-sonnet-20250219", GenParams(thinking_budget=1000), ["thinking_budget"]),
    ("claude-3-7-sonnet-20250219", GenParams(thinking_budget=4096, max_tokens=4096), ["thinking_budget"]),
    ("claude-3-7-sonnet-20250219", GenParams(thinking_budget=2048, temperature=0.0), ["temperature"]),
    ("claude-3-7-sonnet-20250219", GenParams(thinking_budget=2048, temperature=1.0, top_p=0.9), ["top_p"]),
    ("claude-3-7-sonnet-20250219", GenParams(thinking_budget=2048, temperature=1.0, top_p=0.97), []),
    ("claude-sonnet-4-5", GenParams(temperature=0.0, top_p=0.9), ["top_p"]),
    ("claude-opus-4-1-20250805", GenParams(temperature=0.5, top_p=0.9), ["top_p"]),
    ("claude-sonnet-4-20250514", GenParams(temperature=0.5, top_p=0.9), []),  # 4.0 takes both
    ("claude-3-5-sonnet-20241022", GenParams(temperature=0.0, top_p=0.9, max_tokens=4096), []),
    ("sim-judge", GenParams(thinking_budget=2048, max_tokens=100), ["thinking_budget"]),
])
def test_what_a_claude_model_rejects(model, params, rejected):
    assert [name for name, _, _ in unsupported(claude(model), params)] == rejected


def test_a_rejected_parameter_stops_before_the_first_call_or_is_dropped():
    spec = claude("claude-sonnet-4-5", params={"temperature": 0.0, "top_p": 0.9})
    with pytest.raises(SpecError, match="models.j.params.top_p = 0.9: claude-sonnet-4-5 .a Claude model. rejects"):
        check_models({"j": spec}, ["j"])
    with pytest.raises(UnsupportedParameter, match="top_p"):
        allowed_params("j", spec, spec.params.gen_params())
    dropping = claude("claude-sonnet-4-5", params={"temperature": 0.0, "top_p": 0.9}, drop_unsupported_params=True)
    assert check_models({"j": dropping}, ["j"])[0].startswith("model 'j': top_p = 0.9 is left out")
    assert anthropic_params("j", dropping, dropping.params.gen_params()) == {"max_tokens": 4096, "temperature": 0.0}


# ------------------------------------------------------------------------------------ replies

def message(content=None, *, usage=None, stop="end_turn", **top) -> dict:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "Verdict: A"}] if content is None else content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 4, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0} if usage is None else usage}
    body.update(top)
    return body


def test_a_reply_is_its_text_blocks_joined_and_its_finish_normalised():
    r = message_response(message([{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                  {"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]),
                         {"request-id": "req_9"}, 0.5)
    assert (r.text, r.finish_reason, r.request_id, r.latency_s) == ("Hello, world", "stop", "req_9", 0.5)
    assert message_response(message(stop="stop_sequence")).finish_reason == "stop"
    cut = message_response(message(stop="max_tokens"))
    assert cut.finish_reason == "length" and cut.truncated and cut.text == "Verdict: A"
    assert message_response(message()).request_id == "msg_1"  # no header: the message id


def test_usage_counts_cache_reads_and_writes_in_the_input():
    u = message_response(message(usage={"input_tokens": 100, "cache_creation_input_tokens": 400,
                                        "cache_read_input_tokens": 500, "output_tokens": 10})).usage
    assert u == Usage(1000, 10, cached_input_tokens=500, cache_write_tokens=400)
    assert message_response(message(usage={"input_tokens": 7, "output_tokens": 3,
                                           "cache_creation_input_tokens": None})).usage == Usage(7, 3)


def test_a_call_with_cache_reads_and_writes_is_priced_at_their_rates():
    # Claude 3.5 Sonnet: $3 input, $0.30 cache read, $3.75 cache write (5 min), $15 output per Mtok
    u = Usage(1000, 10, cached_input_tokens=500, cache_write_tokens=400)
    expected = (100 * 3.0 + 500 * 0.30 + 400 * 3.75 + 10 * 15.0) / 1e6
    assert usage_usd("anthropic", "claude-3-5-sonnet-20241022", u) == pytest.approx(expected, rel=1e-12)
    assert usage_usd("anthropic", "claude-3-5-sonnet-20241022", Usage(1000, 10)) == pytest.approx(
        (1000 * 3.0 + 10 * 15.0) / 1e6, rel=1e-12)
    # Claude Haiku 4.5: $1 / $0.10 / $1.25 / $5
    assert usage_usd("anthropic", "claude-haiku-4-5", Usage(3000, 0, cached_input_tokens=2000,
                                                            cache_write_tokens=1000)) == pytest.approx(
        (2000 * 0.10 + 1000 * 1.25) / 1e6, rel=1e-12)


@pytest.mark.parametrize("body, cls, words", [
    (message(stop="refusal", content=[]), Refused, "refused"),
    (message(stop="refusal", content=[{"type": "text", "text": "I will start but"}]), Refused, "after 16 characters"),
    (message(stop="max_tokens", content=[{"type": "thinking", "thinking": "long", "signature": "s"}]),
     NoOutputBudget, "max_tokens"),
    (message(content=[]), EmptyReply, "no text block"),
    (message(content=[{"type": "text", "text": "  \n"}]), EmptyReply, "whitespace only"),
    (message(content=[{"type": "text", "text": ""}]), EmptyReply, "empty"),
    (message(content={"type": "text", "text": "hi"}), MalformedReply, "not a list"),
    (message(content="hi"), MalformedReply, "not a list"),
    (message(content=["hi"]), MalformedReply, "not an object"),
    (message(content=[{"text": "hi"}]), MalformedReply, "no type"),
    (message(content=[{"type": "text", "text": 7}]), MalformedReply, "holds no string"),
    ({k: v for k, v in message().items() if k != "usage"}, MalformedReply, "usage' is missing"),
    (message(usage="lots"), MalformedReply, "not an object"),
    (message(usage={"input_tokens": -5, "output_tokens": 2}), MalformedReply, "negative"),
    (message(usage={"input_tokens": 2.5, "output_tokens": 2}), MalformedReply, "whole number"),
    (message(usage={"input_tokens": "9", "output_tokens": 2}), MalformedReply, "not a number"),
    (message(usage={"input_tokens": True, "output_tokens": 2}), MalformedReply, "boolean"),
    (message(usage={"input_tokens": 60_000_000, "cache_read_input_tokens": 60_000_000, "output_tokens": 2}),
     MalformedReply, "beyond any real call"),
    (message(stop=5), MalformedReply, "stop_reason"),
    (message(type="error"), MalformedReply, "not a message"),
    ([message()], MalformedReply, "not a JSON object"),
    ("<html>oops</html>", MalformedReply, "not a JSON object"),
])
def test_odd_and_answerless_replies_are_classified(body, cls, words):
    with pytest.raises(cls) as e:
        message_response(body)
    assert type(e.value) is cls and words in str(e.value), str(e.value)
    if cls is not MalformedReply:  # kept with an excerpt of the reply and what it was billed
        assert e.value.raw and '"stop_reason"' in e.value.raw and e.value.usage == Usage(10, 4)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(content=_json, usage=_json, stop=_json)
def test_any_json_reply_is_an_answer_or_a_classified_failure(content, usage, stop):
    from judgekit.errors import ProviderError

    try:
        r = message_response(message(content, usage=usage, stop=stop))
    except ProviderError as e:
        assert e.kind in ("malformed_reply", "empty_reply", "refused", "no_output_budget")
    else:
        assert r.text.strip() and r.usage.input_tokens >= r.usage.cached_input_tokens + r.usage.cache_write_tokens


# ------------------------------------------------------------------------------ rate limits

def _at(seconds: float, now: float) -> str:
    return (datetime.fromtimestamp(now, tz=UTC) + timedelta(seconds=seconds)).isoformat().replace(
        "+00:00", "Z")


def test_anthropic_rate_headers_become_the_engines():
    now = 1_700_000_000.0
    headers = {
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": _at(1.2, now),
        "anthropic-ratelimit-tokens-limit": "40000", "anthropic-ratelimit-tokens-remaining": "39000",
        "anthropic-ratelimit-tokens-reset": _at(0.5, now),
        "anthropic-ratelimit-input-tokens-limit": "30000", "anthropic-ratelimit-input-tokens-remaining": "0",
        "anthropic-ratelimit-input-tokens-reset": _at(7, now),
        "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "8000",
        "anthropic-ratelimit-output-tokens-reset": "2020-01-01T00:00:00Z",
    }
    assert engine_rate_headers(headers, now) == {
        "x-ratelimit-limit-requests": "50", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.200s",
        "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "7.000s"}
    assert engine_rate_headers({"content-type": "application/json"}) is None


def test_the_wait_after_a_429_is_retry_after_else_the_reset_of_what_ran_out():
    now = time.time()
    assert anthropic_retry_after({"retry-after": "12"}) == 12.0
    ran_out = {"anthropic-ratelimit-requests-remaining": "5", "anthropic-ratelimit-requests-reset": _at(30, now),
               "anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": _at(3, now)}
    assert anthropic_retry_after(ran_out) == pytest.approx(3, abs=0.5)
    assert anthropic_retry_after({}) is None


@settings(max_examples=300, deadline=None)
@given(remaining=st.integers(0, 10**9), offset=st.floats(-1e6, 1e7, allow_nan=False),
       fraction=st.booleans(), zone=st.sampled_from(["Z", "+00:00", "+05:30", "-08:00"]))
def test_reset_times_read_as_seconds_left_never_negative(remaining, offset, fraction, zone):
    now = 1_700_000_000.0
    tz = UTC if zone in ("Z", "+00:00") else timezone(timedelta(hours=5, minutes=30) if zone == "+05:30"
                                                               else -timedelta(hours=8))
    when = datetime.fromtimestamp(now + offset, tz=tz)
    text = when.isoformat(timespec="milliseconds" if fraction else "seconds")
    text = text.replace("+00:00", "Z") if zone == "Z" else text
    exact = round(offset, 3) if fraction else float(int(offset) if offset >= 0 else -int(-offset))
    left = parse_reset(text, now)
    assert left is not None and left >= 0 and abs(left - max(0.0, exact)) <= 1.0
    out = engine_rate_headers({"anthropic-ratelimit-requests-remaining": str(remaining),
                               "anthropic-ratelimit-requests-reset": text}, now)
    assert out["x-ratelimit-remaining-requests"] == str(remaining)
    assert float(out["x-ratelimit-reset-requests"][:-1]) == pytest.approx(left, abs=1e-3)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([f"anthropic-ratelimit-{k}-{p}" for k in ("requests", "tokens", "input-tokens")
                                        for p in ("limit", "remaining", "reset")] + ["retry-after"]),
                       st.text(max_size=30)))
def test_garbage_rate_headers_never_raise_and_give_only_readable_values(headers):
    from judgekit.providers.base import parse_duration

    out = engine_rate_headers(headers) or {}
    for name, value in out.items():
        if "reset" in name:
            assert parse_duration(value) is not None and parse_duration(value) >= 0
        else:
            assert value.isdigit()
    wait = anthropic_retry_after(headers)
    assert wait is None or wait >= 0


# ----------------------------------------------------------------------- image tokens, sizes

@pytest.mark.parametrize("size, tokens", [
    ((200, 200), 54), ((1000, 1000), 1334), ((1092, 1092), 1590),  # the vision guide's table
    ((2048, 2048), 1599), ((3000, 1000), 1092), ((320, 240), 103),  # scaled to 1568 x 522
])
def test_claude_image_tokens(size, tokens):
    assert image_tokens("anthropic", "claude-3-5-sonnet-20241022", *size, None) == tokens
    assert image_tokens("openai", "claude-sonnet-4-5", *size, "low") == tokens  # by name, detail ignored


def test_requests_over_the_anthropic_sizes_are_refused_before_sending():
    check_anthropic_size([Message.user(png(8000, 100), "ok")])
    with pytest.raises(RequestTooLarge, match="at most 8000 px"):
        check_anthropic_size([Message.user(png(8001, 100))])
    check_anthropic_size([Message.user(*[png(2000, 2000, bytes([i])) for i in range(20)])])
    with pytest.raises(RequestTooLarge, match="more than 20 images: at most 2000 px"):
        check_anthropic_size([Message.user(*[png(2001, 10, bytes([i])) for i in range(21)])])
    raw = ANTHROPIC_IMAGE_B64_MAX // 4 * 3  # exactly 5 MiB of base64
    check_anthropic_size([Message.user(png(10, 10, b"x" * (raw - 24)))])
    with pytest.raises(RequestTooLarge, match="5,242,884 bytes in base64"):
        check_anthropic_size([Message.user(png(10, 10, b"x" * (raw - 23)))])
    four_mb = [png(10, 10, bytes([i]) * (3_000_000 - 24)) for i in range(8)]  # 8 x 4,000,000 of base64
    check_anthropic_size([Message.user(*four_mb)])
    with pytest.raises(RequestTooLarge, match="takes requests of at most 32.0 MB"):
        check_anthropic_size([Message.user(*four_mb, "x")])
