"""MMIE's outcomes -> tables, Tables 3-5 shaped results and the scorer-format export.

Every scorer of the panel (``prep.judges``) scores every answer; the figures across scorers are
built by :mod:`~judgekit.benchmarks.mmie.panel`.  What this writes:

``summary.json``
    ``judge`` (the first scorer) and ``judges`` (the panel); ``results``: the first scorer's Table 3
    rows (``category_table``'s keys, the counts of parse failures, call failures, dropped images and
    texts, skipped rows, and ``sa``/``pbl``/``msr``/``avg`` ``_ci_low``/``_ci_high``);
    ``intervals`` (method, samples, level, seed); ``comparisons`` (paired Avg. differences between
    systems, the first scorer's, and the ensemble's with a panel; each with ``judge``);
    ``alignment`` (Table 5: one row per scorer, and the ensemble's with a panel).  With two or more
    scorers also ``per_judge`` (scorer -> rows like ``results``), ``ensemble`` (rule, description,
    results) and ``agreement`` (Krippendorff's alpha per system and pooled).
CSVs
    ``scores`` (one row per system, item and scorer: ``judge``), ``categories`` / ``fields`` /
    ``distribution`` (per ``judge``, the ensemble's as ``judge = "ensemble"``, the distribution of
    whole scores only), ``comparisons``, ``alignment``, ``agreement`` (a panel's), ``answers`` and
    ``images`` (once per answer).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...judging.agreement import ENSEMBLE_RULES, ensemble_summary
from ...judging.intervals import shown
from ...report.numbers import DECIMALS, number
from ...judging.multiplicity import adjust_summary, excludes_cell
from ...metrics.mmie import field_table, score_distribution
from ...parsers.mmie import percent
from ...plural import plural
from ..base import BenchmarkResult
from .data import CATEGORY_CODES, Segment
from .panel import (
    ENSEMBLE,
    RULE,
    agreement_records,
    alignment_rows,
    category_rows,
    comparison_rows,
    ensemble_records,
    intervals_summary,
)
from .report import build_report
from .tidy import tidy_rows

if TYPE_CHECKING:
    from ...engine import Engine
    from .outcomes import Outcome, Prepared

__all__ = ["build_result", "EXPORT_NAME", "system_export_names"]

EXPORT_NAME = "answers_scorer_format.json"
SCORE = "score"  # the pipeline's scoring stage
#: the printed Table 3's columns: label -> figure
_COLUMNS = (("SA", "sa"), ("PBL", "pbl"), ("MSR", "msr"), ("Avg.", "avg"))


def _segments_json(segments: tuple[Segment, ...] | None) -> list[dict[str, Any]] | None:
    if segments is None:
        return None
    return [{"text": s.text, "image": None} if not s.is_image else {"text": None, "image": s.sha256}
            for s in segments]


def build_result(prep: "Prepared", engine: "Engine", outcomes: list["Outcome"]) -> BenchmarkResult:
    judges = list(prep.judges)
    panel = len(judges) > 1
    opts = prep.options
    names = [s.name for s in prep.systems]
    failed: list[str] = []
    scores, answers, images = [], [], []
    records: list[dict[str, Any]] = []  # every scorer's, as the category table reads them
    not_run = 0
    counts: dict[str, dict[str, dict[str, int]]] = {j: {} for j in judges}  # scorer -> system -> outcome -> n

    def bump(judge: str, system: str, outcome: str) -> None:
        c = counts[judge].setdefault(system, {})
        c[outcome] = c.get(outcome, 0) + 1

    for o in outcomes:
        it = o.item
        key = {"system": o.system, "id": it.id, "category": CATEGORY_CODES[it.category], "field": it.field}
        if o.aborted or any(jd.aborted for jd in o.judged.values()):
            not_run += 1
            continue
        if o.skipped:
            for j in judges:
                bump(j, o.system, "skipped")
                scores.append({**key, "judge": j, "score": None, "percent": None, "outcome": "skipped",
                               "raw_score": None, "images_attached": 0, "images_dropped": 0, "texts_dropped": 0,
                               "judge_reply": None, "error": None, "failed_stage": None, "skipped": o.skipped})
            continue
        if o.error:
            failed.append(f"{o.system}: item {it.id} ({o.stage}): {o.error}")
        for j in judges:
            jd = o.judged.get(j)
            parse = jd.parse if jd else None
            error, stage = o.error, o.stage
            if not error and jd is not None and jd.error:
                error, stage = jd.error, SCORE
                failed.append(f"{o.system}: item {it.id} ({SCORE}{', ' + j if panel else ''}): {jd.error}")
            outcome = parse.outcome if parse else ("failed" if error else None)
            if outcome:
                bump(j, o.system, outcome)
            score = parse.score if parse else None
            scores.append({**key, "judge": j, "score": score,
                           "percent": round(percent(score), 2) if score is not None else None,
                           "outcome": outcome, "raw_score": parse.raw if parse else None,
                           "images_attached": o.images_attached, "images_dropped": o.images_dropped,
                           "texts_dropped": o.texts_dropped, "judge_reply": jd.reply if jd else None,
                           "error": error, "failed_stage": stage, "skipped": None})
            if parse is not None or error is None:
                # scored or unparseable: a record; failed calls are listed above and retried next run
                records.append({"judge": j, "model": o.system, "id": it.id, "category": it.category,
                                "field": it.field, "score": score})
        answers.append({**key, "raw_answer": o.raw_answer,
                        "answer": json.dumps(_segments_json(o.answer), ensure_ascii=False) if o.answer else None,
                        "images": sum(1 for s in (o.answer or ()) if s.is_image)})
        for k, g in enumerate(o.images):
            images.append({**key, "position": k + 1, "description": g.description, "seed": g.seed,
                           "sha256": (g.image or {}).get("sha256"), "width": (g.image or {}).get("width"),
                           "height": (g.image or {}).get("height"), "error": g.error})

    # the answer's figures, the same under every scorer (one scores row per scorer and answer)
    first_rows = [r for r in scores if r["judge"] == judges[0]]
    dropped_by = {n: (sum(r["images_dropped"] for r in first_rows if r["system"] == n),
                      sum(r["texts_dropped"] for r in first_rows if r["system"] == n)) for n in names}

    def with_counts(rows: list[dict[str, Any]], scorers: list[str]) -> list[dict[str, Any]]:
        for row in rows:
            c: dict[str, int] = {}
            for j in scorers:  # the ensemble's: all its scorers' together
                for k, v in counts[j].get(row["model"], {}).items():
                    c[k] = c.get(k, 0) + v
            row["parse_missing"] = c.get("missing", 0)
            row["parse_not_a_number"] = c.get("not_a_number", 0)
            row["parse_out_of_range"] = c.get("out_of_range", 0)
            row["call_failures"] = c.get("failed", 0)
            row["images_dropped"], row["texts_dropped"] = dropped_by.get(row["model"], (0, 0))
            row["skipped"] = counts[judges[0]].get(row["model"], {}).get("skipped", 0)
        return rows

    mine = {j: [r for r in records if r["judge"] == j] for j in judges}
    per_judge = {j: with_counts(category_rows(mine[j], opts, j), [j]) for j in judges}
    cats = per_judge[judges[0]]
    fields = [{"judge": j, **r} for j in judges for r in field_table(mine[j])]
    dist = [{"judge": j, **r} for j in judges for r in score_distribution(mine[j])]
    comps = comparison_rows(mine[judges[0]], opts, judges[0], names)
    ens_recs: list[dict[str, Any]] = []
    ens_rows: list[dict[str, Any]] = []
    agree: list[dict[str, Any]] = []
    if panel:
        ens_recs = ensemble_records(records, judges)
        ens_rows = with_counts(category_rows(ens_recs, opts, ENSEMBLE, whole=False), judges)
        fields += [{"judge": ENSEMBLE, **r} for r in field_table(ens_recs, whole=False)]
        comps += comparison_rows(ens_recs, opts, ENSEMBLE, names, whole=False)
        agree = agreement_records(records, judges, names)

    align_rows: list[dict[str, Any]] = []
    if prep.human is not None:
        hs = prep.human_system
        per_scorer = {j: {r["id"]: r["score"] for r in scores if r["system"] == hs and r["judge"] == j}
                      for j in judges}
        if panel:
            ens = {r["id"]: r["score"] for r in ens_recs if r["model"] == hs}
            per_scorer[ENSEMBLE] = {i: ens.get(i) for i in per_scorer[judges[0]]}
        align_rows = alignment_rows(prep.human, hs, per_scorer)

    summary: dict[str, Any] = {
        "benchmark": "mmie",
        "items": len(prep.items),
        "skipped_unreadable": [dataclasses.asdict(s) for s in prep.skipped],
        "systems": [{"name": s.name, "kind": s.kind, "candidate": s.candidate, "generator": s.generator}
                    for s in prep.systems],
        "judge": prep.judge,
        "judges": judges,
        "answer_reading": "full" if opts.keep_full_answer else "reference",
        "image_cap": opts.image_cap,
        "complete": not_run == 0,
        "results": cats,
        "alignment": align_rows,
        "intervals": intervals_summary(opts),
        "comparisons": comps,
    }
    if panel:
        summary["per_judge"] = per_judge
        summary["ensemble"] = ensemble_summary(RULE, ens_rows)
        summary["agreement"] = agree
    # Holm over the run's comparisons, here so the printed table shows it (the runner would add it later)
    adjust_summary(summary, getattr(opts, "holm_adjust", True))
    by_scorer = [(j, per_judge[j]) for j in judges] + ([(ENSEMBLE, ens_rows)] if panel else [])
    categories = [{"judge": j, **r} for j, rows in by_scorer for r in rows]
    tables = {"scores": scores, "answers": answers, "images": images, "categories": categories, "fields": fields,
              "distribution": dist, "alignment": align_rows, "comparisons": comps}
    if panel:
        tables["agreement"] = [{**a, "judges": " ".join(a["judges"])} for a in agree]
    display, more, notes = displays(prep, by_scorer, fields, dist, comps, agree, align_rows, scores)

    def export(out_dir: Path) -> Path:
        return _export(out_dir / EXPORT_NAME, outcomes, judges[0])

    def export_system(name: str, file_name: str):
        return lambda out_dir: _export(out_dir / file_name, [o for o in outcomes if o.system == name], judges[0])

    writers = [export] + [export_system(n, f) for n, f in system_export_names(names).items()]
    return BenchmarkResult(summary=summary, tables=tables, failed_items=failed, not_run=not_run, display=display,
                           more_displays=more, notes=notes, writers=writers, tidy=tidy_rows(scores),
                           report=lambda: build_report(prep, engine, outcomes, summary, tables))


def displays(prep: "Prepared", by_scorer: list[tuple[str, list[dict[str, Any]]]], fields: list[dict[str, Any]],
             dist: list[dict[str, Any]], comps: list[dict[str, Any]], agree: list[dict[str, Any]],
             align_rows: list[dict[str, Any]], scores: list[dict[str, Any]]):
    """The printed tables and notes: Table 3 per scorer (and the ensemble) with the intervals,
    Table 4, the score counts, the paired comparisons, the scorers' agreement and Table 5."""
    opts = prep.options
    panel = len(by_scorer) > 1
    tag = (lambda j: {"scorer": j}) if panel else (lambda j: {})
    display = []
    for j, rows in by_scorer:
        for r in rows:
            display.append({**tag(j), "model": r["model"],
                            **{label: shown(r[f], r.get(f"{f}_ci_low"), r.get(f"{f}_ci_high"), 2)
                               for label, f in _COLUMNS},
                            "n": r["n"],
                            "parse failures": r["parse_missing"] + r["parse_not_a_number"] + r["parse_out_of_range"],
                            "failed": r["call_failures"], "images dropped": r["images_dropped"],
                            "texts dropped": r["texts_dropped"], "skipped": r["skipped"]})
    field_names = list(dict.fromkeys(str(r["field"]) for r in fields))
    by_field = []
    for j, rows in by_scorer:
        for r in rows:
            row: dict[str, Any] = {**tag(j), "model": r["model"]}
            for f in field_names:
                cell = next((x for x in fields if x["judge"] == j and x["model"] == r["model"]
                             and str(x["field"]) == f), None)
                row[f] = _p(cell["percent"]) if cell else "-"
            by_field.append(row)
    dist_rows = [{**tag(d["judge"]), **{k: v for k, v in d.items() if k != "judge"}} for d in dist]
    more = [("Per field (Table 4)", by_field), ("Score distribution (0-6)", dist_rows)]
    if comps:
        more.append(("Avg. differences between systems (paired bootstrap)",
                     [{**tag(c["judge"]), "A": c["a"], "B": c["b"], "items": c["items"],
                       "A - B": shown(c["difference"], c["ci_low"], c["ci_high"], 2),
                       **excludes_cell(c, "interval excludes 0")} for c in comps]))
    if agree:
        more.append(("Scorer agreement (Krippendorff's alpha, interval level)",
                     [{"system": a["system"], "alpha": _n(a["krippendorff_alpha"]),
                       "all scorers equal": _n(a["full_agreement"]), "items": a["items"]} for a in agree]))
    if align_rows:
        more.append(("Human alignment (Table 5)",
                     [{"system": a["system"], "scorer": a["scorer"], "items": a["items"], "scored": a["n"], "cosine": _n(a["cosine"]),
                       "MSE": _n(a["mse"]), "MAE": _n(a["mae"]), "Pearson": _n(a["pearson"])}
                      for a in align_rows]))
    judges = [j for j, _ in by_scorer if j != ENSEMBLE]
    if panel:
        notes = [(f"scorers: {', '.join(judges)}; {ENSEMBLE}: {ENSEMBLE_RULES[RULE]} for each answer; percent = "
                  f"mean score / 6 x 100; Avg. over all scored items")]
    else:
        notes = [f"scorer: {prep.judge}; percent = mean score / 6 x 100; Avg. over all scored items"]
    if opts.bootstrap_samples:
        notes.append(f"[low, high]: {opts.interval_level:.0%} percentile bootstrap interval over items "
                     f"({opts.bootstrap_samples} resamples, seed {opts.bootstrap_seed})")
    first = [r for r in scores if r["judge"] == judges[0]]
    dropped = sum(r["images_dropped"] for r in first)
    if opts.keep_full_answer and opts.image_cap is not None:
        notes.append(f"image cap {opts.image_cap}: {plural(dropped, 'image')} {'was' if dropped == 1 else 'were'} "
                     "not shown to the scorer "
                     f"(every answer text was)")
    elif not opts.keep_full_answer:
        texts = sum(r["texts_dropped"] for r in first)
        skipped = sum(1 for r in first if r["outcome"] == "skipped")
        if texts or dropped:
            notes.append(f"as the reference reads answers (until question and answer hold 3 images): "
                         f"{plural(texts, 'answer text')} and {plural(dropped, 'image')} were not shown to the scorer")
        if skipped:
            notes.append(f"as the reference: {plural(skipped, 'answer')} to questions with more than 4 images "
                         f"{'was' if skipped == 1 else 'were'} not "
                         f"scored (outcome 'skipped')")
    if prep.skipped:
        notes.append(f"{plural(len(prep.skipped), 'row')} with unreadable images left out (summary.json lists them)")
    return display, more, notes


