"""The simulator's Gemini batch mode and Files API through the real google-genai SDK: the job's
life on an injected clock (PENDING -> RUNNING -> SUCCEEDED; EXPIRED; CANCELLED; FAILED), answers
equal to the live generateContent's, file and inline forms, per-request failures, refusals, the
/v1 paths it shares with OpenAI's Batch API, counters."""

from __future__ import annotations

import asyncio
import io
import json

import aiohttp
import pytest
from google import genai
from google.genai import errors, types
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_clients import oa

from judgekit.sim import SimConfig, gemini_batch_api
from judgekit.sim.batches import BatchStore
from judgekit.sim.core import _Core
from judgekit.sim.gemini_batch_api import STATES, GeminiBatchSim, read_input
from judgekit.sim.server import BATCHES_KEY

T0 = 1_800_000_000.0
MODEL = "gemini-2.0-flash"


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t

    def at(self, dt: float) -> None:
        self.t = T0 + dt


@pytest.fixture
async def gclients():
    made: list[genai.Client] = []

    def make(server, key: str = "k", version: str | None = None) -> genai.Client:
        opts = types.HttpOptions(base_url=server.root_url, api_version=version,
                                 retry_options=types.HttpRetryOptions(attempts=1))
        c = genai.Client(api_key=key, http_options=opts)
        made.append(c)
        return c

    yield make
    for c in made:
        await c.aio.aclose()


def request(i: int, **config) -> dict:
    return {"contents": [{"role": "user", "parts": [{"text": f"Describe picture number {i} in a line."}]}],
            "systemInstruction": {"parts": [{"text": "You describe pictures."}]},
            "generationConfig": {"maxOutputTokens": 60, **config}}


def jsonl(reqs: dict[str, dict]) -> bytes:
    return b"".join(json.dumps({"key": k, "request": r}).encode() + b"\n" for k, r in reqs.items())


async def submit(client: genai.Client, data: bytes, model: str = MODEL) -> types.BatchJob:
    f = await client.aio.files.upload(file=io.BytesIO(data), config={"mime_type": "jsonl", "display_name": "in"})
    return await client.aio.batches.create(model=model, src=f.name, config={"display_name": "test batch"})


async def results(client: genai.Client, job: types.BatchJob) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for raw in (await client.aio.files.download(file=job.dest.file_name)).splitlines():
        line = json.loads(raw)
        assert line["key"] not in out
        out[line["key"]] = line
    return out


async def raw_get(server, path: str, key: str = "k") -> dict:
    async with aiohttp.ClientSession() as s, s.get(server.root_url + path, headers={"x-goog-api-key": key}) as r:
        return await r.json()


async def make(sim_factory, gclients, **kw):
    server = await sim_factory(**kw)
    clock = Clock()
    server.app[BATCHES_KEY].clock = clock
    return server, clock, gclients(server)


