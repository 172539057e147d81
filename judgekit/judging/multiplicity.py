"""Many paired comparisons at once: a bootstrap p-value per comparison and Holm's step-down
adjustment across a run's family of comparisons.

A run compares every pair of candidates on several figures (Reward, Win Rate, VFS) and for
several judges; with 95 % intervals, each comparison of two equal candidates "excludes 0" 5 % of
the time, so a family of many says something "excludes 0" far more often.  Holm (1979) keeps
the chance of any false "excludes 0" in the family at most 1 - level, without assuming the
comparisons independent, and never rejects less than Bonferroni.

* :func:`bootstrap_p` -- the p-value of "the difference is 0" from the bootstrap differences:
  twice the smaller tail share, ``2 min(P*(d <= 0), P*(d >= 0))`` (capped at 1).  It is the
  percentile interval inverted: the level-L percentile interval excludes 0 when ``p < 1 - L``.
* :func:`swap_p` -- the p-value a run's comparisons carry: a paired swap (sign-flip) permutation
  test.  Under "a and b are interchangeable", swapping a's and b's judgments of an item leaves
  the data as likely, so each of B random sets of swapped items gives the difference a null
  draw; ``p = (1 + #{|d*| >= |d|}) / (B + 1)``.  Its size holds at any n (the bootstrap p above
  is anti-conservative at small n: with 18 comparisons of truly equal candidates, Holm on it
  said something "excludes 0" in 26 % of runs at 12 items, 13 % at 50); its smallest value is
  ``1 / (B + 1)``, so Holm can reject nothing in a family of more than about ``(1 - level) (B +
  1)`` comparisons: more resamples for a larger family.
* :func:`holm` -- adjusted p-values: with the m p-values sorted, ``p_(i)`` becomes
  ``max_{j <= i} min(1, (m - j + 1) p_(j))``.
* :func:`adjust_comparisons` -- the comparison rows of a run with ``p_holm`` and
  ``excludes_zero_holm`` added beside the raw ``excludes_zero``.
* :func:`adjust_summary` -- the same over a summary's ``comparisons``, once (a benchmark whose
  results carry raw p-values: GuessBench, MMIE, MMGenBench; the runner calls it too).
* :func:`excludes_cell` -- the printed ``excludes 0`` column, ``raw/Holm`` when adjusted.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

__all__ = ["bootstrap_p", "swap_p", "swap_p_from", "swap_signs", "holm", "adjust_comparisons", "adjust_summary", "excludes_cell"]


def bootstrap_p(stats: np.ndarray) -> float | None:
    """Two-sided p-value of 0 from the bootstrap differences ``stats`` (NaN resamples left out);
    None when none is defined."""
    s = np.asarray(stats, dtype=float)
    s = s[~np.isnan(s)]
    if s.size == 0:
        return None
    below = float(np.count_nonzero(s <= 0.0)) / s.size
    above = float(np.count_nonzero(s >= 0.0)) / s.size
    return min(1.0, 2.0 * min(below, above))


def swap_signs(rng: np.random.Generator, n: int, samples: int) -> np.ndarray:
    """``samples`` x ``n`` random signs: -1 where the item's two sides are swapped."""
    return rng.integers(0, 2, size=(samples, n), dtype=np.int8).astype(float) * 2.0 - 1.0


def swap_p(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray,
           signs: np.ndarray) -> np.ndarray:
    """The swap permutation p-value (module docstring) of each of m paired ratio differences
    ``sum(num_a) / sum(den_a) - sum(num_b) / sum(den_b)``: the arrays are items x m (item i's
    sums on each side), ``signs`` B x items from :func:`swap_signs`.  NaN where a side's
    denominator is 0 in the data; a swapped draw with a zero denominator counts as extreme."""
    na, da, nb, db = (np.asarray(x, dtype=float).reshape(np.shape(x)[0], -1) for x in (num_a, den_a, num_b, den_b))
    return swap_p_from((na.sum(axis=0), da.sum(axis=0), nb.sum(axis=0), db.sum(axis=0)),
                       (signs @ na, signs @ da, signs @ nb, signs @ db))


