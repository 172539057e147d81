"""Krippendorff's alpha from coincidence matrices, vectorised so that a bootstrap over units, and
pooling within groups (candidates), cost one matrix product.

A unit u (an item in one order for one candidate) with m_u >= 2 ratings adds to the coincidence
matrix ``o[c, k] += (n_uc n_uk - [c = k] n_uc) / (m_u - 1)`` (n_uc: how many of its ratings are
value c).  With the marginals ``n_c = sum_k o[c, k]`` and ``n = sum_c n_c`` (Krippendorff 2011,
"Computing Krippendorff's alpha-reliability"):

    alpha = 1 - (n - 1) sum_ck o[c, k] delta(c, k) / sum_ck n_c n_k delta(c, k)

with delta the metric of the level: nominal ``[c != k]``; interval ``(c - k)^2``; ratio
``((c - k) / (c + k))^2``; ordinal ``(sum_{g from c to k} n_g - (n_c + n_k) / 2)^2`` (ranks
from the marginals).  This is what the ``krippendorff`` package computes (the tests compare).

Pooled within groups: each group g (a candidate) has its own observed and expected disagreement,
``D_o,g = sum o_g delta_g / n_g`` and ``D_e,g = sum n_gc n_gk delta_g / (n_g (n_g - 1))``, and

    alpha_within = 1 - sum_g n_g D_o,g / sum_g n_g D_e,g

so the disagreement expected by chance pairs values of the same candidate only: that one
candidate is better than another does not count as agreement (pooling across candidates, the
values' spread between candidates inflates D_e and alpha with it).  With one group it is alpha.

The interval: the clusters (items, each with all its units: every candidate and both orders)
are drawn with replacement, their coincidence matrices summed with the draw's counts, and the
percentile interval taken of the resampled alphas (resamples where alpha is undefined left out).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .intervals import _draws, _percentiles, _rng

__all__ = ["alpha_from_coincidences", "grouped_alpha", "matrix_grouped_alpha", "subset_alphas", "unit_features"]

_MISSING = object()


def _delta(values: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    """delta(c, k) for each resample: marginals (B x V) -> (B x V x V)."""
    c = values[:, None]
    k = values[None, :]
    b = marginals.shape[0]
    if level == "nominal":
        d = (c != k).astype(float)
    elif level == "interval":
        d = (c - k) ** 2
    elif level == "ratio":
        s = c + k
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(s != 0, ((c - k) / np.where(s != 0, s, 1.0)) ** 2, 0.0)
    elif level == "ordinal":
        cum = np.cumsum(marginals, axis=1)  # B x V
        # sum_{g=c..k} n_g for c <= k: cum[k] - cum[c] + n_c
        lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        between = cum[:, hi] - cum[:, lo] + marginals[:, lo]
        half = (marginals[:, :, None] + marginals[:, None, :]) / 2.0
        return (between - half) ** 2
    else:
        raise ValueError(f"unknown level of measurement {level!r}")
    return np.broadcast_to(d, (b, values.size, values.size))


def alpha_from_coincidences(o: np.ndarray, values: np.ndarray, level: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weighted observed disagreement sum, expected disagreement sum, n) per row of ``o``
    (B x V x V coincidence matrices over the sorted distinct ``values``); alpha is
    ``1 - (n - 1) obs / exp``."""
    marg = o.sum(axis=2)
    n = marg.sum(axis=1)
    d = _delta(values, marg, level)
    obs = np.einsum("bck,bck->b", o, d)
    exp = np.einsum("bc,bk,bck->b", marg, marg, d)
    return obs, exp, n


def _alpha(obs, exp, n) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((exp > 0) & (n > 1), 1.0 - (n - 1) * obs / np.where(exp > 0, exp, 1.0), np.nan)


