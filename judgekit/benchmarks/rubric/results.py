"""The rubric benchmark's results from its judgment records: what summary.json, the CSVs, the
printed tables and the tidy export hold.

Per judge of the panel, and for a panel its ensemble (per candidate and item, the mean of the
judges' valid scores): per candidate, overall and per category, the mean score with its bootstrap
interval (:func:`judgekit.judging.uncertainty.interval` over per-item sums ``(score, 1)``; an
item whose judgment failed is drawn as ``(0, 0)``), the same as a share of the scale
(``(mean - low) / (high - low) x 100``), and the counts of valid and failed judgments.  Every
judge and the ensemble draw the same resampled items for a row (one bootstrap stream per
candidate, level and group), so their intervals are comparable.  Paired comparisons between
candidates (the first judge and the ensemble), the judges' agreement (Krippendorff's alpha,
interval level, per candidate and pooled) and the score distribution complete it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.gcpause import paused_gc
from ...judging.agreement import ENSEMBLE_RULES, agreement_rows, by_item, ensemble_summary, panel_mean, ratings
from ...judging.honest import annotate_scores
from ...judging.human_agreement import HumanLabels, add_human_agreement
from ...judging.intervals import shown
from ...judging.multiplicity import adjust_comparisons, excludes_cell
from ...judging.pairwise import ENSEMBLE_JUDGE
from ...judging.repeats import SPREAD, add_spread, repeat_cell
from ...judging.records import NO_CALL, failure
from ...judging.results import Built, add_panel, intervals_summary
from ...judging.uncertainty import IntervalOptions, comparisons, interval
from ...report.tidy import tidy_row

__all__ = ["Built", "build", "judgment_record", "ENSEMBLE_JUDGE", "ALL", "display_row", "distribution"]

#: the category of an item without one, and the ``model`` of a figure pooled over candidates
ALL = "all"


def judgment_record(model: str, judge: str, item, result, reading, *, reasked: bool = False,
                    error_kind: str | None = None, error: str | None = None, repeat: int | None = None
                    ) -> dict[str, Any]:
    """One judgment: the score read from ``result``'s reply (``reading``), or a failure with its
    kind (``error_kind`` for a judgment with no call: no answer to grade); ``repeat`` (with
    ``judge_repeats`` > 1 only) which repeat of the judgment it is."""
    ok = reading is not None
    error_kind, error = failure(result, ok, error_kind=error_kind, error=error)
    return {"model": model, "judge": judge, "index": item.id, "category": item.category or ALL, "kind": "rubric",
            **({} if repeat is None else {"repeat": repeat}), "score": reading.value if ok else None, "token": reading.token if ok else None,
            "span": list(reading.span) if ok else None, "ok": ok,
            "error_kind": error_kind, "error": error,
            "reasked": reasked, "judge_text": result.text if result is not None and result.ok else ""}


def _item_repeat(r: Mapping[str, Any]) -> tuple[str, str, int]:
    """An item and repeat: what a panel's judges rated alike (one judge's repeats are not a panel)."""
    return r["model"], r["index"], int(r.get("repeat", 0))


def ensemble_records(judgments: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per candidate, item (and repeat): the mean of the judges' valid scores (a failure when none
    is valid)."""
    out = []
    for (model, index, repeat), rs in by_item(judgments, _item_repeat).items():
        score = panel_mean(rs)
        out.append({"model": model, "judge": ENSEMBLE_JUDGE, "index": index, "category": rs[0]["category"],
                    "kind": "rubric", **({"repeat": repeat} if "repeat" in rs[0] else {}),
                    "score": score, "ok": score is not None,
                    "error_kind": None if score is not None else "no_valid_score",
                    "reasked": any(r.get("reasked") for r in rs)})
    return out


