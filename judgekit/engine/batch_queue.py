"""The provider's enqueued-token limit, for one batch-mode alias: :class:`TokenQueue` (its state,
kept with the other records of the batch layer in :mod:`judgekit.engine.batch_state` and named
here too) and the policy that fills it, below.

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

Only this module decides how the queue fills; the batch layer (:mod:`judgekit.engine.batching`) sends a wave
here when the alias has a limit or has been refused (:func:`submit_in_turn`), and the collection
(:mod:`judgekit.engine.batch_collect`) says when a batch ends (:meth:`TokenQueue.ended`) and hands
refused requests to :func:`refused`.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Any

from ..errors import ProviderError
from ..plural import plural
from ..providers.batch_errors import BatchQueueFull
from .batch_state import LIVE, Batch, Lane, Layer, TokenQueue, Waiter, give_up, unexpected
from .budget import INEXACT_INPUT_MARGIN
from .calls import billed_model

__all__ = ["TokenQueue", "estimate", "submit_in_turn", "refused", "refused_create", "provider_limit", "MAX_REFUSALS"]

#: refusals after which a request fails, whatever its batch (halving reaches one request sooner)
MAX_REFUSALS = 32


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

    n = count_request(prov.kind, billed_model(prov), req.messages, req.params)
    return n.input if n.exact else math.ceil(n.input * INEXACT_INPUT_MARGIN)


async def _estimate_all(lane: Lane, calls: list[Waiter]) -> None:
    need = [w for w in calls if w.tokens is None]
    if need:
        counts = await asyncio.to_thread(lambda: [estimate(lane.prov, w.req) for w in need])
        for w, n in zip(need, counts):
            w.tokens = n


async def submit_in_turn(layer: Layer, lane: Lane, calls: list[Waiter]) -> None:
    """Submit a wave of ``calls`` as batches that fit the alias's queue, each when there is room
    (see the module docstring); each batch through ``layer.submit(..., queued=True)``."""
    q = lane.queue
    engine = layer.engine
    lane.submitting += len(calls)
    try:
        await _estimate_all(lane, calls)
    except Exception as e:  # a tokenizer's bug: the calls fail, never hang
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


def refused(layer: Layer, lane: Lane, b: Batch, calls: list[Waiter], err: ProviderError) -> None:
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


def refused_create(layer: Layer, lane: Lane, calls: list[Waiter], err: ProviderError) -> bool:
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


async def _again(layer: Layer, lane: Lane, n: int, tokens: int | None, alone: bool,
                 calls: list[Waiter], err: ProviderError) -> None:
    q = lane.queue
    try:
        await _estimate_all(lane, calls)
        if tokens is None:
            tokens = sum(w.tokens or 0 for w in calls)
        q.cap = max(1, min(q.cap or tokens, tokens) // 2)
    except Exception as e:  # a tokenizer's bug: the calls fail, never hang
        layer.fail_all(lane, calls, unexpected(e, "estimating a refused batch's tokens"))
        return
    finally:
        q.halving -= 1
        q._wake()
    named = f" = {q.said}" if q.said else " to the organisation's limit for " + lane.prov.model
    setting = (f"models.{lane.alias}.batch_queue_tokens = {q.limit:,}" if q.limit is not None else
               f"set models.{lane.alias}.batch_queue_tokens{named}")
    why = (f"the provider refused a batch of {plural(n, 'request')} (~{tokens:,} input tokens, judgekit's estimate) "
           "over "
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


def _give_up(layer: Layer, lane: Lane, w: Waiter, err: ProviderError) -> None:
    """``w`` cannot run in a batch: live with ``batch_fallback = "live"``, else it fails with ``err``."""
    if w.fut.done():
        return
    if lane.fallback_live:
        layer.release(w)
        layer.engine.stats.stage(w.req.stage).retries += 1
        w.fut.set_result(LIVE)
        return
    layer.engine.cache.record_failure(w.key, w.meta, err.kind, err.status, err.record_text())
    give_up(layer, lane, w, err, str(err))
