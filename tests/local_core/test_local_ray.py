"""The Ray backend on a local Ray, with the fake worker's in-process core (skipped without ray)."""

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("ray")

from judgekit.blobs import BlobStore  # noqa: E402
from judgekit.config import ModelSpec  # noqa: E402
from judgekit.local import Batcher  # noqa: E402
from judgekit.local.ray_backend import DEFAULT_CORE, RayBackend  # noqa: E402
from judgekit.providers.local import _make_backend, worker_command  # noqa: E402

HERE = Path(__file__).parent


async def test_batches_run_in_parallel_on_actors_and_survive_an_actor_crash(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    inputs = [{"image": {"sha256": store.put(bytes([i]) * 40, "image/png")}} for i in range(20)]
    env = {"env_vars": {"PYTHONPATH": str(HERE), "FAKE_LOG": str(tmp_path / "log.jsonl"), "FAKE_DELAY_S": "0.05",
                        "FAKE_CRASH_AFTER": "3", "FAKE_CRASH_TIMES": "1",
                        "FAKE_CRASH_STATE": str(tmp_path / "crashes")}}
    backend = RayBackend(store=str(tmp_path / "blobs"), workers=2, core="fake_worker:FakeCore", runtime_env=env)
    batcher = Batcher(backend, batch_size=4, max_wait_ms=5)
    try:
        await backend.start()
        assert len(backend.status()) == 2 and all(line.endswith("(cpu): idle") for line in backend.status())
        outs = await asyncio.gather(*[batcher.submit("embed_image", {"id": "org/m"}, {}, inp) for inp in inputs])
        assert all(o["vector"]["dim"] == 8 for o in outs)
        # a crashed actor's replacement is asked for in the background: the items may all be done
        # before the second one has started (under load, say); wait for it, not for a time
        await asyncio.wait_for(_until(lambda: backend.live == 2), 120)
        log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
        batches = [e for e in log if e["event"] == "batch"]
        assert len({b["pid"] for b in batches}) >= 2  # more than one actor did work
        # both actors may crash (each decides at its start, before the other wrote the state file)
        assert backend.crashes in (1, 2) and batcher.items_resent >= 1
        assert len([e for e in log if e["event"] == "start"]) == 2 + backend.crashes  # crashed ones replaced
        assert backend.restarts == backend.crashes
    finally:
        await batcher.close()
        await backend.close()


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_spec_settings_reach_the_ray_backend(tmp_path):
    spec = ModelSpec(provider="local", model="m", local={"task": "chat", "backend": "ray", "workers": 3,
                                                         "gpus_per_worker": 0.5, "ray_address": "auto",
                                                         "memory_budget_gb": 20, "cpus_per_worker": 2,
                                                         "place_timeout_s": 5, "start_timeout_s": 6,
                                                         "no_worker_timeout_s": 7})
    backend = _make_backend(spec.local, worker_command(spec.local), str(tmp_path), "vlm")
    assert isinstance(backend, RayBackend)
    assert (backend.parallelism, backend.gpus_per_worker, backend.address, backend.memory_budget_gb,
            backend.core) == (3, 0.5, "auto", 20, DEFAULT_CORE)
    assert (backend.cpus_per_worker, backend.place_timeout_s, backend.start_timeout_s,
            backend.no_worker_timeout_s, backend.label) == (2, 5, 6, 7, "vlm actor")
    # the subprocess backend runs torch with as many threads (the default: 1 on both)
    sub = _make_backend(spec.local.model_copy(update={"backend": "subprocess"}), ["python", "-m", "w"], str(tmp_path))
    assert sub.threads == 2 and sub.argv[-2:] == ["--threads", "2"]
    plain = ModelSpec(provider="local", model="m", local={"task": "chat"}).local
    assert plain.cpus_per_worker == 1 and _make_backend(plain, ["python", "-m", "w"], str(tmp_path)).threads == 1
