"""Fixtures of the simulator tests."""

from __future__ import annotations

import os
import sys
from typing import AsyncIterator, Callable

import pytest

# The repository root must be importable even when the editable install does not map
# subpackages (``.venv/bin/pytest`` does not put the working directory on sys.path).
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from judgekit.sim import SimConfig, SimServer  # noqa: E402


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
