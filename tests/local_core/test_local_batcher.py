"""The batcher and the subprocess backend against a fake worker speaking protocol 1 (no torch)."""

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from judgekit.local import Batcher, LocalItemError, SubprocessBackend, WorkerCrashed, WorkerStartError

FAKE = Path(__file__).with_name("fake_worker.py")
MODEL = {"id": "org/tiny-clip", "revision": None, "dtype": "auto", "trust_remote_code": False,
         "encoder": "transformers", "pooling": "auto"}


def make_backend(tmp_path, command=None, **env):
    full_env = dict(os.environ, FAKE_LOG=str(tmp_path / "log.jsonl"), **{k: str(v) for k, v in env.items()})
    return SubprocessBackend(command or [sys.executable, str(FAKE)], store=tmp_path / "blobs", env=full_env,
                             shutdown_grace_s=1.0)


def log_entries(tmp_path, event="batch"):
    path = tmp_path / "log.jsonl"
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["event"] == event]


def image_inputs(tmp_path, n):
    """Put n distinct fake images in the store; the worker only checks they exist."""
    from judgekit.blobs import BlobStore

    store = BlobStore(tmp_path / "blobs")
    return [{"image": {"sha256": store.put(b"\x89PNG\r\n\x1a\n" + bytes([i]) * 30, "image/png")}} for i in range(n)]


async def closing(backend, batcher):
    await batcher.close()
    await backend.close()


async def test_groups_by_model_and_params_and_respects_batch_size(tmp_path):
    backend = make_backend(tmp_path)
    batcher = Batcher(backend, batch_size=8, max_wait_ms=50)
    try:
        inputs = image_inputs(tmp_path, 25)
        other = dict(MODEL, id="org/other-clip")
        calls = [batcher.submit("embed_image", MODEL, {}, inp) for inp in inputs[:20]]
        calls += [batcher.submit("embed_image", other, {}, inp) for inp in inputs[20:]]
        outs = await asyncio.gather(*calls)
        assert all(o["vector"]["dim"] == 8 for o in outs)
        batches = log_entries(tmp_path)
        assert [(b["model"], b["n"]) for b in batches] == [
            ("org/tiny-clip", 8), ("org/tiny-clip", 8), ("org/tiny-clip", 4), ("org/other-clip", 5)]
        # different params never share a batch
        chat = {"id": "org/tiny-vlm", "revision": None, "dtype": "auto", "trust_remote_code": False}
        msgs = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
        await asyncio.gather(*[batcher.submit("chat", chat, {"max_new_tokens": n, "do_sample": False}, msgs)
                               for n in (5, 9, 5, 9, 5)])
        chats = [b for b in log_entries(tmp_path) if b["task"] == "chat"]
        assert sorted((b["params"]["max_new_tokens"], b["n"]) for b in chats) == [(5, 3), (9, 2)]
        assert batcher.batches_sent == 6 and batcher.items_done == 30
    finally:
        await closing(backend, batcher)


async def test_batch_settings_per_item_keep_their_own_groups(tmp_path):
    backend = make_backend(tmp_path)
    batcher = Batcher(backend, batch_size=8, max_wait_ms=20)
    try:
        inputs = image_inputs(tmp_path, 10)
        small = [batcher.submit("embed_image", MODEL, {}, inp, batch_size=2) for inp in inputs[:5]]
        big = [batcher.submit("embed_image", MODEL, {}, inp) for inp in inputs[5:]]
        await asyncio.gather(*small, *big)
        assert sorted(b["n"] for b in log_entries(tmp_path)) == [1, 2, 2, 5]
    finally:
        await closing(backend, batcher)


async def test_a_partial_batch_waits_max_wait_then_goes(tmp_path):
    backend = make_backend(tmp_path)
    batcher = Batcher(backend, batch_size=8, max_wait_ms=300)
    try:
        await backend.start()  # so the timing below is the batcher's, not the worker's start
        inputs = image_inputs(tmp_path, 3)
        t0 = time.time()
        first = asyncio.ensure_future(batcher.submit("embed_image", MODEL, {}, inputs[0]))
        await asyncio.sleep(0.1)  # arrives within max_wait of the first: joins its batch
        rest = [batcher.submit("embed_image", MODEL, {}, inp) for inp in inputs[1:]]
        await asyncio.gather(first, *rest)
        [batch] = log_entries(tmp_path)
        assert batch["n"] == 3
        assert 0.28 <= batch["t"] - t0 < 2.0
    finally:
        await closing(backend, batcher)