def swap_p_from(totals, signed) -> np.ndarray:
    """:func:`swap_p` from the sides' totals ``(num_a, den_a, num_b, den_b)`` (each m) and their
    signed sums ``signs @ x`` (each B x m): when many comparisons share their sides (every pair
    of k candidates), the signed sums of each candidate are one matrix product for all pairs."""
    tn_a, td_a, tn_b, td_b = totals
    sn_a, sd_a, sn_b, sd_b = signed
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.abs(tn_a / td_a - tn_b / td_b)
        # a's swapped sums are half the two sides' totals plus half the signed item differences
        hn, hd = (sn_a - sn_b) / 2.0, (sd_a - sd_b) / 2.0
        mn, md = (tn_a + tn_b) / 2.0, (td_a + td_b) / 2.0
        drawn = np.abs((mn + hn) / (md + hd) - (mn - hn) / (md - hd))
        # ties within rounding count as extreme (a swap that changes nothing gives exactly |d|)
        extreme = ~(drawn < observed - 1e-12 * np.maximum(observed, 1.0))
    p = (1.0 + extreme.sum(axis=0)) / (sn_a.shape[0] + 1.0)
    return np.where((td_a > 0) & (td_b > 0), p, np.nan)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return []
    if np.any(np.isnan(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError("p-values must lie in [0, 1]")
    order = np.argsort(p, kind="mergesort")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return [float(v) for v in adjusted]


def adjust_comparisons(rows: Sequence[MutableMapping[str, Any]], level: float, enabled: bool = True) -> dict[str, Any]:
    """Add ``p_holm`` and ``excludes_zero_holm`` to every comparison row with a ``p_value`` (in
    place); the family is every such row.  Rows without a p-value get None.  ``enabled`` False:
    nothing is added.  Returns summary.json's description of the adjustment."""
    if not enabled:
        return {"method": None, "family": 0}
    family = [r for r in rows if r.get("p_value") is not None]
    adjusted = holm([r["p_value"] for r in family])
    for r in rows:
        r["p_holm"] = None
        r["excludes_zero_holm"] = None
    alpha = 1.0 - level
    for r, p in zip(family, adjusted):
        r["p_holm"] = p
        # adjusted never says more than raw: p and the percentile ends can differ by interpolation
        r["excludes_zero_holm"] = bool(r.get("excludes_zero")) and p < alpha
    return {"method": "holm", "family": len(family), "alpha": round(alpha, 12),
            "description": "Holm's step-down adjustment of the bootstrap p-values over every paired comparison "
                           "of the run (all figures, pairs and judges)"}


def adjust_summary(summary: MutableMapping[str, Any], enabled: bool = True) -> None:
    """Holm's adjustment over ``summary["comparisons"]`` (the rows with a ``p_value``) with
    ``summary["intervals"]["multiple_comparisons"]`` saying so; nothing without intervals, without
    p-values, or when a row already has ``p_holm`` (adjusted before).  The rows are adjusted in
    place, so a table holding the same rows (the CSV) gets the columns too."""
    comps = summary.get("comparisons")
    iv = summary.get("intervals")
    if not isinstance(comps, list) or not isinstance(iv, dict) or not iv.get("method"):
        return
    rows = [c for c in comps if isinstance(c, dict)]
    if any("p_holm" in c for c in rows) or not any("p_value" in c for c in rows):
        return
    iv["multiple_comparisons"] = adjust_comparisons(rows, float(iv.get("level", 0.95)), enabled)


def excludes_cell(c: Mapping[str, Any], title: str = "excludes 0") -> dict[str, str]:
    """A comparison's printed ``excludes 0`` column: ``yes``/``no``, or raw and after Holm's
    adjustment (``excludes 0 raw/Holm``: ``yes/no``; ``-`` where the row had no p-value) when
    the run made it."""
    raw = "yes" if c.get("excludes_zero") else "no"
    if "excludes_zero_holm" not in c:
        return {title: raw}
    return {f"{title} raw/Holm": f"{raw}/{ {True: 'yes', False: 'no'}.get(c['excludes_zero_holm'], '-') }"}
