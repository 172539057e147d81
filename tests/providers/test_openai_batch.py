"""The OpenAI provider's batch side (openai, azure and sim) through the real openai SDK: against
the simulator (answers equal the live ones, at batch prices; failures, expiry, cancel, limits) and
against scripted loopback servers (the body on the wire, odd result files, refused batches)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import random

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from judgekit.config import ModelSpec
from judgekit.cost.prices import PriceOverride, price_usd, usage_usd
from judgekit.errors import (
    AuthError,
    BadRequest,
    ContentFiltered,
    EmptyReply,
    MalformedReply,
    NotFound,
    QuotaExhausted,
    RateLimited,
    Refused,
    RequestTooLarge,
    TransientError,
    UnsupportedParameter,
)
from judgekit.providers import create_provider, openai_batch
from judgekit.providers.batch import (
    BatchAPI,
    BatchItem,
    BatchLimits,
    BatchRequestNotRun,
)
from judgekit.providers.batch_errors import BatchCancelled, BatchExpired, BatchFailed, BatchQueueFull, cause_of
from judgekit.providers.openai_batch import batch_state, join_results
from judgekit.sim import SimConfig, SimServer
from judgekit.sim.server import BATCHES_KEY
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

KEY_ENV = "JK_BATCH_KEY"
KEY = "sk-batch-test-0123456789"
PRICE = PriceOverride(input_per_mtok=2.5, output_per_mtok=10.0, cached_input_per_mtok=1.25)


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

    async def make(spec: ModelSpec):
        p = create_provider("judge", spec)
        await p.start()
        made.append(p)
        return p

    yield make
    for p in made:
        await p.close()


def png(color: tuple[int, int, int], size: int = 32) -> ImagePart:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buf, format="PNG")
    return ImagePart(buf.getvalue())


PARAMS = GenParams(max_tokens=120)


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


def sim_spec(server: SimServer, model: str = "sim-judge", **kw) -> ModelSpec:
    return ModelSpec(provider="sim", model=model, sim={"url": server.base_url}, **kw)


# ------------------------------------------------------------------------- against the simulator

async def test_batch_answers_equal_live_answers_at_half_price(sim, providers):
    cfg = dict(batch_turnaround_s=0.2, cached_prompt_share={"sim-judge": 0.5}, garbage_rate=0.3)
    live_p = await providers(sim_spec(await sim(**cfg), price=PRICE))
    server = await sim(**cfg)
    batch_p = await providers(sim_spec(server, price=PRICE))
    assert isinstance(batch_p, BatchAPI)
    items = [item(i) for i in range(6)] + [item(6, png((200, 30, 30)), png((30, 30, 200)))]
    live = [await live_p.generate(it.request) for it in items]
    status = await batch_p.submit_batch(items)
    assert (status.state, status.provider_status) == ("submitted", "validating")
    done = await ended(batch_p, status.batch_id)  # polled to completion through in_progress
    assert (done.state, done.total, done.succeeded, done.failed) == ("ended", 7, 7, 0)
    outcomes = await batch_p.batch_results(status.batch_id)
    assert [o.custom_id for o in outcomes] == [it.custom_id for it in items]
    for o, want in zip(outcomes, live, strict=True):
        assert o.error is None and o.response.text == want.text and o.response.usage == want.usage
        live_cost = usage_usd("sim", "sim-judge", want.usage, PRICE)
        assert live_cost > 0 and o.response.cost_usd == pytest.approx(live_cost / 2)
        assert o.extra["batch_id"] == status.batch_id
    assert any(o.response.usage.cached_input_tokens for o in outcomes)
    stats = server.stats()
    assert (stats["batches_created"], stats["batch_requests_submitted"], stats["served"]) == (1, 7, 0)


async def test_genai_prices_batch_rates_for_openai_models(sim, providers):
    server = await sim(batch_turnaround_s=0.0)
    p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, api_key_env=KEY_ENV))
    items = [item(i) for i in range(3)]
    outcomes = await p.batch_results((await p.submit_batch(items)).batch_id)
    for o in outcomes:
        u = o.response.usage
        assert o.response.cost_usd == pytest.approx(usage_usd("openai", "gpt-4o", u) / 2)
        assert o.response.cost_usd == pytest.approx(price_usd("openai", "gpt-4o", u.input_tokens, u.output_tokens,
                                                              batch=True))


async def test_azure_batch_round_trip_through_the_simulator(sim, providers):
    server = await sim(batch_turnaround_s=0.0, azure_deployments={"team-4o": "gpt-4o"})
    p = await providers(ModelSpec(provider="azure", model="team-4o", serves="gpt-4o", base_url=server.root_url,
                                  api_key_env=KEY_ENV, api_version="2024-10-21"))
    items = [item(i) for i in range(3)]
    live = [await p.generate(it.request) for it in items]
    outcomes = await p.batch_results((await p.submit_batch(items)).batch_id)
    assert [o.response.text for o in outcomes] == [r.text for r in live]
    assert outcomes[0].response.cost_usd == pytest.approx(usage_usd("azure", "gpt-4o", live[0].usage) / 2)
    assert server.stats()["batch_requests_submitted_by_api"] == {"azure": 3}


def test_batch_prices():
    # genai-prices' batch variant (gpt-4o: 1.25 / 5 $/Mtok), half price where it has none (Claude 3.5 Sonnet)
    assert price_usd("openai", "gpt-4o", 1_000_000, 1_000_000, batch=True) == pytest.approx(6.25)
    live = price_usd("anthropic", "claude-3-5-sonnet-20241022", 1000, 100)
    assert price_usd("anthropic", "claude-3-5-sonnet-20241022", 1000, 100, batch=True) == pytest.approx(live / 2)
    own = PriceOverride(input_per_mtok=1.0, output_per_mtok=2.0, batch_discount=0.25)
    assert price_usd("sim", "x", 1_000_000, 1_000_000, own, batch=True) == pytest.approx(2.25)
    assert price_usd("sim", "x", 1_000_000, 1_000_000, PRICE, batch=True) == pytest.approx(6.25)
    assert price_usd("sim", "x", 1, 1, batch=True) == 0.0


async def test_request_failures_expiry_and_no_answers_give_their_classes(sim, providers):
    p = await providers(sim_spec(await sim(batch_turnaround_s=0.0, batch_request_fail_rate=1.0)))
    outcomes = await p.batch_results((await p.submit_batch([item(i) for i in range(3)])).batch_id)
    for o in outcomes:
        assert type(o.error) is TransientError and o.error.status == 500 and o.error.retryable
        assert cause_of(o.error) == "errored (server_error)"  # the provider's own error type
    server = await sim(batch_turnaround_s=0.0, batch_expire_rate=1.0)
    p = await providers(sim_spec(server))
    status = await p.submit_batch([item(i) for i in range(5)])
    assert (await p.poll_batch(status.batch_id)).state == "expired"
    outcomes = await p.batch_results(status.batch_id)
    assert sum(o.response is not None for o in outcomes) == 2
    not_run = [o.error for o in outcomes if o.response is None]
    assert len(not_run) == 3 and all(type(e) is BatchExpired and e.retryable for e in not_run)
    assert {cause_of(e) for e in not_run} == {"expired"}
    assert all("batch_expired" in str(e) for e in not_run)
    p = await providers(sim_spec(await sim(batch_turnaround_s=0.0, reply_fault_models={"sim-judge": "content_filter"}),
                                 price=PRICE))
    (o,) = await p.batch_results((await p.submit_batch([item(0)])).batch_id)
    assert isinstance(o.error, ContentFiltered) and o.extra["cost_usd"] > 0


async def test_a_batch_refused_as_a_whole(sim, providers):
    p = await providers(sim_spec(await sim(batch_turnaround_s=0.0, batch_fail_rate=1.0)))
    status = await p.submit_batch([item(i) for i in range(2)])
    done = await p.poll_batch(status.batch_id)
    assert done.state == "failed" and "token_limit_exceeded" in done.message
    outcomes = await p.batch_results(status.batch_id)
    assert all(type(o.error) is BatchQueueFull and "token_limit_exceeded" in str(o.error) for o in outcomes)
    assert all(isinstance(o.error, BatchRequestNotRun) and cause_of(o.error) == "queue full" for o in outcomes)


async def test_cancel(sim, providers):
    server = await sim(batch_turnaround_s=10.0)
    clock = server.app[BATCHES_KEY].clock = _Clock()
    p = await providers(sim_spec(server))
    items = [item(i) for i in range(8)]
    status = await p.submit_batch(items)
    clock.t += 5.0
    cancelling = await p.cancel_batch(status.batch_id)
    assert (cancelling.state, cancelling.succeeded) == ("cancelling", 4)
    with pytest.raises(ValueError, match="has not ended"):
        await p.batch_results(status.batch_id)
    clock.t += 1.0
    assert (await p.poll_batch(status.batch_id)).state == "cancelled"
    assert (await p.cancel_batch(status.batch_id)).state == "cancelled"  # again: as it is, no error
    outcomes = await p.batch_results(status.batch_id)
    assert [o.response is not None for o in outcomes].count(True) == 4
    assert all(type(o.error) is BatchCancelled and "cancelled" in str(o.error) for o in outcomes if o.error)


class _Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


async def test_errors_of_the_batch_endpoints_map_like_live_ones(sim, providers):
    server = await sim(api_keys=["the-right-key-42"])
    p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, api_key_env=KEY_ENV))
    with pytest.raises(AuthError) as err:
        await p.submit_batch([item(0)])
    assert KEY not in str(err.value) and KEY not in repr(err.value.__cause__)
    p = await providers(sim_spec(await sim()))
    with pytest.raises(NotFound):
        await p.poll_batch("batch_unknown")
    p = await providers(sim_spec(await sim(batch_create_fail_rate=1.0)))
    with pytest.raises(TransientError) as err:
        await p.submit_batch([item(0)])
    assert err.value.status == 500 and err.value.retryable


async def test_limits_hold_when_split_by_line_bytes(sim, providers, monkeypatch):
    server = await sim(batch_turnaround_s=0.0)
    p = await providers(sim_spec(server))
    rng = random.Random(5)
    items = [item(i, *[png((rng.randrange(256), 9, 9), rng.choice([8, 40, 90])) for _ in range(rng.randrange(3))])
             for i in range(12)]
    sizes = [p.batch_line_bytes(it) for it in items]
    limit = BatchLimits(max_requests=4, max_bytes=max(sizes) * 2)
    monkeypatch.setattr(openai_batch, "OPENAI_BATCH_LIMITS", limit)
    assert p.batch_limits == limit
    groups, group, size = [], [], 0
    for it, n in zip(items, sizes, strict=True):
        if group and (len(group) == limit.max_requests or size + n > limit.max_bytes):
            groups.append(group)
            group, size = [], 0
        group.append(it)
        size += n
    groups.append(group)
    client = p._client
    for g in groups:
        batch = await client.batches.retrieve((await p.submit_batch(g)).batch_id)
        data = (await client.files.content(batch.input_file_id)).content
        assert len(data) == sum(p.batch_line_bytes(it) for it in g) <= limit.max_bytes
        assert [json.loads(line)["custom_id"] for line in data.splitlines()] == [it.custom_id for it in g]
    uploaded = server.stats()["batch_files_uploaded"]
    with pytest.raises(ValueError, match="bytes, more than"):
        await p.submit_batch(items[:4] if sum(sizes[:4]) > limit.max_bytes else items)
    with pytest.raises(ValueError, match="more than the 4"):
        await p.submit_batch(items[:5])
    with pytest.raises(ValueError, match="twice"):
        await p.submit_batch([items[0], items[0]])
    assert server.stats()["batch_files_uploaded"] == uploaded  # nothing sent
    big = ImagePart(b"\x89PNG\r\n\x1a\n" + bytes(21_000_000), width=10, height=10)
    with pytest.raises(RequestTooLarge):
        p.batch_line_bytes(item(99, big))


# ----------------------------------------------------------------------- scripted loopback servers

class Scripted:
    """A loopback server that records every request and answers the Files, Batches and chat
    routes from a script: ``files`` (id -> bytes), ``batch`` (the Batch object), ``create_status``."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict, bytes]] = []
        self.files: dict[str, bytes] = {}
        self.batch: dict = {}
        self.create_status = 200
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self.seen.append((request.method, request.path_qs, dict(request.headers), raw))
        path = request.path.replace("/openai/", "/v1/")
        if path.endswith("/chat/completions"):
            return web.json_response({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                                      "choices": [{"index": 0, "message": {"role": "assistant", "content": "live"},
                                                   "finish_reason": "stop"}],
                                      "usage": {"prompt_tokens": 5, "completion_tokens": 1}})
        if path == "/v1/files" and request.method == "POST":
            self.files["file-in"] = _multipart_file(raw, request.headers["content-type"])
            return web.json_response({"id": "file-in", "object": "file", "bytes": 1, "created_at": 0,
                                      "filename": "x.jsonl", "purpose": "batch", "status": "processed"})
        if path.startswith("/v1/files/") and request.method == "DELETE":
            return web.json_response({"id": path.split("/")[3], "object": "file", "deleted": True})
        if path.startswith("/v1/files/") and path.endswith("/content"):
            return web.Response(body=self.files[path.split("/")[3]], content_type="application/octet-stream")
        if path == "/v1/batches":
            if self.create_status != 200:
                return web.json_response({"error": {"message": "boom", "type": "server_error", "param": None,
                                                    "code": None}}, status=self.create_status)
            return web.json_response(self.batch or _batch("validating"))
        if path.startswith("/v1/batches/"):
            return web.json_response(self.batch)
        return web.json_response({"error": {"message": "no route"}}, status=404)

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


