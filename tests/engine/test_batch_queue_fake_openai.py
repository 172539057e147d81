"""A wave three times the enqueued-token limit finishes against an independent small fake of OpenAI's
Files + Batches API (aiohttp, real HTTP, the real openai SDK through judgekit's provider), not
judgekit's simulator.  The fake counts a request's tokens its own way (characters of its messages'
JSON / 3, more than any tokenizer) and fails a batch that would pass its queue as OpenAI does:
status ``failed``, ``errors.data = [{code: "token_limit_exceeded", line: null, message}]``."""

import asyncio
import itertools
import json
import time

import pytest
from aiohttp import web

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_FAKE_OPENAI_KEY"
N = 24


def tokens(body: dict) -> int:
    return len(json.dumps(body["messages"])) // 3


class FakeOpenAIBatches:
    def __init__(self, queue: int) -> None:
        self.queue = queue
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.ids = itertools.count(1)
        self.created: list[int] = []  # requests per batch created
        self.failed = 0
        self.peak = 0

    def enqueued(self) -> int:
        return sum(b["tokens"] for b in self.batches.values() if b["status"] == "in_progress")

    def app(self) -> web.Application:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{id}/content", self.content)
        app.router.add_post("/v1/batches", self.create)
        app.router.add_get("/v1/batches", self.list)
        app.router.add_get("/v1/batches/{id}", self.get)
        return app

    async def upload(self, request: web.Request) -> web.Response:
        data = b""
        async for part in await request.multipart():
            if part.name == "file":
                data = bytes(await part.read())
            else:
                await part.read()
        fid = f"file-{next(self.ids)}"
        self.files[fid] = data
        return web.json_response({"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                                  "filename": "in.jsonl", "purpose": "batch", "status": "processed"})

    async def content(self, request: web.Request) -> web.Response:
        return web.Response(body=self.files[request.match_info["id"]])

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x.strip()]
        need = sum(tokens(x["body"]) for x in lines)
        bid = f"batch_{next(self.ids)}"
        b = {"id": bid, "input": body["input_file_id"], "lines": lines, "tokens": need, "polls": 0,
             "status": "in_progress", "metadata": body.get("metadata")}
        self.created.append(len(lines))
        if self.enqueued() + need > self.queue:
            b.update(status="failed", tokens=0)
            self.failed += 1
        self.batches[bid] = b
        self.peak = max(self.peak, self.enqueued())
        return web.json_response(self.batch_json(b))

    async def list(self, request: web.Request) -> web.Response:
        data = [self.batch_json(b) for b in reversed(self.batches.values())]
        return web.json_response({"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None})

    async def get(self, request: web.Request) -> web.Response:
        b = self.batches[request.match_info["id"]]
        b["polls"] += 1
        if b["status"] == "in_progress" and b["polls"] >= 2:
            out = []
            for x in b["lines"]:
                text = "verdict for " + x["body"]["messages"][-1]["content"][:40]
                out.append(json.dumps({"id": "r", "custom_id": x["custom_id"], "error": None, "response": {
                    "status_code": 200, "request_id": "req", "body": {
                        "id": "c", "object": "chat.completion", "created": 1, "model": x["body"]["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": tokens(x["body"]), "completion_tokens": 5,
                                  "total_tokens": tokens(x["body"]) + 5}}}}).encode())
            fid = f"file-{next(self.ids)}"
            self.files[fid] = b"\n".join(out) + b"\n"
            b.update(status="completed", output=fid)
        return web.json_response(self.batch_json(b))

    def batch_json(self, b: dict) -> dict:
        failed = b["status"] == "failed"
        return {"id": b["id"], "object": "batch", "endpoint": "/v1/chat/completions", "completion_window": "24h",
                "input_file_id": b["input"], "status": b["status"], "created_at": int(time.time()),
                "output_file_id": b.get("output"), "error_file_id": None, "metadata": b["metadata"],
                "request_counts": {"total": 0 if failed else len(b["lines"]),
                                   "completed": len(b["lines"]) if b["status"] == "completed" else 0, "failed": 0},
                "errors": {"object": "list", "data": [{
                    "code": "token_limit_exceeded", "line": None, "param": None,
                    "message": f"Enqueued token limit reached for gpt-4o in organization org-fake. Limit: "
                               f"{self.queue:,} enqueued tokens. Please try submitting fewer tokens, or wait for "
                               "other batches to finish."}]} if failed else None}


def req(i: int) -> ChatRequest:
    return ChatRequest("j", (Message.system("Judge the two answers."),
                             Message.user(f"Question {i}: " + "which is better, A or B? " * 8)),
                       GenParams(max_tokens=40), stage="judge", item_id=str(i))


@pytest.fixture
async def fake(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-fake-0123456789")
    wave = sum(tokens({"messages": [{"role": "system", "content": m.messages[0].text()},
                                    {"role": "user", "content": m.messages[1].text()}]}) for m in map(req, range(N)))
    server = FakeOpenAIBatches(wave // 3)
    runner = web.AppRunner(server.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield server, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


@pytest.mark.parametrize("setting", [False, True])
async def test_a_wave_three_times_the_limit_finishes(fake, tmp_path, setting):
    server, url = fake
    extra = {"batch_queue_tokens": server.queue} if setting else {}
    spec = ModelSpec(provider="openai", model="gpt-4o", base_url=url, api_key_env=KEY_ENV, batch=True,
                     batch_linger_s=0.05, batch_poll_s=0.02, batch_attempts=1, **extra)
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    e = Engine({"j": spec}, cache)
    await e.start()
    try:
        rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
    finally:
        await e.close()
        await cache.close()
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok][:2]
    assert all(r.text.startswith("verdict for Question") for r in rs)
    assert server.peak <= server.queue
    accepted = [n for n, b in zip(server.created, server.batches.values()) if b["status"] != "failed"]
    assert sum(accepted) == N and len(accepted) >= 3
    if not setting:  # the whole wave first, refused; then halved, never the same wave again at once
        assert server.created[0] == N and server.failed >= 1 and server.created[1] <= N // 2
    assert e.batches.lanes["j"].queue.refusals == server.failed
