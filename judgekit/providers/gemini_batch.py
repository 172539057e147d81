"""Gemini batch mode (the Gemini Developer API, through google-genai) as judgekit's
:class:`~judgekit.providers.batch.BatchAPI`: :class:`GeminiBatchMixin`, the batch side of
:class:`~judgekit.providers.gemini.GeminiProvider`.

The file form, not the inline one.  The API takes a batch's requests inline (``src=[...]``, under
20 MB in all) or as a JSONL file of ``{"key", "request"}`` lines uploaded through the Files API
(up to 2 GB), whose answers come back as a JSONL file of ``{"key", "response" | "error"}`` lines.
Inline answers cannot be joined safely: the backend does not return an inline request's
``metadata`` (googleapis/python-genai#2008, js-genai#1191) and does not keep the requests' order
(python-genai#1909, though the reference says it does), so a judge's verdict could land on the
wrong item.  The file form's ``key`` is the request's ``custom_id`` (the call's cache key), and
answers are joined on it, never on their order.

- **submit**: one line per request, ``{"key": custom_id, "request": <the live call's body>}``: the
  contents and config of :meth:`~judgekit.providers.gemini.GeminiProvider.content_request`
  turned into JSON by the SDK's own converter for ``generateContent`` (:func:`request_body`), so
  a batch line and a live call send the same request (tested on the wire); uploaded with
  ``files.upload`` (mime type ``jsonl``), then ``batches.create(model, src="files/...")``.  A
  failed creation deletes its upload.  Limits (:data:`GEMINI_BATCH_LIMITS`): the API takes input
  files up to 2 GB and documents no request count; judgekit holds a batch to 200 MB (the file is
  built and uploaded from memory; 100 live batches of 200 MB fill the 20 GB a project may store)
  and 50,000 requests.  :meth:`~GeminiBatchMixin.batch_line_bytes` is the line's exact size
  without encoding its images (a request over the live size limit raises the live
  RequestTooLarge).
- **poll**: the batch's long-running operation, read as JSON through the SDK's API client (the
  SDK's ``BatchJob`` drops ``batchStats`` for this API): ``metadata.state`` as judgekit's state
  (:func:`batch_state`, ``BATCH_STATE_*`` and the SDK's ``JOB_STATE_*`` names alike; an unknown
  one stays ``in_progress``), ``batchStats`` as the counts, ``createTime`` as the age, and the
  operation's ``error`` as the message.
- **results** (:func:`join_lines`): the responses file (``metadata.output.responsesFile``),
  downloaded with ``files.download``; a line's ``response`` is read as a live reply is
  (:func:`read_response`: the SDK's own conversion into ``GenerateContentResponse``, then
  :func:`judgekit.providers.gemini._response`: blocked, filtered, empty and malformed replies are
  the same errors as live, a filtered one keeping what it was billed); a line's ``error`` (a
  ``google.rpc.Status``) goes through the live error mapping (:func:`line_error`: ``CANCELLED`` /
  ``DEADLINE_EXCEEDED`` are :class:`~judgekit.providers.batch.BatchRequestNotRun`, ``INVALID_ARGUMENT``
  a BadRequest, ``RESOURCE_EXHAUSTED`` a rate limit, ``INTERNAL`` / ``UNAVAILABLE`` transient).
  Lines without a key, unreadable lines, and repeated keys (a response wins over an error, else
  the first) are counted and logged.  The requests of a batch cannot be listed afterwards (the
  API does not let an uploaded file be downloaded), so a request the responses file does not
  report, or every request of a batch that has none (failed, expired, cancelled early), is left
  to the batch layer, which counts it :class:`~judgekit.providers.batch.BatchRequestNotRun` and
  asks it again.
- **cost**: answers priced at the batch rates (:func:`judgekit.cost.prices.usage_usd` with
  ``batch=True``: 50 %).
- **cancel**: ``batches.cancel``, then the operation as it stands; cancelling a batch that has
  ended returns it as it is.
- **errors** of these calls are the live call's (:func:`~judgekit.providers.gemini.classify_gemini_error`),
  keys redacted.

Files and batches are never deleted here: reading a batch's results again (after a crash between
reading and storing them) must give the same answers.  The API deletes files after 48 hours.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as _dt
import functools
import io
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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
)
from .replies import short_string
from .sizes import MB, b64_len

__all__ = [
    "GEMINI_BATCH_LIMITS",
    "GRPC_TO_HTTP",
    "GeminiBatchMixin",
    "JoinedLines",
    "batch_state",
    "join_lines",
    "line_error",
    "read_response",
    "request_body",
    "status_of_operation",
]

log = logging.getLogger(__name__)

GEMINI_BATCH_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * MB)
#: request bodies kept between their sizing and their batch (about one batch's worth)
_KEPT_BODIES = 50_000
#: the API's states (``BatchState``) and the SDK's names for them (``JobState``) as judgekit's
_STATES: dict[str, BatchState] = {}
for _prefix in ("BATCH_STATE_", "JOB_STATE_"):
    _STATES.update({_prefix + "UNSPECIFIED": "submitted", _prefix + "PENDING": "submitted",
                    _prefix + "QUEUED": "submitted", _prefix + "RUNNING": "in_progress",
                    _prefix + "SUCCEEDED": "ended", _prefix + "PARTIALLY_SUCCEEDED": "ended",
                    _prefix + "FAILED": "failed", _prefix + "CANCELLING": "cancelling",
                    _prefix + "CANCELLED": "cancelled", _prefix + "EXPIRED": "expired"})
#: ``google.rpc.Code`` values as the HTTP statuses the live error mapping reads
GRPC_TO_HTTP = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501,
                13: 500, 14: 503, 15: 500, 16: 401}
_GRPC_NAMES = {"CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
               "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9,
               "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14,
               "DATA_LOSS": 15, "UNAUTHENTICATED": 16}
#: per-request codes of a request the batch never ran (asked again)
_NOT_RUN = frozenset({1, 4})


class CallerError(ValueError):
    """A batch method called wrongly (no requests, too many, a request twice, a batch that has
    not ended): nothing was sent."""


@functools.cache
def sdk_has_batches() -> bool:
    """Whether the installed google-genai has batches and the request and reply converters this
    module uses (the ones its live ``generate_content`` uses)."""
    try:
        from google.genai import _common, batches, models, types
    except ImportError:
        return False
    return all((hasattr(models, "_GenerateContentParameters_to_mldev"),
                hasattr(models, "_GenerateContentResponse_from_mldev"), hasattr(_common, "convert_to_dict"),
                hasattr(_common, "encode_unserializable_types"), hasattr(types, "_GenerateContentParameters"),
                hasattr(batches, "AsyncBatches")))


def batch_state(state: Any) -> BatchState:
    """judgekit's state of a batch's ``state`` (a string, or the SDK's enum).  A state this
    version does not know is ``in_progress``: not terminal, so it is polled again.  Another type:
    MalformedReply."""
    name = getattr(state, "name", state) if not isinstance(state, str) else state
    if not isinstance(name, str):
        raise MalformedReply(f"batch state is not a string: {state!r:.80}")
    return _STATES.get(name.strip().upper(), "in_progress")


def _count(value: Any) -> int:
    """A count of ``batchStats`` (int64 values travel as JSON strings)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value >= 0 else 0


def _age(created: Any) -> float | None:
    if not isinstance(created, str):
        return None
    try:
        t = _dt.datetime.fromisoformat(created.strip())
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return max(0.0, (_dt.datetime.now(_dt.UTC) - t).total_seconds())


def status_of_operation(op: Any, what: str = "batch") -> BatchStatus:
    """A batch's long-running operation (decoded JSON) as a :class:`BatchStatus`."""
    if not isinstance(op, dict):
        raise MalformedReply(f"{what} reply is not a JSON object: {op!r:.200}")
    meta = op.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = op.get("name") or meta.get("name")
    if not isinstance(name, str) or not name.startswith("batches/"):
        raise MalformedReply(f"{what} reply names no batch: {op!r:.200}")
    raw_state = meta.get("state")
    error = op.get("error")
    if raw_state is None and op.get("done") is True:
        raw_state = "BATCH_STATE_FAILED" if isinstance(error, dict) else "BATCH_STATE_SUCCEEDED"
    state = batch_state(raw_state if raw_state is not None else "BATCH_STATE_PENDING")
    stats = meta.get("batchStats")
    stats = stats if isinstance(stats, dict) else {}
    message = ""
    if isinstance(error, dict):
        message = f"[{error.get('status') or error.get('code') or 'error'}] {str(error.get('message') or '')[:500]}"
    return BatchStatus(batch_id=name, state=state, provider_status=short_string(raw_state, "state", strict=False),
                       total=_count(stats.get("requestCount")), succeeded=_count(stats.get("successfulRequestCount")),
                       failed=_count(stats.get("failedRequestCount")), age_s=_age(meta.get("createTime")),
                       message=message)


def _responses_file(op: dict) -> str | None:
    """The name of a finished batch's responses file, if it has one."""
    for holder in ((op.get("metadata") or {}).get("output"), op.get("response")):
        if isinstance(holder, dict) and isinstance(holder.get("responsesFile"), str) and holder["responsesFile"]:
            return holder["responsesFile"]
    return None


# ---------------------------------------------------------------------------------------------
# the lines


def request_body(api_client: Any, contents: Any, config: Any) -> dict:
    """The body of a ``generateContent`` call as the SDK's converter for the Developer API builds
    it for a live call, image bytes left as bytes (:func:`line` encodes them as the live call
    does: urlsafe base64)."""
    from google.genai import _common, models, types

    params = types._GenerateContentParameters(model="judgekit", contents=contents, config=config)
    body = models._GenerateContentParameters_to_mldev(api_client, params)
    for internal in ("_url", "_query", "config"):
        body.pop(internal, None)
    return _common.convert_to_dict(body)


def _urlsafe_b64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.urlsafe_b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} in a request body")


