"""The anthropic provider through the official anthropic SDK over real HTTP: against the
simulator's Messages API (the same answers as its chat-completions endpoint, images in order,
prompt-cache reads and writes priced at their rates, a 429 then success with retry-after obeyed,
its errors), and against a small scripted server (the body on the wire, every error status
mapped, a 529 retried by the engine, odd reply shapes, a key echoed back); a missing key is one
line, exit 2, through the CLI."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import openai
import pytest
from odd_server import OddServer, Reply

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.engine.retry import RetryWait
from judgekit.errors import (AuthError, BadRequest, MalformedReply, NotFound, ProviderError, QuotaExhausted,
                             RateLimited, RequestTooLarge, TransientError)
from judgekit.providers import create_provider
from judgekit.providers.anthropic import AnthropicProvider
from judgekit.providers.base import REDACTED
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from oneline import assert_user_error, invoke

KEY_ENV = "JK_ANTHROPIC_TEST_KEY"
KEY = "sk-ant-test-0123456789-SECRET"
SONNET = "claude-3-5-sonnet-20241022"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


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


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def aspec(url: str, model: str = SONNET, **kw) -> ModelSpec:
    return ModelSpec(provider="anthropic", model=model, base_url=url, api_key_env=KEY_ENV, **kw)


def image(color: tuple[int, int, int], size: tuple[int, int] = (64, 48)) -> ImagePart:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return ImagePart(buf.getvalue(), "image/png")


RED, BLUE = image((200, 10, 10)), image((10, 10, 200), (48, 64))


async def call(spec: ModelSpec, request: ChatRequest, **kw):
    """The response of one call, or the ProviderError it raised."""
    prov = AnthropicProvider("j", spec, **kw) if kw else create_provider("j", spec)
    await prov.start()
    try:
        return await prov.generate(request)
    except ProviderError as e:
        return e
    finally:
        await prov.close()


def ask(*parts, system: str | None = None, params: GenParams = GenParams(max_tokens=300, temperature=0.0)):
    msgs = ((Message.system(system),) if system else ()) + (Message.user(*parts),)
    return ChatRequest("j", msgs, params)


class RecordingWait(RetryWait):
    def __init__(self) -> None:
        super().__init__(initial=0.01, maximum=0.05, jitter=0)
        self.chosen: list[float] = []

    def wait_for(self, err, attempt):
        w = super().wait_for(err, attempt)
        self.chosen.append(w)
        return w


# ------------------------------------------------------------------------------ the simulator

async def test_a_call_gets_the_answer_the_chat_endpoint_gives_for_the_same_request(sim):
    s = await sim(seed=3)
    r = await call(aspec(s.root_url, "sim-vlm"), ask(RED, BLUE, "Describe both pictures.", system="Be brief."))
    assert r.text and r.finish_reason in ("stop", "length") and r.request_id.startswith("req_")
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    # the same request through openai's SDK to /v1/chat/completions: the same reply generator, the same hash
    client = openai.AsyncOpenAI(base_url=s.base_url, api_key="k", max_retries=0)
    try:
        twin = await client.chat.completions.create(model="sim-vlm", max_tokens=300, temperature=0.0, messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": RED.data_url()}},
                                         {"type": "image_url", "image_url": {"url": BLUE.data_url()}},
                                         {"type": "text", "text": "Describe both pictures."}]}])
        swapped = await call(aspec(s.root_url, "sim-vlm"), ask(BLUE, RED, "Describe both pictures.", system="Be brief."))
    finally:
        await client.close()
    assert r.text == twin.choices[0].message.content
    assert swapped.text != r.text  # the images' order is part of the request
    assert s.stats()["served_by_api"] == {"anthropic": 2, "openai": 1}


async def test_prompt_cache_writes_then_reads_and_each_is_priced_at_its_rate(sim, cache):
    s = await sim(seed=1)
    engine = Engine({"j": aspec(s.root_url)}, cache)
    await engine.start()
    system = "You are a careful judge. " * 200  # about 1,200 tokens: over the 1,024 a prefix needs
    results = [await engine.call(ask(RED, f"Answer {i}: which is better?", system=system)) for i in range(3)]
    await engine.close()
    assert all(r.ok for r in results)
    first, second, third = (r.response.usage for r in results)
    prefix = first.cache_write_tokens
    assert prefix > 1024 and first.cached_input_tokens == 0
    assert (second.cached_input_tokens, second.cache_write_tokens) == (prefix, 0) == (third.cached_input_tokens, 0)
    stats = s.stats()
    assert (stats["anthropic_cache_writes"], stats["anthropic_cache_hits"]) == (1, 2)
    for r in results:  # $3 input, $0.30 cache read, $3.75 cache write, $15 output per Mtok
        u = r.response.usage
        fresh = u.input_tokens - u.cached_input_tokens - u.cache_write_tokens
        expected = (fresh * 3.0 + u.cached_input_tokens * 0.30 + u.cache_write_tokens * 3.75
                    + u.output_tokens * 15.0) / 1e6
        assert r.response.cost_usd == pytest.approx(expected, rel=1e-9)
    assert results[1].response.cost_usd < results[0].response.cost_usd
    # with the marks off, nothing is cached or written
    off = await call(aspec(s.root_url), ask(RED, "Answer 9: which is better?", system=system), prompt_cache=False)
    assert (off.usage.cached_input_tokens, off.usage.cache_write_tokens) == (0, 0)


async def test_a_429_then_success_waits_what_retry_after_says(sim, cache):
    s = await sim(rpm=60)  # a one-request bucket, refilled in a second: the second of two at once meets a 429
    wait = RecordingWait()
    engine = Engine({"j": aspec(s.root_url, "sim-vlm", limits={"max_concurrency": 2})}, cache, retry_wait=wait)
    await engine.start()
    results = await asyncio.gather(*(engine.call(ask(f"question {i}")) for i in range(2)))
    await engine.close()
    assert all(r.ok for r in results)
    assert engine.stats.stage("default").rate_limited == 1 and s.stats()["rate_limited"] == 1
    assert len(wait.chosen) == 1 and 1.0 <= wait.chosen[0] <= 1.6  # retry-after: 1 (plus a little jitter)
    headers = next(r.response.rate_headers for r in results if r.response.rate_headers)
    assert headers["x-ratelimit-limit-requests"] == "60" and "x-ratelimit-reset-requests" in headers


@pytest.mark.parametrize("config, model, cls, words", [
    ({"api_keys": ["another-key"]}, SONNET, AuthError, "authentication_error: invalid x-api-key"),
    ({"models": ["claude-x"]}, SONNET, NotFound, "not_found_error"),
    ({"quota_exhausted_models": {SONNET: "credit_balance_exhausted"}}, SONNET, QuotaExhausted, "credit balance"),
])
async def test_the_simulators_errors_are_classified(sim, config, model, cls, words):
    s = await sim(**config)
    err = await call(aspec(s.root_url, model), ask("hello"))
    assert type(err) is cls and words in str(err), err


# ------------------------------------------------------------------------------ a scripted server

def message(text: str = "Verdict: [[A>B]]", **usage) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": SONNET,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 5, **usage}}


def error(status: int, etype: str, msg: str, headers: dict | None = None, **extra) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": etype, "message": msg, **extra}, "request_id": "req_x"},
                 headers=headers)


async def test_the_request_on_the_wire(monkeypatch):
    async with OddServer(Reply(200, message())) as server:
        req = ChatRequest("j", (Message.system("Judge fairly."), Message.user("Question", RED, BLUE, "Answers")),
                          GenParams(temperature=0.0, seed=5, extra=(("stop_sequences", ["END"]),)))
        r = await call(aspec(server.url), req)
        off = await call(aspec(server.url), req, prompt_cache=False)
        spec_off = await call(aspec(server.url, prompt_cache=False), req)  # the spec's switch
    assert r.text == off.text == spec_off.text == "Verdict: [[A>B]]" and r.usage.input_tokens == 11
    (path, headers, raw), (_, _, raw_off), (_, _, raw_spec_off) = server.seen
    assert raw_spec_off == raw_off
    headers = {k.lower(): v for k, v in headers.items()}
    assert path == "/v1/messages" and headers["anthropic-version"]
    # the key: x-api-key, or a bearer token as anthropic SDK 2.x sends it
    assert headers.get("x-api-key") == KEY or headers.get("authorization") == f"Bearer {KEY}"
    body = json.loads(raw)
    assert body["model"] == SONNET and body["max_tokens"] == 4096 and body["temperature"] == 0.0
    assert "seed" not in body and body["stop_sequences"] == ["END"]
    assert body["system"] == [{"type": "text", "text": "Judge fairly.", "cache_control": {"type": "ephemeral"}}]
    blocks = body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "image", "text"]
    assert [b["source"]["data"] for b in blocks[1:3]] == [RED.b64(), BLUE.b64()]
    assert [i for i, b in enumerate(blocks) if "cache_control" in b] == [2]
    plain = json.loads(raw_off)
    assert "cache_control" not in json.dumps(plain) and plain["messages"][0]["content"][0] == blocks[0]


@pytest.mark.parametrize("reply, cls, words", [
    (error(400, "invalid_request_error", "max_tokens: Field required"), BadRequest, "Field required"),
    (error(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API."),
     QuotaExhausted, "credit balance"),
    (error(402, "billing_error", "Payment required"), QuotaExhausted, "billing_error"),
    (error(429, "rate_limit_error", "Your organization reached its spend limit.",
           details={"error_code": "enforced_spend_limit_reached"}), QuotaExhausted, "spend limit"),
    (error(401, "authentication_error", "invalid x-api-key"), AuthError, "invalid x-api-key"),
    (error(403, "permission_error", "not allowed"), AuthError, "permission_error"),
    (error(404, "not_found_error", "model: claude-9"), NotFound, "claude-9"),
    (error(413, "request_too_large", "Request exceeds the maximum size"), RequestTooLarge, "request_too_large"),
    (error(429, "rate_limit_error", "This request would exceed the rate limit", {"retry-after": "7"}),
     RateLimited, "rate_limit_error"),
    (error(500, "api_error", "Internal server error"), TransientError, "api_error"),
    (error(529, "overloaded_error", "Overloaded"), TransientError, "HTTP 529 overloaded_error: Overloaded"),
    (Reply(502, "<html>bad gateway</html>", "text/html"), TransientError, "HTTP 502"),
])
async def test_error_replies_are_classified(reply, cls, words):
    async with OddServer(reply) as server:
        err = await call(aspec(server.url), ask("hi"))
    assert type(err) is cls and words in str(err), repr(err)
    if cls is RateLimited:
        assert err.retry_after == 7.0 and err.retryable
    if isinstance(err, TransientError):
        assert err.retryable and err.status == reply.status


async def test_x_should_retry_is_obeyed():
    async with OddServer(error(529, "overloaded_error", "Overloaded", {"x-should-retry": "false"})) as server:
        final = await call(aspec(server.url), ask("hi"))
    async with OddServer(error(409, "invalid_request_error", "conflict", {"x-should-retry": "true"}),
                         error(422, "invalid_request_error", "odd", {"x-should-retry": "true"})) as server:
        conflict = await call(aspec(server.url), ask("hi"))
        unprocessable = await call(aspec(server.url), ask("hi"))
    assert type(final) is TransientError and not final.retryable and "x-should-retry: false" in str(final)
    assert type(conflict) is TransientError and conflict.retryable
    assert type(unprocessable) is TransientError and unprocessable.retryable


async def test_a_529_is_retried_by_the_engine(cache):
    async with OddServer(error(529, "overloaded_error", "Overloaded"), Reply(200, message("after the storm"))) as server:
        wait = RecordingWait()
        engine = Engine({"j": aspec(server.url)}, cache, retry_wait=wait)
        await engine.start()
        result = await engine.call(ask("hi"))
        await engine.close()
    assert result.ok and result.text == "after the storm" and len(server.seen) == 2
    assert engine.stats.stage("default").retries == 1 and len(wait.chosen) == 1


@pytest.mark.parametrize("reply, words", [
    (Reply(200, {**message(), "content": "a string"}), "not a list of blocks"),
    (Reply(200, {k: v for k, v in message().items() if k != "usage"}), "'usage' is missing"),
    (Reply(200, message(input_tokens=-3)), "negative"),
    (Reply(200, message(cache_read_input_tokens="many")), "not a number"),
    (Reply(200, "<html><body>Bad gateway</body></html>", "text/html"), "not JSON"),
    (Reply(200, "[1, 2]"), "not a JSON object"),
])
async def test_odd_reply_shapes_are_malformed_replies_not_crashes(reply, words):
    async with OddServer(reply) as server:
        err = await call(aspec(server.url), ask("hi"))
    assert type(err) is MalformedReply and words in str(err) and err.retryable, repr(err)


async def test_a_key_echoed_in_an_error_never_leaves_the_provider():
    async with OddServer(error(401, "authentication_error", f"invalid x-api-key: {KEY}")) as server:
        prov = create_provider("j", aspec(server.url))
        await prov.start()
        with pytest.raises(AuthError) as e:
            await prov.generate(ask("hi"))
        await prov.close()
    text = prov.describe_error(e.value)
    assert KEY not in str(e.value) and REDACTED in str(e.value) and e.value.__cause__ is None
    assert KEY not in text and KEY_ENV in text


# ------------------------------------------------------------------------------ the key

async def test_a_missing_key_is_an_auth_error_naming_the_variable(monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    prov = create_provider("j", ModelSpec(provider="anthropic", model=SONNET, api_key_env=KEY_ENV))
    with pytest.raises(AuthError, match=f"model 'j' .anthropic {SONNET}.: the API key env var {KEY_ENV} is not set"):
        await prov.start()
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    default = create_provider("j", ModelSpec(provider="anthropic", model=SONNET))
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY is not set") as e:
        await default.start()
    assert e.value.status is None  # nothing was sent


def test_run_without_the_key_is_one_line_exit_2(tmp_path):
    spec = tmp_path / "claude.toml"
    spec.write_text(f'''
name = "claude-judge"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"
[models.cand]
provider = "sim"
model = "sim-vlm-strong"
[models.judge]
provider = "anthropic"
model = "{SONNET}"
[roles]
candidates = ["cand"]
judge = "judge"
''', encoding="utf-8")
    r = invoke("run", spec, "--limit", "1", "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o",
               env={"ANTHROPIC_API_KEY": None})
    line = assert_user_error(r, "'judge'", "ANTHROPIC_API_KEY", "not set")
    assert "authentication failed" not in line and r.stdout == ""
