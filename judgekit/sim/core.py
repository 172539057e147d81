"""The simulator's request pipeline, shared by every API it serves: :class:`_Core` and its counters.

The pipeline of a request (:meth:`_Core.run`): count it, check the key (401), parse the body
(400), check the model (404), charge the rate limits (429), count the attempt of this request
hash, draw the faults, sleep (latency or hang), maybe answer 500/502/503, else build the reply:
a chat completion (:meth:`_Core.handle`, :func:`judgekit.sim.replies.make_reply`) or generated
images (:mod:`judgekit.sim.images`), counted in the same counters.  The wire formats live in
:mod:`judgekit.sim.protocol`, the routes in :mod:`judgekit.sim.server`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from judgekit.sim.config import SimConfig
from judgekit.sim.limits import RateDecision, RateLimiter
from judgekit.sim.protocol import (
    _GEMINI,
    _JSON,
    _BadRequest,
    _dumps,
    _parse_gemini,
    _parse_openai,
    _SimRequest,
    completion_payload,
    error_response,
)
from judgekit.sim.replies import make_reply

__all__ = ["SimStats", "Admitted", "Served"]

_ERROR_STATUSES = (500, 502, 503)
_U64 = float(1 << 64)


# ----------------------------------------------------------------------------------------
# counters
# ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class SimStats:
    """Counters of a running simulator (see ``GET /sim/stats``).

    ``requests`` counts every completion and image generation request received (any API);
    ``served`` the successful (200) ones, split by model and by kind (``pairwise``, ``vfs``,
    ``answer``, ``caption``, GuessBench's ``guess``, ``extract``, ``self_refine``,
    ``retrieval_check``, and ``image`` for image generations).
    Garbage replies are served *and* counted in ``garbage``; a hanging request counts in
    ``hangs`` when it starts hanging and in ``served`` if it is answered.
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
# the pipeline
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request that passed the checks and the rate limits and drew no injected error."""

    digest: bytes
    """The request hash."""
    attempt: int
    """How many times this same request was seen, this one included."""
    request_id: str
    """Sent back in ``x-request-id``."""
    garbage: bool
    """The fault draw asks for a deliberately broken (yet 200) reply."""


@dataclass(frozen=True, slots=True)
class Served:
    """The 200 reply of an admitted request: the JSON body and what to count it as."""

    body: bytes
    kind: str
    garbage: bool = False


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

    #: an error body in the calling API's shape (see :func:`judgekit.sim.protocol.error_response`)
    _error = staticmethod(error_response)

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
        """A chat completion (OpenAI ``chat.completions`` or Gemini ``generateContent``)."""
        if api == _GEMINI:
            parse: Callable[[Any], Any] = lambda body: _parse_gemini(body, model_from_path, self.seed_bytes)
        else:
            parse = lambda body: _parse_openai(body, self.seed_bytes)
        return await self.run(api, request, parse, lambda sreq, adm: self._chat_reply(api, sreq, adm))

    async def _chat_reply(self, api: str, sreq: _SimRequest, adm: Admitted) -> Served:
        reply = make_reply(
            sreq.text,
            sreq.digest,
            quality=self.config.quality_of(sreq.model),
            max_tokens=sreq.max_tokens,
            garbage=adm.garbage,
            images=sreq.images_meta,
            last_user_text=sreq.last_user_text,
        )
        payload = completion_payload(api, sreq.model, reply, sreq.prompt_tokens, sreq.digest, adm.request_id)
        return Served(_dumps(payload), reply.kind, reply.garbage)

    async def run(
        self,
        api: str,
        request: web.Request,
        parse: Callable[[Any], Any],
        answer: Callable[[Any, Admitted], Awaitable[Served]],
    ) -> web.Response:
        """The pipeline every simulated API call goes through (see the module docstring).

        ``parse`` turns the JSON body into a request object with ``model``, ``digest`` (the
        request hash) and ``rate_tokens`` (what the TPM limit is charged), raising
        :class:`~judgekit.sim.protocol._BadRequest` for a 400; ``answer`` makes the 200 reply of
        an admitted request.  Errors come back in the shape of ``api``.
        """
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
            sreq = parse(body)
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
        decision: RateDecision = self.limiter.check(model, sreq.rate_tokens)
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
        served = await answer(sreq, Admitted(digest, attempt, request_id, garbage))
        st.served += 1
        st.served_by_model[model] = st.served_by_model.get(model, 0) + 1
        st.served_by_kind[served.kind] = st.served_by_kind.get(served.kind, 0) + 1
        if served.garbage:
            st.garbage += 1
        headers = decision.headers.copy() if decision.headers else {}
        headers["x-request-id"] = request_id
        return web.Response(body=served.body, content_type=_JSON, headers=headers)
