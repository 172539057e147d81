"""Successful (200) chat replies in the real APIs' shapes, answers and non-answers alike.

:func:`chat_payload` writes an OpenAI ``chat.completion`` (Azure's adds its content-filter
annotations) or a Gemini ``GenerateContentResponse``, with the usage details each API reports:

- OpenAI ``usage.prompt_tokens_details.cached_tokens`` (inside ``prompt_tokens``) and
  ``usage.completion_tokens_details.reasoning_tokens`` (inside ``completion_tokens``), present on
  every reply as the API sends them (zeros when nothing was cached or reasoned);
- Gemini ``usageMetadata.cachedContentTokenCount`` (inside ``promptTokenCount``) and
  ``thoughtsTokenCount`` (outside ``candidatesTokenCount``, inside ``totalTokenCount``), present
  only when not zero, as the API omits them.

:func:`fault_for` picks which reply carries no answer (``SimConfig.reply_faults`` and
``reply_fault_models``), and :func:`chat_payload` writes that outcome the way the API does; the
shapes are listed in ``SimConfig.reply_faults``.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from judgekit.sim.config import SimConfig
from judgekit.sim.protocol import _AZURE, _GEMINI
from judgekit.sim.replies import Reply, completion_tokens_for

__all__ = ["OPENAI_FAULTS", "GEMINI_FAULTS", "fault_for", "chat_payload", "REFUSAL_TEXT"]

OPENAI_FAULTS = frozenset({"content_filter", "refusal", "reasoning_exhausted", "empty"})
GEMINI_FAULTS = frozenset({
    "prompt_blocked_safety", "prompt_blocked_other", "prompt_blocked_prohibited",
    "finish_safety", "finish_recitation", "finish_prohibited", "thinking_exhausted", "empty",
})
_TO_GEMINI = {"content_filter": "finish_safety", "reasoning_exhausted": "thinking_exhausted"}
_TO_OPENAI = {"finish_safety": "content_filter", "thinking_exhausted": "reasoning_exhausted"}
_BLOCK_REASONS = {
    "prompt_blocked_safety": "SAFETY",
    "prompt_blocked_other": "OTHER",
    "prompt_blocked_prohibited": "PROHIBITED_CONTENT",
}
_FINISH = {"finish_safety": "SAFETY", "finish_recitation": "RECITATION", "finish_prohibited": "PROHIBITED_CONTENT"}
_U64 = float(1 << 64)
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
_AZURE_CATEGORIES = ("hate", "self_harm", "sexual", "violence")
_GEMINI_CATEGORIES = (
    "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_DANGEROUS_CONTENT",
    "HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_SEXUALLY_EXPLICIT",
)


def _u(*parts: bytes) -> float:
    return int.from_bytes(hashlib.sha256(b"\x1d".join(parts)).digest()[:8], "big") / _U64


def fault_for(cfg: SimConfig, api: str, model: str, digest: bytes, attempt: int) -> str | None:
    """The no-answer outcome of this reply, as the calling API names it, or None for an answer.

    ``reply_fault_models`` first; else ``reply_faults``: every outcome but ``empty`` is drawn from
    the request hash alone (the same request always gets it), ``empty`` per attempt, with
    probability ``share / (1 - other shares)`` among the requests no other outcome took, so each
    outcome's overall share is the configured one.
    """
    fault: str | None = cfg.reply_fault_models.get(model)
    if fault is None and cfg.reply_faults:
        sticky = sum(v for k, v in cfg.reply_faults.items() if k != "empty")
        u = _u(b"reply-fault", digest)
        acc = 0.0
        for name, share in cfg.reply_faults.items():
            if name == "empty":
                continue
            acc += share
            if u < acc:
                fault = name
                break
        empty = cfg.reply_faults.get("empty", 0.0)
        if fault is None and empty and sticky < 1:
            if _u(b"reply-empty", digest, attempt.to_bytes(4, "big")) < empty / (1 - sticky):
                fault = "empty"
    if fault is None:
        return None
    if api == _GEMINI:
        fault = _TO_GEMINI.get(fault, fault)
        return fault if fault in GEMINI_FAULTS else None
    fault = _TO_OPENAI.get(fault, fault)
    return fault if fault in OPENAI_FAULTS else None


def chat_payload(
    api: str,
    model: str,
    reply: Reply,
    *,
    fault: str | None,
    prompt_tokens: int,
    reasoning_tokens: int,
    cached_tokens: int,
    budget: int,
    digest: bytes,
    request_id: str,
) -> dict[str, Any]:
    """A 200 reply: ``reply`` as the answer, or the ``fault`` outcome (``reply`` then stands for
    the text a filter cut off).  ``budget`` is the output budget an exhausted reasoning model
    spent; ``reasoning_tokens`` and ``cached_tokens`` go in the usage details."""
    if api == _GEMINI:
        return _gemini(model, reply, fault, prompt_tokens, reasoning_tokens, cached_tokens, budget, digest,
                       request_id)
    return _openai(api, model, reply, fault, prompt_tokens, reasoning_tokens, cached_tokens, budget, digest)


# ------------------------------------------------------------------------------------------
# OpenAI and Azure
# ------------------------------------------------------------------------------------------


def _openai(api: str, model: str, reply: Reply, fault: str | None, prompt_tokens: int, reasoning: int,
            cached: int, budget: int, digest: bytes) -> dict[str, Any]:
    content: str | None = reply.text
    refusal: str | None = None
    finish = reply.finish_reason
    visible = reply.completion_tokens
    if fault == "content_filter":
        content, finish = None, "content_filter"
    elif fault == "refusal":
        content, refusal, finish = None, REFUSAL_TEXT, "stop"
        visible = completion_tokens_for(REFUSAL_TEXT)
    elif fault == "reasoning_exhausted":
        content, finish, visible, reasoning = "", "length", 0, budget
    elif fault == "empty":
        content, finish, visible = None, "stop", 0
    completion = visible + reasoning
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "refusal": refusal, "annotations": []},
        "logprobs": None,
        "finish_reason": finish,
    }
    payload: dict[str, Any] = {
        "id": f"chatcmpl-{digest[:12].hex()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reasoning,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "system_fingerprint": "fp_judgekit_sim",
    }
    if api == _AZURE:  # Azure annotates the prompt and each choice with its content filters
        safe = {c: {"filtered": False, "severity": "safe"} for c in _AZURE_CATEGORIES}
        payload["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": safe}]
        results = dict(safe)
        if fault == "content_filter":
            cat = _AZURE_CATEGORIES[digest[0] % len(_AZURE_CATEGORIES)]
            results[cat] = {"filtered": True, "severity": "high"}
        choice["content_filter_results"] = results
    return payload


# ------------------------------------------------------------------------------------------
# Gemini
# ------------------------------------------------------------------------------------------


def _ratings(digest: bytes, blocked: bool) -> list[dict[str, Any]]:
    hit = digest[1] % len(_GEMINI_CATEGORIES) if blocked else -1
    out: list[dict[str, Any]] = []
    for i, cat in enumerate(_GEMINI_CATEGORIES):
        r: dict[str, Any] = {"category": cat, "probability": "HIGH" if i == hit else "NEGLIGIBLE"}
        if i == hit:
            r["blocked"] = True
        out.append(r)
    return out


def _gemini(model: str, reply: Reply, fault: str | None, prompt_tokens: int, thoughts: int, cached: int,
            budget: int, digest: bytes, request_id: str) -> dict[str, Any]:
    visible = 0
    payload: dict[str, Any] = {}
    if fault in _BLOCK_REASONS:
        reason = _BLOCK_REASONS[fault]
        feedback: dict[str, Any] = {"blockReason": reason}
        if reason == "SAFETY":
            feedback["safetyRatings"] = _ratings(digest, True)
        payload["promptFeedback"] = feedback
        thoughts = 0
    elif fault in _FINISH:
        cand: dict[str, Any] = {"finishReason": _FINISH[fault], "index": 0}
        if fault == "finish_safety":
            cand["safetyRatings"] = _ratings(digest, True)
        payload["candidates"] = [cand]
    elif fault == "thinking_exhausted":
        thoughts = budget
        payload["candidates"] = [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS", "index": 0}]
    elif fault == "empty":
        payload["candidates"] = [{"content": {"role": "model"}, "finishReason": "STOP", "index": 0}]
    else:
        visible = reply.completion_tokens
        payload["candidates"] = [{
            "content": {"parts": [{"text": reply.text}], "role": "model"},
            "finishReason": "MAX_TOKENS" if reply.finish_reason == "length" else "STOP",
            "index": 0,
        }]
    usage: dict[str, Any] = {"promptTokenCount": prompt_tokens}
    if visible:
        usage["candidatesTokenCount"] = visible
    usage["totalTokenCount"] = prompt_tokens + visible + thoughts
    if cached:
        usage["cachedContentTokenCount"] = cached
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    payload["usageMetadata"] = usage
    payload["modelVersion"] = model
    payload["responseId"] = request_id
    return payload
