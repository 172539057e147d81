"""The simulator's OpenAI Batch API (and Azure's) through the real openai SDK: the shapes, the job's
life on an injected clock (validating -> in_progress -> finalizing -> completed; expired; cancelled;
failed), answers equal to the live endpoint's, per-request failures, validation, counters."""

from __future__ import annotations

import json
import math

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_clients import azure, oa

from judgekit.sim.batches import BatchJob
from judgekit.sim.openai_batch_api import EXPIRED_MESSAGE, read_input
from judgekit.sim.server import BATCHES_KEY

T0 = 1_800_000_000.0
URL = "/v1/chat/completions"


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t

    def at(self, dt: float) -> None:
        self.t = T0 + dt


def body(i: int, model: str = "gpt-4o", **kw) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": f"Describe picture number {i} in a line."}],
            "max_tokens": 60, **kw}


def jsonl(bodies: dict[str, dict], url: str = URL) -> bytes:
    return b"".join(json.dumps({"custom_id": cid, "method": "POST", "url": url, "body": b}).encode() + b"\n"
                    for cid, b in bodies.items())


async def make(sim_factory, **kw):
    server = await sim_factory(**kw)
    clock = Clock()
    server.app[BATCHES_KEY].clock = clock
    return server, clock, oa(server)


async def submit(client, data: bytes, endpoint: str = URL):
    f = await client.files.create(file=("in.jsonl", data, "application/jsonl"), purpose="batch")
    return await client.batches.create(input_file_id=f.id, endpoint=endpoint, completion_window="24h")


async def lines(client, file_id: str | None) -> dict[str, dict]:
    if file_id is None:
        return {}
    out = {}
    for raw in (await client.files.content(file_id)).content.splitlines():
        obj = json.loads(raw)
        assert obj["custom_id"] not in out
        out[obj["custom_id"]] = obj
    return out


async def test_a_batch_moves_through_its_states_with_time(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=10.0)
    bodies = {f"c{i}": body(i) for i in range(10)}
    b = await submit(client, jsonl(bodies))
    assert (b.status, b.object, b.endpoint, b.completion_window) == ("validating", "batch", URL, "24h")
    assert b.created_at == int(T0) and b.expires_at == int(T0) + 86400 and b.output_file_id is None
    seen = []
    for dt in (0.5, 1.0, 3.0, 5.0, 9.0, 9.5, 10.0, 50.0):
        clock.at(dt)
        r = await client.batches.retrieve(b.id)
        seen.append((r.status, r.request_counts.total, r.request_counts.completed))
    assert seen == [("validating", 0, 0), ("in_progress", 10, 0), ("in_progress", 10, math.ceil(10 * 2 / 8)),
                    ("in_progress", 10, 5), ("finalizing", 10, 10), ("finalizing", 10, 10),
                    ("completed", 10, 10), ("completed", 10, 10)]
    assert (r.in_progress_at, r.finalizing_at, r.completed_at) == (int(T0 + 1), int(T0 + 9), int(T0 + 10))
    assert r.error_file_id is None and r.errors is None
    out = await lines(client, r.output_file_id)
    assert set(out) == set(bodies)
    for line in out.values():
        assert line["id"].startswith("batch_req_") and line["error"] is None
        assert line["response"]["status_code"] == 200 and line["response"]["request_id"].startswith("req_")
        assert line["response"]["body"]["object"] == "chat.completion"
    assert r.usage.input_tokens == sum(x["response"]["body"]["usage"]["prompt_tokens"] for x in out.values())
    f = await client.files.retrieve(r.output_file_id)
    assert (f.purpose, f.object) == ("batch_output", "file")
    s = server.stats()
    assert (s["batches_created"], s["batch_requests_submitted"], s["batch_requests_answered"]) == (1, 10, 10)
    assert s["batches_created_by_api"] == {"openai": 1} and s["batches_by_status"] == {"completed": 1}
    assert s["served"] == 0 and s["requests"] == 0  # live counters untouched


