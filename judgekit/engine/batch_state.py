"""The batch layer's state, beneath every module of batch mode: a call waiting for a batch's answer
(:class:`Waiter`), a batch at the provider (:class:`Batch`), one batch-mode alias with its wave
(:class:`Lane`) and its share of the provider's enqueued-token queue (:class:`TokenQueue`, whose
policy is :mod:`judgekit.engine.batch_queue`), and what they ask of the layer that owns them
(:class:`Layer`: :class:`judgekit.engine.batching.BatchLayer` is the one implementation).

A leaf of the batch side: :mod:`judgekit.engine.batching` (the layer), :mod:`judgekit.engine.batch_queue`
(the enqueued-token limit) and :mod:`judgekit.engine.batch_collect` (following a batch) all stand on
it, and it imports none of them; the names stay importable where they were before (``batching.Lane``,
``batch_queue.TokenQueue``...).  Also here: :data:`LIVE`, :func:`unexpected` and :func:`give_up`, which
the three share.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..cache.batches import BatchRecord, BatchRequestRow
from ..cache.store import RequestMeta
from ..errors import ProviderError
from ..plural import plural
from ..providers.batch import BatchItem, BatchStatus
from ..providers.batch_errors import cause_of
from ..types import ChatRequest
from .budget import CallPricing
from .calls import CallResult

__all__ = ["Waiter", "Batch", "Lane", "TokenQueue", "Layer", "LIVE", "unexpected", "give_up"]

#: what a call's future resolves to when its request is to be made live after all
LIVE = object()
#: how often a batch waiting for room looks again when nothing woke it (seconds)
_RECHECK_S = 5.0


class Layer(Protocol):
    """What a lane, the token queue and the collection of a batch ask of the batch layer that owns
    them (:class:`judgekit.engine.batching.BatchLayer`; see its methods)."""

    engine: Any  # the Engine (judgekit.engine.engine), which stands above the batch side
    lanes: dict[str, Lane]
    batches: dict[tuple[str, str, str], Batch]
    live_keys: dict[str, Batch]

    def spawn(self, coro: Awaitable[Any], *, submit: bool = False) -> asyncio.Task: ...

    def launch_wave(self, lane: Lane, calls: list[Waiter]) -> None: ...

    async def submit(self, lane: Lane, calls: list[Waiter], *, queued: bool = False) -> None: ...

    def not_run(self, w: Waiter, reason: str) -> None: ...

    def release(self, w: Waiter, charge: float = 0.0) -> None: ...

    def fail(self, lane: Lane, w: Waiter, err: ProviderError, charge: float = 0.0) -> None: ...

    def fail_all(self, lane: Lane, calls: list[Waiter], err: ProviderError) -> None: ...

    def remember_paid(self, key: str, resp: Any) -> None: ...

    async def with_retries(self, lane: Lane, fn: Callable[[], Awaitable[Any]], *,
                           stage: str | None = None) -> Any: ...


@dataclass(eq=False, slots=True)
class Waiter:
    """One call of this run waiting for a batch's answer."""

    req: ChatRequest
    key: str
    meta: RequestMeta
    fut: asyncio.Future
    hold: float | None = None  # USD reserved under the cap while it is out (None: nothing)
    submissions: int = 0  # batches it has been sent in
    size: int = 0  # its bytes in a batch's upload
    tokens: int | None = None  # its estimated input tokens (for the enqueued-token limit), once counted
    refusals: int = 0  # batches of it refused over the enqueued-token limit
    cause: ProviderError | None = None  # why the last batch it was in left it unanswered


@dataclass(eq=False)
class Batch:
    """A batch at the provider, submitted by this run or an earlier one."""

    lane: Lane
    record: BatchRecord
    rows: dict[str, BatchRequestRow]  # its requests by key
    waiting: dict[str, Waiter] = field(default_factory=dict)
    status: BatchStatus | None = None
    polled: float | None = None  # monotonic time of the last poll
    note: str = ""  # why it waits, when not on the provider (a poll error)
    earlier: bool = False  # reattached: submitted by an earlier run
    collected: bool = False
    task: asyncio.Task | None = None

    @property
    def ident(self) -> tuple[str, str, str]:
        return self.record.ident


