"""The generic pairwise benchmark end to end: each candidate's answer judged against a
baseline's by a judge prompt the user writes, in both orders, read by a verdict parser chosen
by name.

Per candidate and item (an item's judging starts as soon as both answers exist):

1. baseline: a live model's answer (one call per item, shared by the candidates), or an answer
   imported from a file or read from a data column;
2. candidate: a live model's answer (the candidate prompt, default the item's images then its
   question), or an imported one (an item the file lacks is a counted failure, "no imported
   answer");
3. judge: every judge of the panel, order 0 with the baseline as Assistant A and the candidate
   as B, order 1 swapped and its score negated (Creation-MMBench's convention), so a record's
   ``score`` is always the candidate's (-2..+2).

The records have Creation-MMBench's shape, so :func:`judgekit.judging.pairwise.summarize`, the
bootstrap intervals, the panel's ensemble and agreement and the judges' behaviour apply as they
are (:mod:`.results`).  A judge reply that does not parse is a counted failure kept with its
text; with ``reask_on_parse_failure`` the judge is asked once more for the verdict line.

Live, a judge's first judgment of an item goes alone, the others once it has an answer, so they
read their shared prefix from the provider's prompt cache (:func:`run`'s ``judge_by``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...engine import NOT_RUN, CallResult, Engine
from ...judging.candidates import judge_plan
from ...judging.control import style_record
from ...judging.items import GenericItem
from ...judging.records import NO_CALL, failure
from ...types import ChatRequest
from ..base import BenchmarkResult, PlannedCall
from .prepare import Options, Prepared, prepare
from .requests import Builder, reask_request
from .results import build, tidy_rows

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages"]

stages = ["baseline", "candidate", "judge"]

#: (candidate, item) flows in progress at once
FLOW_WINDOW = 512
#: the estimate's stand-in for an answer or a judge reply not written yet
_STANDIN = ("A stand-in of typical length for the estimate: the question is answered in a few sentences, "
            "with the reasoning that leads to the answer and a short conclusion.")


# -- estimate ------------------------------------------------------------------------------------
async def plan(prep: Prepared, engine: Engine) -> list[PlannedCall]:
    """Every call of the run; a judge request whose answers are not cached yet is built with a
    stand-in and marked inexact."""
    b = Builder(prep)
    reask = reask_request if prep.options.reask_on_parse_failure else None

    async def cached(req: ChatRequest) -> str | None:
        _, hit = await engine.lookup(req)
        return hit.text if hit is not None else None

    async def for_item(item: GenericItem) -> list[PlannedCall]:
        out: list[PlannedCall] = []
        base_exact = True
        if prep.baseline.answers is None:
            breq = b.answer_request(prep.baseline.name, item, "baseline")
            out.append(PlannedCall("baseline", breq))
            base = await cached(breq)
            base_exact = base is not None
        else:
            base = prep.baseline.answers.get(item.id)
        for c in prep.candidates:
            if c in prep.imported:
                answer, exact = prep.imported[c].get(item.id), True
                if answer is None:
                    continue  # a counted failure, no call
            else:
                creq = b.answer_request(c, item, "candidate")
                out.append(PlannedCall("candidate", creq))
                answer = await cached(creq)
                exact = answer is not None
            exact = exact and base_exact
            judged = answer if answer is not None else (base or item.reference or _STANDIN)
            for calls in b.panel_requests(item, judged, base or item.reference or _STANDIN).values():
                for _order, jreq in calls:
                    out += await judge_plan(jreq, exact=exact, cached=cached, parse=prep.parse, reask=reask,
                                            standin=_STANDIN)
        return out

    per_item = await asyncio.gather(*(for_item(item) for item in prep.items))
    return [pc for calls in per_item for pc in calls]


# -- run -----------------------------------------------------------------------------------------
def judgment(prep: Prepared, result: CallResult | None, *, model: str, judge: str, item: GenericItem, order: int,
             reasked: bool = False, length_diff: int | None = None, error_kind: str | None = None,
             error: str | None = None, repeat: int | None = None) -> dict[str, Any]:
    """One judgment record (Creation-MMBench's shape, ``task`` = ``category``): the candidate's
    score (the parser's score for B, negated in order 1), the verdict token and where the reply
    has it; or a failure with its kind.  ``result`` None: no judge call (``error_kind`` says why).
    ``repeat`` (with ``judge_repeats`` > 1 only): which repeat of the judgment it is."""
    reading = prep.parse(result.text) if result is not None and result.ok else None
    score = None
    if reading is not None:
        s = int(round(reading.value))
        score = s if order == 0 else -s
    ok = score is not None
    error_kind, error = failure(result, ok, error_kind=error_kind, error=error)
    category = item.category or "all"
    return {
        "model": model, "judge": judge, "index": item.id, "task": category, "category": category,
        "kind": "pairwise", "order": order, **({} if repeat is None else {"repeat": repeat}),
        "score": score, "ok": ok,
        "error_kind": error_kind, "error": error, "reasked": reasked,
        "length_diff": length_diff, "judge_text": result.text if result is not None else "",
        "verdict": reading.token if reading is not None else None,
        "span_start": reading.span[0] if reading is not None else None,
        "span_end": reading.span[1] if reading is not None else None,
    }


async def run(prep: Prepared, engine: Engine) -> BenchmarkResult:
    b = Builder(prep)
    o = prep.options
    cands, judges = prep.candidates, prep.spec.roles.panel
    n, orders = len(prep.items), len(b.orders())
    k = o.judge_repeats  # every judgment asked k times (repeat = the request's sample_index)
    st = engine.stats
    if prep.baseline.answers is None:
        st.plan("baseline", n)
    st.plan("candidate", n * len(prep.live))
    st.plan("judge", n * len(cands) * orders * len(judges) * k)

    answers: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    failed: list[str] = []
    not_run = 0
    baselines: dict[str, asyncio.Task] = {}
    first_replies: dict[tuple[str, str, str, int], str] = {}  # a re-asked judgment's first reply

    def record_answer(model: str, role: str, item: GenericItem, r: CallResult | None, text: str | None) -> None:
        answers.append({"model": model, "role": role, "index": item.id, "category": item.category or "all",
                        "ok": text is not None, "answer": text, "source": "live" if r is not None else "imported",
                        "error_kind": r.error_kind if r is not None else (None if text is not None else "no_answer"),
                        "error": r.error if r is not None else (None if text is not None else "no imported answer"),
                        "output_tokens": r.response.usage.output_tokens if r is not None and r.ok else None})

    async def baseline_answer(item: GenericItem) -> CallResult:
        r = await engine.call(b.answer_request(prep.baseline.name, item, "baseline"))
        if r.error_kind != NOT_RUN:
            record_answer(prep.baseline.name, "baseline", item, r, r.text if r.ok else None)
            if not r.ok:
                failed.append(f"baseline {prep.baseline.name} item {item.id}: {r.error}")
        return r

    def no_call(alias: str, item: GenericItem, kind: str, error: str) -> None:
        for judge in judges:
            for order in b.orders():
                for rep in range(k):
                    judgments.append(judgment(prep, None, model=alias, judge=judge, item=item, order=order,
                                              error_kind=kind, error=error, repeat=rep if k > 1 else None))
                    st.stage("judge").done += 1

    async def judge_one(order: int, req: ChatRequest, alias: str, item: GenericItem, diff: int,
                        answered: asyncio.Event | None = None) -> None:
        nonlocal not_run
        try:
            r = await engine.call(req)
        finally:
            if answered is not None:  # the item's other judgments may go (before any re-ask of this one)
                answered.set()
        rep = req.sample_index if k > 1 else None
        j = judgment(prep, r, model=alias, judge=req.model, item=item, order=order, length_diff=diff, repeat=rep)
        if r.ok and not j["ok"] and o.reask_on_parse_failure and not engine.stopping:
            st.plan("judge", 1, "judgments re-asked: the first reply had no verdict")
            r2 = await engine.call(reask_request(req, r.text))
            j2 = judgment(prep, r2, model=alias, judge=req.model, item=item, order=order, reasked=True,
                          length_diff=diff, repeat=rep)
            if j2["ok"] or r2.error_kind != NOT_RUN:
                if not req.sample_index:  # the report shows repeat 0's judgments
                    first_replies[(req.model, alias, item.id, order)] = r.text
                j = j2
        if j["error_kind"] == NOT_RUN:
            not_run += 1
            return
        if not r.ok:
            failed.append(f"{alias} item {item.id} order {order} (judge {req.model}): {r.error}")
        judgments.append(j)

    async def flow(alias: str, item: GenericItem) -> None:
        nonlocal not_run
        # the live baseline's answer: one task per item, shared by the candidates' flows
        base_call = asyncio.shield(baselines[item.id]) if item.id in baselines else None
        if alias in prep.imported:
            answer = prep.imported[alias].get(item.id)
            record_answer(alias, "candidate", item, None, answer)
        else:
            r = await engine.call(b.answer_request(alias, item, "candidate"))
            if r.error_kind == NOT_RUN:
                not_run += 1
                return
            answer = r.text if r.ok else None
            record_answer(alias, "candidate", item, r, answer)
            if not r.ok:
                failed.append(f"{alias} item {item.id} candidate: {r.error}")
                no_call(alias, item, "candidate_failed", f"the candidate's call failed: {r.error}")
                return
        if answer is None:  # not a failed call (a re-run would not mend it): the notes count them
            no_call(alias, item, "no_answer", "no imported answer")
            return
        if base_call is not None:
            br = await base_call
            if br.error_kind == NOT_RUN:
                not_run += 1
                return
            if not br.ok:
                no_call(alias, item, "baseline_failed", f"the baseline's call failed: {br.error}")
                return
            base = br.text
        else:
            base = prep.baseline.answers.get(item.id)
            if base is None:
                no_call(alias, item, "baseline_failed", "no baseline answer for this item")
                return
        diff = len(answer) - len(base)
        styles[(alias, item.id)] = style_record(answer, base)
        await asyncio.gather(*(judge_by(judge, calls, alias, item, diff)
                               for judge, calls in b.panel_requests(item, answer, base).items()))

    # (judge, item): that judge's first judgment of the item has an answer
    warm: dict[tuple[str, str], asyncio.Event] = {}
    styles: dict[tuple[str, str], dict[str, list[int]]] = {}  # both answers' style (the style control)

    async def judge_by(judge: str, calls: list[tuple[int, ChatRequest]], alias: str, item: GenericItem,
                       diff: int) -> None:
        """A judge's judgments of a candidate's answer.  Live, the judge's first judgment of an
        item goes alone and every other (its swapped order, the other candidates') once it has an
        answer, so they read the prefix they share with it (the instruction, the images, the
        question, and in order 0 the baseline's answer) from the provider's prompt cache; no
        prompt changes.  A judge in batch mode gets them all at once."""
        key = (judge, item.id)
        if prep.spec.models[judge].batch or key in warm:
            if key in warm:
                await warm[key].wait()
            await asyncio.gather(*(judge_one(order, req, alias, item, diff) for order, req in calls))
            return
        answered = warm[key] = asyncio.Event()
        (first_order, first), *rest = calls

        async def then(order: int, req: ChatRequest) -> None:
            await answered.wait()
            await judge_one(order, req, alias, item, diff)

        await asyncio.gather(judge_one(first_order, first, alias, item, diff, answered),
                             *(then(order, req) for order, req in rest))

    window = asyncio.Semaphore(FLOW_WINDOW)

    async def windowed(alias: str, item: GenericItem) -> None:
        async with window:
            await flow(alias, item)

    async with asyncio.TaskGroup() as tg:  # a run that must stop cancels every other flow at once
        if prep.baseline.answers is None:
            for item in prep.items:
                baselines[item.id] = tg.create_task(baseline_answer(item))
        for alias in cands:
            for item in prep.items:
                tg.create_task(windowed(alias, item))

    if prep.baseline.answers is not None:
        for item in prep.items:
            text = prep.baseline.answers.get(item.id)
            record_answer(prep.baseline.name, "baseline", item, None, text)
    rank = {it.id: i for i, it in enumerate(prep.items)}
    jrank = {j: i for i, j in enumerate(judges)}
    who = {m: i for i, m in enumerate([prep.baseline.name, *cands])}
    judgments.sort(key=lambda j: (jrank[j["judge"]], who[j["model"]], rank[j["index"]], j["order"], j.get("repeat", 0)))
    answers.sort(key=lambda a: (who[a["model"]], rank[a["index"]]))
    built = build(judgments, styles=styles, judges=judges, candidates=cands, options=o, no_call=NO_CALL, ensemble=o.ensemble, repeats=k,
                  labels=prep.labels)
    summary: dict[str, Any] = {
        "benchmark": "pairwise",
        "items": n,
        "candidates": cands,
        "imported": [c for c in cands if c in prep.imported],
        "baseline": {"name": prep.baseline.name, "source": prep.baseline.source},
        "judge": prep.spec.roles.judge,
        "judge_prompt": o.judge_prompt,
        "verdict": o.verdict,
        "orders": orders,
        "complete": not_run == 0,
        **built.summary,
    }
    return BenchmarkResult(summary=summary, tables={"answers": answers, "judgments": judgments, **built.tables},
                           failed_items=failed, not_run=not_run, display=built.display,
                           more_displays=built.more_displays, notes=list(prep.warnings),
                           report=lambda: _report(prep, answers, judgments, summary, first_replies),
                           tidy=tidy_rows(judgments))


def _report(prep: Prepared, answers, judgments, summary, first_replies):
    from .report import build_report  # imported when the report is written, not for an estimate

    if prep.options.judge_repeats > 1:  # each item shows repeat 0's replies
        judgments = [j for j in judgments if not j.get("repeat")]
    return build_report(prep, answers, judgments, summary, first_replies)
