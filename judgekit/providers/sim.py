"""The simulator as a provider: starts ``judgekit sim`` in a subprocess on an ephemeral loopback
port (its own process, so it never competes with the engine for the event loop) and talks to it
through the real openai SDK over real HTTP.

Settings come from the model spec's ``sim`` table (any :class:`judgekit.sim.SimConfig` field), plus
``url`` to use a simulator that is already running instead of starting one.  Aliases with the same
settings share one server, chat (``sim``) and image search (``sim_image_search``) alike:
:func:`acquire_simulator` / :func:`release_simulator`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from .openai import OpenAIProvider

__all__ = ["SimProvider", "running_simulators", "acquire_simulator", "release_simulator", "sim_settings_hash"]

# settings that change what the simulator answers (the rest: latency, limits, faults, do not)
_RESPONSE_FIELDS = ("seed", "model_quality", "garbage_rate")

_servers: dict[str, Any] = {}  # config json -> SimProcess
_refs: dict[str, int] = {}


def running_simulators() -> list[Any]:
    """The SimProcess objects started by this process (for counts of served calls)."""
    return list(_servers.values())


def sim_settings_hash(settings: dict[str, Any], fields: tuple[str, ...]) -> str:
    """A short hash of the ``fields`` of ``settings`` that are set (for cache identities)."""
    ident = {k: settings[k] for k in fields if k in settings}
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]


async def acquire_simulator(settings: dict[str, Any]) -> tuple[str, Any]:
    """The simulator process for these settings (started on first use), and the key to release
    it with.  Every acquire needs one :func:`release_simulator`."""
    from ..sim import SimConfig, SimProcess

    key = json.dumps(settings, sort_keys=True)
    server = _servers.get(key)
    if server is None:
        server = SimProcess(SimConfig(**settings))
        await asyncio.to_thread(server.start)
        _servers[key] = server
    _refs[key] = _refs.get(key, 0) + 1
    return key, server


async def release_simulator(key: str) -> None:
    """Drop one reference; the last one stops the process."""
    _refs[key] = _refs.get(key, 1) - 1
    if _refs[key] <= 0:
        server = _servers.pop(key, None)
        _refs.pop(key, None)
        if server is not None:
            await asyncio.to_thread(server.stop)


class SimProvider(OpenAIProvider):
    kind = "sim"

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self._settings = dict(spec.sim)
        self._url = self._settings.pop("url", None)
        self._config_key: str | None = None
        self.server = None

    @property
    def identity(self) -> str:
        return "sim:" + sim_settings_hash(self._settings, _RESPONSE_FIELDS)

    async def start(self) -> None:
        if self._url is None:
            self._config_key, self.server = await acquire_simulator(self._settings)
            self._base_url = self.server.base_url
        else:
            self._base_url = self._url
        self._api_key = (self._settings.get("api_keys") or ["sim"])[0]
        await super().start()

    def stats(self) -> dict[str, Any] | None:
        return self.server.stats() if self.server is not None else None

    async def close(self) -> None:
        await super().close()
        if self.server is not None and self._config_key is not None:
            await release_simulator(self._config_key)
            self.server = None
            self._config_key = None
