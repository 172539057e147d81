"""A Gemini ``GenerateContentResponse`` read as judgekit's :class:`~judgekit.types.ChatResponse`
(:func:`gemini_chat_response`): a leaf the live provider (:mod:`judgekit.providers.gemini`) and a
batch's responses file (:func:`judgekit.providers.gemini_batch_wire.read_response`) both read
replies with, so a batch answer and a live one are the same thing.

No candidates with ``promptFeedback.blockReason`` is :class:`~judgekit.errors.Blocked`; a ``SAFETY`` / ``RECITATION`` / ``PROHIBITED_CONTENT`` /
``BLOCKLIST`` / ``SPII`` / image-safety finish is :class:`~judgekit.errors.ContentFiltered`;
``MAX_TOKENS`` with no text (a thinking model's budget went into thoughts) is
:class:`~judgekit.errors.NoOutputBudget`; no text otherwise is
:class:`~judgekit.errors.EmptyReply`.  The finish reason is normalised (``STOP`` -> ``stop``,
``MAX_TOKENS`` -> ``length``).  Usage: output is ``candidates_token_count`` plus
``thoughts_token_count`` (thoughts are billed as output); the cached part of the prompt is
``cached_content_token_count``.
"""

from __future__ import annotations

from typing import Any

from ..errors import Blocked, ContentFiltered, EmptyReply, NoAnswer
from ..types import ChatResponse, Usage
from .replies import excerpt, reply_text, short_string, token_count

__all__ = ["gemini_chat_response"]

#: finish reasons that say a filter withheld the answer
_FILTERED = frozenset({"safety", "recitation", "prohibited_content", "blocklist", "spii", "image_safety",
                       "image_prohibited_content", "image_recitation", "model_armor"})
#: finish reasons as judgekit names them across providers (types.ChatResponse)
_FINISH = {"stop": "stop", "max_tokens": "length", "finish_reason_unspecified": ""}


def _name(value: Any) -> str:
    """An SDK enum (or a string the SDK did not know) as a lower-case name."""
    return str(getattr(value, "value", None) or value or "").lower()


def _raw(resp: Any) -> str:
    try:
        return excerpt(resp.model_dump(mode="json", exclude_none=True))
    except Exception:  # an excerpt is a courtesy: never a reason to fail differently
        return repr(resp)[:1000]


def gemini_chat_response(resp: Any, latency: float) -> ChatResponse:
    """The SDK's GenerateContentResponse as a ChatResponse, with the same checks as an OpenAI
    reply (:mod:`judgekit.providers.replies`); see the module docstring for the outcomes."""
    meta = resp.usage_metadata
    thoughts = token_count(getattr(meta, "thoughts_token_count", None), "thoughts_token_count")
    usage = Usage(token_count(getattr(meta, "prompt_token_count", None), "prompt_token_count"),
                  token_count(getattr(meta, "candidates_token_count", None), "candidates_token_count") + thoughts,
                  cached_input_tokens=token_count(getattr(meta, "cached_content_token_count", None),
                                                  "cached_content_token_count"),
                  reasoning_tokens=thoughts)
    candidates = resp.candidates or []
    native = short_string(_name(candidates[0].finish_reason), "finish_reason", strict=True) if candidates else ""
    finish = _FINISH.get(native, native)
    try:
        if not candidates:
            feedback = getattr(resp, "prompt_feedback", None)
            blocked = getattr(feedback, "block_reason", None)
            if blocked:
                why = getattr(feedback, "block_reason_message", None)
                raise Blocked(f"the prompt was blocked (blockReason {_name(blocked).upper()})"
                              + (f": {why}" if why else ""))
        if native in _FILTERED:
            raise ContentFiltered(f"the provider withheld the answer (finishReason {native.upper()})")
        parts = (getattr(candidates[0].content, "parts", None) or []) if candidates else []
        # the answer is the text parts that are not thoughts (what ``resp.text`` joins, without its
        # warnings about other parts)
        content = [p.text for p in parts if isinstance(p.text, str) and not p.thought]
        text = reply_text(content, None, finish_reason=finish, usage=usage)
    except (NoAnswer, EmptyReply) as failure:  # kept with the reply, and what it was billed
        if not candidates and isinstance(failure, EmptyReply):
            failure.args = ("the reply has no candidates and no blockReason",)
        failure.raw, failure.usage = _raw(resp), usage
        raise
    return ChatResponse(text=text, usage=usage, finish_reason=finish, latency_s=latency,
                        request_id=short_string(getattr(resp, "response_id", None), "response_id", strict=False))
