"""Fixtures of the simulator tests."""

from __future__ import annotations

from typing import AsyncIterator, Callable

import pytest

from judgekit.sim import SimConfig, SimServer


@pytest.fixture
async def sim_factory() -> AsyncIterator[Callable[..., object]]:
    """Start simulators with a given config (keyword arguments of SimConfig); all stopped after."""
    started: list[SimServer] = []

    async def make(**kwargs: object) -> SimServer:
        server = SimServer(SimConfig(**kwargs))
        await server.start()
        started.append(server)
        return server

    yield make
    for s in started:
        await s.stop()


@pytest.fixture(autouse=True)
async def _close_sdk_clients():
    """Close the SDK clients a test made through sdk_clients."""
    from sdk_clients import OPEN

    yield
    while OPEN:
        await OPEN.pop().close()