async def test_batch_answers_are_the_live_answers(sim_factory):
    cfg = dict(batch_turnaround_s=0.0, garbage_rate=0.4, reply_faults={"refusal": 0.2, "empty": 0.1},
               cached_prompt_share={"gpt-4o": 0.5}, reasoning_tokens={"o3": 30})
    live_server, batch_server = await sim_factory(**cfg), await sim_factory(**cfg)
    live, client = oa(live_server), oa(batch_server)
    bodies = {f"c{i}": body(i) for i in range(12)}
    bodies["judge"] = body(0, messages=[{"role": "system", "content": "You are a judge."},
                                        {"role": "user", "content": "[Answer A] x [Answer B] y. Which is better?"}])
    bodies["o3"] = body(1, model="o3", max_completion_tokens=200)
    bodies["o3-bad"] = body(2, model="o3")  # max_tokens: the real API's 400 unsupported_parameter
    del bodies["o3"]["max_tokens"]
    expected = {}
    for cid, b in bodies.items():
        try:
            expected[cid] = (200, await live.post("/chat/completions", body=b, cast_to=object))
        except openai.APIStatusError as e:
            expected[cid] = (e.status_code, e.body)
    # one model per file: a batch per model
    got: dict[str, dict] = {}
    for model in ("gpt-4o", "o3"):
        b = await submit(client, jsonl({c: x for c, x in bodies.items() if x["model"] == model}))
        r = await client.batches.retrieve(b.id)
        assert r.status == "completed"
        got |= await lines(client, r.output_file_id) | await lines(client, r.error_file_id)
    assert set(got) == set(bodies)
    for cid, (status, want) in expected.items():
        resp = got[cid]["response"]
        assert resp["status_code"] == status, cid
        if status == 200:
            have = resp["body"]
            assert have["choices"] == want["choices"] and have["usage"] == want["usage"], cid
        else:
            assert resp["body"]["error"]["code"] == want["code"] == "unsupported_parameter"
    faults = [cid for cid, (s, w) in expected.items() if s == 200 and not w["choices"][0]["message"]["content"]]
    assert faults  # the no-answer replies are in the batch as they are live
    assert any(w["usage"]["prompt_tokens_details"]["cached_tokens"] for s, w in expected.values() if s == 200)


async def test_injected_request_failures_go_to_the_error_file(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=1.0, batch_request_fail_rate=1.0)
    b = await submit(client, jsonl({f"c{i}": body(i) for i in range(4)}))
    clock.at(1.0)
    r = await client.batches.retrieve(b.id)
    assert (r.status, r.request_counts.completed, r.request_counts.failed, r.output_file_id) == ("completed", 0, 4,
                                                                                                 None)
    err = await lines(client, r.error_file_id)
    assert {x["response"]["status_code"] for x in err.values()} == {500}
    assert {x["response"]["body"]["error"]["type"] for x in err.values()} == {"server_error"}
    s = server.stats()
    assert (s["batch_requests_failed"], s["batch_requests_injected"], s["batch_requests_answered"]) == (4, 4, 0)


async def test_half_the_rate_fails_and_a_new_attempt_can_succeed(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=0.0, batch_request_fail_rate=0.5)
    bodies = {f"c{i}": body(i) for i in range(40)}
    first = await client.batches.retrieve((await submit(client, jsonl(bodies))).id)
    failed = await lines(client, first.error_file_id)
    assert 5 < len(failed) < 35
    again = await client.batches.retrieve((await submit(client, jsonl({c: bodies[c] for c in failed}))).id)
    assert again.request_counts.completed > 0  # drawn per attempt: a retry can succeed


async def test_a_stalled_batch_expires_with_the_rest_as_batch_expired(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=10.0, batch_expire_rate=1.0)
    bodies = {f"c{i}": body(i) for i in range(5)}
    b = await submit(client, jsonl(bodies))
    assert b.expires_at == int(T0 + 10)
    clock.at(9.5)
    assert (await client.batches.retrieve(b.id)).status == "in_progress"  # stalled at 2 of 5: never finalizing
    clock.at(10.0)
    r = await client.batches.retrieve(b.id)
    assert (r.status, r.expired_at, r.request_counts.completed, r.request_counts.failed) == ("expired", int(T0 + 10),
                                                                                              2, 3)
    out, err = await lines(client, r.output_file_id), await lines(client, r.error_file_id)
    assert len(out) == 2 and len(err) == 3 and set(out) | set(err) == set(bodies)
    for x in err.values():
        assert x["response"] is None and x["error"] == {"code": "batch_expired", "message": EXPIRED_MESSAGE}
    s = server.stats()
    assert (s["batch_requests_expired"], s["batches_by_status"]) == (3, {"expired": 1})