def _sums(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, tuple[float, float]]]:
    """Per candidate: item -> (sum of valid scores, their count)."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for r in records:
        per = out.setdefault(r["model"], {})
        n, d = per.get(r["index"], (0.0, 0.0))
        if r["score"] is not None:
            n, d = n + float(r["score"]), d + 1.0
        per[r["index"]] = (n, d)
    return out


def _pct(v: float | None, scale: tuple[float, float]) -> float | None:
    low, high = scale
    return None if v is None else 100.0 * (v - low) / (high - low)


def _r(v: float | None, digits: int = 3) -> float | None:
    return None if v is None or not math.isfinite(v) else round(v, digits)


def _rows(records: Sequence[Mapping[str, Any]], candidates: Sequence[str], options: IntervalOptions,
          scale: tuple[float, float]) -> list[dict[str, Any]]:
    """Results rows: per candidate overall, then per category (sorted)."""
    sums = _sums(records)
    cats = sorted({r["category"] for r in records})
    out = []
    for model in candidates:
        mine = [r for r in records if r["model"] == model]
        if not mine:
            continue
        groups = [("overall", ALL, mine)] + [("category", c, [r for r in mine if r["category"] == c]) for c in cats]
        for level, group, rs in groups:
            if not rs:
                continue
            items = {r["index"] for r in rs}
            item_sums = {i: s for i, s in sums[model].items() if i in items}
            valid = [float(r["score"]) for r in rs if r["score"] is not None]
            mean = sum(valid) / len(valid) if valid else None
            iv = interval(item_sums, options, key=f"{model}:{level}:{group}")
            low, high = (iv.low, iv.high) if iv is not None else (None, None)
            out.append({"model": model, "level": level, "group": group, "score": _r(mean),
                        "score_ci_low": _r(low), "score_ci_high": _r(high),
                        "pct": _r(_pct(mean, scale), 2), "pct_ci_low": _r(_pct(low, scale), 2),
                        "pct_ci_high": _r(_pct(high, scale), 2), "n": len(valid), "fail": len(rs) - len(valid),
                        "items": len(items), "small_n": len(items) < options.min_items_for_interval,
                        "reasked": sum(1 for r in rs if r.get("reasked"))})
    return out


def distribution(records: Sequence[Mapping[str, Any]], scale: tuple[float, float]) -> tuple[list[str], dict[str, int]]:
    """(bins high to low, counts per bin) of the valid scores: each whole number of the scale when it
    has at most 11, else ten equal bins; a score between whole numbers goes to the nearest."""
    low, high = scale
    whole = low == int(low) and high == int(high) and high - low <= 10
    if whole:
        bins = [f"{v:g}" for v in range(int(high), int(low) - 1, -1)]
    else:
        width = (high - low) / 10
        bins = [f"{low + (k - 1) * width:g}-{low + k * width:g}" for k in range(10, 0, -1)]
    counts = dict.fromkeys(bins, 0)
    for r in records:
        v = r.get("score")
        if v is None:
            continue
        if whole:
            counts[f"{min(max(math.floor(v + 0.5), int(low)), int(high)):g}"] += 1
        else:
            k = min(int((v - low) / ((high - low) / 10)), 9)
            counts[bins[9 - k]] += 1
    return bins, counts


def _rated(by_judge: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict:
    """(candidate, item, repeat) -> judge -> score; a judgment with no judge call (:data:`NO_CALL`:
    no answer to grade) says nothing about the judges and is left out."""
    return ratings(((j, r) for j, rs in by_judge.items() for r in rs), _item_repeat,
                   keep=lambda r: r.get("error_kind") not in NO_CALL)


def agreement_records(by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                      candidates: Sequence[str]) -> list[dict[str, Any]]:
    """Krippendorff's alpha (interval) of the judges' scores per (candidate, item), for each
    candidate then pooled (``model`` = ``"all"``; :mod:`judgekit.judging.honest` then pools it
    within candidates and adds the intervals)."""
    return agreement_rows(_rated(by_judge), list(by_judge), "interval", quantity="score", groups=candidates)


def tidy_rows(judgments: Sequence[Mapping[str, Any]], scale: tuple[float, float]) -> list[dict[str, Any]]:
    """The tidy export (:mod:`judgekit.report.tidy`): one row per item x candidate x judge (no
    order); ``extra`` holds where the score was read (``span``), the scale and the score as % of it."""
    return [tidy_row(item=j["index"], category=j["category"], candidate=j["model"], judge=j["judge"], order=None,
                     kind="rubric", value=j["score"], verdict=j.get("token"), ok=bool(j["ok"]),
                     error_kind=j["error_kind"], reasked=bool(j.get("reasked")), judge_text=j.get("judge_text") or "",
                     extra={"span": j.get("span"), "scale": list(scale), "pct": _r(_pct(j["score"], scale), 4)})
            for j in judgments]


def _score_sums(r: Mapping[str, Any]) -> list[float]:
    """A judgment's (score, 1), or (0, 0) without a score: one repeat's mean score is their ratio."""
    return [0.0, 0.0] if r["score"] is None else [float(r["score"]), 1.0]


def _add_spread(rows, everyone, scale: tuple[float, float], k: int) -> None:
    """Each row's judge-induced spread (score and % of scale) between the ``k`` repeats."""
    add_spread(rows, everyone, _score_sums, {"score": (0, 1)}, k, overall_group=ALL)
    if k < 2:
        return
    width = scale[1] - scale[0]
    for judge_rows in rows.values():
        for r in judge_rows:
            for suffix in SPREAD:
                v = r.get(f"score_{suffix}")
                r[f"pct_{suffix}"] = None if v is None else _r(100.0 * v / width, 2)
                r[f"score_{suffix}"] = _r(v)


