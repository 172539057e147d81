"""Anthropic's Message Batches API as judgekit's :class:`~judgekit.providers.batch.BatchAPI`.

:class:`AnthropicBatchMixin` is the batch side of :class:`~judgekit.providers.anthropic.
AnthropicProvider`; it uses the provider's SDK client (``AsyncAnthropic``: its auth, transport and
error classes), its request building (:meth:`~judgekit.providers.anthropic.AnthropicProvider.
request_body`, prompt-cache marks included: a batch request reads and writes the prompt cache as a
live one does), its reply reading (:func:`~judgekit.providers.anthropic_wire.message_response`) and
its error mapping, so a batch answer and a live answer of the same request are the same thing in
the cache.

- **submit**: ``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params": <the live
  call's body>}]}``, exactly the bytes ``client.messages.batches.create(requests=...)`` sends (the
  SDK's compact UTF-8 JSON), but encoded in a worker thread and posted through the same client's
  ``post`` with ``cast_to=MessageBatch``: for a 241 MB batch (100 requests of two 1.2 MB PNGs,
  against the simulator in its own process) the longest stall of the event loop was 1.3-1.5 s
  with ``create()``, which encodes on the loop, and 0.3-0.55 s so (the transport's own copies of
  the body; sending it in slices did not shorten them).  Limits (:data:`ANTHROPIC_BATCH_LIMITS`):
  100,000 requests or 256 MB per batch; :meth:`~AnthropicBatchMixin.batch_line_bytes` is a
  request's exact share of the body (its JSON and the comma after it).
- **poll** (``messages.batches.retrieve``): ``processing_status`` as judgekit's state
  (:func:`batch_state`): ``in_progress``, ``canceling`` -> cancelling, ``ended`` -> ended (or
  ``cancelled`` when a cancel was asked, ``expired`` when every request expired), an unknown word
  -> in_progress (polled again); ``request_counts`` (succeeded; errored + canceled + expired as
  failed; the five summed as the total) and the age from ``created_at``.
- **results** (``messages.batches.results``; its body read whole and parsed here, line by line,
  so one bad line does not lose the rest as the SDK's JSONL decoder would): each line's
  ``result`` (:func:`result_outcome`) joined on ``custom_id`` (:func:`join_results`) with the
  batch's requests: ``succeeded`` -> the live reader's response (or its failure: refusal, empty,
  malformed, no output budget); ``errored`` -> the error a live call would raise for the same
  error type (:data:`ERROR_STATUS`: ``invalid_request_error`` -> BadRequest, ``rate_limit_error``
  -> RateLimited, ``api_error`` / ``overloaded_error`` -> TransientError, a spent credit balance
  -> QuotaExhausted...); ``canceled`` / ``expired`` -> :class:`~judgekit.providers.batch.
  BatchRequestNotRun`.  A request no line reports is BatchRequestNotRun; lines for ids the batch
  does not hold are left out; a request answered twice keeps its first answer (an answer before
  an error).  The batch's requests are the ids this provider submitted (kept in memory for the
  last :data:`_REMEMBERED` batches) or those given as ``custom_ids``; a batch submitted by an
  earlier process, without ``custom_ids``, gives the outcome of every line it reports (the
  engine's batch layer joins them with its own record).  A body with no readable line while the
  batch reports requests (an HTML error page, a proxy's text) is a MalformedReply: read again
  later, nothing is resubmitted.  Results archived (``archived_at``, after 29 days) are
  BatchRequestNotRun.
- **cost**: at the batch rates (:func:`judgekit.cost.prices.usage_usd` with ``batch=True``: half
  of every rate, cache reads and writes included, as genai-prices says the multipliers stack);
  a failure that billed tokens (a refusal) carries its cost in ``BatchOutcome.extra["cost_usd"]``.
- **errors** of the batch calls themselves go through the live mapping
  (:func:`~judgekit.providers.anthropic_errors.classify_anthropic_error`), keys redacted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from ..errors import BadRequest, MalformedReply, ProviderError, TransientError
from ..types import ChatResponse
from .anthropic_errors import classify_anthropic_error, status_error
from .anthropic_wire import message_response
from .batch import (LOOK_BACK_S, BatchItem, BatchLimits, BatchOutcome, BatchRequestNotRun, BatchState, BatchStatus,
                    BatchSideBase, WaveIntent, classified_by)
from .batch_errors import BatchCancelled, BatchExpired, with_type
from .openai_batch import JoinedResults
from .replies import excerpt, short_string
from .sizes import MB

__all__ = ["AnthropicBatchMixin", "ANTHROPIC_BATCH_LIMITS", "ERROR_STATUS", "batch_state", "request_line",
           "result_outcome", "join_results"]

log = logging.getLogger(__name__)

#: the Message Batches API's limits per batch (the envelope ``{"requests":[...]}`` is 15 bytes)
ANTHROPIC_BATCH_LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * MB - 16)
#: an ``errored`` result's error type as the HTTP status a live call gets for it (the errors guide)
ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529}
_STATES: dict[str, BatchState] = {"in_progress": "in_progress", "canceling": "cancelling", "cancelling": "cancelling",
                                  "ended": "ended"}
_NOT_RUN = {"canceled": "the batch was canceled before running this request",
            "cancelled": "the batch was canceled before running this request",
            "expired": "the batch expired (24 hours) before running this request"}
#: batches whose request ids a provider object remembers (from its own submissions)
_REMEMBERED = 64
#: the most batches :meth:`AnthropicBatchMixin.find_batches` reads from the list
_LIST_MOST = 10_000
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _counts(counts: Any) -> dict[str, int]:
    get = counts.get if isinstance(counts, dict) else (lambda k, d=None: getattr(counts, k, d))
    return {k: _count(get(k, 0)) for k in ("processing", "succeeded", "errored", "canceled", "expired")}


def batch_state(processing_status: Any, *, cancel_asked: bool = False, counts: Any = None) -> BatchState:
    """judgekit's state of a Message Batch (see the module docstring).  Not a string: MalformedReply."""
    if not isinstance(processing_status, str):
        raise MalformedReply(f"batch processing_status is not a string: {processing_status!r:.80}")
    state = _STATES.get(processing_status.strip().lower(), "in_progress")
    if state != "ended":
        return state
    if cancel_asked:
        return "cancelled"
    c = _counts(counts)
    return "expired" if c["expired"] and c["expired"] == sum(c.values()) else "ended"


