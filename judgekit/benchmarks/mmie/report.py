"""MMIE's report document (:class:`~judgekit.report.doc.ReportDoc`), built from what
:func:`~judgekit.benchmarks.mmie.results.build_result` already holds: the outcomes, the prepared
data and the summary.  The runner adds the sections every benchmark shares (scorers, agreement,
paired comparisons, deviations, cost); this module gives MMIE's own:

* headline: each system's SA, PBL, MSR and Avg. (percent) with their intervals, by the first
  scorer and, with a panel, by the ensemble (the same rows as ``summary.json``);
* charts: per category per system (whiskers: the bootstrap intervals), the 0-6 score
  distribution per system (shares), and with a panel each scorer's Avg. per system;
* tables: human alignment (Table 5) when there are human scores, per field (Table 4), and what
  each system's answers lost (parse failures, failed calls, texts and images the scorer did not
  see, unscored rows);
* items: one per question of the data, in its order: the question and the ground truth as the
  data interleaves text and images, then per system (one box each) its answer (the images it
  produced: the generator's, from the blob store; a native model's, from its files), what the
  scorer was shown where that differs from the answer (the reference's reading stops once
  question and answer hold 3 images; defused headers), and every scorer's full reply with the
  score's text highlighted.  Flags: ``failed`` (a call failed), ``unparsed`` (a reply without a
  valid score), ``skipped`` (more than 4 question images: the reference scores none of its
  answers), ``cut`` (the scorer saw less than the whole answer), ``not run``; a row left out for
  an image that does not decode is an item too (``left out``, with the reason).  MMIE never re-asks.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ...parsers.mmie import REFERENCE_IMAGE_STOP, REFERENCE_MAX_IMAGES, split_integrated
from ...judging.report import headline_rows, rows_by_judge
from ...plural import plural
from ...report.doc import (
    Block,
    Chart,
    Headline,
    Item,
    Part,
    ReportDoc,
    Series,
    Table,
    image,
    text,
)
from .panel import ENSEMBLE
from .records import MMIEItem, Segment
from .scoring import score_prompts, scorer_text

if TYPE_CHECKING:
    from .outcomes import Outcome, Prepared

__all__ = ["build_report", "score_highlight"]

#: Table 3's columns: label -> the figure's key in a results row
FIGURES = (("SA", "sa"), ("PBL", "pbl"), ("MSR", "msr"), ("Avg.", "avg"))
_HEAD = "### Score"


def score_highlight(reply: str, raw: str | None) -> str | None:
    """The text of ``reply`` the parser read its score from: the first ``### Score`` through the
    first number after it (``raw``, as written), lengthened until no later copy of it exists in
    the reply (the page marks a highlight's last occurrence).  None when there is no number."""
    start = reply.find(_HEAD)
    if start < 0 or raw is None:
        return None
    at = reply.find(raw, start + len(_HEAD))
    if at < 0:
        return None
    end = at + len(raw)
    while reply.rfind(reply[start:end]) != start:  # ends at len(reply) at the latest
        end += 1
    return reply[start:end]


def build_report(prep: "Prepared", engine: Any, outcomes: list["Outcome"], summary: dict[str, Any],
                 tables: dict[str, list[dict[str, Any]]]) -> ReportDoc:
    """The whole report document of a run (the module docstring).  ``engine``: its blob store
    holds the images drawn for an answer whose other image failed (None: shown as missing)."""
    judges = list(prep.judges)
    spec = prep.spec
    name = getattr(spec, "name", None) or "mmie"
    doc = ReportDoc(title=f"MMIE: {name}", benchmark="mmie", meta=_meta(prep, summary))
    doc.headline = _headline(summary)
    doc.charts = _charts(prep, summary, tables)
    doc.tables = _tables(prep, summary, tables)
    doc.items = _items(prep, outcomes, getattr(engine, "blobs", None))
    doc.items_note = (f"every question of the run ({len(prep.items)}), with each system's answer "
                      f"({', '.join(s.name for s in prep.systems)}) and every scorer's full reply")
    return doc


# -- meta, headline, charts, tables ------------------------------------------------------------------
def _meta(prep: "Prepared", summary: dict[str, Any]) -> dict[str, str]:
    opts = prep.options
    spec = prep.spec
    meta: dict[str, str] = {}
    if spec is not None:
        hub = str(getattr(spec, "data", "")).startswith("hf:")  # a dataset on the hub is no path
        meta["data"] = spec.data if hub else str(spec.data_path())
    cats = Counter(it.code for it in prep.items)
    meta["questions"] = f"{len(prep.items)} (" + ", ".join(f"{c} {cats.get(c, 0)}" for c in ("SA", "PBL", "MSR")) + ")"
    if prep.skipped:
        meta["left out"] = f"{plural(len(prep.skipped), 'row')} with images that do not decode (listed as items)"
    systems = []
    for s in prep.systems:
        if s.kind == "integrated":
            systems.append(f"{s.name} (integrated: {s.candidate} answers, {s.generator} draws its images)")
        elif s.kind == "text":
            systems.append(f"{s.name} (text answers)")
        else:
            systems.append(f"{s.name} (native interleaved answers, imported)")
    meta["systems"] = "; ".join(systems)
    if len(prep.judges) > 1:  # (the scorers themselves: the shared "judges" line)
        meta["ensemble"] = "the mean of the scorers' valid scores of each answer"
    if opts.keep_full_answer:
        cap = "all images" if opts.image_cap is None else f"at most {plural(opts.image_cap, 'image')}"
        meta["answer reading"] = f"the whole answer ({cap} attached)"
    else:
        meta["answer reading"] = (f"as the authors' scorer: an answer is read until question and answer hold "
                                  f"{REFERENCE_IMAGE_STOP} images; questions with more than {REFERENCE_MAX_IMAGES} "
                                  f"images are not scored")
    if any(s.kind == "integrated" for s in prep.systems):
        meta["image seeds"] = f"{opts.seed} + a hash of the item id + the image's position"
    iv = summary.get("intervals") or {}
    if iv.get("samples"):
        meta["intervals"] = (f"{iv['level']:.0%} {iv['method']} ({iv['samples']} resamples, seed {iv['seed']})")
    else:
        meta["intervals"] = "none (bootstrap_samples = 0)"
    if prep.human is not None:
        meta["human scores"] = f"{plural(len(prep.human), 'answer')} of {prep.human_system} (Table 5)"
    return meta


def _headline(summary: dict[str, Any]) -> list[Headline]:
    return [Headline(candidate=r["model"], figure=label, value=r.get(f), low=r.get(f"{f}_ci_low"),
                     high=r.get(f"{f}_ci_high"), judge=j, unit="%")
            for j, rows in headline_rows(summary).items() for r in rows for label, f in FIGURES]


def _series(name: str, row: dict[str, Any], figures: list[str]) -> Series:
    low = [row.get(f"{f}_ci_low") for f in figures]
    has = any(v is not None for v in low)
    return Series(name, [row.get(f) for f in figures], low if has else None,
                  [row.get(f"{f}_ci_high") for f in figures] if has else None)


def _charts(prep: "Prepared", summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]]) -> list[Chart]:
    judges = list(prep.judges)
    panel = len(judges) > 1
    figs = [f for _, f in FIGURES]
    charts = []
    for j, rows in rows_by_judge(summary).items():
        if panel and j not in (judges[0], ENSEMBLE):
            continue
        who = "the ensemble, mean of the scorers" if j == ENSEMBLE else f"scorer {j}"
        charts.append(Chart(f"Score per category ({who})", [label for label, _ in FIGURES],
                            [_series(r["model"], r, figs) for r in rows], unit="%", range=(0.0, 100.0),
                            note="percent = mean score / 6 x 100; whiskers: the bootstrap interval over items"))
    dist = tables.get("distribution", [])
    # the scale best to worst (3 its grey middle); an answer with no valid score is no step of it: in the note
    keys = [str(k) for k in range(6, -1, -1)]
    groups, shares, unscored = [], [], []
    for d in dist:
        scored = sum(int(d[k]) for k in keys)
        groups.append(f"{d['model']} · {d['judge']}" if panel else str(d["model"]))
        shares.append([100.0 * int(d[k]) / scored if scored else 0.0 for k in keys])
        if int(d["failed"]):
            unscored.append(f"{groups[-1]} {100.0 * int(d['failed']) / (scored + int(d['failed'])):.0f}%")
    if groups:
        charts.append(Chart("Score distribution (0-6)", groups,
                            [Series(f"score {k}", [s[i] for s in shares]) for i, k in enumerate(keys)],
                            kind="stacked", unit="%", palette="diverging",
                            note="share of each system's answers with a valid score given each score, from 6 (best) "
                                 "to 0; no valid score: " + ("; ".join(unscored) if unscored else "none")))
    if panel:
        by = list(rows_by_judge(summary).items())
        names = [r["model"] for r in by[0][1]]
        series = []
        for j, rows in by:
            row_of = {r["model"]: r for r in rows}
            s = [_series(j, row_of.get(n, {}), ["avg"]) for n in names]
            has = any(x.low is not None for x in s)
            series.append(Series(j, [x.values[0] for x in s], [x.low[0] if x.low else None for x in s] if has else None,
                                 [x.high[0] if x.high else None for x in s] if has else None))
        charts.append(Chart("Avg. per scorer", names, series, unit="%", range=(0.0, 100.0),
                            note="each scorer's Avg. of every system, and the ensemble's; whiskers: intervals"))
    return charts


