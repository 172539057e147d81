"""Batch mode: a batch-mode alias's calls go through its provider's batch API, in waves.

Benchmarks keep calling ``engine.call``.  The cache is looked up first, as for every call; a miss
for an alias with ``batch = true`` (:class:`~judgekit.config.ModelSpec`) comes here and joins
the alias's current *wave*.  A wave is submitted once no new call has joined it for
``batch_linger_s``, or as soon as it is as big as one batch may be (the provider's
:class:`~judgekit.providers.batch.BatchLimits`: requests, and bytes as
``batch_line_bytes`` counts them); a bigger wave is split.  Each call's future resolves when its
answer arrives, so dependent stages go in waves of their own: the candidates' answers resolve,
the benchmark makes the judge calls that need them, and those form the next wave.

Durable before waiting: the moment the provider has created a batch, the cache records it (its
id, provider, model and endpoint, the alias, the run, its state, when it was created, and each
request's ``custom_id`` = cache key: :meth:`~judgekit.cache.batches.BatchRecords.record_batch`,
synced to disk, with no await in between).  At start the layer loads this cache's live batches
for the run's endpoints; a call whose key is in one of them waits on that batch instead of being
submitted again, whatever mode its alias is in.  Following a batch (polling it, reading its
results into the cache, retrying what it left unanswered) is :mod:`judgekit.engine.batch_collect`.

Under a cost cap, a wave is reserved request by request at the batch rates before it is
submitted (:mod:`judgekit.engine.budget`); what does not fit is not submitted and the run stops.
When the run stops, calls still in a wave are not made (``NOT_RUN``); submitted batches stay live
at the provider and in the cache, to be collected by the next run or cancelled
(``judgekit batches cancel``).

Idempotent creation: before the create call the wave's *intent* is recorded and synced (a wave id
and its requests' keys, :data:`~judgekit.cache.batches.INTENT_PREFIX`), and the provider is given
the wave id (:meth:`~judgekit.providers.batch.BatchAPI.submit_batch`).  A process killed anywhere
between the create request and the record leaves the intent live; the next run, before it submits
anything, asks the provider for the batches of its intents
(:meth:`~judgekit.providers.batch.BatchAPI.find_batches`) and adopts the one found
(:mod:`judgekit.engine.batch_adopt`: recorded as if just created, then followed, collected,
cancellable); an intent with no batch at the provider created none, and its calls are submitted as
usual.  A create call retried after an error that may have hidden a created batch (a timeout, a
5xx) looks first too.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import time
import uuid
from typing import Any

from ..cache.batches import INTENT_PREFIX, BatchRecord, BatchRequestRow
from ..cache.store import RequestMeta
from ..errors import FATAL_ERRORS, NotFound, ProviderError, RateLimited, SpecError
from ..plural import plural
from ..providers.batch import BatchAPI, BatchItem, BatchStatus, WaveIntent, refused
from ..types import ChatRequest
from .batch_adopt import posix
from .batch_collect import follow
from .batch_queue import refused_create, submit_in_turn
from .batch_state import LIVE, Batch, Lane, Waiter, unexpected
from .budget import CallPricing, input_upper_bound, usd
from .calls import NOT_RUN, CallResult, RunStopped, billed_model, image_output

__all__ = ["BatchLayer", "supports_batches", "check_batch_models", "batch_all", "start_batches",
           # the layer's state (judgekit.engine.batch_state), named here as before
           "Waiter", "Batch", "Lane", "LIVE", "unexpected"]

#: responses recently paid in batches, kept for twins whose cache lookup raced the write
_PAID_KEPT = 4096


def supports_batches(provider: Any) -> bool:
    """Whether a provider object implements :class:`~judgekit.providers.batch.BatchAPI`."""
    return isinstance(provider, BatchAPI) and getattr(provider, "batch_limits", None) is not None


def _provider_supports(alias: str, spec) -> bool:
    from .. import providers

    try:
        return supports_batches(providers.create_provider(alias, spec))
    except (ImportError, ValueError):
        return False


def check_batch_models(spec, aliases: list[str]) -> None:
    """A batch-mode alias whose provider has no batch API is a one-line SpecError."""
    for alias in aliases:
        m = spec.models[alias]
        if m.batch and not _provider_supports(alias, m):
            raise SpecError(f"{spec.source_path or spec.name}: models.{alias}.batch: provider '{m.provider}' has "
                            f"no batch API; set batch = false (or leave --batch out) for '{alias}'")


def batch_all(spec, aliases: list[str]):
    """``spec`` with ``batch = true`` for every alias of ``aliases`` whose provider has a batch API
    (``--batch``), and the aliases that got it."""
    chosen = [a for a in aliases if _provider_supports(a, spec.models[a])]
    if not chosen:
        return spec, []
    models = dict(spec.models)
    for a in chosen:
        models[a] = models[a].model_copy(update={"batch": True})
    return spec.model_copy(update={"models": models}), chosen


class BatchLayer:
    """The engine's batch side (``engine.batches``); see the module docstring."""

    def __init__(self, engine: Any) -> None:  # the Engine (judgekit.engine.engine), which imports this module
        self.engine = engine
        self.lanes: dict[str, Lane] = {}
        self.batches: dict[tuple[str, str, str], Batch] = {}
        self.live_keys: dict[str, Batch] = {}  # key -> the live batch that holds it
        self._submits: set[asyncio.Task] = set()
        self._others: set[asyncio.Task] = set()

    # -- lifecycle ---------------------------------------------------------------------------
    async def add(self, aliases: list[str]) -> None:
        """Lanes for the started ``aliases`` whose provider has a batch API, and the live batches
        of their endpoints that this cache holds (followed from now on)."""
        engine = self.engine
        new = []
        for alias in aliases:
            prov = engine.providers.get(alias)
            if alias in self.lanes or prov is None or not supports_batches(prov):
                continue
            lane = self.lanes[alias] = Lane(self, alias, prov, engine.models[alias])
            if engine.cap is not None and lane.batch_mode:
                lane.pricing = await asyncio.to_thread(CallPricing.of, prov.kind, billed_model(prov), prov.spec.price,
                                                       image_output(prov), batch=True)
            new.append(lane)
        if not new or not hasattr(engine.cache, "batches"):
            return
        by_endpoint = {(ln.prov.kind, ln.prov.model, ln.prov.identity): ln for ln in new}
        await self._adopt_orphans(by_endpoint)
        for rec in await engine.cache.batches(live_only=True, providers=list(by_endpoint)):
            if rec.ident in self.batches or rec.is_intent:
                continue
            rows = await engine.cache.batch_requests(rec.ident)
            b = Batch(by_endpoint[(rec.provider, rec.model, rec.base_url)], rec, {r.key: r for r in rows},
                      earlier=True)
            b.status = BatchStatus(rec.batch_id, rec.state, rec.provider_status, rec.requests,  # type: ignore[arg-type]
                                   rec.succeeded, rec.failed)
            self._follow(b)

    async def _adopt_orphans(self, by_endpoint: dict[tuple[str, str, str], Lane]) -> None:
        """Before anything is submitted: the batches an earlier process created but did not record
        are adopted (:mod:`judgekit.engine.batch_adopt`; :meth:`add` then follows them).  A
        provider that cannot be asked stops the run (nothing submitted); one that serves no list of
        batches (404: an OpenAI-compatible server) is warned about, and the intents dropped."""
        from .batch_adopt import adopt_intents

        intents = [r for r in await self.engine.cache.batches(live_only=True, providers=list(by_endpoint))
                   if r.is_intent]
        for endpoint, lane in by_endpoint.items():
            mine = [r for r in intents if (r.provider, r.model, r.base_url) == endpoint]
            if not mine:
                continue
            try:
                await adopt_intents(self.engine.cache, lane.prov, lane.alias, mine,
                                    find=lambda ws, known: self.with_retries(
                                        lane, lambda: lane.prov.find_batches(ws, known=known)))
            except NotFound as e:  # a compatible server that serves no list of batches: none can be found
                import logging

                logging.getLogger(__name__).warning(
                    "'%s': %s of an earlier run interrupted, and %s lists no batches (%s): "
                    "a batch it made all the same cannot be found; its requests are submitted again", lane.alias,
                    plural(len(mine), "batch creation"), lane.prov.identity or lane.prov.kind, e)
                for r in mine:
                    self.engine.cache.forget_batch(r.ident)
            except (ProviderError, _Stopping) as e:
                msg = lane.prov.describe_error(e) if isinstance(e, ProviderError) else str(e)
                raise RunStopped(f"'{lane.alias}': {plural(len(mine), 'batch creation')} of an earlier run "
                                 f"{'was' if len(mine) == 1 else 'were'} interrupted "
                                 f"and the provider's batches could not be listed to find them ({msg}); nothing was "
                                 "submitted: run the same command again") from None

    def _record_intent(self, lane: Lane, calls: list[Waiter]) -> tuple[BatchRecord, WaveIntent]:
        """Record (synced) the batch about to be created for ``calls``: see the module docstring."""
        prov, wave = lane.prov, uuid.uuid4().hex
        rec = BatchRecord(prov.kind, prov.identity, INTENT_PREFIX + wave, prov.model, lane.alias,
                          getattr(self.engine.cache, "run_id", ""), "creating", "", len(calls), created_at=_utc_now())
        self.engine.cache.record_batch(rec, (_row(w) for w in calls))
        return rec, WaveIntent(wave, tuple(w.key for w in calls), posix(rec.created_at))

    def _record(self, lane: Lane, status: BatchStatus, rows, *, run_id: str, intent: tuple[str, str, str] | None,
                requests: int) -> BatchRecord:
        """Record a batch the provider holds (synced; no await) and forget its intent."""
        prov = lane.prov
        rec = BatchRecord(prov.kind, prov.identity, status.batch_id, prov.model, lane.alias, run_id, status.state,
                          status.provider_status, requests, status.succeeded, status.failed, False, status.message,
                          created_at=_utc_now())
        self.engine.cache.record_batch(rec, rows)
        if intent is not None:
            self.engine.cache.forget_batch(intent)
        return rec

    def takes(self, alias: str, key: str) -> bool:
        """Whether a call of ``alias`` for ``key`` is this layer's (its alias is in batch mode, or
        an earlier run's live batch holds the key)."""
        lane = self.lanes.get(alias)
        return lane is not None and (lane.batch_mode or key in self.live_keys)

    def spawn(self, coro, *, submit: bool = False) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        tasks = self._submits if submit else self._others
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def launch_wave(self, lane: Lane, calls: list[Waiter]) -> None:
        self.spawn(self.submit(lane, calls), submit=True)

    def on_stop(self) -> None:
        """The run is stopping: calls still in a wave are not made (submitted batches stay live)."""
        reason = self.engine.stop_reason or "stopped"
        for lane in self.lanes.values():
            lane.drop_wave(reason)

    async def close(self, *, submit_wait_s: float = 30.0) -> None:
        """Stop following batches (they stay live in the cache).  A submission under way is let
        finish (up to ``submit_wait_s``), so a batch the provider created is always recorded."""
        for lane in self.lanes.values():
            lane.drop_wave("the engine closed")
        if self._submits:
            await asyncio.wait(list(self._submits), timeout=submit_wait_s)
        tasks = [*self._submits, *self._others]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for b in self.batches.values():
            for w in list(b.waiting.values()):
                self.not_run(w, "the engine closed while the batch was running")

    def live(self) -> list[Batch]:
        """The batches not collected yet (submitted by this run or an earlier one)."""
        return [b for b in self.batches.values() if not b.collected]

    # -- calls -------------------------------------------------------------------------------
    async def call(self, req: ChatRequest, stage, key: str) -> CallResult:
        """One call of a batch-mode alias (or one an earlier run's live batch holds)."""
        engine = self.engine
        lane = self.lanes[req.model]
        prov = lane.prov
        meta = RequestMeta(prov.kind, prov.model, prov.identity, req.stage, req.item_id, req.prompt_hash)
        w = Waiter(req, key, meta, asyncio.get_running_loop().create_future())
        if stage.first_call is None:
            stage.first_call = time.monotonic()
        held = self.live_keys.get(key)
        if held is not None:
            held.waiting[key] = w
        else:
            try:
                lane.join(w)
            except ProviderError as e:  # the request cannot go in a batch (too large, a parameter refused)
                self.fail(lane, w, e)
        try:
            out = await w.fut
        except asyncio.CancelledError:
            if lane.wave.get(key) is w:  # not submitted yet: take it out of the wave
                del lane.wave[key]
                lane.wave_bytes -= w.size
            raise
        if out is LIVE:
            return await engine._call(req, stage, key)
        return out

    def not_run(self, w: Waiter, reason: str) -> None:
        self.release(w)
        if not w.fut.done():
            w.fut.set_result(CallResult(w.req, None, NOT_RUN, reason, w.key))

    def release(self, w: Waiter, charge: float = 0.0) -> None:
        """End ``w``'s reservation (charging ``charge``), or charge without one."""
        cap = self.engine.cap
        if cap is None:
            return
        if w.hold is not None:
            cap.settle(w.hold, charge)
            w.hold = None
        elif charge:
            cap.charge(charge)

    # -- submission --------------------------------------------------------------------------
    async def submit(self, lane: Lane, calls: list[Waiter], *, queued: bool = False) -> None:
        """Reserve, submit and record one wave (a task of its own); under an enqueued-token
        limit, as batches that fit it, each in its turn (:mod:`judgekit.engine.batch_queue`)."""
        engine = self.engine
        calls = [w for w in calls if not w.fut.done()]
        if engine.stopping:
            for w in calls:
                self.not_run(w, engine.stop_reason or "stopped")
            return
        if lane.queue.active and not queued:
            await submit_in_turn(self, lane, calls)
            return
        calls = self._reserve(lane, calls)
        if not calls:
            return
        items = [BatchItem(w.key, w.req) for w in calls]
        lane.submitting += len(calls)
        intent, wave = self._record_intent(lane, calls)
        tries = 0

        async def create() -> BatchStatus:
            nonlocal tries
            tries += 1
            if tries > 1:  # the failed try may have created the batch all the same
                found = (await lane.prov.find_batches([wave], known=self._known(lane))).get(wave.wave)
                if found is not None:
                    return found
            return await lane.prov.submit_batch(items, wave=wave.wave)

        try:
            status = await self.with_retries(lane, create, stage=calls[0].req.stage)
        except ProviderError as e:
            status = await self._after_failed_create(lane, wave, intent, e)
            if status is None:
                if not (isinstance(e, RateLimited) and refused_create(self, lane, calls, e)):
                    self.fail_all(lane, calls, e)  # (a create still 429 after its retries: the queue is full)
                return
        except (_Stopping, asyncio.CancelledError) as e:  # the run stops (or the engine closed) first
            for w in calls:  # the intent stays: the next run looks for its batch
                self.not_run(w, str(e) or "the engine closed")
            if isinstance(e, asyncio.CancelledError):
                raise
            return
        except Exception as e:  # a provider's bug: the calls fail, never hang
            self.fail_all(lane, calls, unexpected(e, "submitting a batch"))
            return
        finally:
            lane.submitting -= len(calls)
        # from the provider's answer to the record nothing awaits: the batch is never lost
        rows = {w.key: _row(w) for w in calls}
        rec = self._record(lane, status, rows.values(), run_id=intent.run_id, intent=intent.ident,
                           requests=len(items))
        b = Batch(lane, rec, rows, {w.key: w for w in calls}, status=status)
        for w in calls:
            w.submissions += 1
        self._follow(b)

    def _known(self, lane: Lane) -> frozenset[str]:
        """The batch ids this layer follows at ``lane``'s endpoint: never another wave's orphan."""
        return frozenset(b.record.batch_id for b in self.batches.values()
                         if b.record.provider == lane.prov.kind and b.record.base_url == lane.prov.identity)

    async def _after_failed_create(self, lane: Lane, wave: WaveIntent, intent: BatchRecord,
                                   err: ProviderError) -> BatchStatus | None:
        """The create call failed for good: the batch it may have created all the same (a
        timeout, a 5xx), else None (the intent forgotten).  A refusal (:func:`~judgekit.providers.
        batch.refused`) created none; when the provider cannot be asked, the intent stays for the
        next run to look for."""
        if refused(err):
            self.engine.cache.forget_batch(intent.ident)  # nothing was created
            return None
        try:
            found = (await lane.prov.find_batches([wave], known=self._known(lane))).get(wave.wave)
        except Exception:  # noqa: BLE001 - the create's error is the one to report
            return None
        if found is None:
            self.engine.cache.forget_batch(intent.ident)
        return found

    def _follow(self, b: Batch) -> None:
        self.batches[b.ident] = b
        for key in b.rows:
            self.live_keys[key] = b
        b.task = self.spawn(follow(self, b))

    def _reserve(self, lane: Lane, calls: list[Waiter]) -> list[Waiter]:
        """Reserve each call's worst case at the batch rates; those that do not fit are not made
        and the run stops (the part that fits is submitted)."""
        engine, cap, pricing = self.engine, self.engine.cap, lane.pricing
        if cap is None or pricing is None or pricing.free:
            return calls
        prov = lane.prov
        for i, w in enumerate(calls):
            hold = engine._worst_case(pricing, w.req, input_upper_bound(prov.kind, billed_model(prov), w.req), False)
            if not cap.try_reserve(hold.amount):
                engine._count_into(prov, w.req, hold)  # the cheap bound did not fit: count the text
                if not cap.try_reserve(hold.amount):
                    rest = calls[i:]
                    worst = sum(engine._worst_case(pricing, r.req, input_upper_bound(prov.kind, billed_model(prov), r.req),
                                                   False).amount for r in rest)
                    msg = (f"the next batch of '{lane.alias}' ({prov.kind} {prov.model}) may cost up to "
                           f"{usd(hold.amount + worst) if worst != float('inf') else 'an unknown amount'} more for "
                           f"{plural(len(rest), 'request')} at batch prices, more than is left under --max-cost "
                           f"({usd(cap.spent)} spent, {usd(cap.reserved)} reserved); {i} of {len(calls)} submitted")
                    engine.stop(msg)
                    for r in rest:
                        self.not_run(r, msg)
                    return calls[:i]
            w.hold = hold.amount
        return calls

    async def with_retries(self, lane: Lane, fn, *, stage: str | None = None):
        """``await fn()`` with the engine's retry policy for retryable errors; fatal errors stop
        the run (RunStopped reaches the calls); raises _Stopping when the run stops meanwhile.
        ``stage``: the stage whose 429 count a rate limit adds to."""
        from .limits import sleep_unless

        engine = self.engine
        attempt = 0
        while True:
            try:
                return await fn()
            except ProviderError as e:
                attempt += 1
                if isinstance(e, RateLimited) and stage is not None:  # a batch call's 429 is a 429 too
                    engine.stats.stage(stage).rate_limited += 1
                if isinstance(e, FATAL_ERRORS) or not e.retryable or attempt >= lane.spec.limits.max_attempts:
                    raise
                engine.cache.record_failure(f"batch:{lane.alias}", RequestMeta(lane.prov.kind, lane.prov.model,
                                                                               lane.prov.identity, "batch"),
                                            e.kind, e.status, e.record_text())
                if await sleep_unless(engine._stopped, engine.retry_wait.wait_for(e, attempt)):
                    raise _Stopping(engine.stop_reason or "stopped") from None

    def fail_all(self, lane: Lane, calls: list[Waiter], err: ProviderError) -> None:
        """A batch call failed for good: each of ``calls`` fails with ``err`` (fatal: the run stops)."""
        for w in calls:
            self.fail(lane, w, err)

    def fail(self, lane: Lane, w: Waiter, err: ProviderError, charge: float = 0.0) -> None:
        """``w`` fails with ``err`` (billed ``charge``), as a live call would."""
        engine = self.engine
        self.release(w, charge)
        engine.stats.stage(w.req.stage).cost_usd += charge
        engine.cache.record_failure(w.key, w.meta, err.kind, err.status, err.record_text())
        if w.fut.done():
            return
        if isinstance(err, FATAL_ERRORS):
            msg = lane.prov.describe_error(err)
            engine.fatal = engine.fatal or msg
            engine.stop(msg)
            w.fut.set_exception(RunStopped(msg))
            return
        stage = engine.stats.stage(w.req.stage)
        stage.failures += 1
        stage.done += 1
        w.fut.set_result(CallResult(w.req, None, err.kind, lane.prov.describe_error(err), w.key))

    def remember_paid(self, key: str, resp) -> None:
        """Let a twin whose cache lookup raced this answer's write find it (as live answers are)."""
        paid = self.engine._paid
        paid[key] = resp
        if len(paid) > _PAID_KEPT:
            del paid[next(iter(paid))]


def _utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


def _row(w: Waiter) -> BatchRequestRow:
    return BatchRequestRow(w.key, w.meta.stage, w.meta.item_id, w.meta.prompt_hash)


class _Stopping(Exception):
    """The run began stopping while a batch call waited to be retried."""


async def start_batches(engine: Any, aliases: list[str]) -> "BatchLayer | None":
    """The engine's batch layer after its providers started: made when some alias's provider
    has a batch API (``None`` otherwise).  An alias in batch mode whose provider has none is a
    SpecError."""
    for alias in aliases:
        if getattr(engine.models[alias], "batch", False) and not supports_batches(engine.providers.get(alias)):
            raise SpecError(f"models.{alias}.batch: provider '{engine.models[alias].provider}' has no batch API")
    layer = engine.batches or BatchLayer(engine)
    await layer.add(aliases)
    return layer if layer.lanes else None
