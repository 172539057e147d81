"""The Gemini provider's batch side through the real google-genai SDK: against the simulator
(answers equal the live ones, at batch prices; failures, expiry, cancel, limits) and against a
scripted loopback server (the request on the wire, odd responses files and operations)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import random

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from odd_server import Reply, gemini_reply
from PIL import Image

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.prices import PriceOverride, price_usd, usage_usd
from judgekit.engine import Engine
from judgekit.engine.batching import supports_batches
from judgekit.errors import (
    AuthError,
    BadRequest,
    Blocked,
    ContentFiltered,
    EmptyReply,
    MalformedReply,
    NotFound,
    ProviderError,
    RateLimited,
    RequestTooLarge,
    TransientError,
)
from judgekit.providers import create_provider, gemini_batch
from judgekit.providers.batch import (
    BatchAPI,
    BatchItem,
    BatchLimits,
    BatchRequestNotRun,
)
from judgekit.providers.batch_errors import BatchCancelled, BatchExpired, cause_of
from judgekit.providers.gemini_batch_wire import _STATES, batch_state, join_lines
from judgekit.sim import SimConfig, SimServer
from judgekit.sim.server import BATCHES_KEY
from judgekit.types import ChatRequest, GenParams, ImagePart, Message, TextPart

KEY_ENV = "JK_GEMINI_BATCH_KEY"
KEY = "AIza-batch-test-0123456789"
MODEL = "gemini-2.0-flash"
PRICE = PriceOverride(input_per_mtok=1.25, output_per_mtok=10.0, cached_input_per_mtok=0.3125)
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

    async def make(url: str, **kw):
        p = create_provider("judge", ModelSpec(provider="gemini", model=kw.pop("model", MODEL), base_url=url,
                                               api_key_env=KEY_ENV, **kw))
        await p.start()
        made.append(p)
        return p

    yield make
    for p in made:
        await p.close()


def png(color: tuple[int, int, int], size: int = 32) -> ImagePart:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buf, format="PNG")
    return ImagePart(buf.getvalue(), "image/png")


def item(i: int, *parts, params: GenParams = PARAMS) -> BatchItem:
    req = ChatRequest("judge", (Message.system("You compare answers."),
                                Message.user(f"Question {i}: which answer is more vivid?", *parts)), params)
    return BatchItem(hashlib.sha256(f"call-{i}".encode()).hexdigest(), req)


async def ended(prov, batch_id: str):
    for _ in range(2000):  # a bound, not a timing assertion: each poll sleeps 10 ms
        status = await prov.poll_batch(batch_id)
        if status.terminal:
            return status
        await asyncio.sleep(0.01)
    raise AssertionError(f"batch {batch_id} never ended")


async def files_of(prov) -> list[str]:
    return [f.name async for f in await prov._client.aio.files.list()]


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


# ------------------------------------------------------------------------- against the simulator

async def test_batch_answers_equal_live_answers_at_half_price(sim, providers):
    cfg = dict(batch_turnaround_s=0.2, cached_prompt_share={MODEL: 0.5}, garbage_rate=0.3)
    live_p = await providers((await sim(**cfg)).root_url, price=PRICE)
    server = await sim(**cfg)
    batch_p = await providers(server.root_url, price=PRICE)
    assert isinstance(batch_p, BatchAPI)
    items = [item(i) for i in range(6)] + [item(6, png((200, 30, 30)), png((30, 30, 200)))]
    live = [await live_p.generate(it.request) for it in items]
    status = await batch_p.submit_batch(items)
    assert (status.state, status.provider_status, status.total) == ("submitted", "BATCH_STATE_PENDING", 7)
    assert status.batch_id.startswith("batches/")
    done = await ended(batch_p, status.batch_id)
    assert (done.state, done.provider_status, done.total, done.succeeded, done.failed) == (
        "ended", "BATCH_STATE_SUCCEEDED", 7, 7, 0)
    outcomes = {o.custom_id: o for o in await batch_p.batch_results(status.batch_id)}
    assert sorted(outcomes) == sorted(it.custom_id for it in items)  # joined on key, not order
    for it, want in zip(items, live, strict=True):
        o = outcomes[it.custom_id]
        assert o.error is None and o.response.text == want.text and o.response.usage == want.usage
        live_cost = usage_usd("gemini", MODEL, want.usage, PRICE)
        assert live_cost > 0 and o.response.cost_usd == pytest.approx(live_cost / 2)
        assert o.extra["batch_id"] == status.batch_id
    assert all(o.response.usage.cached_input_tokens > 0 for o in outcomes.values())
    stats = server.stats()
    assert stats["batches_created_by_api"] == {"gemini": 1} and stats["batch_requests_submitted_by_api"] == {"gemini": 7}
    assert (stats["served"], stats["batch_files_uploaded"], stats["batch_requests_answered"]) == (0, 1, 7)
    # read again (a crash between reading and storing): the same answers
    again = {o.custom_id: o.response.text for o in await batch_p.batch_results(status.batch_id)}
    assert again == {k: o.response.text for k, o in outcomes.items()}


async def test_batch_prices_are_genai_prices_batch_rates(sim, providers):
    server = await sim(batch_turnaround_s=0.0, cached_prompt_share={"gemini-2.5-pro": 0.4})
    p = await providers(server.root_url, model="gemini-2.5-pro")
    status = await p.submit_batch([item(1)])
    await ended(p, status.batch_id)
    (o,) = await p.batch_results(status.batch_id)
    u = o.response.usage
    live = price_usd("gemini", "gemini-2.5-pro", u.input_tokens, u.output_tokens, None, u.cached_input_tokens)
    assert o.response.cost_usd == pytest.approx(price_usd("gemini", "gemini-2.5-pro", u.input_tokens, u.output_tokens,
                                                          None, u.cached_input_tokens, batch=True))
    assert 0 < o.response.cost_usd < 0.55 * live


async def test_request_failures_no_answers_and_a_retry(sim, providers):
    faults = {"prompt_blocked_safety": 0.2, "finish_safety": 0.2}
    cfg = dict(batch_turnaround_s=0.05, reply_faults=faults)
    live_p = await providers((await sim(**cfg)).root_url, price=PRICE)
    server = await sim(**cfg, batch_request_fail_rate=0.4)
    p = await providers(server.root_url, price=PRICE)
    items = [item(i) for i in range(16)]
    status = await p.submit_batch(items)
    await ended(p, status.batch_id)
    outcomes = {o.custom_id: o for o in await p.batch_results(status.batch_id)}
    assert len(outcomes) == 16
    kinds: dict[str, int] = {}
    failed = []
    for it in items:
        o = outcomes[it.custom_id]
        if isinstance(o.error, TransientError):  # the injected 500s: INTERNAL
            assert o.error.status == 500 and "INTERNAL" in str(o.error)
            failed.append(it)
            continue
        try:
            want = await live_p.generate(it.request)
        except ProviderError as err:  # the live call's error class is the batch line's
            assert type(o.error) is type(err) and o.response is None
            kinds[type(err).__name__] = kinds.get(type(err).__name__, 0) + 1
            if isinstance(err, ContentFiltered):  # billed for its prompt, at batch rates
                assert o.extra["cost_usd"] == pytest.approx(usage_usd("gemini", MODEL, err.usage, PRICE) / 2)
        else:
            assert o.error is None and o.response.text == want.text
    assert failed and set(kinds) == {"Blocked", "ContentFiltered"}
    assert server.stats()["batch_requests_injected"] == len(failed)
    again = await p.submit_batch(failed)  # drawn per attempt: a retry can succeed
    await ended(p, again.batch_id)
    assert any(o.error is None for o in await p.batch_results(again.batch_id))


async def test_expiry_reports_what_was_answered(sim, providers):
    server = await sim(batch_turnaround_s=0.05, batch_expire_rate=1.0)
    p = await providers(server.root_url)
    items = [item(i) for i in range(6)]
    status = await p.submit_batch(items)
    done = await ended(p, status.batch_id)
    assert (done.state, done.provider_status, done.succeeded) == ("expired", "BATCH_STATE_EXPIRED", 3)
    outcomes = await p.batch_results(status.batch_id)
    assert len(outcomes) == 3 and all(o.response is not None for o in outcomes)  # the rest: not reported
    assert {o.custom_id for o in outcomes} < {it.custom_id for it in items}
    assert server.stats()["batch_requests_expired"] == 3


async def test_a_batch_refused_as_a_whole(sim, providers):
    server = await sim(batch_turnaround_s=0.02, batch_fail_rate=1.0)
    p = await providers(server.root_url)
    status = await p.submit_batch([item(1), item(2)])
    done = await ended(p, status.batch_id)
    assert done.state == "failed" and "RESOURCE_EXHAUSTED" in done.message and "token limit" in done.message
    assert await p.batch_results(status.batch_id) == []  # the batch layer counts both not run


async def test_cancel(sim, providers):
    server = await sim(batch_turnaround_s=100.0)
    clock = server.app[BATCHES_KEY].clock = Clock()
    p = await providers(server.root_url)
    items = [item(i) for i in range(10)]
    status = await p.submit_batch(items)
    clock.t += 50  # (50 - 10) / 80 of the requests are due
    running = await p.poll_batch(status.batch_id)
    assert (running.state, running.succeeded, running.total) == ("in_progress", 5, 10)
    cancelling = await p.cancel_batch(status.batch_id)
    assert (cancelling.state, cancelling.provider_status) == ("in_progress", "BATCH_STATE_RUNNING")  # no cancelling state
    clock.t += 10
    done = await p.poll_batch(status.batch_id)
    assert (done.state, done.provider_status, done.succeeded) == ("cancelled", "BATCH_STATE_CANCELLED", 5)
    assert len(await p.batch_results(status.batch_id)) == 5
    assert (await p.cancel_batch(status.batch_id)).state == "cancelled"  # ended: returned as it is
    assert server.stats()["batch_requests_cancelled"] == 5


async def test_errors_of_the_batch_calls_map_like_live_ones(sim, providers, monkeypatch):
    server = await sim(api_keys=["right-key-0123"], models=[MODEL])
    p = await providers(server.root_url)
    with pytest.raises(AuthError) as e:
        await p.submit_batch([item(1)])
    assert KEY not in str(e.value) and KEY_ENV in p.describe_error(e.value)
    monkeypatch.setenv(KEY_ENV, "right-key-0123")
    unknown = await providers(server.root_url, model="gemini-9-ultra")
    with pytest.raises(NotFound):
        await unknown.submit_batch([item(1)])
    assert await files_of(unknown) == []  # the upload of a refused batch is deleted
    good = await providers(server.root_url)
    with pytest.raises(NotFound):
        await good.poll_batch("batches/nope")
    failing = await providers((await sim(batch_create_fail_rate=1.0)).root_url)
    with pytest.raises(TransientError) as e:
        await failing.submit_batch([item(1)])
    # a 503 may hide a batch made all the same (a later run finds it by its wave): its file is kept
    assert e.value.status == 503 and len(await files_of(failing)) == 1


async def test_limits_hold_when_split_by_line_bytes(sim, providers, monkeypatch):
    server = await sim(batch_turnaround_s=1000.0)
    p = await providers(server.root_url)
    rng = random.Random(5)
    items = [item(i, *[png((rng.randrange(256), 9, 9), rng.choice([8, 40, 90])) for _ in range(rng.randrange(3))])
             for i in range(12)]
    sizes = [p.batch_line_bytes(it) for it in items]
    assert sizes == [len(p._line(it)) for it in items]
    limit = BatchLimits(max_requests=4, max_bytes=max(sizes) * 2)
    monkeypatch.setattr(gemini_batch, "GEMINI_BATCH_LIMITS", limit)
    assert p.batch_limits == limit
    groups, group, size = [], [], 0
    for it, n in zip(items, sizes, strict=True):
        if group and (len(group) == limit.max_requests or size + n > limit.max_bytes):
            groups.append(group)
            group, size = [], 0
        group.append(it)
        size += n
    groups.append(group)
    jobs = server.app[BATCHES_KEY].jobs
    for g in groups:
        batch_id = (await p.submit_batch(g)).batch_id
        uploaded = await p._client.aio.files.get(name=jobs[batch_id].meta["input_file"])
        assert uploaded.size_bytes == sum(p.batch_line_bytes(it) for it in g) <= limit.max_bytes
        assert [key for key, _ in jobs[batch_id].items] == [it.custom_id for it in g]
    uploads = server.stats()["batch_files_uploaded"]
    with pytest.raises(ValueError, match="bytes, more than"):
        await p.submit_batch(items[:4] if sum(sizes[:4]) > limit.max_bytes else items)
    with pytest.raises(ValueError, match="more than the 4"):
        await p.submit_batch(items[:5])
    with pytest.raises(ValueError, match="twice"):
        await p.submit_batch([items[0], items[0]])
    assert server.stats()["batch_files_uploaded"] == uploads  # nothing sent
    big = ImagePart(b"\x89PNG\r\n\x1a\n" + bytes(21_000_000), "image/png", width=10, height=10)
    with pytest.raises(RequestTooLarge):
        p.batch_line_bytes(item(99, big))


async def test_through_the_engine_answers_equal_live_and_a_restart_submits_nothing_twice(sim, providers, tmp_path):
    """The engine's batch layer with a Gemini alias: a run stopped while its batch runs, started
    again on the same cache, waits on that batch (the simulator saw one batch), and its answers,
    injected failures retried, are the live ones at half price."""
    cfg = dict(cached_prompt_share={MODEL: 0.5}, batch_turnaround_s=0.1, batch_request_fail_rate=0.3)
    live_p = await providers((await sim(**cfg)).root_url, price=PRICE)
    server = await sim(**cfg)
    spec = ModelSpec(provider="gemini", model=MODEL, base_url=server.root_url, api_key_env=KEY_ENV, batch=True,
                     batch_linger_s=0.05, batch_poll_s=0.02, batch_attempts=5, price=PRICE)
    reqs = [ChatRequest("j", (Message.user(f"question {i}"),), GenParams(max_tokens=60), stage="judge",
                        item_id=str(i)) for i in range(8)]
    path = tmp_path / "c.duckdb"
    cache = await CacheStore.open(path, run_id="run1")
    e = Engine({"j": spec}, cache)
    await e.start()
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(r) for r in reqs)))
    for _ in range(2000):  # a bound, not a timing assertion
        if server.stats()["batches_created"]:
            break
        await asyncio.sleep(0.005)
    else:
        raise AssertionError("no batch was created")
    calls.cancel()
    await asyncio.gather(calls, return_exceptions=True)
    await e.close()  # stopped with its batch running
    await cache.close()
    cache = await CacheStore.open(path, run_id="run2")
    e = Engine({"j": spec}, cache)
    await e.start()
    (held,) = e.batches.live()
    assert held.earlier and held.record.batch_id.startswith("batches/")
    rs = await asyncio.gather(*(e.call(r) for r in reqs))
    stats = server.stats()
    injected = stats["batch_requests_injected"]
    assert injected and stats["batch_requests_submitted"] == 8 + injected  # only the failed ones again
    for r, req in zip(rs, reqs, strict=True):
        want = await live_p.generate(req)
        assert r.ok and r.text == want.text and r.response.usage == want.usage
        assert r.response.cost_usd == pytest.approx(usage_usd("gemini", MODEL, want.usage, PRICE) / 2)
    await e.close()
    await cache.close()


def test_no_batch_api_without_an_sdk_that_has_one(monkeypatch, started):
    assert isinstance(started, BatchAPI) and supports_batches(started)
    monkeypatch.setattr(gemini_batch, "sdk_has_batches", lambda: False)
    assert not isinstance(started, BatchAPI) and not supports_batches(started)


# ----------------------------------------------------------------------- a scripted loopback server

def op(state: str = "BATCH_STATE_SUCCEEDED", responses_file: str | None = "files/out", **extra) -> dict:
    meta = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "name": "batches/b1", "model": f"models/{MODEL}", "state": state,
            "createTime": "2020-01-01T00:00:00.123456789Z",
            "batchStats": {"requestCount": "3", "successfulRequestCount": "2", "failedRequestCount": "1"}}
    if responses_file:
        meta["output"] = {"responsesFile": responses_file}
    return {"name": "batches/b1", "metadata": meta, **extra}


class Scripted:
    """A loopback server that records every request and answers the upload, batch, file and
    generateContent routes from a script: ``operation`` (the operation's JSON, or a Reply),
    ``download`` (the responses file, or a Reply), ``create`` (a Reply for the creation)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bytes]] = []
        self.operation: dict | Reply = op()
        self.download: bytes | Reply = b""
        self.create: Reply | None = None
        self.cancel: Reply = Reply(200, {})
        self.deleted: list[str] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self.seen.append((request.method, request.path_qs, raw))
        path = request.path
        final = {"X-Goog-Upload-Status": "final"}
        if path.startswith("/upload/"):
            if "start" in request.headers.get("X-Goog-Upload-Command", ""):
                return web.json_response({}, headers={"X-Goog-Upload-URL": f"{self.url}{path}?upload_id=u1",
                                                      "X-Goog-Upload-Status": "active"})
            return web.json_response({"file": {"name": "files/in1", "sizeBytes": str(len(raw))}}, headers=final)
        if path.endswith(":generateContent"):
            return web.json_response(gemini_reply())
        if path.endswith(":batchGenerateContent"):
            return self.create.response() if self.create else web.json_response(
                {"name": "batches/b1", "metadata": {"name": "batches/b1", "state": "BATCH_STATE_PENDING"}})
        if path.endswith(":cancel"):
            return self.cancel.response()
        if path.endswith(":download"):
            d = self.download
            return d.response() if isinstance(d, Reply) else web.Response(body=d)
        if request.method == "DELETE":
            self.deleted.append(path)
            return web.json_response({})
        o = self.operation
        return o.response() if isinstance(o, Reply) else web.json_response(o)

    async def __aenter__(self) -> Scripted:
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc) -> None:
        await self._runner.cleanup()


