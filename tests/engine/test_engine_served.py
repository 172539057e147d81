"""An Azure deployment is priced, counted and capped as the model it serves (``serves``), through
the official SDK against the simulator's Azure deployments; the estimate and the price check at
start do the same."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec, RunSpec
from judgekit.cost.estimate import price_lookup_for
from judgekit.cost.prices import price_usd, usage_usd
from judgekit.cost.tokens import count_request
from judgekit.engine import NOT_RUN, Engine
from judgekit.errors import SpecError
from judgekit.run_cap import RunCap, check_prices
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

KEY = "sim-azure-key-1234"
MINI_1024 = 2833 + 4 * 5667  # gpt-4o-mini's tiles for a 1024 x 1024 image (gpt-4o's: 765)


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def png(w: int, h: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (90, 140, 200)).save(buf, "PNG")
    return buf.getvalue()


def image_request() -> ChatRequest:
    img = ImagePart(png(1024, 1024))
    return ChatRequest("judge", (Message.user("What colour is this?", img),), GenParams(max_tokens=50),
                       stage="judge", item_id="1")


def deployment(server, serves: str | None) -> ModelSpec:
    return ModelSpec(provider="azure", model="team-mini", serves=serves, base_url=server.root_url,
                     api_key_env="JK_AZURE_KEY")


def test_token_rules_follow_the_served_model():
    req = image_request()
    by_name = count_request("azure", "team-mini", req.messages, req.params).input
    by_model = count_request("azure", "gpt-4o-mini", req.messages, req.params).input
    assert by_model - by_name == MINI_1024 - 765  # the deployment's name fell back to gpt-4o's rule


async def test_a_deployment_is_priced_and_capped_as_the_model_it_serves(cache, monkeypatch):
    monkeypatch.setenv("JK_AZURE_KEY", KEY)
    cfg = SimConfig(api_keys=[KEY], azure_deployments={"team-mini": "gpt-4o-mini"})
    async with SimServer(cfg) as server:
        engine = Engine({"judge": deployment(server, "gpt-4o-mini")}, cache, max_cost_usd=1.0)
        await engine.start()
        r = await engine.call(image_request())
        assert r.ok, r.error
        u = r.response.usage
        assert r.response.cost_usd > 0  # the deployment's name has no price: it showed $0
        assert r.response.cost_usd == pytest.approx(usage_usd("azure", "gpt-4o-mini", u))
        assert engine.stats.spent_usd == pytest.approx(r.response.cost_usd)
        await engine.close()

        # a cap below one call's worst case: refused before the request, naming the image's tokens
        worst_input = count_request("azure", "gpt-4o-mini", image_request().messages, GenParams()).input
        cap = price_usd("azure", "gpt-4o-mini", worst_input, 50) * 0.9
        sent = server.stats()["requests"]
        capped = Engine({"judge": deployment(server, "gpt-4o-mini")}, cache, max_cost_usd=cap)
        await capped.start()
        req = image_request()
        req.item_id, req.params = "2", GenParams(max_tokens=50, seed=2)  # not the cached call
        r = await capped.call(req)
        assert r.error_kind == NOT_RUN and capped.stopping
        assert f"{worst_input:,} input" in capped.stop_reason and worst_input > MINI_1024
        assert server.stats()["requests"] == sent
        await capped.close()


def test_estimate_and_price_check_use_the_served_model():
    lookup = price_lookup_for({"judge": None}, {"judge": "gpt-4o-mini"})
    assert lookup("judge", "azure", "team-mini", 1000, 100) == price_usd("azure", "gpt-4o-mini", 1000, 100)
    assert price_lookup_for({"judge": None})("judge", "azure", "team-mini", 1000, 100) is None

    def spec(serves):
        judge = ModelSpec(provider="azure", model="team-mini", serves=serves, base_url="https://x.openai.azure.com")
        return RunSpec.model_construct(name="t", source_path=None, models={"judge": judge})

    check_prices(spec("gpt-4o-mini"), ["judge"], RunCap(1.0, "option"))  # priced: no error
    with pytest.raises(SpecError, match="team-mini"):
        check_prices(spec(None), ["judge"], RunCap(1.0, "option"))
