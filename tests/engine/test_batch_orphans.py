"""A run killed between a batch's create request and its record: the rerun adopts the batch the
provider created (0 requests submitted twice), for OpenAI, Azure, Anthropic and Gemini, through
their real SDKs against the simulator.

The process "dies" at each await of that stretch (the create call raises CancelledError there,
as a cancelled task does; nothing after that point runs):

- ``before``: the input file is uploaded (OpenAI, Azure, Gemini; Anthropic has no upload), the
  create request is not sent: no batch exists, the rerun submits the wave once;
- ``sent``: the server created the batch, its reply was never read (the simulator holds it);
- ``answered``: the reply was read, the record not written.

After ``sent`` and ``answered`` the rerun lists the provider's batches, records the orphan under its
run, collects its answers, and creates no batch.  ``ended`` variants let the orphan finish before
the rerun (Anthropic then proves it is the wave's by its results' ``custom_id``s)."""

from __future__ import annotations

import asyncio

import pytest

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.sim import SimConfig, SimServer
from judgekit.sim.anthropic_batch_api import AnthropicBatchSim
from judgekit.sim.gemini_batch_api import GeminiBatchSim
from judgekit.sim.openai_batch_api import OpenAIBatchSim
from judgekit.sim.server import BATCHES_KEY
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_ORPHAN_KEY"
N = 6
APIS = ("openai", "azure", "anthropic", "gemini")
#: the simulator's create handler of each API
HANDLERS = {"openai": (OpenAIBatchSim, "create_batch"), "azure": (OpenAIBatchSim, "create_batch"),
            "anthropic": (AnthropicBatchSim, "create_batch"), "gemini": (GeminiBatchSim, "create")}


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-orphan-test-0123456789")


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def spec(api: str, server: SimServer) -> ModelSpec:
    common = dict(api_key_env=KEY_ENV, batch=True, batch_linger_s=0.02, batch_poll_s=0.02)
    if api == "openai":
        return ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, **common)
    if api == "azure":
        return ModelSpec(provider="azure", model="team-4o", serves="gpt-4o", base_url=server.root_url,
                         api_version="2024-10-21", **common)
    if api == "anthropic":
        return ModelSpec(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url, **common)
    return ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.root_url, **common)


def create_call(api: str, prov) -> tuple[object, str]:
    """The object and attribute of the SDK call that creates a batch."""
    client = prov._client
    if api in ("openai", "azure"):
        return client.batches, "create"
    if api == "anthropic":
        return client, "post"  # submit_batch posts the batch's body itself
    return client.aio.batches, "create"


def reqs() -> list[ChatRequest]:
    return [ChatRequest("j", (Message.user(f"Question {i}: which answer is more vivid?"),), GenParams(max_tokens=60),
                        stage="judge", item_id=str(i)) for i in range(N)]


class Held:
    """The simulator's create handler, holding its first reply back when asked (``sent``)."""

    def __init__(self, monkeypatch, api: str, hold: bool) -> None:
        cls, name = HANDLERS[api]
        orig = getattr(cls, name)
        self.created, self.release, self.calls = asyncio.Event(), asyncio.Event(), 0

        async def handler(sim_self, request, *args):
            resp = await orig(sim_self, request, *args)
            self.calls += 1
            if hold and self.calls == 1:
                self.created.set()
                await self.release.wait()
            return resp

        monkeypatch.setattr(cls, name, handler)


def kill_at(monkeypatch, api: str, prov, point: str, held: Held) -> None:
    obj, name = create_call(api, prov)
    orig = getattr(obj, name)

    async def dying(*args, **kwargs):
        if point == "before":
            raise asyncio.CancelledError  # the upload is done; the create request is never sent
        if point == "sent":
            task = asyncio.ensure_future(orig(*args, **kwargs))
            await held.created.wait()  # the server created the batch; its reply is not read
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise asyncio.CancelledError
        await orig(*args, **kwargs)  # the reply is read; the record is never written
        raise asyncio.CancelledError

    monkeypatch.setattr(obj, name, dying)


@pytest.mark.parametrize("point, ended", [("before", False), ("sent", False), ("answered", False),
                                          ("answered", True)])
