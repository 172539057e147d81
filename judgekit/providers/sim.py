"""The simulator as a provider: starts ``judgekit sim`` in a subprocess on an ephemeral loopback
port (its own process, so it never competes with the engine for the event loop) and talks to it
through the real openai SDK over real HTTP.

Settings come from the model spec's ``sim`` table (any :class:`judgekit.sim.SimConfig` field), plus
``url`` to use a simulator that is already running instead of starting one.  Aliases with the same
settings share one server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from .openai import OpenAIProvider

__all__ = ["SimProvider", "running_simulators"]

# settings that change what the simulator answers (the rest: latency, limits, faults, do not)
_RESPONSE_FIELDS = ("seed", "model_quality", "garbage_rate")

_servers: dict[str, Any] = {}  # config json -> SimProcess
_refs: dict[str, int] = {}


def running_simulators() -> list[Any]:
    """The SimProcess objects started by this process (for counts of served calls)."""
    return list(_servers.values())


class SimProvider(OpenAIProvider):
    kind = "sim"

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self._settings = dict(spec.sim)
        self._url = self._settings.pop("url", None)
        self._config_key = json.dumps(self._settings, sort_keys=True)
        self.server = None

    @property
    def identity(self) -> str:
        ident = {k: self._settings[k] for k in _RESPONSE_FIELDS if k in self._settings}
        return "sim:" + hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]

    async def start(self) -> None:
        if self._url is None:
            from ..sim import SimConfig, SimProcess

            server = _servers.get(self._config_key)
            if server is None:
                server = SimProcess(SimConfig(**self._settings))
                await asyncio.to_thread(server.start)
                _servers[self._config_key] = server
            _refs[self._config_key] = _refs.get(self._config_key, 0) + 1
            self.server = server
            self._base_url = server.base_url
        else:
            self._base_url = self._url
        self._api_key = (self._settings.get("api_keys") or ["sim"])[0]
        await super().start()

    def stats(self) -> dict[str, Any] | None:
        return self.server.stats() if self.server is not None else None

    async def close(self) -> None:
        await super().close()
        if self.server is not None:
            _refs[self._config_key] -= 1
            if _refs[self._config_key] <= 0:
                server = _servers.pop(self._config_key, None)
                _refs.pop(self._config_key, None)
                if server is not None:
                    await asyncio.to_thread(server.stop)
            self.server = None
