"""Reading a reply at the provider boundary: whatever a server sends becomes either a sane
:class:`~judgekit.types.ChatResponse` or a classified :class:`~judgekit.errors.ProviderError`.

Nothing past a provider ever sees a value of the wrong type: text is a ``str`` that encodes as
UTF-8 and holds at least one non-space character, token counts are ints in
``[0, MAX_CALL_TOKENS]``, the finish reason and request id are short strings.

- text: a string, or a list of parts (``{"type": "text" | "output_text", "text": ...}``, any
  part with a ``"text"`` string, ``{"text": {"value": ...}}``, or bare strings), whose text parts
  are joined; reasoning and thinking parts are not the answer and are left out.  Any other
  shape (``42``, a dict, a list holding a number) is :class:`~judgekit.errors.MalformedReply`.
- no answer: the finish reason and the refusal say why (:func:`no_answer`).
  ``content_filter`` is :class:`~judgekit.errors.ContentFiltered` (even with some text: what is
  there was cut by the filter); no text with a refusal is :class:`~judgekit.errors.Refused`; no
  text with ``length`` is :class:`~judgekit.errors.NoOutputBudget` (the budget went into
  reasoning); no text with no stated reason (null, ``""``, whitespace only) is
  :class:`~judgekit.errors.EmptyReply`, the only one of them retried.  Each keeps an excerpt of
  the reply (``raw``) and its usage.
- the finish reason ``length`` with text is an answer, marked truncated
  (:attr:`judgekit.types.ChatResponse.truncated`).
- token counts: ints, or floats that are whole numbers; ``None`` or absent is 0.  The cached part
  of the prompt (``prompt_tokens_details.cached_tokens``) and the reasoning part of the output
  (``completion_tokens_details.reasoning_tokens``) are read as well.  Booleans,
  strings, fractions, negatives and counts above :data:`MAX_CALL_TOKENS` are
  :class:`~judgekit.errors.MalformedReply`.
- lone UTF-16 surrogates (a JSON ``"\\ud800"``) become U+FFFD: they cannot be stored.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..errors import (RAW_EXCERPT_CHARS, ContentFiltered, EmptyReply, MalformedReply, NoAnswer, NoOutputBudget,
                      ProviderError, Refused)
from ..types import ChatResponse, Usage

__all__ = ["MAX_CALL_TOKENS", "clean_text", "reply_text", "token_count", "short_string",
           "chat_completion_response", "usage_of", "no_answer", "excerpt", "sha256_at"]

#: the most tokens one call can report for its input or its output.  The longest context
#: windows offered are ~10M tokens; a count past 100M is a broken server, not a request (and a
#: count past 2**31 would not even fit the cache's INTEGER column).
MAX_CALL_TOKENS = 100_000_000

#: part types whose text is not the answer
_NOT_ANSWER_PARTS = frozenset({"reasoning", "thinking", "reasoning_content", "redacted_thinking", "refusal"})
#: request ids and finish reasons longer than this are cut (they are labels, not data)
_LABEL_MAX = 200


def _snippet(value: Any, n: int = 120) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    text = clean_text(text)
    return text if len(text) <= n else text[:n] + "..."


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (so it encodes as UTF-8); unchanged
    (the same object) when it already encodes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        # pairs of surrogates become the character they encode; lone ones become U+FFFD
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _part_text(part: Any, refusals: list[str]) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        raise MalformedReply(f"reply content part is not text or an object: {_snippet(part)}")
    kind = part.get("type")
    if kind is not None and not isinstance(kind, str):
        raise MalformedReply(f"reply content part has a type that is not a string: {_snippet(part)}")
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        refusals.append(part["refusal"])
        return ""
    if kind in _NOT_ANSWER_PARTS:
        return ""
    text = part.get("text")
    if isinstance(text, dict):  # {"text": {"value": ..., "annotations": [...]}}
        text = text.get("value")
    if isinstance(text, str):
        return text
    if text is not None or kind in ("text", "output_text"):
        raise MalformedReply(f"reply text part holds no string: {_snippet(part)}")
    return ""  # an image or other non-text part: not part of the answer


def excerpt(value: Any) -> str:
    """A reply (any JSON value) as the short text a failure keeps (:attr:`ProviderError.raw`)."""
    return _snippet(value, RAW_EXCERPT_CHARS)


def no_answer(finish_reason: str, refusal: str | None, text: str, *, raw: str | None = None,
              usage: Usage | None = None, empty: str = "empty") -> ProviderError | None:
    """The failure a chat-completions reply stands for when it carries no answer (None when
    ``text`` is the answer).  See the module docstring for the rules."""
    if finish_reason == "content_filter":
        some = f" after {len(text)} characters" if text.strip() else ""
        return ContentFiltered(f"the provider's content filter withheld the answer{some} "
                               "(finish_reason 'content_filter')", raw=raw, usage=usage)
    if text.strip():
        return None
    if refusal:
        return Refused(f"the model refused: {clean_text(refusal)[:300]}", raw=raw, usage=usage)
    if finish_reason == "length":
        spent = f" ({usage.reasoning_tokens:,} reasoning tokens)" if usage is not None and usage.reasoning_tokens else ""
        return NoOutputBudget(f"the output budget was spent before any text{spent} (finish_reason 'length'): "
                              "raise max_tokens, or lower reasoning_effort / thinking_budget", raw=raw, usage=usage)
    why = f" (finish_reason {finish_reason!r})" if finish_reason else ""
    return EmptyReply(f"the reply has no text: content {empty}{why}", raw=raw, usage=usage)


def reply_text(content: Any, refusal: Any = None, *, finish_reason: str = "", usage: Usage | None = None) -> str:
    """The answer's text from a message's ``content`` (and ``refusal``).

    Raises :class:`MalformedReply` when ``content`` has a shape no server should send, and the
    failure :func:`no_answer` gives when it holds no answer."""
    refusals: list[str] = [refusal] if isinstance(refusal, str) and refusal.strip() else []
    if refusal is not None and not isinstance(refusal, str):
        raise MalformedReply(f"reply 'refusal' is not a string: {_snippet(refusal)}")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(_part_text(p, refusals) for p in content)
    else:
        raise MalformedReply(f"reply 'content' is neither text nor a list of parts: {_snippet(content)}")
    text = clean_text(text)
    how = "null" if content is None else "whitespace only" if text else "empty"
    failure = no_answer(finish_reason, refusals[0] if refusals else None, text, usage=usage, empty=how)
    if failure is not None:
        raise failure
    return text


def token_count(value: Any, name: str) -> int:
    """A token count from a reply: None is 0; anything but a whole number in
    ``[0, MAX_CALL_TOKENS]`` is :class:`MalformedReply`."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise MalformedReply(f"reply usage {name} is a boolean: {value!r}")
    if isinstance(value, float):
        if not value.is_integer():  # nan and inf are not integers either
            raise MalformedReply(f"reply usage {name} is not a whole number: {value!r}")
        value = int(value)
    if not isinstance(value, int):
        raise MalformedReply(f"reply usage {name} is not a number: {_snippet(value, 60)}")
    if value < 0:
        raise MalformedReply(f"reply usage {name} is negative: {value}")
    if value > MAX_CALL_TOKENS:
        raise MalformedReply(f"reply usage {name} is {value}, beyond any real call (at most {MAX_CALL_TOKENS:,})")
    return value


