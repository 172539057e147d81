"""MMGenBench's report document (:class:`~judgekit.report.doc.ReportDoc`): what ``report.html`` shows.

* headline: per candidate and generator, SIM with its interval ("SIM · <generator>") and FID
  ("FID · <generator>", lower is better, no interval: a whole-set statistic);
* charts: SIM per pattern (the paper's order) per generator, one bar per candidate with its
  whisker; SIM per candidate and generator; the distribution of SIM per image (bins of 0.1);
* tables: FID per candidate and generator (with what went in), SIM per pattern;
* items: every image, by id: the original (the question), then per candidate its caption (the
  raw reply beside it when the clean-up changed it) and the image each generator drew from it,
  with SIM and seed.  A failed call shows its error where its output would be, and flags the item.

Built lazily from what :func:`.results.build_result` already holds (the outcomes, the SIMs, the
result rows); images enter as files (a folder image, the store's generated images) or bytes (a TSV
image), and the writer makes thumbnails of them in the run folder, so the page outlives the cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...blobs import BlobMissing
from ...plural import plural
from ...report.doc import Block, Chart, Headline, Item, Part, ReportDoc, Series, Table, image, text
from .records import CAPTION

if TYPE_CHECKING:
    from ...engine import Engine
    from .records import CaptionRecord, GenerationRecord, ItemOutcome, Prepared

__all__ = ["build_doc", "sim_bins", "BIN_LABELS"]

#: the SIM distribution's bins: [0.0, 0.1) ... [0.9, 1.0]; a SIM below 0 (a cosine can be) adds "< 0.0"
BIN_LABELS = [f"{k / 10:.1f}-{(k + 1) / 10:.1f}" for k in range(10)]


def sim_bins(values: list[float]) -> tuple[list[str], list[int]]:
    """The histogram of SIMs over :data:`BIN_LABELS` (1.0 falls in the last bin); with a bin
    ``< 0.0`` in front when some value is negative."""
    counts = [0] * 10
    below = 0
    for v in values:
        if v < 0:
            below += 1
        else:
            counts[min(int(v * 10), 9)] += 1
    if below:
        return ["< 0.0", *BIN_LABELS], [below, *counts]
    return list(BIN_LABELS), counts


def _r(v: float | None, digits: int = 4) -> float | None:
    return None if v is None else round(float(v), digits)


def _order(item_id: str) -> tuple[int, int, str]:
    """Item ids in natural order: 2 before 10, numbers before names."""
    return (0, int(item_id), item_id) if item_id.isdigit() else (1, 0, item_id)


def build_doc(prep: "Prepared", engine: "Engine", outcomes: list["ItemOutcome"],
              sims: dict[tuple[str, str], dict[str, float]], results: list[dict[str, Any]],
              pattern_rows: list[dict[str, Any]], patterns: dict[str, list[str]], encoder_name: str) -> ReportDoc:
    """The run's report document (see the module docstring)."""
    o = prep.options
    cands, gens = prep.candidates, prep.generators
    row = {(r["model"], r["generator"]): r for r in results}
    n_images = len(prep.data.items)
    meta = {"data": prep.data.source, "labels": prep.data.labels or "none (no patterns)",
            "images": str(n_images) + (f" ({len(prep.data.skipped)} unreadable left out)" if prep.data.skipped else ""),
            "candidates": ", ".join(cands), "generators": ", ".join(gens), "encoder": encoder_name,
            "seeds": f"{o.seed} + image index, the same for every candidate and generator",
            "captions": (f"judgekit's clean-up, cut at {o.max_words} words" if o.clean_captions
                         else f"the reference's clean-up, cut at {o.max_words} pieces of split(' ')"),
            "generated images": ("encoded as drawn (lossless_generated)" if o.lossless_generated
                                 else "encoded after the reference's JPEG round trip (Pillow, quality 75)"),
            "intervals": (f"SIM: {o.interval_level:.0%} percentile bootstrap over the images "
                          f"({o.bootstrap_samples} resamples, seed {o.bootstrap_seed}); FID: none, a whole-set "
                          f"statistic" if o.bootstrap_samples else "off (bootstrap_samples = 0)")}
    not_run = sum(1 for x in outcomes if x.aborted)
    if not_run:
        meta["not run"] = f"{plural(not_run, 'image')} (the run stopped before their calls)"

    headline = []
    for c in cands:
        for g in gens:
            r = row[(c, g)]
            headline.append(Headline(candidate=c, figure=f"SIM · {g}", value=r["sim_mean"],
                                     low=r.get("sim_mean_ci_low"), high=r.get("sim_mean_ci_high")))
            headline.append(Headline(candidate=c, figure=f"FID · {g}", value=r["fid"], higher_is_better=False))

    return ReportDoc(title=f"MMGenBench: {prep.spec.name}", benchmark="mmgenbench", meta=meta, headline=headline,
                     charts=_charts(cands, gens, row, pattern_rows, patterns, sims),
                     tables=_tables(cands, gens, results, pattern_rows, patterns),
                     items=_items(prep, engine, outcomes, sims),
                     items_note=(f"every image ({n_images}), by id: the original, then per candidate its caption and "
                                 f"the image each generator drew from it; SIM is the cosine of the encodings of the "
                                 f"original and the drawn image ({encoder_name}); beside each image its best SIM"))


