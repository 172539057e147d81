"""Retrievals through the engine: cached like model calls, failures as values, one simulator."""

from __future__ import annotations

import pytest

from judgekit.blobs import BlobStore
from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.tokens import count_request
from judgekit.engine import Engine
from judgekit.engine.retry import RetryWait
from judgekit.providers.sim import running_simulators
from judgekit.retrieval import Retrieved
from judgekit.types import ChatRequest, GenParams, Message


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def search(alias: str, query: str) -> ChatRequest:
    return ChatRequest(alias, (Message.user(query),), GenParams(), stage="retrieve", item_id=query)


async def test_retrieval_is_cached_and_a_permanent_500_is_a_failed_result(cache, tmp_path):
    blobs = BlobStore(tmp_path / "blobs")
    models = {
        "img": ModelSpec(provider="sim_image_search", model="images", sim={"seed": 3}),
        "chat": ModelSpec(provider="sim", model="sim-model", sim={"seed": 3}),
        "down": ModelSpec(provider="sim_image_search", model="images", sim={"search_error_rate": 1.0},
                          limits={"max_attempts": 2}),
    }
    before = len(running_simulators())
    engine = Engine(models, cache, blobs=blobs, retry_wait=RetryWait(initial=0.01, maximum=0.05, jitter=0.01))
    await engine.start()
    try:
        img = engine.providers["img"]
        assert img.blobs is blobs
        # chat and image search with the same settings share one simulator process
        assert img.server is engine.providers["chat"].server
        assert len(running_simulators()) == before + 2

        first = await engine.call(search("img", "a rocking chair"))
        assert first.ok and not first.response.cached
        got = Retrieved.from_json(first.text)
        assert got.status == "ok" and blobs.has(got.sha256)
        second = await engine.call(search("img", "a rocking chair"))
        assert second.ok and second.response.cached and second.text == first.text
        assert img.stats()["searches_served"] == 1
        st = engine.stats.stage("retrieve")
        assert (st.calls, st.cache_hits, st.cost_usd) == (1, 1, 0.0)

        failed = await engine.call(search("down", "a rocking chair"))
        assert not failed.ok and failed.error_kind == "transient"
        assert engine.providers["down"].stats()["search_errors_injected"] == 2
        assert engine.stats.stage("retrieve").failures == 1
    finally:
        await engine.close()
    assert len(running_simulators()) == before


async def test_a_cached_retrieval_whose_image_is_gone_is_retrieved_again(cache, tmp_path):
    blobs = BlobStore(tmp_path / "blobs")
    models = {"img": ModelSpec(provider="sim_image_search", model="images", sim={"seed": 3}),
              "chat": ModelSpec(provider="sim", model="sim-model", sim={"seed": 3})}
    engine = Engine(models, cache, blobs=blobs)
    await engine.start()
    try:
        img = engine.providers["img"]
        assert img.stores_outputs and not engine.providers["chat"].stores_outputs
        first = await engine.call(search("img", "a rocking chair"))
        got = Retrieved.from_json(first.text)
        assert first.ok and img.output_blobs(first.response) == (got.sha256,)
        blobs.path(got.sha256).unlink()  # a user cleaning up the image store
        again = await engine.call(search("img", "a rocking chair"))
        assert again.ok and not again.response.cached and again.text == first.text
        assert img.stats()["searches_served"] == 2 and blobs.has(got.sha256)
        third = await engine.call(search("img", "a rocking chair"))
        assert third.ok and third.response.cached
        st = engine.stats.stage("retrieve")
        assert (st.calls, st.cache_hits, st.remade) == (2, 1, 1)
    finally:
        await engine.close()


@pytest.mark.parametrize("provider", ["brave", "sim_image_search", "image_folder"])
def test_token_count_of_a_retrieval_request(provider):
    toks = count_request(provider, "images", (Message.user("a rocking chair"),), GenParams())
    assert toks.input > 0
