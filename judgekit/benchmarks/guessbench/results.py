"""GuessBench's flow outcomes -> tables, the summary (Table 2 per extractor, the panel's ensemble
and agreement, intervals, AutoBencher) and the printed tables.

Tables (``judge``: the extractor; a panel's ensemble is ``ensemble`` in ``sets``):

- ``turns``: one row per (turn, extractor) with every raw reply, the extractor's extractions
  (JSON, each with its ``judge``), its vote, the reply its verdict is on (``final_reply``), its
  lower-cased reply (``extracted``), the guess after ``Answer:`` and whether the turn is right;
  the replies, retrievals and the review loop's stop are the turn's (the same on each row);
- ``sets``: one row per (model, approach, task, set, extractor) with the (carried-forward)
  correctness;
- ``retrievals``: the query -> image mapping of the run;
- ``summary``: Table 2 per (model, approach) with the intervals, one block per extractor and the
  ensemble (``judge`` column);
- ``comparisons``: the paired differences between candidates.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...judging.intervals import shown
from ...judging.multiplicity import adjust_summary, excludes_cell
from ...metrics.guessbench import autobencher
from ...plural import plural
from ..base import BenchmarkResult
from .panel import ENSEMBLE, SetVerdicts, ensemble_verdicts, filled, panel_summary
from .report import build_report
from .tidy import tidy_rows

if TYPE_CHECKING:
    from .flow import SetOutcome, TurnRecord
    from .prepare import Prepared

__all__ = ["build_result", "extraction_rates"]

_OUTCOMES = ("answer", "no_answer", "unparsed")


def _sets_row(key: dict[str, Any], gs, judge: str, vec: list[bool | None], task: str, turns_asked: int,
              error: str | None) -> dict[str, Any]:
    return {**key, "judge": judge, "answer": gs.answer, "letters": gs.letters, "short": gs.is_short,
            "correct": vec[0] if task == "static" else None,
            "correct_1": vec[0] if task == "dynamic" else None,
            "correct_2": vec[1] if task == "dynamic" else None,
            "correct_3": vec[2] if task == "dynamic" else None,
            "turns_asked": turns_asked, "error": error}


def _turn_rows(key: dict[str, Any], gs, rec: "TurnRecord", judges: list[str]) -> list[dict[str, Any]]:
    rows = []
    for i, j in enumerate(judges):
        rd = rec.readings.get(j)
        if i == 0 or rd is None:  # the steering extractor: the turn's own fields
            f = {"extracted": rec.extracted, "guess": rec.guess, "correct": rec.correct,
                 "extraction": rec.extraction_outcome, "votes": rec.votes, "vote_tied": rec.vote_tied,
                 "extractions": rec.extractions, "final_reply": rec.final_reply, "error": rec.error}
        else:
            f = {"extracted": rd.extracted, "guess": rd.guess, "correct": rd.correct, "extraction": rd.outcome,
                 "votes": rd.votes, "vote_tied": rd.vote_tied, "extractions": rd.extractions,
                 "final_reply": rd.final_reply, "error": rd.error or rec.error}
        rows.append({**key, "turn": rec.turn, "judge": j, "answer": gs.answer, "extracted": f["extracted"],
                     "guess": f["guess"], "correct": f["correct"], "extraction": f["extraction"], "stop": rec.stop,
                     "votes": json.dumps(f["votes"]) if f["votes"] is not None else None,
                     "vote_tied": f["vote_tied"], "replies": json.dumps(rec.replies),
                     "extractions": json.dumps(f["extractions"]), "final_reply": f["final_reply"],
                     "retrievals": json.dumps(rec.retrievals), "error": f["error"]})
    return rows


def extraction_rates(counts: dict[str, dict[str, int]], judges: list[str]) -> list[dict[str, Any]]:
    """Per extractor: its scoring extractions by outcome, failed calls, and the rates of unparsed
    replies (among the replies it gave) and of failed calls (among the calls made)."""
    out = []
    for j in judges:
        c = counts.get(j, {})
        replies = sum(c.get(k, 0) for k in _OUTCOMES)
        calls = replies + c.get("failed", 0)
        out.append({"judge": j, "calls": calls, **{k: c.get(k, 0) for k in (*_OUTCOMES, "failed")},
                    "unparsed_rate": c.get("unparsed", 0) / replies if replies else None,
                    "no_answer_rate": c.get("no_answer", 0) / replies if replies else None,
                    "failed_rate": c.get("failed", 0) / calls if calls else None})
    return out


def build_result(prep: "Prepared", outcomes: dict[tuple[str, str, str, str], "SetOutcome"],
                 not_run: int, blobs: Any = None) -> BenchmarkResult:
    """``blobs``: the engine's image store, where the report finds the retrieved images."""
    judges = list(prep.spec.roles.panel)
    panel = len(judges) > 1
    turns: list[dict[str, Any]] = []
    sets: list[dict[str, Any]] = []
    retrievals: list[dict[str, Any]] = []
    failed: list[str] = []
    verdicts: list[SetVerdicts] = []
    # judge -> (model, approach) -> outcome -> count, for Table 2's columns; judge -> outcome -> count
    ext_counts: dict[str, dict[tuple[str, str], dict[str, int]]] = {j: {} for j in judges}
    calls: dict[str, dict[str, int]] = {j: {} for j in judges}
    for alias, approach, task in prep.flows:
        for j in judges:
            ext_counts[j].setdefault((alias, approach), {k: 0 for k in _OUTCOMES})
        for gs in prep.sets:
            out = outcomes.get((alias, approach, task, gs.set_id))
            if out is None:
                continue
            key = {"model": alias, "approach": approach, "task": task, "set_id": gs.set_id}
            where = f"{alias} {approach} {task} set {gs.set_id}"
            if out.error:
                failed.append(f"{where}: {out.error}")
            for j, n in out.extraction_failures.items():
                calls[j]["failed"] = calls[j].get("failed", 0) + n
            sv = SetVerdicts(alias, approach, task, gs.set_id, gs.is_short,
                             {j: [t.readings[j].correct if j in t.readings else None for t in out.turns]
                              for j in judges}, failed=out.error is not None)
            verdicts.append(sv)
            for j in judges:
                vec = out.correct if j == judges[0] else filled(sv.verdicts[j], task, sv.failed)
                sets.append(_sets_row(key, gs, j, _carried(vec, task), task, len(out.turns), out.error))
            if panel:
                vec = filled(ensemble_verdicts(sv, judges), task, sv.failed)
                sets.append(_sets_row(key, gs, ENSEMBLE, _carried(vec, task), task, len(out.turns), out.error))
            for rec in out.turns:
                for j in judges:
                    rd = rec.readings.get(j)
                    if rd is None:
                        continue
                    if rd.outcome in _OUTCOMES:
                        ext_counts[j][(alias, approach)][rd.outcome] += 1
                    for e in rd.extractions:
                        if e["prompt"] == "extract" and e["outcome"] in _OUTCOMES:
                            calls[j][e["outcome"]] = calls[j].get(e["outcome"], 0) + 1
                    if rd.error and j != judges[0]:
                        failed.append(f"{where} turn {rec.turn}: {rd.error}")
                turns.extend(_turn_rows(key, gs, rec, judges))
                for r in rec.retrievals:
                    retrievals.append({**key, "turn": rec.turn, "round": r["round"], "query": r["query"],
                                       "status": r["status"], "sha256": r.get("sha256"), "url": r.get("url"),
                                       "page_url": r.get("page_url"), "title": r.get("title"),
                                       "source": r.get("source"), "error": r.get("error")})
                    if r["status"] == "error":
                        failed.append(f"{where} turn {rec.turn} retrieval of {r['query']!r}: {r.get('error')}")
    candidates = list(prep.spec.roles.candidates)
    figures = panel_summary(verdicts, judges, prep.options, candidates, ext_counts)
    summary: dict[str, Any] = {
        "benchmark": "guessbench",
        "sets": len(prep.sets),
        "candidates": candidates,
        "judge": prep.spec.roles.judge,
        "judges": judges,
        "retriever": prep.spec.roles.retriever,
        "tasks": list(prep.options.tasks),
        "approaches": list(prep.options.approaches),
        "complete": not_run == 0,
        **figures,
        "extraction": extraction_rates(calls, judges),
        "retrieval_outcomes": _count(r["status"] for r in retrievals),
    }
    # Holm over the run's comparisons, here so the printed table shows it (the runner would add it later)
    adjust_summary(summary, getattr(prep.options, "holm_adjust", True))
    notes = _notes(prep, figures, summary["extraction"], judges)
    if notes:
        summary["notes"] = notes
    summary["autobencher"] = _autobencher(prep, figures["results"])
    labelled = ([(j, figures["per_judge"][j]) for j in judges] + [(ENSEMBLE, figures["ensemble"]["results"])]
                if panel else [(judges[0], figures["results"])])
    display = [_display_row(r, j if panel else None) for j, rows in labelled for r in rows]
    summary_table = [{"judge": j, **r} for j, rows in labelled for r in rows]
    more = []
    if prep.options.bootstrap_samples:
        more.append((f"Accuracy, all sets, with {prep.options.interval_level:.0%} intervals",
                     [_interval_row(r, j if panel else None) for j, rows in labelled for r in rows]))
    if figures["comparisons"]:
        more.append(("Paired differences between candidates (percentage points, same sets)",
                     [_comparison_row(c) for c in figures["comparisons"]]))
    return BenchmarkResult(summary=summary, tables={"turns": turns, "sets": sets, "retrievals": retrievals,
                                                    "summary": summary_table,
                                                    "comparisons": figures["comparisons"]},
                           failed_items=failed, not_run=not_run, display=display, more_displays=more, notes=notes,
                           tidy=tidy_rows(turns),
                           report=lambda: build_report(prep, outcomes, summary, display, failed, blobs))


