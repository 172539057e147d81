"""WorkerCore: model cache and memory budget, out-of-memory splitting, failures as results."""

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("judgekit_local")

import numpy as np  # noqa: E402

from judgekit_local._memory import estimate, measure  # noqa: E402
from judgekit_local.device import dtype_name, pick_device, pick_dtype  # noqa: E402
from judgekit_local.store import BlobMissing, Store  # noqa: E402
from judgekit_local.worker import FAIL_BATCHES_ENV, PROTOCOL_VERSION, WorkerCore, is_oom  # noqa: E402


def embed_items(core, png_bytes, n):
    refs = [{"sha256": core.store.put(png_bytes(pattern=k + 1), ".png")} for k in range(n)]
    return [{"item_id": f"i{k}", "inputs": {"image": ref}} for k, ref in enumerate(refs)]


def vec(core, result):
    return np.frombuffer(core.store.read(result["output"]["vector"]["sha256"]), dtype="<f4")


def test_hello(core):
    hello = core.hello()
    assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL_VERSION == 1
    assert hello["worker"].startswith("judgekit-local ") and hello["device"] == "cpu"
    assert hello["torch"] == torch.__version__ and hello["transformers"] and hello["diffusers"]
    assert isinstance(hello["pid"], int)


def test_models_are_loaded_once(tmp_path, tiny_clip, png_bytes, run_batch):
    core = WorkerCore(tmp_path, device="cpu")
    items = embed_items(core, png_bytes, 2)
    first = run_batch(core, "embed_image", {"id": tiny_clip}, items)
    second = run_batch(core, "embed_image", {"id": tiny_clip, "pooling": "cls"}, items)
    assert [p["phase"] for p in first["progress"]] == ["loading", "loading", "running"]
    assert [p["phase"] for p in second["progress"]] == ["running"]  # same weights, another pooling
    assert len(core.loaded_models()) == 1


