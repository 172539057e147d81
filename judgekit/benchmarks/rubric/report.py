"""The rubric benchmark's report document (:class:`~judgekit.report.doc.ReportDoc`).

* headline: each candidate's mean score with its interval, and its share of the scale, by the
  first judge and, for a panel, by the ensemble;
* charts: the mean score per category with interval whiskers; the score distribution (shares of
  the valid scores, high to low, per candidate and judge); for a panel each judge's overall mean;
* tables: the results per category (per judge and the ensemble);
* items: one per question: its images and text, the rubric (the item's criteria or the global
  one), the reference answer, each candidate's answer and every judge's reply with the score it
  was read from highlighted; failed calls, parse failures and re-asks flagged.

The shared sections (paired comparisons, agreement, cost) are added by
:func:`judgekit.report.run_report.write_run_report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.report import figure_series, headline_rows, interval_note, rows_by_judge
from ...judging.human_agreement import report_tables
from ...report.doc import Block, Chart, Headline, Item, ReportDoc, Series, Table, image, text
from .results import ALL, ENSEMBLE_JUDGE, display_row, spread_display

__all__ = ["build_report", "headline", "charts", "tables", "build_items"]


def _row(rows: Sequence[Mapping[str, Any]], model: str, level: str = "overall", group: str = ALL):
    return next((r for r in rows if r["model"] == model and r["level"] == level and r["group"] == group), None)


def _scale_text(summary: Mapping[str, Any]) -> str:
    low, high = summary.get("scale") or (1, 10)
    return f"{low:g}-{high:g}"


def headline(summary: Mapping[str, Any], candidates: Sequence[str]) -> list[Headline]:
    out = []
    for judge, rows in headline_rows(summary).items():
        for c in candidates:
            r = _row(rows, c)
            if r is None:
                continue
            out.append(Headline(c, f"Score ({_scale_text(summary)})", r["score"], r["score_ci_low"],
                                r["score_ci_high"], judge=judge))
            out.append(Headline(c, "% of scale", r["pct"], r["pct_ci_low"], r["pct_ci_high"], judge=judge, unit="%"))
    return out


def charts(summary: Mapping[str, Any], candidates: Sequence[str]) -> list[Chart]:
    rows = rows_by_judge(summary)
    judges = list(summary.get("judges") or [])
    if not judges:
        return []
    low, high = summary.get("scale") or (1, 10)
    first = rows[judges[0]]
    cats = sorted({r["group"] for r in first if r["level"] == "category"})
    groups = ["Overall", *cats]
    out = []
    series = []
    for c in candidates:
        per = [_row(first, c)] + [_row(first, c, "category", g) for g in cats]
        series.append(figure_series(c, per, "score"))
    if any(v is not None for s in series for v in s.values):
        out.append(Chart("Mean score per category", groups, series, unit="", range=(float(low), float(high)),
                         note=f"judged by {judges[0]}; scale {_scale_text(summary)}; whiskers: "
                              f"{interval_note(summary)}"))
    bins = list(summary.get("bins") or [])
    dist = summary.get("distribution") or {}
    bars: list[str] = []
    shares: dict[str, list[float]] = {b: [] for b in bins}
    fails = []
    for judge in judges[:1] + ([*judges[1:], ENSEMBLE_JUDGE] if len(judges) > 1 else []):
        for c in candidates:
            counts = (dist.get(judge) or {}).get(c)
            r = _row(rows.get(judge, []), c)
            if not counts or r is None:
                continue
            valid = sum(counts.values())
            bars.append(c if len(judges) == 1 else f"{c} · {judge}")
            for b in bins:
                shares[b].append(100.0 * counts.get(b, 0) / valid if valid else 0.0)
            if r["fail"]:
                fails.append(f"{bars[-1]} {r['fail']}")
    if bars and bins:
        out.append(Chart("Score distribution", bars, [Series(b, v) for b, v in shares.items()], kind="stacked",
                         unit="%", palette="diverging", range=(0.0, 100.0),
                         note="share of the valid scores, high to low (a score between whole numbers counts "
                              "toward the nearest); no score (fail): " + ("; ".join(fails) if fails else "none")))
    if len(judges) > 1:
        per = [figure_series(j, [_row(rows[j], c) for c in candidates], "score") for j in rows]
        out.append(Chart("Overall mean score per judge", list(candidates), per, range=(float(low), float(high)),
                         note=f"each judge and the ensemble (mean of the judges' valid scores); whiskers: "
                              f"{interval_note(summary)}"))
    return out


def tables(summary: Mapping[str, Any]) -> list[Table]:
    out = []
    for judge, rows in rows_by_judge(summary).items():
        if rows:
            out.append(Table(f"Results per category, {'the ensemble' if judge == ENSEMBLE_JUDGE else judge}",
                             [display_row(r) for r in rows],
                             note=f"mean score on {_scale_text(summary)} [interval]; % of scale: (mean - low) / "
                                  "(high - low); n: valid scores, marked ! when the row's items are too few for "
                                  "the interval; fail: no score (call failed, reply unreadable, no answer)"))
    if summary.get("judge_repeats"):
        title, spread = spread_display(rows_by_judge(summary), summary["judge_repeats"])
        out.append(Table(title, spread, note="each judge's mean score on each repeat's judgments alone; SD and range "
                                             "across repeats (the judge's own sampling), beside the item-sampling "
                                             "interval of the results"))
    out += report_tables(summary)
    return out


# -- items -----------------------------------------------------------------------------------------
def _judgment_block(j: Mapping[str, Any], first_reply: str | None) -> list[Block]:
    reply = j.get("judge_text") or ""
    out = []
    if first_reply is not None:
        out.append(Block("judgment", f"{j['judge']} · first reply (no score read)", [text(first_reply)],
                         group=j["model"], status="failed", verdict="no score"))
    if j["ok"]:
        lo, hi = j["span"]
        out.append(Block("judgment", j["judge"], [text(reply)], group=j["model"], verdict=f"score {j['score']:g}",
                         highlight=reply[lo:hi] or j["token"], tone="neutral",
                         status="reasked" if j.get("reasked") else "ok"))
    else:
        what = {"parse_failure": "no score read", "no_answer": "no answer to grade",
                "candidate_failed": "the candidate's call failed"}.get(j["error_kind"], j["error_kind"] or "failed")
        parts = [text(reply)] if reply else [text(j.get("error") or what)]
        out.append(Block("judgment", j["judge"], parts, group=j["model"], verdict=what, status="failed",
                         meta={"error kind": str(j["error_kind"])}))
    return out


def build_items(prep: Any, answers: Sequence[Mapping[str, Any]], judgments: Sequence[Mapping[str, Any]],
                first_replies: Mapping[tuple, str] | None = None) -> list[Item]:
    first_replies = first_replies or {}
    cands, judges = prep.candidates, list(prep.spec.roles.panel)
    ans = {(a["model"], a["index"]): a for a in answers}
    jud = {(j["model"], j["index"], j["judge"]): j for j in judgments}
    out = []
    for it in prep.items:
        blocks = [Block("question", "question", [*(image(data=im.data) for im in it.images), text(it.question)])]
        rubric = it.criteria or prep.rubric
        if rubric:
            blocks.append(Block("note", "criteria" if it.criteria else "rubric", [text(rubric)]))
        if it.reference:
            blocks.append(Block("reference", "reference answer", [text(it.reference)]))
        flags, scores = [], []
        for c in cands:
            a = ans.get((c, it.id))
            if a is None:
                continue
            label = f"{c} (imported)" if a["imported"] else c
            blocks.append(Block("answer", label, [text(a["answer"] if a["ok"] else (a["error"] or "no answer"))],
                                group=c, status="ok" if a["ok"] else "failed"))
            for judge in judges:
                j = jud.get((c, it.id, judge))
                if j is None:
                    continue
                blocks += _judgment_block(j, first_replies.get((judge, c, it.id)))
                if not j["ok"]:
                    flags.append("failed")
                if j.get("reasked"):
                    flags.append("reasked")
                if judge == judges[0]:
                    scores.append(f"{c} {'–' if j['score'] is None else format(j['score'], 'g')}")
        tags = {"category": it.category or ALL}
        out.append(Item(it.id, it.question.splitlines()[0][:120] if it.question else it.id, blocks, tags=tags,
                        flags=flags, score=" · ".join(scores) or None))
    return out


def build_report(prep: Any, answers, judgments, summary: Mapping[str, Any],
                 first_replies: Mapping[tuple, str] | None = None) -> ReportDoc:
    spec, o = prep.spec, prep.options
    meta = {"data": str(spec.data), "items": str(len(prep.items)), "candidates": ", ".join(prep.candidates),
            "judge prompt": o.judge_prompt, "score parser": o.score, "scale": _scale_text(summary),
            "rubric": "per item (criteria column)" + (", else the global rubric" if prep.rubric else "")
            if any(it.criteria for it in prep.items) else ("global" if prep.rubric else "none"),
            "re-ask on parse failure": "yes" if o.reask_on_parse_failure else "no"}
    if prep.imported:
        meta["imported answers"] = ", ".join(prep.imported)
    return ReportDoc(title=f"Rubric: {spec.name}", benchmark="rubric", meta=meta,
                     headline=headline(summary, prep.candidates), charts=charts(summary, prep.candidates),
                     tables=tables(summary), items=build_items(prep, answers, judgments, first_replies),
                     items_note="every question of the run: its images, rubric and reference, each candidate's "
                                "answer and every judge's reply, the score highlighted where it was read")
