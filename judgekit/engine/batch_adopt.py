"""Adopting orphan batches: the batch a killed process created but never recorded.

Before a create call the batch layer records an *intent* (:data:`~judgekit.cache.batches.
INTENT_PREFIX`: a wave id and its requests' keys, synced); the provider is given the wave id.  A
process killed between the create request and the batch's record leaves the intent live.
:func:`adopt_intents` asks the provider for the batches of such intents
(:meth:`~judgekit.providers.batch.BatchAPI.find_batches`), records each batch found under the run
that made it, as if it had just been created (so the collection, ``judgekit cache stats`` and
``judgekit batches cancel`` see it), and forgets every intent it settled: one whose batch was
found, or one with no batch at the provider (nothing was created; its calls are submitted as
usual).  Called by the batch layer when a run starts (:mod:`judgekit.engine.batching`), before it
submits anything, and by ``judgekit batches cancel``.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..cache.batches import INTENT_PREFIX, BatchRecord
from ..providers.batch import BatchStatus, WaveIntent

__all__ = ["adopt_intents", "wave_of", "posix"]

#: what asks the provider: (intents, batch ids already recorded) -> {wave id: its batch}
Finder = Callable[[list[WaveIntent], frozenset[str]], Awaitable[dict[str, BatchStatus]]]


def posix(naive_utc: _dt.datetime | None) -> float:
    """A naive UTC datetime (as the cache keeps them) in POSIX seconds; now when None."""
    return time.time() if naive_utc is None else naive_utc.replace(tzinfo=_dt.timezone.utc).timestamp()


def wave_of(intent: BatchRecord) -> str:
    return intent.batch_id[len(INTENT_PREFIX):]


async def adopt_intents(cache: Any, prov: Any, alias: str, intents: Sequence[BatchRecord], *,
                        find: Finder | None = None, guesses: list[BatchStatus] | None = None) -> list[BatchRecord]:
    """Settle the live ``intents`` of ``prov``'s endpoint (see the module docstring); the batches
    adopted, as now recorded.  ``find`` asks the provider (default: ``prov.find_batches`` once; the
    batch layer passes it with its retries).  Its errors propagate, the intents left as they were.
    With ``guesses`` (a list), a batch found only on a guess (``BatchStatus.guessed``: a running
    Anthropic batch of the intent's size) is not adopted but put there, its intent left live:
    ``batches cancel`` never cancels on a guess (the run adopts it: its answers are joined on
    ``custom_id``: two intents of the same size whose running batches are swapped each bring
    answers to the other's requests, which :func:`judgekit.engine.batch_collect.collect` keeps
    for those requests)."""
    endpoint = (prov.kind, prov.model, prov.identity)
    intents = [r for r in intents if r.is_intent and not r.collected
               and (r.provider, r.model, r.base_url) == endpoint]
    if not intents:
        return []
    recorded = [r for r in await cache.batches(providers=[endpoint]) if not r.is_intent]
    held: set[str] = set()
    for r in recorded:
        if not r.collected:
            held.update(x.key for x in await cache.batch_requests(r.ident))
    rows, waves, open_ = {}, {}, []
    for r in intents:
        rows[r.batch_id] = await cache.batch_requests(r.ident)
        keys = tuple(x.key for x in rows[r.batch_id])
        if keys and all(k in held for k in keys):  # its batch is recorded under its own id already
            cache.forget_batch(r.ident)
            continue
        waves[r.batch_id] = WaveIntent(wave_of(r), keys, posix(r.created_at))
        open_.append(r)
    if not open_:
        return []
    known = frozenset(r.batch_id for r in recorded)
    if find is None:
        found = await prov.find_batches(list(waves.values()), known=known)
    else:
        found = await find(list(waves.values()), known)
    adopted = []
    for r in open_:
        status = found.get(waves[r.batch_id].wave)
        if status is None:
            cache.forget_batch(r.ident)  # nothing was created
            continue
        if status.guessed and guesses is not None:
            guesses.append(status)
            continue
        rec = BatchRecord(prov.kind, prov.identity, status.batch_id, prov.model, alias or r.alias, r.run_id,
                          status.state, status.provider_status, len(rows[r.batch_id]), status.succeeded,
                          status.failed, False, status.message, created_at=r.created_at)
        cache.record_batch(rec, rows[r.batch_id])  # synced, then the intent forgotten (synced)
        cache.forget_batch(r.ident)
        adopted.append(rec)
    return adopted
