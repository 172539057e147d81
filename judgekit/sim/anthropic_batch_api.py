"""The simulator's copy of Anthropic's Message Batches API.

Routes (the key in ``x-api-key``, or a bearer token, as for ``/v1/messages``):

``POST /v1/messages/batches``
    ``{"requests": [{"custom_id", "params"}]}``: checked as the real API checks a creation (1 to
    100,000 requests, each an object with a ``custom_id`` of 1 to 64 letters, digits, ``_`` or
    ``-``, unique in the batch, and a ``params`` object; else a 400 ``invalid_request_error`` and
    no batch); the ``params`` themselves are checked when the request runs, as the real API does
    (asynchronously): a bad one is an ``errored`` result.
``GET /v1/messages/batches/{id}``, ``POST /v1/messages/batches/{id}/cancel``, ``GET /v1/messages/batches``, ``DELETE /v1/messages/batches/{id}``
    The ``MessageBatch`` object: ``{id, type: "message_batch", processing_status (in_progress,
    canceling, ended), request_counts {processing, succeeded, errored, canceled, expired},
    created_at, expires_at, ended_at, cancel_initiated_at, archived_at, results_url}`` (times in
    RFC 3339).  As the API reference says, the counts other than ``processing`` stay zero until the
    batch ends.  The list pages newest first (``limit`` 1-1000, default 20; ``after_id``,
    ``before_id``; ``has_more``, ``first_id``, ``last_id``).  A batch is deleted once it has ended.
``GET /v1/messages/batches/{id}/results``
    JSONL, once the batch has ended (``results_url`` points here), a line per request in an order
    of its own (a hash of the batch and the ``custom_id``, as the real API does not keep the
    input's order): ``{"custom_id", "result": {"type": "succeeded", "message": <the Messages API
    reply>}}``, ``{"type": "errored", "error": {"type": "error", "error": {"type", "message"},
    "request_id"}}``, ``{"type": "canceled"}`` or ``{"type": "expired"}``.

The jobs live in the server's :class:`~judgekit.sim.batches.BatchStore` (the same store and
counters as the OpenAI Batch API: ``/sim/stats`` counts them by API ``anthropic``) and move
through time as it says (``batch_turnaround_s``).  Each request is answered by the Messages
endpoint's own reply function (:meth:`judgekit.sim.anthropic_api.AnthropicSim._answer` through
:func:`~judgekit.sim.batches.answer_offline`): the same text and usage as ``POST /v1/messages``
for the same body, prompt cache included (a batch request reads and writes the same cache as
live calls).  The store's outcomes in this API's words:

- a 200 is ``succeeded``; a request the API would refuse (400 ``invalid_request_error``), an
  unknown model (404 ``not_found_error``) and ``batch_request_fail_rate``'s injected failures
  (500 ``api_error``) are ``errored``;
- a job that expired (``batch_expire_rate``, ``batch_expire_after_s``) ends with the requests it
  had not answered ``expired``; a cancelled one with them ``canceled``;
- a job drawn by ``batch_fail_rate`` (OpenAI's whole-batch failure when the organization's
  enqueued-token limit is reached; the Messages Batches API has no failed state) ends with every
  request ``errored`` with a ``rate_limit_error`` naming that limit, so each is retried;
- ``batch_create_fail_rate`` refuses a creation with a 500 ``api_error``.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from judgekit.sim.batches import TERMINAL, Answer, BatchJob, BatchStore, answer_offline
from judgekit.sim.protocol import _JSON, _BadRequest, _dumps

if TYPE_CHECKING:
    from judgekit.sim.anthropic_api import AnthropicSim

__all__ = ["AnthropicBatchSim", "BATCHES_PATH", "MAX_BATCH_REQUESTS", "PROCESSING_STATUS", "anthropic_error"]

BATCHES_PATH = "/v1/messages/batches"
MAX_BATCH_REQUESTS = 100_000
#: the store's statuses (OpenAI's words) as the Message Batches API's ``processing_status``
PROCESSING_STATUS = {"validating": "in_progress", "in_progress": "in_progress", "finalizing": "in_progress",
                     "cancelling": "canceling", "completed": "ended", "failed": "ended", "expired": "ended",
                     "cancelled": "ended"}
_API = "anthropic"
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                500: "api_error", 529: "overloaded_error"}
_QUEUE_FULL = ("Number of batch requests enqueued for this model exceeds your organization's limit; try again "
               "once other batches have finished (simulated).")


def anthropic_error(api: str, status: int, message: str, *, request_id: str = "", **_: Any) -> web.Response:
    """An error in Anthropic's shape, ``{"type": "error", "error": {"type", "message"}, "request_id"}``
    (the type from the status; ``api`` and the OpenAI-only fields of
    :func:`~judgekit.sim.protocol.error_response`'s signature are ignored)."""
    body = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error" if status >= 500 else
                                                                "invalid_request_error"), "message": message},
            "request_id": request_id or None}
    headers = {"request-id": request_id, "x-request-id": request_id} if request_id else None
    return web.Response(body=_dumps(body), status=status, content_type=_JSON, headers=headers)