@paused_gc()
def build(judgments: Sequence[Mapping[str, Any]], *, judges: Sequence[str], candidates: Sequence[str],
          options, repeats: int = 1, labels: HumanLabels | None = None) -> Built:
    """Everything the run reports from its judgment records (``options``: the benchmark's Options;
    ``repeats``: how many times each judgment was asked;
    ``labels``: human labels, for each judge's and the ensemble's agreement with them)."""
    scale = (float(options.scale[0]), float(options.scale[1]))
    # the interval options alone (those a caller's options leave out at their defaults)
    iv_options = IntervalOptions(**{k: getattr(options, k) for k in IntervalOptions.model_fields if hasattr(options, k)})
    judges = list(judges)
    panel = len(judges) > 1
    by_judge = {j: [r for r in judgments if r["judge"] == j] for j in judges}
    everyone: dict[str, Sequence[Mapping[str, Any]]] = dict(by_judge)
    if panel:
        everyone[ENSEMBLE_JUDGE] = ensemble_records(judgments)
    rows = {j: _rows(records, candidates, iv_options, scale) for j, records in everyone.items()}
    _add_spread(rows, everyone, scale, repeats)
    compared = judges[:1] + ([ENSEMBLE_JUDGE] if panel else [])
    comps = [{"judge": j, **c} for j in compared
             for c in comparisons(_sums(everyone[j]), options, "score", key=f"{j}:", candidates=candidates)]
    first = rows[judges[0]] if judges else []
    dist = {j: {m: distribution([r for r in recs if r["model"] == m], scale)[1] for m in candidates}
            for j, recs in everyone.items()}
    intervals = intervals_summary(options, figures=("score", "pct"), item="a (candidate, item): its score (a failed "
                                  "judgment: no score, the item still drawn)")
    intervals["multiple_comparisons"] = adjust_comparisons(comps, options.interval_level,
                                                           getattr(options, "holm_adjust", True) and options.bootstrap_samples > 0)
    summary: dict[str, Any] = {"judges": judges, "results": first, "intervals": intervals,
                               "comparisons": comps, "distribution": dist,
                               "bins": distribution([], scale)[0]}
    if repeats > 1:
        summary["judge_repeats"] = repeats
    tables: dict[str, list[dict[str, Any]]] = {"summary": [{"judge": j, **r} for j in everyone for r in rows[j]],
                                               "comparisons": comps}
    more: list[tuple[str, list[dict[str, Any]]]] = []
    if panel:
        add_panel(summary, tables, rows, by_judge, judges, candidates,
                  ensemble_summary("mean", rows[ENSEMBLE_JUDGE], rules={"score": "mean"},
                                   description=f"per candidate and item: {ENSEMBLE_RULES['mean']}"),
                  agreement=agreement_records)
        more.append(("Per judge, overall", [{"judge": j, **{k: v for k, v in display_row(r).items() if k != "category"}}
                                            for j in everyone for r in rows[j] if r["level"] == "overall"]))
    annotate_scores(summary, rows, by_judge, _rated(by_judge) if panel else {}, candidates, iv_options)
    if panel:
        more.append(("Judge agreement (Krippendorff's alpha)", [agreement_display(a) for a in summary["agreement"]]))
    if comps:
        more.append(("Paired comparisons (overall, a - b)", [
            {"judge": c["judge"], "a - b": f"{c['a']} - {c['b']}",
             "difference": shown(c["difference"], c["ci_low"], c["ci_high"], 2),
             "items": f"{c['items']}!" if c.get("small_n") else c["items"], **excludes_cell(c)} for c in comps]))
    if repeats > 1:
        more.append(spread_display(rows, repeats))
    if labels is not None:
        add_human_agreement(summary, tables, more, everyone, labels, candidates, options, kinds=("rubric",),
                            scale=f"{scale[0]:g}..{scale[1]:g}")
    display = [display_row(r) for r in first]
    return Built(summary, tables, display, more, tidy=tidy_rows(judgments, scale))


