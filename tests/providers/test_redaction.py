"""The key a provider uses never leaves it in an error: one rule in the Provider base class, for
every provider (chat, image generation, image search) and for providers written later."""

import pytest

from odd_server import OddServer, Reply

from judgekit.blobs import BlobStore
from judgekit.config import ModelSpec
from judgekit.errors import AuthError, BadRequest, MalformedReply, TransientError
from judgekit.providers import create_provider
from judgekit.providers.base import REDACTED, Provider
from judgekit.types import ChatRequest, ChatResponse, GenParams, Message

KEY = "brv-0123456789-abcdefghij"


def req(alias="m", seed=None):
    return ChatRequest(alias, (Message.user("two green triangles"),), GenParams(seed=seed))


async def test_brave_search_redacts_an_echoed_key(monkeypatch, tmp_path):
    body = {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID",
                                               "detail": f"The token {KEY} is not valid."}}
    monkeypatch.setenv("JK_BRAVE", KEY)
    async with OddServer(Reply(422, body)) as server:
        prov = create_provider("s", ModelSpec(provider="brave", model="image-search", base_url=server.url,
                                              api_key_env="JK_BRAVE"))
        prov.blobs = BlobStore(tmp_path / "b")
        await prov.start()
        with pytest.raises(AuthError) as e:
            await prov.generate(req("s"))
        await prov.close()
    assert server.seen[0][1].get("X-Subscription-Token") == KEY  # the key was sent...
    assert KEY not in str(e.value) and REDACTED in str(e.value)  # ...and never comes back out
    assert KEY not in prov.describe_error(e.value)


@pytest.mark.parametrize("reply, cls", [
    (Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}), AuthError),
    (Reply(200, {"created": 0, "data": [{"b64_json": "aGVsbG8="}], "usage": {"input_tokens": -1}}), MalformedReply),
    (Reply(200, {"created": 0, "data": [{"b64_json": "aGVsbG8="}],
                 "usage": {"input_tokens": 3, "output_tokens": "many"}}), MalformedReply),
    (Reply(200, {"created": 0, "data": []}), TransientError),
])
async def test_image_generation_odd_replies_and_echoed_key(monkeypatch, tmp_path, reply, cls):
    monkeypatch.setenv("JK_IMG", KEY)
    async with OddServer(reply) as server:
        prov = create_provider("g", ModelSpec(provider="openai_image", model="gpt-image-1",
                                              base_url=server.url + "/v1", api_key_env="JK_IMG"))
        prov.blobs = BlobStore(tmp_path / "b")
        await prov.start()
        with pytest.raises(cls) as e:
            await prov.generate(req("g", seed=1))
        await prov.close()
    assert KEY not in str(e.value) and KEY not in prov.describe_error(e.value)


class _Echo(Provider):
    """A provider written later, with no redaction of its own: it echoes its key in every error."""

    async def start(self) -> None:
        self.remember_secret("my-own-secret-value")

    async def generate(self, request: ChatRequest) -> ChatResponse:
        raise BadRequest(f"server said: bad key my-own-secret-value (env {self.api_key(required=False)})")


class _Child(_Echo):
    async def generate(self, request: ChatRequest) -> ChatResponse:
        return await super().generate(request)


@pytest.mark.parametrize("cls", [_Echo, _Child])
async def test_any_provider_subclass_is_redacted(monkeypatch, cls):
    monkeypatch.setenv("JK_ECHO", "env-secret-1234567")
    prov = cls("e", ModelSpec(provider="openai", model="x", api_key_env="JK_ECHO"))
    await prov.start()
    with pytest.raises(BadRequest) as e:
        await prov.generate(req("e"))
    assert str(e.value) == f"server said: bad key {REDACTED} (env {REDACTED})"
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_short_values_are_not_secrets(monkeypatch):
    """A local server's placeholder key ("EMPTY", "sim") is not redacted: it would mangle words."""
    monkeypatch.setenv("JK_SHORT", "sim")
    prov = _Echo("e", ModelSpec(provider="openai", model="x", api_key_env="JK_SHORT"))
    prov.remember_secret("EMPTY")
    assert prov.redact("the simulator said EMPTY") == "the simulator said EMPTY"
    prov.remember_secret("abc-0123456789")
    prov.remember_secret("abc-0123456789-longer")  # the longer one is replaced whole
    assert prov.redact("k=abc-0123456789-longer") == f"k={REDACTED}"
