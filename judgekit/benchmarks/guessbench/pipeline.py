"""GuessBench end to end: every (candidate, approach, task, set) flow, then Table 2 and AutoBencher.

The flows themselves (turns, samples, refine rounds, retrieval) are in
:mod:`judgekit.benchmarks.guessbench.flow`; :mod:`.prepare` reads the options and prepares the data;
this module plans the estimate and runs the flows concurrently; :mod:`~judgekit.benchmarks.guessbench.results` turns their records
into tables (``turns``, ``sets``, ``retrievals``, ``summary``, ``comparisons``) and the summary,
and :mod:`~judgekit.benchmarks.guessbench.panel` computes the figures: Table 2 per extractor of
``roles.judges`` (or the one ``roles.judge``), the panel's ensemble and agreement, bootstrap
intervals and paired comparisons between candidates.
"""

from __future__ import annotations

import asyncio

from ...engine import Engine
from ...types import GenParams
from ..base import BenchmarkResult, PlannedCall
from .data import GuessSet
from .flow import (APPROACHES, Aborted, FlowConfig, PlanCaller, RunCaller, SetOutcome, StopTally, max_calls,
                   run_set, stage_names)
from .prepare import Options, Prepared, prepare
from .results import build_result

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages"]

stages = [name for a in APPROACHES for name in stage_names(a)]

#: flows in progress at once (each makes one call at a time, except self-consistency samples)
FLOW_WINDOW = 512


def _params(spec, alias: str) -> GenParams:
    return spec.models[alias].params.gen_params()


def _config(prep: Prepared) -> FlowConfig:
    spec, o = prep.spec, prep.options
    aliases = [*spec.roles.candidates, *spec.roles.panel]
    return FlowConfig(
        extractor=spec.roles.judge,
        panel=tuple(spec.roles.panel),
        params={a: _params(spec, a) for a in aliases},
        retriever=spec.roles.retriever,
        example=prep.example,
        sc_samples=o.sc_samples,
        sc_temperature=o.sc_temperature,
        sc_seed=o.sc_seed,
        sc_tie_break=o.sc_tie_break,
        rounds=o.refine_rounds,
        retrieval_source=o.retrieval_source,
        match=o.match,
        vote=o.vote,
        previous_guess=o.previous_guess,
        stop_signal=o.stop_signal,
    )


# -- estimate ------------------------------------------------------------------------------------
async def plan(prep: Prepared, engine: Engine) -> list[PlannedCall]:
    """Every call, following cached replies where they exist and the longest path where not (every
    dynamic turn, every review round: the bound); a call past an early stop that a stand-in
    decided has the chance of going on that the flows' real replies show, else the prior
    (:class:`~judgekit.benchmarks.guessbench.flow.StopTally`)."""
    cfg = _config(prep)
    tally = StopTally()

    async def one(alias: str, approach: str, task: str, gs: GuessSet) -> PlanCaller:
        caller = PlanCaller(engine, placeholder=gs.images[2], alias=alias, approach=approach, tally=tally)
        await run_set(cfg, alias, approach, task, gs, caller)
        return caller

    sem = asyncio.Semaphore(FLOW_WINDOW)

    async def windowed(*args) -> PlanCaller:
        async with sem:
            return await one(*args)

    callers = await asyncio.gather(*(windowed(a, ap, t, gs) for a, ap, t in prep.flows for gs in prep.sets))
    return [pc for caller in callers for pc in caller.weigh()]


# -- run -----------------------------------------------------------------------------------------
async def run(prep: Prepared, engine: Engine) -> BenchmarkResult:
    cfg = _config(prep)
    st = engine.stats
    for alias, approach, task in prep.flows:
        for stage, n in max_calls(approach, task, cfg).items():
            st.plan(stage, n * len(prep.sets))

    outcomes: dict[tuple[str, str, str, str], SetOutcome] = {}
    not_run = 0
    window = asyncio.Semaphore(FLOW_WINDOW)

    async def flow(alias: str, approach: str, task: str, gs: GuessSet) -> None:
        nonlocal not_run
        caller = RunCaller(engine)
        async with window:
            try:
                out = await run_set(cfg, alias, approach, task, gs, caller)
            except Aborted:
                not_run += 1
                out = None
        # the stage totals were the longest path: take off what this set did not need
        why = ("sets that ended before their last turn or round" if out is not None
               else "sets not run: the run is stopping")
        for stage, n in max_calls(approach, task, cfg).items():
            made = caller.counts.get(stage, 0)
            if out is not None or made == 0:
                st.drop(stage, n - made, why)
        if out is not None:
            outcomes[(alias, approach, task, gs.set_id)] = out

    async with asyncio.TaskGroup() as tg:
        for alias, approach, task in prep.flows:
            for gs in prep.sets:
                tg.create_task(flow(alias, approach, task, gs))

    return build_result(prep, outcomes, not_run, blobs=engine.blobs)