@pytest.mark.parametrize("api", APIS)
async def test_a_batch_created_but_not_recorded_is_adopted_not_paid_twice(api, point, ended, tmp_path, monkeypatch):
    held = Held(monkeypatch, api, hold=point == "sent")
    server = SimServer(SimConfig(batch_turnaround_s=3600.0, azure_deployments={"team-4o": "gpt-4o"}))
    await server.start()
    clock = server.app[BATCHES_KEY].clock = Clock()
    path = tmp_path / "c.duckdb"
    try:
        cache = await CacheStore.open(path, run_id="run1")
        e = Engine({"j": spec(api, server)}, cache)
        await e.start()
        kill_at(monkeypatch, api, e.providers["j"], point, held)
        first = await asyncio.gather(*(e.call(r) for r in reqs()))
        assert not any(r.ok for r in first)
        (intent,) = await cache.batches(live_only=True)
        assert intent.is_intent and intent.state == "creating" and intent.requests == N
        keys = sorted(r.key for r in await cache.batch_requests(intent.ident))
        assert len(keys) == N
        await e.close()
        await cache.close()
        created = server.stats()["batches_created"]
        assert created == (0 if point == "before" else 1)
        if ended:
            clock.t += 7200.0  # the orphan runs to its end while no process follows it

        cache = await CacheStore.open(path, run_id="run2")
        e = Engine({"j": spec(api, server)}, cache)
        await e.start()  # lists the provider's batches before anything is submitted
        recorded = await cache.batches()
        assert not [r for r in recorded if r.is_intent]
        if point == "before":
            assert recorded == [] and not e.batches.batches
        else:
            (rec,) = recorded
            assert (rec.run_id, rec.requests, rec.alias) == ("run1", N, "j")
            (b,) = e.batches.batches.values()  # followed (an ended orphan may be collected already)
            assert b.earlier and b.record.batch_id == rec.batch_id
            assert sorted(b.rows) == keys == sorted(r.key for r in await cache.batch_requests(rec.ident))
        calls = asyncio.ensure_future(asyncio.gather(*(e.call(r) for r in reqs())))
        if point == "before":
            for _ in range(4000):  # a bound, not a timing assertion
                if server.stats()["batches_created"]:
                    break
                await asyncio.sleep(0.005)
        clock.t += 7200.0
        second = await calls
        assert all(r.ok and r.text for r in second), [r.error for r in second if not r.ok]
        stats = server.stats()
        assert stats["batches_created"] == 1 and stats["batch_requests_submitted"] == N  # 0 submitted twice
        assert stats.get("served", 0) == 0  # nothing went live
        await e.close()
        await cache.close()
    finally:
        held.release.set()
        await server.stop()


@pytest.mark.parametrize("ended", [False, True])
async def test_cancel_never_cancels_an_anthropic_batch_on_a_guess(ended, tmp_path, monkeypatch):
    """`batches cancel` on an interrupted Anthropic creation: a running batch of the wave's size
    cannot be shown to be the wave's (Anthropic shows a batch's requests only once it has ended),
    so it is named, not cancelled, and the intent stays for the next run; an ended one whose
    results are the wave's is adopted (and, having ended, stays as it is)."""
    import json

    from judgekit.config import RunSpec
    from judgekit.engine.batch_cancel import cancel_batches

    held = Held(monkeypatch, "anthropic", hold=False)
    server = SimServer(SimConfig(batch_turnaround_s=3600.0))
    await server.start()
    clock = server.app[BATCHES_KEY].clock = Clock()
    path = tmp_path / "c.duckdb"
    model = spec("anthropic", server)
    run_spec = RunSpec(name="orphan", benchmark="creation_mmbench", data="x", models={"j": model},
                       roles={"candidates": ["j"]})
    try:
        cache = await CacheStore.open(path, run_id="run1")
        cache.run_started("run1", "orphan", json.dumps({"spec": run_spec.model_dump(mode="json")}))
        e = Engine({"j": model}, cache)
        await e.start()
        kill_at(monkeypatch, "anthropic", e.providers["j"], "answered", held)
        await asyncio.gather(*(e.call(r) for r in reqs()))
        await e.close()
        await cache.close()
        if ended:
            clock.t += 7200.0
        (res,) = await cancel_batches(path, spec_name="orphan")
        cache = await CacheStore.open(path, run_id="check")
        recorded = await cache.batches()
        await cache.close()
        if ended:
            (rec,) = recorded
            assert not rec.is_intent and res.batch_id == rec.batch_id and res.state == "ended" and not res.error
        else:
            assert "not cancelled on a guess" in res.error and res.state == ""
            (intent,) = recorded
            assert intent.is_intent  # left for the next run, which adopts the batch
        assert server.stats()["batches_created"] == 1
    finally:
        held.release.set()
        await server.stop()
