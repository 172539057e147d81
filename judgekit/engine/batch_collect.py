"""Following one batch: poll it until it ends, read its results into the cache, retry what it left.

For each batch the layer (:mod:`judgekit.engine.batching`) follows, one task:

1. polls it every ``batch_poll_s`` (its status, counts and the provider's own word go to the
   display and, when they change, to the cache); a poll that fails for a passing reason is tried
   again at the next poll; a batch the provider no longer knows (404) is treated as ended with
   nothing answered; an error that makes the run pointless (bad key, spent quota) stops it;
2. once the batch is terminal, reads every request's outcome
   (:meth:`~judgekit.providers.batch.BatchAPI.batch_results`) and, for each:

   - an answer: priced at the batch rates, charged (its reservation settled), put in the cache as
     an ordinary response (so the next lookup is a hit), and handed to the call waiting for it;
   - a request the batch did not run (:class:`~judgekit.providers.batch.BatchRequestNotRun`:
     expired, cancelled, not reported) or another retryable error: recorded in ``attempts`` and
     asked again, counted as a retry: in the next wave, or live when ``batch_fallback = "live"``
     (or the alias is not in batch mode), until the request has been in ``batch_attempts``
     batches;
   - any other error (a bad request, a refusal): a failure like a live one, recorded;
   - a batch refused over the enqueued-token limit (:class:`~judgekit.providers.batch_errors.
     BatchQueueFull`): recorded, and its requests handed to :func:`judgekit.engine.batch_queue.refused`
     (smaller batches, one at a time; not one of ``batch_attempts``);

   Each unanswered request keeps its cause (expired, cancelled, errored with the provider's type,
   a failed batch with the provider's message, not reported: :mod:`judgekit.providers.batch_errors`);
   one that runs out of ``batch_attempts`` fails naming it
   (:func:`~judgekit.engine.batch_state.give_up`), counted by cause in
   ``summary.json``'s ``batch.unanswered``;

3. marks the batch collected in the cache (it is no longer live).

Answers of calls no one in this run has asked for yet (an earlier run's batch) go into the cache
all the same, priced and counted in the stage's cost: the benchmark's call finds them there.
"""

from __future__ import annotations

import asyncio
import logging
import time

from ..cache.store import RequestMeta
from ..cost.prices import usage_usd
from ..errors import FATAL_ERRORS, NotFound, ProviderError, RateLimited
from ..plural import plural
from ..providers.batch import BatchOutcome, BatchRequestNotRun, BatchStatus
from ..providers.batch_errors import BatchCancelled, BatchExpired, BatchFailed, BatchQueueFull, cause_of
from .batch_queue import refused
from .batch_state import LIVE, Batch, Layer, Waiter, give_up, unexpected
from .budget import sane_usage
from .calls import CallResult, billed_model

__all__ = ["follow"]

log = logging.getLogger(__name__)


async def follow(layer: Layer, b: Batch) -> None:
    """Poll ``b`` until it ends, then collect it (see the module docstring).  An exception a
    provider should not raise fails the calls waiting on ``b`` (they never hang); ``b`` stays
    live for the next run."""
    try:
        await _follow(layer, b)
    except Exception as e:
        err = unexpected(e, f"following batch {b.record.batch_id}")
        b.note = str(err)[:200]
        for w in list(b.waiting.values()):
            layer.fail(b.lane, w, err)
        b.waiting.clear()
    finally:  # no longer followed: its room in the enqueued-token queue is free
        b.lane.queue.ended(b)


