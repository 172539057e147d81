"""How a pairwise judge behaves: swap consistency, first-slot preference, ties, length bias.

Input: one record per judgment, from the candidate's point of view as the pipelines keep them:
``item`` (any hashable, the same for both orders of an item), ``order`` (0: the baseline in the
first slot, the candidate in the second; 1: swapped), ``score`` (the candidate's verdict -2..+2,
already negated back for the swapped order; None for a failure) and optionally ``length_diff``
(candidate answer length minus baseline answer length, e.g. in characters).

* swap consistency: of the items with both orders judged, the share whose two verdicts agree
  after the swap, by direction (candidate better / tie / baseline better); ``swap_exact`` by
  the full -2..+2 verdict.  A judge without position bias scores 1.
* first-slot preference: of the valid verdicts that are not ties, the share won by the answer in
  the first slot (Assistant A), whichever it was; 0.5 means no preference.
* ties: the share of valid verdicts that are ties.
* length correlation: Spearman's rho between the candidate's verdict and the length difference
  (positive: the longer answer tends to win).
* parse failures: the share of judgments with no valid verdict.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["pairwise_behaviour", "pooled_within", "rank_dots"]


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def _ranks(xs: list[float]) -> np.ndarray:
    """1-based ranks, tied values sharing their average rank (scipy.stats.rankdata's "average"):
    each distinct value's (first + last position + 1) / 2 in sorted order."""
    x = np.asarray(xs, dtype=float)
    # tied values share their rank, so the order among them does not matter: any sort will do;
    # NaNs (sorted last, each a rank of its own in their order) need the stable one
    order = np.argsort(x, kind="mergesort" if np.isnan(x).any() else None)
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], x.size]
    ranks = np.empty(x.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def _varies(x: np.ndarray) -> bool:
    """``len(set(x.tolist())) >= 2``: two values differ (each NaN, a new float object, counts as
    a value of its own)."""
    return x.size >= 2 and bool(np.isnan(x).any() or x.min() != x.max())


def rank_dots(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """(sum rx ry, sum rx^2, sum ry^2) of the average ranks of ``xs`` and ``ys``, each centred on
    its mean: what Spearman's rho (:func:`_spearman`) and its pooling within groups
    (:func:`pooled_within`) are made of."""
    rx, ry = _ranks(xs), _ranks(ys)
    rx -= rx.mean()
    ry -= ry.mean()
    return float(np.dot(rx, ry)), float(np.dot(rx, rx)), float(np.dot(ry, ry))


def _rho(sxy: float, sxx: float, syy: float) -> float | None:
    """Pearson's r of centred ranks from :func:`rank_dots`, clipped to [-1, 1]; None for NaN."""
    rho = float(np.float64(sxy) / np.sqrt(np.float64(sxx) * np.float64(syy)))
    return min(1.0, max(-1.0, rho)) if rho == rho else None


def _spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson's r of the average ranks, as scipy.stats.spearmanr computes it, without
    importing scipy.stats: 1.5 s of CPU at every run's start); None below 3 pairs or without variation."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if x.size < 3 or not _varies(x) or not _varies(y):
        return None
    return _rho(*rank_dots(x, y))


def pooled_within(parts: Iterable[tuple[int, float, float, float]]) -> float | None:
    """Spearman's rho pooled within groups from each group's (pairs, :func:`rank_dots`), in group
    order (groups of fewer than 2 pairs left out): Pearson's r of all the centred ranks together.
    None below 3 pairs or without variation."""
    sxy = sxx = syy = 0.0
    pairs = 0
    for n, xy, xx, yy in parts:
        if n < 2:
            continue
        sxy += xy
        sxx += xx
        syy += yy
        pairs += n
    if pairs < 3 or sxx <= 0 or syy <= 0:
        return None
    return min(1.0, max(-1.0, sxy / float(np.sqrt(sxx * syy))))


def pairwise_behaviour(judgments: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The behaviour figures of one judge (on one candidate, or pooled over several; the item
    key must then tell candidates apart).  Shares are fractions 0..1, None when undefined."""
    by_item: dict[Hashable, dict[int, int | None]] = {}
    total = failures = ties = first = second = 0
    scores: list[float] = []
    diffs: list[float] = []
    for j in judgments:
        total += 1
        s, order = j.get("score"), int(j.get("order", 0))
        if s is None:
            failures += 1
            by_item.setdefault(j["item"], {})[order] = None
            continue
        s = s if isinstance(s, float) else int(s)  # a mean ensemble's averaged verdict stays as it is
        by_item.setdefault(j["item"], {})[order] = s
        if s == 0:
            ties += 1
        else:
            # the first slot holds the baseline in order 0 (it wins when the candidate loses)
            first_won = (s < 0) if order == 0 else (s > 0)
            first += first_won
            second += not first_won
        d = j.get("length_diff")
        if d is not None:
            scores.append(float(s))
            diffs.append(float(d))
    both = [(o[0], o[1]) for o in by_item.values() if o.get(0) is not None and o.get(1) is not None]
    valid = total - failures
    decided = first + second
    return {
        "judgments": total,
        "parse_failures": failures,
        "parse_failure_rate": failures / total if total else None,
        "items_both_orders": len(both),
        "swap_consistency": sum(_sign(a) == _sign(b) for a, b in both) / len(both) if both else None,
        "swap_exact": sum(a == b for a, b in both) / len(both) if both else None,
        "first_slot_preference": first / decided if decided else None,
        "first_slot_wins": first,
        "second_slot_wins": second,
        "tie_rate": ties / valid if valid else None,
        "length_correlation": _spearman(diffs, scores),
        "length_pairs": len(scores),
    }