def _rfc3339(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _order(job: BatchJob) -> list[int]:
    """The order of a job's result lines: a hash of the job and each ``custom_id``."""
    return sorted(range(len(job.items)),
                  key=lambda i: hashlib.sha256(f"{job.id}\x1e{job.items[i][0]}".encode()).digest())


def read_requests(body: Any) -> list[tuple[str, Any]]:
    """The ``(custom_id, params)`` of a creation body, checked as the real API checks it; raises
    :class:`~judgekit.sim.protocol._BadRequest` with its message."""
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    requests = body.get("requests")
    if not isinstance(requests, list):
        raise _BadRequest("requests: Field required")
    if not requests:
        raise _BadRequest("requests: List should have at least 1 item after validation, not 0")
    if len(requests) > MAX_BATCH_REQUESTS:
        raise _BadRequest(f"requests: List should have at most {MAX_BATCH_REQUESTS} items after validation, not "
                          f"{len(requests)}")
    items: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for i, r in enumerate(requests):
        if not isinstance(r, dict):
            raise _BadRequest(f"requests.{i}: Input should be a valid dictionary")
        cid = r.get("custom_id")
        if not isinstance(cid, str) or not _CUSTOM_ID.fullmatch(cid):
            raise _BadRequest(f"requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if cid in seen:
            raise _BadRequest(f"Duplicate custom_id: {cid!r}. Each request in a Message Batch must have a unique "
                              "custom_id.")
        seen.add(cid)
        params = r.get("params")
        if not isinstance(params, dict):
            raise _BadRequest(f"requests.{i}.params: Input should be a valid dictionary")
        items.append((cid, params))
    return items


class AnthropicBatchSim:
    """The Message Batches API over a :class:`BatchStore`, answered by ``messages`` (the
    simulator's Messages API)."""

    def __init__(self, core: Any, store: BatchStore, messages: "AnthropicSim") -> None:
        self.core = core
        self.store = store
        self.messages = messages

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(BATCHES_PATH, self.create_batch)
        app.router.add_get(BATCHES_PATH, self.list_batches)
        app.router.add_get(BATCHES_PATH + "/{batch_id}", self.get_batch)
        app.router.add_delete(BATCHES_PATH + "/{batch_id}", self.delete_batch)
        app.router.add_post(BATCHES_PATH + "/{batch_id}/cancel", self.cancel_batch)
        app.router.add_get(BATCHES_PATH + "/{batch_id}/results", self.results)

    # -- plumbing ---------------------------------------------------------------------------

    def _error(self, status: int, message: str) -> web.Response:
        return anthropic_error(_API, status, message, request_id=self.core._next_id())

    def _gate(self, request: web.Request) -> web.Response | None:
        keys = self.core.keys
        if keys is None or request.headers.get("x-api-key") in keys or self.core._key_ok(request):
            return None
        self.core.stats.auth_failures += 1
        return self._error(401, "invalid x-api-key")

    async def _job(self, request: web.Request) -> tuple[BatchJob | None, web.Response | None]:
        stop = self._gate(request)
        if stop is not None:
            return None, stop
        batch_id = request.match_info["batch_id"]
        job = self.store.jobs.get(batch_id)
        if job is None or job.api != _API:
            return None, self._error(404, f"No message batch found with id '{batch_id}'.")
        await self.store.refresh(job)
        return job, None

    async def _answer(self, payload: Any) -> Answer:
        from judgekit.sim.anthropic_api import parse_messages

        core = self.core
        rules = core.config.model_param_rules
        return await answer_offline(core, _API, payload, lambda body: parse_messages(body, core.seed_bytes,
                                                                                     rules=rules),
                                    self.messages._answer, error=anthropic_error)

    # -- routes -----------------------------------------------------------------------------

    async def create_batch(self, request: web.Request) -> web.Response:
        stop = self._gate(request)
        if stop is not None:
            return stop
        try:
            body = json.loads(await request.read())
        except ValueError as e:
            return self._error(400, f"could not parse the JSON body: {e}")
        try:
            items = read_requests(body)
        except _BadRequest as e:
            return self._error(400, str(e))
        if self.store.creation_fails(_API):
            return self._error(500, "Internal server error")
        job = self.store.create(_API, items, self._answer, prefix="msgbatch_")
        return web.json_response(self._batch_json(job, request))

    async def get_batch(self, request: web.Request) -> web.Response:
        job, stop = await self._job(request)
        return stop if job is None else web.json_response(self._batch_json(job, request))

    async def cancel_batch(self, request: web.Request) -> web.Response:
        job, stop = await self._job(request)
        if job is None:
            return stop  # type: ignore[return-value]
        if not await self.store.cancel(job):
            return self._error(400, f"Message Batch {job.id} has already ended and cannot be canceled.")
        return web.json_response(self._batch_json(job, request))

    async def delete_batch(self, request: web.Request) -> web.Response:
        job, stop = await self._job(request)
        if job is None:
            return stop  # type: ignore[return-value]
        if job.status not in TERMINAL:
            return self._error(400, f"Message Batch {job.id} is still processing; cancel it and wait for it to end "
                               "before deleting it.")
        del self.store.jobs[job.id]
        return web.json_response({"id": job.id, "type": "message_batch_deleted"})

    async def list_batches(self, request: web.Request) -> web.Response:
        stop = self._gate(request)
        if stop is not None:
            return stop
        try:
            limit = int(request.query.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1000:
            return self._error(400, "limit: Input should be an integer from 1 to 1000")
        jobs = self.store.listed(_API)
        ids = [j.id for j in jobs]
        after, before = request.query.get("after_id"), request.query.get("before_id")
        if after is not None:
            jobs = jobs[ids.index(after) + 1:] if after in ids else []
            page, more = jobs[:limit], len(jobs) > limit
        elif before is not None:
            jobs = jobs[:ids.index(before)] if before in ids else []
            page, more = jobs[-limit:], len(jobs) > limit
        else:
            page, more = jobs[:limit], len(jobs) > limit
        for job in page:
            await self.store.refresh(job)
        return web.json_response({"data": [self._batch_json(j, request) for j in page], "has_more": more,
                                  "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None})

    async def results(self, request: web.Request) -> web.Response:
        job, stop = await self._job(request)
        if job is None:
            return stop  # type: ignore[return-value]
        if job.status not in TERMINAL:
            return self._error(400, f"Message Batch {job.id} has not ended yet (processing_status "
                               f"{PROCESSING_STATUS[job.status]!r}); its results are not available.")
        lines = [_dumps({"custom_id": job.items[i][0], "result": self._result(job, i)}) for i in _order(job)]
        return web.Response(body=b"\n".join(lines) + b"\n", content_type="application/x-jsonl")

    # -- the MessageBatch object and its results --------------------------------------------

    def _result(self, job: BatchJob, i: int) -> dict[str, Any]:
        if job.status == "failed":
            return {"type": "errored", "error": {"type": "error", "error": {"type": "rate_limit_error",
                                                                         "message": _QUEUE_FULL},
                                                 "request_id": None}}
        if i < len(job.answers):
            a = job.answers[i]
            if a.status == 200:
                return {"type": "succeeded", "message": a.body}
            return {"type": "errored", "error": a.body if isinstance(a.body, dict) and a.body.get("type") == "error"
                    else {"type": "error", "error": {"type": "api_error", "message": str(a.body)[:500]},
                          "request_id": a.request_id}}
        return {"type": "expired" if job.status == "expired" else "canceled"}

    def _counts(self, job: BatchJob) -> dict[str, int]:
        n = len(job.items)
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if job.status not in TERMINAL:
            return counts
        counts["processing"] = 0
        for i in range(n):
            kind = self._result(job, i)["type"]
            counts[kind] += 1
        return counts

    def _batch_json(self, job: BatchJob, request: web.Request) -> dict[str, Any]:
        ended = job.status in TERMINAL
        ended_at = job.completed_at or job.failed_at or job.expired_at or job.cancelled_at
        return {
            "id": job.id, "type": "message_batch", "processing_status": PROCESSING_STATUS[job.status],
            "request_counts": self._counts(job), "ended_at": _rfc3339(ended_at if ended else None),
            "created_at": _rfc3339(job.created_at), "expires_at": _rfc3339(job.expires_at), "archived_at": None,
            "cancel_initiated_at": _rfc3339(job.cancelling_at),
            "results_url": f"{request.url.origin()}{BATCHES_PATH}/{job.id}/results" if ended else None,
        }