async def _follow(layer: Layer, b: Batch) -> None:
    lane = b.lane
    prov = lane.prov
    lost: str | None = None
    errors = 0
    while b.status is None or not b.status.terminal:
        await asyncio.sleep(lane.poll_s if errors == 0 else min(lane.poll_s * 2 ** errors, 600.0))
        try:
            st = await prov.poll_batch(b.record.batch_id)
        except NotFound as e:
            lost = f"the provider no longer knows batch {b.record.batch_id} ({e})"
            _observe(layer, b, BatchStatus(b.record.batch_id, "failed", "not found", b.record.requests,
                                           message=lost[:500]))
            break
        except FATAL_ERRORS as e:
            _stop_waiters(layer, b, e)
            return
        except ProviderError as e:
            errors += 1
            b.note = f"poll failed ({e.kind}), retrying"
            if isinstance(e, RateLimited):  # a poll's 429 is a 429 of the batch's (first) stage
                stage = next((r.stage for r in b.rows.values() if r.stage), None)
                if stage:
                    layer.engine.stats.stage(stage).rate_limited += 1
            continue
        errors = 0
        b.note = ""
        b.polled = time.monotonic()
        _observe(layer, b, st)
    if lost is not None:
        outcomes = [BatchOutcome(k, error=BatchRequestNotRun(lost)) for k in b.rows]
    else:
        try:
            ids = list(b.rows)  # the provider may not be able to list them (Anthropic)
            stage = next((r.stage for r in b.rows.values() if r.stage), None)
            outcomes = await layer.with_retries(lane, lambda: prov.batch_results(b.record.batch_id, custom_ids=ids),
                                                stage=stage)
        except ProviderError as e:
            if isinstance(e, FATAL_ERRORS):
                _stop_waiters(layer, b, e)
                return
            b.note = f"results could not be read ({e.kind}); the next run tries again"
            for w in list(b.waiting.values()):
                layer.fail(lane, w, e)
            b.waiting.clear()
            return
        except Exception as e:  # _Stopping: the run is stopping; the batch stays live
            for w in list(b.waiting.values()):
                layer.not_run(w, str(e))
            b.waiting.clear()
            return
    collect(layer, b, outcomes)


def _observe(layer: Layer, b: Batch, st: BatchStatus) -> None:
    """A new status: kept for the display, and in the cache when it changed."""
    old = b.status
    b.status = st
    if st.terminal:  # ended at the provider: it no longer holds the enqueued-token queue
        b.lane.queue.ended(b)
    if old is None or (old.state, old.provider_status, old.succeeded, old.failed) != (
            st.state, st.provider_status, st.succeeded, st.failed):
        layer.engine.cache.update_batch(b.ident, state=st.state, provider_status=st.provider_status,
                                        succeeded=st.succeeded, failed=st.failed, message=st.message or None)


def _stop_waiters(layer: Layer, b: Batch, err: ProviderError) -> None:
    """A fatal error while following ``b``: the run stops, its waiting calls with it."""
    b.note = f"stopped: {err.kind}"
    for w in list(b.waiting.values()):
        layer.fail(b.lane, w, err)
    b.waiting.clear()


