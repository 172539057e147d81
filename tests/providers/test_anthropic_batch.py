"""The anthropic provider's batch side (Message Batches) through the real anthropic SDK: against the
simulator (answers equal the live ones, at half price with the prompt cache's reads and writes;
errored, expired and canceled requests; cancel; errors of the batch calls; the engine splitting
a wave and, restarted, collecting a batch it did not submit), against a scripted loopback server
(the body on the wire is create()'s, odd result lines, an HTML results body), and hypothesis (the
state mapping, the join)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odd_server import Reply, _Site

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.prices import usage_usd
from judgekit.engine import Engine
from judgekit.errors import (AuthError, BadRequest, EmptyReply, MalformedReply, NotFound, QuotaExhausted,
                             RateLimited, Refused, RequestTooLarge, TransientError)
from judgekit.providers import create_provider
from judgekit.providers.anthropic import AnthropicProvider
from judgekit.providers.anthropic_batch import ANTHROPIC_BATCH_LIMITS, batch_state, join_results
from judgekit.providers.batch import BatchAPI, BatchItem, BatchLimits, BatchRequestNotRun
from judgekit.providers.batch_errors import BatchCancelled, BatchExpired, cause_of
from judgekit.sim import SimConfig, SimServer
from judgekit.sim.server import BATCHES_KEY
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

KEY_ENV = "JK_ANTHROPIC_BATCH_KEY"
KEY = "sk-ant-batch-0123456789-SECRET"
MODEL = "claude-sonnet-4-6"  # genai-prices: $3 / $15, cache reads $0.30, writes $3.75 per Mtok
#: a judge instruction over the 1,024-token minimum of a cached prefix (4 characters a token)
INSTRUCTION = "Compare the two answers for vividness, accuracy and structure, then give a verdict. " * 60
PARAMS = GenParams(max_tokens=120)


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
async def providers():
    made = []

    async def make(url: str, **kw) -> AnthropicProvider:
        p = create_provider("judge", aspec(url, **kw))
        await p.start()
        made.append(p)
        return p

    yield make
    for p in made:
        await p.close()


def aspec(url: str, model: str = MODEL, **kw) -> ModelSpec:
    return ModelSpec(provider="anthropic", model=model, base_url=url, api_key_env=KEY_ENV, **kw)


def png(color: tuple[int, int, int], size: int = 32) -> ImagePart:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buf, format="PNG")
    return ImagePart(buf.getvalue())


def item(i: int, *parts, params: GenParams = PARAMS) -> BatchItem:
    req = ChatRequest("judge", (Message.system(INSTRUCTION),
                                Message.user(*parts, f"Question {i}: which answer is more vivid?")), params)
    return BatchItem(hashlib.sha256(f"call-{i}".encode()).hexdigest(), req)


async def ended(prov, batch_id: str):
    for _ in range(2000):  # a bound, not a timing assertion: each poll sleeps 10 ms
        status = await prov.poll_batch(batch_id)
        if status.terminal:
            return status
        await asyncio.sleep(0.01)
    raise AssertionError(f"batch {batch_id} never ended")


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


# ------------------------------------------------------------------------- against the simulator

async def test_batch_answers_equal_live_answers_at_half_price_cache_included(sim, providers):
    cfg = {"batch_turnaround_s": 0.2, "garbage_rate": 0.3, "seed": 4}
    live_p = await providers((await sim(**cfg)).root_url)
    server = await sim(**cfg)
    batch_p = await providers(server.root_url)
    assert isinstance(batch_p, BatchAPI) and batch_p.batch_limits == ANTHROPIC_BATCH_LIMITS
    items = [item(i) for i in range(5)] + [item(5, png((200, 30, 30)), png((30, 30, 200)))]
    live = [await live_p.generate(it.request) for it in items]
    status = await batch_p.submit_batch(items)
    assert (status.state, status.provider_status, status.total) == ("in_progress", "in_progress", 6)
    done = await ended(batch_p, status.batch_id)
    assert (done.state, done.total, done.succeeded, done.failed) == ("ended", 6, 6, 0)
    outcomes = await batch_p.batch_results(status.batch_id)
    assert [o.custom_id for o in outcomes] == [it.custom_id for it in items]
    for o, want in zip(outcomes, live, strict=True):
        assert o.error is None and o.response.text == want.text and o.response.usage == want.usage
        live_cost = usage_usd("anthropic", MODEL, want.usage)
        assert live_cost > 0 and o.response.cost_usd == pytest.approx(live_cost / 2)
        assert o.extra["batch_id"] == status.batch_id
    # the judge instruction was written to the prompt cache once, then read: both at half their rates
    first, *rest = [o.response.usage for o in outcomes]
    assert first.cache_write_tokens > 1024 and first.cached_input_tokens == 0
    assert all(u.cached_input_tokens > 1024 for u in rest)
    write_live = usage_usd("anthropic", MODEL, first) - usage_usd("anthropic", MODEL, first.__class__(
        first.input_tokens, first.output_tokens))
    assert write_live == pytest.approx(first.cache_write_tokens * (3.75 - 3.0) / 1e6)  # x1.25 input, live
    stats = server.stats()
    assert (stats["batches_created_by_api"], stats["batch_requests_submitted"], stats["served"]) == (
        {"anthropic": 1}, 6, 0)


async def test_errored_expired_and_refused_requests(sim, providers):
    server = await sim(batch_turnaround_s=0.05, reply_faults={"refusal": 0.3}, seed=2)
    prov = await providers(server.root_url)
    bad = item(99, params=GenParams(max_tokens=50, extra=(("stop_sequences", "not a list"),)))
    items = [item(i) for i in range(6)] + [bad]
    status = await prov.submit_batch(items)
    await ended(prov, status.batch_id)
    by = {o.custom_id: o for o in await prov.batch_results(status.batch_id)}
    assert isinstance(by[bad.custom_id].error, BadRequest) and "stop_sequences" in str(by[bad.custom_id].error)
    refused = [o for o in by.values() if isinstance(o.error, Refused)]
    assert refused and all(o.extra["cost_usd"] > 0 for o in refused)  # billed, at batch rates
    assert all(o.response is not None for o in by.values() if o.error is None)

    server = await sim(batch_turnaround_s=0.05, batch_request_fail_rate=1.0)
    prov = await providers(server.root_url)
    status = await prov.submit_batch([item(i) for i in range(2)])
    await ended(prov, status.batch_id)
    errs = [o.error for o in await prov.batch_results(status.batch_id)]
    assert all(type(e) is TransientError and "api_error" in str(e) for e in errs)

    server = await sim(batch_turnaround_s=0.05, batch_expire_rate=1.0)
    prov = await providers(server.root_url)
    status = await prov.submit_batch([item(i) for i in range(6)])
    done = await ended(prov, status.batch_id)
    assert (done.state, done.succeeded, done.failed) == ("ended", 3, 3)
    outcomes = await prov.batch_results(status.batch_id)
    assert sum(isinstance(o.error, BatchRequestNotRun) and "expired" in str(o.error) for o in outcomes) == 3

    server = await sim(batch_turnaround_s=1.0, batch_expire_after_s=0.01)  # expired before it ran any
    prov = await providers(server.root_url)
    status = await prov.submit_batch([item(1)])
    assert (await ended(prov, status.batch_id)).state == "expired"


async def test_cancel(sim, providers):
    server = await sim(batch_turnaround_s=10.0)
    clock = server.app[BATCHES_KEY].clock = Clock()
    prov = await providers(server.root_url)
    status = await prov.submit_batch([item(i) for i in range(8)])
    clock.t += 5.0  # half answered
    st1 = await prov.cancel_batch(status.batch_id)
    assert (st1.state, st1.provider_status) == ("cancelling", "canceling")
    clock.t += 1.0
    done = await prov.poll_batch(status.batch_id)
    assert (done.state, done.provider_status, done.succeeded, done.failed) == ("cancelled", "ended", 4, 4)
    outcomes = await prov.batch_results(status.batch_id)
    assert sum(o.response is not None for o in outcomes) == 4
    assert sum(isinstance(o.error, BatchRequestNotRun) and "canceled" in str(o.error) for o in outcomes) == 4
    again = await prov.cancel_batch(status.batch_id)  # ended already: given back as it is, no error
    assert again.state == "cancelled"


async def test_errors_of_the_batch_calls_are_the_live_ones_with_the_key_redacted(sim, providers):
    server = await sim(api_keys=["another-key"])
    prov = await providers(server.root_url)
    with pytest.raises(AuthError) as e:
        await prov.submit_batch([item(1)])
    assert KEY not in str(e.value)
    server = await sim()
    prov = await providers(server.root_url)
    with pytest.raises(NotFound):
        await prov.poll_batch("msgbatch_gone")
    with pytest.raises(ValueError, match="twice"):
        await prov.submit_batch([item(1), item(1)])
    status = await prov.submit_batch([item(1)])
    with pytest.raises(ValueError, match="has not ended"):  # the default turnaround is 5 s
        await prov.batch_results(status.batch_id)
    huge = BatchItem("k" * 64, ChatRequest("judge", (Message.user("x" * 33_000_000),), PARAMS))
    with pytest.raises(RequestTooLarge):  # as its live call would: that call fails, not the batch
        prov.batch_line_bytes(huge)


# ------------------------------------------------------------------------- with the engine

def engine_spec(url: str, **kw) -> ModelSpec:
    return aspec(url, batch=True, batch_linger_s=0.05, batch_poll_s=0.01, limits={"max_attempts": 3}, **kw)


def ask(i: int) -> ChatRequest:
    return ChatRequest("j", (Message.system(INSTRUCTION), Message.user(f"Question {i}: which answer?")), PARAMS,
                       stage="judge", item_id=str(i))


async def test_the_engine_splits_a_wave_and_a_restart_collects_what_it_did_not_submit(sim, providers, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setattr(AnthropicProvider, "batch_limits", BatchLimits(max_requests=3, max_bytes=10**8))
    live_p = await providers((await sim()).root_url)
    live = [await live_p.generate(ask(i)) for i in range(10)]
    server = await sim(batch_turnaround_s=3600.0)
    clock = server.app[BATCHES_KEY].clock = Clock()
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    e = Engine({"j": engine_spec(server.root_url)}, cache)
    await e.start()
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(ask(i)) for i in range(7))))
    while server.stats()["batches_created"] < 3:  # 7 calls: batches of 3, 3 and 1
        await asyncio.sleep(0.01)
    calls.cancel()  # the run stops while its batches run
    await asyncio.gather(calls, return_exceptions=True)
    await e.close()
    await cache.close()
    assert server.stats()["batch_requests_submitted"] == 7

    clock.t += 3600.0  # the batches end while no run follows them
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run2")
    e = Engine({"j": engine_spec(server.root_url)}, cache)  # a new provider: it never saw those batches
    await e.start()
    rs = asyncio.ensure_future(asyncio.gather(*(e.call(ask(i)) for i in range(10))))
    while server.stats()["batches_created"] < 4:  # the 3 new calls
        await asyncio.sleep(0.01)
    clock.t += 3600.0
    rs = await rs
    assert [r.text for r in rs] == [w.text for w in live]
    stats = server.stats()
    assert (stats["batches_created"], stats["batch_requests_submitted"], stats["served"]) == (4, 10, 0)
    for r in rs:  # at half price, whichever run's batch answered
        assert r.response.cost_usd == pytest.approx(usage_usd("anthropic", MODEL, r.response.usage) / 2)
    await e.close()
    await cache.close()


# ------------------------------------------------------------------------- a scripted server

def batch_json(batch_id: str = "msgbatch_1", status: str = "ended", url: str | None = "AUTO", **counts) -> dict:
    c = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0, **counts}
    return {"id": batch_id, "type": "message_batch", "processing_status": status, "request_counts": c,
            "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": None, "archived_at": None, "cancel_initiated_at": None, "results_url": url}


def message(text="fine", stop="end_turn", **usage) -> dict:
    u = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
         **usage}
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": text}] if text is not None else [], "stop_reason": stop,
            "usage": u}


def errored(etype: str, msg: str = "no") -> dict:
    return {"type": "errored", "error": {"type": "error", "error": {"type": etype, "message": msg}}}


class Scripted(_Site):
    """A Message Batches API of a script: a creation answers ``created``, a retrieve ``batch``
    (its ``results_url`` "AUTO": this server's ``/results``), the results URL ``results`` (a Reply)."""

    def __init__(self) -> None:
        super().__init__()
        self.created: dict = batch_json(status="in_progress", processing=1)
        self.batch: dict = batch_json()
        self.results = Reply(200, b"", "application/x-jsonl")

    async def respond(self, request, body):
        if request.path == "/results":
            return self.results.response()
        if request.method == "POST" and request.path == "/v1/messages/batches":
            return Reply(200, self.created).response()
        url = self.batch.get("results_url")
        return Reply(200, {**self.batch, "results_url": self.url + "/results" if url == "AUTO" else url}).response()


def jsonl(*lines) -> bytes:
    return b"\n".join(x if isinstance(x, bytes) else json.dumps(x).encode() for x in lines) + b"\n"


async def test_the_body_on_the_wire_is_the_sdks_create_and_the_line_sizes_add_up(providers):
    async with Scripted() as site:
        prov = await providers(site.url)
        items = [item(i, png((10 * i, 0, 0))) for i in range(3)] + [item(3)]
        items.append(BatchItem("u" * 64, ChatRequest("judge", (Message.user("caf\u00e9 \u2014 na\u00efve"),),
                                                     PARAMS)))
        await prov.submit_batch(items)
        sent = site.seen[-1][2]
        client = anthropic.AsyncAnthropic(base_url=site.url, api_key="k", max_retries=0)
        try:
            await client.messages.batches.create(requests=[
                {"custom_id": it.custom_id, "params": prov.request_body(it.request)} for it in items])
        finally:
            await client.close()
        assert sent == site.seen[-1][2]  # byte for byte what the SDK's create() sends
        assert len(sent) == sum(prov.batch_line_bytes(it) for it in items) - 1 + len(b'{"requests":[]}')
        params = json.loads(sent)["requests"][0]["params"]
        assert params["system"][-1]["cache_control"] == {"type": "ephemeral"}  # the prompt cache's marks
        assert params["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
        assert site.seen[-2][1].get("Content-Type") == "application/json"


async def test_odd_result_lines_give_the_right_outcomes(providers, caplog):
    ids = [f"id{i}" for i in range(16)]
    lines = [
        b"this is not json",
        {"custom_id": ids[0], "result": {"type": "succeeded", "message": message("one")}},
        {"custom_id": "stranger", "result": {"type": "succeeded", "message": message("who?")}},
        {"custom_id": ids[1], "result": errored("invalid_request_error", "prompt is too long")},
        {"custom_id": ids[2], "result": errored("rate_limit_error")},
        {"custom_id": ids[3], "result": errored("overloaded_error")},
        {"custom_id": ids[4], "result": errored("billing_error", "Your credit balance is too low")},
        {"custom_id": ids[5], "result": errored("authentication_error")},
        {"custom_id": ids[6], "result": errored("brand_new_error")},
        {"custom_id": ids[7], "result": {"type": "canceled"}},
        {"custom_id": ids[8], "result": {"type": "expired"}},
        {"custom_id": ids[9], "result": {"type": "succeeded", "message": message(None)}},
        {"custom_id": ids[10], "result": {"type": "succeeded", "message": {"content": 42}}},
        {"custom_id": ids[11], "result": errored("api_error")},
        {"custom_id": ids[11], "result": {"type": "succeeded", "message": message("second line wins")}},
        {"custom_id": ids[0], "result": errored("api_error")},  # after an answer: ignored
        {"result": {"type": "succeeded"}},  # no custom_id
        [1, 2],
        {"custom_id": ids[12], "result": {"type": "mystery"}},
        # ids[13]: no line at all
        {"custom_id": ids[14], "result": errored("invalid_request_error", "first")},
        {"custom_id": ids[14], "result": errored("api_error", "second")},  # two errors: the first stays
        {"custom_id": ids[15], "result": {"type": "succeeded", "message": message("first")}},
        {"custom_id": ids[15], "result": {"type": "succeeded", "message": message("second")}},
    ]
    async with Scripted() as site:
        site.batch = batch_json(succeeded=3, errored=8, canceled=1, expired=1)
        site.results = Reply(200, jsonl(*lines), "application/x-jsonl")
        prov = await providers(site.url)
        got = {o.custom_id: o for o in await prov.batch_results("msgbatch_1", custom_ids=ids)}
        assert list(got) == ids  # exactly the batch's requests, in order: the stranger left out
        assert got[ids[0]].response.text == "one" and got[ids[0]].response.cost_usd > 0
        kinds = {i: type(got[c].error) for i, c in enumerate(ids) if got[c].error is not None}
        assert kinds == {1: BadRequest, 2: RateLimited, 3: TransientError, 4: QuotaExhausted, 5: AuthError,
                         6: TransientError, 7: BatchCancelled, 8: BatchExpired, 9: EmptyReply,
                         10: MalformedReply, 12: MalformedReply, 13: BatchRequestNotRun, 14: BadRequest}
        assert got[ids[11]].response.text == "second line wins" and got[ids[15]].response.text == "first"
        assert "prompt is too long" in str(got[ids[1]].error) and "mystery" in str(got[ids[12]].error)
        causes = {i: cause_of(got[c].error) for i, c in enumerate(ids) if got[c].error is not None}
        assert (causes[1], causes[3], causes[7], causes[8], causes[13]) == (
            "errored (invalid_request_error)", "errored (overloaded_error)", "cancelled", "expired", "not reported")
        assert "unreadable" in caplog.text and "stranger" in caplog.text

        # a provider that did not submit the batch (a restarted run) reports every line it can read
        fresh = await providers(site.url)
        got = {o.custom_id for o in await fresh.batch_results("msgbatch_1")}
        assert got == set(ids) - {ids[13]} | {"stranger"}


async def test_a_results_body_that_is_not_jsonl_is_read_again_later_not_resubmitted(providers):
    async with Scripted() as site:
        site.batch = batch_json(succeeded=2)
        site.results = Reply(200, "<html><body><h1>502 Bad Gateway</h1></body></html>\n", "text/html")
        prov = await providers(site.url)
        with pytest.raises(MalformedReply, match="not JSONL.*text/html"):
            await prov.batch_results("msgbatch_1", custom_ids=["a", "b"])
        site.results = Reply(200, b"", "application/x-jsonl")  # empty, while the batch reports answers
        with pytest.raises(MalformedReply):
            await prov.batch_results("msgbatch_1", custom_ids=["a", "b"])
        site.results = Reply(503, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
        with pytest.raises(TransientError):
            await prov.batch_results("msgbatch_1")
        site.batch = {**batch_json(url=None), "archived_at": "2026-02-01T00:00:00Z"}  # results gone (29 days)
        out = await prov.batch_results("msgbatch_1", custom_ids=["a"])
        assert isinstance(out[0].error, BatchRequestNotRun) and "archived" in str(out[0].error)


async def test_odd_batch_objects(providers):
    async with Scripted() as site:
        prov = await providers(site.url)
        site.batch = batch_json(status="validating_something_new", processing=3)
        st1 = await prov.poll_batch("msgbatch_1")
        assert (st1.state, st1.provider_status, st1.terminal) == ("in_progress", "validating_something_new", False)
        assert st1.age_s > 0
        site.batch = {**batch_json(), "processing_status": 7}
        with pytest.raises(MalformedReply):
            await prov.poll_batch("msgbatch_1")
        site.batch = {**batch_json(), "id": None}
        with pytest.raises(MalformedReply, match="no batch id"):
            await prov.poll_batch("msgbatch_1")


# ------------------------------------------------------------------------------------ hypothesis

_WORDS = st.one_of(st.sampled_from(["in_progress", "canceling", "ended", "ENDED ", "cancelling"]), st.text(max_size=12))
_COUNTS = st.fixed_dictionaries({k: st.integers(0, 5) for k in ("processing", "succeeded", "errored", "canceled",
                                                                  "expired")})


@settings(max_examples=200, deadline=None)
@given(_WORDS, st.booleans(), _COUNTS)
def test_a_batch_is_terminal_exactly_when_its_processing_has_ended(word, cancel_asked, counts):
    state = batch_state(word, cancel_asked=cancel_asked, counts=counts)
    ended_ = word.strip().lower() == "ended"
    assert (state in ("ended", "cancelled", "expired")) == ended_
    if ended_:
        assert (state == "cancelled") == cancel_asked
        assert state != "expired" or (counts["expired"] and counts["expired"] == sum(counts.values()))


_KINDS = st.sampled_from(["succeeded", "errored", "canceled", "expired", None])


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-f0-9]{8}", fullmatch=True), _KINDS, min_size=1, max_size=12),
       st.integers(0, 3), st.integers(0, 3), st.randoms(use_true_random=False))
def test_the_join_answers_each_request_once_whatever_the_lines(kinds, garbage, strangers, rnd: random.Random):
    lines: list[bytes] = []
    for cid, kind in kinds.items():
        if kind is None:
            continue  # no line for it
        result = {"succeeded": {"type": "succeeded", "message": message(cid)}, "errored": errored("api_error"),
                  "canceled": {"type": "canceled"}, "expired": {"type": "expired"}}[kind]
        lines.append(json.dumps({"custom_id": cid, "result": result}).encode())
        if kind in ("succeeded", "errored") and rnd.random() < 0.3:  # repeated as an error: the answer stays
            lines.append(json.dumps({"custom_id": cid, "result": errored("overloaded_error")}).encode())
    lines += [b"{not json" for _ in range(garbage)]
    lines += [json.dumps({"custom_id": f"x{i}", "result": {"type": "expired"}}).encode() for i in range(strangers)]
    rnd.shuffle(lines)
    ids = list(kinds)
    joined, read = join_results(ids, lines)
    assert [o.custom_id for o in joined.outcomes] == ids
    assert joined.garbage == garbage and len(joined.unknown) == strangers and read == len(lines) - garbage
    for o in joined.outcomes:
        kind = kinds[o.custom_id]
        if kind == "succeeded":
            assert o.error is None and o.response.text == o.custom_id
        else:
            assert o.response is None and (type(o.error) is TransientError if kind == "errored"
                                           else isinstance(o.error, BatchRequestNotRun))