def line(key: str, body: dict) -> bytes:
    """One line of a batch's input file, newline included (ASCII JSON: its size is its length)."""
    return json.dumps({"key": key, "request": body}, separators=(",", ":"), default=_urlsafe_b64).encode(
        "ascii") + b"\n"


def line_size(key: str, body: dict) -> int:
    """``len(line(key, body))`` without encoding the images (urlsafe base64 needs no escaping)."""
    images: list[int] = []

    def empty(value: Any) -> str:
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{type(value).__name__} in a request body")
        images.append(b64_len(len(value)))
        return ""

    return len(json.dumps({"key": key, "request": body}, separators=(",", ":"), default=empty)) + 1 + sum(images)


def read_response(raw: Any) -> ChatResponse:
    """A ``GenerateContentResponse`` (decoded JSON) read as a live reply is; an unreadable one is
    MalformedReply."""
    from google.genai import models, types

    from .gemini import _response

    if not isinstance(raw, dict):
        raise MalformedReply(f"batch response is not a GenerateContentResponse: {raw!r:.200}")
    try:
        resp = types.GenerateContentResponse._from_response(response=models._GenerateContentResponse_from_mldev(raw),
                                                             kwargs={})
    except Exception as err:  # noqa: BLE001 - whatever the SDK makes of it, this reply cannot be read
        raise MalformedReply(f"malformed batch response: {' '.join(str(err).split())[:300]}") from None
    return _response(resp, 0.0)


