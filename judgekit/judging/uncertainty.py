"""The interval options every benchmark shares, and the figures built from them.

A benchmark's ``Options`` inherits :class:`IntervalOptions`; its pipeline keeps, per figure, a
numerator and a denominator for each item (see :mod:`judgekit.judging.intervals`) and calls
:func:`interval` for the figure's interval and :func:`comparisons` for the paired differences
between candidates (a share of yes/no judgments, one per item, is :func:`rate`);
:func:`bootstrap_summary` says in summary.json how the intervals were made.  Intervals are an
addition, not a departure from the authors' code: the point estimates are unchanged.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ..config import STRICT_CONFIG
from .intervals import DEFAULT_LEVEL, DEFAULT_SAMPLES, Interval, paired_difference_p, ratio_interval

__all__ = ["IntervalOptions", "ItemSums", "Rate", "interval", "rate", "comparisons", "bootstrap_summary",
           "FIGURE_MIN_ITEMS", "min_items_for"]

#: item -> (numerator, denominator) of one figure for one candidate
ItemSums = Mapping[Hashable, tuple[float, float]]


class IntervalOptions(BaseModel):
    """``[options]`` for the bootstrap intervals (every benchmark)."""

    model_config = STRICT_CONFIG

    bootstrap_samples: int = Field(DEFAULT_SAMPLES, ge=0, le=100_000,
                                   description="bootstrap resamples of the items for each 95% interval "
                                               "(0: no intervals)")
    bootstrap_seed: int = Field(0, ge=0, description="the bootstrap's seed: the same seed, the same intervals")
    interval_level: float = Field(DEFAULT_LEVEL, gt=0.5, lt=1.0, description="the intervals' coverage")
    min_items_for_interval: int = Field(20, ge=1, description="rows with fewer items are flagged as too small for "
                                                              "their interval (its coverage falls below nominal)")
    holm_adjust: bool = Field(True, description="also say whether each paired comparison excludes 0 after Holm's "
                                                "adjustment across the run's comparisons (the raw flag stays)")


#: figure -> the fewest items from which ``perf/coverage.py`` measured its nominal 95 % interval
#: covering at least 93 % at every item count it tried (25, 50, 100, 200; docs/statistics.md); a
#: row with one of these figures and fewer items is flagged ``small_n`` whatever
#: ``min_items_for_interval`` says (that option raises every threshold, it lowers none of these)
FIGURE_MIN_ITEMS: dict[str, int] = {
    "lc_win_rate": 50,  # 92-93 % at 25 items, 94.5-95 % at 50
    "sc_score": 100,    # 90-92.5 % at 50 items, 93-94 % at 100
    # agreement with human labels (consistency, Wilson's interval, needs none: 93-97 % from 25 items)
    **{f: 100 for f in ("kappa", "kappa_linear", "kappa_quadratic", "spearman", "kendall", "mae")},  # 91.5-92.5 % at 50
    # Krippendorff's alpha between the judges (its item bootstrap): VFS alpha within a candidate
    # 89.5-91 % at 25-50 items, 95 % at 100
    "krippendorff_alpha": 100,
}


def min_items_for(options: IntervalOptions, figures: Iterable[str] = ()) -> int:
    """The item count below which a row holding ``figures`` is flagged ``small_n``: the option's
    ``min_items_for_interval`` or, where higher, a figure's :data:`FIGURE_MIN_ITEMS`."""
    return max([options.min_items_for_interval, *(FIGURE_MIN_ITEMS.get(f, 0) for f in figures)])


def bootstrap_summary(options: IntervalOptions, *, items: str | None = None, **more: Any) -> dict[str, Any]:
    """``summary["intervals"]``: the method, what one resampled item is (``items``, where said),
    the samples, level and seed, then ``more`` (a benchmark's own notes) in the order given."""
    out: dict[str, Any] = {"method": "percentile bootstrap over items"}
    if items is not None:
        out["items"] = items
    out.update(samples=options.bootstrap_samples, level=options.interval_level, seed=options.bootstrap_seed)
    out.update(more)
    return out


