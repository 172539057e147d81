"""An image generator whose image store's disk is full: the call whose image cannot be stored fails,
counted (``storage_full``, naming the store), the others in flight land, and no call starts after it
(the run's stop); nothing escapes as a traceback.  ENOSPC is injected into the store's writes."""

from __future__ import annotations

import asyncio
import errno
import os

from judgekit import blobs as blobs_module
from judgekit.blobs import BlobStore
from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import NOT_RUN, Engine
from judgekit.errors import ReplyNotStored, StorageFull
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message


def _gen(i: int) -> ChatRequest:
    return ChatRequest("g", (Message.user(f"A flat illustration of {i + 1} small green triangles."),),
                       GenParams(seed=i), stage="generate", item_id=str(i))


async def test_a_full_image_store_fails_that_call_and_stops_new_ones(tmp_path, monkeypatch):
    writes = {"n": 0}

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def write(fd, data):
            writes["n"] += 1
            if writes["n"] > 2:  # two images fit, then the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return os.write(fd, data)

    monkeypatch.setattr(blobs_module, "os", _OS())
    assert issubclass(ReplyNotStored, StorageFull)
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="r")
    store = BlobStore(tmp_path / "c.duckdb.blobs")
    async with SimServer(SimConfig(latency_ms=50)) as server:
        spec = ModelSpec(provider="sim_image", model="gpt-image-1", sim={"url": server.base_url},
                         image={"size": "256x256", "quality": "low"}, limits={"max_concurrency": 3})
        engine = Engine({"g": spec}, cache, blobs=store)
        loop = asyncio.get_running_loop()
        store.on_full = lambda err: loop.call_soon_threadsafe(engine.stop, f"{err}; no new call is made")
        await engine.start()
        try:
            results = await asyncio.gather(*(engine.call(_gen(i)) for i in range(12)))
        finally:
            await engine.close()
            await cache.close()
        made = server.stats()["images_generated"]
    kinds = [r.error_kind for r in results]
    assert kinds.count(None) == 2  # the two that fit are answers
    failed = [r for r in results if r.error_kind == "storage_full"]
    assert failed and all(str(tmp_path / "c.duckdb.blobs") in r.error for r in failed)
    assert kinds.count(NOT_RUN) >= 12 - 3 - 3  # at most one round in flight after the stop
    assert store.write_error is not None and "no space left on device" in engine.stop_reason
    assert made == 12 - kinds.count(NOT_RUN)  # every image paid was one asked: no call after the stop