def _num(v: Any, digits: int = 3) -> Any:
    return round(v, digits) if isinstance(v, float) else v


def _tables(prep: "Prepared", summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]]) -> list[Table]:
    panel = len(prep.judges) > 1
    out = []
    align = summary.get("alignment") or []
    if align:
        out.append(Table("Human alignment (Table 5)",
                         [{"system": a["system"], "scorer": a["scorer"], "items": a["items"], "scored": a["n"],
                           "cosine": _num(a["cosine"]), "MSE": _num(a["mse"]), "MAE": _num(a["mae"]),
                           "Pearson": _num(a["pearson"])} for a in align],
                         note="each scorer's 0-6 scores against the human scores of the same answers"))
    fields = tables.get("fields", [])
    names = list(dict.fromkeys(str(f["field"]) for f in fields))
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for f in fields:
        key = (f["judge"], f["model"])
        row = rows.setdefault(key, {**({"scorer": f["judge"]} if panel else {}), "system": f["model"],
                                    **{n: None for n in names}})
        row[str(f["field"])] = _num(f["percent"], 2)
    if rows:
        out.append(Table("Per field (Table 4)", list(rows.values()), note="percent = mean score / 6 x 100"))
    losses = []
    for r in summary["results"]:
        losses.append({"system": r["model"], "scored": r["n"],
                       "parse failures": r["parse_missing"] + r["parse_not_a_number"] + r["parse_out_of_range"],
                       "failed calls": r["call_failures"], "texts not shown": r["texts_dropped"],
                       "images not shown": r["images_dropped"], "not scored (skipped)": r["skipped"]})
    out.append(Table("What the scores leave out", losses,
                     note=f"by scorer {prep.judge}; texts and images not shown: the part of an answer the scorer "
                          "did not read (the items show which)"))
    return out