def _charts(cands: list[str], gens: list[str], row: dict[tuple[str, str], dict[str, Any]],
            pattern_rows: list[dict[str, Any]], patterns: dict[str, list[str]],
            sims: dict[tuple[str, str], dict[str, float]]) -> list[Chart]:
    charts = []
    by = {(r["model"], r["generator"], r["pattern"]): r for r in pattern_rows}
    if patterns:
        for g in gens:
            series = []
            for c in cands:
                rs = [by.get((c, g, p), {}) for p in patterns]
                series.append(Series(c, [r.get("mean") for r in rs], low=[r.get("mean_ci_low") for r in rs],
                                     high=[r.get("mean_ci_high") for r in rs]))
            charts.append(Chart(f"SIM per pattern · {g}", list(patterns), series, unit="SIM",
                                note="mean SIM over the images of each pattern (an image may show several), "
                                     "with its bootstrap interval; the paper's pattern order"))
    charts.append(Chart("SIM per candidate and generator", list(cands),
                        [Series(g, [row[(c, g)]["sim_mean"] for c in cands],
                                low=[row[(c, g)].get("sim_mean_ci_low") for c in cands],
                                high=[row[(c, g)].get("sim_mean_ci_high") for c in cands]) for g in gens],
                        unit="SIM", note="mean SIM over the scored images, with its bootstrap interval"))
    for g in gens:
        per = {c: sim_bins(list(sims[(c, g)].values())) for c in cands}
        groups = max((labels for labels, _ in per.values()), key=len)
        series = []
        for c in cands:
            labels, counts = per[c]
            counts = [0] * (len(groups) - len(labels)) + counts  # a "< 0.0" bin another candidate has
            series.append(Series(c, [float(k) for k in counts]))
        charts.append(Chart(f"SIM distribution · {g}", groups, series, unit="images",
                            note="images per SIM bin (the last bin holds 1.0)"))
    return charts


def _tables(cands: list[str], gens: list[str], results: list[dict[str, Any]], pattern_rows: list[dict[str, Any]],
            patterns: dict[str, list[str]]) -> list[Table]:
    fid_rows = [{"candidate": r["model"], "generator": r["generator"], "FID": _r(r["fid"]), "images scored": r["n"],
                 "failed": r["caption_failures"] + r["generation_failures"] + r["encode_failures"],
                 "empty captions": r["empty_captions"], "note": r["fid_note"] or ""} for r in results]
    tables = [Table("FID per candidate and generator", fid_rows,
                    note="Fréchet distance between the encodings of the originals and of the drawn images, over "
                         "the images both of which were encoded; lower is better")]
    if patterns:
        by = {(r["model"], r["generator"], r["pattern"]): r for r in pattern_rows}
        rows = []
        for p, ids in patterns.items():
            out: dict[str, Any] = {"pattern": p, "images": len(set(ids))}
            for c in cands:
                for g in gens:
                    out[f"{c} · {g}"] = _r(by.get((c, g, p), {}).get("mean"))
            rows.append(out)
        overall = {(r["model"], r["generator"]): r for r in results}
        total: dict[str, Any] = {"pattern": "All", "images": results[0]["images"] if results else 0}
        total.update({f"{c} · {g}": _r(overall[(c, g)]["sim_mean"]) for c in cands for g in gens})
        rows.append(total)
        tables.append(Table("SIM per pattern (Table 2)", rows, note="mean SIM; intervals in the charts above"))
    return tables


