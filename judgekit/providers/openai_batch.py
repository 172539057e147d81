"""The OpenAI Batch API as judgekit's :class:`~judgekit.providers.batch.BatchAPI`: OpenAI, Azure
OpenAI, the simulator, and OpenAI-compatible servers that serve ``/v1/files`` and ``/v1/batches``.

:class:`OpenAIBatchMixin` is the batch side of :class:`~judgekit.providers.openai.OpenAIProvider`
(and so of the simulator's provider, an OpenAI-SDK client too); it uses the provider's client,
its request building (:meth:`~judgekit.providers.openai.OpenAIProvider.chat_body`), its reply
reading and its error mapping, so a batch answer and a live answer of the same request are the
same thing in the cache.

- **submit**: one JSONL line per request, ``{"custom_id", "method": "POST", "url":
  "/v1/chat/completions", "body": <the live call's body>}`` (Azure: ``"/chat/completions"``, the
  body's ``model`` its deployment), uploaded with ``files.create(purpose="batch")``, then
  ``batches.create(input_file_id, endpoint, completion_window="24h")``.  One model per file (the
  provider's).  Limits (:data:`OPENAI_BATCH_LIMITS`): 50,000 requests and 200 MB per input file
  (the Batch API reference; Azure's global batch is held to the same).
- **poll**: the ``Batch``'s ``status`` as judgekit's :data:`~judgekit.providers.batch.BatchState`
  (:func:`batch_state`), its ``request_counts``, age and, for a failed batch, its ``errors``.
- **results** (:func:`join_results`): the output and error files (JSONL, in no particular order)
  joined on ``custom_id`` with the batch's own requests, read back from its input file.  A line's
  ``response.body`` with ``status_code`` 200 is read by the live reader
  (:func:`~judgekit.providers.replies.chat_completion_response`: text, usage with cached and
  reasoning tokens, empty / filtered / refused / malformed replies as their errors); another
  status goes through the live error mapping (429 retryable, 400 BadRequest, 401 AuthError, 5xx
  transient...); an ``error`` of ``batch_expired`` / ``batch_cancelled`` is
  :class:`~judgekit.providers.batch.BatchRequestNotRun`, another one a TransientError.  Requests
  in neither file, or whose lines cannot be read, are BatchRequestNotRun; lines for ids the batch
  does not hold are left out (counted in :attr:`JoinedResults.unknown`); a request answered twice
  keeps its first answer (an answer before an error).  A failed batch (its input refused) gives
  each line its ``errors`` name a BadRequest (a validation error, with its line and code) and the
  rest :class:`~judgekit.providers.batch_errors.BatchFailed` with the batch's ``errors``, or
  :class:`~judgekit.providers.batch_errors.BatchQueueFull` when they say ``token_limit_exceeded``
  (the organisation's enqueued-token limit); an expired or cancelled batch's unanswered requests
  are ``BatchExpired`` / ``BatchCancelled``; a per-request error carries its ``type`` or ``code``
  as ``provider_type`` (:mod:`judgekit.providers.batch_errors`).
- **cost**: every answer is priced at the batch rates (:func:`judgekit.cost.prices.usage_usd`
  with ``batch=True``), its ``cost_usd`` set; a failure that billed tokens (a filtered reply)
  carries its batch cost in ``BatchOutcome.extra["cost_usd"]``.
- **errors** of the batch calls themselves go through the live mapping
  (:func:`~judgekit.providers.openai_errors.classify_openai_error`), with the provider's keys redacted.

Files are never deleted here: reading a batch's results again (after a crash between reading
them and storing them) must give the same answers.  The Batch API keeps them 30 days.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import BadRequest, MalformedReply, ProviderError, TransientError
from ..types import ChatResponse
from .batch import (
    BatchItem,
    BatchLimits,
    BatchOutcome,
    BatchRequestNotRun,
    BatchState,
    BatchStatus,
    BatchSideBase,
    LOOK_BACK_S,
    WaveIntent,
    classified_by,
    refused,
    wave_tag,
)
from .batch_errors import BatchCancelled, BatchExpired, BatchFailed, BatchQueueFull, with_type
from .openai_errors import classify_openai_error, error_message, status_error
from .replies import chat_completion_response, short_string
from .sizes import MB

__all__ = ["OpenAIBatchMixin", "OPENAI_BATCH_LIMITS", "batch_state", "batch_line", "join_results", "JoinedResults",
           "line_outcome", "input_custom_ids", "NOT_RUN_CODES"]

log = logging.getLogger(__name__)

#: the Batch API's limits per input file (the reference of ``batches.create``)
OPENAI_BATCH_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * MB)
#: the Batch API's statuses as judgekit's batch states
_STATES: dict[str, BatchState] = {
    "validating": "submitted", "in_progress": "in_progress", "finalizing": "finalizing", "completed": "ended",
    "failed": "failed", "expired": "expired", "cancelling": "cancelling", "cancelled": "cancelled",
    # the American spelling, as some compatible servers write it
    "canceling": "cancelling", "canceled": "cancelled",
}
#: per-request ``error.code`` values of a request the batch never ran
NOT_RUN_CODES = frozenset({"batch_expired", "batch_cancelled", "batch_canceled"})
_CUSTOM_ID = re.compile(rb'^\{"custom_id":\s*("(?:[^"\\]|\\.)*")')
#: the metadata key that carries a batch's wave id, and the input file name that does
_WAVE_KEY = "judgekit_wave"
_WAVE_FILE = re.compile(r"judgekit-batch-(jkwave-[0-9a-f]+)\.jsonl")
#: the most batches :meth:`OpenAIBatchMixin.find_batches` reads from the list
_LIST_MOST = 10_000
#: the slowest transfer rate assumed when setting an upload's timeout (bytes per second)


def batch_state(status: Any) -> BatchState:
    """judgekit's state of a Batch API ``status``.  A status this version does not know (a newer
    API's, a compatible server's own) is ``in_progress``: not terminal, so it is polled again,
    and shown as the provider wrote it.  Not a string: MalformedReply."""
    if not isinstance(status, str):
        raise MalformedReply(f"batch status is not a string: {status!r:.80}")
    return _STATES.get(status.strip().lower(), "in_progress")


def batch_line(custom_id: str, url: str, body: dict[str, Any]) -> bytes:
    """One line of a batch input file, newline included (ASCII JSON: its size is its length)."""
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body},
                      separators=(",", ":")).encode("ascii") + b"\n"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _status_of(batch: Any, what: str = "batch") -> BatchStatus:
    """A ``Batch`` object (the SDK's, built without validation: any field may be of any type) as a
    :class:`BatchStatus`."""
    batch_id = getattr(batch, "id", None)
    if not isinstance(batch_id, str) or not batch_id:
        raise MalformedReply(f"{what} reply has no batch id: {batch!r:.200}")
    status = getattr(batch, "status", None)
    state = batch_state(status)
    counts = getattr(batch, "request_counts", None)
    created = getattr(batch, "created_at", None)
    age = max(0.0, time.time() - created) if isinstance(created, (int, float)) and not isinstance(created, bool) \
        else None
    message = ""
    errors = getattr(getattr(batch, "errors", None), "data", None)
    if isinstance(errors, list) and errors:
        parts = [_error_text(e) for e in errors[:5]]
        message = "; ".join(parts) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
    return BatchStatus(batch_id=batch_id, state=state, provider_status=short_string(status, "status", strict=False),
                       total=_count(getattr(counts, "total", 0)), succeeded=_count(getattr(counts, "completed", 0)),
                       failed=_count(getattr(counts, "failed", 0)), age_s=age, message=message)


def _error_text(err: Any) -> str:
    get = err.get if isinstance(err, dict) else (lambda k: getattr(err, k, None))
    code, line, msg = get("code"), get("line"), get("message")
    where = f"line {line}: " if isinstance(line, int) else ""
    return f"{where}[{code or 'error'}] {str(msg or '')[:300]}"


# ---------------------------------------------------------------------------------------------
# results


class _LineStatusError:
    """The parts of an openai ``APIStatusError`` the live error mapping reads, for a non-200
    line of a batch's results (its ``response.status_code`` and ``response.body``)."""

    def __init__(self, status: int, body: Any) -> None:
        self.status_code = status
        self.body = body
        inner = body.get("error", body) if isinstance(body, dict) else None
        inner = inner if isinstance(inner, dict) else {}
        self.code, self.type, self.param = inner.get("code"), inner.get("type"), inner.get("param")
        self.message = str(inner.get("message") or body)[:500]


def _status_code(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def line_outcome(obj: Any, price: Callable[[ChatResponse], float] | None = None) -> tuple[str, BatchOutcome] | None:
    """One line of a batch's output or error file (decoded JSON) as (custom_id, outcome); None
    when the line names no ``custom_id`` (nothing can be told of it)."""
    if not isinstance(obj, dict):
        return None
    cid = obj.get("custom_id")
    if not isinstance(cid, str) or not cid:
        return None
    out = BatchOutcome(custom_id=cid)
    response, error = obj.get("response"), obj.get("error")
    if isinstance(response, dict):
        status = _status_code(response.get("status_code"))
        body = response.get("body")
        request_id = response.get("request_id")
        if isinstance(request_id, str):
            out.extra["request_id"] = request_id[:200]
        if status == 200:
            headers = {"x-request-id": request_id} if isinstance(request_id, str) else {}
            try:
                out.response = chat_completion_response(body, headers, 0.0)
            except ProviderError as err:
                out.error = err
                usage = getattr(err, "usage", None)
                if usage is not None and price is not None:
                    out.extra["cost_usd"] = price(ChatResponse(text="", usage=usage))
            else:
                if price is not None:
                    out.response.cost_usd = price(out.response)
            return cid, out
        if status is not None and 100 <= status <= 599:
            shim = _LineStatusError(status, body)
            out.error = with_type(status_error(shim, status, None, error_message(shim)), shim.type or shim.code)
            return cid, out
        out.error = MalformedReply(f"batch result line has a response without a valid status_code: {obj!r:.200}")
        return cid, out
    if isinstance(error, dict):
        code = error.get("code")
        text = f"[{code or 'error'}] {str(error.get('message') or '')[:300]}"
        if isinstance(code, str) and code.lower() in NOT_RUN_CODES:
            gone = BatchExpired if code.lower() == "batch_expired" else BatchCancelled
            out.error = gone(f"the batch did not run this request: {text}")
        else:
            out.error = with_type(TransientError(f"the batch failed this request: {text}"),
                                  code if isinstance(code, str) else None)
        return cid, out
    out.error = MalformedReply(f"batch result line has neither a response nor an error: {obj!r:.200}")
    return cid, out


@dataclass
class JoinedResults:
    """A batch's requests, each answered once (:func:`join_results`), and what was odd."""

    outcomes: list[BatchOutcome]
    garbage: int = 0
    """Result lines that could not be read (not JSON, or no ``custom_id``)."""
    unknown: list[str] = field(default_factory=list)
    """``custom_id``s of result lines for requests the batch does not hold."""
    duplicates: int = 0
    """Result lines for a request already answered."""


def join_results(custom_ids: Sequence[str], lines: Iterable[bytes], *,
                 price: Callable[[ChatResponse], float] | None = None,
                 not_run: str = "the batch's results do not report this request",
                 not_run_as: type[BatchRequestNotRun] = BatchRequestNotRun) -> JoinedResults:
    """Every request of a batch (``custom_ids``, in order) with what the result ``lines`` (of the
    output and error files, any order) say of it; a request no line answers is a
    ``not_run_as`` (a BatchRequestNotRun: expired, cancelled, failed...) with the message ``not_run``.  A response wins over an error; otherwise the
    first line of a request wins."""
    wanted = dict.fromkeys(custom_ids)
    found: dict[str, BatchOutcome] = {}
    joined = JoinedResults(outcomes=[])
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            joined.garbage += 1
            continue
        read = line_outcome(obj, price)
        if read is None:
            joined.garbage += 1
            continue
        cid, outcome = read
        if cid not in wanted:
            joined.unknown.append(cid)
            continue
        before = found.get(cid)
        if before is not None:
            joined.duplicates += 1
            if before.response is not None or outcome.response is None:
                continue
        found[cid] = outcome
    joined.outcomes = [found.get(cid) or BatchOutcome(cid, error=not_run_as(not_run)) for cid in wanted]
    return joined


def input_custom_ids(data: bytes) -> list[str]:
    """The ``custom_id`` of each line of a batch input file, in order ("" for a line without one;
    the API numbers lines from 1 in the same way).  Reads the id at the start of the line as
    :func:`batch_line` writes it, else decodes the line."""
    ids: list[str] = []
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()  # the newline that ends the last line
    for raw in lines:
        m = _CUSTOM_ID.match(raw)
        cid: Any = None
        if m:
            try:
                cid = json.loads(m.group(1))
            except ValueError:
                cid = None
        if cid is None:
            try:
                obj = json.loads(raw)
                cid = obj.get("custom_id") if isinstance(obj, dict) else None
            except ValueError:
                cid = None
        ids.append(cid if isinstance(cid, str) else "")
    return ids


# ---------------------------------------------------------------------------------------------
# the provider's side


_classified = classified_by(classify_openai_error)


class OpenAIBatchMixin(BatchSideBase):
    """The batch side of the OpenAI provider (see the module docstring).  Needs the provider's
    ``_client``, ``spec``, ``kind``, ``chat_body`` and ``redact_error``."""

    @property
    def batch_limits(self) -> BatchLimits:
        """:data:`OPENAI_BATCH_LIMITS`.  Absent (AttributeError, so ``isinstance(p, BatchAPI)`` is
        False) on subclasses whose calls are no chat completions (the image generators)."""
        if not getattr(self, "serves_chat_batches", True):
            raise AttributeError(f"{type(self).__name__} has no batch API")
        return OPENAI_BATCH_LIMITS

    @property
    def _batch_url(self) -> str:
        return "/chat/completions" if self.spec.provider == "azure" else "/v1/chat/completions"  # type: ignore[attr-defined]

    def _line(self, item: BatchItem) -> bytes:
        return batch_line(item.custom_id, self._batch_url, self.chat_body(item.request))  # type: ignore[attr-defined]

    def batch_line_bytes(self, item: BatchItem) -> int:
        """The size of ``item``'s line in the input file.  A request over the API's size limits
        raises the RequestTooLarge its live call would (so that one call fails, not the batch)."""
        return len(self._line(item))

    @_classified
    async def submit_batch(self, items: list[BatchItem], *, wave: str | None = None) -> BatchStatus:
        """Upload ``items`` as one input file and create its batch.  The caller keeps to
        :attr:`batch_limits` and gives each request once: otherwise ValueError, nothing sent.
        ``wave`` names the batch for :meth:`find_batches`: in the batch's ``metadata`` (OpenAI)
        and in the input file's name (Azure too, whose api versions may not take metadata)."""
        limits = self.batch_limits
        if not items:
            raise ValueError("submit_batch: no requests")
        if len(items) > limits.max_requests:
            raise ValueError(f"submit_batch: {len(items):,} requests, more than the {limits.max_requests:,} a batch "
                             "may hold")
        if len({i.custom_id for i in items}) != len(items):
            raise ValueError("submit_batch: a custom_id appears twice (the Batch API refuses the file)")
        data = await asyncio.to_thread(lambda: b"".join(self._line(i) for i in items))
        if len(data) > limits.max_bytes:
            raise ValueError(f"submit_batch: the input file is {len(data):,} bytes, more than the "
                             f"{limits.max_bytes:,} allowed")
        client = self._client  # type: ignore[attr-defined]
        filename = f"judgekit-batch-{wave_tag(wave)}.jsonl" if wave else "judgekit-batch.jsonl"
        upload = await client.files.create(file=(filename, data, "application/jsonl"), purpose="batch",
                                           timeout=self._timeout(len(data)))
        file_id = getattr(upload, "id", None)
        if not isinstance(file_id, str) or not file_id:
            raise MalformedReply(f"file upload reply has no file id: {upload!r:.200}")
        # metadata names the batch in the provider's dashboard (Azure's api versions may not take it)
        extra = {} if self.spec.provider == "azure" else {  # type: ignore[attr-defined]
            "metadata": {"source": "judgekit", "alias": self.alias[:512],  # type: ignore[attr-defined]
                         **({_WAVE_KEY: wave} if wave else {})}}
        try:
            batch = await client.batches.create(input_file_id=file_id, endpoint=self._batch_url,
                                                completion_window="24h", **extra)
        except Exception as err:
            if refused(classify_openai_error(err)):  # else the batch may exist and read its file
                try:  # nothing will read it: do not leave it in the account's storage
                    await client.files.delete(file_id)
                except Exception:  # noqa: BLE001 - the create's error is the one to report
                    pass
            raise
        return _status_of(batch, "batch creation")

    @_classified
    async def poll_batch(self, batch_id: str) -> BatchStatus:
        return _status_of(await self._client.batches.retrieve(batch_id))  # type: ignore[attr-defined]

    @_classified
    async def find_batches(self, intents: Sequence[WaveIntent], *, known: frozenset[str] = frozenset()
                           ) -> dict[str, BatchStatus]:
        """The batches created for ``intents``: ``GET /v1/batches`` page by page (newest first)
        back to :data:`~judgekit.providers.batch.LOOK_BACK_S` before the oldest intent; a batch
        is an intent's when its ``metadata`` names the wave, or, without that key (Azure, a
        compatible server that drops metadata), when its input file's name does."""
        if not intents:
            return {}
        client = self._client  # type: ignore[attr-defined]
        waves = {i.wave for i in intents}
        by_tag = {wave_tag(w): w for w in waves}
        since = min(i.recorded_at for i in intents) - LOOK_BACK_S
        sizes = {len(i.custom_ids) for i in intents}
        found: dict[str, BatchStatus] = {}
        seen = 0
        async for batch in client.batches.list(limit=100):
            seen += 1
            created = getattr(batch, "created_at", None)
            if isinstance(created, (int, float)) and not isinstance(created, bool) and created < since:
                break  # the list is newest first
            if seen > _LIST_MOST:
                log.warning("find_batches: stopped after %d batches without reaching the intents' time", _LIST_MOST)
                break
            batch_id = getattr(batch, "id", None)
            if not isinstance(batch_id, str) or batch_id in known:
                continue
            meta = getattr(batch, "metadata", None)
            wave = meta.get(_WAVE_KEY) if isinstance(meta, dict) else None
            if wave is None and _may_be_ours(batch, self._batch_url, sizes):  # its file's name tells
                wave = await self._wave_of_file(getattr(batch, "input_file_id", None), by_tag)
            if isinstance(wave, str) and wave in waves and wave not in found:
                found[wave] = _status_of(batch)
                if len(found) == len(waves):
                    break
        return found

    async def _wave_of_file(self, file_id: Any, by_tag: dict[str, str]) -> str | None:
        """The wave an input file's name carries (None: none of ``by_tag``'s, or no such file)."""
        if not isinstance(file_id, str) or not file_id:
            return None
        try:
            name = getattr(await self._client.files.retrieve(file_id), "filename", None)  # type: ignore[attr-defined]
        except Exception as err:
            if getattr(classify_openai_error(err), "status", None) == 404:
                return None  # deleted (after 30 days): not a recent batch's
            raise
        m = _WAVE_FILE.fullmatch(name) if isinstance(name, str) else None
        return by_tag.get(m.group(1)) if m else None

    @_classified
    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        """Ask the batch to stop (it goes through ``cancelling``; answers given so far are kept).
        A batch that has ended already is returned as it is."""
        client = self._client  # type: ignore[attr-defined]
        try:
            return _status_of(await client.batches.cancel(batch_id), "batch cancel")
        except Exception as err:
            mapped = classify_openai_error(err)
            if not isinstance(mapped, BadRequest) and getattr(mapped, "status", None) != 409:
                raise
            status = _status_of(await client.batches.retrieve(batch_id))
            if status.terminal:
                return status
            raise

    @_classified
    async def batch_results(self, batch_id: str, custom_ids: Sequence[str] | None = None) -> list[BatchOutcome]:
        """Every request of the ended batch ``batch_id`` (see the module docstring)."""
        client = self._client  # type: ignore[attr-defined]
        batch = await client.batches.retrieve(batch_id)
        status = _status_of(batch)
        if not status.terminal:
            raise ValueError(f"batch {batch_id} has not ended (status {status.provider_status!r})")
        input_id = getattr(batch, "input_file_id", None)
        if not isinstance(input_id, str) or not input_id:
            raise MalformedReply(f"batch {batch_id} names no input file: {batch!r:.200}")
        custom_ids = await asyncio.to_thread(input_custom_ids, await self._download(input_id))
        lines: list[bytes] = []
        for key in ("output_file_id", "error_file_id"):
            file_id = getattr(batch, key, None)
            if isinstance(file_id, str) and file_id:
                lines.extend((await self._download(file_id)).splitlines())
        not_run = {"ended": "the batch's results do not report this request",
                   "expired": "the batch expired before running this request",
                   "cancelled": "the batch was cancelled before running this request",
                   "failed": f"the batch failed as a whole: {status.message or status.provider_status}"}[status.state]
        errors = getattr(getattr(batch, "errors", None), "data", None)
        not_run_as = {"ended": BatchRequestNotRun, "expired": BatchExpired, "cancelled": BatchCancelled,
                      "failed": BatchQueueFull if _queue_full(errors) else BatchFailed}[status.state]
        joined = await asyncio.to_thread(join_results, [c for c in custom_ids if c], lines, price=self._price,
                                         not_run=not_run, not_run_as=not_run_as)
        if status.state == "failed":
            _blame_lines(joined.outcomes, custom_ids, errors)
        if joined.garbage or joined.unknown or joined.duplicates:
            log.warning("batch %s: %d unreadable result lines, %d for requests it does not hold (%s), %d repeated",
                        batch_id, joined.garbage, len(joined.unknown), ", ".join(joined.unknown[:3]),
                        joined.duplicates)
        for o in joined.outcomes:
            o.extra["batch_id"] = batch_id
        return joined.outcomes

    async def _download(self, file_id: str) -> bytes:
        content = await self._client.files.content(file_id, timeout=self._timeout())  # type: ignore[attr-defined]
        data = getattr(content, "content", None)
        if not isinstance(data, (bytes, bytearray)):
            raise MalformedReply(f"file {file_id}: content is not bytes")
        return bytes(data)


def _queue_full(errors: Any) -> bool:
    """Whether a failed batch's ``errors`` say the organisation's enqueued-token limit refused it
    (``token_limit_exceeded``, with no line: the batch as a whole)."""
    for e in errors if isinstance(errors, list) else ():
        code = e.get("code") if isinstance(e, dict) else getattr(e, "code", None)
        if isinstance(code, str) and code.lower() == "token_limit_exceeded":
            return True
    return False


def _may_be_ours(batch: Any, endpoint: str, sizes: set[int]) -> bool:
    """Whether a batch without judgekit's metadata could be one of the intents' (so its input
    file's name is worth reading): its endpoint is ours and its request count, once known, one
    of the intents'."""
    ep = getattr(batch, "endpoint", None)
    if isinstance(ep, str) and ep.rstrip("/") != endpoint:
        return False
    total = getattr(getattr(batch, "request_counts", None), "total", None)
    return not (isinstance(total, int) and total > 0 and total not in sizes)


def _blame_lines(outcomes: list[BatchOutcome], custom_ids: list[str], errors: Any) -> None:
    """A failed batch's ``errors`` that name an input line (1-based) make that line's request a
    BadRequest (the same line would be refused again); the others stay not run."""
    if not isinstance(errors, list):
        return
    by_id = {o.custom_id: o for o in outcomes}
    for e in errors:
        line = e.get("line") if isinstance(e, dict) else getattr(e, "line", None)
        if isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= len(custom_ids):
            target = by_id.get(custom_ids[line - 1])
            if target is not None and target.response is None:
                code = e.get("code") if isinstance(e, dict) else getattr(e, "code", None)
                target.error = with_type(BadRequest(f"the Batch API refused this request: {_error_text(e)}"),
                                         code if isinstance(code, str) else None, validation=True)