def _seconds(value: Any) -> float | None:
    """A POSIX time from an RFC 3339 time (a datetime, as the SDK parses it, or a string)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime):
        try:
            return value.timestamp()
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _status_of(batch: Any, what: str = "batch") -> BatchStatus:
    """A ``MessageBatch`` (the SDK's, built without validation: any field may be of any type) as a
    :class:`BatchStatus`."""
    batch_id = getattr(batch, "id", None)
    if not isinstance(batch_id, str) or not batch_id:
        raise MalformedReply(f"{what} reply has no batch id: {batch!r:.200}")
    word = getattr(batch, "processing_status", None)
    counts = getattr(batch, "request_counts", None)
    state = batch_state(word, cancel_asked=getattr(batch, "cancel_initiated_at", None) is not None, counts=counts)
    c = _counts(counts)
    created = _seconds(getattr(batch, "created_at", None))
    return BatchStatus(batch_id=batch_id, state=state, provider_status=short_string(word, "status", strict=False),
                       total=sum(c.values()), succeeded=c["succeeded"],
                       failed=c["errored"] + c["canceled"] + c["expired"],
                       age_s=max(0.0, time.time() - created) if created is not None else None)


def request_line(custom_id: str, params: dict[str, Any]) -> bytes:
    """One request of a batch as the SDK encodes it (compact UTF-8 JSON)."""
    return _encode({"custom_id": custom_id, "params": params}).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# results


def _errored(error: Any) -> ProviderError:
    """An ``errored`` result's ``error`` (an ErrorResponse ``{type: "error", error: {type,
    message}}``, or the inner object alone) as the ProviderError a live call would raise."""
    inner = error.get("error") if isinstance(error, dict) else None
    inner = inner if isinstance(inner, dict) else error if isinstance(error, dict) else {}
    etype = inner.get("type") if isinstance(inner.get("type"), str) else ""
    message = " ".join(str(inner.get("message") or "").split())[:500]
    details = inner.get("details")
    code = details.get("error_code") if isinstance(details, dict) else None
    text = f"the batch request errored: {etype or 'error'}: {message or excerpt(error)[:200]}"
    status = ERROR_STATUS.get(etype)
    if status is None:
        return with_type(TransientError(text), etype)
    return with_type(status_error(status, None, text, code if isinstance(code, str) else "", etype), etype)


def result_outcome(obj: Any, price: Callable[[ChatResponse], float] | None = None
                   ) -> tuple[str, BatchOutcome] | None:
    """One results line (decoded JSON) as (custom_id, outcome); None when it names no ``custom_id``."""
    if not isinstance(obj, dict):
        return None
    cid = obj.get("custom_id")
    if not isinstance(cid, str) or not cid:
        return None
    out = BatchOutcome(custom_id=cid)
    result = obj.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded":
        try:
            out.response = message_response(result.get("message"), None, 0.0)
        except ProviderError as err:
            out.error = err
            usage = getattr(err, "usage", None)
            if usage is not None and price is not None:
                out.extra["cost_usd"] = price(ChatResponse(text="", usage=usage))
        else:
            if price is not None:
                out.response.cost_usd = price(out.response)
    elif kind == "errored":
        out.error = _errored(result.get("error"))
    elif isinstance(kind, str) and kind in _NOT_RUN:
        out.error = (BatchExpired if kind == "expired" else BatchCancelled)(_NOT_RUN[kind])
    else:
        out.error = MalformedReply(f"batch result line has no known result type: {excerpt(obj)[:200]}")
    return cid, out


def join_results(custom_ids: Sequence[str] | None, lines: Iterable[bytes], *,
                 price: Callable[[ChatResponse], float] | None = None,
                 not_run: str = "the batch's results do not report this request",
                 not_run_as: type[BatchRequestNotRun] = BatchRequestNotRun) -> tuple[JoinedResults, int]:
    """(every request of a batch with what the results ``lines`` (any order) say of it, the
    number of lines that could be read).  With ``custom_ids`` (in order) the outcomes are exactly
    those requests, one that no line answers a BatchRequestNotRun with the message ``not_run``,
    lines for other ids left out; without, the outcomes are the ids the lines report, in the
    order first seen.  A response wins over an error; otherwise the first line of a request wins."""
    wanted = dict.fromkeys(custom_ids) if custom_ids is not None else None
    found: dict[str, BatchOutcome] = {}
    joined = JoinedResults(outcomes=[])
    read = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            got = result_outcome(json.loads(raw), price)
        except ValueError:
            got = None
        if got is None:
            joined.garbage += 1
            continue
        read += 1
        cid, outcome = got
        if wanted is not None and cid not in wanted:
            joined.unknown.append(cid)
            continue
        before = found.get(cid)
        if before is not None:
            joined.duplicates += 1
            if before.response is not None or outcome.response is None:
                continue
        found[cid] = outcome
    ids = wanted if wanted is not None else found
    joined.outcomes = [found.get(cid) or BatchOutcome(cid, error=not_run_as(not_run)) for cid in ids]
    return joined, read


# ---------------------------------------------------------------------------------------------
# the provider's side


_classified = classified_by(classify_anthropic_error)


class AnthropicBatchMixin(BatchSideBase):
    """The batch side of the Anthropic provider (see the module docstring).  Needs the provider's
    ``_client``, ``spec``, ``kind``, ``request_body`` and ``redact_error``."""

    batch_limits: BatchLimits = ANTHROPIC_BATCH_LIMITS

    def _line(self, item: BatchItem) -> bytes:
        return request_line(item.custom_id, self.request_body(item.request))  # type: ignore[attr-defined]

    def batch_line_bytes(self, item: BatchItem) -> int:
        """``item``'s share of the batch's body (its JSON and a comma).  A request over the
        Messages API's sizes raises the RequestTooLarge its live call would (that call fails, not
        the batch)."""
        return len(self._line(item)) + 1


    @property
    def _submitted(self) -> OrderedDict[str, tuple[str, ...]]:
        memo = self.__dict__.get("_batch_ids")
        if memo is None:
            memo = self.__dict__["_batch_ids"] = OrderedDict()
        return memo

    @_classified
    async def submit_batch(self, items: list[BatchItem], *, wave: str | None = None) -> BatchStatus:
        """Create one Message Batch of ``items``.  The caller keeps to :attr:`batch_limits` and
        gives each request once: otherwise ValueError, nothing sent.  ``wave`` is not sent: a
        Message Batch keeps no metadata (:meth:`find_batches` matches its requests instead)."""
        from anthropic.types.messages import MessageBatch

        limits = self.batch_limits
        if not items:
            raise ValueError("submit_batch: no requests")
        if len(items) > limits.max_requests:
            raise ValueError(f"submit_batch: {len(items):,} requests, more than the {limits.max_requests:,} a batch "
                             "may hold")
        if len({i.custom_id for i in items}) != len(items):
            raise ValueError("submit_batch: a custom_id appears twice (the Message Batches API refuses the batch)")
        data = await asyncio.to_thread(lambda: b'{"requests":[' + b",".join(self._line(i) for i in items) + b"]}")
        if len(data) > limits.max_bytes + 16:
            raise ValueError(f"submit_batch: the batch is {len(data):,} bytes, more than the {limits.max_bytes:,} "
                             "allowed")
        batch = await self._client.post("/v1/messages/batches", content=data, cast_to=MessageBatch,  # type: ignore[attr-defined]
                                        options={"timeout": self._timeout(len(data)),
                                                 "headers": {"Content-Type": "application/json"}})
        status = _status_of(batch, "batch creation")
        memo = self._submitted
        memo[status.batch_id] = tuple(i.custom_id for i in items)
        while len(memo) > _REMEMBERED:
            memo.popitem(last=False)
        return status

    @_classified
    async def poll_batch(self, batch_id: str) -> BatchStatus:
        return _status_of(await self._client.messages.batches.retrieve(batch_id))  # type: ignore[attr-defined]

    @_classified
    async def find_batches(self, intents: Sequence[WaveIntent], *, known: frozenset[str] = frozenset()
                           ) -> dict[str, BatchStatus]:
        """The batches created for ``intents``.  A Message Batch keeps no metadata, and its
        requests can be read only once it has ended (its results' ``custom_id``s); while it runs
        the API shows its request count and ``created_at``.  So ``GET /v1/messages/batches`` is
        read (newest first) back to :data:`~judgekit.providers.batch.LOOK_BACK_S` before the
        oldest intent, and a batch not in ``known`` is an intent's when it holds as many requests,
        was created after the intent's record (less the look-back) and, if it has ended, its
        results name exactly the intent's ``custom_id``s.  An ended batch that proves to be an
        intent's is preferred; else the earliest such batch still running (what it answers is
        joined on ``custom_id`` when collected: a request it does not hold is asked again).  The
        batches this provider object created itself are not candidates.  What the API lets no
        client tell apart: a running batch of the same size created at the same time by another
        client of the workspace (or another wave whose create reply is still on its way)."""
        if not intents:
            return {}
        client = self._client  # type: ignore[attr-defined]
        known = known | set(self._submitted)  # batches this object created were recorded by their wave
        since = min(i.recorded_at for i in intents) - LOOK_BACK_S
        recent = []
        async for batch in client.messages.batches.list(limit=100):
            created = _seconds(getattr(batch, "created_at", None))
            if created is not None and created < since:
                break  # the list is newest first
            if len(recent) >= _LIST_MOST:
                log.warning("find_batches: stopped after %d batches without reaching the intents' time", _LIST_MOST)
                break
            batch_id = getattr(batch, "id", None)
            if isinstance(batch_id, str) and batch_id not in known:
                recent.append((created, batch))
        recent.sort(key=lambda cb: cb[0] if cb[0] is not None else float("inf"))  # oldest first
        found: dict[str, BatchStatus] = {}
        taken: set[str] = set()
        ids_of: dict[str, frozenset[str] | None] = {}
        for intent in sorted(intents, key=lambda i: i.recorded_at):
            want = frozenset(intent.custom_ids)
            running = None
            for created, batch in recent:
                status = _status_of(batch)
                if status.batch_id in taken or status.total != len(want) or (
                        created is not None and created < intent.recorded_at - LOOK_BACK_S):
                    continue
                if not status.terminal:
                    running = running or status
                    continue
                if status.batch_id not in ids_of:
                    ids_of[status.batch_id] = await self._result_ids(status.batch_id, batch)
                if ids_of[status.batch_id] == want:
                    found[intent.wave] = status
                    break
            else:
                if running is not None:
                    running.guessed = True
                    found[intent.wave] = running
            if intent.wave in found:
                taken.add(found[intent.wave].batch_id)
        return found

    async def _result_ids(self, batch_id: str, batch: Any) -> frozenset[str] | None:
        """The ``custom_id``s an ended batch's results name (None: no results to read)."""
        if not getattr(batch, "results_url", None):
            return None
        client = self._client  # type: ignore[attr-defined]
        try:
            decoder = await client.messages.batches.results(batch_id, timeout=self._timeout())
        except Exception as err:
            if getattr(classify_anthropic_error(err), "status", None) == 404:
                return None  # results gone: this batch cannot be told to be an intent's
            raise
        response = decoder.http_response
        try:
            data = await response.aread()
        finally:
            await response.aclose()
        ids = set()
        for raw in data.splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            cid = obj.get("custom_id") if isinstance(obj, dict) else None
            if isinstance(cid, str):
                ids.add(cid)
        return frozenset(ids)

    @_classified
    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        """Ask the batch to stop (``canceling``, then ``ended``: answers given so far are kept).
        A batch that has ended already is returned as it is."""
        client = self._client  # type: ignore[attr-defined]
        try:
            return _status_of(await client.messages.batches.cancel(batch_id), "batch cancel")
        except Exception as err:
            mapped = classify_anthropic_error(err)
            if not isinstance(mapped, BadRequest) and getattr(mapped, "status", None) != 409:
                raise
            status = _status_of(await client.messages.batches.retrieve(batch_id))
            if status.terminal:
                return status
            raise

    @_classified
    async def batch_results(self, batch_id: str, custom_ids: Sequence[str] | None = None) -> list[BatchOutcome]:
        """Every request of the ended batch ``batch_id`` (see the module docstring); ``custom_ids``:
        its requests, when the caller knows them (else those this provider submitted, if it did)."""
        client = self._client  # type: ignore[attr-defined]
        batch = await client.messages.batches.retrieve(batch_id)
        status = _status_of(batch)
        if not status.terminal:
            raise ValueError(f"batch {batch_id} has not ended (processing_status {status.provider_status!r})")
        ids = list(custom_ids) if custom_ids is not None else self._submitted.get(batch_id)
        if not getattr(batch, "results_url", None):
            if getattr(batch, "archived_at", None) is not None:
                gone = f"the results of batch {batch_id} were archived (kept 29 days)"
                return [BatchOutcome(c, error=BatchRequestNotRun(gone), extra={"batch_id": batch_id})
                        for c in ids or ()]
            raise MalformedReply(f"batch {batch_id} has ended but gives no results_url")
        decoder = await client.messages.batches.results(batch_id, timeout=self._timeout())
        response = decoder.http_response
        try:
            data = await response.aread()
        finally:
            await response.aclose()
        not_run = {"cancelled": "the batch was canceled before running this request",
                   "expired": "the batch expired before running this request"}.get(
            status.state, "the batch's results do not report this request")
        joined, read = await asyncio.to_thread(join_results, ids, data.splitlines(), price=self._price,
                                               not_run=not_run, not_run_as={
                                                   "cancelled": BatchCancelled, "expired": BatchExpired}.get(
                                                   status.state, BatchRequestNotRun))
        if not read and (data.strip() or status.total):
            kind = response.headers.get("content-type", "?")
            raise MalformedReply(f"the results of batch {batch_id} are not JSONL ({kind[:60]}): "
                                 f"{data[:120].decode('utf-8', 'replace')!r}")
        if joined.garbage or joined.unknown or joined.duplicates:
            log.warning("batch %s: %d unreadable result lines, %d for requests it does not hold (%s), %d repeated",
                        batch_id, joined.garbage, len(joined.unknown), ", ".join(joined.unknown[:3]),
                        joined.duplicates)
        for o in joined.outcomes:
            o.extra["batch_id"] = batch_id
        return joined.outcomes