# -- items ---------------------------------------------------------------------------------------------
def _parts(segments: tuple[Segment, ...] | None, captions: list[str] | None = None) -> list[Part]:
    """Interleaved text and images, as the segments hold them; ``captions``: one per image."""
    out: list[Part] = []
    k = 0
    for s in segments or ():
        if s.is_image:
            cap = captions[k] if captions is not None and k < len(captions) else s.ref
            out.append(image(s.path, caption=cap) if s.path is not None else image(missing="no file", caption=cap))
            k += 1
        elif s.text is not None:  # (None: an empty opening entry)
            out.append(text(s.text))
    return out


def _drawn(g: Any, blobs: Any) -> Part:
    """An image the generator drew for an answer that failed as a whole, from the blob store."""
    caption = f"generated: {g.description} (seed {g.seed})"
    if g.error or not g.image:
        return image(missing=g.error or "not drawn", caption=caption)
    try:
        return image(blobs.path(g.image["sha256"]), caption=caption)
    except (AttributeError, KeyError):  # no store given; BlobMissing is a KeyError
        return image(missing="drawn, but not in the cache's image store", caption=caption)


def _answer_block(o: "Outcome", kind: str, blobs: Any) -> Block:
    label = "answer" if kind == "native" else f"answer ({kind})"
    captions = [f"generated: {g.description} (seed {g.seed})" for g in o.images] if o.images else None
    if o.answer is not None:
        return Block("answer", label, _parts(o.answer, captions), group=o.system, status="ok",
                     meta={"images": str(sum(1 for s in o.answer if s.is_image))})
    parts: list[Part] = []
    if o.raw_answer is not None:  # an image failed: the LVLM's text, each image as it went
        imgs = iter(o.images)
        for what, value in split_integrated(o.raw_answer):
            if what == "text":
                parts.append(text(value))
                continue
            g = next(imgs, None)
            parts.append(_drawn(g, blobs) if g is not None else image(missing="not drawn",
                                                                       caption=f"generated: {value}"))
    parts.append(text(f"failed at the {o.stage} stage: {o.error}"))
    return Block("answer", label, parts, group=o.system, status="failed", meta={"error": str(o.error)})


