"""The simulator's HTTP server: OpenAI- and Gemini-compatible endpoints on loopback.

Endpoints
---------
``POST /v1/chat/completions``
    OpenAI chat completions (non-streaming); content as a string or a list of ``text`` /
    ``image_url`` parts.
``GET /v1/models`` and ``GET /v1/models/{model}``
    OpenAI model listing / retrieval.
``POST /v1beta/models/{model}:generateContent`` (also under ``/v1/``)
    Gemini ``generateContent`` in the REST JSON shape (``contents`` / ``parts`` with ``text``
    and ``inlineData``, ``systemInstruction``, ``generationConfig``).  google-genai 3.x
    defaults to the ``v1`` API version, older releases to ``v1beta``; both are served.
``GET /sim/stats`` / ``POST /sim/reset``
    The counters of :class:`SimStats`; reset zeroes them, forgets attempt counts (so a rerun
    draws the same faults) and refills the rate-limit buckets.

The pipeline of a completion request: count it, check the key (401), parse the body (400),
check the model (404), charge the rate limits (429), count the attempt of this request hash,
draw the faults, sleep (latency or hang), maybe answer 500/502/503, else build the reply
(:func:`judgekit.sim.replies.make_reply`).

The request hash is ``sha256`` over the seed and a canonical form of the request (model,
generation parameters, and every message's role, text and image payload), independent of JSON
key order and whitespace and of the API used.  Prompt tokens are *estimated* as
``len(text) / 4 + 85`` per image; this is a simulation, not a tokenizer.

Ways to run it: :class:`SimServer` (in the caller's event loop), :class:`SimThread` (own loop
in a background thread, for sync code), :class:`SimProcess` (a ``python -m judgekit.sim``
subprocess, so the server gets its own CPU core), and :func:`serve_forever` (the CLI body).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from judgekit.sim.config import SimConfig
from judgekit.sim.limits import RateDecision, RateLimiter
from judgekit.sim.replies import make_reply

__all__ = [
    "READY_PREFIX",
    "SimStats",
    "SimStartError",
    "SimServer",
    "SimThread",
    "SimProcess",
    "build_app",
    "estimate_prompt_tokens",
    "serve_forever",
]

#: first (and only) line ``python -m judgekit.sim`` prints on stdout once it listens
READY_PREFIX = "JUDGEKIT_SIM_READY"

_TOKENS_PER_IMAGE = 85
_ERROR_STATUSES = (500, 502, 503)
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
}
_U64 = float(1 << 64)
_JSON = "application/json"
_OPENAI = "openai"
_GEMINI = "gemini"


def estimate_prompt_tokens(chars: int, images: int) -> int:
    """The simulated prompt size: about four characters per token plus 85 per image."""
    return max(1, (chars + 3) // 4) + _TOKENS_PER_IMAGE * images


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


# ----------------------------------------------------------------------------------------
# counters
# ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class SimStats:
    """Counters of a running simulator (see ``GET /sim/stats``).

    ``requests`` counts every completion request received (either API); ``served`` the
    successful (200) completions, split by model and by kind (``pairwise``, ``vfs``,
    ``answer``).  Garbage replies are served *and* counted in ``garbage``; a hanging request
    counts in ``hangs`` when it starts hanging and in ``served`` if it is answered.
    """

    requests: int = 0
    served: int = 0
    served_by_model: dict[str, int] = field(default_factory=dict)
    served_by_kind: dict[str, int] = field(default_factory=dict)
    rate_limited: int = 0
    errors_injected: int = 0
    hangs: int = 0
    garbage: int = 0
    auth_failures: int = 0
    not_found: int = 0
    bad_requests: int = 0

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy of the counters."""
        return {
            "served": self.served,
            "served_by_model": dict(self.served_by_model),
            "served_by_kind": dict(self.served_by_kind),
            "requests": self.requests,
            "rate_limited": self.rate_limited,
            "errors_injected": self.errors_injected,
            "hangs": self.hangs,
            "garbage": self.garbage,
            "auth_failures": self.auth_failures,
            "not_found": self.not_found,
            "bad_requests": self.bad_requests,
        }

    def reset(self) -> None:
        """Zero every counter."""
        self.requests = self.served = self.rate_limited = self.errors_injected = 0
        self.hangs = self.garbage = self.auth_failures = self.not_found = 0
        self.bad_requests = 0
        self.served_by_model = {}
        self.served_by_kind = {}


