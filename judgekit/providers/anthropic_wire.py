"""The Anthropic Messages API's wire format: a request's params out, a reply's JSON in.

Pure functions, shared by the live provider (:mod:`judgekit.providers.anthropic`) and any batch
layer (a Message Batches request's ``params`` is :func:`message_params`; a succeeded result's
``message`` is read by :func:`message_response`).

Request (:func:`message_params`): system messages become the ``system`` text blocks, in order;
every other message a ``user`` / ``assistant`` turn whose parts become ``text`` and ``image``
blocks in the request's order (images as ``base64`` sources; an empty text part is left out, as
the API refuses empty text blocks).  Generation fields come from
:func:`judgekit.providers.params.anthropic_params`.

Prompt caching (``cache_prefix``): the fixed prefix a judge repeats across calls is marked with
``cache_control = {"type": "ephemeral"}`` (5 minutes), at most :data:`MAX_BREAKPOINTS` marks
(the API's limit is 4), never moving any content:

1. on the last ``system`` block;
2. in the first user turn, on the last image that comes before its last text block: the item's
   images, which a pairwise judge sends again in both orders and for every candidate, before the
   answers (Creation-MMBench's judge turn is ``images..., text``).

A prefix shorter than the model's minimum (:func:`prompt_cache_min_tokens`: 4,096 tokens for Opus
4.5 and later and Haiku 4.5, 2,048 for Haiku 3 and 3.5, 1,024 for the others) is not cached by the
API and costs nothing more; a prefix that is cached costs 1.25x input once (the write) and 0.1x on
every read within 5 minutes.

Reply (:func:`message_response`): the text blocks joined (``thinking`` and ``redacted_thinking``
blocks, and any other kind, are not the answer).  ``stop_reason`` is normalised as judgekit's
finish reasons: ``end_turn`` and ``stop_sequence`` -> ``stop``, ``max_tokens`` -> ``length``.
``refusal`` is :class:`~judgekit.errors.Refused` (whatever text came before the classifier
stopped it is not an answer); no text with ``max_tokens`` is :class:`~judgekit.errors.NoOutputBudget`
(the budget went into thinking); no text otherwise :class:`~judgekit.errors.EmptyReply`; a body
of the wrong shape (not an object, ``content`` not a list of objects, a text block without a
string, no ``usage``, a token count that is negative, fractional, not a number or absurd)
:class:`~judgekit.errors.MalformedReply`.  Usage: ``input_tokens`` is the uncached part, so
judgekit's input is ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``, its
cached part the reads and its cache writes the creations (priced at 0.1x and 1.25x input by
:func:`judgekit.cost.prices.usage_usd`).

Rate limits (:func:`engine_rate_headers`): the ``anthropic-ratelimit-*`` headers (requests,
tokens, input-tokens, output-tokens; ``-reset`` an RFC 3339 time) are given to the engine's
limiter as the ``x-ratelimit-*`` set it reads (the reset as the seconds left until it); of the
three token limits the one with the fewest tokens left speaks for ``tokens``.
"""

from __future__ import annotations

import base64
import math
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Callable, Mapping

from ..errors import BadRequest, EmptyReply, MalformedReply, NoAnswer, NoOutputBudget, Refused
from ..types import ChatResponse, ImagePart, Message, TextPart, Usage
from .replies import MAX_CALL_TOKENS, clean_text, excerpt, short_string, token_count

__all__ = ["CACHE_CONTROL", "MAX_BREAKPOINTS", "MEDIA_TYPES", "FINISH_REASONS", "to_anthropic_messages",
           "message_params", "message_response", "usage_of_message", "engine_rate_headers", "parse_reset",
           "prompt_cache_min_tokens", "marked_prefixes", "written_prefix"]

#: the mark of a prompt-cache breakpoint (5-minute lifetime, the API's default)
CACHE_CONTROL = {"type": "ephemeral"}
#: the most breakpoints judgekit sets (the API allows 4)
MAX_BREAKPOINTS = 2
#: image types the Messages API takes
MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: stop reasons as judgekit names finish reasons (types.ChatResponse)
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
#: blocks whose text is not the answer
_NOT_ANSWER = frozenset({"thinking", "redacted_thinking"})
_LIMIT_KINDS = ("requests", "tokens", "input-tokens", "output-tokens")
_LABEL_MAX = 200


