"""The simulator's copy of OpenAI's Batch API: files and batches (Azure OpenAI's too).

Routes (Azure's are the same under ``/openai/`` with ``?api-version=``, its key in ``api-key``):

``POST /v1/files`` (multipart: ``file``, ``purpose``), ``GET`` / ``DELETE /v1/files/{id}``, ``GET /v1/files/{id}/content``
    The Files API's ``FileObject`` (``id``, ``object: "file"``, ``bytes``, ``created_at``,
    ``filename``, ``purpose``, ``status``, ``expires_at``); a ``batch`` file must be ``.jsonl`` and
    at most 200 MB.
``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/batches``
    The ``Batch`` object: ``status`` (validating, in_progress, finalizing, completed, failed,
    expired, cancelling, cancelled), ``request_counts`` {total, completed, failed}, the
    ``*_at`` times, ``expires_at``, ``output_file_id``, ``error_file_id``, ``errors``
    {object: list, data: [{code, line, message, param}]}, ``metadata``, ``model``, ``usage``.

The input file is checked as the real API does, line by line (1-based ``line`` in ``errors``): JSON
objects with a unique ``custom_id``, ``method: "POST"``, the batch's ``url``, a ``body`` object,
one model for the whole file, at most 50,000 requests; a file that fails is a ``failed`` batch
with no request run.  Each request is answered by the chat endpoint's pipeline
(:func:`judgekit.sim.batches.answer_offline`: the same text and usage as ``/v1/chat/completions``
for the same body) as the job moves through time (:mod:`judgekit.sim.batches`).

Results (the Batch guide's shapes), written once the job ends, in an order of their own (a hash
of the job and the ``custom_id``, as the real API does not keep the input's order): the output file
holds a line per 200, ``{"id": "batch_req_...", "custom_id", "response": {"status_code": 200,
"request_id", "body": <the chat completion>}, "error": null}``; the error file a line per other
status in the same shape (the body an error object), and a line per request an expired job left
unanswered, ``{"response": null, "error": {"code": "batch_expired", "message": "This request could
not be executed before the completion window expired."}}``.  A cancelled job's unanswered requests
are in neither file.  ``output_file_id`` / ``error_file_id`` are null when their file would be
empty.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from judgekit.sim.api_errors import auth_error, check_openai_params
from judgekit.sim.batches import TERMINAL, Answer, BatchJob, BatchStore, answer_offline
from judgekit.sim.protocol import (
    _AZURE,
    _JSON,
    _OPENAI,
    _dumps,
    _parse_openai,
    _SimRequest,
    error_response,
)

__all__ = ["OpenAIBatchSim", "MAX_BATCH_REQUESTS", "MAX_BATCH_FILE_BYTES", "EXPIRED_MESSAGE"]

MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_FILE_BYTES = 200 * 1_000_000
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."
_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
_ENDPOINTS = {_OPENAI: ("/v1/chat/completions",), _AZURE: ("/chat/completions", "/v1/chat/completions")}
_FILE_TTL_S = 30 * 86400  # batch files expire after 30 days by default (the Files API)
_MAX_ERRORS = 1000


@dataclass(slots=True)
class _File:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: float

    def json(self) -> dict[str, Any]:
        created = int(self.created_at)
        return {"id": self.id, "object": "file", "bytes": len(self.data), "created_at": created,
                "filename": self.filename, "purpose": self.purpose, "status": "processed",
                "expires_at": created + _FILE_TTL_S if self.purpose.startswith("batch") else None,
                "status_details": None}


def _line_error(line: int | None, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {"code": code, "line": line, "message": message, "param": param}


def read_input(data: bytes, endpoint: str) -> tuple[list[tuple[str, Any]], list[dict[str, Any]], str | None]:
    """A batch input file's requests ``(custom_id, body)``, the validation errors (empty: valid)
    and its model."""
    items: list[tuple[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    model: str | None = None
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()  # the newline that ends the last line
    for i, raw in enumerate(lines, 1):
        if len(errors) >= _MAX_ERRORS:
            break
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            errors.append(_line_error(i, "invalid_json_line", "This line is not parseable as valid JSON."))
            continue
        cid = obj.get("custom_id")
        if not isinstance(cid, str) or not cid:
            errors.append(_line_error(i, "missing_required_parameter", "Missing required parameter: 'custom_id'.",
                                      "custom_id"))
            continue
        if cid in seen:
            errors.append(_line_error(i, "duplicate_custom_id", "The custom_id for this request is a duplicate of "
                                      "another request. The custom_id parameter must be unique for each individual "
                                      "request in a batch.", "custom_id"))
            continue
        seen.add(cid)
        if obj.get("method") != "POST":
            errors.append(_line_error(i, "invalid_method", "The method for this request must be POST.", "method"))
            continue
        if obj.get("url") != endpoint:
            errors.append(_line_error(i, "invalid_url", "The URL provided for this request does not match the batch "
                                      "endpoint.", "url"))
            continue
        body = obj.get("body")
        if not isinstance(body, dict):
            errors.append(_line_error(i, "invalid_request", "The body of this request must be a JSON object.", "body"))
            continue
        this = body.get("model")
        if model is None and isinstance(this, str):
            model = this
        elif this != model:
            errors.append(_line_error(i, "model_mismatch", f"The model {this!r} of this request is not the model of "
                                      f"the batch's other requests ({model!r}): a batch serves one model.",
                                      "body.model"))
            continue
        items.append((cid, body))
    if not lines:
        errors.append(_line_error(None, "empty_file", "The batch input file is empty."))
    elif len(lines) > MAX_BATCH_REQUESTS:
        errors.append(_line_error(None, "too_many_requests", f"The batch input file holds {len(lines):,} requests, "
                                  f"more than the {MAX_BATCH_REQUESTS:,} a batch may hold."))
    return items, errors, model


def _rid(prefix: str, *parts: str) -> str:
    return prefix + hashlib.sha256("\x1e".join(parts).encode()).hexdigest()[:24]


class OpenAIBatchSim:
    """Files and batches of the OpenAI (and Azure OpenAI) Batch API over a :class:`BatchStore`."""

    def __init__(self, core: Any, store: BatchStore) -> None:
        self.core = core
        self.store = store
        self.files: dict[str, _File] = {}

    def add_routes(self, app: web.Application) -> None:
        for root in ("/v1", "/openai"):
            app.router.add_post(f"{root}/files", self.upload_file)
            app.router.add_get(f"{root}/files/{{file_id}}", self.get_file)
            app.router.add_delete(f"{root}/files/{{file_id}}", self.delete_file)
            app.router.add_get(f"{root}/files/{{file_id}}/content", self.file_content)
            app.router.add_post(f"{root}/batches", self.create_batch)
            app.router.add_get(f"{root}/batches", self.list_batches)
            app.router.add_get(f"{root}/batches/{{batch_id}}", self.get_batch)
            app.router.add_post(f"{root}/batches/{{batch_id}}/cancel", self.cancel_batch)

    # -- plumbing ---------------------------------------------------------------------------

    def _error(self, status: int, message: str, **kw: Any) -> web.Response:
        return error_response(_OPENAI, status, message, request_id=self.core._next_id(), **kw)

    def _gate(self, request: web.Request) -> tuple[str, web.Response | None]:
        """The API of the path (``openai`` or ``azure``) and the error that stops it, if any."""
        api = _AZURE if request.path.startswith("/openai/") else _OPENAI
        if not self.core._key_ok(request):
            self.core.stats.auth_failures += 1
            return api, auth_error(api, self.core._next_id())
        if api == _AZURE and "api-version" not in request.query:
            return api, web.Response(body=_dumps({"error": {"code": "404", "message": "Resource not found"}}),
                                     status=404, content_type=_JSON)
        return api, None

    def _new_id(self, prefix: str) -> str:
        return prefix + os.urandom(12).hex()

    def _no_file(self, file_id: str) -> web.Response:
        return self._error(404, f"No such File object: {file_id}", param="id")

    # -- files ------------------------------------------------------------------------------

    async def upload_file(self, request: web.Request) -> web.Response:
        _, stop = self._gate(request)
        if stop is not None:
            return stop
        if not request.content_type.startswith("multipart/"):
            return self._error(400, "The file upload must be multipart/form-data.")
        purpose: str | None = None
        filename = ""
        data: bytes | None = None
        reader = await request.multipart()
        async for part in reader:
            if part.name == "purpose":
                purpose = (await part.text()).strip()  # type: ignore[union-attr]
            elif part.name == "file":
                filename = part.filename or "upload"  # type: ignore[union-attr]
                data = bytes(await part.read())  # type: ignore[union-attr]
            else:
                await part.read()  # type: ignore[union-attr]  (expires_after and the like: accepted)
        if data is None:
            return self._error(400, "'file' is a required property", param="file")
        if purpose is None:
            return self._error(400, "'purpose' is a required property", param="purpose")
        if purpose not in _PURPOSES:
            return self._error(400, f"'{purpose}' is not one of {sorted(_PURPOSES)} - 'purpose'", param="purpose")
        if purpose == "batch":
            if not filename.endswith(".jsonl"):
                return self._error(400, "Invalid file format for Batch API. Must be .jsonl", param="file")
            if len(data) > MAX_BATCH_FILE_BYTES:
                return self._error(400, f"File is too large: {len(data):,} bytes; the Batch API takes input files "
                                   f"up to {MAX_BATCH_FILE_BYTES:,} bytes.", param="file")
            self.store.stats.batch_files_uploaded += 1
        f = _File(self._new_id("file-"), filename, purpose, data, self.store.clock())
        self.files[f.id] = f
        return web.json_response(f.json())

    async def get_file(self, request: web.Request) -> web.Response:
        _, stop = self._gate(request)
        if stop is not None:
            return stop
        f = self.files.get(request.match_info["file_id"])
        return web.json_response(f.json()) if f is not None else self._no_file(request.match_info["file_id"])

    async def delete_file(self, request: web.Request) -> web.Response:
        _, stop = self._gate(request)
        if stop is not None:
            return stop
        file_id = request.match_info["file_id"]
        if self.files.pop(file_id, None) is None:
            return self._no_file(file_id)
        return web.json_response({"id": file_id, "object": "file", "deleted": True})

    async def file_content(self, request: web.Request) -> web.Response:
        _, stop = self._gate(request)
        if stop is not None:
            return stop
        f = self.files.get(request.match_info["file_id"])
        if f is None:
            return self._no_file(request.match_info["file_id"])
        return web.Response(body=f.data, content_type="application/octet-stream")

    # -- batches ----------------------------------------------------------------------------

    async def create_batch(self, request: web.Request) -> web.Response:
        api, stop = self._gate(request)
        if stop is not None:
            return stop
        try:
            body = json.loads(await request.read())
        except ValueError as e:
            return self._error(400, f"could not parse the JSON body: {e}")
        if not isinstance(body, dict):
            return self._error(400, "request body must be a JSON object")
        file_id, endpoint, window = body.get("input_file_id"), body.get("endpoint"), body.get("completion_window")
        metadata = body.get("metadata")
        if not isinstance(file_id, str) or not file_id:
            return self._error(400, "Missing required parameter: 'input_file_id'.", param="input_file_id",
                               code="missing_required_parameter")
        if endpoint not in _ENDPOINTS[api]:
            return self._error(400, f"Invalid value for 'endpoint': {endpoint!r}; the simulator's batches serve "
                               f"{' and '.join(_ENDPOINTS[api])}.", param="endpoint", code="invalid_value")
        if window != "24h":
            return self._error(400, f"Invalid value for 'completion_window': {window!r}; supported: '24h'.",
                               param="completion_window", code="invalid_value")
        if metadata is not None and not (isinstance(metadata, dict) and len(metadata) <= 16 and all(
                isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 512
                for k, v in metadata.items())):
            return self._error(400, "Invalid 'metadata': at most 16 string keys (64 characters) and string values "
                               "(512 characters).", param="metadata", code="invalid_value")
        f = self.files.get(file_id)
        if f is None:
            return self._no_file(file_id)
        if f.purpose != "batch":
            return self._error(400, f"The input file {file_id} must be uploaded with purpose 'batch'.",
                               param="input_file_id")
        if self.store.creation_fails(api):
            return error_response(api, 500, "The server had an error while processing your request (simulated).",
                                  etype="server_error", request_id=self.core._next_id())
        items, errors, model = read_input(f.data, endpoint)
        queue, tokens = "", 0
        if self.core.config.batch_queue_tokens is not None and model is not None:  # the enqueued-token limit
            queue, tokens = f"{api}:{model}", sum(self._prompt_tokens(body) for _, body in items)
        job = self.store.create(api, items, lambda payload: self._answer(api, payload), errors=errors, meta={
            "input_file_id": file_id, "endpoint": endpoint, "metadata": metadata, "model": model},
            queue=queue, tokens=tokens)
        return web.json_response(self._batch_json(job))

    async def get_batch(self, request: web.Request) -> web.Response:
        api, stop = self._gate(request)
        if stop is not None:
            return stop
        job = self._job(api, request.match_info["batch_id"])
        if job is None:
            return self._error(404, f"No batch found with id '{request.match_info['batch_id']}'.")
        await self.store.refresh(job)
        return web.json_response(self._batch_json(job))

    async def cancel_batch(self, request: web.Request) -> web.Response:
        api, stop = self._gate(request)
        if stop is not None:
            return stop
        job = self._job(api, request.match_info["batch_id"])
        if job is None:
            return self._error(404, f"No batch found with id '{request.match_info['batch_id']}'.")
        if not await self.store.cancel(job):
            return self._error(400, f"Cannot cancel a batch with status '{job.status}'.")
        return web.json_response(self._batch_json(job))

    async def list_batches(self, request: web.Request) -> web.Response:
        api, stop = self._gate(request)
        if stop is not None:
            return stop
        try:
            limit = max(1, min(100, int(request.query.get("limit", "20"))))
        except ValueError:
            return self._error(400, "Invalid 'limit': an integer from 1 to 100.", param="limit")
        jobs = self.store.listed(api)
        after = request.query.get("after")
        if after is not None:
            ids = [j.id for j in jobs]
            jobs = jobs[ids.index(after) + 1:] if after in ids else []
        page = jobs[:limit]
        for job in page:
            await self.store.refresh(job)
        return web.json_response({"object": "list", "data": [self._batch_json(j) for j in page],
                                  "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None,
                                  "has_more": len(jobs) > limit})

    def _prompt_tokens(self, body: Any) -> int:
        """A request's prompt tokens as its answer's usage will say (0 for a request that fails)."""
        try:
            return _parse_openai(body, self.core.seed_bytes).prompt_tokens
        except Exception:  # noqa: BLE001 - a bad request is refused when it runs, and counts nothing
            return 0

    def _job(self, api: str, batch_id: str) -> BatchJob | None:
        job = self.store.jobs.get(batch_id)
        return job if job is not None and job.api == api else None

    async def _answer(self, api: str, payload: Any) -> Answer:
        core = self.core
        deployments = core.config.azure_deployments

        def parse(body: Any) -> _SimRequest:
            if api == _AZURE and isinstance(body, dict) and isinstance(body.get("model"), str):
                body = {**body, "model": deployments.get(body["model"], body["model"])}
            sreq = _parse_openai(body, core.seed_bytes)
            if core.config.model_param_rules:
                check_openai_params(body, sreq.model)
            return sreq

        return await answer_offline(core, api, payload, parse, lambda sreq, adm: core._chat_reply(api, sreq, adm))

    # -- the Batch object and its result files ----------------------------------------------

    def _finish(self, job: BatchJob) -> None:
        """Write the job's output and error files, once it has ended."""
        if "output_file_id" in job.meta or job.status not in TERMINAL:
            return
        order = sorted(range(len(job.items)), key=lambda i: _rid("", job.id, job.items[i][0]))
        out: list[bytes] = []
        err: list[bytes] = []
        for i in order:
            cid = job.items[i][0]
            line: dict[str, Any] = {"id": _rid("batch_req_", job.id, cid), "custom_id": cid}
            if i < len(job.answers):
                a = job.answers[i]
                line.update(response={"status_code": a.status, "request_id": a.request_id, "body": a.body},
                            error=None)
                (out if a.status == 200 else err).append(_dumps(line))
            elif job.status == "expired":
                line.update(response=None, error={"code": "batch_expired", "message": EXPIRED_MESSAGE})
                err.append(_dumps(line))
        now = self.store.clock()
        for key, lines, name in (("output_file_id", out, "batch_output"), ("error_file_id", err, "batch_error")):
            if lines:
                f = _File(self._new_id("file-"), f"{job.id}_{name}.jsonl", "batch_output", b"\n".join(lines) + b"\n",
                          now)
                self.files[f.id] = f
                job.meta[key] = f.id
            else:
                job.meta[key] = None

    def _batch_json(self, job: BatchJob) -> dict[str, Any]:
        self._finish(job)
        meta = job.meta
        answered = job.answers
        ok = sum(1 for a in answered if a.status == 200)
        failed = len(answered) - ok + (len(job.items) - len(answered) if job.status == "expired" else 0)

        def at(t: float | None) -> int | None:
            return None if t is None else int(t)

        out: dict[str, Any] = {
            "id": job.id, "object": "batch", "endpoint": meta.get("endpoint"),
            "errors": {"object": "list", "data": job.errors} if job.errors and job.status == "failed" else None,
            "input_file_id": meta.get("input_file_id"), "completion_window": "24h", "status": job.status,
            "output_file_id": meta.get("output_file_id"), "error_file_id": meta.get("error_file_id"),
            "created_at": at(job.created_at), "in_progress_at": at(job.in_progress_at),
            "expires_at": at(job.expires_at), "finalizing_at": at(job.finalizing_at),
            "completed_at": at(job.completed_at), "failed_at": at(job.failed_at), "expired_at": at(job.expired_at),
            "cancelling_at": at(job.cancelling_at), "cancelled_at": at(job.cancelled_at),
            "request_counts": {"total": 0 if job.status in ("validating", "failed") else len(job.items),
                               "completed": ok, "failed": failed},
            "metadata": meta.get("metadata"), "model": meta.get("model"),
        }
        if job.status in TERMINAL and answered:
            out["usage"] = _usage_total(answered)
        return out


def _usage_total(answers: list[Answer]) -> dict[str, Any]:
    """The ``usage`` of a finished batch: its answered requests' usage summed."""
    tin = tout = cached = reasoning = 0
    for a in answers:
        usage = a.body.get("usage") if a.status == 200 and isinstance(a.body, dict) else None
        if isinstance(usage, dict):
            tin += int(usage.get("prompt_tokens") or 0)
            tout += int(usage.get("completion_tokens") or 0)
            cached += int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
            reasoning += int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    return {"input_tokens": tin, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": tout,
            "output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": tin + tout}
