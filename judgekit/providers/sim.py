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

__all__ = ["SimProvider", "SimulatorLink", "UsesSimulator", "running_simulators", "acquire_simulator", "release_simulator",
           "sim_settings_hash"]

# settings that change what the simulator answers (the rest: latency, limits, errors, do not):
# the replies with no answer and the usage details are answers of their own; a plugin benchmark's
# simulated behaviour (``benchmarks``) answers its own requests
_RESPONSE_FIELDS = ("seed", "model_quality", "garbage_rate", "reply_faults", "reply_fault_models", "reasoning_tokens",
                    "cached_prompt_share", "prefix_cache", "prefix_cache_step", "prefix_cache_min_tokens",
                    "judge_styles", "benchmarks")

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


class SimulatorLink:
    """A provider's hold on a simulator: the one started for its ``sim`` settings (shared with every
    alias whose settings are the same) or, with ``url``, one already running.

    :meth:`connect` returns the simulator's API URL (``.../v1``) and :attr:`root_url` its root;
    :meth:`release` lets go (the last holder stops the process).  ``key`` is the API key to send.
    """

    def __init__(self, sim_table: dict[str, Any]) -> None:
        self.settings: dict[str, Any] = dict(sim_table)
        self.url: str | None = self.settings.pop("url", None)
        self._config_key: str | None = None
        self.server: Any = None

    @property
    def key(self) -> str:
        return (self.settings.get("api_keys") or ["sim"])[0]

    def identity(self, fields: tuple[str, ...]) -> str:
        """A hash of the settings among ``fields`` (those that change answers)."""
        return sim_settings_hash(self.settings, fields)

    async def connect(self) -> str:
        if self.url is not None:
            return self.url
        if self.server is None:
            self._config_key, self.server = await acquire_simulator(self.settings)
        return self.server.base_url

    @property
    def root_url(self) -> str:
        """The server's root (where the image-search and images routes of a running one live)."""
        if self.server is not None:
            return self.server.root_url
        root = (self.url or "").rstrip("/")
        return root[:-3] if root.endswith("/v1") else root

    def stats(self) -> dict[str, Any] | None:
        return self.server.stats() if self.server is not None else None

    async def release(self) -> None:
        if self._config_key is not None:
            key, self._config_key, self.server = self._config_key, None, None
            await release_simulator(key)


class UsesSimulator:
    """Mixin for providers served by the simulator: ``self.link`` (a :class:`SimulatorLink`, set in
    ``__init__``) gives ``server`` and ``stats()``, and ``close()`` lets the simulator go after the
    provider's own close.  Put it before the provider base class."""

    link: SimulatorLink

    @property
    def server(self) -> Any:
        return self.link.server

    def stats(self) -> dict[str, Any] | None:
        return self.link.stats()

    async def close(self) -> None:
        try:
            await super().close()  # type: ignore[misc]
        finally:
            await self.link.release()


class SimProvider(UsesSimulator, OpenAIProvider):
    kind = "sim"

    def __init__(self, alias: str, spec) -> None:
        super().__init__(alias, spec)
        self.link = SimulatorLink(spec.sim)

    @property
    def identity(self) -> str:
        return "sim:" + self.link.identity(_RESPONSE_FIELDS)

    async def start(self) -> None:
        self._base_url = await self.link.connect()
        self._api_key = self.link.key
        await super().start()