def test_lru_unloads_under_a_budget(tmp_path, tiny_clip, tiny_vlm, png_bytes, run_batch):
    sizes = {}
    probe = WorkerCore(tmp_path / "probe", device="cpu")
    for task, model in (("embed_image", tiny_clip), ("chat", tiny_vlm)):
        probe._cache.entries.clear()
        items = embed_items(probe, png_bytes, 1) if task == "embed_image" else [
            {"item_id": "i0", "inputs": {"messages": [{"role": "user", "content": "a cat"}]}}]
        run_batch(probe, task, {"id": model}, items, {"max_new_tokens": 1} if task == "chat" else {})
        sizes[task] = probe.loaded_models()[0]["nbytes"]
    # room for the bigger model alone, not for both
    budget = (max(sizes.values()) + min(sizes.values()) // 2) / 1024**3
    core = WorkerCore(tmp_path / "blobs", device="cpu", memory_budget_gb=budget)
    clip_items = embed_items(core, png_bytes, 1)
    chat_items = [{"item_id": "c", "inputs": {"messages": [{"role": "user", "content": "a dog"}]}}]

    run_batch(core, "embed_image", {"id": tiny_clip}, clip_items)
    assert [m["key"][0] for m in core.loaded_models()] == ["embed_image"]
    out = run_batch(core, "chat", {"id": tiny_vlm}, chat_items, {"max_new_tokens": 2})
    assert out["results"]["c"]["ok"]
    assert [m["key"][0] for m in core.loaded_models()] == ["chat"]
    assert any("unloaded" in log["message"] and tiny_clip in log["message"] for log in out["logs"])
    out = run_batch(core, "embed_image", {"id": tiny_clip}, clip_items)
    assert out["results"]["i0"]["ok"] and [m["key"][0] for m in core.loaded_models()] == ["embed_image"]

    unbounded = WorkerCore(tmp_path / "blobs", device="cpu")
    run_batch(unbounded, "embed_image", {"id": tiny_clip}, clip_items)
    run_batch(unbounded, "chat", {"id": tiny_vlm}, chat_items, {"max_new_tokens": 2})
    assert len(unbounded.loaded_models()) == 2


def test_estimate_from_safetensors_matches_the_loaded_size(core, tiny_clip, run_batch, put_image):
    run_batch(core, "embed_image", {"id": tiny_clip}, [{"item_id": "x", "inputs": {"image": put_image()}}])
    loaded = next(m for m in core.loaded_models() if m["key"][:2] == ("embed_image", tiny_clip))
    guess = estimate(tiny_clip, None, torch.float32)
    assert guess and guess <= loaded["nbytes"] <= guess * 1.05  # buffers are not in the file
    assert estimate(tiny_clip, None, torch.bfloat16) == pytest.approx(guess / 2, rel=0.01)
    assert estimate("no/such-model-anywhere", None, torch.float32) is None
    lin = torch.nn.Linear(4, 4)
    assert measure({"a": lin, "b": [lin]}) == (16 + 4) * 4  # shared modules counted once


def test_oom_splits_the_batch_in_halves(tmp_path, tiny_clip, png_bytes, run_batch):
    reference = WorkerCore(tmp_path, device="cpu")
    items = embed_items(reference, png_bytes, 5)
    whole = run_batch(reference, "embed_image", {"id": tiny_clip}, items)["results"]

    core = WorkerCore(tmp_path, device="cpu", fail_batches_larger_than=2)
    out = run_batch(core, "embed_image", {"id": tiny_clip}, items)
    assert all(r["ok"] for r in out["results"].values())
    for k in whole:
        np.testing.assert_allclose(vec(core, out["results"][k]), vec(core, whole[k]), rtol=1e-4, atol=1e-5)
    splits = [log for log in out["logs"] if "out of memory" in log["message"]]
    assert len(splits) == 2  # 5 -> 2 + 3, then 3 -> 1 + 2
    running = [(p["done"], p["total"]) for p in out["progress"] if p["phase"] == "running"]
    assert running == [(2, 5), (3, 5), (5, 5)]


def test_a_single_item_that_does_not_fit_fails_with_oom(tmp_path, tiny_clip, png_bytes, run_batch):
    core = WorkerCore(tmp_path, device="cpu", fail_batches_larger_than=0)
    out = run_batch(core, "embed_image", {"id": tiny_clip}, embed_items(core, png_bytes, 3))
    for r in out["results"].values():
        assert r["error_kind"] == "oom" and "out of memory" in r["error"]


def test_oom_hook_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(FAIL_BATCHES_ENV, "3")
    assert WorkerCore(tmp_path, device="cpu").fail_batches_larger_than == 3
    assert WorkerCore(tmp_path, device="cpu", fail_batches_larger_than=1).fail_batches_larger_than == 1


def test_is_oom():
    assert is_oom(torch.OutOfMemoryError("CUDA out of memory"))
    assert is_oom(RuntimeError("CUDA error: out of memory"))
    assert is_oom(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))
    assert is_oom(RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory"))
    assert not is_oom(RuntimeError("shape mismatch"))
    assert not is_oom(ValueError("out of memory"))


def test_load_failure_fails_every_item_and_the_worker_goes_on(core, tmp_path, tiny_clip, put_image, run_batch):
    items = [{"item_id": f"i{k}", "inputs": {"image": put_image(pattern=k)}} for k in range(3)]
    for task in ("embed_image", "chat", "text_to_image"):
        task_items = items if task == "embed_image" else (
            [{"item_id": "i0", "inputs": {"messages": [{"role": "user", "content": "hi"}]}}] if task == "chat"
            else [{"item_id": "i0", "inputs": {"prompt": "x", "seed": 1}}])
        out = run_batch(core, task, {"id": str(tmp_path / "no-such-model")}, task_items)
        for r in out["results"].values():
            assert r["error_kind"] == "load_failed" and "no-such-model" in r["error"], r
    out = run_batch(core, "embed_image", {"id": tiny_clip}, items)
    assert all(r["ok"] for r in out["results"].values())


def test_bad_batches_still_answer(core, put_image, run_batch, tiny_clip):
    item = [{"item_id": "a", "inputs": {"image": put_image()}}]
    out = run_batch(core, "caption_video", {"id": tiny_clip}, item)
    assert out["results"]["a"]["error_kind"] == "bad_input" and "unknown task" in out["results"]["a"]["error"]
    out = run_batch(core, "embed_image", "not-a-model", item)
    assert out["results"]["a"]["error_kind"] == "bad_input"
    out = run_batch(core, "embed_image", {"id": tiny_clip, "dtype": "fp8"}, item)
    assert out["results"]["a"]["error_kind"] == "bad_input" and "dtype" in out["results"]["a"]["error"]
    messages = []
    core.run_batch({"batch_id": "e", "task": "embed_image", "model": {"id": tiny_clip}, "items": []}, messages.append)
    assert messages == [{"type": "batch_done", "batch_id": "e"}]
    messages = []
    core.run_batch({"batch_id": "x", "items": [{"inputs": {}}]}, messages.append)
    assert messages[0]["type"] == "log" and messages[-1]["type"] == "batch_done"


def test_revision_and_trust_remote_code_reach_from_pretrained(tmp_path, monkeypatch, run_batch):
    import transformers

    calls = []

    def spy(model_id, **kwargs):
        calls.append(kwargs)
        raise RuntimeError("spy stops the load")

    monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained", spy)
    core = WorkerCore(tmp_path, device="cpu")
    item = [{"item_id": "a", "inputs": {"messages": [{"role": "user", "content": "hi"}]}}]
    out = run_batch(core, "chat", {"id": "some/model", "revision": "abc123"}, item)
    assert out["results"]["a"]["error_kind"] == "load_failed" and "spy stops" in out["results"]["a"]["error"]
    run_batch(core, "chat", {"id": "some/model", "trust_remote_code": True}, item)
    assert calls[0]["trust_remote_code"] is False and calls[0]["revision"] == "abc123"
    assert calls[1]["trust_remote_code"] is True and "revision" not in calls[1]


def test_store_round_trip(tmp_path):
    store = Store(tmp_path)
    sha = store.put(b"\x00\x01vector", ".f32")
    assert store.put(b"\x00\x01vector", ".f32") == sha
    assert store.read(sha) == b"\x00\x01vector"
    assert store.path(sha) == tmp_path / sha[:2] / f"{sha}.f32"
    assert not list(tmp_path.rglob("*.tmp"))
    for bad in ("0" * 64, "../x", "A" * 64, 5):
        with pytest.raises(BlobMissing):
            store.read(bad)


def test_the_core_reads_what_the_worker_writes(tmp_path, png_bytes):
    blobs = pytest.importorskip("judgekit.blobs")
    data = png_bytes()
    sha = Store(tmp_path).put(data, ".png")
    core_store = blobs.BlobStore(tmp_path)
    assert core_store.get(sha) == data and core_store.mime(sha) == "image/png"
    assert Store(tmp_path).read(core_store.put(b"\xff\xd8\xff jpeg")) == b"\xff\xd8\xff jpeg"


def test_device_and_dtype():
    assert pick_device("cpu") == "cpu"
    if torch.cuda.device_count() > 1:
        assert pick_device("cuda:1") == "cuda:1"
    elif not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            pick_device("cuda:1")
    assert pick_device("auto") in ("cpu", "cuda", "mps")
    assert pick_dtype("auto", "cpu") == torch.float32 and pick_dtype(None, "mps") == torch.float32
    assert pick_dtype("bf16", "cpu") == torch.bfloat16 and pick_dtype("fp16", "cuda") == torch.float16
    assert dtype_name(pick_dtype("float32", "cpu")) == "fp32"
    with pytest.raises(ValueError):
        pick_dtype("fp8", "cpu")
    with pytest.raises(RuntimeError):
        pick_device("gpu-please")


def test_public_api():
    import judgekit_local
    from judgekit_local import presets, store, testing, worker

    assert judgekit_local.__all__ == ["WorkerCore", "__version__"] and judgekit_local.WorkerCore is WorkerCore
    assert worker.__all__ == ["FAIL_BATCHES_ENV", "PROTOCOL_VERSION", "WorkerCore", "is_oom"]
    assert store.__all__ == ["BlobMissing", "Store"]
    assert presets.__all__ == ["DEFAULT_TEXT_TO_IMAGE_PRESET", "TEXT_TO_IMAGE_PRESETS"]
    assert {"build_tiny_clip", "build_tiny_vlm", "build_tiny_diffusion"} <= set(testing.__all__)


def test_presets_and_package_import_no_torch():
    code = "import sys, judgekit_local, judgekit_local.presets; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
