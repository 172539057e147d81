"""criterion: does each answer meet a criterion?  The candidates answer the questions of a data
file; a judge reads each answer and ends its reply with PASS or FAIL; the figure is each
candidate's pass rate, with a bootstrap interval over the questions.  What every judge-heavy
benchmark shares comes from judgekit's judging core: the items, the prompt, the rate."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit import ChatRequest, Message
from judgekit.benchmarks.base import BenchmarkResult, PlannedCall, require_candidates
from judgekit.judging.items import Columns, GenericItem, load_items
from judgekit.judging.roles import require_judge
from judgekit.judging.template import read_template
from judgekit.judging.uncertainty import IntervalOptions, rate
from judgekit.report.doc import Block, Headline, Item, ReportDoc, text
from judgekit.report.tidy import tidy_row

stages = ["candidate", "judge"]
simulated = ".sim"  # the module beside this one: what judgekit's simulator answers as this judge

# shipped beside this file; its placeholders are checked, its hash is part of the cache key
PROMPT = read_template(Path(__file__).parent / "judge.txt", {"criterion", "question", "answer"})
VERDICT = re.compile(r"\b(PASS|FAIL)\b", re.IGNORECASE)


class Options(IntervalOptions):  # bootstrap_samples, bootstrap_seed, interval_level come with it
    criterion: str = "The answer is concise: it answers the question directly, with no padding."
    answer_max_tokens: int = 200


@dataclass
class Prepared:
    spec: Any
    options: Options
    items: list[GenericItem]  # .id, .question, .images (JSONL, JSON, CSV, TSV, parquet or hf:)


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    require_candidates(spec)
    require_judge(spec)
    return Prepared(spec, options, load_items(spec, Columns(), limit=limit))  # errors name file, row, column


def _answer_request(prep: Prepared, alias: str, item: GenericItem) -> ChatRequest:
    params = prep.spec.models[alias].params.gen_params()
    if params.max_tokens is None:
        params = dataclasses.replace(params, max_tokens=prep.options.answer_max_tokens)
    return ChatRequest(alias, (Message.user(*item.images, item.question),), params, stage="candidate",
                       item_id=item.id)


def _judge_request(prep: Prepared, item: GenericItem, answer: str) -> ChatRequest:
    judge = prep.spec.roles.judge
    prompt = PROMPT.render({"criterion": prep.options.criterion, "question": item.question, "answer": answer},
                           item.images)
    return ChatRequest(judge, (prompt,), prep.spec.models[judge].params.gen_params(),
                       stage="judge", item_id=item.id, prompt_hash=PROMPT.hash)


def read_verdict(reply: str) -> str | None:
    """The last PASS or FAIL in the reply, as written, or None when it has neither."""
    found = VERDICT.findall(reply or "")
    return found[-1] if found else None


async def plan(prep: Prepared, engine) -> list[PlannedCall]:
    """Every call: an answer not cached yet is stood in for by the question (an inexact estimate)."""
    calls = []
    for alias in prep.spec.roles.candidates:
        for item in prep.items:
            req = _answer_request(prep, alias, item)
            _, hit = await engine.lookup(req)
            calls.append(PlannedCall("candidate", req))
            judged = _judge_request(prep, item, hit.text if hit else item.question)
            calls.append(PlannedCall("judge", judged, exact=hit is not None))
    return calls


async def run(prep: Prepared, engine) -> BenchmarkResult:
    cands, judge = prep.spec.roles.candidates, prep.spec.roles.judge
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    not_run = 0
    for stage in stages:  # for the progress line: how many calls each stage makes
        engine.stats.plan(stage, len(cands) * len(prep.items))

    async def one(alias: str, item: GenericItem) -> None:
        nonlocal not_run
        answer = await engine.call(_answer_request(prep, alias, item))
        reply = await engine.call(_judge_request(prep, item, answer.text)) if answer.ok else answer
        if reply.error_kind == "not_run":  # the run was stopped (cost cap, Ctrl-C) before this call
            not_run += 1
            return
        if not reply.ok:
            failed.append(f"{alias} item {item.id}: {reply.error}")
        token = read_verdict(reply.text) if reply.ok else None
        verdict = token.upper() if token else None
        rows.append({"candidate": alias, "item": item.id, "question": item.question, "answer": answer.text,
                     "verdict": verdict, "token": token, "passed": verdict == "PASS" if verdict else None,
                     "error_kind": None if verdict else (reply.error_kind or "no_verdict"),
                     "judge_text": reply.text if answer.ok else ""})

    await asyncio.gather(*(one(a, it) for a in cands for it in prep.items))
    order = {it.id: i for i, it in enumerate(prep.items)}
    rows.sort(key=lambda r: (cands.index(r["candidate"]), order[r["item"]]))
    display = []
    for alias in cands:
        mine = [r for r in rows if r["candidate"] == alias]
        pr = rate({r["item"]: r["passed"] for r in mine if r["verdict"]}, prep.options, key=alias)
        display.append({"candidate": alias, "pass_rate": pr.value, "low": pr.low, "high": pr.high, "judged": pr.n,
                        "no_verdict": sum(1 for r in mine if not r["verdict"])})
    tidy = [tidy_row(item=r["item"], candidate=r["candidate"], judge=judge, kind="criterion",
                     value=None if r["passed"] is None else float(r["passed"]), verdict=r["verdict"],
                     ok=r["verdict"] is not None, error_kind=r["error_kind"], reasked=False,
                     judge_text=r["judge_text"]) for r in rows]
    summary = {"benchmark": "criterion", "criterion": prep.options.criterion, "items": len(prep.items),
               "judge": judge, "pass_rate": {d["candidate"]: d["pass_rate"] for d in display}}
    return BenchmarkResult(summary=summary, tables={"judgments": rows, "pass_rate": display}, failed_items=failed,
                           not_run=not_run, display=display, tidy=tidy, report=lambda: _report(prep, rows, display))


def _report(prep: Prepared, rows: list[dict], display: list[dict]) -> ReportDoc:
    doc = ReportDoc(title=f"criterion: {prep.options.criterion}", benchmark="criterion",
                    meta={"judge": prep.spec.roles.judge, "questions": str(len(prep.items))})
    doc.headline = [Headline(d["candidate"], "pass rate", d["pass_rate"], d["low"], d["high"],
                             judge=prep.spec.roles.judge, unit="%") for d in display]
    for it in prep.items:
        blocks = [Block("question", "question", [text(it.question)])]
        for r in (r for r in rows if r["item"] == it.id):
            blocks.append(Block("answer", r["candidate"], [text(r["answer"])]))
            blocks.append(Block("judgment", f"{prep.spec.roles.judge} on {r['candidate']}", [text(r["judge_text"])],
                                verdict=r["verdict"] or "no verdict", highlight=r["token"],
                                tone={"PASS": "good", "FAIL": "bad"}.get(r["verdict"] or ""),
                                status="ok" if r["verdict"] else "failed"))
        doc.items.append(Item(it.id, it.question, blocks))
    return doc