async def test_the_completion_window_ends_a_slow_batch(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=10.0, batch_expire_after_s=5.0)
    b = await submit(client, jsonl({f"c{i}": body(i) for i in range(8)}))
    clock.at(7.0)  # read late: what was due by the window's end (t = 5) is answered, no more
    r = await client.batches.retrieve(b.id)
    assert (r.status, r.expired_at, r.request_counts.completed) == ("expired", int(T0 + 5), 4)
    assert len(await lines(client, r.error_file_id)) == 4


async def test_cancel(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=10.0)
    bodies = {f"c{i}": body(i) for i in range(8)}
    b = await submit(client, jsonl(bodies))
    clock.at(5.0)
    c = await client.batches.cancel(b.id)
    assert (c.status, c.cancelling_at, c.request_counts.completed) == ("cancelling", int(T0 + 5), 4)
    clock.at(5.5)
    assert (await client.batches.retrieve(b.id)).status == "cancelling"
    clock.at(6.0)
    r = await client.batches.retrieve(b.id)
    assert (r.status, r.cancelled_at, r.request_counts.completed, r.error_file_id) == ("cancelled", int(T0 + 6), 4,
                                                                                       None)
    assert len(await lines(client, r.output_file_id)) == 4  # the rest are in neither file
    with pytest.raises(openai.BadRequestError, match="Cannot cancel a batch with status 'cancelled'"):
        await client.batches.cancel(b.id)
    s = server.stats()
    assert (s["batch_requests_cancelled"], s["batch_requests_answered"], s["batches_by_status"]) == (
        4, 4, {"cancelled": 1})


async def test_an_invalid_input_file_fails_the_batch_line_by_line(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=10.0)
    good = json.dumps({"custom_id": "a", "method": "POST", "url": URL, "body": body(0)})
    data = "\n".join([
        good,
        "{not json",
        json.dumps({"custom_id": "a", "method": "POST", "url": URL, "body": body(1)}),
        json.dumps({"custom_id": "b", "method": "POST", "url": "/v1/embeddings", "body": body(2)}),
        json.dumps({"custom_id": "c", "method": "POST", "url": URL, "body": body(3, model="gpt-4.1")}),
        json.dumps({"custom_id": "d", "method": "GET", "url": URL, "body": body(4)}),
        json.dumps({"method": "POST", "url": URL, "body": body(5)}),
    ]).encode() + b"\n"
    b = await submit(client, data)
    clock.at(0.5)
    assert (await client.batches.retrieve(b.id)).status == "validating"
    clock.at(1.0)
    r = await client.batches.retrieve(b.id)
    assert (r.status, r.failed_at, r.request_counts.total, r.output_file_id, r.error_file_id) == (
        "failed", int(T0 + 1), 0, None, None)
    assert [(e.line, e.code) for e in r.errors.data] == [
        (2, "invalid_json_line"), (3, "duplicate_custom_id"), (4, "invalid_url"), (5, "model_mismatch"),
        (6, "invalid_method"), (7, "missing_required_parameter")]
    s = server.stats()
    assert (s["batch_requests_answered"], s["batches_by_status"]) == (0, {"failed": 1})


async def test_requests_refused_at_once(sim_factory):
    server, clock, client = await make(sim_factory)
    with pytest.raises(openai.BadRequestError, match="Must be .jsonl"):
        await client.files.create(file=("in.txt", jsonl({"a": body(0)}), "text/plain"), purpose="batch")
    f = await client.files.create(file=("in.jsonl", jsonl({"a": body(0)}), "application/jsonl"), purpose="batch")
    for kw, match in ((dict(endpoint="/v1/embeddings"), "endpoint"), (dict(completion_window="1h"), "completion_window"),
                      (dict(input_file_id="file-nope"), "No such File object: file-nope")):
        args = dict(input_file_id=f.id, endpoint=URL, completion_window="24h") | kw
        with pytest.raises((openai.BadRequestError, openai.NotFoundError), match=match):
            await client.batches.create(**args)
    other = await client.files.create(file=("x.jsonl", b"{}\n", "application/jsonl"), purpose="user_data")
    with pytest.raises(openai.BadRequestError, match="purpose 'batch'"):
        await client.batches.create(input_file_id=other.id, endpoint=URL, completion_window="24h")
    with pytest.raises(openai.NotFoundError, match="No batch found"):
        await client.batches.retrieve("batch_nope")
    with pytest.raises(openai.NotFoundError):
        await client.files.content("file-nope")
    assert (await client.files.delete(other.id)).deleted
    with pytest.raises(openai.NotFoundError):
        await client.files.retrieve(other.id)
    assert server.stats()["batches_created"] == 0