def _carried(vec: list[bool | None], task: str) -> list[bool | None]:
    from ...metrics.guessbench import carry_forward

    return vec if task == "static" else carry_forward(vec)


def _notes(prep: "Prepared", figures: dict[str, Any], rates: list[dict[str, Any]], judges: list[str]) -> list[str]:
    from .data import load_notes

    return load_notes(prep.sets, prep.example) + _run_notes(prep, figures, rates, judges)


def _run_notes(prep: "Prepared", figures: dict[str, Any], rates: list[dict[str, Any]], judges: list[str]) -> list[str]:
    o = prep.options
    notes = []
    if o.bootstrap_samples:
        notes.append(f"[lo, hi]: {o.interval_level:.0%} percentile bootstrap intervals over the build sets "
                     f"({o.bootstrap_samples} resamples, seed {o.bootstrap_seed})")
    if len(judges) > 1:
        notes.append(f"extractor panel: {', '.join(judges)}; the first, {judges[0]}, steers the flows (a dynamic set "
                     f"stops when it calls a guess right, its reply is the previous guess the next attempt quotes, "
                     f"it reads the image-retrieval rounds' queries); the others read the same replies, so their "
                     f"dynamic #2/#3 count a guess {judges[0]} stopped at as the last one")
        notes.append(f"ensemble: {figures['ensemble']['rule']}, {figures['ensemble']['description']}")
        for a in figures["agreement"]:
            alpha = a["krippendorff_alpha"]
            full = a["full_agreement"]
            notes.append(f"agreement ({a['model']}, {a['items']} turns): Krippendorff's alpha (nominal) "
                         f"{'-' if alpha is None else f'{alpha:.3f}'}, all extractors agree on "
                         f"{'-' if full is None else f'{full:.1%}'}")
    for r in rates:
        if r["calls"]:
            notes.append(f"extractor '{r['judge']}': {plural(r['calls'], 'extraction')}, {r['unparsed']} unparsed, "
                         f"{r['no_answer']} 'No Answering', {r['failed']} failed")
    return notes


