"""The records of the cache store: what it is told about a call, its counters, and its rows.

The store buffers, logs (:mod:`judgekit.cache.wal`) and writes responses and failures as
plain tuples in :data:`~judgekit.cache.schema.RESPONSE_COLUMNS` and
:data:`~judgekit.cache.schema.ATTEMPT_COLUMNS` order; this module builds them and turns them
back into :class:`~judgekit.types.ChatResponse`, and checks them (:func:`row_problem`) before
they reach the log or the file, so no row DuckDB would refuse is ever kept where it could make
the cache unopenable.  :class:`RequestMeta` and
:class:`CacheCounters` are public as ``judgekit.cache.store.RequestMeta`` and
``judgekit.cache.store.CacheCounters``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from judgekit.cache import schema
from judgekit.types import ChatResponse, Usage

__all__ = ["RequestMeta", "CacheCounters", "response_row", "failure_row", "buffered_response",
           "row_response", "row_problem", "response_row_problem", "attempt_row_problem", "is_answer",
           "row_line", "INT32_RANGE"]

#: the values DuckDB's INTEGER holds
INT32_RANGE = (-(2**31), 2**31 - 1)
#: created_at is carried as epoch microseconds: from 1970 to the end of year 9999
_TIMESTAMP_US = (0, 253_402_300_799_999_999)
#: responses columns that are NOT NULL in the file
_RESPONSE_REQUIRED = frozenset({"key", "provider", "model", "text", "created_at"})
#: attempts columns that are NOT NULL in the file
_ATTEMPT_REQUIRED = frozenset({"key", "error_kind", "created_at"})
#: the longest failure message kept (server error bodies can be pages of HTML)
_MESSAGE_MAX = 2000


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
    #: write-ahead log lines replay could not take (set aside in ``<file>.wal-rejected``)
    wal_rejected: int = 0
    #: responses refused by :meth:`~judgekit.cache.store.CacheStore.put` or by the file (set
    #: aside in ``<file>.wal-rejected``, never served)
    rows_rejected: int = 0
    #: responses put, by provider kind (``sim``, ``openai``, ``local``, ...): the calls this
    #: process made and got answers to, batch answers included; the kinds in
    #: :data:`judgekit.cost.prices.FREE_PROVIDERS` (the simulator, local models) cost nothing
    made_by_provider: dict[str, int] = field(default_factory=dict)


def _now_us() -> int:
    return int(time.time() * 1_000_000)


def response_row(key: str, m: RequestMeta, response: ChatResponse, run_id: str) -> tuple[Any, ...]:
    """The ``responses`` row of ``response``, in ``RESPONSE_COLUMNS`` order, created now."""
    u = response.usage
    return (key, m.provider, m.model, m.base_url, m.stage, m.item_id, _storable(response.text),
            u.input_tokens, u.output_tokens, _storable(response.finish_reason), response.latency_s,
            _storable(response.request_id), response.cost_usd, m.prompt_hash, run_id, _now_us())


def _storable(text: Any) -> Any:
    """``text`` as DuckDB takes it: lone surrogates (which do not encode as UTF-8) become U+FFFD."""
    if not isinstance(text, str):
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def failure_row(key: str, meta: RequestMeta, error_kind: str, status: int | None, message: str,
                run_id: str) -> tuple[Any, ...]:
    """The ``attempts`` row of one failed attempt, in ``ATTEMPT_COLUMNS`` order, created now.

    A failure is judgekit's own record, so it is made storable rather than refused: the
    message is text cut to 2,000 characters, a status outside INTEGER is dropped."""
    if not (isinstance(status, int) and not isinstance(status, bool)
            and INT32_RANGE[0] <= status <= INT32_RANGE[1]):
        status = None
    message = _storable(str(message))[:_MESSAGE_MAX]
    return (_storable(str(key)), _storable(meta.provider), _storable(meta.model), _storable(meta.stage),
            _storable(meta.item_id), _storable(str(error_kind)), status, message, _storable(run_id), _now_us())


def is_answer(text: Any) -> bool:
    """Whether ``text`` can be served as a cached answer: a string with a non-space character."""
    return isinstance(text, str) and bool(text.strip())


def _value_problem(value: Any, typ: str) -> str | None:
    if typ == "VARCHAR":
        if not isinstance(value, str):
            return f"is {type(value).__name__}, not text"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "is text that does not encode as UTF-8"
        return None
    if isinstance(value, bool):
        return "is a boolean"
    if typ in ("INTEGER", "TIMESTAMP"):
        lo, hi = INT32_RANGE if typ == "INTEGER" else _TIMESTAMP_US
        if not isinstance(value, int):
            return f"is {type(value).__name__}, not an integer"
        if not lo <= value <= hi:
            return f"is {value}, outside {lo}..{hi}"
        return None
    if typ == "DOUBLE":
        if not isinstance(value, (int, float)):
            return f"is {type(value).__name__}, not a number"
        if not math.isfinite(value):
            return f"is {value}"
        return None
    return f"has a column type {typ} the check does not know"  # pragma: no cover - schema drift


def row_problem(row: Any, columns: Sequence[tuple[str, str]] = schema.RESPONSE_COLUMNS,
                required: frozenset[str] = _RESPONSE_REQUIRED) -> str | None:
    """Why DuckDB would refuse ``row`` for a table of ``columns`` (None: it would take it).

    Checks the arity, then each value against its column's type: VARCHAR is a ``str`` that
    encodes as UTF-8; INTEGER an ``int`` (never a bool) within 32 bits; DOUBLE a finite number;
    TIMESTAMP (carried as epoch microseconds) an ``int`` from 1970 to 9999; NULL only where
    the column allows it."""
    if not isinstance(row, (tuple, list)):
        return f"is {type(row).__name__}, not a row"
    if len(row) != len(columns):
        return f"has {len(row)} values, not {len(columns)}"
    for value, (name, typ) in zip(row, columns):
        if value is None:
            if name in required:
                return f"{name} is null"
            continue
        problem = _value_problem(value, typ)
        if problem:
            return f"{name} {problem}"
    return None


def response_row_problem(row: Any) -> str | None:
    """:func:`row_problem` for a ``responses`` row, which must also hold an answer (text with a
    non-space character: an empty answer is never cached)."""
    problem = row_problem(row, schema.RESPONSE_COLUMNS, _RESPONSE_REQUIRED)
    if problem is None and not is_answer(row[6]):
        return "text is empty (an empty answer is never cached)"
    return problem


def attempt_row_problem(row: Any) -> str | None:
    """:func:`row_problem` for an ``attempts`` row."""
    return row_problem(row, schema.ATTEMPT_COLUMNS, _ATTEMPT_REQUIRED)


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


def row_line(row: Sequence[Any]) -> str:
    """A row as the JSON line it would be in the log (reprs for what JSON cannot hold), for
    ``<file>.wal-rejected``."""
    return json.dumps(list(row), ensure_ascii=False, default=repr)