class Lane:
    """One alias with a batch API: its wave and its settings."""

    def __init__(self, layer: Layer, alias: str, prov: Any, spec) -> None:
        self.layer, self.alias, self.prov, self.spec = layer, alias, prov, spec
        self.batch_mode = bool(getattr(spec, "batch", False))
        self.linger_s = float(getattr(spec, "batch_linger_s", 2.0))
        self.poll_s = float(getattr(spec, "batch_poll_s", 30.0))
        self.fallback_live = getattr(spec, "batch_fallback", "batch") == "live"
        self.attempts = int(getattr(spec, "batch_attempts", 2))
        self.limits = prov.batch_limits
        self.wave: dict[str, Waiter] = {}
        self.wave_bytes = 0
        self.last_join = 0.0
        self.timer: asyncio.Task | None = None
        self.pricing: CallPricing | None = None  # set under a cap
        self.submitting = 0  # requests in a submission under way
        self.queue = TokenQueue(getattr(spec, "batch_queue_tokens", None))  # the enqueued-token limit

    def join(self, w: Waiter) -> None:
        """Add ``w`` to the wave; submit the wave when it is full, else (re)start its linger."""
        n = w.size = self.prov.batch_line_bytes(BatchItem(w.key, w.req))
        lim = self.limits
        if self.wave and (len(self.wave) + 1 > lim.max_requests or self.wave_bytes + n > lim.max_bytes):
            self.launch()
        self.wave[w.key] = w
        self.wave_bytes += n
        self.last_join = time.monotonic()
        if len(self.wave) >= lim.max_requests or self.wave_bytes >= lim.max_bytes:
            self.launch()
        elif self.timer is None:
            self.timer = asyncio.ensure_future(self._linger())

    async def _linger(self) -> None:
        try:
            while True:
                left = self.last_join + self.linger_s - time.monotonic()
                if left <= 0:
                    break
                await asyncio.sleep(left)
        finally:
            self.timer = None
        if self.wave:
            self.launch()

    def launch(self) -> None:
        """Submit the wave as it is (in its own task: a cancelled call never cancels a submission)."""
        calls = list(self.wave.values())
        self.wave, self.wave_bytes = {}, 0
        if calls:
            self.layer.launch_wave(self, calls)

    def drop_wave(self, reason: str) -> None:
        """The run is stopping: the calls of the wave are not made."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.queue.close()  # nor are batches waiting for room in the provider's queue
        calls, self.wave, self.wave_bytes = list(self.wave.values()), {}, 0
        for w in calls:
            self.layer.not_run(w, reason)


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

    def chunks(self, calls: list[Waiter]) -> list[list[Waiter]]:
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

    def _earlier(self, layer: Layer, lane: Lane) -> bool:
        """Whether a batch an earlier run left live (its tokens unknown) is in this alias's queue."""
        return any(b.lane is lane and b.earlier and not b.collected and b.ident not in self.ended_ids
                   for b in layer.batches.values())

    def busy(self, layer: Layer, lane: Lane) -> bool:
        return bool(self.held) or self.admitting > 0 or self._earlier(layer, lane)

    def room(self, layer: Layer, lane: Lane, tokens: int) -> bool:
        """Whether a batch of ``tokens`` may be submitted now."""
        if self.halving:
            return False
        if not self.busy(layer, lane):
            return True
        if self.serial or self._earlier(layer, lane):
            return False
        limit = self.limit if self.limit is not None else self.cap
        return limit is None or self.enqueued + tokens <= limit

    async def admit(self, layer: Layer, lane: Lane, tokens: int) -> bool | None:
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

    def hold(self, b: Batch, tokens: int, alone: bool) -> None:
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

    def ended(self, b: Batch) -> None:
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
            parts.append(f"{plural(self.waiting, 'call')} {'waits' if self.waiting == 1 else 'wait'} for room in the "
                         f"provider's batch queue ({room})")
        if self.refusals:
            said = f" (the provider's limit: {self.said:,} tokens)" if self.said else ""
            parts.append(f"{plural(self.refusals, 'batch')} refused over the enqueued-token limit{said}: one batch "
                         f"at a time, at most ~{self.cap or 0:,} tokens")
        return "; ".join(parts)


def unexpected(err: BaseException, doing: str) -> ProviderError:
    """An exception a provider should not have raised, as a failure of the calls it concerns."""
    import logging

    logging.getLogger("judgekit.engine.batching").warning("%s failed unexpectedly: %r", doing, err, exc_info=err)
    return ProviderError(f"{doing} failed unexpectedly: {type(err).__name__}: {err}")


def give_up(layer: Layer, lane: Lane, w: Waiter, cause: ProviderError, message: str) -> None:
    """``w`` ends unanswered: a counted failure of its stage whose kind and ``message`` say the
    real cause (``cause``: expired, cancelled, errored with the provider's type, a failed batch
    with the provider's message...), counted by cause for ``summary.json``."""
    if w.fut.done():
        return
    engine = layer.engine
    stage = engine.stats.stage(w.req.stage)
    stage.failures += 1
    stage.done += 1
    engine.savings.unanswered(cause_of(cause))
    w.fut.set_result(CallResult(w.req, None, cause.kind, message, w.key))