def _items(prep: "Prepared", engine: "Engine", outcomes: list["ItemOutcome"],
           sims: dict[tuple[str, str], dict[str, float]]) -> list[Item]:
    blobs = engine.blobs

    def stored(sha: str | None) -> tuple[Any, str | None]:
        """(the stored file, None) or (None, why there is none)."""
        if not sha:
            return None, "no image"
        try:
            return blobs.path(sha), None
        except BlobMissing:
            return None, f"image {sha[:12]} is not in the cache's image store"

    items = []
    for o in sorted(outcomes, key=lambda x: _order(x.item.item_id)):
        it = o.item
        flags: list[str] = []
        qmeta = {"source": it.source}
        if it.patterns:
            qmeta["patterns"] = ", ".join(it.patterns)
        original = (image(it.path) if it.path is not None else image(data=it.data) if it.data is not None
                    else image(missing="the original is not in the data any more"))
        q = Block("question", "original", [original], meta=qmeta)
        if o.error:
            q.status, q.meta["encoding failed"] = "failed", o.error
            flags.append("failed")
        blocks = [q]
        if o.aborted:
            flags.append("not run")
        for c in prep.candidates:
            blocks += _candidate_blocks(prep, o, c, sims, stored, flags)
        best = [(sims[(c, g)][it.item_id], c, g) for c in prep.candidates for g in prep.generators
                if it.item_id in sims[(c, g)]]
        score = f"best SIM {max(best)[0]:.4f}" if best else None
        items.append(Item(id=it.item_id, title=f"image {it.item_id}", blocks=blocks,
                          tags={"pattern": list(it.patterns)} if it.patterns else {}, flags=flags, score=score))
    return items


def _candidate_blocks(prep: "Prepared", o: "ItemOutcome", cand: str, sims: dict[tuple[str, str], dict[str, float]],
                      stored, flags: list[str]) -> list[Block]:
    rec: CaptionRecord | None = o.captions.get(cand)
    blocks: list[Block] = []
    if rec is None:  # the run stopped before this caption
        blocks.append(Block("answer", "caption", [text("not run: the run stopped before this call")], group=cand,
                            status="skipped"))
    elif rec.raw is None:  # the call failed
        blocks.append(Block("answer", "caption", [text(f"no caption: {rec.error}")], group=cand, status="failed",
                            meta={"error": str(rec.error)}))
        flags.append("failed")
    else:
        cap = rec.caption
        shown = cap.text if cap else ""
        meta: dict[str, str] = {}
        if cap is not None:
            meta["words"] = str(cap.words)
            if cap.cut:
                meta["cut from"] = f"{cap.words_before_cut} words"
                flags.append("caption cut")
            if cap.leftovers_removed:
                meta["chat-template leftovers"] = "removed"
        if rec.error:  # empty after clean-up: nothing to draw
            meta["error"] = rec.error
            flags.append("empty caption")
        blocks.append(Block("answer", "caption", [text(shown)], group=cand,
                            status="skipped" if rec.error else "ok", meta=meta))
        if rec.raw != shown:
            blocks.append(Block("note", "raw reply (before clean-up)", [text(rec.raw)], group=cand))
    for g in prep.generators:
        blocks.append(_generation_block(o, cand, g, sims, stored, flags))
    return blocks


def _generation_block(o: "ItemOutcome", cand: str, gen: str, sims: dict[tuple[str, str], dict[str, float]],
                      stored, flags: list[str]) -> Block:
    rec: GenerationRecord | None = o.generations.get((cand, gen))
    label = f"drawn by {gen}"
    if rec is None:
        return Block("answer", label, [image(missing="not run: the run stopped before this call")], group=cand,
                     status="skipped")
    meta = {"seed": str(rec.seed)}
    sim = sims[(cand, gen)].get(o.item.item_id)
    if sim is not None:
        meta["SIM"] = f"{sim:.4f}"
    img = rec.image or {}
    if img.get("width") and img.get("height"):
        meta["size"] = f"{img['width']}×{img['height']}"
    if rec.error:
        meta["error"] = rec.error
        if rec.stage == CAPTION:  # no caption to draw from: not a failed call of this generator
            return Block("answer", label, [image(missing=f"not drawn: {rec.error}")], group=cand, status="skipped",
                         meta=meta)
        meta["failed at"] = str(rec.stage)
        flags.append("failed")
        path, why = stored(img.get("sha256")) if rec.stage != "generate" else (None, None)
        what = image(path) if path is not None else image(missing=f"{rec.stage} failed: {rec.error}")
        return Block("answer", label, [what], group=cand, status="failed", meta=meta)
    path, why = stored(img.get("sha256"))
    parts: list[Part] = [image(path) if path is not None else image(missing=why)]
    revised = (rec.record or {}).get("revised_prompt")
    capt = o.captions.get(cand)
    if revised and capt is not None and capt.caption is not None and revised != capt.caption.text:
        parts.append(text(f"the generator revised the prompt to: {revised}"))
    return Block("answer", label, parts, group=cand, status="ok", meta=meta)
