"""The simulator's batch jobs, whatever API they come through: :class:`BatchStore`.

A batch API (OpenAI files + batches in :mod:`judgekit.sim.openai_batch_api`; Anthropic Message
Batches and Gemini batch mode can reuse it) hands the store a list of ``(custom_id, payload)``
and a function that answers one payload; the store keeps the job in the server's memory (a client
that is killed reattaches by the job's id, for as long as the server runs), moves it through
time and answers its requests.

Answers: :func:`answer_offline` runs a payload through the same steps as a live call of the same
API (:meth:`judgekit.sim.core._Core.run`): parse and the model family's parameter rules (400),
the model (404), the attempt count of the request hash, the garbage draw, then the API's reply
function (the chat endpoint's :meth:`~judgekit.sim.core._Core._chat_reply`: the reply generator,
the no-answer faults of ``reply_faults``, the usage with its cached and reasoning tokens).  The
HTTP-level steps a batch does not meet request by request (the key, quota, rate limits, latency,
hangs, ``error_rate``'s 5xx) are left out.  So a request gets the same answer in a batch as live
(text and usage), as long as the attempt counts agree.

Time (read off ``clock``, injectable), with ``T`` = ``SimConfig.batch_turnaround_s``:

- ``validating`` for the first 10 % of ``T``; a job the API found invalid (``errors``), or one
  drawn by ``batch_fail_rate``, is ``failed`` then, no request run;
- ``in_progress`` until 90 % of ``T``, its requests answered in order, evenly over that span
  (each answered when a read of the job first finds it due);
- ``finalizing`` for the last 10 %, ``completed`` at ``T``;
- ``expired`` at ``expires_at`` (creation + ``batch_expire_after_s``) if not completed by then,
  with the requests answered so far; a job drawn by ``batch_expire_rate`` stalls after half of
  its requests and expires at ``T``;
- ``cancel`` makes it ``cancelling`` (no further answers) for 10 % of ``T``, then ``cancelled``.

Injected failures: ``batch_request_fail_rate`` answers a request with a 500 ``server_error`` (drawn
per request hash and attempt, so a retry can succeed), ``batch_request_errors`` with an error of a
given type (Anthropic's ``errored`` types: ``overloaded_error`` 529, ``invalid_request_error``
400...); ``batch_queue_tokens`` fails a job whose prompt tokens, with those of its queue's jobs not
ended, pass the limit (OpenAI's ``token_limit_exceeded``); ``batch_create_fail_rate`` refuses a job's
creation (:meth:`BatchStore.creation_fails`).  Everything is counted in :class:`BatchStats`.

Statuses are named as OpenAI's Batch API names them (the most detailed of the three APIs); an
API module maps them onto its own words.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from judgekit.sim.protocol import _BadRequest, error_response

__all__ = ["BatchStore", "BatchJob", "BatchStats", "Answer", "answer_offline", "TERMINAL", "VALIDATE_SHARE",
           "FINALIZE_SHARE", "CANCEL_SHARE"]

#: statuses after which a job changes no more
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: shares of the turnaround spent validating, finalizing, and cancelling after a cancel
VALIDATE_SHARE = 0.1
FINALIZE_SHARE = 0.1
CANCEL_SHARE = 0.1
_U64 = float(1 << 64)


def _u(*parts: bytes) -> float:
    return int.from_bytes(hashlib.sha256(b"\x1d".join(parts)).digest()[:8], "big") / _U64


# ----------------------------------------------------------------------------------------
# answers
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answer:
    """One request's answer: the HTTP status and JSON body the live endpoint would have sent."""

    status: int
    body: Any
    request_id: str
    kind: str = ""
    """What the reply was (``pairwise``, ``answer``...; ``error`` for a non-200)."""
    injected: bool = False
    """A failure drawn by ``batch_request_fail_rate``."""


