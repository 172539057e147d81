"""The provider's enqueued-token limit, for one batch-mode alias: :class:`TokenQueue`.

OpenAI holds an organisation's batches of a model to an *enqueued-token limit*: the input tokens
of every batch not ended yet.  A batch that would pass it fails as a whole (status ``failed``,
``errors.data = [{code: "token_limit_exceeded", line: null}]``), no request run.  Waves split only
by request count and bytes never ran when they were bigger than that limit, and a refused wave
sent again at once is refused again.  So, per alias:

- ``batch_queue_tokens`` (:class:`~judgekit.config.ModelSpec`): the organisation's limit.  Before
  a wave is submitted its requests' input tokens are estimated (:func:`estimate`: the tokenizer's
  count, in a worker thread, raised by 25 % where the tokenizer is a stand-in), the wave is split
  into batches of at most that many tokens (in order), and a batch is submitted only while this
  alias's batches not ended yet and it stay within the limit; otherwise it waits for them to end.
  A request alone over the limit can never run in a batch: it fails (or goes live with
  ``batch_fallback = "live"``).  A batch an earlier run left live counts as filling the queue.
- A refusal (:class:`~judgekit.providers.batch_errors.BatchQueueFull`, with or without the
  setting; or a create call still answered 429 after its retries, as Gemini refuses a batch over
  the model's enqueued-token limit: :func:`refused_create`): the alias's batches go one at a time from then on (a batch waits until every earlier
  one has ended), each at most half the refused batch's estimated tokens (halved again at each
  refusal); the refused requests are submitted again that way, never as the same batch at once,
  and a refusal is not counted against ``batch_attempts``.  A request refused alone in a batch of
  its own, with no other batch of the alias in the queue, fails with the provider's message (the
  limit it names) and judgekit's estimate; so does one refused :data:`MAX_REFUSALS` times.

Only this module knows the queue; the batch layer (:mod:`judgekit.engine.batching`) sends a wave
here when the alias has a limit or has been refused (:func:`submit_in_turn`), and the collection
(:mod:`judgekit.engine.batch_collect`) says when a batch ends (:meth:`TokenQueue.ended`) and hands
refused requests to :func:`refused`.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import TYPE_CHECKING, Any

from ..errors import ProviderError
from ..providers.batch_errors import BatchQueueFull
from .budget import INEXACT_INPUT_MARGIN

if TYPE_CHECKING:
    from .batching import Batch, BatchLayer, Lane, Waiter

__all__ = ["TokenQueue", "estimate", "submit_in_turn", "refused", "refused_create", "provider_limit", "MAX_REFUSALS"]

#: refusals after which a request fails, whatever its batch (halving reaches one request sooner)
MAX_REFUSALS = 32
#: how often a batch waiting for room looks again when nothing woke it (seconds)
_RECHECK_S = 5.0


_LIMIT = re.compile(r"limit:?\s*([\d,]+)\s*enqueued tokens", re.IGNORECASE)


def provider_limit(message: str) -> int | None:
    """The enqueued-token limit a refusal's message names (OpenAI: "... Limit: 90,000 enqueued
    tokens ..."), or None."""
    m = _LIMIT.search(message)
    if m is None:
        return None
    digits = m.group(1).replace(",", "")
    return int(digits) if digits.isdigit() and len(digits) <= 15 else None


def estimate(prov: Any, req) -> int:
    """``req``'s input tokens as the provider will count them, or more: the tokenizer's count
    (images by the provider's rule), raised by :data:`~judgekit.engine.budget.INEXACT_INPUT_MARGIN`
    when the tokenizer is a stand-in."""
    from ..cost.tokens import count_request
    from .engine import _billed

    n = count_request(prov.kind, _billed(prov), req.messages, req.params)
    return n.input if n.exact else math.ceil(n.input * INEXACT_INPUT_MARGIN)