async def test_the_batch_line_carries_the_live_request(providers):
    items = [item(1), item(2, png((1, 2, 3)), png((9, 9, 9), 8)),
             item(3, params=GenParams(max_tokens=50, temperature=0.3, top_p=0.9, seed=7)),
             BatchItem("k4", ChatRequest("judge", (Message.user("first"), Message("assistant", (TextPart("reply"),)),
                                                   Message.user("second \u00e9\u2603 \"quoted\"\n")), PARAMS))]
    async with Scripted() as server:
        p = await providers(server.url)
        for it in items:
            await p.generate(it.request)
        live = [json.loads(raw) for m, path, raw in server.seen if path.endswith(":generateContent")]
        server.seen.clear()
        status = await p.submit_batch(items)
        assert status.batch_id == "batches/b1"
        upload = b"".join(raw for m, path, raw in server.seen if "upload_id" in path)
        lines = [json.loads(line) for line in upload.splitlines()]
        assert [line["key"] for line in lines] == [it.custom_id for it in items]
        assert [line["request"] for line in lines] == live  # the live body, byte for byte as JSON
        create = next(json.loads(raw) for m, path, raw in server.seen if path.endswith(":batchGenerateContent"))
        assert create["batch"]["inputConfig"] == {"fileName": "files/in1"}
        assert f"/models/{MODEL}:batchGenerateContent" in next(
            path for m, path, raw in server.seen if path.endswith(":batchGenerateContent"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60), images=st.lists(st.integers(0, 400), max_size=3),
       temperature=st.none() | st.floats(0, 2), system=st.booleans())