async def test_results_reach_callers_as_each_item_finishes(tmp_path):
    backend = make_backend(tmp_path, FAKE_DELAY_S=0.25)
    batcher = Batcher(backend, batch_size=4, max_wait_ms=0)
    try:
        done_at = []

        async def one(inp):
            out = await batcher.submit("embed_image", MODEL, {}, inp)
            done_at.append(time.monotonic())
            return out

        await asyncio.gather(*[one(inp) for inp in image_inputs(tmp_path, 4)])
        assert len(log_entries(tmp_path)) == 1
        assert max(done_at) - min(done_at) >= 0.5  # the first did not wait for the batch's end
    finally:
        await closing(backend, batcher)


async def test_crash_mid_batch_keeps_finished_items_and_resends_the_rest(tmp_path):
    backend = make_backend(tmp_path, FAKE_CRASH_AFTER=3, FAKE_CRASH_TIMES=1, FAKE_CRASH_STATE=tmp_path / "crashes")
    batcher = Batcher(backend, batch_size=8, max_wait_ms=10, max_restarts=3)
    try:
        inputs = image_inputs(tmp_path, 8)
        outs = await asyncio.gather(*[batcher.submit("embed_image", MODEL, {}, inp) for inp in inputs])
        assert len(outs) == 8 and all(o["vector"]["sha256"] for o in outs)
        first, second = log_entries(tmp_path)
        assert first["n"] == 8 and second["n"] == 5
        assert set(second["item_ids"]) == set(first["item_ids"][3:])  # only the unfinished were re-sent
        assert first["pid"] != second["pid"]
        assert len(log_entries(tmp_path, "start")) == 2
        assert backend.crashes == 1 and batcher.items_resent == 5
    finally:
        await closing(backend, batcher)


async def test_a_worker_that_always_crashes_fails_items_after_max_restarts(tmp_path):
    backend = make_backend(tmp_path, FAKE_CRASH_AFTER=0)
    batcher = Batcher(backend, batch_size=4, max_wait_ms=0, max_restarts=2)
    try:
        results = await asyncio.gather(*[batcher.submit("embed_image", MODEL, {}, inp)
                                         for inp in image_inputs(tmp_path, 3)], return_exceptions=True)
        assert all(isinstance(r, LocalItemError) and r.kind == "crash" for r in results)
        msg = str(results[0])
        assert "crashing on purpose" in msg  # the stderr tail
        assert "exit code 17" in msg and "max_restarts = 2" in msg
        assert len(log_entries(tmp_path, "start")) == 3  # the first try and two restarts
    finally:
        await closing(backend, batcher)


async def test_load_failed_fails_every_item_with_the_reason_and_later_ones_at_once(tmp_path):
    backend = make_backend(tmp_path, FAKE_LOAD_FAIL="tiny-clip")
    batcher = Batcher(backend, batch_size=8, max_wait_ms=0)
    try:
        inputs = image_inputs(tmp_path, 3)
        results = await asyncio.gather(*[batcher.submit("embed_image", MODEL, {}, inp) for inp in inputs],
                                       return_exceptions=True)
        assert all(isinstance(r, LocalItemError) and r.kind == "load_failed" for r in results)
        assert "org/tiny-clip is not a model I know" in str(results[0])
        with pytest.raises(LocalItemError, match="not a model I know"):
            await batcher.submit("embed_image", MODEL, {}, inputs[0])
        assert len(log_entries(tmp_path)) == 1
    finally:
        await closing(backend, batcher)


async def test_bad_input_fails_only_that_item(tmp_path):
    backend = make_backend(tmp_path)
    batcher = Batcher(backend, batch_size=8, max_wait_ms=0)
    try:
        good = image_inputs(tmp_path, 1)[0]
        bad = {"image": {"sha256": "ab" * 32}}
        results = await asyncio.gather(batcher.submit("embed_image", MODEL, {}, bad),
                                       batcher.submit("embed_image", MODEL, {}, good), return_exceptions=True)
        assert isinstance(results[0], LocalItemError) and results[0].kind == "bad_input"
        assert results[1]["vector"]["dim"] == 8
    finally:
        await closing(backend, batcher)