def line_error(error: Any) -> ProviderError:
    """A line's ``error`` (a ``google.rpc.Status``: ``code``, ``message``, ``status``) as the error
    a live call would have raised for it; a request the batch never ran is BatchRequestNotRun."""
    from google.genai import errors

    from .gemini import classify_gemini_error

    if not isinstance(error, dict):
        return MalformedReply(f"batch result line has an error that is not an object: {error!r:.200}")
    code = error.get("code")
    status = error.get("status")
    if (not isinstance(code, int) or isinstance(code, bool)) and isinstance(status, str):
        code = _GRPC_NAMES.get(status.upper())
    if not isinstance(code, int) or isinstance(code, bool):
        return TransientError(f"the batch failed this request: {str(error)[:300]}")
    text = f"[{status or code}] {str(error.get('message') or '')[:300]}"
    if code in _NOT_RUN:
        return BatchRequestNotRun(f"the batch did not run this request: {text}")
    http = GRPC_TO_HTTP.get(code, code if 400 <= code <= 599 else 500)
    body = {"error": {"code": http, "message": str(error.get("message") or ""), "status": status or "",
                      "details": error.get("details") if isinstance(error.get("details"), list) else []}}
    return classify_gemini_error(errors.APIError(http, body))


@dataclass
class JoinedLines:
    """The outcomes a responses file reports, one per key, and what was odd in it."""

    outcomes: list[BatchOutcome]
    garbage: int = 0
    """Lines that could not be read (not JSON, not an object, or without a key)."""
    duplicates: int = 0
    """Lines for a key already answered."""


def _outcome(obj: dict, key: str, price: Callable[[ChatResponse], float] | None) -> BatchOutcome:
    out = BatchOutcome(custom_id=key)
    if "response" in obj and obj["response"] is not None:
        try:
            out.response = read_response(obj["response"])
        except ProviderError as err:
            out.error = err
            usage = getattr(err, "usage", None)
            if usage is not None and price is not None:
                out.extra["cost_usd"] = price(ChatResponse(text="", usage=usage))
        else:
            if price is not None:
                out.response.cost_usd = price(out.response)
        return out
    error = obj.get("error", obj.get("status"))
    if error is not None:
        out.error = line_error(error)
        return out
    out.error = MalformedReply(f"batch result line has neither a response nor an error: {obj!r:.200}")
    return out