async def test_creation_failures_and_whole_batch_failures(sim_factory):
    server, clock, client = await make(sim_factory, batch_create_fail_rate=1.0)
    with pytest.raises(openai.InternalServerError):
        await submit(client, jsonl({"a": body(0)}))
    s = server.stats()
    assert (s["batch_create_errors"], s["batches_created"]) == ({"openai": 1}, 0)
    server, clock, client = await make(sim_factory, batch_turnaround_s=1.0, batch_fail_rate=1.0)
    b = await submit(client, jsonl({"a": body(0), "b": body(1)}))
    clock.at(1.0)
    r = await client.batches.retrieve(b.id)
    assert r.status == "failed" and [(e.code, e.line) for e in r.errors.data] == [("token_limit_exceeded", None)]


async def test_keys_are_checked_on_every_route(sim_factory):
    server, clock, client = await make(sim_factory, api_keys=["right-key"])
    wrong = oa(server, key="wrong-key")
    for call in (lambda: wrong.files.create(file=("a.jsonl", b"{}\n"), purpose="batch"),
                 lambda: wrong.files.retrieve("file-x"), lambda: wrong.files.content("file-x"),
                 lambda: wrong.batches.create(input_file_id="file-x", endpoint=URL, completion_window="24h"),
                 lambda: wrong.batches.retrieve("batch_x"), lambda: wrong.batches.cancel("batch_x"),
                 lambda: wrong.batches.list()):
        with pytest.raises(openai.AuthenticationError):
            await call()
    assert server.stats()["auth_failures"] == 7


async def test_list_pages_newest_first_and_reset_keeps_jobs(sim_factory):
    server, clock, client = await make(sim_factory, batch_turnaround_s=1.0)
    ids = []
    for i in range(3):
        clock.at(i)
        ids.append((await submit(client, jsonl({"a": body(i)}))).id)
    page = await client.batches.list(limit=2)
    assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
    rest = await client.batches.list(limit=2, after=ids[1])
    assert [b.id for b in rest.data] == [ids[0]] and not rest.has_more
    server.reset()
    assert server.stats()["batches_created"] == 0
    clock.at(10)
    assert (await client.batches.retrieve(ids[0])).status == "completed"


async def test_azure_batches_answer_through_the_deployment(sim_factory):
    server, clock, _ = await make(sim_factory, batch_turnaround_s=0.0, azure_deployments={"team-4o": "gpt-4o"})
    client = azure(server)
    live = await azure(server, deployment="team-4o").chat.completions.create(**body(0, model="team-4o"))
    f = await client.files.create(file=("in.jsonl", jsonl({"a": body(0, model="team-4o")}, "/chat/completions"),
                                        "application/jsonl"), purpose="batch")
    b = await client.batches.create(input_file_id=f.id, endpoint="/chat/completions", completion_window="24h")
    r = await client.batches.retrieve(b.id)
    got = (await lines(client, r.output_file_id))["a"]["response"]["body"]
    assert got["choices"][0]["message"]["content"] == live.choices[0].message.content
    assert got["model"] == "gpt-4o" and "prompt_filter_results" in got  # Azure's shape
    assert server.stats()["batches_created_by_api"] == {"azure": 1}


# ------------------------------------------------------------------------------ properties

@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 60), turnaround=st.floats(0, 100), stall=st.none() | st.integers(0, 60),
       ts=st.lists(st.floats(-10, 200), min_size=2, max_size=8))
def test_answers_due_grow_with_time_up_to_all(n, turnaround, stall, ts):
    job = BatchJob("b", "openai", [(str(i), {}) for i in range(n)], answer=None, created_at=0.0,  # type: ignore[arg-type]
                   turnaround_s=turnaround, expires_at=1e9, stall_at=stall)
    due = [job.due(t) for t in sorted(ts)]
    assert due == sorted(due) and all(0 <= k <= n for k in due)
    cap = n if stall is None else min(n, stall)
    assert job.due(turnaround) == cap and job.due(-1) == 0


ids = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(ids, st.integers(0, 5), min_size=1, max_size=8))
def test_input_files_read_back_as_written(requests):
    bodies = {cid: body(i) for cid, i in requests.items()}
    items, errors, model = read_input(jsonl(bodies), URL)
    assert errors == [] and model == "gpt-4o" and items == list(bodies.items())
