"""Creation-MMBench's report document (:class:`~judgekit.report.doc.ReportDoc`), built from what
the run already holds: the prepared items (questions, images, the baseline's answers), the
candidates' answers and every judgment record (each judge's full reply), and the results
:mod:`.results` built.

* headline and charts: the judging core's (:mod:`judgekit.judging.report`): Reward, Win Rate and
  VFS overall per candidate; each figure per category with interval whiskers, the verdict shares,
  each judge's overall figures and behaviour;
* tables: the results per category, each judge's behaviour, Table 4's human alignment (when the
  run has human ratings);
* items (:mod:`.report_items`): one per question, with its images, the baseline's answer, each
  candidate's answer and every judge's pairwise and VFS replies in both orders, the parsed
  verdict highlighted in the reply it was read from; failed calls, parse failures and re-asks
  flagged.

The figures every benchmark shares (panel, agreement, paired comparisons, deviations, cost) are
added by :func:`judgekit.report.run_report.write_run_report`, not here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.control import controlled_report_table
from ...judging.report import charts, headline, spread_tables
from ...judging.results import behaviour_display, display_row
from ...judging.human_agreement import report_tables
from ...report.doc import ReportDoc, Table
from .report_items import build_items

__all__ = ["build_report", "tables"]


# -- tables ----------------------------------------------------------------------------------------
def tables(summary: Mapping[str, Any]) -> list[Table]:
    judges = list(summary.get("judges") or [])
    first = summary.get("results") or []
    out = []
    if first:
        cands = list(dict.fromkeys([*(summary.get("candidates") or []), *(r["model"] for r in first)]))
        shown = [r for r in first if r.get("level") in ("overall", "category")]  # each model: overall first
        shown.sort(key=lambda r: (cands.index(r["model"]), r["level"] != "overall", r["group"]))
        rows = [display_row(r) for r in shown]
        out.append(Table("Results per category" + (f", judged by {judges[0]}" if judges else ""), rows,
                         note="as the paper's Tables 2 and 5; +2/+1/0/-1/-2: verdict counts, both orders pooled"))
    controlled = controlled_report_table(summary)
    if controlled is not None:
        out.append(controlled)
    if summary.get("judge_behaviour"):
        out.append(Table("Judge behaviour", [behaviour_display(b) for b in summary["judge_behaviour"]]))
    out += spread_tables(summary)
    if summary.get("human_alignment"):
        out.append(Table("Human alignment (Table 4)", [_alignment_row(r) for r in summary["human_alignment"]],
                         note="the judges' pairwise scores against the mean human rating: MAE (lower is better) "
                              "and consistency % (|judge - human| <= 1); dual: both orders' mean, single: the "
                              "baseline-first order alone"))
    if summary.get("human_human"):
        out.append(Table("Human-human alignment (Table 7)",
                         [_human_row(r) for r in summary["human_human"]],
                         note="each human rater's rating against the mean of the other raters' on the same item "
                              "(the supplement's Table 7, from the ratings file)"))
    out += report_tables(summary)
    return out


def _human_row(r: Mapping[str, Any]) -> dict[str, Any]:
    """A Table 7 human row on the page (its single-evaluation columns)."""
    mae, cons = r["single_mae"], r["single_consistency"]
    return {"rater": r["judge"], "model": r["model"], "items": r["single_items"],
            "MAE": "-" if mae is None else round(mae, 3), "consistency %": "-" if cons is None else round(cons, 1)}


def _alignment_row(r: Mapping[str, Any]) -> dict[str, Any]:
    def num(v, d=3):
        return "-" if v is None else round(v, d)
    return {"judge": r["judge"], "model": r["model"], "items": r["items"],
            "dual MAE": num(r.get("dual_mae")), "dual consistency %": num(r.get("dual_consistency"), 1),
            "single MAE": num(r.get("single_mae")), "single consistency %": num(r.get("single_consistency"), 1)}


# -- the document --------------------------------------------------------------------------------
def build_report(prep: Any, answers: Sequence[Mapping[str, Any]], judgments: Sequence[Mapping[str, Any]],
                 summary: Mapping[str, Any], first_replies: Mapping[tuple, str] | None = None,
                 descriptions: Mapping[str, Any] | None = None) -> ReportDoc:
    """The run's report document (see the module docstring).  ``first_replies``: a re-asked
    judgment's first reply by (judge, candidate, index, kind, order); ``descriptions``: the
    Creation-MMBench-TO describer's call result (a CallResult) by item index."""
    spec, o = prep.spec, prep.options
    candidates = list(spec.roles.candidates)
    judges = list(summary.get("judges") or spec.roles.panel)
    meta = {
        "data": str(spec.data), "items": str(len(prep.items)),
        "candidates": ", ".join(candidates),
        "baseline": "GPT-4o's answers in the data (reference_answer_by_gpt4o)",
        "orders": "both (dual evaluation, pooled)" if o.dual else "baseline as A only",
        "judgments": ", ".join(k for k, on in (("pairwise", o.pairwise), ("VFS", o.vfs)) if on) or "none",
        "re-ask on parse failure": "yes" if o.reask_on_parse_failure else "no (as the reference)",
    }
    if o.text_only:
        meta["variant"] = f"Creation-MMBench-TO (describer {spec.roles.describer}, {o.description} description)"
    if prep.unknown_tasks:
        meta["unknown tasks"] = ", ".join(sorted(prep.unknown_tasks))
    if prep.warnings:
        meta["data warnings"] = f"{len(prep.warnings)}: " + "; ".join(prep.warnings[:3])
    if o.judge_repeats > 1:
        meta["judge repeats"] = f"{o.judge_repeats} (each item shows repeat 0's replies)"
        judgments = [j for j in judgments if not j.get("repeat")]
    items = build_items(prep.items, answers, judgments, candidates=candidates, judges=judges,
                        first_replies=first_replies, counted_failure=o.failed_answer_counts_as_failure,
                        descriptions=descriptions, describer=spec.roles.describer)
    return ReportDoc(title=f"Creation-MMBench: {spec.name}", benchmark="creation_mmbench", meta=meta,
                     headline=headline(summary, candidates), charts=charts(summary, candidates),
                     tables=tables(summary), items=items,
                     items_note="every question of the run: its images, the baseline's and each candidate's "
                                "answer, and every judge's reply in both orders")