@lru_cache(maxsize=256)
def prompt_cache_min_tokens(model: str) -> int:
    """The fewest tokens a prefix up to a ``cache_control`` mark needs for Claude ``model`` to cache
    it (Anthropic's prompt-caching guide): 4,096 for Opus 4.5 and later and Haiku 4.5 and later,
    2,048 for Haiku 3 and 3.5 (and a Haiku name without a version), 1,024 for the others (an
    unknown name included)."""
    from .params import claude_version

    name = model.strip().lower().rsplit("/", 1)[-1]
    family = next((f for f in ("opus", "haiku", "sonnet") if f in name), "")
    version = claude_version(name)
    if family == "haiku":
        return 4096 if version is not None and version >= (4, 5) else 2048
    if family == "opus" and version is not None and version >= (4, 5):
        return 4096
    return 1024


def marked_prefixes(messages: tuple[Message, ...] | list[Message]) -> list[tuple[Message, ...]]:
    """The prefixes that :func:`to_anthropic_messages`' marks end, shortest first, as judgekit
    messages in the order the API reads them (the system messages, then the turns): the system
    prompt; the system prompt and the turns up to the first user turn's marked image."""
    system = tuple(m for m in messages if m.role == "system" and m.text())
    out = [system] if system else []
    turns = [m for m in messages if m.role != "system"]
    first = next((i for i, m in enumerate(turns) if m.role == "user"), None)
    if first is None:
        return out
    parts = [p for p in turns[first].parts if not isinstance(p, TextPart) or p.text]  # as the blocks go
    last_text = max((i for i, p in enumerate(parts) if isinstance(p, TextPart)), default=-1)
    image = max((i for i, p in enumerate(parts[:max(0, last_text)]) if not isinstance(p, TextPart)), default=-1)
    if image >= 0:
        out.append(system + tuple(turns[:first]) + (Message("user", tuple(parts[:image + 1])),))
    return out


def written_prefix(model: str, messages: tuple[Message, ...] | list[Message],
                   count: Callable[[tuple[Message, ...]], int]) -> tuple[int, tuple[Any, ...]]:
    """(tokens, identity) of the longest marked prefix of a request (:func:`marked_prefixes`) that
    reaches Claude ``model``'s minimum (:func:`prompt_cache_min_tokens`), its tokens counted by
    ``count``: what the request writes to the prompt cache unless an earlier one did; (0, ())
    when no prefix is long enough (the API caches none: nothing costs more)."""
    minimum = prompt_cache_min_tokens(model)
    for prefix in reversed(marked_prefixes(messages)):
        tokens = count(prefix)
        if tokens >= minimum:
            return tokens, tuple((m.role, tuple(p.text if isinstance(p, TextPart) else p.sha256 for p in m.parts))
                                 for m in prefix)
    return 0, ()