def collect(layer: Layer, b: Batch, outcomes: list[BatchOutcome]) -> None:
    """Every outcome of ended batch ``b`` into the cache and to its waiting calls; then ``b`` is
    collected (see the module docstring).  Answers to another live batch's requests (two batches
    adopted the wrong way round) are kept for those requests (:func:`_swapped`).  No await:
    nothing interleaves."""
    engine, lane = layer.engine, b.lane
    prov = lane.prov
    billed = billed_model(prov)
    ok = failed = 0
    again: list[Waiter] = []
    refusals: list[Waiter] = []  # refused over the enqueued-token limit
    queue_err: ProviderError | None = None
    seen: set[str] = set()
    outcomes, handed = _swapped(layer, b, outcomes)
    ok += handed
    for o in outcomes:
        key = o.custom_id
        if key not in b.rows or key in seen:
            continue  # not a request of this batch, or reported twice: the first one counts
        seen.add(key)
        w = b.waiting.pop(key, None)
        meta = w.meta if w is not None else _meta(prov, b.rows[key])
        resp = o.response
        if resp is not None and o.error is None:
            ok += 1
            _answered(layer, prov, billed, key, meta, w, resp)
            continue
        err = o.error if o.error is not None else BatchRequestNotRun("the batch reported no answer")
        failed += 1
        charge = _billed_for(prov, billed, o, err)  # a reply with no answer (filtered, refused) may bill
        if w is not None and not (isinstance(err, BatchRequestNotRun) or err.retryable):
            engine.savings.unanswered(cause_of(err))
            layer.fail(lane, w, err, charge)
            continue
        engine.cache.record_failure(key, meta, err.kind, err.status, err.record_text())
        engine.stats.stage(meta.stage).cost_usd += charge
        if isinstance(err, BatchQueueFull):
            queue_err = err
        if w is None:
            if engine.cap is not None:
                engine.cap.charge(charge)
        else:
            layer.release(w, charge)
            w.cause = err
            if isinstance(err, BatchQueueFull):
                refusals.append(w)
            else:
                again.append(w)
    gone = _unreported(b)
    for key in b.rows.keys() - seen:  # never reported: not run
        failed += 1
        w = b.waiting.pop(key, None)
        err = gone(f"batch {b.record.batch_id} {_WHY.get(gone, 'reported nothing for this request')}"
                   + (f": {b.status.message}" if gone is BatchFailed and b.status and b.status.message else ""))
        engine.cache.record_failure(key, w.meta if w is not None else _meta(prov, b.rows[key]), err.kind, None, str(err))
        if w is not None:
            layer.release(w)
            w.cause = err
            again.append(w)
    for w in list(b.waiting.values()):  # waiting on the batch, not among its requests (cannot happen)
        again.append(w)
    b.waiting.clear()
    b.collected = True
    st = b.status
    engine.cache.update_batch(b.ident, collected=True, state=st.state if st else None, succeeded=ok, failed=failed)
    for key in b.rows:
        if layer.live_keys.get(key) is b:
            del layer.live_keys[key]
    for w in again:
        _again(layer, w)
    if queue_err is not None:  # refused over the enqueued-token limit: smaller batches, in turn
        refused(layer, lane, b, refusals, queue_err)


def _swapped(layer: Layer, b: Batch, outcomes: list[BatchOutcome]) -> tuple[list[BatchOutcome], int]:
    """Answers ``b`` gives to another live batch's requests: two batches adopted the wrong way round
    (Anthropic's running orphans of the same size, matched by size and time alone).  Each such
    answer is kept for the request it answers (the other batch's row and waiting call, priced for
    its alias), and ``b``'s own requests it did not answer move to that other batch, whose results
    most likely hold them: neither is asked and paid again.  Returns ``b``'s own outcomes and the
    answers handed over."""
    foreign: dict[int, tuple[Batch, list[BatchOutcome]]] = {}
    mine = []
    for o in outcomes:
        if o.custom_id in b.rows:
            mine.append(o)
            continue
        other = layer.live_keys.get(o.custom_id)
        if (other is not None and other is not b and not other.collected
                and other.lane.prov.kind == b.lane.prov.kind and o.response is not None and o.error is None):
            foreign.setdefault(id(other), (other, []))[1].append(o)
    if not foreign:
        return outcomes, 0
    handed = 0
    for other, theirs in foreign.values():
        for o in theirs:
            if o.custom_id in other.rows:
                _keep(layer, other, o.custom_id, o.response)
                handed += 1
    partner = next(iter(foreign.values()))[0]
    answered = {o.custom_id for o in mine}
    for key in [k for k in b.rows if k not in answered]:
        partner.rows[key] = b.rows.pop(key)
        layer.live_keys[key] = partner
        w = b.waiting.pop(key, None)
        if w is not None:
            partner.waiting[key] = w
    log.warning("batch %s answered %s of batch %s (adopted the wrong way round): kept for them",
                b.record.batch_id, plural(handed, "request"), partner.record.batch_id)
    return mine, handed


def _keep(layer: Layer, target: Batch, key: str, resp) -> None:
    """An answer to ``target``'s request ``key`` that another batch gave: into the cache and to
    its waiting call, as :func:`collect` keeps its own; ``key`` is no longer ``target``'s."""
    prov = target.lane.prov
    row = target.rows.pop(key)
    if layer.live_keys.get(key) is target:
        del layer.live_keys[key]
    w = target.waiting.pop(key, None)
    meta = w.meta if w is not None else _meta(prov, row)
    _answered(layer, prov, billed_model(prov), key, meta, w, resp)