async def answer_offline(core: Any, api: str, payload: Any, parse: Callable[[Any], Any],
                         answer: Callable[[Any, Any], Awaitable[Any]], *, model_of: Callable[[Any], str] | None = None,
                         error: Callable[..., Any] = error_response) -> Answer:
    """``payload`` (a request body of ``api``) answered as :meth:`judgekit.sim.core._Core.run`
    would, less its HTTP-level steps (see the module docstring); ``error`` shapes an error body
    (``error_response``'s signature, returning an aiohttp response)."""
    from judgekit.sim.core import Admitted

    def failed(status: int, message: str, **kw: Any) -> Answer:
        response = error(api, status, message, **kw)
        return Answer(status, json.loads(response.body), response.headers.get("x-request-id", ""), "error")

    try:
        sreq = parse(payload)
    except _BadRequest as e:
        return failed(400, str(e), param=e.param, code=e.code, request_id=core._next_id())
    model = model_of(sreq) if model_of is not None else sreq.model
    if core.models is not None and model not in core.models:
        return failed(404, f"The model `{model}` does not exist or you do not have access to it.",
                      code="model_not_found", request_id=core._next_id())
    digest = sreq.digest
    attempt = core.attempts.get(digest, 0) + 1
    core.attempts[digest] = attempt
    request_id = f"req_{digest[:10].hex()}{attempt:02d}"  # as a live reply's x-request-id
    cfg = core.config
    garbage = False
    if core.any_faults:  # the garbage draw of _Core.run (same bytes of the same hash)
        f = hashlib.sha256(digest + attempt.to_bytes(4, "big")).digest()
        garbage = int.from_bytes(f[16:24], "big") / _U64 < cfg.garbage_rate
    if cfg.batch_request_fail_rate and _u(b"batch-request", core.seed_bytes, digest,
                                          attempt.to_bytes(4, "big")) < cfg.batch_request_fail_rate:
        response = error(api, 500, "The server had an error while processing your request (simulated).",
                         etype="server_error", request_id=request_id)
        return Answer(500, json.loads(response.body), request_id, "error", injected=True)
    if cfg.batch_request_errors:  # an error type drawn per request hash and attempt
        from judgekit.sim.config import BATCH_ERROR_STATUS

        u = _u(b"batch-errored", core.seed_bytes, digest, attempt.to_bytes(4, "big"))
        for etype, share in sorted(cfg.batch_request_errors.items()):
            if u < share:
                status = BATCH_ERROR_STATUS[etype]
                response = error(api, status, f"The request errored: {etype} (simulated).", etype=etype,
                                 request_id=request_id)
                return Answer(status, json.loads(response.body), request_id, "error", injected=True)
            u -= share
    served = await answer(sreq, Admitted(digest, attempt, request_id, garbage))
    return Answer(200, json.loads(served.body), request_id, served.kind)


# ----------------------------------------------------------------------------------------
# counters
# ----------------------------------------------------------------------------------------


def _bump(d: dict[str, int], key: str, n: int = 1) -> None:
    d[key] = d.get(key, 0) + n


@dataclass(slots=True)
class BatchStats:
    """Counters of the batch APIs (merged into ``GET /sim/stats``), by API (``openai``, ``azure``...).

    ``batches_created`` and ``batch_requests_submitted`` count every job accepted and every
    request in it, so a test can prove that nothing was submitted twice; the requests' fates are
    ``batch_requests_answered`` (200s), ``batch_requests_failed`` (other statuses, the injected 500s
    included and also counted in ``batch_requests_injected``), ``batch_requests_expired`` and
    ``batch_requests_cancelled``.  Not in the chat counters (``served``, ``requests``): those count
    live calls."""

    batches_created: dict[str, int] = field(default_factory=dict)
    batch_requests_submitted: dict[str, int] = field(default_factory=dict)
    batch_requests_answered: int = 0
    batch_requests_failed: int = 0
    batch_requests_injected: int = 0
    batch_requests_expired: int = 0
    batch_requests_cancelled: int = 0
    batches_by_status: dict[str, int] = field(default_factory=dict)
    """Jobs that reached each terminal status."""
    batch_create_errors: dict[str, int] = field(default_factory=dict)
    """Creations refused by ``batch_create_fail_rate``."""
    batch_files_uploaded: int = 0
    """Files uploaded for batches (the APIs that take a file)."""

    def snapshot(self) -> dict[str, Any]:
        return {
            "batches_created": sum(self.batches_created.values()),
            "batches_created_by_api": dict(self.batches_created),
            "batch_requests_submitted": sum(self.batch_requests_submitted.values()),
            "batch_requests_submitted_by_api": dict(self.batch_requests_submitted),
            "batch_requests_answered": self.batch_requests_answered,
            "batch_requests_failed": self.batch_requests_failed,
            "batch_requests_injected": self.batch_requests_injected,
            "batch_requests_expired": self.batch_requests_expired,
            "batch_requests_cancelled": self.batch_requests_cancelled,
            "batches_by_status": dict(self.batches_by_status),
            "batch_create_errors": dict(self.batch_create_errors),
            "batch_files_uploaded": self.batch_files_uploaded,
        }

    def reset(self) -> None:
        fresh = BatchStats()
        for name in self.__slots__:  # type: ignore[attr-defined]
            setattr(self, name, getattr(fresh, name))