def _multipart_file(raw: bytes, content_type: str) -> bytes:
    boundary = content_type.split("boundary=")[1].strip('"').encode()
    for part in raw.split(b"--" + boundary):
        head, _, data = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return data[: -2] if data.endswith(b"\r\n") else data
    raise AssertionError("no file part")


def _batch(status: str, **kw) -> dict:
    return {"id": "batch_1", "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": "file-in",
            "completion_window": "24h", "status": status, "created_at": 1_800_000_000,
            "request_counts": {"total": 0, "completed": 0, "failed": 0}, **kw}


async def test_the_batch_line_carries_the_live_body(providers):
    params = GenParams(temperature=0.2, max_tokens=77, seed=3, image_detail="low", extra=(("stop", ["END"]),))
    it = item(1, png((1, 2, 3)), params=params)
    async with Scripted() as srv:
        p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=srv.url + "/v1",
                                      api_key_env=KEY_ENV))
        await p.generate(it.request)
        live_body = json.loads(srv.seen[-1][3])
        status = await p.submit_batch([it])
        (line,) = srv.files["file-in"].splitlines()
        create = json.loads(srv.seen[-1][3])
    assert json.loads(line) == {"custom_id": it.custom_id, "method": "POST", "url": "/v1/chat/completions",
                                "body": live_body}
    assert live_body["stop"] == ["END"] and "extra_body" not in live_body  # extra parameters are body fields
    assert len(line) + 1 == p.batch_line_bytes(it)
    assert create == {"input_file_id": "file-in", "endpoint": "/v1/chat/completions", "completion_window": "24h",
                      "metadata": {"source": "judgekit", "alias": "judge"}}
    assert (status.batch_id, status.state, status.provider_status) == ("batch_1", "submitted", "validating")


