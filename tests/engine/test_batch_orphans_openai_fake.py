"""Idempotent batch creation against an independent fake of the OpenAI Files + Batches API (a
small aiohttp server written here from the API reference, not judgekit's simulator), through the
openai SDK: a batch created but not recorded is found on a later page of ``GET /v1/batches``
among other clients' batches, by its ``metadata`` or, where the server drops metadata (as some
compatible servers and Azure api versions do), by its input file's name; and a create answered
with a 500 after the server made the batch is not repeated."""

from __future__ import annotations

import asyncio
import itertools
import json
import time

import pytest
from aiohttp import web

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.engine.engine import RunStopped
from judgekit.engine.retry import RetryWait
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_FAKE_OPENAI_KEY"
N = 5


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-fake-0123456789")


class FakeOpenAI:
    """Files and batches in memory.  A batch completes when created; ``GET /v1/batches`` lists
    newest first, ``limit`` (default 20) per page, ``after`` the last id of the previous page."""

    def __init__(self, *, keep_metadata: bool = True, fail_creates: int = 0) -> None:
        self.keep_metadata = keep_metadata
        self.fail_creates = fail_creates  # creates that make the batch, then answer 500
        self.files: dict[str, dict] = {}
        self.batches: list[dict] = []  # in creation order
        self.ids = itertools.count(1)
        self.lines_submitted = 0
        self.list_pages = 0
        self.list_status = 200  # another status: the list fails so
        self.app = web.Application()
        r = self.app.router
        r.add_post("/v1/files", self.upload)
        r.add_get("/v1/files/{id}", self.file)
        r.add_get("/v1/files/{id}/content", self.content)
        r.add_delete("/v1/files/{id}", self.delete_file)
        r.add_post("/v1/batches", self.create)
        r.add_get("/v1/batches", self.list)
        r.add_get("/v1/batches/{id}", self.retrieve)

    def _file(self, filename: str, data: bytes, purpose: str) -> dict:
        f = {"id": f"file-{next(self.ids)}", "object": "file", "bytes": len(data), "created_at": int(time.time()),
             "filename": filename, "purpose": purpose, "data": data}
        self.files[f["id"]] = f
        return f

    @staticmethod
    def _public(f: dict) -> dict:
        return {k: v for k, v in f.items() if k != "data"}

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        part = form["file"]
        return web.json_response(self._public(self._file(part.filename, part.file.read(), str(form["purpose"]))))

    async def file(self, request: web.Request) -> web.Response:
        f = self.files.get(request.match_info["id"])
        if f is None:
            return web.json_response({"error": {"message": "No such File object", "type": "invalid_request_error"}},
                                     status=404)
        return web.json_response(self._public(f))

    async def content(self, request: web.Request) -> web.Response:
        return web.Response(body=self.files[request.match_info["id"]]["data"])

    async def delete_file(self, request: web.Request) -> web.Response:
        self.files.pop(request.match_info["id"], None)
        return web.json_response({"id": request.match_info["id"], "object": "file", "deleted": True})

    def add_batch(self, input_file_id: str, metadata: dict | None, created_at: int | None = None) -> dict:
        lines = [json.loads(x) for x in self.files[input_file_id]["data"].splitlines() if x.strip()]
        out = b"".join(json.dumps({"id": f"req_{i}", "custom_id": ln["custom_id"], "error": None, "response": {
            "status_code": 200, "request_id": f"r{i}", "body": {
                "id": f"chatcmpl-{i}", "object": "chat.completion", "created": 0, "model": "gpt-4o",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": f"answer {ln['custom_id'][:8]}"}}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}}}}).encode() + b"\n"
                       for i, ln in enumerate(lines))
        output = self._file("batch_output.jsonl", out, "batch_output")
        now = int(time.time()) if created_at is None else created_at
        b = {"id": f"batch_{next(self.ids)}", "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
             "input_file_id": input_file_id, "completion_window": "24h", "status": "completed",
             "output_file_id": output["id"], "error_file_id": None, "created_at": now, "completed_at": now,
             "request_counts": {"total": len(lines), "completed": len(lines), "failed": 0},
             "metadata": metadata if self.keep_metadata else None}
        self.batches.append(b)
        return b

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        b = self.add_batch(body["input_file_id"], body.get("metadata"))
        self.lines_submitted += b["request_counts"]["total"]
        if self.fail_creates:
            self.fail_creates -= 1
            return web.json_response({"error": {"message": "The server had an error", "type": "server_error"}},
                                     status=500)
        return web.json_response(b)

    async def list(self, request: web.Request) -> web.Response:
        self.list_pages += 1
        if self.list_status != 200:
            return web.json_response({"error": {"message": "unavailable", "type": "server_error"}},
                                     status=self.list_status)
        limit = int(request.query.get("limit", "20"))
        newest = sorted(self.batches, key=lambda b: b["created_at"], reverse=True)
        after = request.query.get("after")
        if after is not None:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1:]
        page = newest[:limit]
        return web.json_response({"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                                  "last_id": page[-1]["id"] if page else None, "has_more": len(newest) > limit})

    async def retrieve(self, request: web.Request) -> web.Response:
        for b in self.batches:
            if b["id"] == request.match_info["id"]:
                return web.json_response(b)
        return web.json_response({"error": {"message": "No batch", "type": "invalid_request_error"}}, status=404)

    def others(self, n: int) -> None:
        """``n`` batches of other clients, newer than everything so far: some with another wave's
        metadata or file name, some with none."""
        for i in range(n):
            name = f"judgekit-batch-jkwave-{i:032x}.jsonl" if i % 3 == 0 else f"theirs-{i}.jsonl"
            line = json.dumps({"custom_id": f"other-{i}", "method": "POST", "url": "/v1/chat/completions",
                               "body": {}}).encode() + b"\n"
            f = self._file(name, line, "batch")
            meta = {"judgekit_wave": f"{i:032x}"} if i % 2 else None
            self.add_batch(f["id"], meta, created_at=int(time.time()) + 10 + i)


async def serve(fake: FakeOpenAI) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(fake.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1"


def spec(url: str) -> ModelSpec:
    return ModelSpec(provider="openai", model="gpt-4o", base_url=url, api_key_env=KEY_ENV, batch=True,
                     batch_linger_s=0.02, batch_poll_s=0.02, limits={"max_attempts": 3})


def reqs() -> list[ChatRequest]:
    return [ChatRequest("j", (Message.user(f"Question {i}?"),), GenParams(max_tokens=40), stage="judge",
                        item_id=str(i)) for i in range(N)]


@pytest.mark.parametrize("keep_metadata", [True, False], ids=["metadata", "file-name"])
async def test_an_orphan_on_a_later_page_is_adopted(keep_metadata, tmp_path, monkeypatch):
    fake = FakeOpenAI(keep_metadata=keep_metadata)
    runner, url = await serve(fake)
    path = tmp_path / "c.duckdb"
    try:
        cache = await CacheStore.open(path, run_id="run1")
        e = Engine({"j": spec(url)}, cache)
        await e.start()
        batches = e.providers["j"]._client.batches
        create = batches.create

        async def dying(*a, **kw):
            await create(*a, **kw)
            raise asyncio.CancelledError  # the reply is read; the process dies before the record

        monkeypatch.setattr(batches, "create", dying)
        assert not any(r.ok for r in await asyncio.gather(*(e.call(r) for r in reqs())))
        await e.close()
        await cache.close()
        assert (len(fake.batches), fake.lines_submitted) == (1, N)
        orphan = fake.batches[0]["id"]
        fake.others(150)  # other clients' batches since: the orphan is on the list's second page

        cache = await CacheStore.open(path, run_id="run2")
        e = Engine({"j": spec(url)}, cache)
        await e.start()
        (b,) = e.batches.live()
        assert b.record.batch_id == orphan and b.record.run_id == "run1"
        assert fake.list_pages == 2
        rs = await asyncio.gather(*(e.call(r) for r in reqs()))
        assert all(r.ok and r.text.startswith("answer ") for r in rs)
        assert fake.lines_submitted == N and len(fake.batches) == 151  # nothing submitted again
        await e.close()
        await cache.close()
    finally:
        await runner.cleanup()


async def test_a_create_answered_500_after_the_batch_was_made_is_not_repeated(tmp_path):
    fake = FakeOpenAI(fail_creates=1)
    runner, url = await serve(fake)
    try:
        cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
        e = Engine({"j": spec(url)}, cache, retry_wait=RetryWait(initial=0.01, maximum=0.02, jitter=0.01))
        await e.start()
        rs = await asyncio.gather(*(e.call(r) for r in reqs()))
        assert all(r.ok for r in rs)
        assert (len(fake.batches), fake.lines_submitted) == (1, N)
        recorded = await cache.batches()
        assert [r.batch_id for r in recorded] == [fake.batches[0]["id"]]  # the intent is gone
        await e.close()
        await cache.close()
    finally:
        await runner.cleanup()


async def test_a_provider_that_cannot_list_its_batches_stops_the_run_before_any_submission(tmp_path, monkeypatch):
    fake = FakeOpenAI()
    runner, url = await serve(fake)
    path = tmp_path / "c.duckdb"
    try:
        cache = await CacheStore.open(path, run_id="run1")
        e = Engine({"j": spec(url)}, cache)
        await e.start()
        batches = e.providers["j"]._client.batches
        create = batches.create

        async def dying(*a, **kw):
            await create(*a, **kw)
            raise asyncio.CancelledError

        monkeypatch.setattr(batches, "create", dying)
        await asyncio.gather(*(e.call(r) for r in reqs()))
        await e.close()
        await cache.close()
        fake.list_status = 503
        cache = await CacheStore.open(path, run_id="run2")
        e = Engine({"j": spec(url)}, cache, retry_wait=RetryWait(initial=0.01, maximum=0.02, jitter=0.01))
        with pytest.raises(RunStopped) as stopped:
            await e.start()
        assert "1 batch creation of an earlier run was interrupted" in str(stopped.value)
        assert "503" in str(stopped.value) and "\n" not in str(stopped.value)
        assert fake.list_pages == 3  # max_attempts
        await e.close()
        (intent,) = await cache.batches(live_only=True)  # kept for the next try
        assert intent.is_intent
        await cache.close()
        assert len(fake.batches) == 1 and fake.lines_submitted == N

        fake.list_status = 200  # the provider answers again: the orphan is adopted
        cache = await CacheStore.open(path, run_id="run3")
        e = Engine({"j": spec(url)}, cache)
        await e.start()
        assert all(r.ok for r in await asyncio.gather(*(e.call(r) for r in reqs())))
        assert len(fake.batches) == 1 and fake.lines_submitted == N
        await e.close()
        await cache.close()
    finally:
        await runner.cleanup()


async def test_a_compatible_server_without_a_batch_list_is_warned_about_not_blocked(tmp_path, monkeypatch, caplog):
    fake = FakeOpenAI()
    fake.list_status = 404  # serves /v1/batches for create and retrieve, not the list
    runner, url = await serve(fake)
    path = tmp_path / "c.duckdb"
    try:
        cache = await CacheStore.open(path, run_id="run1")
        e = Engine({"j": spec(url)}, cache)
        await e.start()
        batches = e.providers["j"]._client.batches
        create = batches.create

        async def dying(*a, **kw):
            await create(*a, **kw)
            raise asyncio.CancelledError

        monkeypatch.setattr(batches, "create", dying)
        await asyncio.gather(*(e.call(r) for r in reqs()))
        await e.close()
        await cache.close()
        cache = await CacheStore.open(path, run_id="run2")
        e = Engine({"j": spec(url)}, cache)
        await e.start()
        assert "lists no batches" in caplog.text and "submitted again" in caplog.text
        assert all(r.ok for r in await asyncio.gather(*(e.call(r) for r in reqs())))
        assert len(fake.batches) == 2  # the orphan could not be found: paid twice, and said so
        assert [r for r in await cache.batches(live_only=True)] == []
        await e.close()
        await cache.close()
    finally:
        await runner.cleanup()
