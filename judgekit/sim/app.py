"""The simulator's HTTP application: OpenAI-, Anthropic- and Gemini-compatible endpoints (:func:`build_app`),
and :class:`SimServer`, which serves it on loopback in the caller's event loop.

Endpoints
---------
``POST /v1/chat/completions``
    OpenAI chat completions (non-streaming); content as a string or a list of ``text`` /
    ``image_url`` parts.
``GET /v1/models`` and ``GET /v1/models/{model}``
    OpenAI model listing / retrieval.
``POST /openai/deployments/{deployment}/chat/completions?api-version=...``
    Azure OpenAI chat completions: the ``api-key`` header (or a bearer token) carries the key,
    ``SimConfig.azure_deployments`` maps the deployment to the model it serves; Azure's gateway
    errors (401, 404 ``DeploymentNotFound``, 429) in Azure's shape, the rest in OpenAI's.
``POST /v1beta/models/{model}:generateContent`` (also under ``/v1/``)
    Gemini ``generateContent`` in the REST JSON shape (``contents`` / ``parts`` with ``text``
    and ``inlineData``, ``systemInstruction``, ``generationConfig``).  google-genai 3.x
    defaults to the ``v1`` API version, older releases to ``v1beta``; both are served.
``POST /v1/images/generations`` (also ``/images/generations``) and ``GET /sim/generated/{id}.png``
    The OpenAI Images API: a prompt drawn as a simple scene (:mod:`judgekit.sim.images`), through
    the same key, model, rate-limit and fault pipeline as chat.
``POST /v1/messages``
    Anthropic's Messages API, in its shapes (:mod:`judgekit.sim.anthropic_api`), prompt caching
    included.
``POST /v1/messages/batches``, ``GET /v1/messages/batches[/{id}[/results]]``, ``POST /v1/messages/batches/{id}/cancel``
    Anthropic's Message Batches API (:mod:`judgekit.sim.anthropic_batch_api`), on the same store,
    answered by the Messages endpoint's reply function (prompt cache included).
``POST /v1/files``, ``GET /v1/files/{id}[/content]``, ``POST /v1/batches``, ``GET /v1/batches[/{id}]``, ``POST /v1/batches/{id}/cancel``
    OpenAI's Batch API (and Azure's under ``/openai/``): :mod:`judgekit.sim.openai_batch_api`,
    its jobs in a :class:`~judgekit.sim.batches.BatchStore` (``app[BATCHES_KEY]``) shared with the
    other batch APIs, answered by the chat endpoint's pipeline.
``POST /v1beta/models/{model}:batchGenerateContent``, ``/v1beta/batches[/{id}[:cancel]]``, ``/upload/v1beta/files``, ``/v1beta/files/{id}[:download]``
    Gemini batch mode and its Files API (also under ``/v1/``): :mod:`judgekit.sim.gemini_batch_api`.
``GET /res/v1/images/search`` and ``GET /sim/images/{slug}.png``
    Brave Search API's image search and the images its results point at
    (:mod:`judgekit.sim.search`).
``GET /sim/stats`` / ``POST /sim/reset``
    The counters of :class:`~judgekit.sim.core.SimStats`, :class:`~judgekit.sim.images.ImageGenStats` and
    :class:`~judgekit.sim.search.SearchStats`; reset zeroes
    them, forgets attempt counts (so a rerun draws the same faults) and refills the rate-limit
    buckets.

The modules behind it: :mod:`judgekit.sim.protocol` (both APIs' request bodies to one internal
request, the request hash, response and error shapes), :mod:`judgekit.sim.core` (the pipeline:
key, model, rate limits, faults, latency, counters, reply) and this module (the aiohttp app and
its routes, :class:`SimServer`).  The other ways to run it, :class:`~judgekit.sim.process.SimThread`,
:class:`~judgekit.sim.process.SimProcess` and :func:`~judgekit.sim.server.serve_forever`, stand on
:class:`SimServer`; :mod:`judgekit.sim.server` names all of them.
"""

from __future__ import annotations

import socket
from typing import Any

from aiohttp import web

