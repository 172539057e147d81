"""The simulator's copy of Gemini batch mode (the Gemini Developer API) and the part of its Files
API that batches use, in the shapes the google-genai SDK reads.

Routes (under ``/v1beta`` and ``/v1``: google-genai 3.x calls ``v1``, older releases ``v1beta``):

``POST /{v}/models/{model}:batchGenerateContent``
    Create a batch (reached through the server's ``generateContent`` route, :meth:`GeminiBatchSim.create`):
    ``{"batch": {"displayName", "inputConfig": {"fileName": "files/..."}}}`` (a JSONL file of
    ``{"key", "request"}`` lines) or ``{"inputConfig": {"requests": {"requests": [{"request",
    "metadata"}]}}}`` (inline, under 20 MB of body).  Answers a long-running operation.
``GET /{v}/batches/{id}``, ``POST /{v}/batches/{id}:cancel``, ``GET /{v}/batches``, ``DELETE /{v}/batches/{id}``
    The operation: ``{"name": "batches/...", "metadata": {"@type": ...GenerateContentBatch, "model",
    "displayName", "createTime", "updateTime", "endTime", "batchStats": {"requestCount",
    "successfulRequestCount", "failedRequestCount", "pendingRequestCount"} (int64 as strings),
    "state": "BATCH_STATE_PENDING | RUNNING | SUCCEEDED | FAILED | CANCELLED | EXPIRED", "output":
    {"responsesFile"} | {"inlinedResponses": {"inlinedResponses": [...]}}}, "done", "response",
    "error"}``.  The API has no cancelling state: a job being cancelled is ``RUNNING``.  The list
    pages with ``pageSize`` / ``pageToken`` (``{"operations", "nextPageToken"}``); delete forgets
    the job (it does not cancel it, as the API's ``batches.delete``).
``POST /upload/{v}/files`` (resumable: ``X-Goog-Upload-Command: start``, then ``upload[, finalize]``
chunks at ``X-Goog-Upload-Offset``), ``GET /{v}/files[/{id}]``, ``GET /{v}/files/{id}:download?alt=media``, ``DELETE /{v}/files/{id}``
    The Files API: a ``File`` (``name``, ``mimeType``, ``sizeBytes``, ``createTime``,
    ``expirationTime`` (+48 h), ``state: ACTIVE``, ``source: UPLOADED | GENERATED``); files of up
    to 2 GB; only generated files (a batch's responses) can be downloaded, as in the API.

On ``/v1`` the paths ``GET /v1/batches[/{id}]`` and ``GET`` / ``DELETE /v1/files/{id}`` are also
OpenAI's (:mod:`judgekit.sim.openai_batch_api`): a request from a Gemini client (an
``x-goog-api-key`` or ``x-goog-api-client`` header, or a ``key`` query) is served here, any other
by the OpenAI handlers.

Each request is answered by the ``generateContent`` pipeline (:func:`judgekit.sim.batches.answer_offline`:
the same text and usage, ``cachedContentTokenCount`` included, as a live call of the same body)
as the job moves through time (:mod:`judgekit.sim.batches`; ``batch_*`` fields of
:class:`~judgekit.sim.config.SimConfig`).  A file job's results are a generated responses file,
one line per answered request, ``{"key", "response": <GenerateContentResponse>}`` or ``{"key",
"error": {"code", "message", "status"}}`` (a ``google.rpc.Status``), written in an order of their
own (the reference says the input's order; a client must join on ``key``); an inline job's are
``inlinedResponses`` in the input's order with each request's ``metadata``.  An expired or
cancelled job reports what it answered before it stopped; the rest are in no output.  A job whose
input is unreadable, or drawn by ``batch_fail_rate``, is ``FAILED`` with the operation's ``error``.
Counted in ``/sim/stats`` under the API ``gemini``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from judgekit.sim.api_errors import auth_error
from judgekit.sim.batches import TERMINAL, Answer, BatchJob, BatchStore, answer_offline
from judgekit.sim.protocol import _GEMINI, _JSON, _dumps, _parse_gemini, error_response

__all__ = ["MAX_FILE_BYTES", "MAX_INLINE_BYTES", "STATES", "GeminiBatchSim", "read_input"]

MAX_INLINE_BYTES = 20 * 1_000_000  # "the total request size under 20 MB"
MAX_FILE_BYTES = 2 * 1024**3  # the Files API's 2 GB per file
FILE_TTL_S = 48 * 3600  # the Files API keeps a file 48 hours
#: the store's statuses as the API's batch states (it has no validating, finalizing or cancelling)
STATES = {"validating": "BATCH_STATE_PENDING", "in_progress": "BATCH_STATE_RUNNING",
          "finalizing": "BATCH_STATE_RUNNING", "cancelling": "BATCH_STATE_RUNNING",
          "completed": "BATCH_STATE_SUCCEEDED", "failed": "BATCH_STATE_FAILED", "expired": "BATCH_STATE_EXPIRED",
          "cancelled": "BATCH_STATE_CANCELLED"}
#: HTTP statuses of a per-request error as ``google.rpc.Code`` values
_GRPC = {400: (3, "INVALID_ARGUMENT"), 401: (16, "UNAUTHENTICATED"), 403: (7, "PERMISSION_DENIED"),
         404: (5, "NOT_FOUND"), 429: (8, "RESOURCE_EXHAUSTED"), 500: (13, "INTERNAL"), 502: (14, "UNAVAILABLE"),
         503: (14, "UNAVAILABLE"), 504: (4, "DEADLINE_EXCEEDED")}
_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta."
_ROOTS = ("/v1beta", "/v1")


def _time(t: float | None) -> str | None:
    if t is None:
        return None
    return _dt.datetime.fromtimestamp(t, _dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _is_gemini(request: web.Request) -> bool:
    """Whether ``request`` comes from a Gemini client (on the paths it shares with OpenAI's API)."""
    h = request.headers
    return "x-goog-api-key" in h or "x-goog-api-client" in h or "key" in request.query


def _status(code: int, status: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "status": status}


def _rpc_error(answer: Answer) -> dict[str, Any]:
    """A non-200 answer's error body as the ``google.rpc.Status`` of a result line."""
    err = answer.body.get("error") if isinstance(answer.body, dict) else None
    err = err if isinstance(err, dict) else {}
    code, name = _GRPC.get(answer.status, (2, "UNKNOWN"))
    return _status(code, name, str(err.get("message") or ""))


@dataclass(slots=True)
class _File:
    id: str
    display_name: str
    mime_type: str
    data: bytes
    created_at: float
    source: str  # UPLOADED or GENERATED

    @property
    def name(self) -> str:
        return f"files/{self.id}"

    def json(self, root: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "mimeType": self.mime_type, "sizeBytes": str(len(self.data)),
            "createTime": _time(self.created_at), "updateTime": _time(self.created_at),
            "expirationTime": _time(self.created_at + FILE_TTL_S),
            "sha256Hash": hashlib.sha256(self.data).hexdigest(), "uri": f"{root}/v1beta/{self.name}",
            "state": "ACTIVE", "source": self.source}
        if self.display_name:
            out["displayName"] = self.display_name
        if self.source == "GENERATED":
            out["downloadUri"] = f"{root}/v1beta/{self.name}:download?alt=media"
        return out


@dataclass(slots=True)
class _Upload:
    size: int
    mime_type: str
    display_name: str
    received: bytearray = field(default_factory=bytearray)


def read_input(data: bytes) -> tuple[list[tuple[str, Any]], list[str]]:
    """A batch input file's requests ``(key, request)`` (``""`` for a line without a key) and what
    is wrong with it (empty: valid)."""
    items: list[tuple[str, Any]] = []
    errors: list[str] = []
    lines = [raw for raw in data.split(b"\n") if raw.strip()]
    for i, raw in enumerate(lines, 1):
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            errors.append(f"line {i}: not a JSON object")
            continue
        key = obj.get("key", "")
        if not isinstance(key, str):
            errors.append(f"line {i}: 'key' must be a string")
            continue
        req = obj.get("request")
        if not isinstance(req, dict):
            errors.append(f"line {i}: 'request' must be a GenerateContentRequest object")
            continue
        items.append((key, req))
    if not lines:
        errors.append("the input file holds no requests")
    return items, errors


class GeminiBatchSim:
    """Batches and files of the Gemini API over a :class:`BatchStore`; ``openai`` serves the
    requests of other clients on the paths the two APIs share (see the module docstring)."""

    def __init__(self, core: Any, store: BatchStore, openai: Any = None) -> None:
        self.core = core
        self.store = store
        self.openai = openai
        self.files: dict[str, _File] = {}
        self.uploads: dict[str, _Upload] = {}

    def add_routes(self, app: web.Application) -> None:
        """Mount the routes; before the OpenAI batch routes, which share some of ``/v1``'s paths."""
        oa = self.openai
        for root in _ROOTS:
            shared = oa is not None and root == "/v1"
            app.router.add_get(f"{root}/batches", self._either(self.list_batches, oa.list_batches if shared else None))
            app.router.add_get(f"{root}/batches/{{batch_id}}",
                               self._either(self.get_batch, oa.get_batch if shared else None))
            app.router.add_post(f"{root}/batches/{{batch_id}}", self.batch_action)
            app.router.add_delete(f"{root}/batches/{{batch_id}}", self.delete_batch)
            app.router.add_get(f"{root}/files", self.list_files)
            app.router.add_get(f"{root}/files/{{file_id}}", self._either(self.get_file, oa.get_file if shared else None))
            app.router.add_delete(f"{root}/files/{{file_id}}",
                                  self._either(self.delete_file, oa.delete_file if shared else None))
        app.router.add_post("/upload/{version}/files", self.upload)

    @staticmethod
    def _either(mine: Callable[[web.Request], Awaitable[web.StreamResponse]],
                other: Callable[[web.Request], Awaitable[web.StreamResponse]] | None):
        if other is None:
            return mine

        async def handler(request: web.Request) -> web.StreamResponse:
            return await (mine if _is_gemini(request) else other)(request)

        return handler

    # -- plumbing ---------------------------------------------------------------------------

    def _error(self, status: int, message: str, grpc_status: str | None = None,
               headers: dict[str, str] | None = None) -> web.Response:
        if grpc_status is None:
            return error_response(_GEMINI, status, message, headers=headers, request_id=self.core._next_id())
        return web.Response(body=_dumps({"error": {"code": status, "message": message, "status": grpc_status}}),
                            status=status, content_type=_JSON, headers=headers)

    def _denied(self, request: web.Request) -> web.Response | None:
        if self.core._key_ok(request):
            return None
        self.core.stats.auth_failures += 1
        return auth_error(_GEMINI, self.core._next_id())

    @staticmethod
    def _root(request: web.Request) -> str:
        return f"{request.scheme}://{request.host}"

    def _job(self, batch_id: str) -> BatchJob | None:
        job = self.store.jobs.get(f"batches/{batch_id}")
        return job if job is not None and job.api == _GEMINI else None

    def _no_job(self, batch_id: str) -> web.Response:
        return self._error(404, f"Batch batches/{batch_id} not found.", "NOT_FOUND")

    # -- files ------------------------------------------------------------------------------

    async def upload(self, request: web.Request) -> web.Response:
        """The resumable upload: ``start`` opens a session, chunks fill it, ``finalize`` makes the file."""
        command = request.headers.get("X-Goog-Upload-Command", "").lower()
        final = {"X-Goog-Upload-Status": "final"}  # on errors too: the SDK retries a reply without it
        if "start" in command:
            denied = self._denied(request)
            if denied is not None:
                denied.headers.update(final)
                return denied
            try:
                meta = (json.loads(await request.read() or b"{}") or {}).get("file") or {}
                size = int(request.headers.get("X-Goog-Upload-Header-Content-Length") or meta.get("sizeBytes") or -1)
            except (ValueError, TypeError, AttributeError):
                return self._error(400, "Invalid upload start request.", headers=final)
            if not 0 <= size <= MAX_FILE_BYTES:
                return self._error(400, f"File size {size} is outside 0..{MAX_FILE_BYTES} bytes.", headers=final)
            mime = request.headers.get("X-Goog-Upload-Header-Content-Type") or str(meta.get("mimeType") or "")
            sid = os.urandom(12).hex()
            self.uploads[sid] = _Upload(size, mime, str(meta.get("displayName") or ""))
            url = f"{self._root(request)}{request.path}?upload_id={sid}&upload_protocol=resumable"
            return web.Response(body=b"{}", content_type=_JSON, headers={
                "X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active",
                "X-Goog-Upload-Chunk-Granularity": str(8 * 1024 * 1024)})
        session = self.uploads.get(request.query.get("upload_id", ""))
        if session is None or "upload" not in command:
            return self._error(404, "No such upload session.", "NOT_FOUND", headers=final)
        chunk = await request.read()
        try:
            offset = int(request.headers.get("X-Goog-Upload-Offset", "-1"))
        except ValueError:
            offset = -1
        if offset != len(session.received) or len(session.received) + len(chunk) > session.size:
            self.uploads.pop(request.query["upload_id"], None)
            return self._error(400, "The upload offset or size does not match the session.", headers=final)
        session.received += chunk
        if "finalize" not in command:
            return web.Response(status=200, headers={"X-Goog-Upload-Status": "active"})
        self.uploads.pop(request.query["upload_id"], None)
        if len(session.received) != session.size:
            return self._error(400, f"Upload finalized at {len(session.received)} of {session.size} bytes.",
                               headers=final)
        f = _File(os.urandom(10).hex(), session.display_name, session.mime_type, bytes(session.received),
                  self.store.clock(), "UPLOADED")
        self.files[f.id] = f
        self.store.stats.batch_files_uploaded += 1
        return web.Response(body=_dumps({"file": f.json(self._root(request))}), content_type=_JSON, headers=final)

    async def get_file(self, request: web.Request) -> web.Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        file_id, _, method = request.match_info["file_id"].partition(":")
        f = self.files.get(file_id)
        if f is None:
            return self._error(404, f"File files/{file_id} not found.", "NOT_FOUND")
        if not method:
            return web.json_response(f.json(self._root(request)))
        if method != "download":
            return self._error(404, f"Method '{method}' is not supported.", "NOT_FOUND")
        if f.source != "GENERATED":
            return self._error(400, "Only generated files can be downloaded; uploaded files cannot.",
                               "INVALID_ARGUMENT")
        return web.Response(body=f.data, content_type="application/octet-stream")

    async def list_files(self, request: web.Request) -> web.Response:
        """Every file, newest first (one page: the simulator holds few)."""
        denied = self._denied(request)
        if denied is not None:
            return denied
        files = sorted(self.files.values(), key=lambda f: f.created_at, reverse=True)
        return web.json_response({"files": [f.json(self._root(request)) for f in files]} if files else {})

    async def delete_file(self, request: web.Request) -> web.Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        file_id = request.match_info["file_id"]
        if self.files.pop(file_id, None) is None:
            return self._error(404, f"File files/{file_id} not found.", "NOT_FOUND")
        return web.json_response({})

    # -- batches ----------------------------------------------------------------------------

    async def create(self, request: web.Request, model: str) -> web.Response:
        """``POST models/{model}:batchGenerateContent``."""
        model = model.removeprefix("models/")
        denied = self._denied(request)
        if denied is not None:
            return denied
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError as e:
            return self._error(400, f"Invalid JSON payload received: {e}")
        batch = body.get("batch") if isinstance(body, dict) else None
        config = batch.get("inputConfig") if isinstance(batch, dict) else None
        if not isinstance(config, dict):
            return self._error(400, "batch.inputConfig is required.")
        if self.core.models is not None and model not in self.core.models:
            return self._error(404, f"models/{model} is not found for API version v1beta, or is not supported "
                               "for batchGenerateContent.")
        meta: dict[str, Any] = {"model": model, "display_name": str(batch.get("displayName") or "")}
        errors: list[str] = []
        file_name = config.get("fileName")
        if isinstance(file_name, str):
            f = self.files.get(file_name.removeprefix("files/"))
            if f is None:
                return self._error(404, f"File {file_name} not found.", "NOT_FOUND")
            items, errors = read_input(f.data)
            meta["input_file"] = file_name
        else:
            reqs = config.get("requests")
            reqs = reqs.get("requests") if isinstance(reqs, dict) else None
            if not isinstance(reqs, list) or not reqs:
                return self._error(400, "batch.inputConfig needs a fileName or requests.requests.")
            if len(raw) >= MAX_INLINE_BYTES:
                return self._error(400, f"Request payload size exceeds the limit: {MAX_INLINE_BYTES} bytes.")
            items, metadata = [], []
            for i, r in enumerate(reqs):
                if not isinstance(r, dict) or not isinstance(r.get("request"), dict):
                    return self._error(400, f"batch.inputConfig.requests.requests[{i}].request is required.")
                items.append(("", r["request"]))
                metadata.append(r.get("metadata") if isinstance(r.get("metadata"), dict) else None)
            meta["inline_metadata"] = metadata
        if self.store.creation_fails(_GEMINI):
            return self._error(503, "The service is currently unavailable (simulated).", "UNAVAILABLE")
        job = self.store.create(_GEMINI, items, lambda payload: self._answer(model, payload),
                                errors=[{"code": "invalid_input", "message": e} for e in errors], meta=meta,
                                prefix="batches/")
        return web.json_response(self._operation(job))

    async def _answer(self, model: str, payload: Any) -> Answer:
        core = self.core
        return await answer_offline(core, _GEMINI, payload, lambda b: _parse_gemini(b, model, core.seed_bytes),
                                    lambda sreq, adm: core._chat_reply(_GEMINI, sreq, adm))

    async def get_batch(self, request: web.Request) -> web.Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        job = self._job(request.match_info["batch_id"])
        if job is None:
            return self._no_job(request.match_info["batch_id"])
        await self.store.refresh(job)
        return web.json_response(self._operation(job))

    async def batch_action(self, request: web.Request) -> web.Response:
        """``POST batches/{id}:cancel``."""
        denied = self._denied(request)
        if denied is not None:
            return denied
        batch_id, _, method = request.match_info["batch_id"].partition(":")
        if method != "cancel":
            return self._error(404, f"Method '{method or 'POST'}' is not supported on batches.", "NOT_FOUND")
        job = self._job(batch_id)
        if job is None:
            return self._no_job(batch_id)
        if not await self.store.cancel(job):
            return self._error(400, f"Batch {job.id} has ended ({STATES[job.status]}) and cannot be cancelled.",
                               "FAILED_PRECONDITION")
        return web.json_response({})

    async def delete_batch(self, request: web.Request) -> web.Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        job = self._job(request.match_info["batch_id"])
        if job is None:
            return self._no_job(request.match_info["batch_id"])
        del self.store.jobs[job.id]
        return web.json_response({})

    async def list_batches(self, request: web.Request) -> web.Response:
        denied = self._denied(request)
        if denied is not None:
            return denied
        try:
            size = max(1, min(1000, int(request.query.get("pageSize", "50"))))
            start = int(request.query.get("pageToken") or 0)
        except ValueError:
            return self._error(400, "Invalid pageSize or pageToken.")
        jobs = self.store.listed(_GEMINI)
        page = jobs[start:start + size]
        for job in page:
            await self.store.refresh(job)
        out: dict[str, Any] = {"operations": [self._operation(j) for j in page]}
        if start + size < len(jobs):
            out["nextPageToken"] = str(start + size)
        return web.json_response(out)

    # -- the operation and its output -------------------------------------------------------

    def _finish(self, job: BatchJob) -> None:
        """Write the job's output once it has ended."""
        if "output" in job.meta or job.status not in TERMINAL:
            return
        job.meta["output"] = None
        if not job.answers:
            return
        if "inline_metadata" in job.meta:
            responses = []
            for a, md in zip(job.answers, job.meta["inline_metadata"], strict=False):
                r: dict[str, Any] = {"response": a.body} if a.status == 200 else {"error": _rpc_error(a)}
                if md is not None:
                    r["metadata"] = md
                responses.append(r)
            job.meta["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
            return
        order = sorted(range(len(job.answers)), key=lambda i: hashlib.sha256(f"{job.id}\x1e{i}".encode()).digest())
        lines = []
        for i in order:
            a = job.answers[i]
            line: dict[str, Any] = {"key": job.items[i][0]} if job.items[i][0] else {}
            line.update({"response": a.body} if a.status == 200 else {"error": _rpc_error(a)})
            lines.append(_dumps(line))
        f = _File(os.urandom(10).hex(), f"{job.id} responses", "application/jsonl", b"\n".join(lines) + b"\n",
                  self.store.clock(), "GENERATED")
        self.files[f.id] = f
        job.meta["output"] = {"responsesFile": f.name}

    def _operation(self, job: BatchJob) -> dict[str, Any]:
        self._finish(job)
        ok = sum(1 for a in job.answers if a.status == 200)
        ended = job.status in TERMINAL
        end = job.completed_at or job.failed_at or job.expired_at or job.cancelled_at
        stats: dict[str, str] = {"requestCount": str(len(job.items)), "successfulRequestCount": str(ok),
                                 "failedRequestCount": str(len(job.answers) - ok)}
        if not ended:
            stats["pendingRequestCount"] = str(len(job.items) - len(job.answers))
        meta: dict[str, Any] = {"@type": _TYPE + "GenerateContentBatch", "model": f"models/{job.meta['model']}",
                                "displayName": job.meta.get("display_name", ""), "name": job.id,
                                "createTime": _time(job.created_at), "updateTime": _time(end or self.store.clock()),
                                "batchStats": stats, "state": STATES[job.status]}
        if "input_file" in job.meta:
            meta["inputConfig"] = {"fileName": job.meta["input_file"]}
        if ended:
            meta["endTime"] = _time(end)
        output = job.meta.get("output")
        if output:
            meta["output"] = output
        op: dict[str, Any] = {"name": job.id, "metadata": meta}
        if ended:
            op["done"] = True
            if job.status == "failed":
                first = job.errors[0] if job.errors else {}
                limit = first.get("code") == "token_limit_exceeded"
                code, name = (8, "RESOURCE_EXHAUSTED") if limit else (3, "INVALID_ARGUMENT")
                op["error"] = _status(code, name, "; ".join(str(e.get("message")) for e in job.errors[:5]))
            else:
                op["response"] = {"@type": _TYPE + "GenerateContentBatchOutput", **(output or {})}
        return op