async def test_status_lines_show_the_batch_in_progress(tmp_path):
    backend = make_backend(tmp_path, FAKE_DELAY_S=0.3)
    batcher = Batcher(backend, batch_size=4, max_wait_ms=0)
    try:
        assert backend.status() == ["worker (auto): not started"]
        calls = asyncio.gather(*[batcher.submit("embed_image", MODEL, {}, inp) for inp in image_inputs(tmp_path, 4)])
        seen = []
        while not calls.done():
            seen.append(tuple(batcher.status()))
            await asyncio.sleep(0.05)
        await calls
        flat = [line for lines in seen for line in lines]
        pid = backend.hello["pid"]
        assert any(line.startswith(f"worker pid {pid} (cpu): running tiny-clip ") for line in flat), flat
        assert any(line.startswith("batch b1 embed_image 2/4") for line in flat), flat
        for _ in range(100):  # the last result comes just before batch_done
            if batcher.status() == [f"worker pid {pid} (cpu): idle"]:
                break
            await asyncio.sleep(0.02)
        assert batcher.status() == [f"worker pid {pid} (cpu): idle"]
    finally:
        await closing(backend, batcher)


async def test_a_crash_is_reported_by_run_batch_and_the_next_batch_restarts(tmp_path):
    backend = make_backend(tmp_path, FAKE_CRASH_AFTER=2, FAKE_CRASH_TIMES=1, FAKE_CRASH_STATE=tmp_path / "c")
    got = []
    items = [{"item_id": f"i{k}", "inputs": inp} for k, inp in enumerate(image_inputs(tmp_path, 4))]
    batch = {"op": "batch", "batch_id": "b1", "task": "embed_image", "model": MODEL, "params": {}, "items": items}
    try:
        with pytest.raises(WorkerCrashed) as e:
            await backend.run_batch(batch, got.append)
        assert e.value.finished_item_ids == {"i0", "i1"}
        assert "crashing on purpose" in str(e.value)
        assert [m["item_id"] for m in got if m["type"] == "result"] == ["i0", "i1"]
        await backend.run_batch(dict(batch, batch_id="b2"), got.append)
        assert len([m for m in got if m["type"] == "result"]) == 6
        assert backend.starts == 2 and backend.crashes == 1
    finally:
        await backend.close()


async def test_close_stops_a_busy_worker(tmp_path):
    backend = make_backend(tmp_path, FAKE_DELAY_S=3600)
    batcher = Batcher(backend, batch_size=1, max_wait_ms=0)
    call = asyncio.ensure_future(batcher.submit("embed_image", MODEL, {}, image_inputs(tmp_path, 1)[0]))
    while backend.hello is None or not backend.status()[0].split(": ")[1].startswith(("running", "loading")):
        await asyncio.sleep(0.05)
    pid = backend.hello["pid"]
    # close does not wait for the hour-long batch (a guard, not a measurement)
    await asyncio.wait_for(closing(backend, batcher), 300)
    with pytest.raises(LocalItemError):
        await call
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_missing_module_names_the_python_and_the_install_command(tmp_path):
    backend = SubprocessBackend([sys.executable, "-m", "judgekit_local_not_installed"], store=tmp_path / "blobs")
    with pytest.raises(WorkerStartError) as e:
        await backend.start()
    msg = str(e.value)
    assert sys.executable in msg and '-m pip install "torch==2.13.0" -e ./local' in msg and "judgekit-local" in msg
    await backend.close()


async def test_another_protocol_is_refused(tmp_path):
    backend = make_backend(tmp_path, FAKE_PROTOCOL=2)
    with pytest.raises(WorkerStartError, match="protocol 2"):
        await backend.start()
    await backend.close()


async def test_a_python_that_does_not_exist_is_a_start_error(tmp_path):
    backend = SubprocessBackend([str(tmp_path / "no-python"), "-m", "judgekit_local"], store=tmp_path / "blobs")
    with pytest.raises(WorkerStartError, match="no-python"):
        await backend.start()
    await backend.close()


async def test_the_worker_gets_its_arguments(tmp_path):
    backend = SubprocessBackend([sys.executable, str(FAKE)], store=tmp_path / "blobs", device="cpu",
                                memory_budget_gb=12.5, threads=3,
                                env=dict(os.environ, FAKE_LOG=str(tmp_path / "log.jsonl")))
    try:
        await backend.start()
        [start] = log_entries(tmp_path, "start")
        assert start["argv"] == ["--store", str((tmp_path / "blobs").resolve()), "--device", "cpu",
                                 "--memory-budget-gb", "12.5", "--threads", "3"]
        assert backend.hello["device"] == "cpu"
    finally:
        await backend.close()