def _detail(usage: Mapping, path: tuple[str, str] | None) -> int:
    """A count inside a details object of ``usage`` (``prompt_tokens_details.cached_tokens``);
    0 when the details are null or absent."""
    if path is None:
        return 0
    details = usage.get(path[0])
    if details is None:
        return 0
    if not isinstance(details, Mapping):
        raise MalformedReply(f"reply usage {path[0]} is not an object: {_snippet(details, 60)}")
    return token_count(details.get(path[1]), ".".join(path))


def usage_of(usage: Any, input_name: str, output_name: str, *, cached: tuple[str, str] | None = None,
             reasoning: tuple[str, str] | None = None) -> Usage:
    """:class:`Usage` from a reply's usage object (a mapping, or null/absent for 0/0), with the
    cached part of the input and the reasoning part of the output read from the details objects
    ``cached`` and ``reasoning`` name (object, field)."""
    if usage is None:
        return Usage(0, 0)
    if not isinstance(usage, Mapping):
        raise MalformedReply(f"reply 'usage' is not an object: {_snippet(usage, 60)}")
    return Usage(token_count(usage.get(input_name), input_name), token_count(usage.get(output_name), output_name),
                 cached_input_tokens=_detail(usage, cached), reasoning_tokens=_detail(usage, reasoning))


def short_string(value: Any, name: str, *, strict: bool) -> str:
    """A label (finish reason, id) from a reply: a string cut to 200 characters; None is "".
    Another type is :class:`MalformedReply` when ``strict``, else ""."""
    if value is None:
        return ""
    if not isinstance(value, str):
        if strict:
            raise MalformedReply(f"reply {name} is not a string: {_snippet(value, 60)}")
        return ""
    return clean_text(value[:_LABEL_MAX])


def chat_completion_response(data: Any, headers: Mapping[str, str], latency_s: float,
                             rate_headers: tuple[str, ...] = ()) -> ChatResponse:
    """A chat-completions reply body (already decoded from JSON) as a :class:`ChatResponse`.

    Raises :class:`MalformedReply` or :class:`EmptyReply`; never any other exception for any
    JSON value of ``data``."""
    if not isinstance(data, dict):
        raise MalformedReply(f"chat completion is not a JSON object: {_snippet(data)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReply(f"chat completion has no choices: {_snippet(data)}")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise MalformedReply(f"chat completion choice has no message object: {_snippet(choice)}")
    message = choice["message"]
    finish = short_string(choice.get("finish_reason"), "finish_reason", strict=True)
    usage = usage_of(data.get("usage"), "prompt_tokens", "completion_tokens",
                     cached=("prompt_tokens_details", "cached_tokens"),
                     reasoning=("completion_tokens_details", "reasoning_tokens"))
    try:
        text = reply_text(message.get("content"), message.get("refusal"), finish_reason=finish, usage=usage)
    except (NoAnswer, EmptyReply) as failure:  # kept with the reply, and what it was billed
        failure.raw, failure.usage = excerpt(data), usage
        raise
    request_id = short_string(headers.get("x-request-id"), "x-request-id", strict=False) \
        or short_string(data.get("id"), "id", strict=False)
    rate = {h: str(headers[h])[:_LABEL_MAX] for h in rate_headers if h in headers} or None
    return ChatResponse(text=text, usage=usage, finish_reason=finish, latency_s=latency_s,
                        request_id=request_id, rate_headers=rate)


def sha256_at(text: str, field: str | None) -> tuple[str, ...]:
    """The blob a judgekit record names (a generator's ``{"image": {"sha256": ...}}``, an encoder's
    ``{"vector": {"sha256": ...}}``, a retrieval's top-level ``"sha256"``: ``field`` None), as a
    tuple of 0 or 1 sha256; () for text that is not such a record."""
    try:
        obj = json.loads(text)
    except ValueError:
        return ()
    if field is not None:
        obj = obj.get(field) if isinstance(obj, dict) else None
    sha = obj.get("sha256") if isinstance(obj, dict) else None
    return (sha,) if isinstance(sha, str) and sha else ()
