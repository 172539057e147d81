"""The simulator's request pipeline, shared by every API it serves: :class:`_Core` and its counters.

The pipeline of a request (:meth:`_Core.run`): count it, check the key (401; Gemini: 400
``API_KEY_INVALID``), parse the body and apply the model family's parameter rules (400), check
the model (404), refuse a model whose quota is spent (429 ``insufficient_quota`` & co.), charge
the rate limits (429), count the attempt of this request hash, draw the faults, sleep (latency
or hang), maybe answer 500/502/503, else build the reply: a chat completion
(:meth:`_Core.handle`, :func:`judgekit.sim.replies.make_reply`, shaped by
:mod:`judgekit.sim.api_replies`, maybe as a filtered, refused, blocked or empty reply) or
generated images (:mod:`judgekit.sim.images`), counted in the same counters.  The wire formats
live in :mod:`judgekit.sim.protocol`, the real APIs' error shapes in
:mod:`judgekit.sim.api_errors`, the routes in :mod:`judgekit.sim.app`.
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

from judgekit.sim.api_errors import auth_error, check_openai_params, quota_error, rate_limit_error
from judgekit.sim.api_replies import chat_payload, fault_for
from judgekit.sim.config import SimConfig
from judgekit.sim.limits import RateDecision, RateLimiter, format_duration
from judgekit.sim.prefix_cache import PrefixCache, minimum_tokens
from judgekit.sim.protocol import (
    _GEMINI,
    _JSON,
    _BadRequest,
    _dumps,
    _parse_gemini,
    _parse_openai,
    _SimRequest,
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

    Real-API outcomes: ``served_by_fault`` counts the 200 replies that carry no answer, by
    outcome (``content_filter``, ``refusal``, ``prompt_blocked_safety``... see
    ``SimConfig.reply_faults``; they are in ``served`` too); ``quota_exhausted`` the 429s of a
    spent quota (not in ``rate_limited``); ``unsupported_params`` the 400s of a parameter the
    model's family rejects, by parameter (in ``bad_requests`` too); ``served_by_api`` the 200s
    by API (``openai``, ``azure``, ``gemini``).
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
    quota_exhausted: int = 0
    served_by_fault: dict[str, int] = field(default_factory=dict)
    unsupported_params: dict[str, int] = field(default_factory=dict)
    served_by_api: dict[str, int] = field(default_factory=dict)
    prefix_cache_hits: int = 0
    """200s of the OpenAI and Gemini endpoints that read a cached prefix (``SimConfig.prefix_cache``)."""
    prefix_cache_tokens: int = 0
    """The cached prompt tokens those 200s reported."""

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
            "quota_exhausted": self.quota_exhausted,
            "served_by_fault": dict(self.served_by_fault),
            "unsupported_params": dict(self.unsupported_params),
            "served_by_api": dict(self.served_by_api),
            "prefix_cache_hits": self.prefix_cache_hits,
            "prefix_cache_tokens": self.prefix_cache_tokens,
        }

    def reset(self) -> None:
        """Zero every counter."""
        self.requests = self.served = self.rate_limited = self.errors_injected = 0
        self.hangs = self.garbage = self.auth_failures = self.not_found = 0
        self.bad_requests = self.quota_exhausted = 0
        self.prefix_cache_hits = self.prefix_cache_tokens = 0
        self.served_by_model = {}
        self.served_by_kind = {}
        self.served_by_fault = {}
        self.unsupported_params = {}
        self.served_by_api = {}


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
    started: float | None = None
    """When it was admitted, on the prompt cache's clock (None: a batch's request, answered at once)."""


@dataclass(frozen=True, slots=True)
class Served:
    """The 200 reply of an admitted request: the JSON body and what to count it as."""

    body: bytes
    kind: str
    garbage: bool = False
    fault: str | None = None
    """The no-answer outcome this 200 carries (``SimConfig.reply_faults``), if any."""


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
        self.quota_used: dict[str, int] = {}
        #: the OpenAI and Gemini endpoints' automatic prompt cache (judgekit.sim.prefix_cache)
        self.prefix_cache = PrefixCache(ttl_s=config.prefix_cache_ttl_s, step=config.prefix_cache_step)

    def reset(self) -> None:
        self.stats.reset()
        self.prefix_cache.clear()
        self.attempts.clear()
        self.limiter.reset()
        self.quota_used.clear()

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
        """A chat completion (OpenAI or Azure ``chat.completions``, Gemini ``generateContent``).

        For Azure, ``model_from_path`` is the model the deployment serves: it replaces the body's
        ``model``."""
        rules = self.config.model_param_rules
        if api == _GEMINI:
            parse: Callable[[Any], Any] = lambda body: _parse_gemini(body, model_from_path, self.seed_bytes)
        else:
            def parse(body: Any) -> _SimRequest:
                if model_from_path and isinstance(body, dict):
                    body = {**body, "model": model_from_path}
                sreq = _parse_openai(body, self.seed_bytes)
                if rules:
                    check_openai_params(body, sreq.model)
                return sreq
        return await self.run(api, request, parse, lambda sreq, adm: self._chat_reply(api, sreq, adm))

    async def _chat_reply(self, api: str, sreq: _SimRequest, adm: Admitted) -> Served:
        cfg = self.config
        model = sreq.model
        reasoning = cfg.reasoning_tokens.get(model, 0)
        fault = fault_for(cfg, api, model, sreq.digest, adm.attempt)
        budget = sreq.max_tokens
        text_budget = budget
        if reasoning and budget is not None:  # reasoning spends the output budget first
            if budget <= reasoning:
                fault = fault or ("thinking_exhausted" if api == _GEMINI else "reasoning_exhausted")
            else:
                text_budget = budget - reasoning
        reply = make_reply(
            sreq.text,
            sreq.digest,
            quality=cfg.quality_of(model),
            max_tokens=text_budget,
            garbage=adm.garbage,
            images=sreq.images_meta,
            last_user_text=sreq.last_user_text,
            style=cfg.style_of(model),
            behaviours=cfg.behaviours(),
        )
        payload = chat_payload(
            api, model, reply,
            fault=fault,
            prompt_tokens=sreq.prompt_tokens,
            reasoning_tokens=reasoning,
            cached_tokens=self._cached_tokens(api, sreq, adm),
            budget=budget if budget is not None else (reasoning or 4096),
            digest=sreq.digest,
            request_id=adm.request_id,
        )
        return Served(_dumps(payload), reply.kind, reply.garbage and fault is None, fault)

    def _cached_tokens(self, api: str, sreq: _SimRequest, adm: Admitted) -> int:
        """The prompt tokens a reply reports as cached: ``cached_prompt_share`` of them when set
        for the model, else the prefix cache's hit (``SimConfig.prefix_cache``), else 0."""
        cfg = self.config
        share = cfg.cached_prompt_share.get(sreq.model)
        if share is not None:
            return int(sreq.prompt_tokens * share)
        if not cfg.prefix_cache or not sreq.content:
            return 0
        hit = self.prefix_cache.use(api, sreq.model, sreq.content, started=adm.started,
                                    minimum=minimum_tokens(api, sreq.model, cfg.prefix_cache_min_tokens))
        cached = min(hit.cached_tokens, sreq.prompt_tokens)
        if cached:
            self.stats.prefix_cache_hits += 1
            self.stats.prefix_cache_tokens += cached
        return cached

    def _reset_headers(self, headers: dict[str, str], decision: RateDecision) -> dict[str, str]:
        """``headers`` with the ``x-ratelimit-reset-*`` values scaled or replaced as configured."""
        cfg = self.config
        if cfg.reset_header_scale == 1 and cfg.reset_requests_s is None and cfg.reset_tokens_s is None:
            return headers
        out = dict(headers)
        for kind, fixed in (("requests", cfg.reset_requests_s), ("tokens", cfg.reset_tokens_s)):
            name = f"x-ratelimit-reset-{kind}"
            if name not in out:
                continue
            if fixed is not None:
                out[name] = format_duration(fixed)
            else:
                out[name] = format_duration(decision.reset_s.get(kind, 0.0) * cfg.reset_header_scale)
        return out

    def _limit_headers(self, api: str, decision: RateDecision) -> dict[str, str]:
        """The rate-limit headers a reply of ``api`` carries (none on Gemini, as the real API)."""
        if api == _GEMINI and not self.config.gemini_retry_after:
            return {}
        return self._reset_headers(decision.headers, decision) if decision.headers else {}

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
            return auth_error(api, self._next_id())
        try:
            raw = await request.read()
            try:
                body = json.loads(raw)
            except ValueError as e:
                raise _BadRequest(f"could not parse the JSON body: {e}") from None
            sreq = parse(body)
        except _BadRequest as e:
            st.bad_requests += 1
            if e.param is not None:
                st.unsupported_params[e.param] = st.unsupported_params.get(e.param, 0) + 1
            return self._error(api, 400, str(e), param=e.param, code=e.code, request_id=self._next_id())
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
        no_retry = cfg.should_retry_false
        quota = cfg.quota_exhausted_models.get(model)
        if quota is not None and self.quota_used.get(model, 0) >= cfg.quota_free_requests:
            st.quota_exhausted += 1
            return quota_error(
                api, quota, model,
                limit=cfg.quota_free_requests,
                retry_s=cfg.quota_retry_delay_s,
                headers={"x-should-retry": "false"} if "quota" in no_retry else None,
                request_id=self._next_id(),
            )
        decision: RateDecision = self.limiter.check(model, sreq.rate_tokens)
        limit_headers = self._limit_headers(api, decision)
        if not decision.allowed:
            st.rate_limited += 1
            wait = decision.retry_after_s
            kind = decision.limited_by or "requests"
            h = dict(limit_headers)
            if cfg.gemini_retry_after if api == _GEMINI else cfg.openai_retry_after:
                h["Retry-After"] = str(max(1, math.ceil(wait)))
                h["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
            if "rate_limit" in no_retry:
                h["x-should-retry"] = "false"
            remaining = decision.headers.get(f"x-ratelimit-remaining-{kind}", "0")
            return rate_limit_error(
                api, model, kind,
                limit=(cfg.rpm if kind == "requests" else cfg.tpm) or 0,
                remaining=int(remaining),
                requested=1 if kind == "requests" else sreq.rate_tokens,
                wait_s=wait,
                free_tier=cfg.gemini_free_tier,
                headers=h,
                request_id=self._next_id(),
            )
        digest = sreq.digest
        attempt = self.attempts.get(digest, 0) + 1
        self.attempts[digest] = attempt
        request_id = f"req_{digest[:10].hex()}{attempt:02d}"
        started = self.prefix_cache.clock()
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
                h = dict(limit_headers)
                if "server_error" in no_retry:
                    h["x-should-retry"] = "false"
                return self._error(
                    api,
                    status,
                    "The server had an error while processing your request (simulated).",
                    etype="server_error",
                    headers=h,
                    request_id=request_id,
                )
        served = await answer(sreq, Admitted(digest, attempt, request_id, garbage, started))
        st.served += 1
        st.served_by_model[model] = st.served_by_model.get(model, 0) + 1
        st.served_by_kind[served.kind] = st.served_by_kind.get(served.kind, 0) + 1
        st.served_by_api[api] = st.served_by_api.get(api, 0) + 1
        if served.fault is not None:
            st.served_by_fault[served.fault] = st.served_by_fault.get(served.fault, 0) + 1
        if served.garbage:
            st.garbage += 1
        if quota is not None:
            self.quota_used[model] = self.quota_used.get(model, 0) + 1
        headers = dict(limit_headers)
        headers["x-request-id"] = request_id
        return web.Response(body=served.body, content_type=_JSON, headers=headers)