async def test_a_file_batch_moves_through_its_states_and_answers_as_live(sim_factory, gclients):
    cfg = dict(batch_turnaround_s=10.0, cached_prompt_share={MODEL: 0.5}, garbage_rate=0.3,
               reply_faults={"finish_safety": 0.2})
    server, clock, client = await make(sim_factory, gclients, **cfg)
    live = gclients(await sim_factory(**cfg))
    reqs = {f"r{i}": request(i) for i in range(8)}
    job = await submit(client, jsonl(reqs))
    assert job.state == types.JobState.JOB_STATE_PENDING and job.name.startswith("batches/")
    assert (job.display_name, job.model) == ("test batch", f"models/{MODEL}")
    seen = []
    for dt in (0.5, 1.0, 5.0, 9.5, 10.0, 50.0):
        clock.at(dt)
        op = await raw_get(server, f"/v1beta/{job.name}")
        seen.append((op["metadata"]["state"], op["metadata"]["batchStats"], op.get("done", False)))
    assert seen[:3] == [("BATCH_STATE_PENDING", {"requestCount": "8", "successfulRequestCount": "0",
                                                  "failedRequestCount": "0", "pendingRequestCount": "8"}, False),
                        ("BATCH_STATE_RUNNING", {"requestCount": "8", "successfulRequestCount": "0",
                                                 "failedRequestCount": "0", "pendingRequestCount": "8"}, False),
                        ("BATCH_STATE_RUNNING", {"requestCount": "8", "successfulRequestCount": "4",
                                                 "failedRequestCount": "0", "pendingRequestCount": "4"}, False)]
    assert seen[3][0] == "BATCH_STATE_RUNNING" and seen[4] == seen[5]
    assert seen[4] == ("BATCH_STATE_SUCCEEDED", {"requestCount": "8", "successfulRequestCount": "8",
                                                 "failedRequestCount": "0"}, True)
    assert op["metadata"]["endTime"].startswith("2027-01-15T08:00:10") and op["response"]["responsesFile"]
    done = await client.aio.batches.get(name=job.name)  # the SDK's own reading
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED and done.dest.file_name.startswith("files/")
    got = await results(client, done)
    assert set(got) == set(reqs)
    for key, r in reqs.items():
        want = await live.aio.models.generate_content(
            model=MODEL, contents=r["contents"], config=types.GenerateContentConfig(
                system_instruction="You describe pictures.", max_output_tokens=60))
        have = types.GenerateContentResponse.model_validate(got[key]["response"])
        assert have.candidates == want.candidates and have.usage_metadata == want.usage_metadata, key
    assert any(json.dumps(x).count("SAFETY") for x in got.values())  # the filtered replies too
    assert all(x["response"]["usageMetadata"]["cachedContentTokenCount"] > 0 for x in got.values())
    s = server.stats()
    assert (s["batches_created_by_api"], s["batch_requests_submitted_by_api"]) == ({"gemini": 1}, {"gemini": 8})
    assert (s["batch_requests_answered"], s["batches_by_status"], s["batch_files_uploaded"]) == (
        8, {"completed": 1}, 1)
    assert s["served"] == 0 and s["requests"] == 0  # live counters untouched


