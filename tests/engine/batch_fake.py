"""A provider with a batch side, for the batch layer's tests: a real class implementing
judgekit.providers.batch.BatchAPI (and live ``generate``) over an in-memory "server" that outlives
engines, so a test can close one engine mid-batch and open another, as a restarted run would.

The server's knobs: ``polls_to_end`` (polls before a batch ends; None: it never ends until
``release()``), ``not_run`` (keys a batch leaves unanswered, or "expire": every batch expires
with nothing answered), ``fail`` (keys answered with a BadRequest), ``limits`` (requests and
bytes per batch), ``poll_errors`` (transient errors the next polls raise).
"""

from __future__ import annotations

import itertools
import json

from judgekit.config import ModelSpec
from judgekit.errors import BadRequest, ContentFiltered, TransientError
from judgekit.providers.base import Provider
from judgekit.providers.batch import (
    BatchItem,
    BatchLimits,
    BatchOutcome,
    BatchRequestNotRun,
    BatchStatus,
)
from judgekit.types import ChatRequest, ChatResponse, Usage

_ids = itertools.count(1)


def answer(req: ChatRequest) -> ChatResponse:
    text = " | ".join(m.text() for m in req.messages)
    return ChatResponse(f"answer to {text}", Usage(10 + len(text.split()), 20), "stop", 0.01, "req")


class FakeBatchServer:
    def __init__(self, *, polls_to_end: int | None = 1, limits: BatchLimits = BatchLimits(1000, 10_000_000)) -> None:
        self.polls_to_end = polls_to_end
        self.limits = limits
        self.batches: dict[str, dict] = {}
        self.not_run: set[str] | str = set()
        self.fail: set[str] = set()
        self.filtered: set[str] = set()  # answered with a content filter that billed its tokens
        self.poll_errors = 0
        self.broken: Exception | None = None  # raised by the next poll (a provider's bug)
        self.live_calls = 0
        self.polls = 0
        self.submitted: list[list[str]] = []  # the keys of each batch created, in order
        self.cancelled: list[str] = []

    def release(self, polls_to_end: int = 0) -> None:
        self.polls_to_end = polls_to_end

    @property
    def created(self) -> int:
        return len(self.submitted)

    def _status(self, bid: str) -> BatchStatus:
        b = self.batches[bid]
        return BatchStatus(bid, b["state"], b["state"].upper(), len(b["items"]), b.get("ok", 0), b.get("bad", 0))


class FakeBatchProvider(Provider):
    """Priced as the model it names (an ``openai`` kind); a price override in the spec wins."""

    def __init__(self, alias: str, spec: ModelSpec, server: FakeBatchServer) -> None:
        super().__init__(alias, spec)
        self.server = server
        self.batch_limits = server.limits

    @property
    def identity(self) -> str:
        return "fake://batches"

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.server.live_calls += 1
        return answer(request)

    def batch_line_bytes(self, item: BatchItem) -> int:
        return len(json.dumps({"custom_id": item.custom_id, "body": [m.text() for m in item.request.messages]}))

    async def submit_batch(self, items: list[BatchItem], *, wave: str | None = None) -> BatchStatus:
        s = self.server
        assert len(items) <= s.limits.max_requests
        assert sum(self.batch_line_bytes(i) for i in items) <= s.limits.max_bytes
        bid = f"batch_{next(_ids):06d}"
        s.batches[bid] = {"items": list(items), "state": "submitted", "polls": 0, "wave": wave}
        s.submitted.append([i.custom_id for i in items])
        return s._status(bid)

    async def find_batches(self, intents, *, known=frozenset()) -> dict[str, BatchStatus]:
        waves = {i.wave for i in intents}
        return {b["wave"]: self.server._status(bid) for bid, b in self.server.batches.items()
                if b["wave"] in waves and bid not in known}

    async def poll_batch(self, batch_id: str) -> BatchStatus:
        s = self.server
        s.polls += 1
        if s.broken is not None:
            raise s.broken
        if s.poll_errors:
            s.poll_errors -= 1
            raise TransientError("HTTP 503 while polling", status=503)
        b = s.batches[batch_id]
        if b["state"] in ("cancelled", "ended", "expired"):
            return s._status(batch_id)
        b["polls"] += 1
        if s.polls_to_end is not None and b["polls"] >= s.polls_to_end:
            b["state"] = "expired" if s.not_run == "expire" else "ended"
        else:
            b["state"] = "in_progress"
        return s._status(batch_id)

    async def batch_results(self, batch_id: str, custom_ids=None) -> list[BatchOutcome]:
        s = self.server
        b = s.batches[batch_id]
        out = []
        for item in b["items"]:
            k = item.custom_id
            if b["state"] in ("expired", "cancelled") or (isinstance(s.not_run, set) and k in s.not_run):
                out.append(BatchOutcome(k, error=BatchRequestNotRun(f"request {k[:8]} expired")))
            elif k in s.fail:
                out.append(BatchOutcome(k, error=BadRequest("invalid image", status=400)))
            elif k in s.filtered:
                out.append(BatchOutcome(k, error=ContentFiltered("content_filter", usage=Usage(12, 5))))
            else:
                out.append(BatchOutcome(k, response=answer(item.request)))
        return out[::-1]  # in no particular order

    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        s = self.server
        s.cancelled.append(batch_id)
        s.batches[batch_id]["state"] = "cancelled"
        return s._status(batch_id)


def use_fake(monkeypatch, server: FakeBatchServer) -> None:
    """Every provider the engine (and the CLI's batch commands) create is a FakeBatchProvider."""
    import judgekit.engine.engine as engine_mod
    import judgekit.providers as providers_mod

    def make(alias, spec):
        return FakeBatchProvider(alias, spec, server)

    monkeypatch.setattr(engine_mod, "create_provider", make)
    monkeypatch.setattr(providers_mod, "create_provider", make)