@lru_cache(maxsize=512)
def _b64_for(sha256: str, data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _image_block(image: ImagePart, where: str) -> dict[str, Any]:
    mime = image.mime.lower()
    if mime == "image/jpg":
        mime = "image/jpeg"
    if mime not in MEDIA_TYPES:
        raise BadRequest(f"{where} is {image.mime}; the Anthropic API takes {', '.join(sorted(MEDIA_TYPES))}")
    # judge calls resend the candidate's images: encode each once (keyed by content hash)
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": _b64_for(image.sha256, image.data)}}


def to_anthropic_messages(messages: tuple[Message, ...] | list[Message], *, cache_prefix: bool = False
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(``system`` blocks, ``messages``) of a request, with the prompt-cache marks when
    ``cache_prefix`` (see the module docstring)."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    n_images = 0
    for m in messages:
        if m.role == "system":
            text = m.text()
            if text:
                system.append({"type": "text", "text": text})
            continue
        blocks: list[dict[str, Any]] = []
        for p in m.parts:
            if isinstance(p, TextPart):
                if p.text:
                    blocks.append({"type": "text", "text": p.text})
            else:
                n_images += 1
                blocks.append(_image_block(p, f"image {n_images} of the request"))
        turns.append({"role": m.role, "content": blocks})
    if cache_prefix:
        _mark_prefix(system, turns)
    return system, turns


def _mark_prefix(system: list[dict[str, Any]], turns: list[dict[str, Any]]) -> None:
    if system:
        system[-1]["cache_control"] = dict(CACHE_CONTROL)
    first = next((t for t in turns if t["role"] == "user"), None)
    if first is None:
        return
    blocks = first["content"]
    last_text = max((i for i, b in enumerate(blocks) if b["type"] == "text"), default=-1)
    image = max((i for i, b in enumerate(blocks[:max(0, last_text)]) if b["type"] == "image"), default=-1)
    if image >= 0:
        blocks[image]["cache_control"] = dict(CACHE_CONTROL)


def message_params(model: str, messages: tuple[Message, ...] | list[Message], fields: Mapping[str, Any], *,
                   cache_prefix: bool = False) -> dict[str, Any]:
    """The Messages API body of a request: ``model``, ``system`` (when there is one), ``messages``
    and ``fields`` (:func:`judgekit.providers.params.anthropic_params`)."""
    system, turns = to_anthropic_messages(messages, cache_prefix=cache_prefix)
    body: dict[str, Any] = {"model": model}
    if system:
        body["system"] = system
    body["messages"] = turns
    body.update(fields)
    return body


# ---------------------------------------------------------------------------------------------
# replies


def usage_of_message(usage: Any) -> Usage:
    """:class:`Usage` from a Messages API ``usage`` object (see the module docstring)."""
    if not isinstance(usage, Mapping):
        what = "missing" if usage is None else f"not an object: {excerpt(usage)[:60]}"
        raise MalformedReply(f"reply 'usage' is {what}")
    fresh = token_count(usage.get("input_tokens"), "input_tokens")
    written = token_count(usage.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
    read = token_count(usage.get("cache_read_input_tokens"), "cache_read_input_tokens")
    output = token_count(usage.get("output_tokens"), "output_tokens")
    total = fresh + written + read
    if total > MAX_CALL_TOKENS:
        raise MalformedReply(f"reply usage adds up to {total:,} input tokens, beyond any real call")
    # the 1-hour part of the writes (cache_creation's split by lifetime; absent from older replies)
    split = usage.get("cache_creation")
    hour = (token_count(split.get("ephemeral_1h_input_tokens"), "cache_creation.ephemeral_1h_input_tokens")
            if isinstance(split, Mapping) else 0)
    return Usage(total, output, cached_input_tokens=read, cache_write_tokens=written,
                 cache_write_1h_tokens=min(hour, written))


def _answer_text(content: Any) -> str:
    if not isinstance(content, list):
        raise MalformedReply(f"reply 'content' is not a list of blocks: {excerpt(content)[:120]}")
    texts: list[str] = []
    for block in content:
        if not isinstance(block, Mapping):
            raise MalformedReply(f"reply content block is not an object: {excerpt(block)[:120]}")
        kind = block.get("type")
        if not isinstance(kind, str):
            raise MalformedReply(f"reply content block has no type: {excerpt(block)[:120]}")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise MalformedReply(f"reply text block holds no string: {excerpt(block)[:120]}")
            texts.append(text)
        # thinking, redacted_thinking, tool_use and kinds yet to come are not the answer
    return clean_text("".join(texts))


def message_response(data: Any, headers: Mapping[str, str] | None = None, latency_s: float = 0.0) -> ChatResponse:
    """A Messages API reply body (decoded JSON) as a :class:`ChatResponse`, or the classified
    failure it stands for (see the module docstring).  Never any other exception, whatever JSON
    value ``data`` is."""
    if not isinstance(data, dict):
        raise MalformedReply(f"reply is not a JSON object: {excerpt(data)[:120]}")
    kind = data.get("type", "message")
    if kind != "message":
        raise MalformedReply(f"reply is not a message (type {excerpt(kind)[:60]}): {excerpt(data)[:200]}")
    usage = usage_of_message(data.get("usage"))
    native = short_string(data.get("stop_reason"), "stop_reason", strict=True)
    finish = FINISH_REASONS.get(native, native)
    try:
        text = _answer_text(data.get("content"))
        if native == "refusal":
            some = f" after {len(text)} characters" if text.strip() else ""
            raise Refused(f"the model refused{some} (stop_reason 'refusal')")
        if not text.strip():
            if finish == "length":
                raise NoOutputBudget("the output budget was spent before any text (stop_reason 'max_tokens'): "
                                     "raise max_tokens, or lower thinking_budget")
            how = "whitespace only" if text else "no text block" if not _has_text_block(data) else "empty"
            raise EmptyReply(f"the reply has no text: content {how}" + (f" (stop_reason {native!r})" if native else ""))
    except (NoAnswer, EmptyReply) as failure:  # kept with the reply, and what it was billed
        failure.raw, failure.usage = excerpt(data), usage
        raise
    headers = headers or {}
    request_id = short_string(headers.get("request-id"), "request-id", strict=False) \
        or short_string(data.get("id"), "id", strict=False)
    return ChatResponse(text=text, usage=usage, finish_reason=finish, latency_s=latency_s, request_id=request_id,
                        rate_headers=engine_rate_headers(headers))


def _has_text_block(data: dict) -> bool:
    return any(isinstance(b, Mapping) and b.get("type") == "text" for b in data.get("content") or [])


# ---------------------------------------------------------------------------------------------
# rate-limit headers


def parse_reset(value: Any, now: float) -> float | None:
    """Seconds from ``now`` (a POSIX time) until an RFC 3339 time (``2025-10-25T12:01:00Z``,
    fractions and offsets allowed); 0 for a time past; None for anything else."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text[-1:] in ("z", "Z"):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:  # RFC 3339 always has an offset; a time without one is read as UTC
        when = when.replace(tzinfo=UTC)
    try:
        left = when.timestamp() - now
    except (OverflowError, OSError, ValueError):
        return None
    return max(0.0, left) if math.isfinite(left) else None


def _count(value: Any) -> int | None:
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def engine_rate_headers(headers: Mapping[str, str] | None, now: float | None = None) -> dict[str, str] | None:
    """The ``x-ratelimit-*`` headers the engine's limiter reads, from a reply's
    ``anthropic-ratelimit-*`` (see the module docstring); None when it has none."""
    if not headers:
        return None
    import time

    now = time.time() if now is None else now
    found: dict[str, tuple[int | None, int | None, float | None]] = {}
    for kind in _LIMIT_KINDS:
        prefix = f"anthropic-ratelimit-{kind}-"
        limit, left, reset = (headers.get(prefix + "limit"), headers.get(prefix + "remaining"),
                              headers.get(prefix + "reset"))
        if limit is None and left is None and reset is None:
            continue
        found[kind] = (_count(limit), _count(left), parse_reset(reset, now))
    if not found:
        return None
    out: dict[str, str] = {}
    if "requests" in found:
        _put(out, "requests", *found["requests"])
    tokens = [found[k] for k in ("tokens", "input-tokens", "output-tokens") if k in found and found[k][1] is not None]
    if tokens:
        fewest = min(left for _, left, _ in tokens)
        resets = [r for _, left, r in tokens if left == fewest and r is not None]
        limit = next(lim for lim, left, _ in tokens if left == fewest)
        _put(out, "tokens", limit, fewest, max(resets) if resets else None)
    return out or None


def _put(out: dict[str, str], kind: str, limit: int | None, left: int | None, reset: float | None) -> None:
    if limit is not None:
        out[f"x-ratelimit-limit-{kind}"] = str(limit)[:_LABEL_MAX]
    if left is not None:
        out[f"x-ratelimit-remaining-{kind}"] = str(left)[:_LABEL_MAX]
    if reset is not None:
        out[f"x-ratelimit-reset-{kind}"] = f"{min(reset, 1e9):.3f}s"
