"""The simulator's Message Batches API through the real anthropic SDK: the shapes, a batch's life on
an injected clock (in_progress -> ended; canceling; expiry), answers equal to /v1/messages' with
the prompt cache, per-request errors, creation checks, listing and deletion, counters; and
hypothesis over the creation check and the results' order."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.sim.anthropic_batch_api import read_requests
from judgekit.sim.protocol import _BadRequest
from judgekit.sim.server import BATCHES_KEY

T0 = 1_800_000_000.0
MODEL = "claude-sonnet-4-6"
#: a system prompt over the 1,024-token minimum of a cached prefix (4 characters a token)
LONG_SYSTEM = "You are a careful judge of creative writing. " * 110


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t

    def at(self, dt: float) -> None:
        self.t = T0 + dt


@pytest.fixture
async def clients():
    made: list[anthropic.AsyncAnthropic] = []

    def make(server, key: str = "k") -> anthropic.AsyncAnthropic:
        c = anthropic.AsyncAnthropic(base_url=server.root_url, api_key=key, max_retries=0)
        made.append(c)
        return c

    yield make
    for c in made:
        await c.close()


def params(i: int, model: str = MODEL, *, cached: bool = False, **kw) -> dict:
    body: dict = {"model": model, "max_tokens": 80,
                  "messages": [{"role": "user", "content": f"Which of answer {i}a and {i}b is better?"}], **kw}
    if cached:
        body["system"] = [{"type": "text", "text": LONG_SYSTEM, "cache_control": {"type": "ephemeral"}}]
    return body


def reqs(bodies: dict[str, dict]) -> list[dict]:
    return [{"custom_id": cid, "params": p} for cid, p in bodies.items()]


async def make(sim_factory, clients, **kw):
    server = await sim_factory(**kw)
    clock = Clock()
    server.app[BATCHES_KEY].clock = clock
    return server, clock, clients(server)


async def results(client, batch_id: str) -> dict[str, dict]:
    """The results of a batch as the JSON each line holds, by custom_id (each reported once)."""
    decoder = await client.messages.batches.results(batch_id)
    out: dict[str, dict] = {}
    for raw in (await decoder.http_response.aread()).splitlines():
        line = json.loads(raw)
        assert line["custom_id"] not in out
        out[line["custom_id"]] = line["result"]
    return out


def when(dt: float) -> datetime:
    return datetime.fromtimestamp(T0 + dt, tz=UTC)


async def test_a_batch_moves_through_its_states_with_time(sim_factory, clients):
    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=10.0)
    b = await client.messages.batches.create(requests=reqs({f"c{i}": params(i) for i in range(6)}))
    assert b.id.startswith("msgbatch_") and (b.type, b.processing_status) == ("message_batch", "in_progress")
    assert (b.created_at, b.expires_at, b.ended_at, b.results_url) == (when(0), when(86400), None, None)
    seen = []
    for dt in (0.5, 3.0, 9.0, 9.99, 10.0, 50.0):
        clock.at(dt)
        r = await client.messages.batches.retrieve(b.id)
        c = r.request_counts
        seen.append((r.processing_status, c.processing, c.succeeded, r.results_url is not None))
    # the counts other than processing stay zero until the batch ends (the API reference)
    assert seen == [("in_progress", 6, 0, False)] * 4 + [("ended", 0, 6, True)] * 2
    assert r.ended_at == when(10.0) and r.results_url.endswith(f"/v1/messages/batches/{b.id}/results")
    typed = [line async for line in await client.messages.batches.results(b.id)]  # the SDK's own decoding
    assert {(t.result.type, t.result.message.role) for t in typed} == {("succeeded", "assistant")}
    order = [t.custom_id for t in typed]
    assert order != [f"c{i}" for i in range(6)] and sorted(order) == [f"c{i}" for i in range(6)]  # an order of its own
    stats = server.stats()
    assert (stats["batches_created_by_api"], stats["batch_requests_submitted_by_api"]) == ({"anthropic": 1},
                                                                                           {"anthropic": 6})
    assert (stats["batch_requests_answered"], stats["served"], stats["batches_by_status"]) == (6, 0,
                                                                                              {"completed": 1})


async def test_answers_equal_the_messages_endpoint_with_the_prompt_cache(sim_factory, clients):
    cfg = dict(batch_turnaround_s=0.0, garbage_rate=0.3, reply_faults={"refusal": 0.2, "empty": 0.1}, seed=5)
    live_server = await sim_factory(**cfg)
    live = clients(live_server)
    bodies = {f"c{i}": params(i, cached=True) for i in range(8)}
    bodies["hot"] = params(1, temperature=0.0, stop_sequences=["\n"])
    want = {cid: await live.post("/v1/messages", body=p, cast_to=object) for cid, p in bodies.items()}
    server, _, client = await make(sim_factory, clients, **cfg)
    b = await client.messages.batches.create(requests=reqs(bodies))
    got = await results(client, b.id)
    for cid, w in want.items():
        m = got[cid]["message"]
        assert (m["content"], m["stop_reason"], m["usage"]) == (w["content"], w["stop_reason"], w["usage"])
    # the first request wrote the long system prompt to the cache; every later one read it
    reads = [got[f"c{i}"]["message"]["usage"]["cache_read_input_tokens"] for i in range(8)]
    assert got["c0"]["message"]["usage"]["cache_creation_input_tokens"] > 1000 and reads[0] == 0
    assert all(r > 1000 for r in reads[1:])
    assert {w["stop_reason"] for w in want.values()} >= {"refusal", "end_turn"}
    assert server.stats()["anthropic_cache_hits"] == 7


async def test_per_request_errors_are_errored_results(sim_factory, clients):
    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=1.0, models=[MODEL])
    bodies = {"ok": params(1), "no-max": {k: v for k, v in params(2).items() if k != "max_tokens"},
              "model": params(3, "claude-nope"), "both": params(4, temperature=0.5, top_p=0.9)}
    b = await client.messages.batches.create(requests=reqs(bodies))
    clock.at(1.0)
    r = await client.messages.batches.retrieve(b.id)
    assert (r.request_counts.succeeded, r.request_counts.errored) == (1, 3)
    got = await results(client, b.id)
    assert got["ok"]["type"] == "succeeded"
    kinds = {cid: (g["type"], g["error"]["type"], g["error"]["error"]["type"]) for cid, g in got.items()
             if cid != "ok"}
    assert kinds == {"no-max": ("errored", "error", "invalid_request_error"),
                     "model": ("errored", "error", "not_found_error"),
                     "both": ("errored", "error", "invalid_request_error")}
    assert "max_tokens" in got["no-max"]["error"]["error"]["message"]
    assert server.stats()["batch_requests_failed"] == 3


async def test_injected_failures_expiry_and_whole_batch_failures(sim_factory, clients):
    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=1.0, batch_request_fail_rate=1.0)
    b = await client.messages.batches.create(requests=reqs({f"c{i}": params(i) for i in range(3)}))
    clock.at(1.0)
    got = await results(client, b.id)
    assert {(g["type"], g["error"]["error"]["type"]) for g in got.values()} == {("errored", "api_error")}
    assert server.stats()["batch_requests_injected"] == 3

    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=1.0, batch_expire_rate=1.0)
    b = await client.messages.batches.create(requests=reqs({f"c{i}": params(i) for i in range(6)}))
    clock.at(0.99)
    assert (await client.messages.batches.retrieve(b.id)).processing_status == "in_progress"
    clock.at(1.0)
    r = await client.messages.batches.retrieve(b.id)
    assert (r.processing_status, r.request_counts.succeeded, r.request_counts.expired) == ("ended", 3, 3)
    assert sorted(g["type"] for g in (await results(client, b.id)).values()) == ["expired"] * 3 + ["succeeded"] * 3
    assert server.stats()["batch_requests_expired"] == 3

    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=10.0, batch_expire_after_s=5.0)
    b = await client.messages.batches.create(requests=reqs({f"c{i}": params(i) for i in range(8)}))
    clock.at(5.0)
    r = await client.messages.batches.retrieve(b.id)
    assert (r.processing_status, r.request_counts.expired, r.ended_at) == ("ended", 4, when(5.0))

    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=1.0, batch_fail_rate=1.0)
    b = await client.messages.batches.create(requests=reqs({f"c{i}": params(i) for i in range(2)}))
    clock.at(1.0)
    got = await results(client, b.id)
    assert {g["error"]["error"]["type"] for g in got.values()} == {"rate_limit_error"}


async def test_cancel(sim_factory, clients):
    server, clock, client = await make(sim_factory, clients, batch_turnaround_s=10.0)
    b = await client.messages.batches.create(requests=reqs({f"c{i}": params(i) for i in range(8)}))
    clock.at(5.0)  # half the requests answered
    r = await client.messages.batches.cancel(b.id)
    assert (r.processing_status, r.cancel_initiated_at, r.results_url) == ("canceling", when(5.0), None)
    clock.at(5.5)
    with pytest.raises(anthropic.AnthropicError, match="results_url"):  # the SDK asks only once it has ended
        await client.messages.batches.results(b.id)
    with pytest.raises(anthropic.BadRequestError, match="not ended"):  # and the server refuses too
        await client.get(f"/v1/messages/batches/{b.id}/results", cast_to=object)
    clock.at(6.0)
    r = await client.messages.batches.retrieve(b.id)
    assert (r.processing_status, r.request_counts.succeeded, r.request_counts.canceled) == ("ended", 4, 4)
    assert sorted(g["type"] for g in (await results(client, b.id)).values()) == ["canceled"] * 4 + ["succeeded"] * 4
    with pytest.raises(anthropic.BadRequestError, match="already ended"):
        await client.messages.batches.cancel(b.id)
    assert server.stats()["batch_requests_cancelled"] == 4


async def test_creation_is_checked_and_keys_and_ids_too(sim_factory, clients):
    server, _, client = await make(sim_factory, clients, api_keys=["good"])
    with pytest.raises(anthropic.AuthenticationError):
        await client.messages.batches.create(requests=reqs({"a": params(1)}))
    client = clients(server, "good")
    for bad, words in (([], "at least 1"), ([{"custom_id": "a b", "params": params(1)}], "custom_id"),
                       ([{"custom_id": "x" * 65, "params": params(1)}], "custom_id"),
                       (reqs({"a": params(1)}) * 2, "Duplicate custom_id"),
                       ([{"custom_id": "a", "params": "hi"}], "params")):
        with pytest.raises(anthropic.BadRequestError, match=words):
            await client.messages.batches.create(requests=bad)
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.batches.retrieve("msgbatch_nope")
    assert server.stats()["batches_created"] == 0

    server, _, client = await make(sim_factory, clients, batch_create_fail_rate=1.0)
    with pytest.raises(anthropic.InternalServerError):
        await client.messages.batches.create(requests=reqs({"a": params(1)}))
    assert server.stats()["batch_create_errors"] == {"anthropic": 1}


async def test_list_pages_newest_first_and_delete(sim_factory, clients):
    _, clock, client = await make(sim_factory, clients, batch_turnaround_s=1.0)
    ids = []
    for i in range(5):
        clock.at(i * 0.01)
        ids.append((await client.messages.batches.create(requests=reqs({"a": params(i)}))).id)
    page = await client.messages.batches.list(limit=2)
    assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
    assert [b.id async for b in await client.messages.batches.list(limit=2)] == ids[::-1]
    with pytest.raises(anthropic.BadRequestError, match="still processing"):
        await client.messages.batches.delete(ids[0])
    clock.at(5.0)
    assert (await client.messages.batches.delete(ids[0])).type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.batches.retrieve(ids[0])


# ------------------------------------------------------------------------------------ hypothesis

_IDS = st.one_of(st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True), st.text(max_size=70))


@settings(max_examples=200, deadline=None)
@given(st.lists(_IDS, min_size=1, max_size=8))
def test_a_creation_is_refused_exactly_when_an_id_is_bad_or_repeated(ids):
    import re

    body = {"requests": [{"custom_id": c, "params": {}} for c in ids]}
    ok = all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", c) for c in ids) and len(set(ids)) == len(ids)
    try:
        got = read_requests(body)
    except _BadRequest:
        assert not ok
    else:
        assert ok and [c for c, _ in got] == ids


# ------------------------------------------------------------------------------ judgekit sim serve

def test_sim_serve_takes_the_batch_flags(monkeypatch):
    import sys
    from pathlib import Path

    import judgekit.sim.server as server_mod

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from oneline import assert_user_error, invoke

    seen = []
    monkeypatch.setattr(server_mod, "serve_forever", lambda config, host, port: seen.append(config))
    r = invoke("sim", "serve", "--batch-turnaround-s", "45", "--batch-request-fail-rate", "0.1",
               "--batch-expire-rate", "0.05")
    assert r.exit_code == 0, r.output
    (cfg,) = seen
    assert (cfg.batch_turnaround_s, cfg.batch_request_fail_rate, cfg.batch_expire_rate) == (45.0, 0.1, 0.05)
    assert invoke("sim", "serve").exit_code == 0 and seen[-1].batch_turnaround_s == 5.0  # SimConfig's default
    assert_user_error(invoke("sim", "serve", "--batch-turnaround-s", "-1"), "--batch-turnaround-s")
    assert_user_error(invoke("sim", "serve", "--batch-expire-rate", "2"), "--batch-expire-rate")


def test_a_served_simulator_runs_batches_as_its_flags_say():
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "sim", "serve", "--port", str(port),
                          "--batch-turnaround-s", "0", "--batch-request-fail-rate", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/sim/stats", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and p.poll() is None
                time.sleep(0.1)
        client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0)
        b = client.messages.batches.create(requests=reqs({"a": params(1), "b": params(2)}))
        r = client.messages.batches.retrieve(b.id)  # no turnaround: ended at the first look
        assert (r.processing_status, r.request_counts.errored) == ("ended", 2)  # every request failed
        assert {line.result.type for line in client.messages.batches.results(b.id)} == {"errored"}
        client.close()
    finally:
        p.terminate()
        p.wait(10)
