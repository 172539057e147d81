"""A base URL with or without its API version behaves the same for every endpoint: chat, Files and
Batches of an OpenAI-compatible server (a server that answered chat at its root took the live calls
and refused the batch with a 404 after the candidates were paid), Anthropic's messages, Gemini's
generateContent.  Checked against a small server that serves only under the version's path (as
vLLM does), through the real SDKs, and against the simulator in batch mode."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st
from odd_server import _Site, completion, gemini_reply

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.providers.anthropic import AnthropicProvider
from judgekit.providers.batch import BatchItem
from judgekit.providers.gemini import GeminiProvider
from judgekit.providers.openai import OpenAIProvider
from judgekit.providers.urls import anthropic_base_url, azure_endpoint, gemini_base_url, openai_base_url
from judgekit.sim import SimConfig
from judgekit.sim.process import SimThread
from judgekit.types import ChatRequest, GenParams, Message

HOSTS = st.sampled_from(["http://127.0.0.1:8000", "https://api.example.com", "http://[::1]:9", "http://gw.local"])
SLASH = st.sampled_from(["", "/"])


@settings(max_examples=100, deadline=None)
@given(host=HOSTS, slash=SLASH, extra=SLASH)
def test_either_form_gives_the_same_base(host, slash, extra):
    assert openai_base_url(host + slash) == openai_base_url(host + "/v1" + extra) == host + "/v1"
    assert anthropic_base_url(host + slash) == anthropic_base_url(host + "/v1" + extra) == host
    assert gemini_base_url(host + slash) == (host, None)
    assert gemini_base_url(host + "/v1beta" + extra) == (host, "v1beta")
    assert gemini_base_url(host + "/v1" + extra) == (host, "v1")
    assert azure_endpoint(host + slash) == azure_endpoint(host + "/openai" + extra) == host
    for f in (openai_base_url, anthropic_base_url, azure_endpoint):
        assert f(f(host + slash)) == f(host + slash)  # idempotent


@pytest.mark.parametrize("given_, expected", [
    ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"),  # a path is kept as written
    ("https://generativelanguage.googleapis.com/v1beta/openai/", "https://generativelanguage.googleapis.com/v1beta/openai"),
    ("http://h:4000/api", "http://h:4000/api"),
    ("http://h:8000/v1/", "http://h:8000/v1"),
])
def test_an_openai_base_with_a_path_is_used_as_written(given_, expected):
    assert openai_base_url(given_) == expected


class Versioned(_Site):
    """Serves its API only under ``prefix`` (404 elsewhere, as vLLM and the real APIs do)."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    async def respond(self, request: web.Request, body: bytes) -> web.StreamResponse:
        path = request.path
        if not path.startswith(self.prefix + "/"):
            return web.json_response({"error": {"message": f"no route {path}", "type": "not_found"}}, status=404)
        rest = path[len(self.prefix):]
        if rest == "/chat/completions":
            return web.json_response(completion("hi"))
        if rest == "/files":
            return web.json_response({"id": "file-1", "object": "file", "bytes": 10, "created_at": 0,
                                      "filename": "judgekit-batch.jsonl", "purpose": "batch", "status": "processed"})
        if rest == "/batches" and request.method == "POST":
            return web.json_response({"id": "batch_1", "object": "batch", "endpoint": "/v1/chat/completions",
                                      "input_file_id": "file-1", "completion_window": "24h", "status": "validating",
                                      "created_at": 0, "request_counts": {"total": 1, "completed": 0, "failed": 0}})
        if rest == "/batches":
            return web.json_response({"object": "list", "data": [], "has_more": False})
        if rest == "/messages":
            return web.json_response({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                      "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                                      "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}})
        if rest.startswith("/models/") and rest.endswith(":generateContent"):
            return web.json_response(gemini_reply())
        return web.json_response({"error": {"message": f"no route {path}"}}, status=404)


def _req(i: int = 0) -> ChatRequest:
    return ChatRequest("j", (Message.user(f"Say hi {i}."),), GenParams(max_tokens=16), stage="judge", item_id=str(i))


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_openai_chat_files_and_batches_all_go_under_v1(suffix):
    async with Versioned("/v1") as server:
        p = OpenAIProvider("j", ModelSpec(provider="openai", model="m", base_url=server.url + suffix))
        await p.start()
        try:
            assert (await p.generate(_req())).text == "hi"
            status = await p.submit_batch([BatchItem("k1", _req())], wave="w1")
            assert status.batch_id == "batch_1"
        finally:
            await p.close()
        assert [path for path, _, _ in server.seen] == ["/v1/chat/completions", "/v1/files", "/v1/batches"]
        assert p.identity == server.url + suffix  # the cache key keeps the URL as written


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
async def test_anthropic_messages_with_or_without_v1(suffix):
    async with Versioned("/v1") as server:
        p = AnthropicProvider("j", ModelSpec(provider="anthropic", model="claude-sonnet-4-5", base_url=server.url + suffix))
        await p.start()
        try:
            assert (await p.generate(_req())).text == "hi"
        finally:
            await p.close()
        assert [path for path, _, _ in server.seen] == ["/v1/messages"]


@pytest.mark.parametrize("suffix, version", [("", "v1"), ("/v1", "v1"), ("/v1/", "v1"), ("/v1beta", "v1beta"),
                                             ("/v1beta/", "v1beta")])
async def test_gemini_generate_content_with_or_without_the_version(suffix, version, monkeypatch):
    """The SDK adds a version to every path: one written in the URL is that version (not twice)."""
    monkeypatch.setenv("JK_TEST_GEMINI_KEY", "k")
    async with Versioned("/" + version) as server:
        p = GeminiProvider("j", ModelSpec(provider="gemini", model="gemini-2.5-flash", base_url=server.url + suffix,
                                          api_key_env="JK_TEST_GEMINI_KEY"))
        await p.start()
        try:
            assert (await p.generate(_req())).text == "hello"
        finally:
            await p.close()
        assert [path for path, _, _ in server.seen] == [f"/{version}/models/gemini-2.5-flash:generateContent"]


@pytest.mark.parametrize("form", ["root", "v1"])
def test_batch_mode_against_the_simulator_with_or_without_v1(tmp_path, form):
    """The issue's case: the simulator answers chat at its root too, its Batch API only under /v1."""
    with SimThread(SimConfig(seed=3, batch_turnaround_s=0.2)) as server:
        url = server.root_url if form == "root" else server.base_url
        assert url.endswith("/v1") == (form == "v1")
        model = ModelSpec(provider="openai", model="sim-judge", base_url=url, batch=True, batch_linger_s=0.05,
                          batch_poll_s=0.05)

        async def go():
            cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="r")
            e = Engine({"j": model}, cache)
            await e.start()
            try:
                return await asyncio.gather(*(e.call(_req(i)) for i in range(4)))
            finally:
                await e.close()
                await cache.close()

        results = asyncio.run(go())
        assert all(r.ok for r in results), [r.error for r in results]
        st_ = server.stats()
        assert st_["batches_created"] == 1 and st_["served"] == 0, json.dumps(st_)[:500]