def system_export_names(systems: list[str]) -> dict[str, str]:
    """System -> the file name of its own scorer-format export (``answers_scorer_format.<system>.json``,
    the name made safe for a file system).  ``answers_scorer_format.json`` holds every system's
    answers, so an id repeats once per system; a file with one model's answers is what
    :func:`~judgekit.benchmarks.mmie.data.load_answers` and ``options.native_answers`` read."""
    stem = EXPORT_NAME.removesuffix(".json")
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in systems:
        safe = re.sub(r"[^A-Za-z0-9._+-]", "_", name).strip(".") or "system"
        file_name, k = f"{stem}.{safe}.json", 2
        while file_name.lower() in taken:
            file_name, k = f"{stem}.{safe}-{k}.json", k + 1
        taken.add(file_name.lower())
        out[name] = file_name
    return out


def _p(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _n(v: float | None) -> str:
    """A coefficient (alpha, cosine, MSE, MAE, Pearson) as the report page writes it
    (report.numbers: 2 decimals)."""
    return "-" if v is None else number(v, DECIMALS["coefficient"])


def _score_of(o: "Outcome", judge: str | None) -> int | None:
    """``judge``'s score of the answer (None: the first scorer's), None when it has none."""
    jd = o.judged.get(judge) if judge is not None else next(iter(o.judged.values()), None)
    return jd.parse.score if jd is not None and jd.parse is not None else None


def _export(path: Path, outcomes: list["Outcome"], judge: str | None = None) -> Path:
    """Every answer that was scored, in the scorer format, with its images under ``images/`` beside
    the file (hard links to the store and the data, a copy where a link cannot be made), so the
    file moves as one folder and, holding one system's answers, reads back with
    ``load_answers(path)``; each with ``judge``'s score (the first scorer's by default)."""
    base = path.parent
    folder = base / "images"
    folder.mkdir(parents=True, exist_ok=True)
    placed: dict[str, str] = {}

    def place(s: Segment) -> str:
        name = placed.get(s.sha256)
        if name is None:
            name = f"{s.sha256}{s.path.suffix.lower() or '.png'}"
            target = folder / name
            if not target.exists():
                try:
                    os.link(s.path, target)
                except OSError:
                    shutil.copyfile(s.path, target)
            placed[s.sha256] = name
        return f"images/{name}"

    def segs(segments) -> list[dict[str, Any]]:
        return [{"text": None, "image": place(s)} if s.is_image else {"text": s.text, "image": None}
                for s in segments or ()]

    # category and field too: an id need not carry its category's code, and load_answers needs one
    rows = [{"id": o.item.id, "question": segs(o.item.question), "answer": segs(o.answer), "model": o.system,
             "gt_answer": segs(o.item.gt_answer), "category": o.item.category, "field": o.item.field,
             "score": _score_of(o, judge)}
            for o in outcomes if o.answer is not None and not o.aborted]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path
