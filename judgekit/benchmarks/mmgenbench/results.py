"""MMGenBench's records -> tables, the summary (Table 1 / Table 2 / Fig. 6 shapes) and the report
document (:mod:`.report`, built when the runner writes report.html).

Scores come from the vectors in the store: SIM per image is the cosine of the original's and the
generated image's encodings (:func:`judgekit.metrics.mmgenbench.cosine`); FID per (candidate,
generator) is over the images whose two encodings both exist (the reference compares the whole
set; when nothing failed the two are the same, and ``n`` says how many went in).

Intervals (:func:`sim_intervals`, :func:`sim_comparisons`): each SIM mean, overall and per
pattern, gets a percentile bootstrap interval over its scored images (an image contributes its
SIM over 1, so the resampled figure is the mean, as the point estimate); candidates are compared
per generator on the images both have.  FID has none: it is a statistic of the whole set of
encodings (a covariance square root per resample, and a resample repeats images, which biases
it), not a mean over images.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from ...judging.intervals import shown
from ...judging.multiplicity import adjust_summary, excludes_cell
from ...judging.uncertainty import IntervalOptions, bootstrap_summary, comparisons, interval
from ...local import read_vector
from ...metrics.mmgenbench import cosine, fid, sim_summary
from ...report.numbers import DECIMALS, number
from ...plural import plural
from ..base import BenchmarkResult
from .data import PATTERNS
from .tidy import tidy_rows

if TYPE_CHECKING:
    from ...engine import Engine
    from .records import ItemOutcome, Prepared

__all__ = ["build_result", "sim_intervals", "sim_comparisons", "FID_NOTE"]

#: why FID has no interval (summary.json and the printed notes)
FID_NOTE = ("FID has no interval: it is a statistic of the whole set of encodings (a covariance square root "
            "per resample, and resamples that repeat images bias it), not a mean over images")


def _sums(per_item: dict[str, float]) -> dict[str, tuple[float, float]]:
    return {i: (v, 1.0) for i, v in per_item.items()}


def sim_intervals(results: list[dict[str, Any]], pattern_rows: list[dict[str, Any]],
                  sims: dict[tuple[str, str], dict[str, float]], patterns: dict[str, list[str]],
                  options: IntervalOptions) -> None:
    """Add ``sim_mean_ci_low/_ci_high`` to each row of ``results`` and ``mean_ci_low/_ci_high`` to
    each row of ``pattern_rows`` (None when intervals are off or nothing was scored): the
    bootstrap over the images scored in that row (``sims``: (candidate, generator) -> image ->
    SIM; a pattern's images as :func:`~judgekit.metrics.mmgenbench.sim_summary` counts them: an
    image listed twice weighs twice, resampled as one)."""
    def put(row: dict[str, Any], name: str, per_item: dict[str, float], key: str) -> None:
        iv = interval(_sums(per_item), options, key=key)
        # unrounded, as the SIM means are (a rounded bound could pass its own mean)
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = (None, None) if iv is None else (iv.low, iv.high)

    for r in results:
        put(r, "sim_mean", sims[(r["model"], r["generator"])], f"{r['model']}:{r['generator']}:sim")
    for r in pattern_rows:
        per_item = sims[(r["model"], r["generator"])]
        listed = Counter(str(i) for i in patterns.get(r["pattern"], ()))
        sums = {i: (per_item[i] * n, float(n)) for i, n in listed.items() if i in per_item}
        iv = interval(sums, options, key=f"{r['model']}:{r['generator']}:{r['pattern']}:sim")
        r["mean_ci_low"], r["mean_ci_high"] = (None, None) if iv is None else (iv.low, iv.high)


def sim_comparisons(sims: dict[tuple[str, str], dict[str, float]], candidates: list[str], generators: list[str],
                    options: IntervalOptions) -> list[dict[str, Any]]:
    """Per generator, every pair of candidates: the difference of their mean SIM on the images both
    have, with its paired bootstrap interval (``judge`` None: MMGenBench has no judge)."""
    out = []
    for gen in generators:
        per = {c: _sums(sims[(c, gen)]) for c in candidates if (c, gen) in sims}
        for row in comparisons(per, options, "sim", key=f"{gen}:", candidates=candidates):
            out.append({"judge": None, "generator": gen, **row})
    return out


def build_result(prep: "Prepared", engine: "Engine", outcomes: list["ItemOutcome"]) -> BenchmarkResult:
    blobs = engine.blobs
    vectors: dict[str, np.ndarray] = {}

    def vec(sha: str) -> np.ndarray:
        v = vectors.get(sha)
        if v is None:
            v = vectors[sha] = np.asarray(read_vector(blobs, sha), dtype=np.float64)
        return v

    failed: list[str] = []
    originals, captions, generations = [], [], []
    encoder_name = next((o.encoder_name for o in outcomes if o.encoder_name), None) or prep.encoder
    not_run = sum(1 for o in outcomes if o.aborted)
    # (cand, gen) -> item_id -> sim; and the matched vectors for FID
    sims: dict[tuple[str, str], dict[str, float]] = {(c, g): {} for c in prep.candidates for g in prep.generators}
    pairs: dict[tuple[str, str], tuple[list[np.ndarray], list[np.ndarray]]] = {k: ([], []) for k in sims}
    counts: dict[tuple[str, str], dict[str, int]] = {k: {"caption": 0, "empty": 0, "generate": 0, "encode": 0}
                                                     for k in sims}
    rank_c = {c: i for i, c in enumerate(prep.candidates)}
    rank_g = {g: i for i, g in enumerate(prep.generators)}
    for o in outcomes:
        it = o.item
        base = {"item_id": it.item_id, "index": it.index, "patterns": ",".join(it.patterns)}
        originals.append({**base, "encoder": encoder_name, "image_sha256": o.image_sha256, "source": it.source,
                          "vector_sha256": o.vector, "error": o.error})
        if o.error:
            failed.append(f"encoder {prep.encoder}: original {it.item_id}: {o.error}")
        # rows in the spec's order of candidates and generators, not the order the replies came in
        for cand, rec in sorted(o.captions.items(), key=lambda kv: rank_c.get(kv[0], len(rank_c))):
            cap = rec.caption
            captions.append({"model": cand, **base, "raw": rec.raw, "caption": cap.text if cap else None,
                             "words": cap.words if cap else None,
                             "cut_from": cap.words_before_cut if cap and cap.cut else None,
                             "leftovers_removed": cap.leftovers_removed if cap else None, "error": rec.error})
            if rec.error and rec.raw is None:
                failed.append(f"{cand}: caption of {it.item_id}: {rec.error}")
        for (cand, gen), g in sorted(o.generations.items(), key=lambda kv: (rank_c.get(kv[0][0], len(rank_c)),
                                                                         rank_g.get(kv[0][1], len(rank_g)))):
            key = (cand, gen)
            sim = None
            if g.stage == "caption":
                counts[key]["empty" if g.error == "empty caption" else "caption"] += 1
            elif g.error:
                counts[key]["generate" if g.stage == "generate" else "encode"] += 1
                failed.append(f"{cand} -> {gen}: image {it.item_id} ({g.stage}): {g.error}")
            elif g.vector and o.vector:
                a, b = vec(o.vector), vec(g.vector)
                try:
                    sim = cosine(a, b, names=(f"original {it.item_id}", f"{cand}/{gen} {it.item_id}"))
                except ValueError as e:  # a zero or non-finite encoding (an fp16 overflow, say)
                    counts[key]["encode"] += 1
                    failed.append(f"{cand} -> {gen}: image {it.item_id}: unusable encoding: {e}")
                    g.error, g.stage = f"unusable encoding: {e}", "encode/generated"
                else:
                    sims[key][it.item_id] = sim
                    pairs[key][0].append(a)
                    pairs[key][1].append(b)
            image = g.image or {}
            generations.append({"model": cand, "generator": gen, "encoder": encoder_name, **base, "seed": g.seed,
                                "image_sha256": image.get("sha256"), "width": image.get("width"),
                                "height": image.get("height"),
                                "revised_prompt": (g.record or {}).get("revised_prompt"),
                                "vector_sha256": g.vector, "sim": sim, "error": g.error, "failed_stage": g.stage})
    patterns = _pattern_order(prep.data.listed_patterns(once=prep.options.count_listed_index_once))
    index_of = {it.item_id: it.index for it in prep.data.items}
    results, pattern_rows, reference = [], [], {}
    for (cand, gen), per_item in sims.items():
        s = sim_summary(per_item, patterns)
        a, b = pairs[(cand, gen)]
        fid_value, fid_note = None, None
        if len(a) >= 2:
            try:
                fid_value = fid(np.stack(a), np.stack(b))
            except ValueError as e:  # a covariance square root with a large imaginary part
                fid_note = f"not computed: {e}"
        else:
            fid_note = "needs at least 2 scored images"
        c = counts[(cand, gen)]
        results.append({"model": cand, "generator": gen, "encoder": encoder_name, "images": len(prep.data.items),
                        "n": s["n"], "sim_mean": s["mean"], "sim_std": s["std"], "fid": fid_value,
                        "fid_note": fid_note, "caption_failures": c["caption"], "empty_captions": c["empty"],
                        "generation_failures": c["generate"], "encode_failures": c["encode"]})
        for name, ps in s["patterns"].items():
            pattern_rows.append({"model": cand, "generator": gen, "encoder": encoder_name, "pattern": name, **ps})
        reference.setdefault(cand, {})[gen] = {
            "sim": {str(index_of[i]): v for i, v in per_item.items()}, "fid": fid_value}
    sim_intervals(results, pattern_rows, sims, patterns, prep.options)
    comps = sim_comparisons(sims, prep.candidates, prep.generators, prep.options)
    o = prep.options
    summary: dict[str, Any] = {
        "benchmark": "mmgenbench",
        "data": prep.data.source,
        "labels": prep.data.labels,
        "images": len(prep.data.items),
        "skipped_unreadable": [{"where": w, "why": why} for w, why in prep.data.skipped],
        "candidates": prep.candidates,
        "generators": prep.generators,
        "encoder": encoder_name,
        "seed": prep.options.seed,
        "complete": not_run == 0,
        "judges": [],
        "results": results,
        "patterns": pattern_rows,
        "comparisons": comps,
        "intervals": bootstrap_summary(o, items="images", fid=FID_NOTE),
        "reference_format": reference,
    }
    # Holm over the run's comparisons, here so the printed table shows it (the runner would add it later)
    adjust_summary(summary, getattr(o, "holm_adjust", True))
    display = [{"model": r["model"], "generator": r["generator"],
                "SIM": shown(r["sim_mean"], r.get("sim_mean_ci_low"), r.get("sim_mean_ci_high"), 4),
                "SIM std": _f(r["sim_std"]), "FID": number(r["fid"], DECIMALS["distance"]), "n": r["n"],
                "failed": r["caption_failures"] + r["generation_failures"] + r["encode_failures"],
                "empty captions": r["empty_captions"]} for r in results]
    by_pattern = []
    for (cand, gen) in sims:
        row: dict[str, Any] = {"model": cand, "generator": gen}
        for r in pattern_rows:
            if r["model"] == cand and r["generator"] == gen:
                row[r["pattern"]] = _f(r["mean"])
        row["All"] = next(_f(r["sim_mean"]) for r in results if r["model"] == cand and r["generator"] == gen)
        by_pattern.append(row)
    more = [("SIM per pattern (Table 2)", by_pattern)] if patterns else []
    if comps:
        more.append(("Paired SIM differences between candidates (same images)",
                     [{"generator": c["generator"], "a": c["a"], "b": c["b"], "images": c["items"],
                       "a - b": shown(c["difference"], c["ci_low"], c["ci_high"], 4),
                       **excludes_cell(c)} for c in comps]))
    notes = [f"encoder: {encoder_name}; seeds: {prep.options.seed} + image index"]
    if o.bootstrap_samples:
        notes.append(f"SIM [lo, hi]: {o.interval_level:.0%} percentile bootstrap intervals over the images "
                     f"({o.bootstrap_samples} resamples, seed {o.bootstrap_seed}); per pattern in patterns.csv; "
                     + FID_NOTE)
    if prep.data.skipped:
        notes.append(f"{plural(len(prep.data.skipped), 'unreadable image')} left out (summary.json lists them)")
    notes.extend(prep.data.notes())
    tables = {"results": results, "patterns": pattern_rows, "captions": captions, "generations": generations,
              "originals": originals, "comparisons": comps}

    def report():
        from .report import build_doc  # imported when the report is written, after pipeline

        return build_doc(prep, engine, outcomes, sims, results, pattern_rows, patterns, encoder_name)

    return BenchmarkResult(summary=summary, tables=tables, failed_items=failed, not_run=not_run, display=display,
                           more_displays=more, notes=notes, report=report, tidy=tidy_rows(generations))


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.4f}"


def _pattern_order(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """The paper's pattern order first, then any other names in the order they appear."""
    out = {p: found[p] for p in PATTERNS if p in found}
    out.update({p: ids for p, ids in found.items() if p not in out})
    return out
