"""The simulator's organisation-level batch behaviours through the real SDKs: the enqueued-token
limit of OpenAI batches (``batch_queue_tokens``: a batch whose prompt tokens, with those of the
model's batches not ended, pass it fails as a whole with ``token_limit_exceeded`` naming the limit)
and Anthropic's per-request ``errored`` results by error type (``batch_request_errors``)."""

from __future__ import annotations

import json

import anthropic
import pytest
from pydantic import ValidationError
from sdk_clients import oa

from judgekit.sim import SimConfig
from judgekit.sim.protocol import estimate_prompt_tokens
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


def text(i: int) -> str:
    return f"Describe picture number {i:03d} in a line."  # 38 characters: 10 prompt tokens


def jsonl(ids: range, model: str = "gpt-4o") -> bytes:
    return b"".join(json.dumps({"custom_id": f"c{i}", "method": "POST", "url": URL, "body": {
        "model": model, "messages": [{"role": "user", "content": text(i)}], "max_tokens": 60}}).encode() + b"\n"
        for i in ids)


async def submit(client, data: bytes):
    f = await client.files.create(file=("in.jsonl", data, "application/jsonl"), purpose="batch")
    return await client.batches.create(input_file_id=f.id, endpoint=URL, completion_window="24h")


async def test_a_batch_over_the_enqueued_token_limit_fails_as_openai_fails_it(sim_factory):
    per = estimate_prompt_tokens(len(text(0)), 0)
    server = await sim_factory(batch_turnaround_s=10.0, batch_queue_tokens=25 * per)
    clock = server.app[BATCHES_KEY].clock = Clock()
    client = oa(server)
    first = await submit(client, jsonl(range(20)))  # 20 of 25 requests' worth
    second = await submit(client, jsonl(range(20, 30)))  # 30 in all while the first runs: refused
    other = await submit(client, jsonl(range(30, 40), model="gpt-4o-mini"))  # another model's queue
    clock.at(2.0)
    a, b, c = [await client.batches.retrieve(x.id) for x in (first, second, other)]
    assert (a.status, b.status, c.status) == ("in_progress", "failed", "in_progress")
    (err,) = b.errors.data
    assert (err.code, err.line) == ("token_limit_exceeded", None)
    assert f"Limit: {25 * per:,} enqueued tokens" in err.message and "gpt-4o" in err.message
    assert b.request_counts.total == 0 and b.output_file_id is None
    clock.at(5.0)
    small = await submit(client, jsonl(range(40, 45)))  # 25 in all: fits beside the first
    clock.at(10.0)
    assert (await client.batches.retrieve(first.id)).status == "completed"
    again = await submit(client, jsonl(range(20, 30)))  # the first has ended: room again
    clock.at(30.0)
    assert (await client.batches.retrieve(small.id)).status == "completed"
    assert (await client.batches.retrieve(again.id)).status == "completed"
    assert (await client.batches.retrieve(other.id)).status == "completed"
    huge = await submit(client, jsonl(range(100, 126)))  # more than the limit on its own: never fits
    clock.at(60.0)
    assert (await client.batches.retrieve(huge.id)).status == "failed"
    assert server.stats()["batches_by_status"] == {"completed": 4, "failed": 2}


async def test_without_the_setting_any_batch_is_taken(sim_factory):
    server = await sim_factory(batch_turnaround_s=1.0)
    server.app[BATCHES_KEY].clock = clock = Clock()
    client = oa(server)
    ids = [(await submit(client, jsonl(range(k * 100, k * 100 + 50)))).id for k in range(3)]
    clock.at(1.0)
    assert [(await client.batches.retrieve(i)).status for i in ids] == ["completed"] * 3


@pytest.fixture
async def claude():
    made: list[anthropic.AsyncAnthropic] = []

    def make(server) -> anthropic.AsyncAnthropic:
        c = anthropic.AsyncAnthropic(base_url=server.root_url, api_key="k", max_retries=0)
        made.append(c)
        return c

    yield make
    for c in made:
        await c.close()


async def test_anthropic_requests_error_with_the_types_asked_for(sim_factory, claude):
    server = await sim_factory(batch_turnaround_s=1.0,
                               batch_request_errors={"api_error": 0.3, "overloaded_error": 0.2})
    server.app[BATCHES_KEY].clock = clock = Clock()
    client = claude(server)
    n = 200
    b = await client.messages.batches.create(requests=[
        {"custom_id": f"r{i}", "params": {"model": "claude-sonnet-4-5", "max_tokens": 50,
                                          "messages": [{"role": "user", "content": f"Question {i}?"}]}}
        for i in range(n)])
    clock.at(1.0)
    decoder = await client.messages.batches.results(b.id)
    kinds: dict[str, int] = {}
    for raw in (await decoder.http_response.aread()).splitlines():
        result = json.loads(raw)["result"]
        kind = result["type"] if result["type"] != "errored" else result["error"]["error"]["type"]
        kinds[kind] = kinds.get(kind, 0) + 1
    assert set(kinds) == {"succeeded", "api_error", "overloaded_error"}
    assert 30 <= kinds["api_error"] <= 90 and 15 <= kinds["overloaded_error"] <= 65  # 60 and 40 expected
    assert kinds["succeeded"] == n - kinds["api_error"] - kinds["overloaded_error"]
    assert server.stats()["batch_requests_injected"] == n - kinds["succeeded"]


def test_error_types_are_checked():
    with pytest.raises(ValidationError, match="unknown error type 'oops'"):
        SimConfig(batch_request_errors={"oops": 0.1})
    with pytest.raises(ValidationError, match="sum to"):
        SimConfig(batch_request_errors={"api_error": 0.7, "overloaded_error": 0.5})
    with pytest.raises(ValidationError):
        SimConfig(batch_request_errors={"api_error": float("nan")})
    with pytest.raises(ValidationError):
        SimConfig(batch_queue_tokens=0)
