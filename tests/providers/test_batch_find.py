"""``find_batches``: the batch a killed run created but never recorded, found in the provider's list
of batches.  Anthropic (no metadata: matched by request count, creation time and, once ended, its
results' ``custom_id``s) through the anthropic SDK against an independent Message Batches fake
(aiohttp, written here), with a property over random lists of other batches; Gemini (the wave in
the display name) through google-genai against the simulator, past a page of other batches."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import time

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.config import ModelSpec
from judgekit.providers import create_provider, gemini_batch
from judgekit.providers.batch import LOOK_BACK_S, BatchItem, WaveIntent
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_FIND_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-find-0123456789")


def ids(tag: str, n: int) -> tuple[str, ...]:
    return tuple(hashlib.sha256(f"{tag}-{i}".encode()).hexdigest() for i in range(n))


def rfc3339(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat().replace("+00:00", "Z")


class MessageBatches:
    """``GET /v1/messages/batches`` (newest first; ``limit``, ``after_id``, ``has_more``,
    ``last_id``), one batch, and each ended batch's results.  ``add`` makes a batch of ``custom_ids``."""

    def __init__(self) -> None:
        self.batches: list[dict] = []
        self.results: dict[str, bytes] = {}
        self.pages = 0
        self.url = ""
        self.app = web.Application()
        self.app.router.add_get("/v1/messages/batches", self.list)
        self.app.router.add_get("/v1/messages/batches/{id}", self.retrieve)
        self.app.router.add_get("/v1/messages/batches/{id}/results", self.result)

    def add(self, custom_ids, created: float, *, ended: bool) -> str:
        bid = f"msgbatch_{len(self.batches):04d}"
        n = len(custom_ids)
        counts = {"processing": 0 if ended else n, "succeeded": n if ended else 0, "errored": 0, "canceled": 0,
                  "expired": 0}
        self.batches.append({"id": bid, "type": "message_batch", "processing_status": "ended" if ended else
                             "in_progress", "request_counts": counts, "created_at": rfc3339(created),
                             "expires_at": rfc3339(created + 86400), "ended_at": rfc3339(created + 5) if ended
                             else None, "archived_at": None, "cancel_initiated_at": None,
                             "results_url": f"{self.url}/v1/messages/batches/{bid}/results" if ended else None})
        self.results[bid] = b"".join(json.dumps({"custom_id": c, "result": {"type": "succeeded", "message": {
            "id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "content": [],
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}}}).encode() + b"\n"
            for c in custom_ids)
        return bid

    async def list(self, request: web.Request) -> web.Response:
        self.pages += 1
        limit = int(request.query.get("limit", "20"))
        newest = sorted(self.batches, key=lambda b: b["created_at"], reverse=True)
        after = request.query.get("after_id")
        if after:
            newest = newest[[b["id"] for b in newest].index(after) + 1:]
        page = newest[:limit]
        return web.json_response({"data": page, "has_more": len(newest) > limit,
                                  "first_id": page[0]["id"] if page else None,
                                  "last_id": page[-1]["id"] if page else None})

    async def retrieve(self, request: web.Request) -> web.Response:
        (b,) = [b for b in self.batches if b["id"] == request.match_info["id"]]
        return web.json_response(b)

    async def result(self, request: web.Request) -> web.Response:
        return web.Response(body=self.results[request.match_info["id"]], content_type="application/x-jsonl")