def _in_order(items: Iterable[Hashable]) -> list[Hashable]:
    """Items in a fixed order (by ``repr``), so an interval does not depend on the order in which a
    pipeline happened to collect its items: the i-th drawn index always names the same item."""
    return sorted(items, key=repr)


def interval(sums: ItemSums, options: IntervalOptions, key: str, scale: float = 1.0) -> Interval | None:
    """The figure sum(num) / sum(den) x ``scale`` over ``sums``' items with its interval; None when
    intervals are off (``bootstrap_samples = 0``).  The items are resampled in ``repr`` order of
    their keys, so the same items give the same interval whatever order ``sums`` lists them in."""
    if options.bootstrap_samples == 0:
        return None
    items = [sums[i] for i in _in_order(sums)]
    return ratio_interval([n for n, _ in items], [d for _, d in items], samples=options.bootstrap_samples,
                          level=options.interval_level, seed=options.bootstrap_seed, key=key, scale=scale)


@dataclass(frozen=True)
class Rate:
    """A share of yes/no judgments with its interval (:func:`rate`)."""

    value: float | None  # the share of yes x scale; None with no item
    low: float | None  # the interval's ends; None with no item or with intervals off
    high: float | None
    n: int  # the items judged


def rate(outcomes: Mapping[Hashable, bool], options: IntervalOptions, *, key: str, scale: float = 100.0) -> Rate:
    """The share of ``True`` among ``outcomes`` (item -> one yes/no judgment: a pass, a win, a
    correct answer) x ``scale``, with its bootstrap interval over the items (:func:`interval`, each
    item numerator 1 or 0 over denominator 1; ``key`` seeds the draw as there).  Items with no
    judgment are left out of ``outcomes`` by the caller, and counted by it."""
    if not outcomes:
        return Rate(None, None, None, 0)
    value = scale * sum(1 for v in outcomes.values() if v) / len(outcomes)
    ci = interval({i: (float(bool(v)), 1.0) for i, v in outcomes.items()}, options, key=key, scale=scale)
    return Rate(value, ci.low if ci else None, ci.high if ci else None, len(outcomes))


def comparisons(per_candidate: Mapping[str, ItemSums], options: IntervalOptions, metric: str,
                scale: float = 1.0, key: str = "", candidates: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every pair of candidates (in ``candidates`` order) on the items both have: the difference
    ``a - b`` of ``metric`` and its paired bootstrap interval (items in ``repr`` order, as
    :func:`interval`)."""
    if options.bootstrap_samples == 0:
        return []
    names = [n for n in (list(candidates) if candidates is not None else list(per_candidate)) if n in per_candidate]
    # each candidate's sums as arrays in item order, once: a pair on the same items (the usual
    # case) takes them as they are, instead of sorting and copying them for every pair
    arrays = {}
    for name in names:
        sums = per_candidate[name]
        order = _in_order(sums)
        arrays[name] = (np.array([sums[i][0] for i in order], dtype=float),
                        np.array([sums[i][1] for i in order], dtype=float))
    rows = []
    for a, b in combinations(names, 2):
        sa, sb = per_candidate[a], per_candidate[b]
        if sa.keys() == sb.keys():
            (num_a, den_a), (num_b, den_b) = arrays[a], arrays[b]
        else:
            common = _in_order(i for i in sa if i in sb)
            num_a, den_a = [sa[i][0] for i in common], [sa[i][1] for i in common]
            num_b, den_b = [sb[i][0] for i in common], [sb[i][1] for i in common]
        iv, p = paired_difference_p(num_a, den_a, num_b, den_b,
                               samples=options.bootstrap_samples, level=options.interval_level,
                               seed=options.bootstrap_seed, key=f"{key}{metric}:{a}-{b}", scale=scale)
        rows.append({"metric": metric, "a": a, "b": b, "items": iv.items, "difference": iv.estimate,
                     "ci_low": iv.low, "ci_high": iv.high, "level": iv.level,
                     "excludes_zero": (iv.low is not None and iv.high is not None and (iv.low > 0 or iv.high < 0)),
                     "p_value": p})
    return rows
