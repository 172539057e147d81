"""Creation-MMBench end to end: candidate answers, then pairwise and VFS judging in both orders.

Per candidate and item (each item's judging starts as soon as its answer exists):

1. candidate: the item's images, then the question (Creation-MMBench-TO: a describer model's
   description of the images replaces them, in the Fig. 30 TO template);
2. pairwise judge (Fig. 33, with the images): baseline ``reference_answer_by_gpt4o`` as A and the
   candidate as B, and again swapped (dual evaluation); the swapped score is negated;
3. VFS judge (Fig. 34, text only, the ground-truth variant when the item has one) on items with
   visual-factuality criteria, both orders; the swapped run's A score is the candidate's.

Both orders' judgments are pooled, as the reference does.

A panel (``roles.judges``): every judge makes every pairwise and VFS judgment, the same prompts
with its own model settings (and its own batch mode); the results per judge, the panel's
ensemble, the judges' agreement and behaviour and the intervals are built in :mod:`.results`.

Live, an item's judgments of a kind go close together, not all at once: the first (a forward
order) alone, every other one (its swapped order, the other candidates' orders) as soon as it has
an answer, so they read the prefix they share with it from the provider's prompt cache: the
instruction, the images and the question for every order, and the baseline answer and the
criteria too for another candidate's forward order.  No prompt's content changes.  A judge in
batch mode gets them all at once (a second wave would double the wait for the batches).  A judgment that does not parse (or
whose call failed) is a counted failure kept with its raw text; with ``reask_on_parse_failure``
the judge is asked once more (a separate cache entry, recorded as a re-ask).

By default the judging reproduces the authors' code (VLMEvalKit's ``vlmeval/dataset/creation.py``):
each answer reaches the judge as the reference's ``.xlsx`` prediction file returns it (cut at
32,767 characters, an empty one as ``nan``; :mod:`.prediction_file`), a candidate call that
failed is judged with the reference's failure message as its answer, and the VFS of the baseline
is reported next to the candidate's.  judgekit's own rules are options, each declared with
:func:`~judgekit.benchmarks.deviations.ours` and listed in ``summary.json`` when in force.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...engine import NOT_RUN, CallResult, Engine
from ...judging.control import style_record
from ...judging.pairwise import NO_VFS
from ...judging.records import failure
from ...parsers.creation import NO_OBJECTIVE, parse_verdict, parse_vfs
from ...types import ChatRequest
from ..base import BenchmarkResult, PlannedCall
from ..calls import planned_reask
from .data import CreationItem
from .prediction_file import FAIL_MSG
from .prepare import Options, Prepared, prepare
from .requests import _Builder, _reask_request
from .results import build
from .tidy import tidy_rows

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages"]

stages = ["describe", "candidate", "pairwise", "vfs"]

#: items (candidate x row) in progress at once
FLOW_WINDOW = 512


#: the estimate's stand-in for a judge reply not written yet (its length: a typical judgment)
_STANDIN_JUDGMENT = ("A stand-in judgment of typical length for the estimate: both responses are read against "
                     "the criteria, their strengths and weaknesses are weighed, and a verdict follows.")


# -- estimate ------------------------------------------------------------------------------------
async def plan(prep: Prepared, engine: Engine) -> list[PlannedCall]:
    """Every call of the run.  Requests that depend on an answer not cached yet are built with a
    stand-in (the baseline answer, the closest length we know) and marked inexact.  Items are
    planned concurrently so their cache lookups share queries."""
    b = _Builder(prep)

    async def cached_text(req: ChatRequest) -> str | None:
        _, hit = await engine.lookup(req)
        return hit.text if hit is not None else None

    async def for_item(item: CreationItem) -> list[PlannedCall]:
        out: list[PlannedCall] = []
        description, exact = None, True
        if prep.options.text_only:  # one description per item, shared by the candidates
            fewshot = None
            if prep.options.description == "query_specific":
                req = b.describe_requests(item, None)[0]
                out.append(PlannedCall("describe", req))
                fewshot = await cached_text(req)
                exact = fewshot is not None
            req = b.describe_requests(item, fewshot or "")[0]
            out.append(PlannedCall("describe", req, exact=exact))
            description = await cached_text(req)
            exact = exact and description is not None
            description = description if description is not None else item.reference_answer
        for alias in prep.spec.roles.candidates:
            creq = b.candidate_request(alias, item, description)
            out.append(PlannedCall("candidate", creq, exact=exact))
            answer = await cached_text(creq)
            judge_exact = exact and answer is not None
            judged = answer if answer is not None else item.reference_answer
            for calls in b.panel_requests(item, judged).values():  # every judge of the panel
                for kind, _order, jreq in calls:
                    out.append(PlannedCall(kind, jreq, exact=judge_exact))
                    if prep.options.reask_on_parse_failure:
                        out.extend(await _planned_reask(kind, jreq, judge_exact))
        return out

    async def _planned_reask(kind: str, jreq: ChatRequest, exact: bool) -> list[PlannedCall]:
        parse = parse_verdict if kind == "pairwise" else parse_vfs
        return await planned_reask(jreq, stage=kind, exact=exact, cached=cached_text,
                                   parses=lambda reply: parse(reply) is not None,
                                   reask=lambda req, reply: _reask_request(kind, req, reply), standin=_STANDIN_JUDGMENT)

    per_item = await asyncio.gather(*(for_item(item) for item in prep.items))
    return [pc for calls in per_item for pc in calls]


# -- run -----------------------------------------------------------------------------------------
def _judgment(kind: str, order: int, result: CallResult, alias: str, item: CreationItem,
              reasked: bool = False, *, judge: str | None = None, length_diff: int | None = None,
              repeat: int | None = None) -> dict[str, Any]:
    """One judgment record: the candidate's pairwise score (negated for the swapped order) or
    its VFS with the baseline's (``vfs_ref``), or a failure with its kind; ``judge`` made it,
    ``length_diff`` is the answers' length difference it saw (:meth:`_Builder.length_diff`);
    ``repeat`` (with ``judge_repeats`` > 1 only) which repeat of the judgment it is."""
    score = vfs = vfs_ref = None
    ok = False
    empty = None
    if result.ok:
        if kind == "pairwise":
            s = parse_verdict(result.text)
            if s is not None:
                score, ok = (s if order == 0 else -s), True
        else:
            pair = parse_vfs(result.text)
            if pair == NO_OBJECTIVE:  # an empty reply: left out of the VFS figures, as the reference
                vfs, empty = NO_VFS, "no_objective"
            elif pair is not None:
                a, b = pair
                vfs, vfs_ref = (b, a) if order == 0 else (a, b)
                ok = True
    error_kind, error = failure(result, ok, error_kind=empty)
    rec = {
        "model": alias,
        "judge": judge,
        "index": item.index,
        "task": item.task_name,
        "category": item.category,
        "kind": kind,
        "order": order,
        **({} if repeat is None else {"repeat": repeat}),
        "score": score,
        "vfs": vfs,
        "vfs_ref": vfs_ref,
        "ok": ok,
        "error_kind": error_kind,
        "error": error,
        "reasked": reasked,
        "length_diff": length_diff,
        "judge_text": result.text,
    }
    return rec


async def run(prep: Prepared, engine: Engine) -> BenchmarkResult:
    b = _Builder(prep)
    o = prep.options
    cands = prep.spec.roles.candidates
    n = len(prep.items)
    n_vf = sum(1 for it in prep.items if it.vf_criteria is not None)
    orders = 2 if o.dual else 1
    k = o.judge_repeats  # every judgment asked k times (repeat = the request's sample_index)
    judges = prep.spec.roles.panel
    panel = len(judges) > 1
    st = engine.stats
    if o.text_only:
        st.plan("describe", n * (2 if o.description == "query_specific" else 1))
    st.plan("candidate", n * len(cands))
    if o.pairwise:
        st.plan("pairwise", n * len(cands) * orders * len(judges) * k)
    if o.vfs:
        st.plan("vfs", n_vf * len(cands) * orders * len(judges) * k)

    answers: list[dict[str, Any]] = []
    judgments: list[dict[str, Any]] = []
    failed: list[str] = []
    not_run = 0
    descriptions: dict[str, asyncio.Task] = {}
    first_replies: dict[tuple[str, str, str, str, int], str] = {}  # a re-asked judgment's first reply

    async def describe(item: CreationItem) -> CallResult:
        reqs = b.describe_requests(item, None)
        fewshot = None
        if o.description == "query_specific":
            r = await engine.call(reqs[0])
            if not r.ok:
                return r
            fewshot = r.text
            reqs = b.describe_requests(item, fewshot)
        return await engine.call(reqs[0])

    async def judge_one(kind: str, order: int, req: ChatRequest, alias: str, item: CreationItem,
                        length_diff: int, answered: asyncio.Event | None = None) -> None:
        nonlocal not_run
        try:
            r = await engine.call(req)
        finally:
            if answered is not None:  # the next order may go (before any re-ask of this one)
                answered.set()
        judge = req.model
        rep = req.sample_index if k > 1 else None
        j = _judgment(kind, order, r, alias, item, judge=judge, length_diff=length_diff, repeat=rep)
        if r.ok and not j["ok"] and o.reask_on_parse_failure and not engine.stopping:
            st.plan(kind, 1, "judgments re-asked: the first reply had no verdict")
            r2 = await engine.call(_reask_request(kind, req, r.text))
            j2 = _judgment(kind, order, r2, alias, item, reasked=True, judge=judge, length_diff=length_diff,
                           repeat=rep)
            if j2["ok"] or r2.error_kind != NOT_RUN:
                if not req.sample_index:  # the report shows repeat 0's judgments
                    first_replies[(judge, alias, item.index, kind, order)] = r.text
                j = j2
        if j["error_kind"] == NOT_RUN:
            not_run += 1
            return
        if not r.ok:
            by = f" (judge {judge})" if panel else ""
            failed.append(f"{alias} item {item.index} {kind} order {order}{by}: {r.error}")
        judgments.append(j)

    async def flow(alias: str, item: CreationItem) -> None:
        nonlocal not_run
        description = None
        if o.text_only:
            t = descriptions.get(item.index)
            if t is None:
                t = descriptions[item.index] = asyncio.ensure_future(describe(item))
            d = await asyncio.shield(t)
            if not d.ok:
                if d.error_kind == NOT_RUN:
                    not_run += 1
                else:
                    failed.append(f"item {item.index} describe: {d.error}")
                return
            description = d.text
        r = await engine.call(b.candidate_request(alias, item, description))
        answers.append({"model": alias, "index": item.index, "task": item.task_name, "category": item.category,
                        "ok": r.ok, "answer": r.text, "error_kind": r.error_kind, "error": r.error,
                        "output_tokens": r.response.usage.output_tokens if r.ok else None})
        answer = r.text
        if not r.ok:
            if r.error_kind == NOT_RUN:
                not_run += 1
                return
            failed.append(f"{alias} item {item.index} candidate: {r.error}")
            if not o.failed_answer_counts_as_failure:
                # the reference's API wrapper returns its failure message, which is judged
                answer = FAIL_MSG
            else:
                # no answer to judge: every judgment of this item is a counted failure, never dropped
                for judge, calls in b.panel_requests(item, "").items():
                    for kind, order, req in calls:
                        judgments.append({"model": alias, "judge": judge, "index": item.index,
                                          "task": item.task_name, "category": item.category, "kind": kind,
                                          "order": order, **({"repeat": req.sample_index} if k > 1 else {}),
                                          "score": None, "vfs": None, "vfs_ref": None,
                                          "ok": False, "error_kind": "candidate_failed", "error": r.error,
                                          "reasked": False, "length_diff": None, "judge_text": ""})
                        st.stage(kind).done += 1
                return
        await judge_item(alias, item, answer)

    first_alone = {judge: _first_judgment_alone(prep, judge) for judge in judges}
    styles: dict[tuple[str, str], dict[str, list[int]]] = {}  # both answers' style (the style control)
    # (judge, item, kind): that judge's first judgment of the kind on the item has an answer
    warm: dict[tuple[str, str, str], asyncio.Event] = {}

    async def judge_item(alias: str, item: CreationItem, answer: str) -> None:
        styles[(alias, item.index)] = style_record(answer, item.reference_answer)
        diffs = {order: b.length_diff(item, answer, order) for order in b.orders()}
        await asyncio.gather(*(judge_by(judge, calls, alias, item, diffs)
                               for judge, calls in b.panel_requests(item, answer).items()))

    async def judge_by(judge: str, calls: list[tuple[str, int, ChatRequest]], alias: str, item: CreationItem,
                       diffs: dict[int, int]) -> None:
        """One judge's judgments of a candidate's answer."""
        if not first_alone[judge]:
            await asyncio.gather(*(judge_one(kind, order, req, alias, item, diffs[order]) for kind, order, req in calls))
            return
        kinds = dict.fromkeys(kind for kind, _, _ in calls)  # pairwise, vfs: each on its own
        await asyncio.gather(*(judge_kind(judge, kind, [(order, req) for k, order, req in calls if k == kind],
                                          alias, item, diffs) for kind in kinds))

    async def judge_kind(judge: str, kind: str, calls: list[tuple[int, ChatRequest]], alias: str,
                         item: CreationItem, diffs: dict[int, int]) -> None:
        """A judge's judgments of one kind on a candidate's answer: the judge's first one on the
        item (a forward order) alone, every other (its swapped order, other candidates' orders)
        once it has an answer.  Each judge has its own prompt cache, so each waits only for its own."""
        key = (judge, item.index, kind)
        answered = warm.get(key)
        if answered is not None:
            await answered.wait()
            await asyncio.gather(*(judge_one(kind, order, req, alias, item, diffs[order]) for order, req in calls))
            return
        answered = warm[key] = asyncio.Event()
        (first_order, first), *rest = calls

        async def then(order: int, req: ChatRequest) -> None:
            await answered.wait()
            await judge_one(kind, order, req, alias, item, diffs[order])

        await asyncio.gather(judge_one(kind, first_order, first, alias, item, diffs[first_order], answered),
                             *(then(order, req) for order, req in rest))

    # At most FLOW_WINDOW items in progress: enough to keep every bucket busy, few enough that
    # the work resumed in one event-loop step (a batch of cache answers, say) stays short.
    window = asyncio.Semaphore(FLOW_WINDOW)

    async def windowed(alias: str, item: CreationItem) -> None:
        async with window:
            await flow(alias, item)

    # a TaskGroup: when the run must stop (bad key), every other flow is cancelled at once
    async with asyncio.TaskGroup() as tg:
        for alias in cands:
            for item in prep.items:
                tg.create_task(windowed(alias, item))

    order_key = {it.index: i for i, it in enumerate(prep.items)}
    judge_key = {judge: i for i, judge in enumerate(judges)}
    judgments.sort(key=lambda j: (judge_key[j["judge"]], cands.index(j["model"]), order_key[j["index"]],
                                  j["kind"], j["order"], j.get("repeat", 0)))
    answers.sort(key=lambda a: (cands.index(a["model"]), order_key[a["index"]]))
    built = build(judgments, styles=styles, judges=judges, candidates=cands, options=o, human=prep.human, dual=o.dual,
                  raters=prep.raters, ensemble=o.ensemble, repeats=k,
                  labels=prep.labels)
    summary: dict[str, Any] = {
        "benchmark": "creation_mmbench",
        "items": n,
        "candidates": cands,
        "baseline_model": "gpt-4o",  # whose answers the candidates are judged against (the data's reference answers)
        "judge": prep.spec.roles.judge,
        "complete": not_run == 0,
        "unknown_tasks": sorted(prep.unknown_tasks),
        **built.summary,
    }
    return BenchmarkResult(summary=summary, tables={"answers": answers, "judgments": judgments, **built.tables},
                           failed_items=failed, not_run=not_run, display=built.display,
                           more_displays=built.more_displays, notes=list(prep.warnings), tidy=tidy_rows(judgments),
                           report=lambda: _report(prep, answers, judgments, summary, first_replies, descriptions))


def _report(prep: Prepared, answers, judgments, summary, first_replies, descriptions):
    from .report import build_report  # imported when the report is written, not for an estimate

    described = {index: t.result() for index, t in descriptions.items() if t.done() and not t.cancelled()}
    return build_report(prep, answers, judgments, summary, first_replies, described)


def _first_judgment_alone(prep: Prepared, judge: str | None = None) -> bool:
    """Whether a judge's (the first judge's by default) first judgment of a kind on an item goes
    alone, the others once it has an answer (see the module docstring): live, yes; a judge in
    batch mode gets them all at once."""
    return not prep.spec.models[judge or prep.spec.roles.judge].batch