def _shown_note(prep: "Prepared", o: "Outcome", prompts) -> Block | None:
    """What the scorer read of the answer, where it differs from the answer itself: the part the
    reference's reading (or the image cap) leaves out, and defused text."""
    item, opts = o.item, prep.options
    flat = scorer_text(item, o.answer, opts, prompts).flat
    cut = bool(flat.texts_dropped or flat.images_dropped)
    defused = False
    if opts.defuse_headers or opts.defuse_image_tags:
        plain = opts.model_copy(update={"defuse_headers": False, "defuse_image_tags": False})
        defused = scorer_text(item, o.answer, plain, prompts).flat.answer != flat.answer
    if not (cut or defused):
        return None
    why = []
    if cut and opts.keep_full_answer:
        why.append(f"image cap {opts.image_cap}: {plural(flat.images_dropped, 'image')} of the answer "
                   f"{'was' if flat.images_dropped == 1 else 'were'} not attached")
    elif cut:
        lost = " and ".join(plural(n, w) for n, w in ((flat.texts_dropped, "text"), (flat.images_dropped, "image"))
                            if n)
        why.append(f"the reference's reading cuts the answer: it reads an answer until question and answer hold "
                   f"{REFERENCE_IMAGE_STOP} images, so the answer's last {lost} "
                   f"{'was' if flat.texts_dropped + flat.images_dropped == 1 else 'were'} not shown to the scorer")
    if defused:
        why.append("answer text that repeats the prompt's section headers (### Score ...) or holds a literal "
                   "<image> was defused")
    return Block("note", "what the scorer was shown",
                 [text("; ".join(why) + ". The answer as the scorer read it (each image as its Image-k line):"),
                  text(flat.answer)], group=o.system,
                 meta={"images shown": str(flat.images_attached), "images not shown": str(flat.images_dropped),
                       "texts not shown": str(flat.texts_dropped)})


def _judgments(o: "Outcome", judges: list[str], flags: list[str]) -> list[Block]:
    out = []
    for j in judges:
        jd = o.judged.get(j)
        label = f"scorer {j}"
        if jd is None or jd.aborted:
            flags.append("not run")
            out.append(Block("judgment", label, [text("not scored: the run stopped before this call")],
                             group=o.system, status="failed"))
            continue
        if jd.error:
            flags.append("failed")
            out.append(Block("judgment", label, [text(f"the scoring call failed: {jd.error}")], group=o.system,
                             verdict="no score (call failed)", status="failed", meta={"error": str(jd.error)}))
            continue
        reply, p = jd.reply or "", jd.parse
        if p is not None and p.ok:
            out.append(Block("judgment", label, [text(reply)], group=o.system, verdict=f"score {p.score} of 6",
                             highlight=score_highlight(reply, p.raw), tone="neutral", status="ok",
                             meta={"percent": f"{p.score / 6 * 100:.2f}"}))
            continue
        flags.append("unparsed")
        outcome = p.outcome if p is not None else "missing"
        what = {"missing": "no '### Score' in the reply", "not_a_number": "no number after '### Score'",
                "out_of_range": f"{p.raw if p else ''} is outside 0-6"}.get(outcome, outcome)
        out.append(Block("judgment", label, [text(reply)], group=o.system, verdict=f"no valid score ({what})",
                         highlight=score_highlight(reply, p.raw if p else None), status="failed",
                         meta={"outcome": outcome}))
    return out


