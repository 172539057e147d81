"""The Ray backend's scheduling on a fake cluster (fake_ray.py: no Ray, milliseconds): a lost node
on a full cluster, no live actor for the limit, placement checked before it is asked, a node
that cannot see the store, and the faults the summary reports."""

from __future__ import annotations

import asyncio
import time

import pytest

from fake_ray import FakeRay
from judgekit.blobs import BlobStore
from judgekit.local import Batcher, LocalItemError, WorkerStartError
from judgekit.local.faults import fault_lines
from judgekit.local.ray_backend import RayBackend, _actor_class, join_error, placement

MODEL = {"id": "org/enc"}


@pytest.fixture(autouse=True)
def fake_env(monkeypatch, tmp_path):
    # the actor class sets torch's thread variables in the process it runs in: this one here
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log.jsonl"))
    monkeypatch.setenv("FAKE_DELAY_S", "0.01")


def make(tmp_path, cluster: FakeRay, workers: int, **kw) -> RayBackend:
    backend = RayBackend(store=tmp_path / "blobs", workers=workers, core="fake_worker:FakeCore", **kw)
    backend._ray = cluster  # start() joins the fake instead of Ray
    return backend


def images(tmp_path, n: int) -> list[dict]:
    store = BlobStore(tmp_path / "blobs")
    return [{"image": {"sha256": store.put(bytes([i % 256, i // 256]) * 40, "image/png")}} for i in range(n)]


async def test_a_lost_node_on_a_full_cluster_leaves_the_run_to_the_survivor(tmp_path):
    cluster = FakeRay()
    cluster.add_node(cpus=1)
    doomed = cluster.add_node(cpus=1)
    backend = make(tmp_path, cluster, 2)
    batcher = Batcher(backend, batch_size=2, max_wait_ms=1)
    try:
        await backend.start()
        assert backend.live == 2 and len({s.node_id for s in backend._slots}) == 2
        assert all(" on fakehost node " in line for line in backend.status())  # worker lines name their node
        calls = [asyncio.ensure_future(batcher.submit("embed_image", MODEL, {}, inp))
                 for inp in images(tmp_path, 40)]
        while batcher.items_done < 6:
            await asyncio.sleep(0.005)
        cluster.kill_node(doomed)  # its CPU is gone: the replacement cannot be placed
        t0 = time.monotonic()
        outs = await asyncio.wait_for(asyncio.gather(*calls), 20)
        assert [o["vector"]["dim"] for o in outs] == [8] * 40
        assert time.monotonic() - t0 < 5  # 34 items x 10 ms on one actor, not a stall
        assert backend.crashes == 1 and backend.live == 1 and batcher.items_resent >= 1
        assert list(backend.lost_nodes.values()) == [f"fakehost node {doomed[:8]}"]
        assert "ray workers: 1 of 2 live, 1 died, 1 node lost" in backend.status()
        waiting = [line for line in backend.status() if "waiting for placement" in line]
        assert len(waiting) == 1 and "a replacement: used when placed" in waiting[0]
        faults = batcher.faults()
        assert (faults["actors"], faults["live"], faults["crashes"], faults["restarts"]) == (2, 1, 1, 0)
        [line] = fault_lines({"enc": faults})
        assert "1 crash" in line and f"lost node fakehost node {doomed[:8]}" in line and "sent again" in line
        # the node comes back: the replacement is placed and serves again
        cluster.add_node(cpus=1)
        for _ in range(200):
            if backend.live == 2:
                break
            await asyncio.sleep(0.01)
        assert backend.live == 2 and backend.restarts == 1
    finally:
        await batcher.close()
        await backend.close()


async def test_a_node_ray_marks_dead_after_its_actor_died_is_counted_lost(tmp_path):
    cluster = FakeRay()
    cluster.add_node(cpus=1)
    second = cluster.add_node(cpus=1)
    backend = make(tmp_path, cluster, 2)
    backend.node_check_s = 0.02
    batcher = Batcher(backend, batch_size=1, max_wait_ms=1)
    try:
        await backend.start()
        calls = [asyncio.ensure_future(batcher.submit("embed_image", MODEL, {}, inp)) for inp in images(tmp_path, 12)]
        while batcher.items_done < 2:
            await asyncio.sleep(0.005)
        [victim] = [s.actor for s in backend._slots if s.node_id == second]
        cluster.kill(victim)  # the worker dies; Ray does not know yet that its node is gone
        await asyncio.wait_for(asyncio.gather(*calls), 20)
        assert backend.crashes == 1 and backend.lost_nodes == {}
        cluster.node(second).alive = False  # the heartbeats missed: the node is marked dead
        for _ in range(100):
            if backend.lost_nodes:
                break
            await asyncio.sleep(0.01)
        assert list(backend.lost_nodes.values()) == [f"fakehost node {second[:8]}"]
    finally:
        await batcher.close()
        await backend.close()


async def test_no_live_actor_for_the_limit_fails_the_items_retryably_and_a_placed_one_serves_again(tmp_path):
    cluster = FakeRay()
    only = cluster.add_node(cpus=1)
    backend = make(tmp_path, cluster, 1, no_worker_timeout_s=0.3)
    batcher = Batcher(backend, batch_size=4, max_wait_ms=1)
    try:
        await backend.start()
        inputs = images(tmp_path, 8)
        assert (await batcher.submit("embed_image", MODEL, {}, inputs[0]))["vector"]["dim"] == 8
        cluster.kill_node(only)
        t0 = time.monotonic()
        outs = await asyncio.wait_for(asyncio.gather(*[batcher.submit("embed_image", MODEL, {}, inp)
                                                       for inp in inputs[1:]], return_exceptions=True), 10)
        assert all(isinstance(o, LocalItemError) and o.kind == "unavailable" for o in outs), outs
        assert 0.25 <= time.monotonic() - t0 < 3
        assert "no live ray worker for" in outs[0].message and "lost nodes: fakehost node" in outs[0].message
        assert any("no live actor for" in line for line in backend.status())
        assert batcher.items_unavailable == 7
        cluster.add_node(cpus=1)  # a node comes back: its replacement is placed, starts and serves
        for _ in range(500):
            if backend.live:
                break
            await asyncio.sleep(0.01)
        out = await asyncio.wait_for(batcher.submit("embed_image", MODEL, {}, inputs[1]), 10)
        assert out["vector"]["dim"] == 8 and backend.restarts == 1
    finally:
        await batcher.close()
        await backend.close()


async def test_more_actors_than_the_cluster_holds_give_one_line_at_once(tmp_path):
    cluster = FakeRay()
    cluster.add_node(cpus=1)
    cluster.add_node(cpus=1)
    gen = make(tmp_path, cluster, 2, label="gen actor")
    enc = make(tmp_path, cluster, 1, label="enc actor")
    try:
        await gen.start()
        t0 = time.monotonic()
        with pytest.raises(WorkerStartError) as caught:
            await enc.start()
        assert time.monotonic() - t0 < 1
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith("enc actors cannot be placed: 1 actor x 1 CPU = 1 CPU asked, the cluster has 2 CPU "
                                  "of which 2 are asked by gen actor 2 x 1")
    finally:
        await enc.close()
        await gen.close()
    # alone, three asked of two CPUs: the two that fit are placed, and a note says so
    three = make(tmp_path, cluster, 3)
    try:
        await three.start()
        assert three.parallelism == 2 and three.live == 2
        assert three.notes == ["ray workers: placing 2 of 3 actors (3 actors x 1 CPU = 3 CPU asked, the cluster has "
                               "2 CPU)"]
        assert "2 of 3 actors placed" in fault_lines({"x": three.faults()})[0]
    finally:
        await three.close()


def test_placement_counts_gpus_and_other_backends():
    assert placement(2, 1, 0, {"CPU": 4}) == (2, "")
    fits, short = placement(4, 1, 1, {"CPU": 8, "GPU": 2}, [("clip", 1, 1, 0.5)])
    assert fits == 1 and short == ("4 actors x 1 GPU = 4 GPU asked, the cluster has 2 GPU of which 0.5 are asked by "
                                   "clip 1 x 0.5")
    assert placement(1, 1, 1, {"CPU": 8})[0] == 0  # no GPU at all


async def test_an_actor_not_placed_within_the_limit_says_what_it_needs_and_the_wait_counts(tmp_path):
    cluster = FakeRay()
    cluster.add_node(cpus=1)
    blocker = make(tmp_path, cluster, 1, label="other")
    late = make(tmp_path, cluster, 1, place_timeout_s=0.4)
    try:
        await blocker.start()
        from judgekit.local import ray_backend

        ray_backend._asked.pop(id(blocker))  # as if another program held the CPU: the check passes
        task = asyncio.ensure_future(late.start())
        for _ in range(1000):  # until the wait for placement began (not a fixed time: it lasts 0.4 s)
            if task.done() or (late.status() and "waiting for placement" in late.status()[0]):
                break
            await asyncio.sleep(0.005)
        [line] = late.status()
        assert line.startswith("ray worker 1: waiting for placement (1 CPU) 0 s of 0.4")
        with pytest.raises(WorkerStartError, match=r"not placed within 0.4 s \(each actor needs 1 CPU; the cluster "
                                                   r"has 1 CPU, free now 0 CPU"):
            await task
    finally:
        await late.close()
        await blocker.close()


async def test_a_node_that_cannot_see_the_store_is_refused_by_name_and_avoided(tmp_path):
    pytest.importorskip("ray")  # the pinned replacement uses Ray's NodeAffinitySchedulingStrategy
    cluster = FakeRay()
    elsewhere = tmp_path / "not-the-store"
    elsewhere.mkdir()
    blind = cluster.add_node(cpus=1, store=str(elsewhere))  # listed first: the first actor lands there
    cluster.add_node(cpus=2)
    backend = make(tmp_path, cluster, 2)
    try:
        await backend.start()
        assert backend.live == 2
        assert list(backend.refused_nodes.values()) == [f"fakehost node {blind[:8]}"]
        assert {s.node_id for s in backend._slots} == {cluster.node_list[1].node_id}
        [note] = backend.notes
        assert note.startswith(f"ray workers: node fakehost node {blind[:8]} refused: it cannot see the store")
        assert "cannot read the driver's probe file" in note
        assert f"refused (no store) fakehost node {blind[:8]}" in fault_lines({"a": backend.faults()})[0]
        out = await backend.run_batch({"op": "batch", "batch_id": "b1", "task": "embed_image", "model": MODEL,
                                       "params": {}, "items": [{"item_id": "i1", "inputs": images(tmp_path, 1)[0]}]},
                                      lambda m: None)
        assert out is None
    finally:
        await backend.close()
    assert not (tmp_path / "blobs" / ".probe").exists()  # the probe files are gone


def test_the_store_probe_reads_the_drivers_file_and_writes_its_own(tmp_path):
    probe = _actor_class().probe_store
    (tmp_path / ".probe").mkdir()
    (tmp_path / ".probe" / "p1").write_text("tok")
    assert probe(str(tmp_path), "p1", "tok", "me") == ""
    assert (tmp_path / ".probe" / "p1.me").read_text() == "me"
    assert "is not the file the driver wrote" in probe(str(tmp_path), "p1", "other", "me")
    assert probe(str(tmp_path / "nowhere"), "p1", "tok", "me").startswith("cannot read the driver's probe file")


def test_a_failed_join_keeps_rays_reason():
    class InvalidAuthToken(Exception):
        pass

    try:
        try:
            raise InvalidAuthToken("the token does not match the cluster's")
        except InvalidAuthToken as inner:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379") from inner
    except ConnectionError as e:
        line = join_error("the Ray cluster at 10.0.0.1:6379", e)
    assert line.startswith("cannot start or join the Ray cluster at 10.0.0.1:6379: ConnectionError: Failed to "
                           "connect to Ray cluster at 10.0.0.1:6379 | InvalidAuthToken: the token does not match")
    assert "RAY_AUTH_TOKEN" in line
    version = join_error("x", RuntimeError("Version mismatch: the cluster runs Ray 2.9.0"))
    assert "same Ray and Python versions" in version
    logged = join_error("x", ConnectionError("Failed to connect"), ["Unauthenticated: InvalidAuthToken"])
    assert "| Unauthenticated: InvalidAuthToken" in logged and "RAY_AUTH_MODE=token" in logged


async def test_a_ray_client_address_is_refused_with_the_reason(tmp_path):
    backend = RayBackend(store=tmp_path, address="ray://head:10001")
    pytest.importorskip("ray")
    with pytest.raises(WorkerStartError, match="Ray Client address.*streaming generators do not work over Ray "
                                               "Client.*host:6379"):
        await backend.start()
    await backend.close()