# ----------------------------------------------------------------------------------------
# jobs
# ----------------------------------------------------------------------------------------


@dataclass(eq=False)
class BatchJob:
    """A batch in the simulator's memory.  Times are clock seconds (floats)."""

    id: str
    api: str
    items: list[tuple[str, Any]]
    """``(custom_id, payload)`` in submission order (the payload dropped once answered)."""
    answer: Callable[[Any], Awaitable[Answer]]
    created_at: float
    turnaround_s: float
    expires_at: float
    errors: list[dict[str, Any]] = field(default_factory=list)
    """Why validation failed the job (the API's own shape of each error); empty: valid."""
    stall_at: int | None = None
    """A job drawn to expire: how many requests it answers before it stalls."""
    meta: dict[str, Any] = field(default_factory=dict)
    """What the API module keeps with the job (its input file, endpoint, metadata, files...)."""
    queue: str = ""
    """The enqueued-token queue the job is in (an API and model), '' for none."""
    tokens: int = 0
    """The job's prompt tokens in that queue."""
    status: str = "validating"
    answers: list[Answer] = field(default_factory=list)
    """The answers so far, in the order of ``items``."""
    in_progress_at: float | None = None
    finalizing_at: float | None = None
    completed_at: float | None = None
    failed_at: float | None = None
    expired_at: float | None = None
    cancelling_at: float | None = None
    cancelled_at: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def validated_at(self) -> float:
        return self.created_at + VALIDATE_SHARE * self.turnaround_s

    @property
    def ends_at(self) -> float:
        return self.created_at + self.turnaround_s

    def due(self, t: float) -> int:
        """How many requests are answered by time ``t`` (before a stall or a cancel)."""
        n = len(self.items)
        span = (1.0 - VALIDATE_SHARE - FINALIZE_SHARE) * self.turnaround_s
        if t < self.validated_at:
            k = 0
        elif span <= 0 or t >= self.validated_at + span:
            k = n
        else:  # the share can round to infinity for a tiny span: clamped
            k = math.ceil(n * min(1.0, (t - self.validated_at) / span))
        return min(k, self.stall_at) if self.stall_at is not None else k


