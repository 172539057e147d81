"""The hard cost cap in the engine: worst-case reservations before launch, against the simulator and
small servers of our own that misreport usage, over real HTTP through the real openai SDK."""

import asyncio
import json

import pytest
from aiohttp import web

from judgekit.blobs import BlobStore
from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.images import generation_output_tokens
from judgekit.cost.prices import price_usd
from judgekit.cost.tokens import count_request
from judgekit.engine import NOT_RUN, Engine
from judgekit.engine.budget import input_upper_bound
from judgekit.engine.retry import RetryWait
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, ChatResponse, GenParams, Message, Usage

PRICE = {"input_per_mtok": 2.5, "output_per_mtok": 10.0}  # gpt-4o's
FAST_RETRY = RetryWait(initial=0.01, maximum=0.02, jitter=0.0)


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def model(base_url, **kw):
    limits = kw.pop("limits", {"max_concurrency": 4})
    return ModelSpec(provider="openai", model=kw.pop("model", "m1"), base_url=base_url, limits=limits,
                     price=kw.pop("price", PRICE), **kw)


def req(i, max_tokens=64):
    return ChatRequest("a", (Message.user(f"question {i}"),), GenParams(max_tokens=max_tokens),
                       stage="candidate", item_id=str(i))


def worst_case(request, spec, *, counted=True) -> float:
    """What the engine reserves for ``request``: its input (counted by the tokenizer, or the cheap
    byte bound it tries first) + max_tokens, at the price."""
    bound = input_upper_bound("openai", spec.model, request)
    n = count_request("openai", spec.model, request.messages, request.params)
    i = min(bound, n.input if n.exact else -(-n.input * 5 // 4)) if counted else bound
    assert n.input <= bound
    return price_usd("openai", spec.model, i, request.params.max_tokens, spec.price)


class FakeServer:
    """A chat-completions server that answers every request with the usage ``usage(body)`` gives."""

    def __init__(self, usage):
        self.usage = usage
        self.served = 0
        self.base_url = ""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.served += 1
        payload = {"id": f"c{self.served}", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "an answer"},
                                "finish_reason": "stop"}],
                   "usage": self.usage(body)}
        return web.json_response(payload)

    async def __aenter__(self):
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()


async def test_a_cap_below_one_call_launches_nothing_even_with_concurrency(cache):
    # before: the four slots launched four calls before any cost was known
    async with SimServer(SimConfig(seed=1)) as server:
        engine = Engine({"a": model(server.base_url)}, cache, max_cost_usd=0.0001)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(8)))
        assert all(r.error_kind == NOT_RUN for r in rs)
        assert server.stats()["requests"] == 0
        assert engine.stats.spent_usd == 0
        assert "may cost up to $0.00067 (12 input + 64 output tokens at most)" in engine.stop_reason
        assert "more than is left under --max-cost $0.0001 ($0.00 spent)" in engine.stop_reason
        await engine.close()


async def test_spending_never_passes_the_cap_and_uses_it(cache):
    async with SimServer(SimConfig(seed=2)) as server:
        spec = model(server.base_url, limits={"max_concurrency": 8})
        one = worst_case(req(0), spec)
        cap = 7.5 * one
        engine = Engine({"a": spec}, cache, max_cost_usd=cap)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(40)))
        ok = [r for r in rs if r.ok]
        assert engine.stats.spent_usd <= cap
        # real costs are below the worst case, so more calls ran than 7 worst cases would allow
        assert len(ok) >= 7
        assert server.stats()["served"] == len(ok)
        assert sum(r.response.cost_usd for r in ok) == pytest.approx(engine.stats.spent_usd)
        assert engine.cap.reserved == 0 and engine.cap.outstanding == 0
        if len(ok) < 40:
            assert all(r.error_kind == NOT_RUN for r in rs if not r.ok)
            assert "more than is left under --max-cost" in engine.stop_reason
        await engine.close()


async def test_no_cap_no_reservation(cache):
    async with SimServer(SimConfig(seed=2)) as server:
        engine = Engine({"a": model(server.base_url)}, cache)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(6)))
        assert all(r.ok for r in rs) and engine.cap is None and engine.stats.spent_usd > 0
        await engine.close()


async def test_free_models_need_no_reservation_under_a_cap(cache):
    async with SimServer(SimConfig(seed=2)) as server:
        spec = ModelSpec(provider="sim", model="gpt-4o", sim={"url": server.base_url}, limits={"max_concurrency": 4})
        engine = Engine({"a": spec}, cache, max_cost_usd=0.0)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(6)))
        assert all(r.ok for r in rs) and engine.stats.spent_usd == 0 and not engine.stopping
        await engine.close()