from judgekit.sim.anthropic_api import AnthropicSim
from judgekit.sim.anthropic_batch_api import AnthropicBatchSim
from judgekit.sim.batches import BatchStore
from judgekit.sim.config import SimConfig
from judgekit.sim.core import _Core
from judgekit.sim.gemini_batch_api import GeminiBatchSim
from judgekit.sim.api_errors import auth_error, deployment_not_found
from judgekit.sim.protocol import _AZURE, _GEMINI, _JSON, _OPENAI, _dumps
from judgekit.sim.images import ImageGenSim
from judgekit.sim.openai_batch_api import OpenAIBatchSim
from judgekit.sim.search import ImageSearchSim

__all__ = ["READY_PREFIX", "BATCHES_KEY", "SimStartError", "SimServer", "build_app", "url_host"]

#: first (and only) line ``python -m judgekit.sim`` prints on stdout once it listens
READY_PREFIX = "JUDGEKIT_SIM_READY"


# ----------------------------------------------------------------------------------------
# the application
# ----------------------------------------------------------------------------------------


_CORE_KEY: web.AppKey[_Core] = web.AppKey("judgekit_sim", _Core)
_SEARCH_KEY: web.AppKey[ImageSearchSim] = web.AppKey("judgekit_sim_search", ImageSearchSim)
_IMAGES_KEY: web.AppKey[ImageGenSim] = web.AppKey("judgekit_sim_images", ImageGenSim)
_ANTHROPIC_KEY: web.AppKey[AnthropicSim] = web.AppKey("judgekit_sim_anthropic", AnthropicSim)
#: every batch job, whatever API it came through (judgekit.sim.batches)
BATCHES_KEY: web.AppKey[BatchStore] = web.AppKey("judgekit_sim_batches", BatchStore)


def _snapshot(core: _Core, search: ImageSearchSim, images: ImageGenSim, anthropic: AnthropicSim,
              batches: BatchStore) -> dict[str, Any]:
    """Chat, image generation, image search, Messages API and batch counters, in one JSON-ready dict."""
    return {**core.stats.snapshot(), **images.stats.snapshot(), **search.stats.snapshot(),
            **anthropic.stats.snapshot(), **batches.stats.snapshot()}


def build_app(config: SimConfig | None = None) -> web.Application:
    """The aiohttp application of a simulator (state, counters and limits included)."""
    core = _Core(config or SimConfig())
    core.config.behaviours()  # load the simulated behaviours now: a plugin that cannot be loaded fails the start
    app = web.Application(client_max_size=int(core.config.max_body_mb * 1024 * 1024))
    app[_CORE_KEY] = core
    search = ImageSearchSim(core)
    app[_SEARCH_KEY] = search
    images = ImageGenSim(core)
    app[_IMAGES_KEY] = images
    anthropic = app[_ANTHROPIC_KEY] = AnthropicSim(core)
    batches = app[BATCHES_KEY] = BatchStore(core)
    openai_batches = OpenAIBatchSim(core, batches)
    gemini_batches = GeminiBatchSim(core, batches, openai_batches)

    async def chat(request: web.Request) -> web.Response:
        return await core.handle(_OPENAI, request)

    async def gemini(request: web.Request) -> web.Response:
        spec = request.match_info["spec"]
        model, sep, method = spec.rpartition(":")
        if sep and method == "batchGenerateContent":
            return await gemini_batches.create(request, model)
        if not sep or method != "generateContent":
            return core._error(
                _GEMINI, 404, f"method '{method or spec}' is not supported by the simulator"
            )
        return await core.handle(_GEMINI, request, model)

    async def azure_chat(request: web.Request) -> web.Response:
        deployment = request.match_info["deployment"]
        deployments = core.config.azure_deployments
        if not core._key_ok(request):  # Azure's gateway checks the key before anything else
            core.stats.requests += 1
            core.stats.auth_failures += 1
            return auth_error(_AZURE, core._next_id())
        if "api-version" not in request.query:
            core.stats.requests += 1
            core.stats.not_found += 1
            return web.Response(body=_dumps({"error": {"code": "404", "message": "Resource not found"}}),
                                status=404, content_type=_JSON)
        if deployments and deployment not in deployments:
            core.stats.requests += 1
            core.stats.not_found += 1
            return deployment_not_found(core._next_id())
        return await core.handle(_AZURE, request, deployments.get(deployment, deployment))

    def _model_obj(name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": 0, "owned_by": "judgekit-sim"}

    async def list_models(request: web.Request) -> web.Response:
        if not core._key_ok(request):
            core.stats.auth_failures += 1
            return core._error(_OPENAI, 401, "Incorrect API key provided.", code="invalid_api_key")
        names = sorted(core.models) if core.models is not None else (
            sorted(core.stats.served_by_model) or ["sim-model"]
        )
        return web.Response(
            body=_dumps({"object": "list", "data": [_model_obj(n) for n in names]}),
            content_type=_JSON,
        )

    async def get_model(request: web.Request) -> web.Response:
        if not core._key_ok(request):
            core.stats.auth_failures += 1
            return core._error(_OPENAI, 401, "Incorrect API key provided.", code="invalid_api_key")
        name = request.match_info["model"]
        if core.models is not None and name not in core.models:
            return core._error(
                _OPENAI, 404, f"The model `{name}` does not exist.", code="model_not_found"
            )
        return web.Response(body=_dumps(_model_obj(name)), content_type=_JSON)

    async def stats(request: web.Request) -> web.Response:
        return web.Response(body=_dumps(_snapshot(core, search, images, anthropic, batches)), content_type=_JSON)

    async def reset(request: web.Request) -> web.Response:
        core.reset()
        search.reset()
        images.reset()
        anthropic.reset()
        batches.reset()
        return web.Response(body=_dumps(_snapshot(core, search, images, anthropic, batches)), content_type=_JSON)

    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/chat/completions", chat)
    app.router.add_post("/openai/deployments/{deployment}/chat/completions", azure_chat)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model}", get_model)
    app.router.add_post("/v1beta/models/{spec}", gemini)
    app.router.add_post("/v1/models/{spec}", gemini)
    app.router.add_get("/sim/stats", stats)
    app.router.add_post("/sim/reset", reset)
    search.add_routes(app)
    images.add_routes(app)
    anthropic.add_routes(app)
    gemini_batches.add_routes(app)  # first: it shares paths of /v1 with OpenAI's batches
    openai_batches.add_routes(app)
    AnthropicBatchSim(core, batches, anthropic).add_routes(app)
    return app