@pytest.fixture
async def anthropic_fake():
    fake = MessageBatches()
    runner = web.AppRunner(fake.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    fake.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    prov = create_provider("judge", ModelSpec(provider="anthropic", model="claude-sonnet-4-6", base_url=fake.url,
                                              api_key_env=KEY_ENV))
    await prov.start()
    yield fake, prov
    await prov.close()
    await runner.cleanup()


async def test_anthropic_an_ended_orphan_is_told_from_batches_of_its_size_by_its_results(anthropic_fake):
    fake, prov = anthropic_fake
    now = time.time()
    mine = WaveIntent("a" * 32, ids("mine", 4), now)
    fake.add(ids("old", 4), now - LOOK_BACK_S - 60, ended=True)  # same size, before the intent
    orphan = fake.add(mine.custom_ids, now + 1, ended=True)
    fake.add(ids("theirs", 4), now + 2, ended=True)  # same size, another client's
    fake.add(ids("small", 3), now + 3, ended=False)
    for i in range(120):  # other clients' batches since: the orphan is on the list's second page
        fake.add(ids(f"x{i}", 2), now + 10 + i, ended=True)
    found = await prov.find_batches([mine])
    assert found[mine.wave].batch_id == orphan and fake.pages == 2
    assert await prov.find_batches([mine], known=frozenset({orphan})) == {}
    assert await prov.find_batches([WaveIntent("b" * 32, ids("nobody", 4), now)]) == {}  # none of them is its


async def test_anthropic_running_orphans_go_to_their_intents_one_each(anthropic_fake):
    fake, prov = anthropic_fake
    now = time.time()
    first, second = WaveIntent("c" * 32, ids("one", 5), now), WaveIntent("d" * 32, ids("two", 5), now + 1)
    fake.add(ids("old", 5), now - LOOK_BACK_S - 60, ended=False)  # running since before either intent
    a = fake.add(first.custom_ids, now + 1, ended=False)
    b = fake.add(second.custom_ids, now + 2, ended=False)
    found = await prov.find_batches([second, first])
    assert {found[first.wave].batch_id, found[second.wave].batch_id} == {a, b}
    # a batch this provider created itself is never an orphan
    prov._submitted[a] = first.custom_ids
    assert (await prov.find_batches([first]))[first.wave].batch_id == b


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(others=st.lists(st.tuples(st.integers(1, 6), st.booleans(), st.integers(-2000, 2000)), max_size=8),
       made=st.booleans(), n=st.integers(1, 6), seed=st.integers(0, 2**16))
async def test_anthropic_an_ended_batch_is_an_intent_s_only_if_its_results_are_the_intent_s(
        anthropic_fake, others, made, n, seed):
    """Whatever other ended batches the list holds (any size, before or after the intent, some with
    some of the intent's ids), an intent is given its own batch when it was made, and none else."""
    fake, prov = anthropic_fake
    fake.batches.clear()
    rnd = random.Random(seed)
    now = time.time()
    intent = WaveIntent(f"{seed:032x}", ids(f"me{seed}", n), now)
    for k, (size, overlap, dt_s) in enumerate(others):
        cids = list(ids(f"o{seed}-{k}", size))
        if overlap and size > 1:
            cids[0] = rnd.choice(intent.custom_ids)  # shares a request with the intent, is not its batch
        fake.add(cids, now + dt_s, ended=True)
    orphan = fake.add(intent.custom_ids, now + rnd.uniform(0, 100), ended=True) if made else None
    found = await prov.find_batches([intent])
    assert (found[intent.wave].batch_id if found else None) == orphan


# ------------------------------------------------------------------------------------- Gemini

async def test_gemini_finds_its_batch_by_display_name_past_other_batches(monkeypatch):
    server = SimServer(SimConfig(batch_turnaround_s=3600.0))
    await server.start()
    prov = create_provider("judge", ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.root_url,
                                              api_key_env=KEY_ENV))
    await prov.start()
    try:
        def item(i: int) -> BatchItem:
            return BatchItem(ids("g", 60)[i], ChatRequest("judge", (Message.user(f"Question {i}?"),),
                                                          GenParams(max_tokens=20)))

        now = time.time()
        mine = WaveIntent("e" * 32, (item(0).custom_id, item(1).custom_id), now)
        made = await prov.submit_batch([item(0), item(1)], wave=mine.wave)
        for i in range(2, 57):  # other batches, some of them judgekit's with other waves
            await prov.submit_batch([item(i)], wave=f"{i:032x}" if i % 2 else None)
        monkeypatch.setattr(gemini_batch, "_PAGE", 10)  # the batch is on the list's sixth page
        found = await prov.find_batches([mine])
        assert found[mine.wave].batch_id == made.batch_id
        assert await prov.find_batches([mine], known=frozenset({made.batch_id})) == {}
        assert await prov.find_batches([WaveIntent("f" * 32, mine.custom_ids, now)]) == {}
    finally:
        await prov.close()
        await server.stop()
