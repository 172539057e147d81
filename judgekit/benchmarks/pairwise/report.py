"""The generic pairwise benchmark's report document (:class:`~judgekit.report.doc.ReportDoc`):
Creation-MMBench's headline and charts (Reward and Win Rate with their intervals per candidate,
by the first judge and a panel's ensemble; per category; verdict shares; judge behaviour) from
the same results rows, the tables without VFS, and one item per question: its images and text,
the reference and criteria, the baseline's answer, each candidate's answer and each judge's
reply in each order with the verdict the parser read highlighted where it read it.

The figures every benchmark shares (panel, agreement, paired comparisons, cost) are added by
:func:`judgekit.report.run_report.write_run_report`, not here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.items import GenericItem
from ...judging.control import controlled_report_table
from ...judging.report import charts, headline, spread_tables
from ...judging.report_items import (ORDER_LABEL, by_candidate_and_item, item_score, judgment_flags,
                                      judgment_head)
from ...judging.human_agreement import report_tables
from ...report.doc import Block, Item, ReportDoc, Table, image, text
from .results import _ordered, behaviour_display, display_row

__all__ = ["ORDER_LABEL", "build_report", "judgment_blocks"]

#: why a judgment was made without a judge call, as its block says
_NO_CALL = {"candidate_failed": "no judge call: the candidate's call failed",
            "baseline_failed": "no judge call: no baseline answer",
            "no_answer": "no judge call: no imported answer for this item"}


def tables(summary: Mapping[str, Any]) -> list[Table]:
    judges = list(summary.get("judges") or [])
    first = summary.get("results") or []
    out = []
    if first:
        rows = [display_row(r) for r in _ordered(first, list(summary.get("candidates") or []))]
        out.append(Table("Results per category" + (f", judged by {judges[0]}" if judges else ""), rows,
                         note="+2/+1/0/-1/-2: verdict counts for the candidate against the baseline, both orders "
                              "pooled; fail: judgments with no verdict (left out of Reward and Win Rate)"))
    controlled = controlled_report_table(summary)
    if controlled is not None:
        out.append(controlled)
    if summary.get("judge_behaviour"):
        out.append(Table("Judge behaviour", [behaviour_display(b) for b in summary["judge_behaviour"]]))
    out += spread_tables(summary)
    out += report_tables(summary)
    return out


# -- items ---------------------------------------------------------------------------------------
def _tone(score: int | None) -> str | None:
    return None if score is None else "good" if score > 0 else "bad" if score < 0 else "neutral"


def _highlight(reply: str, start: int, end: int) -> str | None:
    """The text to mark for a verdict read at ``reply[start:end]``: the page marks a highlight's
    last occurrence, so a token that occurs again later (a regex's one-letter verdict) is widened
    to its line."""
    token = reply[start:end]
    if not token or reply.rfind(token) == start:
        return token or None
    lo = reply.rfind("\n", 0, start) + 1
    hi = reply.find("\n", end)
    line = reply[lo:len(reply) if hi < 0 else hi]
    return line if reply.rfind(line) == lo else token


def judgment_blocks(j: Mapping[str, Any], group: str, first_reply: str | None = None) -> list[Block]:
    """The blocks of one judgment record: the judge's reply with the verdict read and the place
    it was read from highlighted (and, for a re-ask, the first reply before it)."""
    label, meta, out = judgment_head(j, j["judge"], group, first_reply, length_note="candidate - baseline")
    reply = j.get("judge_text") or ""
    score, highlight = j.get("score"), None
    if score is not None:
        verdict = f"{j.get('verdict')} -> " + (f"{score:+d} for the candidate" if score else "0 (tie)")
        if j.get("span_start") is not None:
            highlight = _highlight(reply, j["span_start"], j["span_end"])
        status = "ok"
    elif j.get("error_kind") in _NO_CALL:
        return out + [Block("judgment", label, [text(_NO_CALL[j["error_kind"]])], group=group, verdict="no verdict",
                            status="skipped", meta=meta)]
    elif j.get("error"):
        verdict, status = "no verdict", "failed"
        reply_parts = [text(f"call failed: {j['error']}")] + ([text(reply)] if reply else [])
        return out + [Block("judgment", label, reply_parts, group=group, verdict=verdict, status=status, meta=meta)]
    else:
        verdict, status = "no verdict (the reply does not parse)", "failed"
    out.append(Block("judgment", label, [text(reply)], group=group, verdict=verdict, highlight=highlight,
                     tone=_tone(score), status=status, meta=meta))
    return out


def _question_block(item: GenericItem) -> Block:
    parts = [image(data=im.data, caption=f"image {k + 1}") for k, im in enumerate(item.images)]
    return Block("question", "question", [*parts, text(item.question)], meta={"row": str(item.row)})


def _answer_block(label: str, a: Mapping[str, Any] | None, kind: str = "answer",
                  group: str | None = None) -> Block:
    if a is None:
        return Block(kind, label, [text("not run")], group=group, status="skipped")
    if a.get("ok"):
        meta = {"source": str(a.get("source"))}
        if a.get("output_tokens") is not None:
            meta["output tokens"] = str(a["output_tokens"])
        return Block(kind, label, [text(a.get("answer"))], group=group, status="ok", meta=meta)
    why = a.get("error") or "no answer"
    return Block(kind, label, [text(f"no answer: {why}")], group=group, status="failed",
                 meta={"error kind": str(a.get("error_kind"))})


def build_items(prep: Any, answers: Sequence[Mapping[str, Any]], judgments: Sequence[Mapping[str, Any]], *,
                judges: Sequence[str], first_replies: Mapping[tuple, str] | None = None) -> list[Item]:
    """One :class:`Item` per question, in the data's order."""
    first_replies = first_replies or {}
    candidates = prep.candidates
    ans, by_item, sums = by_candidate_and_item(answers, judgments, judges)
    rank = {j: k for k, j in enumerate(judges)}
    out = []
    for item in prep.items:
        blocks = [_question_block(item)]
        ref = [text(f"{name}:\n{v}") for name, v in (("Reference answer", item.reference), ("Criteria", item.criteria))
               if v]
        if ref:
            blocks.append(Block("reference", "reference and criteria", ref))
        blocks.append(_answer_block(f"baseline: {prep.baseline.describe()}", ans.get((prep.baseline.name, item.id)),
                                    kind="baseline"))
        flags: list[str] = []
        for alias in candidates:
            a = ans.get((alias, item.id))
            blocks.append(_answer_block(alias, a, group=alias))
            if a is None:
                flags.append("not run")
            elif not a.get("ok"):
                flags.append("no answer")
            own = sorted(by_item.get((alias, item.id), []), key=lambda j: (rank.get(j["judge"], len(rank)), j["order"]))
            for j in own:
                first = first_replies.get((j["judge"], alias, item.id, j["order"])) if j.get("reasked") else None
                blocks += judgment_blocks(j, alias, first)
                flags += judgment_flags(j)
        out.append(Item(id=item.id, title=(item.question.splitlines() or [item.id])[0][:80],
                        tags={"category": item.category or "all"}, flags=list(dict.fromkeys(flags)),
                        blocks=blocks, score=item_score(sums, item.id, candidates)))
    return out


def build_report(prep: Any, answers: Sequence[Mapping[str, Any]], judgments: Sequence[Mapping[str, Any]],
                 summary: Mapping[str, Any], first_replies: Mapping[tuple, str] | None = None) -> ReportDoc:
    """The run's report document (see the module docstring)."""
    spec, o = prep.spec, prep.options
    candidates = list(prep.candidates)
    judges = list(summary.get("judges") or spec.roles.panel)
    meta = {
        "data": str(spec.data), "items": str(len(prep.items)), "candidates": ", ".join(candidates),
        "baseline": prep.baseline.describe(),
        "judge prompt": f"{o.judge_prompt} (verdict parser {o.verdict})",
        "orders": "both (the swapped score negated, pooled)" if o.both_orders else "baseline as A only",
        "re-ask on parse failure": "yes" if o.reask_on_parse_failure else "no",
    }
    if prep.imported:
        meta["imported answers"] = ", ".join(prep.imported)
    if prep.warnings:
        meta["data warnings"] = f"{len(prep.warnings)}: " + "; ".join(prep.warnings[:3])
    items = build_items(prep, answers, judgments, judges=judges, first_replies=first_replies)
    return ReportDoc(title=f"Pairwise: {spec.name}", benchmark="pairwise", meta=meta,
                     headline=headline(summary, candidates), charts=charts(summary, candidates),
                     tables=tables(summary), items=items,
                     items_note="every question of the run: its images, the baseline's and each candidate's answer, "
                                "and every judge's reply in each order, the verdict read highlighted")