class BatchStore:
    """Every batch job of a simulator, its clock and its counters."""

    def __init__(self, core: Any, *, clock: Callable[[], float] = time.time) -> None:
        self.core = core
        self.config = core.config
        self.clock = clock
        self.stats = BatchStats()
        self.jobs: dict[str, BatchJob] = {}
        self._creations: dict[str, int] = {}
        self._sets: dict[bytes, int] = {}

    def reset(self) -> None:
        """Zero the counters and the draws' attempt counts (jobs stay: clients may still read them)."""
        self.stats.reset()
        self._creations.clear()
        self._sets.clear()

    def creation_fails(self, api: str) -> bool:
        """Whether this creation attempt of ``api`` is refused (``batch_create_fail_rate``); counted."""
        rate = self.config.batch_create_fail_rate
        n = self._creations[api] = self._creations.get(api, 0) + 1
        if rate and _u(b"batch-create", self.core.seed_bytes, api.encode(), n.to_bytes(8, "big")) < rate:
            _bump(self.stats.batch_create_errors, api)
            return True
        return False

    def enqueued(self, queue: str, now: float) -> int:
        """The prompt tokens of ``queue``'s jobs not ended at ``now`` (validated or not)."""
        return sum(j.tokens for j in self.jobs.values()
                   if j.queue == queue and not j.errors and j.cancelling_at is None and j.status not in TERMINAL
                   and now < min(j.ends_at, j.expires_at))

    def create(self, api: str, items: list[tuple[str, Any]], answer: Callable[[Any], Awaitable[Answer]], *,
               errors: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None,
               prefix: str = "batch_", queue: str = "", tokens: int = 0) -> BatchJob:
        """A new job (counted as created, its requests as submitted).  ``queue``, ``tokens``: the
        enqueued-token queue it joins (``batch_queue_tokens``) and its prompt tokens in it."""
        cfg = self.config
        now = self.clock()
        key = hashlib.sha256(b"\x1e".join(cid.encode() for cid, _ in items)).digest()
        n = self._sets[key] = self._sets.get(key, 0) + 1  # the same set submitted again draws anew
        draw = (self.core.seed_bytes, key, n.to_bytes(8, "big"))
        errors = list(errors or ())
        limit = cfg.batch_queue_tokens
        if not errors and queue and limit is not None and self.enqueued(queue, now) + tokens > limit:
            errors.append({"code": "token_limit_exceeded", "line": None, "param": None,
                           "message": f"Enqueued token limit reached for {queue.partition(':')[2]} in organization "
                                      f"org-judgekitsim. Limit: {limit:,} enqueued tokens. Please try submitting "
                                      "fewer tokens, or wait for other batches to finish."})
            tokens = 0
        if not errors and cfg.batch_fail_rate and _u(b"batch-fail", *draw) < cfg.batch_fail_rate:
            errors.append({"code": "token_limit_exceeded", "line": None, "param": None,
                           "message": "Enqueued token limit reached for this model in organization "
                                      "org-judgekitsim. Please try submitting fewer tokens, or wait for other "
                                      "batches to finish (simulated)."})
        turnaround = cfg.batch_turnaround_s
        job = BatchJob(id=prefix + os.urandom(12).hex(), api=api, items=list(items), answer=answer, created_at=now,
                       turnaround_s=turnaround, expires_at=now + cfg.batch_expire_after_s, errors=errors,
                       meta=dict(meta or {}), queue=queue, tokens=tokens)
        if cfg.batch_expire_rate and _u(b"batch-expire", *draw) < cfg.batch_expire_rate:
            job.stall_at = len(items) // 2
            job.expires_at = min(job.expires_at, job.ends_at)
        self.jobs[job.id] = job
        _bump(self.stats.batches_created, api)
        _bump(self.stats.batch_requests_submitted, api, len(items))
        return job

    def listed(self, api: str) -> list[BatchJob]:
        """The jobs of ``api``, newest first."""
        return sorted((j for j in self.jobs.values() if j.api == api), key=lambda j: j.created_at, reverse=True)

    async def refresh(self, job: BatchJob) -> BatchJob:
        """Bring ``job`` up to the clock: its status, and the answers now due."""
        async with job.lock:
            await self._advance(job, self.clock())
        return job

    async def cancel(self, job: BatchJob) -> bool:
        """Start cancelling ``job`` (after answering what is due); False when it has ended already."""
        async with job.lock:
            now = self.clock()
            await self._advance(job, now)
            if job.terminal:
                return False
            if job.cancelling_at is None:
                job.cancelling_at = now
                job.status = "cancelling"
            await self._advance(job, now)
            return True

    async def _answer_until(self, job: BatchJob, k: int) -> None:
        st = self.stats
        while len(job.answers) < min(k, len(job.items)):
            i = len(job.answers)
            ans = await job.answer(job.items[i][1])
            job.answers.append(ans)
            job.items[i] = (job.items[i][0], None)  # answered: its payload (images and all) is not needed again
            if ans.status == 200:
                st.batch_requests_answered += 1
            else:
                st.batch_requests_failed += 1
                st.batch_requests_injected += ans.injected

    def _end(self, job: BatchJob, status: str, at: float) -> None:
        job.status = status
        setattr(job, f"{status}_at", at)
        _bump(self.stats.batches_by_status, status)
        left = len(job.items) - len(job.answers)
        if status == "expired":
            self.stats.batch_requests_expired += left
        elif status == "cancelled":
            self.stats.batch_requests_cancelled += left

    async def _advance(self, job: BatchJob, now: float) -> None:
        if job.terminal:
            return
        if job.cancelling_at is not None:
            done = job.cancelling_at + CANCEL_SHARE * job.turnaround_s
            if now >= done:
                self._end(job, "cancelled", done)
            return
        if now < job.validated_at:
            return
        if job.errors:
            self._end(job, "failed", job.validated_at)
            return
        job.in_progress_at = job.validated_at
        job.status = "in_progress"
        deadline = job.expires_at
        await self._answer_until(job, job.due(min(now, deadline)))
        finishes = job.stall_at is None and job.ends_at <= deadline
        if finishes and now >= job.ends_at:
            job.finalizing_at = job.ends_at - FINALIZE_SHARE * job.turnaround_s
            self._end(job, "completed", job.ends_at)
        elif now >= deadline:
            self._end(job, "expired", deadline)
        elif len(job.answers) == len(job.items) and now >= job.ends_at - FINALIZE_SHARE * job.turnaround_s:
            job.finalizing_at = job.ends_at - FINALIZE_SHARE * job.turnaround_s
            job.status = "finalizing"