def _title(it: MMIEItem, shared: set[str]) -> str:
    """The question's first text that is its own (not an instruction every question of its kind
    opens with), cut to a line; the id when it has none.  The block holds the whole text."""
    texts = [(s.text or "").strip() for s in it.question if not s.is_image and (s.text or "").strip()]
    lead = next((t for t in texts if t not in shared), texts[0] if texts else "")
    line = " ".join(lead.split())
    return (line[:117] + "...") if len(line) > 120 else (line or it.id)


def _item(prep: "Prepared", it: MMIEItem, outs: list["Outcome"], prompts, blobs: Any, shared: set[str]) -> Item:
    tags = {"category": it.code}
    if it.field:
        tags["field"] = it.field
    if it.subfield:
        tags["subfield"] = it.subfield
    flags: list[str] = []
    kinds = {s.name: s.kind for s in prep.systems}
    blocks = [Block("question", "question", _parts(it.question),
                    meta={"images": str(len(it.question_images)), "source": f"{it.source[0]}, row {it.source[1]}"})]
    blocks.append(Block("reference", "ground truth", _parts(it.gt_answer) if it.gt_answer is not None
                        else [text("(the data has no ground truth for this question)")]))
    scores = []
    for o in outs:
        if o.skipped:
            flags.append("skipped")
            blocks.append(Block("note", "not scored", [text(f"{o.skipped}: no answer was asked for or scored")],
                                group=o.system, status="skipped"))
            continue
        if o.aborted:
            flags.append("not run")
            blocks.append(Block("answer", "answer", [text("not made: the run stopped before this answer")],
                                group=o.system, status="failed"))
            continue
        blocks.append(_answer_block(o, kinds.get(o.system, "native"), blobs))
        if o.answer is None:
            flags.append("failed")
            scores.append("-")
            continue
        note = _shown_note(prep, o, prompts)
        if note is not None:
            blocks.append(note)
        if o.texts_dropped or o.images_dropped:
            flags.append("cut")
        blocks += _judgments(o, list(prep.judges), flags)
        first = o.judged.get(prep.judge)
        s = first.parse.score if first is not None and first.parse is not None else None
        scores.append("-" if s is None else f"{s}/6")
    title = _title(it, shared)
    score = " · ".join(scores) if scores else None
    return Item(id=it.id, title=title, blocks=blocks, tags=tags, flags=list(dict.fromkeys(flags)), score=score)


def _items(prep: "Prepared", outcomes: list["Outcome"], blobs: Any) -> list[Item]:
    prompts = score_prompts()
    by_item: dict[str, list["Outcome"]] = {}
    for o in outcomes:
        by_item.setdefault(o.item.id, []).append(o)
    order = {s.name: k for k, s in enumerate(prep.systems)}
    seen = Counter((s.text or "").strip() for it in prep.items for s in set(it.question) if not s.is_image)
    shared = {t for t, n in seen.items() if n > 1}
    items = [_item(prep, it, sorted(by_item.get(it.id, []), key=lambda o: order.get(o.system, 0)), prompts,
                   blobs, shared)
             for it in prep.items]
    for s in prep.skipped:
        items.append(Item(id=str(s.id or f"row {s.row}"), title="left out: an image does not decode",
                          blocks=[Block("note", "left out of the run", [text(s.reason)], status="skipped")],
                          flags=["left out"]))
    return items