def _answered(layer: Layer, prov, billed, key: str, meta, w: Waiter | None, resp) -> None:
    """A batch's answer to request ``key``: priced at batch rates, into the cache and the run's
    figures, and to its waiting call ``w`` (None: a request no call of this process asked yet,
    charged to the cap as it is collected)."""
    engine = layer.engine
    usage, broken = sane_usage(resp.usage)
    resp.usage = usage
    cost = usage_usd(prov.kind, billed, usage, prov.spec.price, batch=True) or 0.0
    if broken and w is not None and w.hold is not None:
        cost = max(cost, w.hold)
    resp.cost_usd = cost
    resp.cached = False
    engine.cache.put(key, meta, resp)
    engine.count_made(prov)
    layer.remember_paid(key, resp)
    engine.savings.note(prov.kind, billed, prov.spec.price, usage, cost, batch=True)
    stage = engine.stats.stage(meta.stage)
    stage.cost_usd += cost
    if w is None:
        engine.savings.batch_collected_unasked += 1
        if engine.cap is not None:
            engine.cap.charge(cost)
        return
    if w.hold is not None and cost > w.hold:
        stage.over_reservation += 1
    layer.release(w, cost)
    stage.calls += 1
    stage.done += 1
    stage.input_tokens += usage.input_tokens
    stage.output_tokens += usage.output_tokens
    if not w.fut.done():
        w.fut.set_result(CallResult(w.req, resp, key=key))


def _again(layer: Layer, w: Waiter) -> None:
    """Ask a request a batch left unanswered again: in the next wave, live, or not at all."""
    engine = layer.engine
    lane = layer.lanes[w.req.model]
    if w.fut.done():
        return
    stage = engine.stats.stage(w.req.stage)
    if engine.stopping:
        layer.not_run(w, engine.stop_reason or "stopped")
        return
    if w.submissions >= lane.attempts and lane.batch_mode and not lane.fallback_live:
        cause = w.cause or BatchRequestNotRun("no answer")
        give_up(layer, lane, w, cause, f"model '{lane.alias}': no batch answered this request in "
                                       f"{plural(w.submissions, 'batch')}; the last one: {cause_of(cause)}: {cause}")
        return
    stage.retries += 1
    engine.savings.batch_retried += 1
    if lane.fallback_live or not lane.batch_mode:
        w.fut.set_result(LIVE)
    else:
        lane.join(w)


#: what a request a batch did not report met, by the batch's end (see :func:`_unreported`)
_WHY = {BatchExpired: "expired before running this request", BatchCancelled: "was cancelled before running this "
        "request", BatchFailed: "failed as a whole"}


def _unreported(b: Batch) -> type[BatchRequestNotRun]:
    """The class of a request batch ``b`` did not report, by how ``b`` ended."""
    state = b.status.state if b.status is not None else None
    return {"expired": BatchExpired, "cancelled": BatchCancelled, "failed": BatchFailed}.get(
        state, BatchRequestNotRun)  # type: ignore[arg-type]


def _billed_for(prov, billed: str, outcome: BatchOutcome, err: ProviderError) -> float:
    """What a request that got no answer was billed: the usage its error carries at the batch
    rates, else the cost the provider put on the outcome (``extra["cost_usd"]``), else nothing."""
    from ..types import Usage

    usage = getattr(err, "usage", None)
    if isinstance(usage, Usage):
        return usage_usd(prov.kind, billed, sane_usage(usage)[0], prov.spec.price, batch=True) or 0.0
    cost = outcome.extra.get("cost_usd") if isinstance(outcome.extra, dict) else None
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0 else 0.0


def _meta(prov, row) -> RequestMeta:
    return RequestMeta(prov.kind, prov.model, prov.identity, row.stage or "default", row.item_id, row.prompt_hash)