async def test_azure_batches_use_its_paths_and_deployment(providers):
    it = item(2)
    async with Scripted() as srv:
        p = await providers(ModelSpec(provider="azure", model="team-4o", serves="gpt-4o", base_url=srv.url,
                                      api_key_env=KEY_ENV, api_version="2024-10-21"))
        await p.generate(it.request)
        live_body = json.loads(srv.seen[-1][3])
        await p.submit_batch([it])
        paths = [s[1] for s in srv.seen]
        create = json.loads(srv.seen[-1][3])
        line = json.loads(srv.files["file-in"])
    assert paths == ["/openai/deployments/team-4o/chat/completions?api-version=2024-10-21",
                     "/openai/files?api-version=2024-10-21", "/openai/batches?api-version=2024-10-21"]
    assert srv.seen[1][2]["api-key"] == KEY
    assert line["url"] == "/chat/completions" and line["body"] == live_body and live_body["model"] == "team-4o"
    assert create == {"input_file_id": "file-in", "endpoint": "/chat/completions", "completion_window": "24h"}


def _ok(text, **usage) -> dict:
    return {"status_code": 200, "request_id": "req_x", "body": {
        "id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, **usage}}}


def _err(status, message="nope", **error) -> dict:
    return {"status_code": status, "request_id": "req_y", "body": {"error": {"message": message, **error}}}


async def test_odd_result_files_give_outcomes_not_a_crash(providers):
    cases = {
        "answer": _ok("a fine answer", prompt_tokens_details={"cached_tokens": 400}),
        "empty": _ok(None),
        "refused": {**_ok(None), "body": {**_ok(None)["body"], "choices": [
            {"index": 0, "message": {"role": "assistant", "content": None, "refusal": "no"}, "finish_reason": "stop"}]}},
        "filtered": {**_ok(None), "body": {**_ok(None)["body"], "choices": [
            {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "content_filter"}]}},
        "malformed": {"status_code": 200, "body": {"choices": "nope"}},
        "no-status": {"body": {}},
        "rate": _err(429, "Rate limit reached for gpt-4o on requests per min (RPM). Please try again in 2s."),
        "quota": _err(429, "You exceeded your current quota", code="insufficient_quota", type="insufficient_quota"),
        "bad": _err(400, "bad request"),
        "param": _err(400, "Unsupported parameter: 'max_tokens'", code="unsupported_parameter", param="max_tokens"),
        "auth": _err(401, "Incorrect API key"),
        "server": _err(500, "server error"),
    }
    lines = [json.dumps({"id": f"r{i}", "custom_id": cid, "response": r, "error": None})
             for i, (cid, r) in enumerate(cases.items())]
    lines += [
        json.dumps({"id": "e1", "custom_id": "expired", "response": None,
                    "error": {"code": "batch_expired", "message": "This request could not be executed before the "
                                                                  "completion window expired."}}),
        json.dumps({"id": "e2", "custom_id": "other-error", "response": None,
                    "error": {"code": "server_error", "message": "oops"}}),
        json.dumps({"id": "e3", "custom_id": "answer", "response": None,  # answered already: ignored
                    "error": {"code": "batch_expired", "message": "late"}}),
        "this line is not json {",
        json.dumps({"id": "e4", "response": _ok("no custom id")}),
        json.dumps({"id": "e5", "custom_id": "not-in-this-batch", "response": _ok("stray")}),
        "",
    ]
    ids = [*cases, "expired", "other-error", "missing"]
    random.Random(1).shuffle(lines)
    async with Scripted() as srv:
        srv.files = {"file-in": b"".join(openai_batch.batch_line(c, "/v1/chat/completions", {"model": "gpt-4o"})
                                          for c in ids),
                     "file-out": "\n".join(lines[: len(lines) // 2]).encode(),
                     "file-err": "\n".join(lines[len(lines) // 2:]).encode()}
        srv.batch = _batch("completed", output_file_id="file-out", error_file_id="file-err",
                           request_counts={"total": len(ids), "completed": 1, "failed": 11})
        p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=srv.url + "/v1",
                                      api_key_env=KEY_ENV))
        outcomes = await p.batch_results("batch_1")
    assert [o.custom_id for o in outcomes] == ids
    got = {o.custom_id: o for o in outcomes}
    answer = got["answer"].response
    assert answer.text == "a fine answer" and answer.usage.cached_input_tokens == 400 and answer.request_id == "req_x"
    assert answer.cost_usd == pytest.approx(usage_usd("openai", "gpt-4o", answer.usage) / 2, rel=0.2)
    assert answer.cost_usd == pytest.approx(price_usd("openai", "gpt-4o", 1000, 100, None, 400, batch=True))
    kinds = {cid: type(o.error) for cid, o in got.items() if o.error is not None}
    assert kinds == {"empty": EmptyReply, "refused": Refused, "filtered": ContentFiltered, "malformed": MalformedReply,
                     "no-status": MalformedReply, "rate": RateLimited, "quota": QuotaExhausted, "bad": BadRequest,
                     "param": UnsupportedParameter, "auth": AuthError, "server": TransientError,
                     "expired": BatchExpired, "other-error": TransientError, "missing": BatchRequestNotRun}
    assert got["rate"].error.retry_after == 2.0 and got["rate"].error.retryable
    assert got["server"].error.status == 500 and got["bad"].error.status == 400


async def test_a_refused_input_file_blames_its_lines(providers):
    ids = ["a", "b", "c"]
    async with Scripted() as srv:
        srv.files = {"file-in": b"".join(openai_batch.batch_line(c, "/v1/chat/completions", {}) for c in ids)}
        srv.batch = _batch("failed", errors={"object": "list", "data": [
            {"code": "invalid_url", "line": 2, "message": "The URL provided for this request does not match.",
             "param": "url"}]})
        p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=srv.url + "/v1",
                                      api_key_env=KEY_ENV))
        status = await p.poll_batch("batch_1")
        outcomes = await p.batch_results("batch_1")
    assert status.state == "failed" and status.message.startswith("line 2: [invalid_url]")
    assert [type(o.error) for o in outcomes] == [BatchFailed, BadRequest, BatchFailed]
    assert [cause_of(o.error) for o in outcomes] == ["batch failed", "validation error", "batch failed"]
    assert "line 2: [invalid_url]" in str(outcomes[1].error) and "[invalid_url]" in str(outcomes[0].error)
    assert "invalid_url" in str(outcomes[1].error) and "invalid_url" in str(outcomes[0].error)


async def test_a_refused_creation_deletes_the_upload_a_failed_one_keeps_it(providers):
    """A 4xx made no batch: its upload is deleted.  A 503 may hide a batch the server made all the
    same (found later by its wave), which reads that file: kept."""
    async with Scripted() as srv:
        srv.create_status = 400
        p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=srv.url + "/v1",
                                      api_key_env=KEY_ENV))
        with pytest.raises(BadRequest) as err:
            await p.submit_batch([item(0)])
        methods = [(s[0], s[1]) for s in srv.seen]
        assert err.value.status == 400
        assert methods == [("POST", "/v1/files"), ("POST", "/v1/batches"), ("DELETE", "/v1/files/file-in")]
        srv.seen.clear()
        srv.create_status = 503
        with pytest.raises(TransientError) as err:
            await p.submit_batch([item(0)])
        methods = [(s[0], s[1]) for s in srv.seen]
    assert err.value.status == 503
    assert methods == [("POST", "/v1/files"), ("POST", "/v1/batches")]


async def test_odd_batch_objects(providers):
    async with Scripted() as srv:
        p = await providers(ModelSpec(provider="openai", model="gpt-4o", base_url=srv.url + "/v1",
                                      api_key_env=KEY_ENV))
        srv.batch = _batch("queued_for_later", request_counts={"total": "seven", "completed": -1, "failed": [1]})
        odd = await p.poll_batch("batch_1")
        srv.batch = {"status": "completed"}
        with pytest.raises(MalformedReply, match="no batch id"):
            await p.poll_batch("batch_1")
        srv.batch = _batch(42)
        with pytest.raises(MalformedReply, match="status is not a string"):
            await p.poll_batch("batch_1")
    assert (odd.state, odd.provider_status, odd.total, odd.succeeded, odd.failed) == (
        "in_progress", "queued_for_later", 0, 0, 0)
    assert odd.age_s is not None and not odd.terminal


# ------------------------------------------------------------------------------------ properties

KNOWN = {"validating": "submitted", "in_progress": "in_progress", "finalizing": "finalizing", "completed": "ended",
         "failed": "failed", "expired": "expired", "cancelling": "cancelling", "cancelled": "cancelled"}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(KNOWN)) | st.text(max_size=20), st.sampled_from(["", " ", "\t"]), st.booleans())