# ----------------------------------------------------------------------------------------
# request normalisation (both APIs to one shape)
# ----------------------------------------------------------------------------------------


class _BadRequest(Exception):
    """The body is not a valid request; the message goes back in a 400."""


@dataclass(slots=True)
class _SimRequest:
    model: str
    text: str
    images: int
    max_tokens: int | None
    digest: bytes

    @property
    def prompt_tokens(self) -> int:
        return estimate_prompt_tokens(len(self.text), self.images)


def _gen_key(max_tokens: Any, temperature: Any, top_p: Any, seed: Any) -> bytes:
    return f"{max_tokens!r}|{temperature!r}|{top_p!r}|{seed!r}".encode()


def _int_or_none(v: Any, name: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise _BadRequest(f"'{name}' must be a positive integer, got {v!r}")
    return v


def _parse_openai(body: Any, seed_bytes: bytes) -> _SimRequest:
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _BadRequest("you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("'messages' must be a non-empty array")
    if body.get("stream"):
        raise _BadRequest("streaming is not supported by the judgekit simulator")
    max_tokens = _int_or_none(body.get("max_tokens"), "max_tokens")
    if max_tokens is None:
        max_tokens = _int_or_none(body.get("max_completion_tokens"), "max_completion_tokens")
    chunks: list[bytes] = [
        seed_bytes,
        model.encode(),
        _gen_key(max_tokens, body.get("temperature"), body.get("top_p"), body.get("seed")),
    ]
    texts: list[str] = []
    images = 0
    for msg in messages:
        if not isinstance(msg, dict):
            raise _BadRequest("each message must be an object")
        chunks.append(b"\x1erole:" + str(msg.get("role", "")).encode())
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
            chunks.append(b"\x1ft:" + content.encode())
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    raise _BadRequest("content parts must be objects")
                ptype = part.get("type")
                if ptype == "text":
                    t = part.get("text")
                    if not isinstance(t, str):
                        raise _BadRequest("a text part needs a 'text' string")
                    texts.append(t)
                    chunks.append(b"\x1ft:" + t.encode())
                elif ptype == "image_url":
                    iu = part.get("image_url")
                    url = iu.get("url") if isinstance(iu, dict) else iu
                    if not isinstance(url, str) or not url:
                        raise _BadRequest("an image_url part needs 'image_url.url'")
                    if url.startswith("data:"):
                        url = url[url.find(",") + 1 :]
                    images += 1
                    chunks.append(b"\x1fi:" + url.encode())
                else:
                    raise _BadRequest(f"unsupported content part type {ptype!r}")
        elif content is not None:
            raise _BadRequest("message 'content' must be a string or an array of parts")
    text = "\n".join(texts)
    return _SimRequest(model, text, images, max_tokens, hashlib.sha256(b"\x1d".join(chunks)).digest())


def _gemini_parts(parts: Any, chunks: list[bytes], texts: list[str]) -> int:
    if not isinstance(parts, list):
        raise _BadRequest("'parts' must be an array")
    images = 0
    for part in parts:
        if not isinstance(part, dict):
            raise _BadRequest("each part must be an object")
        t = part.get("text")
        if isinstance(t, str):
            texts.append(t)
            chunks.append(b"\x1ft:" + t.encode())
            continue
        inline = part.get("inlineData") or part.get("inline_data")
        if isinstance(inline, dict):
            data = inline.get("data")
            if not isinstance(data, str):
                raise _BadRequest("inlineData needs a base64 'data' string")
            images += 1
            chunks.append(b"\x1fi:" + data.encode())
            continue
        fdata = part.get("fileData") or part.get("file_data")
        if isinstance(fdata, dict):
            images += 1
            chunks.append(b"\x1fi:" + str(fdata.get("fileUri") or fdata.get("file_uri")).encode())
            continue
        raise _BadRequest("unsupported part: expected 'text' or 'inlineData'")
    return images


def _parse_gemini(body: Any, model: str, seed_bytes: bytes) -> _SimRequest:
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _BadRequest("'contents' must be a non-empty array")
    gc = body.get("generationConfig") or body.get("generation_config") or {}
    if not isinstance(gc, dict):
        raise _BadRequest("'generationConfig' must be an object")
    max_tokens = _int_or_none(
        gc.get("maxOutputTokens", gc.get("max_output_tokens")), "maxOutputTokens"
    )
    chunks: list[bytes] = [
        seed_bytes,
        model.encode(),
        _gen_key(max_tokens, gc.get("temperature"), gc.get("topP", gc.get("top_p")), gc.get("seed")),
    ]
    texts: list[str] = []
    images = 0
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        chunks.append(b"\x1erole:system")
        images += _gemini_parts(system.get("parts", []), chunks, texts)
    elif isinstance(system, str):
        chunks.append(b"\x1erole:system\x1ft:" + system.encode())
        texts.append(system)
    for content in contents:
        if not isinstance(content, dict):
            raise _BadRequest("each content must be an object")
        role = content.get("role") or "user"
        chunks.append(b"\x1erole:" + (b"assistant" if role == "model" else str(role).encode()))
        images += _gemini_parts(content.get("parts", []), chunks, texts)
    text = "\n".join(texts)
    return _SimRequest(model, text, images, max_tokens, hashlib.sha256(b"\x1d".join(chunks)).digest())


# ----------------------------------------------------------------------------------------
# the application
# ----------------------------------------------------------------------------------------


class _Core:
    """State and request pipeline shared by both APIs' handlers."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.seed_bytes = str(config.seed).encode()
        self.stats = SimStats()
        self.limiter = RateLimiter(config.rpm, config.tpm, config.burst_s)
        self.attempts: dict[bytes, int] = {}
        self.keys = frozenset(config.api_keys) if config.api_keys is not None else None
        self.models = frozenset(config.models) if config.models is not None else None
        self.any_faults = bool(
            config.error_rate or config.hang_rate or config.garbage_rate
            or config.latency_ms or config.latency_jitter_ms
        )
        self._counter = 0

    def reset(self) -> None:
        self.stats.reset()
        self.attempts.clear()
        self.limiter.reset()

    def _next_id(self) -> str:
        self._counter += 1
        return f"req_sim{self._counter:012d}"

    # -- error bodies -----------------------------------------------------------------

    @staticmethod
    def _error(
        api: str,
        status: int,
        message: str,
        *,
        etype: str = "invalid_request_error",
        code: str | None = None,
        headers: dict[str, str] | None = None,
        retry_after_s: float | None = None,
        request_id: str = "",
    ) -> web.Response:
        if api == _GEMINI:
            err: dict[str, Any] = {
                "code": status,
                "message": message,
                "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
            }
            if retry_after_s is not None:
                err["details"] = [{
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{max(1, math.ceil(retry_after_s))}s",
                }]
            body = _dumps({"error": err})
        else:
            body = _dumps({"error": {"message": message, "type": etype, "param": None, "code": code}})
        h = dict(headers) if headers else {}
        if request_id:
            h["x-request-id"] = request_id
        return web.Response(body=body, status=status, content_type=_JSON, headers=h)

    # -- pipeline ---------------------------------------------------------------------

    def _key_ok(self, request: web.Request) -> bool:
        if self.keys is None:
            return True
        h = request.headers
        auth = h.get("Authorization", "")
        if auth[:7].lower() == "bearer " and auth[7:].strip() in self.keys:
            return True
        key = h.get("x-goog-api-key") or h.get("api-key") or request.query.get("key")
        return key is not None and key in self.keys

    async def handle(self, api: str, request: web.Request, model_from_path: str = "") -> web.Response:
        st = self.stats
        st.requests += 1
        cfg = self.config
        if not self._key_ok(request):
            st.auth_failures += 1
            msg = (
                "API key not valid. Please pass a valid API key."
                if api == _GEMINI
                else "Incorrect API key provided. You can find your API key in the simulator config."
            )
            return self._error(api, 401, msg, code="invalid_api_key", request_id=self._next_id())
        try:
            raw = await request.read()
            try:
                body = json.loads(raw)
            except ValueError as e:
                raise _BadRequest(f"could not parse the JSON body: {e}") from None
            if api == _GEMINI:
                sreq = _parse_gemini(body, model_from_path, self.seed_bytes)
            else:
                sreq = _parse_openai(body, self.seed_bytes)
        except _BadRequest as e:
            st.bad_requests += 1
            return self._error(api, 400, str(e), request_id=self._next_id())
        model = sreq.model
        if self.models is not None and model not in self.models:
            st.not_found += 1
            return self._error(
                api,
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                code="model_not_found",
                request_id=self._next_id(),
            )
        prompt_tokens = sreq.prompt_tokens
        decision: RateDecision = self.limiter.check(model, prompt_tokens + (sreq.max_tokens or 0))
        if not decision.allowed:
            st.rate_limited += 1
            wait = decision.retry_after_s
            h = dict(decision.headers)
            h["Retry-After"] = str(max(1, math.ceil(wait)))
            h["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
            kind = decision.limited_by or "requests"
            limit = cfg.rpm if kind == "requests" else cfg.tpm
            return self._error(
                api,
                429,
                f"Rate limit reached for {model} on {kind} per min (RPM/TPM): Limit {limit}. "
                f"Please try again in {h['retry-after-ms']}ms.",
                etype=kind,
                code="rate_limit_exceeded",
                headers=h,
                retry_after_s=wait,
                request_id=self._next_id(),
            )
        digest = sreq.digest
        attempt = self.attempts.get(digest, 0) + 1
        self.attempts[digest] = attempt
        request_id = f"req_{digest[:10].hex()}{attempt:02d}"
        garbage = False
        if self.any_faults:
            f = hashlib.sha256(digest + attempt.to_bytes(4, "big")).digest()
            u_err = int.from_bytes(f[0:8], "big") / _U64
            u_hang = int.from_bytes(f[8:16], "big") / _U64
            u_garbage = int.from_bytes(f[16:24], "big") / _U64
            u_lat = int.from_bytes(f[24:32], "big") / _U64
            garbage = u_garbage < cfg.garbage_rate
            if u_hang < cfg.hang_rate:
                st.hangs += 1
                await asyncio.sleep(cfg.hang_s)
            else:
                delay_ms = cfg.latency_ms + cfg.latency_jitter_ms * (2.0 * u_lat - 1.0)
                if delay_ms > 0:
                    await asyncio.sleep(delay_ms / 1000.0)
            if u_err < cfg.error_rate:
                st.errors_injected += 1
                status = _ERROR_STATUSES[min(2, int(u_err / cfg.error_rate * 3))]
                return self._error(
                    api,
                    status,
                    "The server had an error while processing your request (simulated).",
                    etype="server_error",
                    headers=decision.headers,
                    request_id=request_id,
                )
        reply = make_reply(
            sreq.text,
            digest,
            quality=cfg.quality_of(model),
            max_tokens=sreq.max_tokens,
            garbage=garbage,
        )
        st.served += 1
        st.served_by_model[model] = st.served_by_model.get(model, 0) + 1
        st.served_by_kind[reply.kind] = st.served_by_kind.get(reply.kind, 0) + 1
        if reply.garbage:
            st.garbage += 1
        completion_tokens = reply.completion_tokens
        if api == _GEMINI:
            payload: dict[str, Any] = {
                "candidates": [{
                    "content": {"parts": [{"text": reply.text}], "role": "model"},
                    "finishReason": "MAX_TOKENS" if reply.finish_reason == "length" else "STOP",
                    "index": 0,
                }],
                "usageMetadata": {
                    "promptTokenCount": prompt_tokens,
                    "candidatesTokenCount": completion_tokens,
                    "totalTokenCount": prompt_tokens + completion_tokens,
                },
                "modelVersion": model,
                "responseId": request_id,
            }
        else:
            payload = {
                "id": f"chatcmpl-{digest[:12].hex()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
                "system_fingerprint": "fp_judgekit_sim",
            }
        headers = decision.headers.copy() if decision.headers else {}
        headers["x-request-id"] = request_id
        return web.Response(body=_dumps(payload), content_type=_JSON, headers=headers)


_CORE_KEY: web.AppKey[_Core] = web.AppKey("judgekit_sim", _Core)


def build_app(config: SimConfig | None = None) -> web.Application:
    """The aiohttp application of a simulator (state, counters and limits included)."""
    core = _Core(config or SimConfig())
    app = web.Application()
    app[_CORE_KEY] = core

    async def chat(request: web.Request) -> web.Response:
        return await core.handle(_OPENAI, request)

    async def gemini(request: web.Request) -> web.Response:
        spec = request.match_info["spec"]
        model, sep, method = spec.rpartition(":")
        if not sep or method != "generateContent":
            return core._error(
                _GEMINI, 404, f"method '{method or spec}' is not supported by the simulator"
            )
        return await core.handle(_GEMINI, request, model)

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
        return web.Response(body=_dumps(core.stats.snapshot()), content_type=_JSON)

    async def reset(request: web.Request) -> web.Response:
        core.reset()
        return web.Response(body=_dumps(core.stats.snapshot()), content_type=_JSON)

    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/chat/completions", chat)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model}", get_model)
    app.router.add_post("/v1beta/models/{spec}", gemini)
    app.router.add_post("/v1/models/{spec}", gemini)
    app.router.add_get("/sim/stats", stats)
    app.router.add_post("/sim/reset", reset)
    return app


# ----------------------------------------------------------------------------------------
# runners
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


def _url_host(host: str) -> str:
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
        self._runner: web.AppRunner | None = None
        self.host = "127.0.0.1"
        self.port = 0

    @property
    def root_url(self) -> str:
        """``http://HOST:PORT`` (what the Gemini SDK takes as ``base_url``)."""
        return f"http://{_url_host(self.host)}:{self.port}"

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
        return self._core.stats.snapshot()

    def reset(self) -> None:
        """Same as ``POST /sim/reset``."""
        self._core.reset()

    async def __aenter__(self) -> "SimServer":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class SimThread:
    """A simulator running in a background thread with its own event loop (for sync code).

    ``start()`` blocks until it listens; usable as a context manager.
    """

    def __init__(self, config: SimConfig | None = None, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config or SimConfig()
        self.server = SimServer(self.config)
        self._host, self._port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def root_url(self) -> str:
        return self.server.root_url

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self.server.start(self._host, self._port))
        except BaseException as e:  # reported to start()
            self._error = e
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.server.stop())
            loop.close()

    def start(self, timeout: float = 20.0) -> "SimThread":
        """Start the thread and wait until the server listens."""
        if self._thread is not None:
            raise RuntimeError("the simulator thread is already started")
        self._thread = threading.Thread(target=self._run, name="judgekit-sim", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise SimStartError(f"the simulator thread did not start within {timeout} s")
        if self._error is not None:
            raise SimStartError(f"the simulator thread failed to start: {self._error!r}") from self._error
        return self

    def _call(self, fn: Any) -> Any:
        loop = self._loop
        if loop is None or not loop.is_running():
            return fn()

        async def _invoke() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(_invoke(), loop).result(10)

    def stats(self) -> dict[str, Any]:
        """The counters, read on the server's own loop."""
        return self._call(self.server.stats)

    def reset(self) -> None:
        """Zero the counters (see ``POST /sim/reset``)."""
        self._call(self.server.reset)

    def stop(self) -> None:
        """Stop the server and join the thread."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    def __enter__(self) -> "SimThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SimProcess:
    """A simulator in a subprocess (``python -m judgekit.sim``), so it has its own CPU core.

    ``start()`` waits (up to ``startup_timeout`` s) for the ``JUDGEKIT_SIM_READY <port>``
    line; ``stop()`` terminates, then kills.  ``stats()`` reads ``/sim/stats`` over HTTP.
    Usable as a context manager.
    """

    def __init__(
        self,
        config: SimConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 20.0,
        python: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.config = config or SimConfig()
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self.python = python or sys.executable
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self._stderr: Any = None
        self._reader: threading.Thread | None = None

    @property
    def root_url(self) -> str:
        return f"http://{_url_host(self.host)}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def command(self) -> list[str]:
        """The command line the subprocess runs."""
        return [
            self.python, "-m", "judgekit.sim",
            "--config-json", self.config.model_dump_json(),
            "--host", self.host,
            "--port", str(self.port),
        ]

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read()[-4000:]
        except (OSError, ValueError):
            return ""

    def start(self) -> "SimProcess":
        """Spawn the server and wait until it listens."""
        if self.proc is not None:
            raise RuntimeError("the simulator process is already started")
        env = dict(os.environ if self.env is None else self.env)
        pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.proc = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        stdout = self.proc.stdout
        assert stdout is not None

        def pump() -> None:  # reads the ready line, then drains stdout until EOF
            for line in stdout:
                lines.put(line)
            lines.put(None)

        self._reader = threading.Thread(target=pump, name="judgekit-sim-stdout", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = lines.get(timeout=max(0.0, left)) if left > 0 else None
            except queue.Empty:
                line = None
            if line is not None and line.startswith(READY_PREFIX):
                self.port = int(line.split()[1])
                return self
            if line is None:  # timeout or EOF
                code = self.proc.poll()
                if code is None and left > 0:  # EOF: the child is exiting, collect its code
                    try:
                        code = self.proc.wait(5)
                    except subprocess.TimeoutExpired:
                        pass
                self._kill()
                why = (
                    f"exited with code {code}"
                    if code is not None
                    else f"did not report ready within {self.startup_timeout:g} s"
                )
                raise SimStartError(
                    f"judgekit simulator subprocess {why}.\ncommand: {' '.join(self.command()[:3])} ...\n"
                    f"stderr:\n{self._read_stderr() or '(empty)'}"
                )

    def _kill(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()

    def stop(self) -> None:
        """Terminate the subprocess (kill it if it does not exit within 5 s)."""
        if self.proc is None:
            return
        self._kill()
        self.proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _get(self, path: str, method: str = "GET") -> dict[str, Any]:
        req = urllib.request.Request(self.root_url + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict[str, Any]:
        """The counters, from ``GET /sim/stats``."""
        return self._get("/sim/stats")

    def reset(self) -> dict[str, Any]:
        """``POST /sim/reset``; returns the zeroed counters."""
        return self._get("/sim/reset", "POST")

    def __enter__(self) -> "SimProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ----------------------------------------------------------------------------------------
# blocking entry point
# ----------------------------------------------------------------------------------------


async def _serve(config: SimConfig, host: str, port: int, ready_line: bool) -> None:
    server = SimServer(config)
    await server.start(host, port)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, done.set)
        except (NotImplementedError, RuntimeError):  # e.g. Windows
            pass
    if ready_line:
        sys.stdout.write(f"{READY_PREFIX} {server.port}\n")
        sys.stdout.flush()
    try:
        await done.wait()
    finally:
        await server.stop()


def serve_forever(
    config: SimConfig | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    ready_line: bool = True,
) -> None:
    """Run a simulator until SIGINT/SIGTERM.

    Prints exactly one line, ``JUDGEKIT_SIM_READY <port>``, flushed, once it listens (unless
    ``ready_line`` is False).  Uses uvloop when it is installed.
    """
    config = config or SimConfig()
    try:
        import uvloop  # type: ignore[import-not-found]

        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        runner(_serve(config, host, port, ready_line))
    except KeyboardInterrupt:
        pass