async def test_negative_usage_cannot_defeat_the_cap(cache):
    # before: each reply lowered the spending, and the run went on paying past the cap
    async with FakeServer(lambda body: {"prompt_tokens": -50_000, "completion_tokens": -50_000}) as server:
        spec = model(server.base_url, limits={"max_concurrency": 4, "max_attempts": 2})
        one = worst_case(req(0), spec)
        cap = 3.5 * one
        engine = Engine({"a": spec}, cache, max_cost_usd=cap, retry_wait=FAST_RETRY)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(20)))
        # every attempt the server answered was charged its worst case: at most 3 fit
        assert server.served <= 3
        assert 0 <= engine.stats.spent_usd <= cap
        assert engine.stopping and sum(r.error_kind == NOT_RUN for r in rs) >= 17
        await engine.close()


async def test_the_engine_checks_usage_itself(cache):
    # a provider that lets negative usage through (no reply validation): the engine raises it to
    # 0, charges the reservation and counts the reply
    async with FakeServer(lambda body: {"prompt_tokens": 5, "completion_tokens": 5}) as server:
        spec = model(server.base_url)
        engine = Engine({"a": spec}, cache, max_cost_usd=1.0)
        await engine.start()
        prov = engine.providers["a"]

        async def negative(request):
            return ChatResponse("an answer", Usage(-1_000_000, -3))

        prov.generate = negative
        r = await engine.call(req(1))
        assert r.ok and r.response.usage == Usage(0, 0)
        # charged the reservation: the cheap byte bound fitted under the cap, so no count was made
        assert r.response.cost_usd == pytest.approx(worst_case(req(1), spec, counted=False))
        assert r.response.cost_usd > worst_case(req(1), spec) > 0
        assert engine.stats.usage_anomalies == 1
        await engine.close()


async def test_more_output_than_allowed_is_charged_as_claimed_and_counted(cache):
    async with FakeServer(lambda body: {"prompt_tokens": 10, "completion_tokens": 10 * body["max_tokens"]}) as server:
        spec = model(server.base_url, limits={"max_concurrency": 1})
        engine = Engine({"a": spec}, cache, max_cost_usd=1.0)
        await engine.start()
        r = await engine.call(req(1, max_tokens=64))
        assert r.ok
        assert r.response.cost_usd == pytest.approx(price_usd("openai", "m1", 10, 640, spec.price))
        assert engine.stats.usage_anomalies == 1 and engine.stats.over_reservation == 1
        await engine.close()


async def test_each_retry_reserves_again(cache):
    # the simulator answers 5xx to most attempts: every attempt is reserved and released, none
    # charged, and the cap's books end empty
    async with SimServer(SimConfig(seed=3, error_rate=0.7)) as server:
        spec = model(server.base_url, limits={"max_concurrency": 4, "max_attempts": 6})
        engine = Engine({"a": spec}, cache, max_cost_usd=1.0, retry_wait=FAST_RETRY)
        await engine.start()
        rs = await asyncio.gather(*(engine.call(req(i)) for i in range(12)))
        assert server.stats()["requests"] > 12  # retries happened
        assert engine.cap.outstanding == 0 and engine.cap.reserved == 0
        assert engine.cap.spent == pytest.approx(sum(r.response.cost_usd for r in rs if r.ok))
        await engine.close()


async def test_unknown_price_under_a_cap_launches_nothing(cache):
    async with SimServer(SimConfig(seed=1)) as server:
        engine = Engine({"a": model(server.base_url, price=None)}, cache, max_cost_usd=5.0)
        await engine.start()
        r = await engine.call(req(1))
        assert r.error_kind == NOT_RUN and "no known price" in r.error
        assert server.stats()["requests"] == 0
        await engine.close()


async def test_image_generation_is_reserved_at_its_priced_output(cache, tmp_path):
    # openai_image priced per token by genai-prices (gpt-image-1: $5 in, $40 out per Mtok); one
    # 1024x1024 image at the default (high) quality bills 4,160 output tokens
    async with SimServer(SimConfig(seed=1)) as server:
        spec = ModelSpec(provider="openai_image", model="gpt-image-1", base_url=server.base_url,
                         limits={"max_concurrency": 4})
        one_image = price_usd("openai_image", "gpt-image-1", 0, generation_output_tokens("gpt-image-1", "1024x1024", None))
        engine = Engine({"g": spec}, cache, max_cost_usd=2.5 * one_image, blobs=BlobStore(tmp_path / "blobs"))
        await engine.start()

        def gen(i):
            return ChatRequest("g", (Message.user(f"a red square number {i}"),), GenParams(seed=i),
                               stage="generate", item_id=str(i))

        rs = await asyncio.gather(*(engine.call(gen(i)) for i in range(6)))
        made = [r for r in rs if r.ok]
        assert len(made) == 2 and all(r.error_kind == NOT_RUN for r in rs if not r.ok)
        assert engine.stats.spent_usd <= 2.5 * one_image
        assert all(json.loads(r.text)["image"]["sha256"] for r in made)
        await engine.close()