def test_status_mapping(status, pad, upper):
    written = pad + (status.upper() if upper else status) + pad
    state = batch_state(written)
    if status in KNOWN:
        assert state == KNOWN[status]
    elif written.strip().lower() not in KNOWN and written.strip().lower() not in ("canceling", "canceled"):
        assert state == "in_progress"  # unknown: polled again, never taken as the end
    assert (state in ("ended", "failed", "expired", "cancelled")) == (
        written.strip().lower() in ("completed", "failed", "expired", "cancelled", "canceled"))


@given(st.one_of(st.none(), st.integers(), st.lists(st.text()), st.dictionaries(st.text(), st.text())))
def test_a_status_that_is_no_string_is_malformed(value):
    with pytest.raises(MalformedReply):
        batch_state(value)


FATES = ("answer", "bad", "rate", "expired", "missing")


def _result_line(cid: str, fate: str) -> bytes:
    if fate == "answer":
        obj = {"custom_id": cid, "response": _ok(f"answer to {cid}"), "error": None}
    elif fate in ("bad", "rate"):
        obj = {"custom_id": cid, "response": _err(400 if fate == "bad" else 429), "error": None}
    else:
        obj = {"custom_id": cid, "response": None, "error": {"code": "batch_expired", "message": "late"}}
    return json.dumps(obj).encode()