def test_line_bytes_are_the_line_s_size(started, text, images, temperature, system):
    parts = [ImagePart(bytes(range(256)) * (n // 256) + bytes(n % 256), "image/png", width=1, height=1)
             for n in images]
    msgs = ((Message.system("sys " + text),) if system else ()) + (Message.user(text or "x", *parts),)
    req = ChatRequest("judge", msgs, GenParams(max_tokens=10, temperature=temperature))
    it = BatchItem(hashlib.sha256(repr(req).encode()).hexdigest(), req)  # a custom_id names its request
    assert started.batch_line_bytes(it) == len(started._line(it))


@pytest.fixture
def started(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    p = create_provider("judge", ModelSpec(provider="gemini", model=MODEL, base_url="http://127.0.0.1:9",
                                           api_key_env=KEY_ENV))
    asyncio.run(p.start())  # builds the client; nothing is sent
    return p


def rline(key, **fields) -> bytes:
    return json.dumps({"key": key, **fields}).encode()


async def test_odd_responses_files_give_outcomes_not_a_crash(providers):
    ok = gemini_reply(({"text": "fine"},))
    lines = [
        rline("ok", response=ok),
        rline("list", response=[1, 2]),  # not a GenerateContentResponse
        rline("wrongtype", response={"usageMetadata": {"promptTokenCount": "lots"}}),
        rline("blocked", response={"promptFeedback": {"blockReason": "SAFETY"},
                                   "usageMetadata": {"promptTokenCount": 9}}),
        rline("filtered", response={"candidates": [{"finishReason": "SAFETY", "index": 0}],
                                    "usageMetadata": {"promptTokenCount": 1_000_000}}),
        rline("empty", response={"candidates": [{"content": {"role": "model"}, "finishReason": "STOP"}]}),
        rline("quota", error={"code": 8, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}),
        rline("bad", error={"code": 3, "message": "bad request", "status": "INVALID_ARGUMENT"}),
        rline("cancelled", error={"status": "CANCELLED", "message": "cancelled"}),
        rline("late", error={"code": 4, "message": "deadline"}),
        rline("internal", error={"code": 13, "message": "oops"}),
        rline("weird", error={"code": "x"}),
        rline("neither", something=1),
        rline("twice", error={"code": 13, "message": "first try"}),
        rline("twice", response=ok),
        rline("twice", error={"code": 13, "message": "after"}),
        b'{"response": {"candidates": []}}',  # no key
        b"not json at all",
        b"[1, 2, 3]",
        b"",
    ]
    async with Scripted() as server:
        server.download = b"\n".join(lines)
        p = await providers(server.url, price=PRICE)
        out = {o.custom_id: o for o in await p.batch_results("batches/b1")}
        assert sorted(out) == sorted({"ok", "list", "wrongtype", "blocked", "filtered", "empty", "quota", "bad",
                                      "cancelled", "late", "internal", "weird", "neither", "twice"})
        assert out["ok"].response.text == "fine" and out["ok"].response.cost_usd > 0 and out["ok"].error is None
        want = {"list": MalformedReply, "wrongtype": MalformedReply, "blocked": Blocked, "filtered": ContentFiltered,
                "empty": EmptyReply, "quota": RateLimited, "bad": BadRequest, "cancelled": BatchCancelled,
                "late": BatchExpired, "internal": TransientError, "weird": TransientError,
                "neither": MalformedReply}
        for key, cls in want.items():
            assert type(out[key].error) is cls and out[key].response is None, (key, out[key].error)
        assert cause_of(out["internal"].error) == "errored (INTERNAL)"  # the line's own status
        assert out["filtered"].extra["cost_usd"] == pytest.approx(1.25 / 2)  # its prompt, at the batch rate
        assert out["twice"].response.text == "fine"  # a response wins over errors
        # the responses file is no JSONL at all: nothing reported (the batch layer asks again)
        server.download = Reply(200, "<html><body>Bad gateway</body></html>", "text/html")
        assert await p.batch_results("batches/b1") == []
        server.download = Reply(502, "<html><body>Bad gateway</body></html>", "text/html")
        with pytest.raises(TransientError):
            await p.batch_results("batches/b1")


async def test_odd_operations(providers):
    async with Scripted() as server:
        p = await providers(server.url)
        st1 = await p.poll_batch("batches/b1")
        assert (st1.state, st1.total, st1.succeeded, st1.failed) == ("ended", 3, 2, 1) and st1.age_s > 0
        server.operation = op("BATCH_STATE_PAUSED_FOR_A_NEW_REASON")
        assert (await p.poll_batch("batches/b1")).state == "in_progress"  # unknown: polled again
        with pytest.raises(ValueError, match="has not ended"):
            await p.batch_results("batches/b1")
        server.operation = {"name": "batches/b1", "done": True, "error": {"code": 13, "message": "lost"}}
        failed = await p.poll_batch("batches/b1")
        assert failed.state == "failed" and "lost" in failed.message
        server.operation = op("BATCH_STATE_FAILED", responses_file=None)
        assert await p.batch_results("batches/b1") == []
        for odd in ({"metadata": {"state": "BATCH_STATE_RUNNING"}}, [1], {"name": "batches/b1", "metadata": {"state": 5}},
                    Reply(200, "<html>maintenance</html>", "text/html")):
            server.operation = odd
            with pytest.raises(MalformedReply):
                await p.poll_batch("batches/b1")
        server.operation = Reply(503, "<html>down</html>", "text/html")
        with pytest.raises(TransientError):
            await p.poll_batch("batches/b1")
        server.operation = op("BATCH_STATE_SUCCEEDED")
        server.cancel = Reply(400, {"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "ended"}})
        assert (await p.cancel_batch("batches/b1")).state == "ended"  # ended already: as it is
        server.operation = op("BATCH_STATE_RUNNING")
        with pytest.raises(BadRequest):
            await p.cancel_batch("batches/b1")


async def test_a_failed_creation_deletes_the_upload(providers):
    async with Scripted() as server:
        server.create = Reply(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "enqueued"}})
        p = await providers(server.url)
        with pytest.raises(RateLimited):
            await p.submit_batch([item(1)])
        assert server.deleted == ["/v1/files/in1"] or server.deleted == ["/v1beta/files/in1"]
        server.create = Reply(200, {"metadata": {}})
        with pytest.raises(MalformedReply):
            await p.submit_batch([item(1)])


# ------------------------------------------------------------------------------------- properties

_KNOWN = {"PENDING": "submitted", "RUNNING": "in_progress", "SUCCEEDED": "ended", "FAILED": "failed",
          "CANCELLED": "cancelled", "EXPIRED": "expired"}


@settings(max_examples=100, deadline=None)
@given(word=st.sampled_from(sorted(_KNOWN)) | st.text(max_size=20),
       prefix=st.sampled_from(["BATCH_STATE_", "JOB_STATE_"]), pad=st.sampled_from(["", " ", "\n"]),
       lower=st.booleans())
def test_state_mapping(word, prefix, pad, lower):
    name = prefix + word
    got = batch_state(pad + (name.lower() if lower else name) + pad)
    if word in _KNOWN:
        assert got == _KNOWN[word]
    elif name.strip().upper() not in _STATES:
        assert got == "in_progress"  # unknown: not terminal, polled again


@pytest.mark.parametrize("value", [None, 3, 2.5, ["BATCH_STATE_RUNNING"], {"state": "x"}])
def test_a_state_that_is_no_string_is_malformed(value):
    with pytest.raises(MalformedReply):
        batch_state(value)


@settings(max_examples=100, deadline=None)
@given(fates=st.lists(st.lists(st.sampled_from(["response", "error", "not_run"]), min_size=1, max_size=3),
                      max_size=8),
       garbage=st.integers(0, 3), seed=st.integers(0, 10**6))
def test_joining_on_key(fates, garbage, seed):
    lines = []
    for k, fate in enumerate(fates):
        for f in fate:
            if f == "response":
                lines.append(rline(f"k{k}", response=gemini_reply(({"text": f"answer {k}"},))))
            else:
                lines.append(rline(f"k{k}", error={"code": 13 if f == "error" else 1, "message": f}))
    lines += [b"{oops", b'{"no": "key"}', b"17"][:garbage]
    random.Random(seed).shuffle(lines)
    joined = join_lines(lines)
    assert joined.garbage == garbage
    assert sorted(o.custom_id for o in joined.outcomes) == sorted(f"k{k}" for k in range(len(fates)))
    assert joined.duplicates == sum(len(f) - 1 for f in fates)
    for o in joined.outcomes:
        fate = fates[int(o.custom_id[1:])]
        if "response" in fate:
            assert o.error is None and o.response.text == f"answer {o.custom_id[1:]}"
        else:
            assert o.response is None and isinstance(o.error, (TransientError, BatchRequestNotRun))
