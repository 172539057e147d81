"""Fixtures for the local worker's tests: tiny random-weight models, built once per session.

Every model is built from a config, saved with ``save_pretrained`` and loaded back by the
worker through ``from_pretrained``, offline. Without torch (or judgekit-local) installed, the
test files skip themselves (``pytest.importorskip`` at their top); nothing here imports torch
at collection time.
"""

from __future__ import annotations

import io
import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory):
    from judgekit_local.testing import build_tiny_clip

    return str(build_tiny_clip(tmp_path_factory.mktemp("tiny-clip")))


@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory):
    from judgekit_local.testing import build_tiny_vlm

    return str(build_tiny_vlm(tmp_path_factory.mktemp("tiny-vlm")))


@pytest.fixture(scope="session")
def tiny_diffusion(tmp_path_factory):
    from judgekit_local.testing import build_tiny_diffusion

    return str(build_tiny_diffusion(tmp_path_factory.mktemp("tiny-diffusion")))


@pytest.fixture(scope="session")
def session_store(tmp_path_factory):
    return tmp_path_factory.mktemp("blobs")


@pytest.fixture(scope="session")
def core(session_store):
    """One CPU worker shared by the tests that need no special settings (models stay loaded)."""
    from judgekit_local.worker import WorkerCore

    return WorkerCore(session_store, device="cpu")


def _png_bytes(size=(40, 30), color=(200, 30, 30), pattern=0) -> bytes:
    """A small PNG; ``pattern`` draws a distinct stripe so images differ in content."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, color)
    if pattern:
        ImageDraw.Draw(img).rectangle([0, 0, pattern * 3 % size[0], size[1] // 2], fill=(20, 20 * pattern % 255, 240))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def put_image(core):
    """Put a PNG into the shared store; returns its {"sha256": ...} reference."""

    def put(**kwargs) -> dict:
        return {"sha256": core.store.put(_png_bytes(**kwargs), ".png")}

    return put


def _run(core, task: str, model: dict, items: list, params: dict | None = None, batch_id: str = "b1") -> dict:
    """Run a batch and check the protocol's promises; returns the messages sorted out.

    Every item gets exactly one result, every message carries the batch id, batch_done comes
    last. Returns {"results": {item_id: result}, "progress": [...], "logs": [...], "all": [...]}.
    """
    messages: list[dict] = []
    batch = {"op": "batch", "batch_id": batch_id, "task": task, "model": model,
             "params": params or {}, "items": items}
    core.run_batch(batch, messages.append)
    assert messages and messages[-1] == {"type": "batch_done", "batch_id": batch_id}
    results = [m for m in messages if m["type"] == "result"]
    ids = [r["item_id"] for r in results]
    assert sorted(ids) == sorted(i["item_id"] for i in items), messages
    for m in messages:
        if m["type"] in ("result", "progress", "batch_done"):
            assert m["batch_id"] == batch_id
        if m["type"] == "result" and not m["ok"]:
            assert m["error_kind"] in ("bad_input", "load_failed", "oom", "error") and m["error"]
    return {
        "results": {r["item_id"]: r for r in results},
        "progress": [m for m in messages if m["type"] == "progress"],
        "logs": [m for m in messages if m["type"] == "log"],
        "all": messages,
    }


@pytest.fixture(scope="session")
def png_bytes():
    """``png_bytes(size=(w, h), color=(r, g, b), pattern=k)`` -> PNG bytes."""
    return _png_bytes


@pytest.fixture(scope="session")
def run_batch():
    """``run_batch(core, task, model, items, params=None, batch_id="b1")``: see ``_run``."""
    return _run
