"""Image generators (openai_image, sim_image) through the engine, the real openai SDK and real HTTP."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import ValidationError

from judgekit.blobs import BlobStore
from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.tokens import count_request
from judgekit.engine import Engine
from judgekit.engine.retry import RetryWait
from judgekit.providers import create_provider
from judgekit.providers.sim import running_simulators
from judgekit.sim import SimConfig, SimServer
from judgekit.sim.scenes import parse, render, scene_from_png
from judgekit.types import ChatRequest, GenParams, Message

PROMPT = "A flat illustration of two small green triangles at the bottom right on a pink background."


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


@pytest.fixture
def blobs(tmp_path):
    return BlobStore(tmp_path / "blobs")


def gen(alias: str, prompt: str = PROMPT, seed: int | None = 7, **extra) -> ChatRequest:
    params = GenParams(seed=seed, extra=tuple(sorted(extra.items())))
    return ChatRequest(alias, (Message.user(prompt),), params, stage="generate", item_id=prompt[:20])


def sim_spec(server: SimServer, **kw) -> ModelSpec:
    kw.setdefault("image", {"size": "256x256", "quality": "low"})
    return ModelSpec(provider="sim_image", model=kw.pop("model", "gpt-image-1"), sim={"url": server.base_url}, **kw)


async def test_sim_image_records_the_image_and_caches_it(cache, blobs):
    async with SimServer(SimConfig()) as server:
        engine = Engine({"g": sim_spec(server)}, cache, blobs=blobs)
        await engine.start()
        try:
            first = await engine.call(gen("g"))
            assert first.ok and not first.response.cached
            record = json.loads(first.text)
            assert list(record) == sorted(record)
            assert record["seed"] == 7 and record["seed_sent"] is True
            assert (record["size"], record["quality"], record["model"]) == ("256x256", "low", "gpt-image-1")
            assert record["revised_prompt"] == PROMPT
            image = record["image"]
            assert (image["mime"], image["width"], image["height"]) == ("image/png", 256, 256)
            data = blobs.get(image["sha256"])
            assert data == render(parse(PROMPT), 256, seed=7, label=True)  # the seed reached the simulator
            assert scene_from_png(data).background == "pink"
            u = first.response.usage
            assert u.output_tokens == 17 and u.input_tokens > 0  # 272 tokens at 1024x1024, by area
            assert first.response.cost_usd == 0.0 and first.response.request_id

            second = await engine.call(gen("g"))
            assert second.ok and second.response.cached and second.text == first.text
            assert server.stats()["served"] == 1
            st = engine.stats.stage("generate")
            assert (st.calls, st.cache_hits) == (1, 1)

            other = await engine.call(gen("g", seed=8))
            assert other.ok and json.loads(other.text)["image"]["sha256"] != image["sha256"]
        finally:
            await engine.close()


async def test_missing_seed_and_empty_prompt_fail_the_item_only(cache, blobs):
    async with SimServer(SimConfig()) as server:
        engine = Engine({"g": sim_spec(server)}, cache, blobs=blobs)
        await engine.start()
        try:
            no_seed = await engine.call(gen("g", seed=None))
            assert not no_seed.ok and no_seed.error_kind == "bad_request" and "params.seed" in no_seed.error
            empty = await engine.call(gen("g", prompt="  "))
            assert not empty.ok and empty.error_kind == "bad_request"
            assert server.stats()["requests"] == 0  # neither reached the API
            assert (await engine.call(gen("g"))).ok
        finally:
            await engine.close()


async def test_a_429_is_retried_after_retry_after(cache, blobs):
    # one request per second, a bucket of one: the second call is told to wait about a second
    async with SimServer(SimConfig(rpm=60)) as server:
        engine = Engine({"g": sim_spec(server, limits={"max_attempts": 4})}, cache, blobs=blobs)
        await engine.start()
        try:
            t0 = time.monotonic()
            calls = await asyncio.gather(*(engine.call(gen("g", prompt=p)) for p in ("a red star", "a blue ring")))
            waited = time.monotonic() - t0
            assert all(c.ok for c in calls)
            st = engine.stats.stage("generate")
            assert st.rate_limited >= 1 and st.failures == 0
            assert server.stats()["rate_limited"] >= 1
            assert waited >= 0.9  # Retry-After: 1 (retry-after-ms ~1000) was honoured
        finally:
            await engine.close()


async def test_bytes_that_are_not_an_image_are_a_retryable_failure(cache, blobs):
    async with SimServer(SimConfig(garbage_rate=1.0)) as server:
        engine = Engine({"g": sim_spec(server, limits={"max_attempts": 2})}, cache, blobs=blobs,
                        retry_wait=RetryWait(initial=0.01, maximum=0.05, jitter=0.01))
        await engine.start()
        try:
            r = await engine.call(gen("g"))
            assert not r.ok and r.error_kind == "transient" and "not an image" in r.error
            assert server.stats()["garbage"] == 2  # retried once
        finally:
            await engine.close()


async def test_openai_image_does_not_send_the_seed_and_fetches_urls(cache, blobs):
    async with SimServer(SimConfig()) as server:
        models = {
            "api": ModelSpec(provider="openai_image", model="gpt-image-1", base_url=server.base_url,
                             image={"size": "256x256", "extra": {"response_format": "url"}}),
            "dalle": ModelSpec(provider="openai_image", model="dall-e-3", base_url=server.base_url,
                               image={"size": "512x512", "quality": "hd"}),
        }
        engine = Engine(models, cache, blobs=blobs)
        await engine.start()
        try:
            r = await engine.call(gen("api", seed=123))
            assert r.ok, r.error
            record = json.loads(r.text)
            assert record["seed"] == 123 and record["seed_sent"] is False and record["quality"] is None
            # the server drew its default seed, 0: the seed was not sent
            assert blobs.get(record["image"]["sha256"]) == render(parse(PROMPT), 256, seed=0, label=True)
            assert server.stats()["generated_fetches"] == 1  # the url was fetched
            d = await engine.call(gen("dalle"))
            assert d.ok and (d.response.usage.input_tokens, d.response.usage.output_tokens) == (0, 0)
            assert json.loads(d.text)["image"]["width"] == 512
        finally:
            await engine.close()


async def test_sim_image_shares_the_simulator_process_with_sim_chat(cache, blobs):
    models = {
        "g": ModelSpec(provider="sim_image", model="gpt-image-1", sim={"seed": 4}, image={"size": "256x256"}),
        "chat": ModelSpec(provider="sim", model="sim-model", sim={"seed": 4}),
    }
    before = len(running_simulators())
    engine = Engine(models, cache, blobs=blobs)
    await engine.start()
    try:
        g = engine.providers["g"]
        assert g.server is engine.providers["chat"].server
        assert len(running_simulators()) == before + 1
        assert (await engine.call(gen("g"))).ok
        assert g.stats()["images_generated"] == 1
    finally:
        await engine.close()
    assert len(running_simulators()) == before


def test_identity_names_what_changes_the_image():
    def ident(**kw) -> str:
        kind = kw.pop("provider", "sim_image")
        spec = ModelSpec(provider=kind, model="gpt-image-1", **kw)
        return create_provider("a", spec).identity

    base = ident()
    assert "size=1024x1024" in base
    assert ident(image={"size": "256x256"}) != base
    assert ident(image={"quality": "high"}) != base
    assert ident(image={"extra": {"background": "opaque"}}) != base
    assert ident(sim={"seed": 2}) != base
    assert ident(sim={"latency_ms": 50, "rpm": 10}) == base  # limits and latency do not change images
    assert ident(provider="openai_image").startswith("https://api.openai.com/v1;")


def test_image_settings_only_for_image_generators_and_validated():
    with pytest.raises(ValidationError, match="image generators"):
        ModelSpec(provider="openai", model="gpt-4o", image={"size": "256x256"})
    with pytest.raises(ValidationError):
        ModelSpec(provider="sim_image", model="gpt-image-1", image={"size": "big"})
    with pytest.raises(ValidationError):
        ModelSpec(provider="sim_image", model="gpt-image-1", image={"colour": "red"})
    assert ModelSpec(provider="openai_image", model="gpt-image-1").image is None


def test_expected_output_tokens_and_the_token_count_of_a_prompt(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "unused")

    def provider(kind: str, model: str, **image):
        return create_provider("a", ModelSpec(provider=kind, model=model, image=image or None))

    assert provider("openai_image", "gpt-image-1").expected_output_tokens() == 4160  # quality unset: high
    assert provider("openai_image", "gpt-image-1", quality="low", size="1024x1536").expected_output_tokens() == 408
    assert provider("openai_image", "dall-e-3").expected_output_tokens() is None
    assert provider("sim_image", "gpt-image-1", quality="medium").expected_output_tokens() == 1056
    assert provider("sim_image", "my-sim-drawer", quality="low").expected_output_tokens() == 272
    assert provider("openai_image", "gpt-image-1").key_env == "OPENAI_API_KEY"
    toks = count_request("openai_image", "gpt-image-1", (Message.user(PROMPT),), GenParams(seed=1))
    assert toks.input >= len(PROMPT.split())
