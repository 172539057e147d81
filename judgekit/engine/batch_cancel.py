"""``judgekit batches cancel``: cancel live batches at their provider and mark them in the cache.

Which batches: those of one run (``run_id``), those of every run of one spec name
(``spec_name``), or every live batch of the cache.  Each is cancelled through the provider of the
model that submitted it, built from the spec that run recorded (its ``runs`` row), so the key is
read from the same environment variable the run used.  The cache then holds the provider's word
(``cancelling``/``cancelled``).  A cancelled batch stays *uncollected*: what it answered before it
stopped is paid for, and the next run of the spec reads those answers into the cache and asks the
rest again.  A batch the provider no longer knows is marked failed and collected.  A batch whose
creation a killed run left unrecorded (its intent, :mod:`judgekit.engine.batch_adopt`) is looked
for at the provider first: found, it is recorded and cancelled; not found, nothing was created and
the intent is forgotten.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..errors import NotFound, ProviderError, UsageError
from .batch_adopt import adopt_intents

__all__ = ["CancelResult", "cancel_batches"]


@dataclass(slots=True)
class CancelResult:
    batch_id: str
    alias: str
    run_id: str
    requests: int
    state: str = ""  # the state the provider gave back
    error: str = ""  # why it could not be cancelled


def _spec_of(record_json: str | None):
    """The RunSpec a ``runs`` row recorded (``{"spec": ..., "run": ...}``, or a bare spec)."""
    from ..config import RunSpec

    if not record_json:
        return None
    data = json.loads(record_json)
    if isinstance(data, dict) and isinstance(data.get("spec"), dict):
        data = data["spec"]
    return RunSpec.model_validate(data)


async def cancel_batches(cache_path: Path | str, *, run_id: str | None = None,
                         spec_name: str | None = None) -> list[CancelResult]:
    """Cancel the live batches chosen (see the module docstring); one result per batch."""
    from .. import providers
    from ..cache.store import CacheStore

    store = await CacheStore.open(cache_path, run_id="batches-cancel-" + uuid.uuid4().hex[:6])
    results: list[CancelResult] = []
    opened = {}
    try:
        if run_id is not None and not await store.query("SELECT 1 FROM runs WHERE run_id = $1", [run_id]):
            raise UsageError(f"no run {run_id!r} in {cache_path} (`judgekit cache stats` lists the runs)")
        live = await store.batches(live_only=True, run_id=run_id, spec_name=spec_name)
        specs: dict[str, object] = {}
        for rec in live:
            res = CancelResult(rec.batch_id, rec.alias, rec.run_id, rec.requests)
            results.append(res)
            if rec.run_id not in specs:
                rows = await store.query("SELECT spec_json FROM runs WHERE run_id = $1", [rec.run_id])
                try:
                    specs[rec.run_id] = _spec_of(rows[0][0]) if rows else None
                except (ValueError, TypeError):
                    specs[rec.run_id] = None
            spec = specs[rec.run_id]
            model = getattr(spec, "models", {}).get(rec.alias) if spec is not None else None
            if model is None:
                res.error = f"run {rec.run_id} recorded no spec with model '{rec.alias}'"
                continue
            key = (rec.run_id, rec.alias)
            try:
                prov = opened.get(key)
                if prov is None:
                    prov = providers.create_provider(rec.alias, model)
                    await prov.start()
                    opened[key] = prov
                if (prov.kind, prov.model, prov.identity) != (rec.provider, rec.model, rec.base_url):
                    res.error = (f"model '{rec.alias}' of that run now reaches {prov.kind} {prov.model} at "
                                 f"{prov.identity or 'its default endpoint'}, not where the batch was sent")
                    continue
                if rec.is_intent:
                    guesses: list = []
                    adopted = await adopt_intents(store, prov, rec.alias, [rec], guesses=guesses)
                    if guesses:
                        res.error = (f"its creation was interrupted; {guesses[0].batch_id}, running at the provider "
                                     f"with as many requests, may be it, but Anthropic shows a batch's requests only "
                                     f"once it has ended: not cancelled on a guess (the next run adopts it)")
                        continue
                    if not adopted:  # the run was killed before the provider made it
                        res.state = "never created (its creation was interrupted; nothing to cancel)"
                        continue
                    rec = adopted[0]
                    res.batch_id = rec.batch_id
                status = await prov.cancel_batch(rec.batch_id)
            except NotFound as e:
                res.state, res.error = "failed", f"the provider no longer knows it ({e})"
                store.update_batch(rec.ident, state="failed", collected=True, message=res.error[:500])
                continue
            except ProviderError as e:
                res.error = prov.describe_error(e) if key in opened else str(e)
                continue
            res.state = status.state
            store.update_batch(rec.ident, state=status.state, provider_status=status.provider_status,
                               message="cancelled with judgekit batches cancel")
    finally:
        for prov in opened.values():
            try:
                await prov.close()
            except Exception:
                pass
        await store.close()
    return results
