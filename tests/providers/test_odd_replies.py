"""Odd replies through the real SDKs over real HTTP: each is the right classified error (or, for a
list of parts, the joined text); the key a server echoes never leaves the provider."""

import pytest

from odd_server import OddServer, Reply, completion, gemini_reply

from judgekit.config import ModelSpec
from judgekit.errors import (AuthError, BadRequest, Blocked, ContentFiltered, EmptyReply, MalformedReply,
                             NoAnswer, NoOutputBudget, ProviderError, Refused, TransientError)
from judgekit.providers import create_provider
from judgekit.providers.base import REDACTED
from judgekit.types import ChatRequest, GenParams, Message

KEY = "sk-test-0123456789abcdef-SECRET"


def request(alias: str = "m") -> ChatRequest:
    return ChatRequest(alias, (Message.user("hi"),), GenParams(max_tokens=8))


async def ask(server: OddServer, monkeypatch, provider: str = "openai"):
    """One call to ``server`` through a provider of the kind named; the response or the error."""
    monkeypatch.setenv("JK_ODD_KEY", KEY)
    if provider == "gemini":
        spec = ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.url, api_key_env="JK_ODD_KEY")
    else:
        spec = ModelSpec(provider=provider, model="some-model", base_url=server.url + "/v1", api_key_env="JK_ODD_KEY")
    prov = create_provider("m", spec)
    await prov.start()
    try:
        return prov, await prov.generate(request())
    except ProviderError as e:
        return prov, e
    finally:
        await prov.close()


@pytest.mark.parametrize("content, expected", [
    ([{"type": "text", "text": "Hello, "}, {"type": "output_text", "text": "world"}], "Hello, world"),
    ([{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "answer"}], "answer"),
    ([{"text": "bare "}, "string part", {"type": "image_url", "image_url": {"url": "x"}}], "bare string part"),
    ([{"type": "text", "text": {"value": "assistants shape", "annotations": []}}], "assistants shape"),
])
async def test_list_content_is_the_joined_text(monkeypatch, content, expected):
    async with OddServer(Reply(200, completion(content))) as server:
        _, r = await ask(server, monkeypatch)
    assert r.text == expected and r.usage.input_tokens == 3 and r.usage.output_tokens == 2


@pytest.mark.parametrize("body, cls, words", [
    (completion(None), EmptyReply, "content null"),
    (completion(""), EmptyReply, "empty"),
    (completion("   \n\t "), EmptyReply, "whitespace only"),
    (completion(None, finish="length"), NoOutputBudget, "'length'"),  # issue 17: not retried
    (completion(message={"role": "assistant", "content": None, "refusal": "I can't help with that."}),
     Refused, "I can't help with that."),
    (completion([{"type": "refusal", "refusal": "Not this one."}]), Refused, "Not this one."),
    (completion(None, finish="content_filter"), ContentFiltered, "content_filter"),
    (completion([{"type": "reasoning", "text": "only thoughts"}]), EmptyReply, "empty"),
    (completion(42), MalformedReply, "neither text nor a list"),
    (completion({"text": "a dict"}), MalformedReply, "neither text nor a list"),
    (completion([{"type": "text", "text": 7}]), MalformedReply, "holds no string"),
    (completion(["ok", 3]), MalformedReply, "not text or an object"),
    (completion("hi", usage={"prompt_tokens": "lots", "completion_tokens": 2}), MalformedReply, "not a number"),
    (completion("hi", usage={"prompt_tokens": 3, "completion_tokens": -5}), MalformedReply, "negative"),
    (completion("hi", usage={"prompt_tokens": 2**40, "completion_tokens": 2}), MalformedReply, "beyond any real call"),
    (completion("hi", usage={"prompt_tokens": 2.5, "completion_tokens": 2}), MalformedReply, "whole number"),
    (completion("hi", usage={"prompt_tokens": True, "completion_tokens": 2}), MalformedReply, "boolean"),
    (completion("hi", usage="lots"), MalformedReply, "not an object"),
    (completion("hi", finish=7), MalformedReply, "finish_reason"),
    ({"id": "x", "object": "chat.completion"}, MalformedReply, "no choices"),
    (completion("hi", choices=[]), MalformedReply, "no choices"),
    (completion("hi", choices=["text"]), MalformedReply, "no message"),
    ([1, 2, 3], MalformedReply, "not a JSON object"),
])
async def test_odd_replies_are_classified(monkeypatch, body, cls, words):
    async with OddServer(Reply(200, body)) as server:
        _, err = await ask(server, monkeypatch)
    assert type(err) is cls, err
    if issubclass(cls, NoAnswer):  # the provider said why there is no answer: asking again would not help
        assert not err.retryable and err.raw and '"choices"' in err.raw
    else:
        assert err.retryable and isinstance(err, TransientError)  # retried, then a counted failure
    assert words in str(err)