def _count(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _autobencher(prep: "Prepared", rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Difficulty, separability and novelty over the run's candidates (static and dynamic #3
    accuracy of ``autobencher_approach``); None with fewer than two candidates."""
    approach = prep.options.autobencher_approach
    out: dict[str, Any] = {"approach": approach}
    for task_key in ("static_all", "dynamic_3_all"):
        acc = {r["model"]: r[task_key] / 100.0 for r in rows
               if r["approach"] == approach and r.get(task_key) is not None}
        if len(acc) >= 2:
            out[task_key] = autobencher(acc, prep.earlier_csv)
    return out if len(out) > 1 else None


_APPROACH_NAMES = {"cot": "CoT", "no_cot": "w/o CoT", "one_shot": "One-shot",
                   "self_consistency": "Self-Consistency", "self_refine": "Self-Refine",
                   "image_retrieval": "Image Retrieval", "image_only": "Image Only",
                   "hint_only": "Hint Only"}


def _display_row(r: dict[str, Any], judge: str | None) -> dict[str, Any]:
    """A row of the printed table, shaped like the paper's Table 2."""
    row: dict[str, Any] = {} if judge is None else {"judge": judge}
    row.update({"model": r["model"], "approach": _APPROACH_NAMES.get(r["approach"], r["approach"])})
    for key, title in _ATTEMPT_TITLES:
        for split, s in (("short", "S"), ("long", "L"), ("all", "All")):
            v = r.get(f"{key}_{split}")
            row[f"{title} {s}"] = "-" if v is None else f"{v:.1f}"
    na, un = r.get("extraction_no_answer"), r.get("extraction_unparsed")
    row["no answer"] = "-" if na is None else na + un
    row["failed"] = r.get("failed_static", 0) + r.get("failed_dynamic", 0)
    return row


def _interval_row(r: dict[str, Any], judge: str | None) -> dict[str, Any]:
    """A row of the printed table of the headline accuracies (all sets) with their intervals."""
    row: dict[str, Any] = {} if judge is None else {"judge": judge}
    row.update({"model": r["model"], "approach": _APPROACH_NAMES.get(r["approach"], r["approach"])})
    for key, title in _ATTEMPT_TITLES:
        col = f"{key}_all"
        row[title] = shown(r.get(col), r.get(f"{col}_ci_low"), r.get(f"{col}_ci_high"))
    return row


_ATTEMPT_TITLES = (("static", "Static"), ("dynamic_1", "Dyn #1"), ("dynamic_2", "Dyn #2"), ("dynamic_3", "Dyn #3"))


def _comparison_row(c: dict[str, Any]) -> dict[str, Any]:
    return {"judge": c["judge"], "approach": _APPROACH_NAMES.get(c["approach"], c["approach"]),
            "accuracy": c["metric"], "a": c["a"], "b": c["b"], "sets": c["items"],
            "a - b": shown(c["difference"], c["ci_low"], c["ci_high"]),
            **excludes_cell(c)}