# ----------------------------------------------------------------------------------------
# in the caller's event loop
# ----------------------------------------------------------------------------------------


class SimStartError(RuntimeError):
    """The simulator did not come up (the message includes the subprocess's stderr)."""


def _listen_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class SimServer:
    """A simulator in the current event loop.

    >>> server = SimServer(SimConfig(seed=1))
    >>> await server.start()          # doctest: +SKIP
    >>> server.base_url               # doctest: +SKIP
    'http://127.0.0.1:40123/v1'
    """

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config or SimConfig()
        self.app = build_app(self.config)
        self._core: _Core = self.app[_CORE_KEY]
        self._search: ImageSearchSim = self.app[_SEARCH_KEY]
        self._images: ImageGenSim = self.app[_IMAGES_KEY]
        self._runner: web.AppRunner | None = None
        self.host = "127.0.0.1"
        self.port = 0

    @property
    def root_url(self) -> str:
        """``http://HOST:PORT`` (what the Gemini SDK takes as ``base_url``)."""
        return f"http://{url_host(self.host)}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1`` (what the OpenAI SDK takes as ``base_url``)."""
        return self.root_url + "/v1"

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Listen on ``host:port`` (0 picks a free port, then ``.port`` tells which)."""
        if self._runner is not None:
            raise RuntimeError("the simulator is already started")
        sock = _listen_socket(host, port)
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        site = web.SockSite(runner, sock)
        await site.start()
        self._runner = runner
        self.host = host
        self.port = sock.getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and drop open connections (hanging requests are cancelled)."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def stats(self) -> dict[str, Any]:
        """The counters (same as ``GET /sim/stats``)."""
        return _snapshot(self._core, self._search, self._images, self.app[_ANTHROPIC_KEY], self.app[BATCHES_KEY])

    def reset(self) -> None:
        """Same as ``POST /sim/reset``."""
        self._core.reset()
        self._search.reset()
        self._images.reset()
        self.app[_ANTHROPIC_KEY].reset()
        self.app[BATCHES_KEY].reset()

    async def __aenter__(self) -> "SimServer":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
