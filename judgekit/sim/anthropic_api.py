"""The simulator's copy of Anthropic's Messages API: ``POST /v1/messages``.

Request (Anthropic's shape): ``{model, max_tokens, messages, system, temperature, top_p,
stop_sequences, thinking}``, each message's ``content`` a string or a list of ``text`` and
``image`` blocks (``base64`` or ``url`` sources); the key in ``x-api-key`` (or a bearer token, as
anthropic SDK 2.x sends it).  Prompt tokens are
estimated as the chat endpoint's text (four characters a token) plus each image's tokens by
Claude's rule from its pixel size (``width * height / 750`` after the API's downscaling).  ``max_tokens`` is
required, as by the real API.  With ``SimConfig.model_param_rules`` (the default) the real API's
parameter errors are answered too: ``temperature`` and ``top_p`` together on Claude Opus 4.1 /
Sonnet 4.5 / Haiku 4.5 and later names, a ``temperature`` other than 1 with thinking on, a
thinking budget under 1,024 or not below ``max_tokens``, more than 4 ``cache_control`` marks.

The request goes through the chat pipeline (:meth:`judgekit.sim.core._Core.run`: key, model,
quota, rate limits, injected errors, hangs, latency, counters) and is answered by the same reply
generator as ``/v1/chat/completions`` (:func:`judgekit.sim.replies.make_reply`), over the same
request hash: an Anthropic request gets the very answer its chat-completions twin gets (same
model, seed, texts, images and ``max_tokens`` / ``temperature`` / ``top_p``).  Replies and errors
come back in Anthropic's shapes:

- 200: ``{id, type: "message", role, model, content: [{type: "text", text}], stop_reason
  (end_turn | max_tokens | stop_sequence | refusal), stop_sequence, usage: {input_tokens,
  cache_creation_input_tokens, cache_read_input_tokens, cache_creation, output_tokens}}``; with
  ``SimConfig.reasoning_tokens`` for the model a ``thinking`` block comes first and its tokens are
  in ``output_tokens``.  ``reply_faults``: ``refusal`` is ``stop_reason: "refusal"`` with no
  content, ``reasoning_exhausted`` a thinking block alone with ``max_tokens``, ``empty`` no content
  with ``end_turn``; ``content_filter`` (no such shape here) is answered normally.
- errors: ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with the errors
  guide's types (400 ``invalid_request_error``, 401 ``authentication_error``, 404
  ``not_found_error``, 429 ``rate_limit_error``, 500 ``api_error``, 529 ``overloaded_error``).
  The injected faults of ``SimConfig.error_rate`` are a 500 ``api_error`` or (for the pipeline's
  502 and 503, two thirds of them) a 529 ``overloaded_error``.  A spent quota
  (``quota_exhausted_models``) is the API's 400 "Your credit balance is too low ...".
- headers: ``request-id``; ``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}``
  (the reset an RFC 3339 time) from the pipeline's buckets; ``retry-after`` (whole seconds) on a 429.

Prompt caching: the request's ``cache_control`` marks are breakpoints.  A prefix (the content up
to and including a marked block, keyed by a hash of the model and that content) of at least the
model's minimum in estimated tokens (:func:`judgekit.providers.anthropic_wire.prompt_cache_min_tokens`,
as Anthropic documents it: 4,096 for Opus 4.5 and later and Haiku 4.5, 2,048 for Haiku 3 and 3.5,
1,024 for the others) is cached for 5 minutes; a shorter one is neither written nor read (no
``cache_creation_input_tokens``, no ``cache_read_input_tokens``), as the real API does.  The first request
that marks it is billed ``cache_creation_input_tokens``, a later one ``cache_read_input_tokens``
for the longest cached prefix (and creation for the rest up to its last breakpoint), as the real
API does; ``input_tokens`` is what is left.  A request reads what was written before it started
(was admitted, before the simulated latency): two requests in flight together both write (the
API's prompt-caching guide: an entry is there for concurrent requests only once the first
response has begun); the clock is the OpenAI and Gemini endpoints' (:mod:`judgekit.sim.prefix_cache`).
Counted in :class:`AnthropicStats`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web
from multidict import CIMultiDict

from judgekit.sim.api_replies import fault_for
from judgekit.sim.protocol import _JSON, _PNG_B64, _BadRequest, _dumps, _gen_key, _int_or_none, _png_labels, _SimRequest
from judgekit.sim.replies import make_reply

if TYPE_CHECKING:
    from judgekit.sim.core import Admitted, Served, _Core

__all__ = ["AnthropicSim", "AnthropicStats", "MESSAGES_PATH", "ANTHROPIC", "CACHE_TTL_S", "parse_messages"]

MESSAGES_PATH = "/v1/messages"
ANTHROPIC = "anthropic"
CACHE_TTL_S = 300.0
_MAX_BREAKPOINTS = 4
_KEEP_PREFIXES = 20_000
_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                500: "api_error", 529: "overloaded_error"}
_ORG = "00000000-0000-4000-8000-judgekitsim0"
_CREDIT_MESSAGE = ("Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
                   "upgrade or purchase credits.")
_RATE_MESSAGE = ("This request would exceed the rate limit for your organization ({org}) of {limit} {what} per "
                 "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the "
                 "response headers for current usage. Please reduce the prompt length or the maximum tokens "
                 "requested, or try again later. You may also contact sales at "
                 "https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.")
_THINKING_TEXT = "Let me weigh this carefully before answering."
_UNKNOWN_IMAGE_TOKENS = 85


@dataclass(slots=True)
class AnthropicStats:
    """Counters of the Messages API (merged into ``GET /sim/stats``; its requests, 200s and
    faults are in the shared pipeline's :class:`~judgekit.sim.core.SimStats`, by API
    ``anthropic``)."""

    overloaded: int = 0
    """529 ``overloaded_error`` replies."""
    cache_hits: int = 0
    """200s that read a cached prefix."""
    cache_read_tokens: int = 0
    cache_writes: int = 0
    """200s that wrote a prefix to the cache."""
    cache_creation_tokens: int = 0

    def snapshot(self) -> dict[str, int]:
        return {f"anthropic_{f.name}": getattr(self, f.name) for f in fields(self)}

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)


@dataclass(slots=True)
class _MessagesRequest(_SimRequest):
    prefixes: tuple[tuple[bytes, int], ...] = ()
    """(hash, estimated tokens) of the content up to each ``cache_control`` mark, in order."""
    stop_sequences: tuple[str, ...] = ()
    thinking: int | None = None
    image_tokens: int = 0
    """The images' tokens by Claude's rule (:func:`_image_tokens`)."""

    @property
    def prompt_tokens(self) -> int:
        return _tokens(len(self.text), self.image_tokens)


def _tokens(chars: int, image_tokens: int) -> int:
    """The simulated prompt size: about four characters per token, and the images' tokens."""
    return max(1, (chars + 3) // 4 + image_tokens)


def _image_tokens(b64: str) -> int:
    """An image's tokens by Claude's rule (:mod:`judgekit.cost.images`) from its size (read from
    the header); 85 (the chat endpoint's figure) when the size is unknown."""
    from judgekit.cost.images import image_tokens
    from judgekit.types import _image_size

    try:
        head = base64.b64decode(b64[:32]) if b64.startswith(_PNG_B64) else base64.b64decode(b64)
    except (binascii.Error, ValueError):
        return _UNKNOWN_IMAGE_TOKENS
    width, height = _image_size(head)
    if width <= 0 or height <= 0:
        return _UNKNOWN_IMAGE_TOKENS
    return image_tokens(ANTHROPIC, "claude", width, height, None)


def _claude_version(model: str) -> tuple[int, int] | None:
    from judgekit.providers.params import claude_version

    return claude_version(model)


def _check_rules(model: str, max_tokens: int, temperature: Any, top_p: Any, thinking: int | None) -> None:
    """The real API's 400s for parameters (see the module docstring)."""
    if thinking is not None:
        if thinking < 1024:
            raise _BadRequest("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if thinking >= max_tokens:
            raise _BadRequest("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                              "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                              "#max-tokens-and-context-window-size")
        if temperature is not None and temperature != 1:
            raise _BadRequest("`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                              "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                              "#feature-compatibility")
    version = _claude_version(model)
    if version is not None and version >= (4, 1) and temperature is not None and top_p is not None:
        raise _BadRequest("`temperature` and `top_p` cannot both be specified for this model. Please use only one.")


def _thinking_budget(thinking: Any) -> int | None:
    if thinking is None:
        return None
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled"):
        raise _BadRequest("thinking: expected an object with type 'enabled' or 'disabled'")
    if thinking["type"] == "disabled":
        return None
    budget = thinking.get("budget_tokens")
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise _BadRequest("thinking.enabled.budget_tokens: Field required")
    return budget


class _Reader:
    """Walks a request's content in order: the request hash's chunks (as the chat-completions
    parser writes them), the texts, the image labels and the prefix at each cache mark."""

    def __init__(self, seed_bytes: bytes, model: str) -> None:
        self.head = [seed_bytes, model.encode()]
        self.chunks: list[bytes] = []
        self.texts: list[str] = []
        self.metas: list[dict[str, str]] = []
        self.images = 0
        self.image_tokens = 0
        self.prefixes: list[tuple[bytes, int]] = []

    def role(self, role: str) -> None:
        self.chunks.append(b"\x1erole:" + role.encode())

    def text(self, text: str) -> None:
        self.texts.append(text)
        self.chunks.append(b"\x1ft:" + text.encode("utf-8", "surrogatepass"))

    def image(self, payload: str, labels: dict[str, str], tokens: int) -> None:
        self.images += 1
        self.image_tokens += tokens
        self.metas.append(labels)
        self.chunks.append(b"\x1fi:" + payload.encode())

    def mark(self) -> None:
        if len(self.prefixes) >= _MAX_BREAKPOINTS:
            raise _BadRequest(f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                              f"Found {len(self.prefixes) + 1}.")
        digest = hashlib.sha256(b"\x1d".join(self.head + self.chunks)).digest()
        self.prefixes.append((digest, _tokens(len("\n".join(self.texts)), self.image_tokens)))

    def block(self, block: Any, role: str) -> None:
        if not isinstance(block, dict):
            raise _BadRequest("messages: each content block must be an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str) or not text:
                raise _BadRequest("messages: text content blocks must be non-empty")
            self.text(text)
        elif kind == "image":
            source = block.get("source")
            if not isinstance(source, dict):
                raise _BadRequest("messages: an image block needs a 'source'")
            if source.get("type") == "base64":
                data, media = source.get("data"), source.get("media_type")
                if not isinstance(data, str) or not data:
                    raise _BadRequest("messages: image.source.data: Field required")
                if media not in _MEDIA_TYPES:
                    raise _BadRequest("messages: image.source.media_type: Input should be 'image/jpeg', "
                                      "'image/png', 'image/gif' or 'image/webp'")
                self.image(data, _png_labels(data), _image_tokens(data))
            elif source.get("type") == "url" and isinstance(source.get("url"), str):
                self.image(source["url"], {}, _UNKNOWN_IMAGE_TOKENS)
            else:
                raise _BadRequest("messages: image.source: expected a base64 or url source")
        elif kind in ("thinking", "redacted_thinking") and role == "assistant":
            return  # a previous turn's thinking, passed back: not part of the prompt's text
        else:
            raise _BadRequest(f"messages: unsupported content block type {kind!r}")
        if block.get("cache_control") is not None:
            self.mark()


def parse_messages(body: Any, seed_bytes: bytes, *, rules: bool = True) -> _MessagesRequest:
    """A Messages API body as the simulator's request (see the module docstring); raises
    :class:`~judgekit.sim.protocol._BadRequest` for the real API's 400s."""
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _BadRequest("model: Field required")
    if body.get("stream"):
        raise _BadRequest("streaming is not supported by the judgekit simulator")
    if body.get("max_tokens") is None:
        raise _BadRequest("max_tokens: Field required")
    max_tokens = _int_or_none(body.get("max_tokens"), "max_tokens")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("messages: at least one message is required")
    temperature, top_p = body.get("temperature"), body.get("top_p")
    thinking = _thinking_budget(body.get("thinking"))
    if rules:
        _check_rules(model, max_tokens, temperature, top_p, thinking)
    stops = body.get("stop_sequences") or []
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise _BadRequest("stop_sequences: expected a list of non-empty strings")
    reader = _Reader(seed_bytes, model)
    system = body.get("system")
    if isinstance(system, str):
        if system:
            reader.role("system")
            reader.text(system)
    elif isinstance(system, list):
        reader.role("system")
        for block in system:
            if not isinstance(block, dict) or block.get("type") != "text":
                raise _BadRequest("system: expected text blocks")
            reader.block(block, "system")
    elif system is not None:
        raise _BadRequest("system: expected a string or a list of text blocks")
    last_user = ""
    for msg in messages:
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            raise _BadRequest("messages: each message needs a role of 'user' or 'assistant'")
        role = msg["role"]
        reader.role(role)
        first = len(reader.texts)
        content = msg.get("content")
        if isinstance(content, str):
            reader.text(content)
        elif isinstance(content, list):
            for block in content:
                reader.block(block, role)
        else:
            raise _BadRequest("messages: content must be a string or a list of content blocks")
        if role == "user":
            last_user = "\n".join(reader.texts[first:])
    # the request hash is the chat-completions parser's, over the same chunks in the same order
    chunks = [*reader.head, _gen_key(max_tokens, temperature, top_p, None)]
    if thinking is not None:
        chunks.append(b"thinking:" + str(thinking).encode())
    digest = hashlib.sha256(b"\x1d".join(chunks + reader.chunks)).digest()
    return _MessagesRequest(model, "\n".join(reader.texts), reader.images, max_tokens, digest, tuple(reader.metas),
                            last_user, body, tuple(reader.prefixes), tuple(stops), thinking, reader.image_tokens)


def _rfc3339(seconds_from_now: float) -> str:
    when = datetime.fromtimestamp(time.time() + max(0.0, seconds_from_now), tz=UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _headers(pipeline: Any) -> dict[str, str]:
    """The pipeline's headers (OpenAI's names) in Anthropic's: ``request-id``,
    ``anthropic-ratelimit-*`` (reset as an RFC 3339 time), ``retry-after``, ``x-should-retry``."""
    from judgekit.providers.base import parse_duration

    out: dict[str, str] = {}
    for kind in ("requests", "tokens"):
        for part in ("limit", "remaining", "reset"):
            value = pipeline.get(f"x-ratelimit-{part}-{kind}")
            if value is None:
                continue
            if part == "reset":
                value = _rfc3339(parse_duration(value) or 0.0)
            out[f"anthropic-ratelimit-{kind}-{part}"] = value
    for src, dst in (("x-request-id", "request-id"), ("Retry-After", "retry-after"), ("x-should-retry", "x-should-retry")):
        if pipeline.get(src) is not None:
            out[dst] = pipeline[src]
    return out


class AnthropicSim:
    """The Messages API of a simulator: routes, prompt cache and counters (see the module
    docstring)."""

    def __init__(self, core: _Core) -> None:
        self.core = core
        self.stats = AnthropicStats()
        self._cache: OrderedDict[bytes, tuple[float, float]] = OrderedDict()  # prefix -> (written, expires)
        self._clock = time.monotonic

    @property
    def clock(self) -> Callable[[], float]:
        """Seconds, for the cache's lifetimes and when a request started (tests set a fake one):
        the simulator's prompt-cache clock, shared with the chat endpoints."""
        return self.core.prefix_cache.clock if self.core is not None else self._clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        if self.core is not None:
            self.core.prefix_cache.clock = clock
        else:
            self._clock = clock

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(MESSAGES_PATH, self.messages)

    def reset(self) -> None:
        self.stats.reset()
        self._cache.clear()

    async def messages(self, request: web.Request) -> web.Response:
        key = request.headers.get("x-api-key")
        if key is not None:  # the pipeline's key check reads ``api-key``
            headers = CIMultiDict(request.headers)
            headers["api-key"] = key
            request = request.clone(headers=headers)
        rules = self.core.config.model_param_rules

        def parse(body: Any) -> _MessagesRequest:
            return parse_messages(body, self.core.seed_bytes, rules=rules)

        response = await self.core.run(ANTHROPIC, request, parse, self._answer)
        return self._reshape(response)

    # -- replies -----------------------------------------------------------------------------
    def prefix_cache(self, model: str, prefixes: tuple[tuple[bytes, int], ...],
                     started: float | None = None) -> tuple[int, int]:
        """(tokens read, tokens written) of a request's marked prefixes, answered now, that started
        at ``started`` (None: now); refreshes their lifetime."""
        from judgekit.providers.anthropic_wire import prompt_cache_min_tokens

        minimum = prompt_cache_min_tokens(model)
        eligible = [(h, n) for h, n in prefixes if n >= minimum]
        if not eligible:
            return 0, 0
        now = self.clock()
        seen = now if started is None else min(started, now)
        read = 0
        for h, n in reversed(eligible):
            entry = self._cache.get(h)
            if entry is not None and entry[0] <= seen < entry[1]:
                read = n
                break
        written = max(0, eligible[-1][1] - read)
        for h, _ in eligible:
            entry = self._cache.get(h)
            self._cache[h] = (now if entry is None or entry[1] <= now else entry[0], now + CACHE_TTL_S)
            self._cache.move_to_end(h)
        while len(self._cache) > _KEEP_PREFIXES:
            self._cache.popitem(last=False)
        return read, written

    async def _answer(self, sreq: _MessagesRequest, adm: Admitted) -> Served:
        from judgekit.sim.core import Served

        cfg = self.core.config
        model = sreq.model
        reasoning = cfg.reasoning_tokens.get(model, 0)
        fault = fault_for(cfg, ANTHROPIC, model, sreq.digest, adm.attempt)
        if fault == "content_filter":
            fault = None  # no such shape in the Messages API: answered normally
        budget = sreq.max_tokens or 1
        text_budget = budget
        if reasoning:
            if budget <= reasoning:
                fault = fault or "reasoning_exhausted"
            else:
                text_budget = budget - reasoning
        reply = make_reply(sreq.text, sreq.digest, quality=cfg.quality_of(model), max_tokens=text_budget,
                           garbage=adm.garbage, images=sreq.images_meta, last_user_text=sreq.last_user_text,
                           style=cfg.style_of(model), behaviours=cfg.behaviours())
        read, written = self.prefix_cache(model, sreq.prefixes, adm.started)
        content: list[dict[str, Any]] = []
        if reasoning:
            content.append({"type": "thinking", "thinking": _THINKING_TEXT, "signature": f"sim{sreq.digest[:8].hex()}"})
        stop_sequence = None
        visible = reply.completion_tokens
        if fault == "refusal":
            content, stop, visible, reasoning = [], "refusal", 0, 0
        elif fault == "reasoning_exhausted":
            stop, visible, reasoning = "max_tokens", 0, budget
        elif fault == "empty":
            content, stop, visible = [], "end_turn", 0
        else:
            text, stop = reply.text, "max_tokens" if reply.finish_reason == "length" else "end_turn"
            cut = min(((text.find(s), s) for s in sreq.stop_sequences if s in text), default=None)
            if cut is not None:
                text, stop, stop_sequence = text[:cut[0]], "stop_sequence", cut[1]
            content.append({"type": "text", "text": text})
        if read:
            self.stats.cache_hits += 1
            self.stats.cache_read_tokens += read
        if written:
            self.stats.cache_writes += 1
            self.stats.cache_creation_tokens += written
        payload = {
            "id": f"msg_sim{sreq.digest[:12].hex()}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": stop_sequence,
            "usage": {
                "input_tokens": max(0, sreq.prompt_tokens - read - written),
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
                "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
                "output_tokens": visible + reasoning,
                "service_tier": "standard",
            },
        }
        return Served(_dumps(payload), reply.kind, reply.garbage and fault is None, fault)

    # -- errors ------------------------------------------------------------------------------
    def _reshape(self, response: web.Response) -> web.Response:
        """The pipeline's reply (OpenAI's error shape and header names) in Anthropic's."""
        headers = _headers(response.headers)
        status = response.status
        if status == 200:
            return web.Response(body=response.body, status=200, content_type=_JSON, headers=headers)
        try:
            err = json.loads(response.body).get("error") or {}
        except (ValueError, AttributeError, TypeError):
            err = {}
        message = str(err.get("message") or "")
        if status == 429 and err.get("type") == "insufficient_quota":
            status, message = 400, _CREDIT_MESSAGE
            headers.pop("retry-after", None)
        elif status == 429:
            kind = "requests" if err.get("type") != "tokens" else "input tokens"
            limit = response.headers.get(f"x-ratelimit-limit-{'requests' if kind == 'requests' else 'tokens'}", "?")
            message = _RATE_MESSAGE.format(org=_ORG, limit=limit, what=kind)
        elif status in (502, 503):
            status, message = 529, "Overloaded"
            self.stats.overloaded += 1
        elif status >= 500:
            status, message = 500, "Internal server error"
        elif status == 401:
            message = "invalid x-api-key"
        body = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "invalid_request_error"),
                                           "message": message},
                "request_id": headers.get("request-id")}
        return web.Response(body=_dumps(body), status=status, content_type=_JSON, headers=headers)
