"""The default request timeout: a dead connection is cut in about two minutes, a long generation
is given time, and a timeout the spec sets is used as given."""

import asyncio

import pytest
from hypothesis import given, settings, strategies as st

from judgekit.config import MAX_DEFAULT_TIMEOUT_S, MIN_DEFAULT_TIMEOUT_S, Limits, ModelSpec
from judgekit.errors import TransientError
from judgekit.providers import create_provider
from judgekit.types import ChatRequest, GenParams, Message


def test_shipped_budgets():
    lim = Limits()
    assert lim.timeout_for(1024) == 120.0
    assert lim.timeout_for(4096) == pytest.approx(141.92)
    assert lim.timeout_for(None) == 300.0
    assert lim.timeout_for(100_000) == 600.0
    assert Limits(timeout_s=7).timeout_for(4096) == 7.0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(min_value=1, max_value=10**7), st.integers(min_value=1, max_value=10**7))
def test_default_grows_with_max_tokens_within_bounds(a, b):
    lim = Limits()
    lo, hi = sorted((a, b))
    assert MIN_DEFAULT_TIMEOUT_S <= lim.timeout_for(lo) <= lim.timeout_for(hi) <= MAX_DEFAULT_TIMEOUT_S


async def _hanging_server():
    async def handle(reader, writer):
        await reader.read(65536)  # read the request, never answer
        await asyncio.sleep(3600)

    return await asyncio.start_server(handle, "127.0.0.1", 0)


async def test_a_hung_openai_call_is_cut_at_the_request_timeout():
    server = await _hanging_server()
    port = server.sockets[0].getsockname()[1]
    spec = ModelSpec(provider="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1",
                     limits={"timeout_s": 0.5})
    prov = create_provider("m", spec)
    await prov.start()
    try:
        req = ChatRequest(model="m", messages=(Message.user("hi"),), params=GenParams(max_tokens=8))
        with pytest.raises(TransientError, match="timeout"):
            await asyncio.wait_for(prov.generate(req), 60)  # the guard: the provider's own timeout ends it
    finally:
        await prov.close()
        server.close()
