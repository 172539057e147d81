"""Gemini batch mode (the Gemini Developer API, through google-genai) as judgekit's
:class:`~judgekit.providers.batch.BatchAPI`: :class:`GeminiBatchMixin`, the batch side of
:class:`~judgekit.providers.gemini.GeminiProvider`.

The wire formats (operations, lines, responses) are :mod:`judgekit.providers.gemini_batch_wire`.

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
  turned into JSON by the SDK's own converter for ``generateContent`` (:func:`request_body`;
  images urlsafe base64, as live), so a batch line and a live call send the same request (tested
  on the wire); each body converted once, when the batch layer sizes it, and kept until its
  batch is written; uploaded with
  ``files.upload`` (mime type ``jsonl``), then ``batches.create(model, src="files/...")``.  A
  failed creation deletes its upload.  Limits (:data:`GEMINI_BATCH_LIMITS`): the API takes input
  files up to 2 GB and documents no request count; judgekit holds a batch to 200 MB (the file is
  built and uploaded from memory; 100 live batches of 200 MB fill the 20 GB a project may store)
  and 50,000 requests.  :meth:`~GeminiBatchMixin.batch_line_bytes` is the line's exact size
  without encoding its images (:func:`line_size`; a request over the live size limit raises the
  live RequestTooLarge).
- **poll**: the batch's long-running operation, read as JSON through the SDK's API client (the
  SDK's ``BatchJob`` drops ``batchStats`` for this API): ``metadata.state`` as judgekit's state
  (:func:`batch_state`, ``BATCH_STATE_*`` and the SDK's ``JOB_STATE_*`` names alike; an unknown
  one stays ``in_progress``), ``batchStats`` as the counts, ``createTime`` as the age, and the
  operation's ``error`` as the message.
- **results** (:func:`join_lines`): the responses file (``metadata.output.responsesFile``),
  downloaded with ``files.download``; a line's ``response`` is read as a live reply is
  (:func:`read_response`: the SDK's own conversion into ``GenerateContentResponse``, then
  :func:`judgekit.providers.gemini_replies.gemini_chat_response`: blocked, filtered, empty and
  malformed replies are the same errors as live, a filtered one keeping what it was billed); a
  line's ``error`` (a
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
  ``batch=True``: genai-prices' batch rates, else 50 %).
- **cancel**: ``batches.cancel``, then the operation as it stands; cancelling a batch that has
  ended returns it as it is.
- **errors** of these calls are the live call's
  (:func:`~judgekit.providers.gemini_errors.classify_gemini_error`), keys redacted.

Files and batches are never deleted here: reading a batch's results again (after a crash between
reading and storing them) must give the same answers.  The API deletes files after 48 hours.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import time
from urllib.parse import urlencode
from collections.abc import Sequence
from typing import Any

from ..errors import BadRequest, MalformedReply
from .batch import (LOOK_BACK_S, BatchItem, BatchLimits, BatchOutcome, BatchStatus, BatchSideBase, WaveIntent,
                    classified_by, refused, wave_tag)
from .gemini_errors import classify_gemini_error
from .gemini_batch_wire import (
    batch_state,
    join_lines,
    line,
    line_size,
    request_body,
    responses_file,
    status_of_operation,
)
from .replies import short_string
from .sizes import MB

__all__ = ["GEMINI_BATCH_LIMITS", "CallerError", "GeminiBatchMixin", "sdk_has_batches"]

log = logging.getLogger(__name__)

GEMINI_BATCH_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * MB)
#: the most batches :meth:`GeminiBatchMixin.find_batches` reads from the list, and per page
_LIST_MOST = 10_000
_PAGE = 100
#: request bodies kept between their sizing and their batch (about one batch's worth)
_KEPT_BODIES = 50_000


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
                hasattr(types, "_GenerateContentParameters"), hasattr(batches, "AsyncBatches")))


# ---------------------------------------------------------------------------------------------
# the provider's side


_classified = classified_by(classify_gemini_error, passed=(CallerError,))


class GeminiBatchMixin(BatchSideBase):
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
    async def submit_batch(self, items: list[BatchItem], *, wave: str | None = None) -> BatchStatus:
        """Upload ``items`` as one JSONL file and create its batch.  The caller keeps to
        :attr:`batch_limits` and gives each request once: otherwise ValueError, nothing sent.
        ``wave`` ends the batch's (and its file's) display name, where :meth:`find_batches` reads it."""
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
        tag = f" {wave_tag(wave)}" if wave else ""
        name = f"judgekit {self.alias}"[:128 - len(tag)] + tag  # type: ignore[attr-defined]
        upload = await aio.files.upload(file=io.BytesIO(data),
                                        config=types.UploadFileConfig(mime_type="jsonl", display_name=name))
        file_name = getattr(upload, "name", None)
        if not isinstance(file_name, str) or not file_name.startswith("files/"):
            raise MalformedReply(f"file upload reply has no file name: {upload!r:.200}")
        try:
            job = await aio.batches.create(model=self.spec.model, src=file_name,  # type: ignore[attr-defined]
                                           config=types.CreateBatchJobConfig(display_name=name))
        except Exception as err:
            if refused(classify_gemini_error(err)):  # else the batch may exist and read its file
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
    async def find_batches(self, intents: Sequence[WaveIntent], *, known: frozenset[str] = frozenset()
                           ) -> dict[str, BatchStatus]:
        """The batches created for ``intents``: the batch operations listed (``GET batches``, page
        by page, at most :data:`_LIST_MOST`), a batch an intent's when its display name ends with
        the wave's tag; those created :data:`~judgekit.providers.batch.LOOK_BACK_S` before the
        oldest intent or earlier are passed over."""
        if not intents:
            return {}
        by_tag = {wave_tag(i.wave): i.wave for i in intents}
        since = min(i.recorded_at for i in intents) - LOOK_BACK_S
        found: dict[str, BatchStatus] = {}
        token, seen = "", 0
        while seen < _LIST_MOST:
            path = "batches?" + urlencode({"pageSize": _PAGE, **({"pageToken": token} if token else {})})
            reply = await self._api_client().async_request("get", path, {}, None)
            try:
                page = json.loads(reply.body or "{}")
            except ValueError:
                raise MalformedReply(f"the batch list is not JSON: {str(reply.body)[:200]!r}") from None
            ops = page.get("operations") if isinstance(page, dict) else None
            for op in ops if isinstance(ops, list) else ():
                seen += 1
                meta = op.get("metadata") if isinstance(op, dict) else None
                display = meta.get("displayName") if isinstance(meta, dict) else None
                tag = display.rsplit(" ", 1)[-1] if isinstance(display, str) else ""
                wave = by_tag.get(tag)
                if wave is None or wave in found:
                    continue
                status = status_of_operation(op, "batch list")
                if status.batch_id in known or (status.age_s is not None and time.time() - status.age_s < since):
                    continue
                found[wave] = status
            token = page.get("nextPageToken") if isinstance(page, dict) else None
            if not token or not isinstance(token, str) or len(found) == len(by_tag):
                break
        return found

    @_classified
    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        """Ask the batch to stop (answers given so far are kept).  A batch that has ended already
        is returned as it is."""
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
    async def batch_results(self, batch_id: str, custom_ids: Sequence[str] | None = None) -> list[BatchOutcome]:
        """What the ended batch ``batch_id`` reports (see the module docstring): one outcome per
        key of its responses file; none when it has no responses file."""
        op = await self._operation(batch_id)
        status = status_of_operation(op)
        if not status.terminal:
            raise CallerError(f"batch {batch_id} has not ended (state {status.provider_status!r})")
        file_name = responses_file(op)
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
