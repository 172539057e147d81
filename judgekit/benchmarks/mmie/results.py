"""MMIE's outcomes -> tables, Tables 3-5 shaped results and the scorer-format export."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...metrics.mmie import (
    alignment,
    category_table,
    field_table,
    score_distribution,
)
from ...parsers.mmie import percent
from ..base import BenchmarkResult
from .data import CATEGORY_CODES, Segment

if TYPE_CHECKING:
    from ...engine import Engine
    from .pipeline import Outcome, Prepared

__all__ = ["build_result", "EXPORT_NAME", "system_export_names"]

EXPORT_NAME = "answers_scorer_format.json"


def _segments_json(segments: tuple[Segment, ...] | None) -> list[dict[str, Any]] | None:
    if segments is None:
        return None
    return [{"text": s.text, "image": None} if not s.is_image else {"text": None, "image": s.sha256}
            for s in segments]


def build_result(prep: "Prepared", engine: "Engine", outcomes: list["Outcome"]) -> BenchmarkResult:
    failed: list[str] = []
    scores, answers, images, records = [], [], [], []
    not_run = 0
    outcome_counts: dict[str, dict[str, int]] = {}
    for o in outcomes:
        it = o.item
        key = {"system": o.system, "id": it.id, "category": CATEGORY_CODES[it.category], "field": it.field}
        if o.aborted:
            not_run += 1
            continue
        counts = outcome_counts.setdefault(o.system, {})
        if o.skipped:
            counts["skipped"] = counts.get("skipped", 0) + 1
            scores.append({**key, "score": None, "percent": None, "outcome": "skipped", "raw_score": None,
                           "images_attached": 0, "images_dropped": 0, "texts_dropped": 0,
                           "judge_reply": None, "error": None, "failed_stage": None, "skipped": o.skipped})
            continue
        if o.error:
            failed.append(f"{o.system}: item {it.id} ({o.stage}): {o.error}")
        outcome = o.parse.outcome if o.parse else ("failed" if o.error else None)
        if outcome:
            counts[outcome] = counts.get(outcome, 0) + 1
        score = o.parse.score if o.parse else None
        scores.append({**key, "score": score, "percent": round(percent(score), 2) if score is not None else None,
                       "outcome": outcome, "raw_score": o.parse.raw if o.parse else None,
                       "images_attached": o.images_attached, "images_dropped": o.images_dropped,
                       "texts_dropped": o.texts_dropped, "judge_reply": o.judge_reply, "error": o.error,
                       "failed_stage": o.stage, "skipped": None})
        answers.append({**key, "raw_answer": o.raw_answer,
                        "answer": json.dumps(_segments_json(o.answer), ensure_ascii=False) if o.answer else None,
                        "images": sum(1 for s in (o.answer or ()) if s.is_image)})
        for k, g in enumerate(o.images):
            images.append({**key, "position": k + 1, "description": g.description, "seed": g.seed,
                           "sha256": (g.image or {}).get("sha256"), "width": (g.image or {}).get("width"),
                           "height": (g.image or {}).get("height"), "error": g.error})
        if o.parse is not None or o.error is None:
            # scored or unparseable: a record; failed calls are listed above and retried next run
            records.append({"model": o.system, "category": it.category, "field": it.field, "score": score})
    cats = category_table(records)
    fields = field_table(records)
    dist = score_distribution(records)
    for row in cats:
        c = outcome_counts.get(row["model"], {})
        row["parse_missing"] = c.get("missing", 0)
        row["parse_not_a_number"] = c.get("not_a_number", 0)
        row["parse_out_of_range"] = c.get("out_of_range", 0)
        row["call_failures"] = c.get("failed", 0)
        row["images_dropped"] = sum(r["images_dropped"] for r in scores if r["system"] == row["model"])
        row["texts_dropped"] = sum(r["texts_dropped"] for r in scores if r["system"] == row["model"])
        row["skipped"] = c.get("skipped", 0)
    align_rows = []
    if prep.human is not None:
        mine = {r["id"]: r["score"] for r in scores if r["system"] == prep.human_system}
        ids = [i for i in prep.human if i in mine]
        a = alignment([mine[i] for i in ids], [prep.human[i] for i in ids])
        align_rows.append({"system": prep.human_system, "scorer": prep.judge, "items": len(ids), **a})
    summary: dict[str, Any] = {
        "benchmark": "mmie",
        "items": len(prep.items),
        "skipped_unreadable": [dataclasses.asdict(s) for s in prep.skipped],
        "systems": [{"name": s.name, "kind": s.kind, "candidate": s.candidate, "generator": s.generator}
                    for s in prep.systems],
        "judge": prep.judge,
        "answer_reading": "full" if prep.options.keep_full_answer else "reference",
        "image_cap": prep.options.image_cap,
        "complete": not_run == 0,
        "results": cats,
        "alignment": align_rows,
    }
    display = [{"model": r["model"], "SA": _p(r["sa"]), "PBL": _p(r["pbl"]), "MSR": _p(r["msr"]),
                "Avg.": _p(r["avg"]), "n": r["n"],
                "parse failures": r["parse_missing"] + r["parse_not_a_number"] + r["parse_out_of_range"],
                "failed": r["call_failures"], "images dropped": r["images_dropped"],
                "texts dropped": r["texts_dropped"], "skipped": r["skipped"]} for r in cats]
    field_names = list(dict.fromkeys(str(r["field"]) for r in fields))
    by_field = []
    for r in cats:
        row: dict[str, Any] = {"model": r["model"]}
        for f in field_names:
            cell = next((x for x in fields if x["model"] == r["model"] and str(x["field"]) == f), None)
            row[f] = _p(cell["percent"]) if cell else "-"
        by_field.append(row)
    dist_rows = [{k: v for k, v in d.items()} for d in dist]
    more = [("Per field (Table 4)", by_field), ("Score distribution (0-6)", dist_rows)]
    notes = [f"scorer: {prep.judge}; percent = mean score / 6 x 100; Avg. over all scored items"]
    dropped = sum(r["images_dropped"] for r in scores)
    if prep.options.keep_full_answer and prep.options.image_cap is not None:
        notes.append(f"image cap {prep.options.image_cap}: {dropped} images were not shown to the scorer "
                     f"(every answer text was)")
    elif not prep.options.keep_full_answer:
        texts = sum(r["texts_dropped"] for r in scores)
        skipped = sum(1 for r in scores if r["outcome"] == "skipped")
        if texts or dropped:
            notes.append(f"as the reference reads answers (until question and answer hold 3 images): {texts} "
                         f"answer texts and {dropped} images were not shown to the scorer")
        if skipped:
            notes.append(f"as the reference: {skipped} answers to questions with more than 4 images were not "
                         f"scored (outcome 'skipped')")
    for a in align_rows:
        notes.append(f"alignment with humans ({a['system']}, {a['items']} items): cosine {_n(a['cosine'])}, "
                     f"MSE {_n(a['mse'])}, MAE {_n(a['mae'])}, Pearson {_n(a['pearson'])}")
    if prep.skipped:
        notes.append(f"{len(prep.skipped)} rows with unreadable images left out (summary.json lists them)")
    tables = {"scores": scores, "answers": answers, "images": images, "categories": cats, "fields": fields,
              "distribution": dist_rows, "alignment": align_rows}

    def export(out_dir: Path) -> Path:
        return _export(out_dir / EXPORT_NAME, outcomes)

    def export_system(name: str, file_name: str):
        return lambda out_dir: _export(out_dir / file_name, [o for o in outcomes if o.system == name])

    writers = [export] + [export_system(n, f) for n, f in system_export_names([s.name for s in prep.systems]).items()]
    return BenchmarkResult(summary=summary, tables=tables, failed_items=failed, not_run=not_run, display=display,
                           more_displays=more, notes=notes, writers=writers)


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
    return "-" if v is None else f"{v:.3f}"


def _export(path: Path, outcomes: list["Outcome"]) -> Path:
    """Every answer that was scored, in the scorer format, with its images under ``images/`` beside
    the file (hard links to the store and the data, a copy where a link cannot be made), so the
    file moves as one folder and, holding one system's answers, reads back with
    ``load_answers(path)``."""
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
             "score": o.parse.score if o.parse else None}
            for o in outcomes if o.answer is not None and not o.aborted]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path