def _within(obs, exp, n) -> np.ndarray:
    """alpha pooled within groups from per-group sums (B x G)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        d_o = np.where(n > 0, obs / np.where(n > 0, n, 1.0), 0.0)
        d_e = np.where(n > 1, exp / np.where(n > 1, n * (n - 1), 1.0), 0.0)
        top, bottom = (n * d_o).sum(axis=1), (n * d_e).sum(axis=1)
        return np.where(bottom > 0, 1.0 - top / np.where(bottom > 0, bottom, 1.0), np.nan)


def grouped_alpha(ratings: Mapping[Hashable, Mapping[str, float | None]], judges: Sequence[str], level: str, *,
                  group: Any, cluster: Any, samples: int, interval_level: float, seed: int, key: str,
                  groups: Sequence[Hashable] | None = None) -> dict[str, Any]:
    """Alpha per group, pooled across groups and pooled within groups, each with its interval.

    ``ratings``: unit -> judge -> value (None: no rating); ``group(unit)`` names its group (a
    candidate), ``cluster(unit)`` the item it is resampled with.  Returns ``{"groups": {g:
    (alpha, low, high)}, "across": (...), "within": (...)}``; None where undefined; no interval
    when ``samples`` is 0."""
    units = list(ratings)
    gnames = list(groups) if groups is not None else list(dict.fromkeys(group(u) for u in units))
    gidx = {g: i for i, g in enumerate(gnames)}
    grid = np.array([[np.nan if v is None else float(v) for v in (ratings[u].get(j) for j in judges)] for u in units],
                    dtype=float).reshape(len(units), len(judges))
    cnames = list(dict.fromkeys(cluster(u) for u in units))
    cidx = {c: i for i, c in enumerate(cnames)}
    unit_group = np.array([gidx.get(group(u), -1) for u in units], dtype=np.intp)
    unit_cluster = np.array([cidx[cluster(u)] for u in units], dtype=np.intp)
    return matrix_grouped_alpha(grid, unit_group, unit_cluster, gnames, len(cnames), level, samples=samples,
                                interval_level=interval_level, seed=seed, key=key)


def matrix_grouped_alpha(grid: np.ndarray, unit_group: np.ndarray, unit_cluster: np.ndarray, gnames: Sequence[Hashable],
                         clusters: int, level: str, *, samples: int, interval_level: float, seed: int, key: str,
                         features: Any = _MISSING) -> dict[str, Any]:
    """:func:`grouped_alpha` of a units x judges matrix of ratings (NaN: no rating): each unit's
    group (an index into ``gnames``; -1: none of them) and cluster (0 .. ``clusters`` - 1, numbered
    in order of first appearance).  ``features``: :func:`unit_features` of ``grid`` at ``level``,
    when the caller has them."""
    got = unit_features(grid, level) if features is _MISSING else features
    if got is None:
        return _empty(gnames)
    values, keep, per_unit = got
    return _grouped(values, keep, per_unit, level, unit_group, unit_cluster, gnames, clusters, samples=samples,
                    interval_level=interval_level, seed=seed, key=key)


def subset_alphas(grid: np.ndarray, unit_group: np.ndarray, unit_cluster: np.ndarray, subsets: Sequence[np.ndarray],
                  gnames: Sequence[Hashable], level: str, features: Any = _MISSING) -> list[dict[str, Any]]:
    """:func:`matrix_grouped_alpha` without an interval on each subset of the units (positions,
    e.g. one repeat's units), its clusters numbered as ``np.unique`` sorts them: the same figures,
    with each unit's coincidences computed once for all the subsets (``features`` as
    :func:`matrix_grouped_alpha` takes them)."""
    got = unit_features(grid, level) if features is _MISSING else features
    out = []
    for sel in subsets:
        if got is None or sel.size == 0:
            out.append(matrix_grouped_alpha(grid[sel], unit_group[sel], np.zeros(sel.size, dtype=np.intp), gnames, 0,
                                            level, samples=0, interval_level=0.95, seed=0, key=""))
            continue
        values, keep, per_unit = got
        rated = ~np.isnan(grid[sel])
        present = np.unique(grid[sel][rated])
        if grid.shape[1] < 2 or present.size < 1:
            out.append(_empty(gnames))
            continue
        part = per_unit[sel]
        if level != "interval" and present.size < values.size:  # the subset's own values: drop the others
            at = np.searchsorted(values, present)
            V = values.size
            part = part.reshape(-1, V, V)[:, at][:, :, at].reshape(sel.size, -1)
        _, cl = np.unique(unit_cluster[sel], return_inverse=True)
        cl = cl.ravel()
        out.append(_grouped(present, keep[sel], part, level, unit_group[sel], cl, gnames, int(cl.max()) + 1,
                            samples=0, interval_level=0.95, seed=0, key=""))
    return out


def _empty(gnames: Sequence[Hashable]) -> dict[str, Any]:
    return {"groups": {g: (None, None, None) for g in gnames}, "across": (None, None, None),
            "within": (None, None, None)}


def unit_features(grid: np.ndarray, level: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """What :func:`matrix_grouped_alpha` reads of each unit of ``grid``: (the distinct values rated,
    which units have two ratings or more, each unit's features: the level's sums, zero for a unit
    that is not pairable); None without two judges or a rating."""
    n_units, n_judges = grid.shape
    rated = ~np.isnan(grid)
    present = np.unique(grid[rated])
    if n_judges < 2 or present.size < 1 or not n_units:
        return None
    values = present
    V = values.size
    if level == "interval":
        # the interval metric needs no coincidence matrix: per unit, its pairable values' count,
        # sum, sum of squares and sum over ordered pairs of (v_i - v_j)^2 / (m_u - 1) =
        # 2 (m_u sum v^2 - (sum v)^2) / (m_u - 1); every disagreement is a sum of these
        m = np.sum(rated, axis=1).astype(float)
        keep = m >= 2
        s1, s2 = np.nansum(grid, axis=1), np.nansum(grid ** 2, axis=1)
        per_unit = np.zeros((n_units, 4))
        per_unit[keep, 0] = m[keep]
        per_unit[keep, 1] = s1[keep]
        per_unit[keep, 2] = s2[keep]
        per_unit[keep, 3] = 2.0 * (m[keep] * s2[keep] - s1[keep] ** 2) / (m[keep] - 1)
        return values, keep, per_unit
    u_of, j_of = np.nonzero(rated)
    got = grid[u_of, j_of]
    if V <= 16:  # each rating's value's position in values: the values below it, counted
        code = np.zeros(got.size, dtype=np.intp)
        for v in values[:-1]:
            code += got > v
    else:
        code = np.searchsorted(values, got)
    counts = np.bincount(u_of * V + code, minlength=n_units * V).reshape(n_units, V).astype(float)
    m = np.count_nonzero(rated, axis=1).astype(float)  # the unit's ratings: its counts' sum
    keep = m >= 2
    # (n_uc n_uk - [c = k] n_uc) / (m_u - 1): the products, the diagonal less n_uc, then divided
    # (the same operations on the same whole numbers as the formula; 0 for a unit not pairable)
    whole = bool(keep.all())
    c = counts if whole else counts[keep]
    o = np.einsum("uc,uk->uck", c, c)
    diagonal = o.reshape(-1, V * V)[:, ::V + 1]
    diagonal -= c
    o /= (m if whole else m[keep])[:, None, None] - 1
    if whole:
        return values, keep, o.reshape(n_units, V * V)
    per_unit = np.zeros((n_units, V * V))
    per_unit[keep] = o.reshape(-1, V * V)
    return values, keep, per_unit


def _grouped(values: np.ndarray, keep: np.ndarray, per_unit: np.ndarray, level: str, unit_group: np.ndarray,
             unit_cluster: np.ndarray, gnames: Sequence[Hashable], clusters: int, *, samples: int,
             interval_level: float, seed: int, key: str) -> dict[str, Any]:
    """:func:`matrix_grouped_alpha` from :func:`unit_features`."""
    V, G, K = values.size, len(gnames), per_unit.shape[1]
    # clusters x (groups x K): each (cluster, group) cell's units summed in unit order (np.bincount
    # adds in input order; one bincount over every unit's K features, bin = cell x K + feature)
    use = np.flatnonzero(keep & (unit_group >= 0))
    slot = unit_cluster[use] * G + unit_group[use]
    C = np.bincount((slot[:, None] * K + np.arange(K)).ravel(), weights=per_unit[use].ravel(),
                    minlength=clusters * G * K).reshape(clusters, G * K)

    def sums(f: np.ndarray):
        """(observed, expected disagreement sums, n) of feature rows f (R x K)."""
        if level == "interval":
            n, t1, t2 = f[:, 0], f[:, 1], f[:, 2]
            return f[:, 3], 2.0 * (n * t2 - t1 ** 2), n
        return alpha_from_coincidences(f.reshape(-1, V, V), values, level)

    def figures(flat: np.ndarray):
        f = flat.reshape(-1, G, K)
        B = f.shape[0]
        obs, exp, n = (x.reshape(B, G) for x in sums(f.reshape(B * G, K)))
        per = _alpha(obs, exp, n)  # B x G
        return per, _alpha(*sums(f.sum(axis=1))), _within(obs, exp, n)

    per, across, within = figures(C.sum(axis=0, keepdims=True))

    def point(x):
        return None if np.isnan(x) else round(float(x), 12)  # no 0.9999999999999962 for a full agreement
    out = {"groups": {g: [point(per[0, i]), None, None] for i, g in enumerate(gnames)},
           "across": [point(across[0]), None, None], "within": [point(within[0]), None, None]}
    if samples > 0 and clusters > 0:
        blocks = []
        for idx in _draws(_rng(seed, key), clusters, samples):
            k = idx.shape[0]
            w = np.bincount((idx + (np.arange(k) * clusters)[:, None]).ravel(),
                            minlength=k * clusters).reshape(k, clusters).astype(float)
            blocks.append(figures(w @ C))
        bper = np.concatenate([b[0] for b in blocks])
        bacross = np.concatenate([b[1] for b in blocks])
        bwithin = np.concatenate([b[2] for b in blocks])
        for i, g in enumerate(gnames):
            if out["groups"][g][0] is not None:
                out["groups"][g][1:] = _percentiles(bper[:, i], interval_level)
        if out["across"][0] is not None:
            out["across"][1:] = _percentiles(bacross, interval_level)
        if out["within"][0] is not None:
            out["within"][1:] = _percentiles(bwithin, interval_level)
    out["groups"] = {g: tuple(v) for g, v in out["groups"].items()}
    out["across"], out["within"] = tuple(out["across"]), tuple(out["within"])
    return out
