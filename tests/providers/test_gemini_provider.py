"""The gemini provider through the real google-genai SDK against the simulator."""

import pytest

import io

from PIL import Image

from judgekit.config import ModelSpec
from judgekit.errors import AuthError, RateLimited
from judgekit.providers import create_provider
from judgekit.providers.gemini import classify_gemini_error
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, ImagePart, Message


def png() -> ImagePart:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 30, 30)).save(buf, "PNG")
    return ImagePart(buf.getvalue(), "image/png")


async def make(server, monkeypatch, key="k"):
    monkeypatch.setenv("JK_GEMINI_KEY", key)
    spec = ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.root_url, api_key_env="JK_GEMINI_KEY")
    prov = create_provider("g", spec)
    await prov.start()
    return prov


async def test_gemini_text_and_image(monkeypatch):
    async with SimServer(SimConfig(seed=1)) as server:
        prov = await make(server, monkeypatch)
        req = ChatRequest("g", (Message.system("be brief"), Message.user(png(), "What is in the image?")),
                          GenParams(temperature=0, max_tokens=64))
        r = await prov.generate(req)
        assert r.text and r.usage.input_tokens > 0 and r.usage.output_tokens > 0
        assert r.finish_reason in ("stop", "max_tokens", "length")
        assert server.stats()["served"] == 1
        await prov.close()


async def test_gemini_errors_are_classified(monkeypatch):
    async with SimServer(SimConfig(seed=1, api_keys=["right"])) as server:
        prov = await make(server, monkeypatch, key="wrong")
        with pytest.raises(AuthError) as e:
            await prov.generate(ChatRequest("g", (Message.user("hi"),), GenParams(max_tokens=8)))
        assert "JK_GEMINI_KEY" in prov.describe_error(e.value)
        await prov.close()
    async with SimServer(SimConfig(seed=1, rpm=60, burst_s=1)) as server:
        prov = await make(server, monkeypatch)
        with pytest.raises(RateLimited) as e:
            for i in range(5):
                await prov.generate(ChatRequest("g", (Message.user(f"hi {i}"),), GenParams(max_tokens=8)))
        assert 0 < e.value.retry_after <= 1.0  # from retry-after-ms
        await prov.close()


def test_gemini_retry_delay_from_error_details():
    from google.genai import errors

    err = errors.ClientError(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota",
                                             "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                                          "retryDelay": "12s"}]}})
    out = classify_gemini_error(err)
    assert isinstance(out, RateLimited) and out.retry_after == 12.0