async def test_html_page_with_200_is_malformed(monkeypatch):
    async with OddServer(Reply(200, "<html><body>502 Bad Gateway</body></html>", "text/html")) as server:
        _, err = await ask(server, monkeypatch)
    assert type(err) is MalformedReply and "not JSON" in str(err)


async def test_whole_number_floats_and_missing_usage_are_fine(monkeypatch):
    async with OddServer(Reply(200, completion("hi", usage={"prompt_tokens": 12.0, "completion_tokens": None})),
                         Reply(200, completion("hi", usage={}) | {"usage": None})) as server:
        _, r = await ask(server, monkeypatch)
        assert (r.usage.input_tokens, r.usage.output_tokens) == (12, 0)
        _, r = await ask(server, monkeypatch)
        assert (r.usage.input_tokens, r.usage.output_tokens) == (0, 0)


async def test_lone_surrogates_become_replacement_characters(monkeypatch):
    raw = '{"choices":[{"message":{"role":"assistant","content":"a\\ud800b"},"finish_reason":"stop"}]}'
    async with OddServer(Reply(200, raw)) as server:
        _, r = await ask(server, monkeypatch)
    assert r.text == "a\ufffdb"
    r.text.encode("utf-8")


@pytest.mark.parametrize("status, cls", [(400, BadRequest), (401, AuthError), (500, TransientError)])
async def test_an_echoed_key_is_redacted(monkeypatch, status, cls):
    body = {"error": {"message": f"Incorrect API key provided: {KEY}. Find yours at ...", "type": "x"}}
    async with OddServer(Reply(status, body)) as server:
        prov, err = await ask(server, monkeypatch)
    assert type(err) is cls
    assert KEY not in str(err) and REDACTED in str(err)
    assert KEY not in prov.describe_error(err)
    assert err.__cause__ is None  # the SDK's exception, holding the raw body, is not chained


async def test_an_echoed_key_in_an_html_page_is_redacted(monkeypatch):
    async with OddServer(Reply(200, f"<html>bad key {KEY}</html>", "text/html")) as server:
        prov, err = await ask(server, monkeypatch)
    assert type(err) is MalformedReply and KEY not in str(err) and REDACTED in str(err)


async def test_azure_redacts_too(monkeypatch):
    body = {"error": {"code": "401", "message": f"Access denied due to invalid subscription key {KEY}."}}
    async with OddServer(Reply(401, body)) as server:
        monkeypatch.setenv("JK_ODD_KEY", KEY)
        spec = ModelSpec(provider="azure", model="dep", base_url=server.url, api_version="2024-10-21",
                         api_key_env="JK_ODD_KEY")
        prov = create_provider("az", spec)
        await prov.start()
        with pytest.raises(AuthError) as e:
            await prov.generate(request("az"))
        await prov.close()
    assert KEY not in str(e.value) and KEY not in prov.describe_error(e.value)


# -- gemini, through the real google-genai SDK -----------------------------------------------------

async def test_gemini_reply_is_read(monkeypatch):
    async with OddServer(Reply(200, gemini_reply([{"text": "thinking", "thought": True}, {"text": "answer"}]))) as s:
        _, r = await ask(s, monkeypatch, "gemini")
    assert r.text == "answer" and r.usage.input_tokens == 3 and r.usage.output_tokens == 2
    assert r.finish_reason == "stop" and r.request_id == "g-1"


@pytest.mark.parametrize("body, cls, words", [
    (gemini_reply([]), EmptyReply, "empty"),
    (gemini_reply([{"text": "   "}]), EmptyReply, "whitespace only"),
    (gemini_reply([], finish="SAFETY"), ContentFiltered, "SAFETY"),
    ({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}, Blocked,
     "prompt was blocked"),
    (gemini_reply(usage={"promptTokenCount": -3, "candidatesTokenCount": 2}), MalformedReply, "negative"),
    (gemini_reply(usage={"promptTokenCount": 2**40, "candidatesTokenCount": 2}), MalformedReply, "beyond"),
    (gemini_reply(usage={"promptTokenCount": "lots", "candidatesTokenCount": 2}), MalformedReply, "promptTokenCount"),
    (gemini_reply([{"text": 42}]), MalformedReply, "valid string"),
])
async def test_gemini_odd_replies_are_classified(monkeypatch, body, cls, words):
    async with OddServer(Reply(200, body)) as server:
        _, err = await ask(server, monkeypatch, "gemini")
    assert type(err) is cls, err
    assert words in str(err)


async def test_gemini_html_page_and_echoed_key(monkeypatch):
    async with OddServer(Reply(200, "<html>oops</html>", "text/html")) as server:
        _, err = await ask(server, monkeypatch, "gemini")
    assert type(err) is MalformedReply and "\n" not in str(err)
    body = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": f"API key not valid: {KEY}"}}
    async with OddServer(Reply(400, body)) as server:
        prov, err = await ask(server, monkeypatch, "gemini")
    assert type(err) is AuthError
    assert KEY not in str(err) and KEY not in prov.describe_error(err) and REDACTED in str(err)