class TokenQueue:
    """One alias's share of the provider's enqueued-token queue (see the module docstring)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit  # the organisation's limit, as the spec gives it
        self.cap = limit  # the most estimated tokens one batch may hold (halved at each refusal)
        self.enqueued = 0  # estimated tokens of this alias's batches not ended yet
        self.held: dict[tuple[str, str, str], int] = {}  # batch not ended -> its estimated tokens
        self.sizes: dict[tuple[str, str, str], int] = {}  # every batch admitted -> its estimated tokens
        self.alone: set[tuple[str, str, str]] = set()  # batches submitted with no other in the queue
        self.ended_ids: set[tuple[str, str, str]] = set()
        self.serial = False  # after a refusal: one batch at a time
        self.refusals = 0  # batches refused
        self.said: int | None = None  # the limit the provider's last refusal named, if it did
        self.waiting = 0  # calls whose batch waits for room
        self.admitting = 0  # batches admitted whose create call is under way
        self.halving = 0  # refusals whose new batch size is being worked out: nothing is admitted meanwhile
        self.closed = False  # the run is stopping: no batch waits for room any more
        self._freed: asyncio.Future | None = None

    @property
    def active(self) -> bool:
        """Whether waves are split by tokens and wait for room (a limit is set, or one was met)."""
        return self.cap is not None or self.halving > 0

    def chunks(self, calls: list["Waiter"]) -> list[list["Waiter"]]:
        """``calls`` (each with its ``tokens``) in order, as batches of at most :attr:`cap` tokens
        (a call over it alone)."""
        out: list[list[Waiter]] = []
        cur: list[Waiter] = []
        total = 0
        for w in calls:
            n = w.tokens or 0
            if cur and self.cap is not None and total + n > self.cap:
                out.append(cur)
                cur, total = [], 0
            cur.append(w)
            total += n
        if cur:
            out.append(cur)
        return out

    def _earlier(self, layer: "BatchLayer", lane: "Lane") -> bool:
        """Whether a batch an earlier run left live (its tokens unknown) is in this alias's queue."""
        return any(b.lane is lane and b.earlier and not b.collected and b.ident not in self.ended_ids
                   for b in layer.batches.values())

    def busy(self, layer: "BatchLayer", lane: "Lane") -> bool:
        return bool(self.held) or self.admitting > 0 or self._earlier(layer, lane)

    def room(self, layer: "BatchLayer", lane: "Lane", tokens: int) -> bool:
        """Whether a batch of ``tokens`` may be submitted now."""
        if self.halving:
            return False
        if not self.busy(layer, lane):
            return True
        if self.serial or self._earlier(layer, lane):
            return False
        limit = self.limit if self.limit is not None else self.cap
        return limit is None or self.enqueued + tokens <= limit

    async def admit(self, layer: "BatchLayer", lane: "Lane", tokens: int) -> bool | None:
        """Wait for room for a batch of ``tokens`` and take it: whether the batch is alone in the
        queue, or None when the run stopped meanwhile (nothing taken)."""
        stop = layer.engine._stopped
        while not self.room(layer, lane, tokens):
            if stop.is_set() or self.closed:
                return None
            if self._freed is None or self._freed.done():
                self._freed = asyncio.get_running_loop().create_future()
            stopped = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({self._freed, stopped}, timeout=_RECHECK_S, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopped.cancel()
        if stop.is_set() or self.closed:
            return None
        alone = not self.busy(layer, lane)
        self.enqueued += tokens
        self.admitting += 1
        return alone

    def close(self) -> None:
        """The run is stopping (or the engine closing): batches waiting for room are not made."""
        self.closed = True
        self._wake()

    def give_back(self, tokens: int) -> None:
        """A batch admitted with ``tokens`` was not created."""
        self.admitting -= 1
        self.enqueued = max(0, self.enqueued - tokens)
        self._wake()

    def hold(self, b: "Batch", tokens: int, alone: bool) -> None:
        """Batch ``b``, admitted with ``tokens``, was created."""
        self.admitting -= 1
        self.sizes[b.ident] = tokens
        if b.ident in self.ended_ids:  # ended already: it holds nothing
            self.enqueued = max(0, self.enqueued - tokens)
            self._wake()
            return
        self.held[b.ident] = tokens
        if alone:
            self.alone.add(b.ident)

    def ended(self, b: "Batch") -> None:
        """Batch ``b`` has ended at the provider (or is no longer followed): its room is free."""
        self.ended_ids.add(b.ident)
        tokens = self.held.pop(b.ident, None)
        if tokens is not None:
            self.enqueued = max(0, self.enqueued - tokens)
        self._wake()

    def _wake(self) -> None:
        if self._freed is not None and not self._freed.done():
            self._freed.set_result(None)

    def note(self) -> str:
        """What the live display says of the queue ('' when there is nothing to say)."""
        parts = []
        if self.waiting:
            room = f"~{self.enqueued:,} of {self.limit:,} tokens enqueued" if self.limit is not None else \
                "one batch at a time"
            parts.append(f"{self.waiting:,} call(s) wait for room in the provider's batch queue ({room})")
        if self.refusals:
            said = f" (the provider's limit: {self.said:,} tokens)" if self.said else ""
            parts.append(f"{self.refusals} batch(es) refused over the enqueued-token limit{said}: one batch at a "
                         f"time, at most ~{self.cap or 0:,} tokens")
        return "; ".join(parts)


async def _estimate_all(lane: "Lane", calls: list["Waiter"]) -> None:
    need = [w for w in calls if w.tokens is None]
    if need:
        counts = await asyncio.to_thread(lambda: [estimate(lane.prov, w.req) for w in need])
        for w, n in zip(need, counts):
            w.tokens = n


async def submit_in_turn(layer: "BatchLayer", lane: "Lane", calls: list["Waiter"]) -> None:
    """Submit a wave of ``calls`` as batches that fit the alias's queue, each when there is room
    (see the module docstring); each batch through ``layer.submit(..., queued=True)``."""
    q = lane.queue
    engine = layer.engine
    lane.submitting += len(calls)
    try:
        await _estimate_all(lane, calls)
    except Exception as e:  # a tokenizer's bug: the calls fail, never hang
        from .batching import unexpected

        layer.fail_all(lane, calls, unexpected(e, "estimating a wave's tokens"))
        return
    finally:
        lane.submitting -= len(calls)
    fit = []
    for w in calls:
        if q.limit is not None and (w.tokens or 0) > q.limit:
            _give_up(layer, lane, w, _TooBig(f"model '{lane.alias}': this request's ~{w.tokens:,} input tokens "
                                             f"(judgekit's estimate) are more than models.{lane.alias}."
                                             f"batch_queue_tokens = {q.limit:,}: it cannot run in a batch"))
        else:
            fit.append(w)
    rest = fit
    while rest:
        rest = [w for w in rest if not w.fut.done()]
        if not rest:
            break
        chunk = q.chunks(rest)[0]
        tokens = sum(w.tokens or 0 for w in chunk)
        q.waiting += len(rest)
        try:
            alone = await q.admit(layer, lane, tokens)
        finally:
            q.waiting -= len(rest)
        if alone is None:  # the run is stopping
            for w in rest:
                layer.not_run(w, engine.stop_reason or "stopped")
            break
        if q.cap is not None and tokens > q.cap and len(chunk) > 1:  # refused meanwhile: smaller batches
            q.give_back(tokens)
            continue
        rest = rest[len(chunk):]
        try:
            await layer.submit(lane, chunk, queued=True)
        finally:
            b = next((layer.live_keys[w.key] for w in chunk
                      if w.key in layer.live_keys and layer.live_keys[w.key].waiting.get(w.key) is w), None)
            if b is None:
                q.give_back(tokens)
            else:
                q.hold(b, tokens, alone)


class _TooBig(BatchQueueFull):
    """A request whose estimated tokens alone pass the alias's enqueued-token limit."""


def refused(layer: "BatchLayer", lane: "Lane", b: "Batch", calls: list["Waiter"], err: ProviderError) -> None:
    """Batch ``b`` was refused over the enqueued-token limit (``err``, the provider's message) and
    ``calls`` of this run were in it: the alias goes one batch at a time, its batches' size is
    halved, and the calls are submitted again that way (see the module docstring).  No await."""
    q = lane.queue
    alone = b.ident in q.alone
    tokens = q.sizes.get(b.ident)
    q.ended(b)
    q.refusals += 1
    q.serial = True
    q.said = provider_limit(str(err)) or q.said
    if not calls:  # an earlier run's batch: its requests join waves when their calls come
        return
    for w in calls:
        w.submissions = max(0, w.submissions - 1)  # a refusal ran nothing: not one of batch_attempts
        w.refusals += 1
    q.halving += 1  # no batch goes out until the smaller size is known
    layer.spawn(_again(layer, lane, len(b.rows), tokens, alone, calls, err), submit=True)


def refused_create(layer: "BatchLayer", lane: "Lane", calls: list["Waiter"], err: ProviderError) -> bool:
    """A batch's create call still answered 429 after its retries (Gemini refuses a batch over the
    model's enqueued-token limit so, ``RESOURCE_EXHAUSTED``): nothing was created; the calls are
    handled as a refused batch's (one batch at a time, halved), and True is returned.  A run that
    is stopping returns False (the calls fail as they would have)."""
    if layer.engine.stopping:
        return False
    q = lane.queue
    alone = not q.busy(layer, lane)
    known = [w.tokens for w in calls]
    tokens = sum(t for t in known if t) if all(t is not None for t in known) else None
    q.refusals += 1
    q.serial = True
    q.said = provider_limit(str(err)) or q.said
    for w in calls:
        w.refusals += 1
    q.halving += 1
    layer.spawn(_again(layer, lane, len(calls), tokens, alone, calls, err), submit=True)
    return True


async def _again(layer: "BatchLayer", lane: "Lane", n: int, tokens: int | None, alone: bool,
                 calls: list["Waiter"], err: ProviderError) -> None:
    q = lane.queue
    try:
        await _estimate_all(lane, calls)
        if tokens is None:
            tokens = sum(w.tokens or 0 for w in calls)
        q.cap = max(1, min(q.cap or tokens, tokens) // 2)
    except Exception as e:  # a tokenizer's bug: the calls fail, never hang
        from .batching import unexpected

        layer.fail_all(lane, calls, unexpected(e, "estimating a refused batch's tokens"))
        return
    finally:
        q.halving -= 1
        q._wake()
    named = f" = {q.said}" if q.said else " to the organisation's limit for " + lane.prov.model
    setting = (f"models.{lane.alias}.batch_queue_tokens = {q.limit:,}" if q.limit is not None else
               f"set models.{lane.alias}.batch_queue_tokens{named}")
    why = (f"the provider refused a batch of {n:,} request(s) (~{tokens:,} input tokens, judgekit's estimate) over "
           f"the organisation's enqueued-token limit ({setting}): {err}")
    again = []
    for w in calls:
        if w.fut.done():
            continue
        if (n == 1 and alone) or w.refusals >= MAX_REFUSALS:
            _give_up(layer, lane, w, BatchQueueFull(why, status=err.status))
        else:
            again.append(w)
    if again:
        await layer.submit(lane, again)


def _give_up(layer: "BatchLayer", lane: "Lane", w: "Waiter", err: ProviderError) -> None:
    """``w`` cannot run in a batch: live with ``batch_fallback = "live"``, else it fails with ``err``."""
    from .batch_collect import give_up
    from .batching import LIVE

    if w.fut.done():
        return
    if lane.fallback_live:
        layer.release(w)
        layer.engine.stats.stage(w.req.stage).retries += 1
        w.fut.set_result(LIVE)
        return
    layer.engine.cache.record_failure(w.key, w.meta, err.kind, err.status, err.record_text())
    give_up(layer, lane, w, err, str(err))