def join_lines(lines: Iterable[bytes], *, price: Callable[[ChatResponse], float] | None = None) -> JoinedLines:
    """The outcomes of a responses file's ``lines`` (any order), one per ``key``: a response wins
    over an error, otherwise the first line of a key wins."""
    found: dict[str, BatchOutcome] = {}
    joined = JoinedLines(outcomes=[])
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            joined.garbage += 1
            continue
        key = obj.get("key") if isinstance(obj, dict) else None
        if not isinstance(key, str) or not key:
            joined.garbage += 1
            continue
        before = found.get(key)
        if before is not None:
            joined.duplicates += 1
            if before.response is not None:
                continue
        outcome = _outcome(obj, key, price)
        if before is not None and outcome.response is None:
            continue
        found[key] = outcome
    joined.outcomes = list(found.values())
    return joined


# ---------------------------------------------------------------------------------------------
# the provider's side


def _classified(method):
    """A batch method whose failures are the live call's ProviderErrors, keys redacted."""

    @functools.wraps(method)
    async def wrapper(self, *args, **kwargs):
        from .gemini import classify_gemini_error

        try:
            return await method(self, *args, **kwargs)
        except ProviderError as err:
            self.redact_error(err)
            raise
        except CallerError:
            raise  # the caller's mistake, not the API's: nothing was sent
        except Exception as err:
            raise self.redact_error(classify_gemini_error(err)) from err

    return wrapper


