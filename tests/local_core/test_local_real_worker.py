"""End to end with the real worker (``python -m judgekit_local``) and its tiny random-weight models,
through the engine.  Skipped where judgekit-local or torch is not installed; this process never
imports torch (the worker builds the ``tiny:`` models on first use, in its own process, into the
session's tiny-model folder that the benchmark tests share)."""

import asyncio
import importlib.util
import io
import json

import pytest
from PIL import Image

from judgekit.blobs import BlobStore
from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.local import read_vector
from judgekit.providers import local as local_provider
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

if not all(importlib.util.find_spec(m) for m in ("judgekit_local", "torch", "transformers", "diffusers")):
    pytest.skip("judgekit-local with torch, transformers and diffusers is not installed", allow_module_level=True)


def png(color):
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(buf, format="PNG")
    return buf.getvalue()


async def test_the_real_worker_embeds_chats_and_draws_through_the_engine(tmp_path, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.delenv(local_provider.WORKER_ENV, raising=False)
    # the tiny models' folder of the whole session (built once, as on a user's machine; the
    # MMGenBench and MMIE tests use the same one)
    monkeypatch.setenv("JUDGEKIT_LOCAL_TINY_DIR", str(tmp_path_factory.getbasetemp() / "tiny-models"))
    cache = await CacheStore.open(tmp_path / "cache.duckdb", run_id="t")
    cpu = {"device": "cpu"}
    engine = Engine({
        "clip": ModelSpec(provider="local", model="tiny:clip", local={"task": "embed_image", **cpu}),
        "vlm": ModelSpec(provider="local", model="tiny:vlm", local={"task": "chat", **cpu}),
        "diff": ModelSpec(provider="local", model="tiny:sd",
                          local={"task": "text_to_image", "steps": 2, "width": 32, "height": 32, **cpu}),
    }, cache, blobs=BlobStore(tmp_path / "blobs"))
    try:
        await engine.start()
        embeds = await asyncio.gather(*[engine.call(ChatRequest("clip", (Message.user(ImagePart(png((i, 9, 9)))),)))
                                        for i in range(6)])
        assert all(r.ok for r in embeds), [r.error for r in embeds]
        record = json.loads(embeds[0].text)
        assert len(read_vector(engine.blobs, record["vector"]["sha256"])) == record["vector"]["dim"] > 0
        chat = await engine.call(ChatRequest("vlm", (Message.user(ImagePart(png((1, 2, 3))), "describe the image"),),
                                             GenParams(max_tokens=4, temperature=0)))
        assert chat.ok, chat.error
        assert chat.response.usage.output_tokens <= 4 and chat.response.finish_reason in ("stop", "length")
        image = await engine.call(ChatRequest("diff", (Message.user("a red house"),), GenParams(seed=5)))
        assert image.ok, image.error
        drawn = json.loads(image.text)
        assert (drawn["seed"], drawn["steps"], drawn["image"]["width"]) == (5, 2, 32)
        assert engine.blobs.get(drawn["image"]["sha256"])[:4] == b"\x89PNG"
        again = await engine.call(ChatRequest("diff", (Message.user("a red house"),), GenParams(seed=5)))
        assert again.response.cached and again.text == image.text
    finally:
        await engine.close()
        await cache.close()