@settings(max_examples=150, deadline=None)
@given(fates=st.dictionaries(st.text(min_size=1, max_size=10), st.sampled_from(FATES), min_size=1, max_size=12),
       unknown=st.lists(st.text(min_size=1, max_size=10), max_size=3), garbage=st.integers(0, 3),
       dup_errors=st.booleans(), seed=st.integers(0, 2**16))
def test_joining_results_on_custom_id(fates, unknown, garbage, dup_errors, seed):
    unknown = [u for u in unknown if u not in fates]
    lines = [_result_line(c, f) for c, f in fates.items() if f != "missing"]
    lines += [_result_line(u, "answer") for u in unknown]
    lines += [b"\x00not json %d" % i for i in range(garbage)]
    dups = [c for c, f in fates.items() if f == "answer"] if dup_errors else []
    lines += [_result_line(c, "expired") for c in dups]  # an answer wins over an error for the same id
    random.Random(seed).shuffle(lines)
    joined = join_results(list(fates), lines)
    assert [o.custom_id for o in joined.outcomes] == list(fates)
    assert joined.garbage == garbage and sorted(joined.unknown) == sorted(unknown) and joined.duplicates == len(dups)
    want = {"answer": None, "bad": BadRequest, "rate": RateLimited, "expired": BatchExpired,
            "missing": BatchRequestNotRun}
    for o in joined.outcomes:
        fate = fates[o.custom_id]
        assert (o.response is None) == (fate != "answer") and (o.error is None) == (fate == "answer")
        if fate == "answer":
            assert o.response.text == f"answer to {o.custom_id}"
        else:
            assert type(o.error) is want[fate]