class GeminiBatchMixin:
    """The batch side of the Gemini provider (see the module docstring).  Needs the provider's
    ``_client``, ``spec``, ``alias``, ``kind``, ``content_request`` and ``redact_error``."""

    @property
    def batch_limits(self) -> BatchLimits:
        """:data:`GEMINI_BATCH_LIMITS`.  Absent (AttributeError, so ``isinstance(p, BatchAPI)``
        is False) when the installed google-genai lacks what batch mode needs (:func:`sdk_has_batches`)."""
        if not sdk_has_batches():
            raise AttributeError("the installed google-genai has no batches (or converters this version does not "
                                 "know): pip install -U google-genai")
        return GEMINI_BATCH_LIMITS

    def _api_client(self) -> Any:
        client = self._client  # type: ignore[attr-defined]
        if client is None:
            raise RuntimeError("the Gemini provider is not started")
        return client.aio._api_client

    def _body(self, item: BatchItem, *, keep: bool = False) -> dict:
        """``item``'s request body: built once when its size is asked (the converter costs 2-5 ms
        a request), kept until its line is written (a custom_id is the hash of its request, so a
        body kept under it is the body)."""
        kept = self.__dict__.setdefault("_bodies", {})
        body = kept.get(item.custom_id) if keep else kept.pop(item.custom_id, None)
        if body is None:
            contents, config = self.content_request(item.request, timeout=False)  # type: ignore[attr-defined]
            body = request_body(self._api_client(), contents, config)
            if keep:
                while len(kept) >= _KEPT_BODIES:
                    kept.pop(next(iter(kept)))  # the oldest: a call that left its wave
                kept[item.custom_id] = body
        return body

    def _line(self, item: BatchItem) -> bytes:
        return line(item.custom_id, self._body(item))

    def batch_line_bytes(self, item: BatchItem) -> int:
        """The size of ``item``'s line in the input file, images counted without encoding them.
        A request over the API's size limits raises the RequestTooLarge its live call would."""
        return line_size(item.custom_id, self._body(item, keep=True))

    def _price(self, resp: ChatResponse) -> float:
        from ..cost.prices import usage_usd

        return usage_usd(self.kind, self.spec.model, resp.usage, self.spec.price, batch=True) or 0.0  # type: ignore[attr-defined]

    async def _operation(self, batch_id: str) -> dict:
        """The batch's long-running operation as JSON (the SDK's own HTTP client, auth and errors)."""
        if not isinstance(batch_id, str) or not batch_id.startswith("batches/"):
            raise CallerError(f"not a Gemini batch name: {batch_id!r}")
        reply = await self._api_client().async_request("get", batch_id, {}, None)
        try:
            return json.loads(reply.body or "")
        except ValueError:
            raise MalformedReply(f"batch {batch_id}: the reply is not JSON: {str(reply.body)[:200]!r}") from None

    @_classified
    async def submit_batch(self, items: list[BatchItem]) -> BatchStatus:
        """Upload ``items`` as one JSONL file and create its batch.  The caller keeps to
        :attr:`batch_limits` and gives each request once: otherwise ValueError, nothing sent."""
        from google.genai import types

        limits = self.batch_limits
        if not items:
            raise CallerError("submit_batch: no requests")
        if len(items) > limits.max_requests:
            raise CallerError(f"submit_batch: {len(items):,} requests, more than the {limits.max_requests:,} a batch "
                             "may hold")
        if len({i.custom_id for i in items}) != len(items):
            raise CallerError("submit_batch: a custom_id appears twice (answers are joined on it)")
        data = await asyncio.to_thread(lambda: b"".join(self._line(i) for i in items))
        if len(data) > limits.max_bytes:
            raise CallerError(f"submit_batch: the input file is {len(data):,} bytes, more than the "
                             f"{limits.max_bytes:,} allowed")
        aio = self._client.aio  # type: ignore[attr-defined]
        name = f"judgekit {self.alias}"[:128]  # type: ignore[attr-defined]
        upload = await aio.files.upload(file=io.BytesIO(data),
                                        config=types.UploadFileConfig(mime_type="jsonl", display_name=name))
        file_name = getattr(upload, "name", None)
        if not isinstance(file_name, str) or not file_name.startswith("files/"):
            raise MalformedReply(f"file upload reply has no file name: {upload!r:.200}")
        try:
            job = await aio.batches.create(model=self.spec.model, src=file_name,  # type: ignore[attr-defined]
                                           config=types.CreateBatchJobConfig(display_name=name))
        except Exception:
            try:  # nothing will read it: do not leave it in the project's storage
                await aio.files.delete(name=file_name)
            except Exception:  # noqa: BLE001, S110 - the create's error is the one to report
                pass
            raise
        batch_id = getattr(job, "name", None)
        if not isinstance(batch_id, str) or not batch_id.startswith("batches/"):
            raise MalformedReply(f"batch creation reply names no batch: {job!r:.200}")
        state = getattr(job, "state", None)
        raw = getattr(state, "value", state) or "JOB_STATE_PENDING"
        word = raw.replace("JOB_STATE_", "BATCH_STATE_") if isinstance(raw, str) else raw  # as a poll names it
        return BatchStatus(batch_id=batch_id, state=batch_state(raw),
                           provider_status=short_string(word, "state", strict=False), total=len(items))

    @_classified
    async def poll_batch(self, batch_id: str) -> BatchStatus:
        return status_of_operation(await self._operation(batch_id))

    @_classified
    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        """Ask the batch to stop (answers given so far are kept).  A batch that has ended already
        is returned as it is."""
        from .gemini import classify_gemini_error

        try:
            await self._client.aio.batches.cancel(name=batch_id)  # type: ignore[attr-defined]
        except Exception as err:
            mapped = classify_gemini_error(err)
            if not isinstance(mapped, BadRequest) and getattr(mapped, "status", None) != 409:
                raise
            status = status_of_operation(await self._operation(batch_id))
            if status.terminal:
                return status
            raise
        return status_of_operation(await self._operation(batch_id), "batch cancel")

    @_classified
    async def batch_results(self, batch_id: str) -> list[BatchOutcome]:
        """What the ended batch ``batch_id`` reports (see the module docstring): one outcome per
        key of its responses file; none when it has no responses file."""
        op = await self._operation(batch_id)
        status = status_of_operation(op)
        if not status.terminal:
            raise CallerError(f"batch {batch_id} has not ended (state {status.provider_status!r})")
        file_name = _responses_file(op)
        if file_name is None:
            if status.state == "ended":
                log.warning("batch %s succeeded but names no responses file", batch_id)
            return []
        data = await self._client.aio.files.download(file=file_name)  # type: ignore[attr-defined]
        if not isinstance(data, (bytes, bytearray)):
            raise MalformedReply(f"batch {batch_id}: the responses file {file_name} is not bytes")
        joined = await asyncio.to_thread(join_lines, bytes(data).splitlines(), price=self._price)
        if joined.garbage or joined.duplicates:
            log.warning("batch %s: %d unreadable result lines, %d repeated", batch_id, joined.garbage,
                        joined.duplicates)
        for o in joined.outcomes:
            o.extra["batch_id"] = batch_id
            if o.error is not None:
                self.redact_error(o.error)  # type: ignore[attr-defined]
        return joined.outcomes
