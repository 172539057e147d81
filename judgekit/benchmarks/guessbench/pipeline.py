"""GuessBench end to end: every (candidate, approach, task, set) flow, then Table 2 and AutoBencher.

The flows themselves (turns, samples, refine rounds, retrieval) are in
:mod:`judgekit.benchmarks.guessbench.flow`; this module prepares the data, plans the estimate and
runs the flows concurrently; :mod:`~judgekit.benchmarks.guessbench.results` turns their records
into tables (``turns``, ``sets``, ``retrievals``, ``summary``, ``comparisons``) and the summary,
and :mod:`~judgekit.benchmarks.guessbench.panel` computes the figures: Table 2 per extractor of
``roles.judges`` (or the one ``roles.judge``), the panel's ensemble and agreement, bootstrap
intervals and paired comparisons between candidates.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from ...config import STRICT_CONFIG
from ...engine import Engine
from ...errors import DataError, SpecError
from ...judging.uncertainty import IntervalOptions
from ...metrics.guessbench import read_earlier_accuracies
from ...types import GenParams
from ..base import BenchmarkResult, PlannedCall, require_candidates
from ..deviations import ours
from .data import GuessSet, load_set, load_sets
from .flow import (APPROACHES, Aborted, FlowConfig, PlanCaller, RunCaller, SetOutcome, StopTally, max_calls,
                   run_set, stage_names)
from .results import build_result

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages"]

stages = [name for a in APPROACHES for name in stage_names(a)]

#: flows in progress at once (each makes one call at a time, except self-consistency samples)
FLOW_WINDOW = 512

Approach = Literal["cot", "no_cot", "one_shot", "self_consistency", "self_refine", "image_retrieval",
                   "image_only", "hint_only"]


class Options(IntervalOptions):
    """``[options]`` of a GuessBench spec.

    Every default is what the authors' evaluation code does; an option declared with
    :func:`~judgekit.benchmarks.deviations.ours` departs from it when set (listed in
    ``summary.json`` under ``deviations``).  The bootstrap options (``bootstrap_samples``,
    ``bootstrap_seed``, ``interval_level``) add intervals and change no accuracy."""

    model_config = STRICT_CONFIG  # unknown keys, loose types, inf and nan are spec errors

    tasks: list[Literal["static", "dynamic"]] = Field(default_factory=lambda: ["static", "dynamic"], min_length=1)
    approaches: list[Approach] = Field(default_factory=lambda: ["cot"], min_length=1,
                                       description="cot (default, with chain of thought), no_cot, one_shot, "
                                                   "self_consistency, self_refine, image_retrieval, image_only, "
                                                   "hint_only")
    match: Literal["reply", "answer"] = ours(
        "reply", reference="looks for the gold answer in the whole lower-cased extractor reply",
        description="answer: only in the guess after the extractor's last 'Answer:' (markers that only quote the "
                    "guesser's response set aside)")
    vote: Literal["reply", "answer"] = ours(
        "reply", reference="self-consistency votes on the whole lower-cased extractor replies",
        description="answer: vote on the extracted guesses (white space collapsed; no guess is no vote)")
    previous_guess: Literal["reply", "answer"] = ours(
        "reply", reference="inserts the previous turn's whole lower-cased extractor reply ('answer: cat')",
        description="answer: insert the extracted guess ('cat'; 'No Answering' when there is none)")
    sc_samples: int = ours(3, reference="3 self-consistency samples", ge=2,
                           description="self-consistency samples per turn")
    sc_temperature: float | None = ours(None, reference="sends no temperature with the samples (provider default)",
                                        ge=0, le=2, description="self-consistency sampling temperature")
    sc_seed: bool = ours(False, reference="sends no seed with the samples",
                         description="send the model's seed (or 0) + i with sample i, so samples are reproducible "
                                     "(and differ on a server whose reply is a function of the request)")
    sc_tie_break: Literal["first", "last"] = ours(
        "first", reference="a vote tie goes to the reply seen first (max over a Counter)",
        description="last: to the one seen last (the paper's text)")
    refine_rounds: int = ours(3, reference="3 review rounds (the paper says 2)", ge=1,
                              description="self-refine / image-retrieval review rounds after the guess")
    stop_signal: Literal["exact", "lenient"] = ours(
        "exact", reference="stops on a reply containing '$Well done!$' exactly, unless it quotes the prompt's sentence",
        description="lenient: also any case, and a reply that is only 'Well done!' (with or without $, ** or quotes)")
    retrieval_source: str = ours("Google Images", reference="the retrieval prompt says 'from Google Images'",
                                 description="where the retrieval prompt says the image comes from")
    drop_bom: bool = ours(False, reference="reads Answer.txt and the hint files with open().read(): a UTF-8 "
                                           "byte-order mark stays (U+FEFF in the hint's prompt and in the gold)",
                          description="drop a byte-order mark at the start of Answer.txt and the hint files")
    strip_answer: bool = ours(False, reference="matches Answer.txt as read: white space around the answer (a final "
                                               "line break) stays, so no reply matches; the one-shot example's "
                                               "answer is put in its prompt as read",
                              description="strip white space around the answer (the sets' and the one-shot "
                                          "example's)")
    one_shot_example: str = Field("samples:guessbench/example", description="a build-set folder (real layout) "
                                                                            "used as the worked example")
    earlier_benchmarks: str | None = Field(None, description="CSV model,<bench>,... of the candidates' accuracies "
                                                             "on earlier benchmarks, for AutoBencher novelty")
    autobencher_approach: str = Field("cot", description="the approach whose accuracies feed AutoBencher")

    @model_validator(mode="after")
    def _unique(self) -> "Options":
        for name in ("tasks", "approaches"):
            v = getattr(self, name)
            if len(set(v)) != len(v):
                raise ValueError(f"{name} lists an entry twice")
        return self


@dataclass
class Prepared:
    spec: Any
    options: Options
    sets: list[GuessSet]
    example: GuessSet | None = None
    earlier_csv: Path | None = None
    flows: list[tuple[str, str, str]] = field(default_factory=list)  # (alias, approach, task)


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    require_candidates(spec)
    if spec.data.startswith("hf:"):
        raise SpecError(f"{spec.source_path}: data = {spec.data!r}: GuessBench's build sets are not on the Hugging "
                        f"Face hub; the authors release them in their GitHub repository (Zivenzhu/GuessBench): "
                        f"clone it and point data at its data folder")
    root = spec.data_path()
    read = {"drop_bom": options.drop_bom, "strip_answer": options.strip_answer}
    sets = load_sets(root, limit=limit, **read)
    example = None
    if "one_shot" in options.approaches:
        ex_path = spec.resolve_path(options.one_shot_example)
        example = load_set(ex_path, **read)
        if any(s.folder.resolve() == ex_path.resolve() for s in sets):
            raise DataError(str(ex_path), "the one-shot example is one of the evaluated sets; use another set")
    if not spec.roles.judge:
        raise SpecError(f"{spec.source_path}: GuessBench needs roles.judge (the model that extracts each guess)")
    _check_extractors(spec)
    if "image_retrieval" in options.approaches and not spec.roles.retriever:
        raise SpecError(f"{spec.source_path}: the image_retrieval approach needs roles.retriever "
                        "(a model alias with provider brave, sim_image_search or image_folder)")
    earlier = None
    if options.earlier_benchmarks:
        earlier = spec.resolve_path(options.earlier_benchmarks)
        if not earlier.exists():
            raise DataError(str(earlier), "no such file (options.earlier_benchmarks)")
        # read now, so a bad file stops the run before any call rather than after all of them
        read_earlier_accuracies(earlier, list(spec.roles.candidates))
    flows = [(alias, approach, task) for alias in spec.roles.candidates for approach in options.approaches
             for task in options.tasks]
    return Prepared(spec, options, sets, example, earlier, flows)


#: providers whose models can read a reply and extract its guess
_CHAT_PROVIDERS = ("openai", "azure", "gemini", "anthropic", "sim")


def _check_extractors(spec) -> None:
    """Every extractor must be a chat model (not an image retriever or generator, nor a local
    model run for another task)."""
    role = "roles.judges" if spec.roles.judges else "roles.judge"
    for alias in spec.roles.panel:
        m = spec.models[alias]
        if m.provider in _CHAT_PROVIDERS or (m.provider == "local" and m.local.task == "chat"):
            continue
        what = f"local task {m.local.task!r}" if m.provider == "local" else f"provider {m.provider!r}"
        raise SpecError(f"{spec.source_path}: {role}: '{alias}' cannot extract answers ({what}); an extractor "
                        f"is a chat model")


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
        for stage, n in max_calls(approach, task, cfg).items():
            made = caller.counts.get(stage, 0)
            if out is not None or made == 0:
                st.stage(stage).total -= max(0, n - made)
        if out is not None:
            outcomes[(alias, approach, task, gs.set_id)] = out

    async with asyncio.TaskGroup() as tg:
        for alias, approach, task in prep.flows:
            for gs in prep.sets:
                tg.create_task(flow(alias, approach, task, gs))

    return build_result(prep, outcomes, not_run, blobs=engine.blobs)
