"""The Ray backend: the worker as Ray actors on a local Ray instance, on CPU, with the tiny CLIP.

One Ray instance serves the whole file (started by the ``ray_instance`` fixture, shut down after
the last test); every backend here reuses it.  Actors start fresh Pythons that import torch, so
each test keeps to one or two of them.
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("judgekit_local")
ray = pytest.importorskip("ray")
np = pytest.importorskip("numpy")

from judgekit.blobs import BlobStore  # noqa: E402
from judgekit.cache.store import CacheStore  # noqa: E402
from judgekit.config import ModelSpec  # noqa: E402
from judgekit.engine import Engine  # noqa: E402
from judgekit.local import (Batcher, LocalItemError, SubprocessBackend, WorkerCrashed,  # noqa: E402
                            WorkerStartError, read_vector)
from judgekit.local.ray_backend import RayBackend  # noqa: E402
from judgekit.providers import local as local_provider  # noqa: E402
from judgekit.types import ChatRequest, GenParams, ImagePart, Message  # noqa: E402

WORKER = [sys.executable, "-m", "judgekit_local"]


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    # 4 logical CPUs on a 2-core machine: room for a replacement actor while another test's
    # actors are still being torn down; the tiny model does not care about oversubscription
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    yield
    if started:
        ray.shutdown()


def model_ref(path: str) -> dict:
    return {"id": path, "revision": None, "dtype": "fp32", "trust_remote_code": False,
            "encoder": "transformers", "pooling": "auto"}


def put_images(store: BlobStore, png_bytes, n: int, offset: int = 0) -> list[dict]:
    return [{"image": {"sha256": store.put(png_bytes(color=(30 * i % 256, 90, 160), pattern=i + 1), "image/png")}}
            for i in range(offset, offset + n)]


def batch_of(model: dict, inputs: list[dict], batch_id: str = "b1") -> dict:
    return {"op": "batch", "batch_id": batch_id, "task": "embed_image", "model": model, "params": {},
            "items": [{"item_id": f"i{k}", "inputs": inp} for k, inp in enumerate(inputs)]}


def vectors(store: BlobStore, messages: list[dict]) -> dict[str, np.ndarray]:
    results = [m for m in messages if m["type"] == "result"]
    assert all(r["ok"] for r in results), results
    return {r["item_id"]: np.array(read_vector(store, r["output"]["vector"]["sha256"])) for r in results}


async def test_vectors_equal_the_subprocess_backends(tmp_path, tiny_clip, png_bytes):
    store = BlobStore(tmp_path / "blobs")
    batch = batch_of(model_ref(tiny_clip), put_images(store, png_bytes, 8))
    on_ray = RayBackend(WORKER, store=store.root, workers=1)
    local = SubprocessBackend(WORKER, store=store.root, device="cpu")
    try:
        ray_msgs: list[dict] = []
        sub_msgs: list[dict] = []
        await asyncio.gather(on_ray.run_batch(batch, ray_msgs.append), local.run_batch(batch, sub_msgs.append))
        got, want = vectors(store, ray_msgs), vectors(store, sub_msgs)
        assert sorted(got) == sorted(want) == [f"i{k}" for k in range(8)]
        for item_id, vec in want.items():
            assert vec.shape == (16,)
            np.testing.assert_allclose(got[item_id], vec, rtol=1e-5, atol=1e-6)
        assert len({v.tobytes() for v in got.values()}) == 8  # distinct images, distinct vectors
        # progress streamed as the subprocess's does: loading, then running
        phases = [m["phase"] for m in ray_msgs if m["type"] == "progress"]
        assert phases[0] == "loading" and phases[-1] == "running"
        assert on_ray.actors[0] is not None and on_ray.status()[0].endswith("(cpu): idle")
    finally:
        await asyncio.gather(on_ray.close(), local.close())


async def test_two_actors_run_batches_at_once(tmp_path, tiny_clip, png_bytes):
    store = BlobStore(tmp_path / "blobs")
    backend = RayBackend(WORKER, store=store.root, workers=2)
    batcher = Batcher(backend, batch_size=4, max_wait_ms=5)
    in_flight, most = 0, 0
    inner = backend.run_batch

    async def counting(batch, on_message):
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            await inner(batch, on_message)
        finally:
            in_flight -= 1

    backend.run_batch = counting
    try:
        await backend.start()
        assert backend.parallelism == 2
        pids = {line.split(" pid ")[1].split()[0] for line in backend.status()}
        assert len(pids) == 2
        model = model_ref(tiny_clip)
        outs = await asyncio.gather(*[batcher.submit("embed_image", model, {}, inp)
                                      for inp in put_images(store, png_bytes, 16)])
        assert [o["vector"]["dim"] for o in outs] == [16] * 16
        assert batcher.batches_sent == 4 and most == 2
        assert all(n >= 1 for n in backend.batches_per_actor), backend.batches_per_actor
    finally:
        await batcher.close()
        await backend.close()
    assert backend.actors == [None, None]


async def test_a_killed_actor_is_a_crash_and_its_items_finish_on_a_replacement(tmp_path, tiny_clip, png_bytes):
    store = BlobStore(tmp_path / "blobs")
    backend = RayBackend(WORKER, store=store.root, workers=1)
    batcher = Batcher(backend, batch_size=8, max_wait_ms=20)
    crashes: list[WorkerCrashed] = []
    inner = backend.run_batch

    async def kill_while_loading(batch, on_message):
        def spy(msg):
            on_message(msg)
            # the fresh actor is loading the model (importing transformers: seconds): kill it
            if not crashes and msg["type"] == "progress" and msg["phase"] == "loading" and msg["done"] == 0:
                ray.kill(backend.actors[0])

        try:
            await inner(batch, spy)
        except WorkerCrashed as e:
            crashes.append(e)
            raise

    backend.run_batch = kill_while_loading
    try:
        await backend.start()
        first_pid = backend.status()[0].split(" pid ")[1].split()[0]
        model = model_ref(tiny_clip)
        good = put_images(store, png_bytes, 6)
        missing = [{"image": {"sha256": "0" * 64}}, {"image": {"sha256": "f" * 64}}]
        calls = [batcher.submit("embed_image", model, {}, inp) for inp in missing + good]
        outs = await asyncio.gather(*calls, return_exceptions=True)
        # the two bad items had their results before the kill: they keep them, and are not re-sent
        assert all(isinstance(o, LocalItemError) and o.kind == "bad_input" for o in outs[:2]), outs[:2]
        assert [o["vector"]["dim"] for o in outs[2:]] == [16] * 6
        [crash] = crashes
        assert crash.finished_item_ids == {"i1", "i2"} and "died" in str(crash)
        assert batcher.items_resent == 6 and batcher.batches_sent == 2
        assert backend.crashes == 1
        second_pid = backend.status()[0].split(" pid ")[1].split()[0]
        assert second_pid != first_pid and "1 crash" in backend.status()[0]
    finally:
        await batcher.close()
        await backend.close()


def test_a_missing_ray_says_what_to_install(monkeypatch):
    from judgekit.local import ray_backend

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'judgekit\[ray\]'"):
        ray_backend.import_ray()


async def test_a_worker_python_without_ray_fails_at_start_with_the_reason(tmp_path):
    backend = RayBackend([str(tmp_path / "no-such-python"), "-m", "judgekit_local"], store=tmp_path / "blobs")
    try:
        with pytest.raises(WorkerStartError, match="local.python .*no-such-python.* cannot run"):
            await backend.start()
    finally:
        await backend.close()


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


async def test_engine_embeds_through_ray_and_a_second_call_is_a_cache_hit(tmp_path, cache, tiny_clip, png_bytes):
    spec = ModelSpec(provider="local", model=tiny_clip,
                     local={"task": "embed_image", "backend": "ray", "workers": 1, "batch_size": 4})
    engine = Engine({"clip": spec}, cache, blobs=BlobStore(tmp_path / "blobs"))
    await engine.start()
    try:
        [rt] = local_provider.running_runtimes()
        assert isinstance(rt.backend, RayBackend)

        def req(i):
            return ChatRequest("clip", (Message.user(ImagePart(png_bytes(pattern=i + 1))),), GenParams(), stage="embed")

        first = await asyncio.gather(*[engine.call(req(i)) for i in range(6)])
        assert all(r.ok for r in first), [r.error for r in first]
        records = [json.loads(r.text) for r in first]
        assert all(rec["vector"]["dim"] == 16 and rec["encoder"].endswith(":image_embeds") for rec in records)
        assert len(read_vector(engine.blobs, records[0]["vector"]["sha256"])) == 16
        again = await engine.call(req(0))
        assert again.ok and again.response.cached and again.text == first[0].text
        st = engine.stats.stage("embed")
        assert (st.calls, st.cache_hits) == (6, 1)
        assert 2 <= rt.batcher.batches_sent < 6  # batched (batch_size 4)
    finally:
        await engine.close()
    assert local_provider.running_runtimes() == []
