"""The generic rubric benchmark (``benchmark = "rubric"``): single-answer grading on a scale.

Per candidate and item:

1. the candidate's answer: a live candidate (``roles.candidates``) is asked the item's question
   (its images before the text, or ``options.candidate_prompt``); an imported candidate
   (``options.answers``, name -> file, or file and answer column) has its answer read from its file;
2. every judge of the panel (``roles.judge`` or ``roles.judges``) grades the answer once with the
   user's prompt file (``options.judge_prompt``): the item's fields, the answer and the rubric
   filled in (the item's ``criteria`` column when set, else ``options.rubric``), the item's
   images where the prompt says ``{images}`` (else before the text);
3. the score is read from the reply by the parser ``options.score`` names (``rating``: MT-Bench's
   ``[[N]]``, ``last_number``, ``regex``), on ``options.scale``.  A reply that does not parse (or
   a call that failed) is a counted failure kept with its raw text; with
   ``reask_on_parse_failure`` the judge is asked once more for the score line alone.

Figures (:mod:`.results`): the mean score per candidate, overall and per category, with
bootstrap intervals, also as a share of the scale; per judge and the panel's ensemble (the mean
of the judges' valid scores); the judges' agreement; paired comparisons between candidates.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...engine import NOT_RUN, CallResult, Engine
from ...judging.candidates import judge_plan
from ...judging.items import GenericItem
from ...judging.repeats import repeated
from ...parsers.generic import Reading
from ...plural import plural
from ...types import ChatRequest
from ..base import BenchmarkResult, PlannedCall
from .prepare import Options, Prepared, prepare
from .requests import Builder, reask_request
from .results import build, judgment_record

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages"]

stages = ["candidate", "judge"]

#: the error kind of a judgment with no answer to grade
NO_ANSWER = "no_answer"
CANDIDATE_FAILED = "candidate_failed"


#: the estimate's stand-ins for text not written yet (their length: a typical answer and judgment)
_STANDIN_ANSWER = ("A stand-in answer of typical length for the estimate. " * 12).strip()
_STANDIN_JUDGMENT = ("A stand-in judgment of typical length for the estimate: the answer is read against the "
                     "rubric, its strengths and weaknesses are weighed, and a rating follows.")


# -- estimate --------------------------------------------------------------------------------------
async def plan(prep: Prepared, engine: Engine) -> list[PlannedCall]:
    """Every call of the run: the live candidates' answers, every judge's grading of every answer
    (built with a stand-in where the answer is not cached yet: inexact) and, with
    ``reask_on_parse_failure``, the re-asks a reply may need."""
    b = Builder(prep)
    reask = reask_request if prep.options.reask_on_parse_failure else None

    async def cached_text(req) -> str | None:
        _, hit = await engine.lookup(req)
        return hit.text if hit is not None else None

    async def for_item(item: GenericItem) -> list[PlannedCall]:
        out: list[PlannedCall] = []
        for alias in prep.candidates:
            if alias in prep.imported:
                answer, exact = prep.imported[alias].get(item.id), True
                if answer is None:
                    continue  # no answer, no judgment: a counted failure
            else:
                creq = b.candidate_request(alias, item)
                out.append(PlannedCall("candidate", creq))
                answer = await cached_text(creq)
                exact = answer is not None
                answer = answer if answer is not None else (item.reference or _STANDIN_ANSWER)
            for judge in prep.spec.roles.panel:
                for jreq in repeated(b.judge_request(judge, item, answer), prep.options.judge_repeats):
                    out += await judge_plan(jreq, exact=exact, cached=cached_text,
                                            parse=prep.parse, reask=reask, standin=_STANDIN_JUDGMENT)
        return out

    per_item = await asyncio.gather(*(for_item(item) for item in prep.items))
    return [pc for calls in per_item for pc in calls]


# -- run -------------------------------------------------------------------------------------------
async def run(prep: Prepared, engine: Engine) -> BenchmarkResult:
    b = Builder(prep)
    o = prep.options
    cands, judges = prep.candidates, prep.spec.roles.panel
    panel = len(judges) > 1
    st = engine.stats
    st.plan("candidate", len(prep.items) * len(prep.live))
    k = o.judge_repeats  # every judgment asked k times (repeat = the request's sample_index)
    st.plan("judge", len(prep.items) * len(cands) * len(judges) * k)

    answers: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    failed: list[str] = []
    not_run = 0
    first_replies: dict[tuple[str, str, str], str] = {}  # a re-asked judgment's first reply

    def no_call(alias: str, item: GenericItem, kind: str, error: str) -> None:
        for judge in judges:
            for rep in range(k):
                judgments.append(judgment_record(alias, judge, item, None, None, error_kind=kind, error=error,
                                                 repeat=rep if k > 1 else None))
                st.stage("judge").done += 1

    async def grade(alias: str, item: GenericItem, req: ChatRequest) -> None:
        nonlocal not_run
        judge = req.model
        r = await engine.call(req)
        reading: Reading | None = prep.parse(r.text) if r.ok else None
        reasked = False
        if r.ok and reading is None and o.reask_on_parse_failure and not engine.stopping:
            st.plan("judge", 1, "judgments re-asked: the first reply had no verdict")
            r2 = await engine.call(reask_request(req, r.text))
            if r2.ok or r2.error_kind != NOT_RUN:
                if not req.sample_index:  # the report shows repeat 0's judgments
                    first_replies[(judge, alias, item.id)] = r.text
                r, reasked = r2, True
                reading = prep.parse(r.text) if r.ok else None
        if r.error_kind == NOT_RUN:
            not_run += 1
            return
        if not r.ok:
            failed.append(f"{alias} item {item.id} judge{f' {judge}' if panel else ''}: {r.error}")
        judgments.append(judgment_record(alias, judge, item, r, reading, reasked=reasked,
                                         repeat=req.sample_index if k > 1 else None))

    async def flow(alias: str, item: GenericItem) -> None:
        nonlocal not_run
        if alias in prep.imported:
            answer = prep.imported[alias].get(item.id)
            answers.append(_answer_row(alias, item, answer, imported=True))
            if answer is None:
                no_call(alias, item, NO_ANSWER, "no imported answer")
                return
        else:
            r: CallResult = await engine.call(b.candidate_request(alias, item))
            answers.append(_answer_row(alias, item, r.text if r.ok else None, imported=False, result=r))
            if not r.ok:
                if r.error_kind == NOT_RUN:
                    not_run += 1
                    return
                failed.append(f"{alias} item {item.id} candidate: {r.error}")
                no_call(alias, item, CANDIDATE_FAILED, r.error or "the candidate call failed")
                return
            answer = r.text
        await asyncio.gather(*(grade(alias, item, req) for judge in judges
                               for req in repeated(b.judge_request(judge, item, answer), k)))

    async with asyncio.TaskGroup() as tg:  # a stop (bad key) cancels every other flow at once
        for alias in cands:
            for item in prep.items:
                tg.create_task(flow(alias, item))

    order = {it.id: i for i, it in enumerate(prep.items)}
    judgments.sort(key=lambda j: (judges.index(j["judge"]), cands.index(j["model"]), order[j["index"]], j.get("repeat", 0)))
    answers.sort(key=lambda a: (cands.index(a["model"]), order[a["index"]]))
    built = build(judgments, judges=judges, candidates=cands, options=o, repeats=k, labels=prep.labels)
    summary: dict[str, Any] = {
        "benchmark": "rubric",
        "items": len(prep.items),
        "candidates": cands,
        "imported": list(prep.imported),
        "judge": prep.spec.roles.judge,
        "complete": not_run == 0,
        "scale": list(o.scale),
        "score_parser": o.score,
        **built.summary,
    }
    notes = list(prep.warnings)
    missing = sum(1 for a in answers if a["imported"] and a["answer"] is None)
    if missing:
        notes.append(f"{plural(missing, 'item')} without an imported answer: counted as failed judgments")
    return BenchmarkResult(summary=summary, tables={"answers": answers, "judgments": judgments, **built.tables},
                           failed_items=failed, not_run=not_run, display=built.display,
                           more_displays=built.more_displays, notes=notes, tidy=built.tidy,
                           report=lambda: _report(prep, answers, judgments, summary, first_replies))


def _answer_row(alias: str, item: GenericItem, answer: str | None, *, imported: bool,
                result: CallResult | None = None) -> dict[str, Any]:
    ok = answer is not None
    return {"model": alias, "index": item.id, "category": item.category or "all", "imported": imported,
            "ok": ok, "answer": answer,
            "error_kind": None if ok else (result.error_kind if result is not None else NO_ANSWER),
            "error": None if ok else (result.error if result is not None else "no imported answer"),
            "output_tokens": result.response.usage.output_tokens if result is not None and result.ok else None}


def _report(prep: Prepared, answers, judgments, summary, first_replies):
    from .report import build_report  # imported when the report is written, not for an estimate

    if prep.options.judge_repeats > 1:  # each item shows repeat 0's replies
        judgments = [j for j in judgments if not j.get("repeat")]
    return build_report(prep, answers, judgments, summary, first_replies)