async def test_inline_requests_come_back_in_order_with_their_metadata(sim_factory, gclients):
    _, clock, client = await make(sim_factory, gclients, batch_turnaround_s=1.0)
    live = gclients(await sim_factory())
    src = [types.InlinedRequest(contents=f"Describe picture number {i}.", metadata={"key": f"m{i}"},
                                config=types.GenerateContentConfig(max_output_tokens=50)) for i in range(5)]
    job = await client.aio.batches.create(model=MODEL, src=src)
    clock.at(1.0)
    done = await client.aio.batches.get(name=job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED and done.dest.file_name is None
    got = done.dest.inlined_responses
    assert [r.metadata for r in got] == [{"key": f"m{i}"} for i in range(5)]
    for r, i in zip(got, range(5), strict=True):
        want = await live.aio.models.generate_content(model=MODEL, contents=f"Describe picture number {i}.",
                                                      config=types.GenerateContentConfig(max_output_tokens=50))
        assert r.response.text == want.text and r.response.usage_metadata == want.usage_metadata


async def test_request_failures_expiry_and_whole_failures(sim_factory, gclients):
    server, clock, client = await make(sim_factory, gclients, batch_turnaround_s=1.0, batch_request_fail_rate=1.0)
    job = await submit(client, jsonl({f"r{i}": request(i) for i in range(4)}))
    clock.at(1.0)
    got = await results(client, await client.aio.batches.get(name=job.name))
    assert {k: x["error"] for k, x in got.items()} == {f"r{i}": {"code": 13, "status": "INTERNAL", "message": (
        "The server had an error while processing your request (simulated).")} for i in range(4)}
    assert server.stats()["batch_requests_injected"] == 4

    server, clock, client = await make(sim_factory, gclients, batch_turnaround_s=1.0, batch_expire_rate=1.0)
    job = await submit(client, jsonl({f"r{i}": request(i) for i in range(6)}))
    clock.at(1.0)
    expired = await client.aio.batches.get(name=job.name)
    assert expired.state == types.JobState.JOB_STATE_EXPIRED
    assert len(await results(client, expired)) == 3  # what it answered before it stalled
    assert server.stats()["batch_requests_expired"] == 3

    server, clock, client = await make(sim_factory, gclients, batch_turnaround_s=1.0, batch_fail_rate=1.0)
    job = await submit(client, jsonl({"r0": request(0)}))
    clock.at(0.2)
    failed = await client.aio.batches.get(name=job.name)
    assert failed.state == types.JobState.JOB_STATE_FAILED and failed.dest is None
    op = await raw_get(server, f"/v1beta/{job.name}")
    assert op["done"] is True and op["error"]["status"] == "RESOURCE_EXHAUSTED" and "response" not in op

    server, clock, client = await make(sim_factory, gclients, batch_create_fail_rate=1.0)
    with pytest.raises(errors.ServerError) as e:
        await submit(client, jsonl({"r0": request(0)}))
    assert e.value.code == 503 and server.stats()["batch_create_errors"] == {"gemini": 1}


async def test_cancel(sim_factory, gclients):
    server, clock, client = await make(sim_factory, gclients, batch_turnaround_s=10.0)
    job = await submit(client, jsonl({f"r{i}": request(i) for i in range(8)}))
    clock.at(5.0)
    await client.aio.batches.cancel(name=job.name)
    assert (await client.aio.batches.get(name=job.name)).state == types.JobState.JOB_STATE_RUNNING
    clock.at(6.0)
    cancelled = await client.aio.batches.get(name=job.name)
    assert cancelled.state == types.JobState.JOB_STATE_CANCELLED
    assert len(await results(client, cancelled)) == 4
    with pytest.raises(errors.ClientError) as e:
        await client.aio.batches.cancel(name=job.name)
    assert (e.value.code, e.value.status) == (400, "FAILED_PRECONDITION")
    assert server.stats()["batch_requests_cancelled"] == 4


async def test_refusals(sim_factory, gclients, monkeypatch):
    server, clock, _ = await make(sim_factory, gclients, api_keys=["good-key"], models=[MODEL])
    bad = gclients(server, key="bad-key")
    with pytest.raises(errors.ClientError) as e:
        await submit(bad, jsonl({"r0": request(0)}))
    assert e.value.code == 400 and "API_KEY_INVALID" in json.dumps(e.value.details)
    good = gclients(server, key="good-key")
    with pytest.raises(errors.ClientError) as e:
        await submit(good, jsonl({"r0": request(0)}), model="gemini-9-ultra")
    assert e.value.code == 404
    with pytest.raises(errors.ClientError) as e:
        await good.aio.batches.create(model=MODEL, src="files/nosuchfile")
    assert e.value.code == 404
    with pytest.raises(errors.ClientError) as e:
        await good.aio.batches.get(name="batches/nosuchbatch")
    assert e.value.code == 404
    job = await submit(good, jsonl({"r0": request(0)}) + b"not json\n" + b'{"key": "r2"}\n')
    clock.at(1.0)
    assert (await good.aio.batches.get(name=job.name)).state == types.JobState.JOB_STATE_FAILED
    op = await raw_get(server, f"/v1beta/{job.name}", key="good-key")
    assert op["error"]["status"] == "INVALID_ARGUMENT" and "line 2" in op["error"]["message"]
    assert "line 3" in op["error"]["message"]
    # files: listed, read, never downloaded when uploaded, deleted
    names = [f.name async for f in await good.aio.files.list()]
    assert len(names) == 2 and (await good.aio.files.get(name=names[0])).source == types.FileSource.UPLOADED
    with pytest.raises(errors.ClientError) as e:
        await good.aio.files.download(file=names[0])
    assert e.value.code == 400
    await good.aio.files.delete(name=names[0])
    with pytest.raises(errors.ClientError):
        await good.aio.files.get(name=names[0])
    monkeypatch.setattr(gemini_batch_api, "MAX_INLINE_BYTES", 2000)  # the 20 MB of an inline batch, scaled down
    async with aiohttp.ClientSession() as s:
        body = {"batch": {"inputConfig": {"requests": {"requests": [{"request": request(0)}]}}, "pad": "x" * 2000}}
        async with s.post(f"{server.root_url}/v1beta/models/{MODEL}:batchGenerateContent", json=body,
                          headers={"x-goog-api-key": "good-key"}) as r:
            assert r.status == 400 and "payload size exceeds" in (await r.json())["error"]["message"]


async def test_list_pages_and_delete(sim_factory, gclients):
    _, clock, client = await make(sim_factory, gclients, batch_turnaround_s=1.0)
    names = []
    for i in range(5):
        clock.at(i)
        names.append((await submit(client, jsonl({"r": request(i)}))).name)
    pager = await client.aio.batches.list(config={"page_size": 2})
    listed = [j.name async for j in pager]
    assert listed == names[::-1]  # newest first, over three pages
    await client.aio.batches.delete(name=names[0])
    with pytest.raises(errors.ClientError):
        await client.aio.batches.get(name=names[0])


async def test_the_v1_paths_it_shares_with_openai(sim_factory, gclients):
    server = await sim_factory(batch_turnaround_s=0.0)
    g = gclients(server, version="v1")
    o = oa(server)
    gjob = await submit(g, jsonl({"r0": request(0)}))
    f = await o.files.create(file=("in.jsonl", json.dumps({
        "custom_id": "c0", "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}).encode() + b"\n",
        "application/jsonl"), purpose="batch")
    ob = await o.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert [b.id for b in (await o.batches.list()).data] == [ob.id]
    assert (await o.batches.retrieve(ob.id)).status == "completed"
    assert (await o.files.retrieve(f.id)).purpose == "batch"
    assert [j.name async for j in await g.aio.batches.list()] == [gjob.name]
    done = await g.aio.batches.get(name=gjob.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED
    assert set(await results(g, done)) == {"r0"}
    await o.files.delete(f.id)
    s = server.stats()
    assert s["batches_created_by_api"] == {"gemini": 1, "openai": 1}


# ------------------------------------------------------------------------------------- properties

def test_read_input():
    items, errs = read_input(b'{"key": "a", "request": {"contents": []}}\n\n{"request": {}}\n[1]\n{"key": 3}\n')
    assert items == [("a", {"contents": []}), ("", {})]
    assert errs == ["line 3: not a JSON object", "line 4: 'key' must be a string"]
    assert read_input(b"\n")[1] == ["the input file holds no requests"]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), turnaround=st.floats(0.5, 100), times=st.lists(st.floats(0, 1.5), min_size=1,
                                                                            max_size=8),
       expire=st.booleans(), cancel_at=st.none() | st.floats(0, 1.2))
def test_what_a_client_sees_over_time_never_goes_back(n, turnaround, times, expire, cancel_at):
    """Read at increasing times, a job's state only moves forward, its answers only grow, and a
    job that ends says so once and for all."""
    order = ["BATCH_STATE_PENDING", "BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED"]

    async def run() -> None:
        core = _Core(SimConfig(batch_turnaround_s=turnaround, batch_expire_rate=float(expire)))
        clock = Clock()
        store = BatchStore(core, clock=clock)
        sim = GeminiBatchSim(core, store)
        job = store.create("gemini", [(f"r{i}", request(i)) for i in range(n)], lambda p: sim._answer(MODEL, p),
                           meta={"model": MODEL, "input_file": "files/x"}, prefix="batches/")
        last_rank, last_ok, ended = 0, 0, None
        cancelled = False
        for t in sorted(times):
            clock.at(t * turnaround)
            if cancel_at is not None and not cancelled and t >= cancel_at:
                await store.cancel(job)
                cancelled = True
            await store.refresh(job)
            meta = sim._operation(job)["metadata"]
            state, ok = meta["state"], int(meta["batchStats"]["successfulRequestCount"])
            assert int(meta["batchStats"]["requestCount"]) == n and ok >= last_ok
            if ended is not None:
                assert (state, ok) == ended
                continue
            if state in order:
                assert order.index(state) >= last_rank
                last_rank = order.index(state)
            if job.status in ("completed", "failed", "expired", "cancelled"):
                assert state == STATES[job.status]
                ended = (state, ok)
                if state == "BATCH_STATE_SUCCEEDED":
                    assert ok == n and meta["output"]["responsesFile"].startswith("files/")
            last_ok = ok

    asyncio.run(run())
