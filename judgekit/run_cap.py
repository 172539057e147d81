"""A run's cost cap: which cap applies, keeping it with the run, and refusing what it cannot bound.

Which cap, first match wins:

1. ``--max-cost`` (``RunOptions.max_cost_usd``);
2. the cap of the latest earlier run of the same spec name into the same results folder, kept in
   the cache's ``runs`` record (so a resume keeps its cap unless the user gives a new one),
   unless the spec's own ``max_cost_usd`` changed since that run (an edited spec is a new cap);
3. the spec's ``max_cost_usd``.

A cap bounds what one invocation spends; a resume is an invocation of its own, under the same cap.

The ``runs`` record's ``spec_json`` holds ``{"spec": <the spec>, "run": {"out_dir", "max_cost_usd",
"cap_from", "limit"}}`` (records of older versions hold the bare spec, and keep no cap).

A cap cannot hold for a model whose price is unknown: :func:`check_prices` refuses such a run
before anything starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .config import RunSpec
from .cost.prices import has_price
from .errors import SpecError

__all__ = ["RunCap", "choose_cap", "check_prices", "run_record"]

CapFrom = Literal["option", "earlier run", "spec", "none"]


@dataclass(frozen=True, slots=True)
class RunCap:
    """The cap a run runs under and where it came from."""

    usd: float | None
    source: CapFrom


def _folder(out_dir: Path) -> str:
    return str(Path(out_dir).expanduser().resolve())


async def _kept(cache, spec: RunSpec, out_dir: Path) -> RunCap | None:
    """The cap of the latest earlier run of ``spec``'s name into ``out_dir``, or None when there
    is none (or it predates kept caps, or the spec's own cap changed since)."""
    rows = await cache.query(
        "SELECT spec_json FROM runs WHERE name = $1 AND spec_json IS NOT NULL ORDER BY started_at DESC",
        [spec.name])
    folder = _folder(out_dir)
    for (text,) in rows:
        try:
            record = json.loads(text)
            run, earlier_spec = record["run"], record["spec"]
            if run["out_dir"] != folder:
                continue
            if earlier_spec.get("max_cost_usd") != spec.max_cost_usd:
                return None  # the spec's cap was edited: it speaks for itself
            cap = run["max_cost_usd"]
            if cap is None:
                return RunCap(None, "earlier run")
            cap = float(cap)
        except (ValueError, TypeError, KeyError, AttributeError):
            continue  # a record of an older version, or not ours to read
        if cap >= 0:
            return RunCap(cap, "earlier run")
    return None


async def choose_cap(cache, spec: RunSpec, out_dir: Path | None, option: float | None) -> RunCap:
    """The cap for a run (see the module docstring).  ``out_dir`` None: no earlier run is looked
    for (an estimate)."""
    if option is not None:
        return RunCap(float(option), "option")
    if out_dir is not None:
        kept = await _kept(cache, spec, out_dir)
        if kept is not None and (kept.usd is not None or spec.max_cost_usd is None):
            return kept
    if spec.max_cost_usd is not None:
        return RunCap(spec.max_cost_usd, "spec")
    return RunCap(None, "none")


def check_prices(spec: RunSpec, aliases: list[str], cap: RunCap) -> None:
    """Under a cap, every model the run calls needs a known price (the spec's ``price`` or
    genai-prices'; the simulator and local models cost nothing).  Raises a one-line SpecError."""
    if cap.usd is None:
        return
    unknown = [a for a in aliases if not has_price(spec.models[a].provider, spec.models[a].base_model,
                                                   spec.models[a].price)]
    if not unknown:
        return
    from .engine.budget import cap_text

    named = ", ".join(f"'{a}' ({spec.models[a].provider} {spec.models[a].model})" for a in unknown)
    where = {"option": "--max-cost", "earlier run": "--max-cost kept from the earlier run",
             "spec": "max_cost_usd"}[cap.source]
    first = unknown[0]
    raise SpecError(
        f"{spec.source_path or spec.name}: no price is known for {named}, so the cost cap ({where} "
        f"{cap_text(cap.usd)}) cannot hold; set one in the spec, e.g. --set "
        f"'models.{first}.price={{input_per_mtok = 2.5, output_per_mtok = 10}}' (or per_request_usd = ...)")


def run_record(spec: RunSpec, out_dir: Path, cap: RunCap, limit: int | None) -> str:
    """The ``spec_json`` of a run's record: the spec, and the options to keep with the run."""
    return json.dumps({
        "spec": spec.model_dump(mode="json"),
        "run": {"out_dir": _folder(out_dir), "max_cost_usd": cap.usd, "cap_from": cap.source, "limit": limit},
    }, ensure_ascii=False)