def display_row(r: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the printed table: model, category, Score [interval], % of scale, n (valid
    judgments; ``!`` when the row's items are too few for the interval), fail."""
    return {"model": r["model"], "category": "Overall" if r["level"] == "overall" else r["group"],
            "Score": shown(r["score"], r["score_ci_low"], r["score_ci_high"], 2),
            "% of scale": shown(r["pct"], r["pct_ci_low"], r["pct_ci_high"], 1),
            "n": f"{r['n']}!" if r.get("small_n") else r["n"], "fail": r["fail"]}


def agreement_display(a: Mapping[str, Any]) -> dict[str, Any]:
    """An agreement record as printed: alpha with its interval (the pooled row pooled within
    candidates, ``all (within)``), full agreement, items."""
    alpha = ("-" if a["krippendorff_alpha"] is None else
             shown(a["krippendorff_alpha"], a.get("alpha_ci_low"), a.get("alpha_ci_high"), 2)
             if a.get("alpha_ci_low") is not None else f"{a['krippendorff_alpha']:.3f}")
    row = {"model": "all (within)" if a.get("pooling") else a["model"], "alpha": alpha,
           "full agreement %": "-" if a["full_agreement"] is None else f"{100 * a['full_agreement']:.1f}",
           "items": a["items"]}
    if "alpha_repeat_sd" in a:  # judge repeats: alpha's spread between them
        row["alpha SD (range) over repeats"] = repeat_cell(a, "alpha", 2)
    return row


def spread_display(rows: Mapping[str, Sequence[Mapping[str, Any]]], k: int) -> tuple[str, list[dict[str, Any]]]:
    """The printed (and reported) table of the judge-induced spread: per judge and candidate,
    overall, the score's and the % of scale's SD between repeats (with their range)."""
    return (f"Judge-induced spread over {k} repeats: SD (range)",
            [{"judge": j, "model": r["model"], "Score": repeat_cell(r, "score", 2),
              "% of scale": repeat_cell(r, "pct", 1)}
             for j, judge_rows in rows.items() for r in judge_rows if r["level"] == "overall"])
