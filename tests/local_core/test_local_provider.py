"""Local models through the engine, exactly like API models: the cache, failures, the display."""

import asyncio
import hashlib
import io
import json
import struct
import sys
from pathlib import Path

import pytest
from PIL import Image

from judgekit.blobs import BlobStore
from judgekit.cache.store import CacheStore
from judgekit.cli.ui import ConsoleUI, local_status_lines
from judgekit.config import ModelSpec
from judgekit.engine import Engine, RunStopped
from judgekit.local import read_vector
from judgekit.providers import create_provider
from judgekit.providers import local as local_provider
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

FAKE = Path(__file__).with_name("fake_worker.py")


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


@pytest.fixture
def fake_worker(monkeypatch, tmp_path):
    monkeypatch.setenv(local_provider.WORKER_ENV, f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log.jsonl"))
    return tmp_path / "log.jsonl"


@pytest.fixture
async def make_engine(cache, tmp_path):
    engines = []

    async def make(**models):
        engine = Engine({a: ModelSpec(provider="local", **kw) for a, kw in models.items()}, cache,
                        blobs=BlobStore(tmp_path / "blobs"))
        engines.append(engine)
        await engine.start()
        return engine

    yield make
    for e in engines:
        await e.close()
    assert local_provider.running_runtimes() == []


def batches(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [e for e in map(json.loads, log.read_text().splitlines()) if e["event"] == "batch"]


def png(color=(200, 30, 30), size=(12, 10)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def req(alias, *parts, stage="s", **params):
    extra = tuple(sorted(params.pop("extra", {}).items()))
    return ChatRequest(alias, (Message.user(*parts),), GenParams(extra=extra, **params), stage=stage)


async def test_embed_call_is_made_once_then_cached_and_the_vector_reads_back(make_engine, fake_worker, tmp_path):
    engine = await make_engine(clip={"model": "org/tiny-clip", "local": {"task": "embed_image"}})
    image = ImagePart(png())
    r1 = await engine.call(req("clip", image))
    assert r1.ok, r1.error
    record = json.loads(r1.text)
    assert record["encoder"] == "fake:org/tiny-clip" and record["vector"]["dim"] == 8
    vector = read_vector(engine.blobs, record["vector"]["sha256"])
    digest = hashlib.sha256(image.sha256.encode()).digest()
    expected = struct.unpack("<8f", struct.pack("<8f", *[b / 255 for b in digest[:8]]))  # float32-rounded
    assert vector == list(expected)
    r2 = await engine.call(req("clip", image))
    assert r2.ok and r2.response.cached and r2.text == r1.text
    assert len(batches(fake_worker)) == 1
    st = engine.stats.stage("s")
    assert (st.calls, st.cache_hits, st.cost_usd) == (1, 1, 0.0)
    # the input image went to the shared store, by its hash
    assert engine.blobs.has(image.sha256)


async def test_embed_needs_exactly_one_image(make_engine, fake_worker):
    engine = await make_engine(clip={"model": "org/tiny-clip", "local": {"task": "embed_image"}})
    r = await engine.call(req("clip", "no image here"))
    assert not r.ok and r.error_kind == "bad_request" and "exactly one image" in r.error
    assert batches(fake_worker) == []


async def test_text_to_image_is_seeded_recorded_and_stored(make_engine, fake_worker):
    engine = await make_engine(flux={"local": {"task": "text_to_image", "preset": "flux-dev", "steps": 4}})
    prov = engine.providers["flux"]
    assert prov.model == "black-forest-labs/FLUX.1-dev"
    unseeded = await engine.call(req("flux", "a red cube"))
    assert not unseeded.ok and unseeded.error_kind == "bad_request" and "seed" in unseeded.error
    r = await engine.call(req("flux", "a red cube", seed=7, extra={"width": 32, "height": 24}))
    assert r.ok, r.error
    record = json.loads(r.text)
    assert record["seed"] == 7 and record["steps"] == 4 and record["guidance"] == 3.5
    assert (record["width"], record["height"]) == (32, 24) and record["negative_prompt"] is None
    image = engine.blobs.get(record["image"]["sha256"])
    with Image.open(io.BytesIO(image)) as im:
        assert im.size == (32, 24)
    [batch] = batches(fake_worker)
    assert batch["params"] == {"steps": 4, "guidance": 3.5, "width": 32, "height": 24}
    # the same call with another seed is another image, and a cache miss
    r2 = await engine.call(req("flux", "a red cube", seed=8, extra={"width": 32, "height": 24}))
    assert r2.ok and not r2.response.cached and json.loads(r2.text)["image"]["sha256"] != record["image"]["sha256"]


async def test_an_image_missing_from_the_store_fails_uncached_and_a_rerun_makes_it(make_engine, fake_worker,
                                                                                   monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_STORE", str(tmp_path / "another-disk"))  # a node without the shared store
    spec = {"local": {"task": "text_to_image", "preset": "flux-dev", "steps": 4}, "limits": {"max_attempts": 1}}
    engine = await make_engine(flux=spec)
    r = await engine.call(req("flux", "a red cube", seed=7))
    assert not r.ok and r.error_kind == "transient"
    assert "is not in the store" in r.error and "re-run the same command" in r.error
    assert engine.providers["flux"].faults() == {"backend": "subprocess", "starts": 1, "crashes": 0, "restarts": 0,
                                                 "items_resent": 0, "items_unavailable": 0, "shared_by": ["flux"]}
    await engine.close()
    monkeypatch.delenv("FAKE_STORE")
    again = await make_engine(flux=spec)
    r2 = await again.call(req("flux", "a red cube", seed=7))
    assert r2.ok and not r2.response.cached, r2.error
    assert again.blobs.has(json.loads(r2.text)["image"]["sha256"])


async def test_a_cached_image_or_vector_deleted_later_is_made_again(make_engine, fake_worker):
    engine = await make_engine(flux={"local": {"task": "text_to_image", "preset": "flux-dev", "steps": 4}},
                               clip={"model": "org/tiny-clip", "local": {"task": "embed_image"}},
                               echo={"model": "org/echo", "local": {"task": "chat"}})
    assert [engine.providers[a].stores_outputs for a in ("flux", "clip", "echo")] == [True, True, False]
    requests = {"flux": req("flux", "a red cube", seed=7), "clip": req("clip", ImagePart(png())),
                "echo": req("echo", "hello")}
    first = {a: await engine.call(r) for a, r in requests.items()}
    assert all(r.ok for r in first.values())
    made = {"flux": json.loads(first["flux"].text)["image"]["sha256"],
            "clip": json.loads(first["clip"].text)["vector"]["sha256"]}
    assert {a: engine.providers[a].output_blobs(first[a].response) for a in made} == {a: (s,) for a, s in made.items()}
    n = len(batches(fake_worker))
    for sha in made.values():
        engine.blobs.path(sha).unlink()  # a user cleaning up, or a node that lost its disk
    calls = [(r, engine.key_for(r)) for r in requests.values()]
    assert await engine.stale_keys(calls) == {engine.key_for(requests["flux"]), engine.key_for(requests["clip"])}
    again = {a: await engine.call(r) for a, r in requests.items()}
    assert all(r.ok and r.text == first[a].text for a, r in again.items())
    assert [a for a, r in again.items() if not r.response.cached] == ["flux", "clip"]
    assert len(batches(fake_worker)) == n + 2 and all(engine.blobs.has(sha) for sha in made.values())
    st = engine.stats.stage("s")
    assert (st.calls, st.cache_hits, st.remade) == (5, 1, 2)
    assert await engine.stale_keys(calls) == set()
    # the new replies replaced the rows: the next lookups are hits again
    for r in requests.values():
        assert (await engine.lookup(r))[1] is not None


async def test_identity_holds_what_changes_the_output(tmp_path):
    def provider(**local):
        return create_provider("a", ModelSpec(provider="local", model="m", local=local))

    base = provider(task="text_to_image", steps=20)
    assert base.identity == provider(task="text_to_image", steps=20, batch_size=2, device="cuda:1",
                                     memory_budget_gb=10, max_restarts=0).identity
    for other in (provider(task="text_to_image", steps=21), provider(task="text_to_image", steps=20, dtype="fp16"),
                  provider(task="text_to_image", steps=20, revision="abc"),
                  provider(task="text_to_image", steps=20, pipeline="flux"),
                  provider(task="text_to_image", steps=20, negative_prompt="blurry"),
                  provider(task="chat"), provider(task="embed_image")):
        assert other.identity != base.identity
    assert provider(task="embed_image", pooling="cls").identity != provider(task="embed_image").identity
    assert provider(task="embed_image", encoder="pkg:fn").identity != provider(task="embed_image").identity
    # a preset's defaults are spelled out: changing the preset data changes the keys
    flux = provider(task="text_to_image", preset="flux-dev")
    assert "steps=50" in flux.identity and 'dtype="bf16"' in flux.identity and 'pipeline="flux"' in flux.identity


async def test_chat_maps_messages_and_params(make_engine, fake_worker):
    engine = await make_engine(vlm={"model": "org/tiny-vlm", "local": {"task": "chat"}})
    r = await engine.call(req("vlm", ImagePart(png()), "what is this thing", max_tokens=64, temperature=0))
    assert r.ok, r.error
    assert r.text == "echo: what is this thing [images: 1]"
    assert r.response.usage.input_tokens == 5 and r.response.usage.output_tokens == 7
    assert r.response.finish_reason == "stop"
    short = await engine.call(req("vlm", "one two three four", max_tokens=2, temperature=0.7, top_p=0.9, seed=3))
    assert short.text == "echo: one" and short.response.finish_reason == "length"
    params = [b["params"] for b in batches(fake_worker)]
    assert params == [{"max_new_tokens": 64, "do_sample": False},
                      {"max_new_tokens": 2, "do_sample": True, "temperature": 0.7, "top_p": 0.9, "seed": 3}]
    default = await engine.call(req("vlm", "hello"))
    assert default.ok and batches(fake_worker)[-1]["params"]["max_new_tokens"] == local_provider.DEFAULT_MAX_NEW_TOKENS


async def test_aliases_with_the_same_worker_settings_share_one_worker(make_engine, fake_worker, tmp_path):
    engine = await make_engine(a={"model": "org/tiny-clip", "local": {"task": "embed_image"}},
                               b={"model": "org/tiny-vlm", "local": {"task": "chat"}},
                               c={"model": "org/tiny-vlm", "local": {"task": "chat", "device": "cpu"}})
    [shared] = [rt for rt in local_provider.running_runtimes() if len(rt.aliases) == 2]
    assert sorted(shared.aliases) == ["a", "b"]
    assert len(local_provider.running_runtimes()) == 2
    rs = await asyncio.gather(engine.call(req("a", ImagePart(png()))), engine.call(req("b", "hi")),
                              engine.call(req("c", "hello")))  # "hi" would be b's call, merged
    assert all(r.ok for r in rs)
    starts = [e for e in map(json.loads, fake_worker.read_text().splitlines()) if e["event"] == "start"]
    assert len(starts) == 2


async def test_status_lines_reach_the_live_display(make_engine, fake_worker, monkeypatch):
    monkeypatch.setenv("FAKE_DELAY_S", "0.3")
    engine = await make_engine(clip={"model": "org/tiny-clip", "local": {"task": "embed_image", "device": "cpu"}},
                               twin={"model": "org/tiny-clip", "local": {"task": "embed_image", "device": "cpu"}})
    ui = ConsoleUI(interval=1)
    calls = asyncio.gather(*[engine.call(req("clip", ImagePart(png((i, 0, 0))))) for i in range(4)])
    seen, plain = [], []
    while not calls.done():
        seen.extend(local_status_lines(engine))
        plain.append(ui.plain_line(engine))
        await asyncio.sleep(0.05)
    assert all(r.ok for r in await calls)
    assert any(" (cpu): running tiny-clip" in line for line in seen), seen
    assert any(line.startswith("batch b1 embed_image ") for line in seen), seen
    assert any("| local: worker pid" in line for line in plain)
    # two aliases share the worker: its lines are shown once
    for _ in range(100):  # the last result comes just before its batch's batch_done
        lines = local_status_lines(engine)
        if lines[0].endswith("idle"):
            break
        await asyncio.sleep(0.02)
    assert len(lines) == len(set(lines)) == 1 and lines[0].endswith("(cpu): idle")
    with ui.console.capture() as cap:
        ui.console.print(ui.render(engine))
    assert "local workers" in cap.get()


async def test_no_local_section_without_local_models(cache):
    engine = Engine({}, cache)
    ui = ConsoleUI(interval=1)
    with ui.console.capture() as cap:
        ui.console.print(ui.render(engine))
    assert "local workers" not in cap.get() and "local:" not in ui.plain_line(engine)


async def test_item_failures_are_recorded_failures_never_crashes(make_engine, fake_worker, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_LOAD_FAIL", "broken")
    engine = await make_engine(
        broken={"model": "org/broken-model", "local": {"task": "embed_image"}},
        flux={"model": "org/flux", "local": {"task": "text_to_image", "width": 16, "height": 16}})
    r = await engine.call(req("broken", ImagePart(png())))
    assert not r.ok and r.error_kind == "bad_request"
    assert "org/broken-model failed to load" in r.error and "not a model I know" in r.error and "'broken'" in r.error
    oom = await engine.call(req("flux", "OOM please", seed=1))
    assert not oom.ok and oom.error_kind == "bad_request" and "out of memory" in oom.error
    fine = await engine.call(req("flux", "a cat", seed=1))
    assert fine.ok
    await engine.cache.flush()
    assert await engine.cache.count_attempts() == 2  # each failure recorded once, never cached as an answer


async def test_a_worker_that_keeps_crashing_is_a_transient_failure(make_engine, fake_worker, monkeypatch):
    monkeypatch.setenv("FAKE_CRASH_AFTER", "0")
    engine = await make_engine(clip={"model": "org/tiny-clip", "local": {"task": "embed_image", "max_restarts": 1},
                                     "limits": {"max_attempts": 1}})
    r = await engine.call(req("clip", ImagePart(png())))
    assert not r.ok and r.error_kind == "transient"
    assert "crashing on purpose" in r.error and "max_restarts = 1" in r.error


async def test_a_crash_mid_batch_is_invisible_to_the_calls(make_engine, fake_worker, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_CRASH_AFTER", "3")
    monkeypatch.setenv("FAKE_CRASH_TIMES", "1")
    monkeypatch.setenv("FAKE_CRASH_STATE", str(tmp_path / "crashes"))
    engine = await make_engine(clip={"model": "org/tiny-clip", "local": {"task": "embed_image"}})
    rs = await asyncio.gather(*[engine.call(req("clip", ImagePart(png((i, 1, 1))))) for i in range(8)])
    assert all(r.ok for r in rs)
    assert [b["n"] for b in batches(fake_worker)] == [8, 5]
    assert engine.stats.stage("s").failures == 0


async def test_a_python_without_the_worker_stops_the_run_with_the_install_hint(cache, tmp_path, monkeypatch):
    monkeypatch.delenv(local_provider.WORKER_ENV, raising=False)
    monkeypatch.setattr(local_provider, "WORKER_MODULE", "judgekit_local_not_installed")
    engine = Engine({"m": ModelSpec(provider="local", model="x", local={"task": "chat"})}, cache,
                    blobs=BlobStore(tmp_path / "blobs"))
    with pytest.raises(RunStopped) as e:
        await engine.start()
    msg = str(e.value)
    assert "'m'" in msg and f'{sys.executable} -m pip install "torch==2.13.0" -e ./local' in msg
    await engine.close()
    engine = Engine({"m": ModelSpec(provider="local", model="x", local={"task": "chat",
                                                                        "python": str(tmp_path / "nope")})},
                    cache, blobs=BlobStore(tmp_path / "blobs"))
    with pytest.raises(RunStopped, match="no such executable"):
        await engine.start()
    await engine.close()
    assert local_provider.running_runtimes() == []
