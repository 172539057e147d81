"""The records of the cache store: what it is told about a call, its counters, and its rows.

The store buffers, logs (:mod:`judgekit.cache.wal`) and writes responses and failures as
plain tuples in :data:`~judgekit.cache.schema.RESPONSE_COLUMNS` and
:data:`~judgekit.cache.schema.ATTEMPT_COLUMNS` order; this module builds them and turns them
back into :class:`~judgekit.types.ChatResponse`.  :class:`RequestMeta` and
:class:`CacheCounters` are public as ``judgekit.cache.store.RequestMeta`` and
``judgekit.cache.store.CacheCounters``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from judgekit.types import ChatResponse, Usage

__all__ = ["RequestMeta", "CacheCounters", "response_row", "failure_row", "buffered_response",
           "row_response"]


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """What the cache records about the call behind a response or failure (not its key)."""

    provider: str
    model: str  # the model id sent to the API, as in the cache key
    base_url: str = ""
    stage: str = "default"
    item_id: str = ""
    prompt_hash: str = ""


@dataclass(slots=True)
class CacheCounters:
    """Running totals of one store.

    ``lookups``/``hits`` count keys; ``lookup_requests`` counts lookups handed to the thread
    (one per micro-batch); ``queries`` counts lookup statements sent to DuckDB; ``flushes``
    counts buffer writes and ``max_flush_seconds`` is the longest single write transaction
    (checkpoints included), i.e. the longest a lookup waited behind a write.
    """

    lookups: int = 0
    hits: int = 0
    lookup_requests: int = 0
    queries: int = 0
    rows_written: int = 0
    failures_written: int = 0
    flushes: int = 0
    max_flush_seconds: float = 0.0
    last_error: str = ""
    wal_replayed: int = 0


def _now_us() -> int:
    return int(time.time() * 1_000_000)


def response_row(key: str, m: RequestMeta, response: ChatResponse, run_id: str) -> tuple[Any, ...]:
    """The ``responses`` row of ``response``, in ``RESPONSE_COLUMNS`` order, created now."""
    u = response.usage
    return (key, m.provider, m.model, m.base_url, m.stage, m.item_id, response.text,
            u.input_tokens, u.output_tokens, response.finish_reason, response.latency_s,
            response.request_id, response.cost_usd, m.prompt_hash, run_id, _now_us())


def failure_row(key: str, meta: RequestMeta, error_kind: str, status: int | None, message: str,
                run_id: str) -> tuple[Any, ...]:
    """The ``attempts`` row of one failed attempt, in ``ATTEMPT_COLUMNS`` order, created now."""
    return (key, meta.provider, meta.model, meta.stage, meta.item_id, error_kind, status,
            message, run_id, _now_us())


def row_response(r: Sequence[Any]) -> ChatResponse:
    """A cached answer from a lookup row: key, text, input_tokens, output_tokens,
    finish_reason, latency_s, request_id, cost_usd (a buffered row's positions 0,6..12)."""
    return ChatResponse(
        text=r[1],
        usage=Usage(r[2] or 0, r[3] or 0),
        finish_reason=r[4] or "",
        latency_s=r[5] or 0.0,
        request_id=r[6] or "",
        cached=True,
        cost_usd=r[7] or 0.0,
    )


def buffered_response(r: tuple[Any, ...]) -> ChatResponse:
    """A cached answer from a buffered (not yet written) row."""
    # buffered rows are in RESPONSE_COLUMNS order
    return ChatResponse(
        text=r[6],
        usage=Usage(r[7], r[8]),
        finish_reason=r[9],
        latency_s=r[10],
        request_id=r[11],
        cached=True,
        cost_usd=r[12],
    )
