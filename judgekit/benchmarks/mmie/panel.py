"""MMIE's figures across a panel of scorers: pure functions over score records.

A record is one scorer's score of one answer as the category table reads it (scored, or with no
valid score): ``{"judge", "model" (the system), "id", "category", "field", "score"}``; failed
scoring calls and unscored rows are not records (as in :func:`~judgekit.metrics.mmie.category_table`).

* :func:`category_rows`: a scorer's Table 3 rows (``category_table``) with each figure's bootstrap
  interval (``sa``, ``pbl``, ``msr``, ``avg`` -> ``<figure>_ci_low`` / ``<figure>_ci_high``; items
  resampled, an item contributing (its score, 1), or (0, 0) without a valid score, as
  :func:`~judgekit.metrics.mmie.item_sums` says);
* :func:`ensemble_records`: one record per answer holding the mean of the scorers' valid scores
  (:func:`~judgekit.judging.agreement.panel_mean`, in the panel's order), None when none is
  valid; its rows come from the same ``category_table`` (``whole=False``), so SA / PBL / MSR /
  Avg. mean the same;
* :func:`agreement_records`: Krippendorff's alpha (interval level) of the 0..6 scores, per system
  and pooled over the systems' answers (:func:`~judgekit.judging.agreement.agreement_rows`, as
  every panel's);
* :func:`comparison_rows`: the paired Avg. difference between every two systems on the items both
  have, with its interval;
* :func:`alignment_rows`: Table 5 (cosine, MSE, MAE, Pearson against human scores) per scorer and
  for the ensemble.

Each figure's bootstrap stream is keyed by scorer, system and figure (``"judge:system:avg"``), so
an interval does not move when another scorer or system is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.agreement import POOLED, agreement_rows, by_item, panel_mean, ratings
from ...judging.intervals import with_interval
from ...judging.uncertainty import IntervalOptions, bootstrap_summary, comparisons, interval
from ...metrics.mmie import FIGURES, alignment, category_table, item_sums

__all__ = ["ENSEMBLE", "POOLED", "QUANTITY", "RULE", "SCALE", "agreement_records", "alignment_rows",
           "category_rows", "comparison_rows", "ensemble_records", "intervals_summary"]

#: the ensemble's name where a scorer's would stand (``judge`` column, ``scorer`` of Table 5)
ENSEMBLE = "ensemble"
#: the ensemble rule (:data:`~judgekit.judging.agreement.ENSEMBLE_RULES`)
RULE = "mean"
#: mean score (0..6) -> percent
SCALE = 100.0 / 6.0
#: what the agreement records rate
QUANTITY = "score (0-6)"


def category_rows(records: Sequence[Mapping[str, Any]], options: IntervalOptions, judge: str,
                  whole: bool = True) -> list[dict[str, Any]]:
    """``category_table(records)`` with every figure's interval (none when intervals are off)."""
    rows = category_table(records, whole=whole)
    if options.bootstrap_samples == 0:
        return rows
    sums = item_sums(records, whole=whole)
    for row in rows:
        model = row["model"]
        for fig in FIGURES:
            iv = interval(sums[model][fig], options, key=f"{judge}:{model}:{fig}", scale=SCALE)
            with_interval(row, fig, iv)
    return rows


def _answer(r: Mapping[str, Any]) -> tuple[str, Any]:
    return r["model"], r["id"]


def ensemble_records(records: Sequence[Mapping[str, Any]], judges: Sequence[str]) -> list[dict[str, Any]]:
    """One record per (system, item) some scorer has a record of, in the order first seen: the
    mean of the scorers' valid scores (None when no scorer gave one), ``judge`` = :data:`ENSEMBLE`."""
    return [{**rs[0], "judge": ENSEMBLE, "score": panel_mean(rs, judges)}
            for rs in by_item(records, _answer).values()]


def agreement_records(records: Sequence[Mapping[str, Any]], judges: Sequence[str],
                      systems: Sequence[str]) -> list[dict[str, Any]]:
    """Krippendorff's alpha (interval level) of the scorers' 0..6 scores: one record per system,
    then one over every system's answers (``system`` = :data:`POOLED`).  A scorer's missing or
    unparseable score is a missing rating."""
    rated = ratings(((r["judge"], r) for r in records), _answer)
    return agreement_rows(rated, judges, "interval", quantity=QUANTITY, groups=systems, name="system",
                          keep_empty=True)


def comparison_rows(records: Sequence[Mapping[str, Any]], options: IntervalOptions, judge: str,
                    systems: Sequence[str], whole: bool = True) -> list[dict[str, Any]]:
    """The paired Avg. difference (percent) of every two systems, ``judge`` first."""
    sums = item_sums(records, whole=whole)
    rows = comparisons({m: figs["avg"] for m, figs in sums.items()}, options, "avg", scale=SCALE,
                       key=f"{judge}:", candidates=systems)
    return [{"judge": judge, **r} for r in rows]


def alignment_rows(human: Mapping[str, float], system: str,
                   per_scorer: Mapping[str, Mapping[str, float | None]]) -> list[dict[str, Any]]:
    """Table 5: scorer -> (item -> its score of ``system``'s answer, None without one) against the
    human scores, over the items both name; one row per scorer, in order."""
    rows = []
    for scorer, mine in per_scorer.items():
        ids = [i for i in human if i in mine]
        a = alignment([mine[i] for i in ids], [human[i] for i in ids])
        rows.append({"system": system, "scorer": scorer, "items": len(ids), **a})
    return rows


def intervals_summary(options: IntervalOptions) -> dict[str, Any]:
    """``summary["intervals"]``."""
    return bootstrap_summary(options)


