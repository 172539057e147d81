"""A panel's agreement rows (:func:`judgekit.judging.panel.agreement_records`) from one judges x units
matrix per quantity.

Read as :func:`judgekit.judging.agreement.ratings` reads them (units in the order first seen over
the judges' records in the panel's order, a judge's later record of a unit replacing an earlier
one), the ratings go straight into a NumPy matrix (NaN: no rating); each candidate's columns are
a mask of it, in the same order, so Krippendorff's alpha is computed on the very matrix
:func:`~judgekit.judging.agreement.krippendorff_alpha` would build, and the full-agreement share
and the count of units two judges rated are counted on its columns.  The rows are those of
:func:`~judgekit.judging.agreement.agreement_rows`, without a dict per unit and a filter of every
unit for every candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .agreement import POOLED, Level

__all__ = ["rating_matrix", "matrix_agreement_rows", "coded_agreement_rows", "group_alphas"]


def rating_matrix(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]], kind: str,
                  unit: Callable[[Mapping[str, Any]], Hashable], value: Callable[[Any], Any], field: str
                  ) -> tuple[np.ndarray, list[Hashable]]:
    """(judges x units matrix of ``value(record[field])`` over the records of ``kind``, NaN where a
    judge has none or it is None; the units in the order first seen)."""
    units: dict[Hashable, int] = {}
    per_judge = []
    for records in records_by_judge.values():
        cols: list[int] = []
        vals: list[float] = []
        for r in records:
            if r.get("kind") != kind:
                continue
            key = unit(r)
            c = units.get(key)
            if c is None:
                c = units[key] = len(units)
            v = value(r.get(field))
            cols.append(c)
            vals.append(float("nan") if v is None else float(v))
        per_judge.append((cols, vals))
    m = np.full((len(per_judge), len(units)), np.nan)
    for j, (cols, vals) in enumerate(per_judge):
        if cols:
            c = np.asarray(cols, dtype=np.intp)[::-1]
            v = np.asarray(vals, dtype=float)[::-1]
            _, last = np.unique(c, return_index=True)  # each unit's last record of the judge
            m[j, c[last]] = v[last]
    return m, list(units)


def group_alphas(m: np.ndarray, group: np.ndarray, groups: int, level: Level, *, pooled: bool = False
                 ) -> list[float | None]:
    """:func:`~judgekit.judging.agreement.matrix_alpha` of each group's columns of ``m`` (judges x
    units, NaN: no rating; ``group`` each unit's group 0..``groups``-1, -1 for none): every group's
    coincidence matrix built at once (:mod:`.alpha`), over the distinct values of all pairable
    units (a value a group lacks has no marginal there, which changes none of its sums).  The same
    figures as the ``krippendorff`` package up to the order of floating-point summation.  With
    ``pooled``, one more: every unit's (what ``group_alphas(m, zeros, 1, level)`` gives), counted in
    the same passes when every pairable unit has a group."""
    rated = ~np.isnan(m)
    count = rated.sum(axis=0)
    keep = (count >= 2) & (group >= 0)
    if pooled:
        if np.array_equal(keep, count >= 2):  # the pooled group: one more group of every unit
            group = np.where(keep, group, groups)
            extra = np.full(group.size, groups)
            return _coincidence_alphas(m, rated, count, keep, group, groups + 1, level, extra)
        return group_alphas(m, group, groups, level) + group_alphas(m, np.zeros(m.shape[1], dtype=np.intp), 1, level)
    return _coincidence_alphas(m, rated, count, keep, group, groups, level)


def _coincidence_alphas(m, rated, count, keep, group, groups, level, extra=None) -> list[float | None]:
    """:func:`group_alphas` of the kept units; ``extra``: each unit's second group (the pooled one)."""
    from .alpha import _alpha, alpha_from_coincidences

    out: list[float | None] = [None] * groups
    if m.shape[0] < 2 or not keep.any():
        return out
    sub, ok, g = m[:, keep], rated[:, keep], group[keep]
    values, code = np.unique(sub[ok], return_inverse=True)
    V = values.size
    codes = np.full(sub.shape, -1, dtype=np.intp)
    codes[ok] = code.ravel()
    weight = 1.0 / (count[keep] - 1.0)
    flat = np.zeros(groups * V * V)
    J = sub.shape[0]
    e = None if extra is None else extra[keep]
    for a in range(J):  # every ordered pair of distinct ratings of a unit adds 1 / (m_u - 1)
        for b in range(J):
            if a != b:
                both = ok[a] & ok[b]
                cell = codes[a, both] * V + codes[b, both]
                w = weight[both]
                if e is None:
                    flat += np.bincount(g[both] * V * V + cell, weights=w, minlength=groups * V * V)
                else:  # each unit into its group and the pooled one (each bin still in unit order)
                    flat += np.bincount(np.concatenate([g[both] * V * V + cell, e[both] * V * V + cell]),
                                        weights=np.concatenate([w, w]), minlength=groups * V * V)
    o = flat.reshape(groups, V, V)
    obs, exp, n = alpha_from_coincidences(o, values, level)
    alpha = _alpha(obs, exp, n)
    distinct = np.count_nonzero(o.sum(axis=2) > 0, axis=1)
    for k in range(groups):
        if distinct[k] >= 2 and np.isfinite(alpha[k]):
            out[k] = float(alpha[k])
    return out


def matrix_agreement_rows(m: np.ndarray, units: Sequence[Hashable], judges: Sequence[str], level: Level, *,
                          quantity: str, groups: Sequence[str], name: str = "model") -> list[dict[str, Any]]:
    """:func:`judgekit.judging.agreement.agreement_rows` of the ratings ``m`` (judges x ``units``;
    a unit's first element names its group): each of ``groups`` with items, then :data:`POOLED`."""
    lookup = {g: k for k, g in enumerate(groups)}
    code = np.fromiter((lookup.get(u[0], -1) for u in units), dtype=np.intp, count=len(units))
    return coded_agreement_rows(m, code, judges, level, quantity=quantity, groups=groups, name=name)


def coded_agreement_rows(m: np.ndarray, code: np.ndarray, judges: Sequence[str], level: Level, *,
                         quantity: str, groups: Sequence[str], name: str = "model") -> list[dict[str, Any]]:
    """:func:`matrix_agreement_rows` with each unit's group as its position in ``groups`` (``code``;
    -1: none of them; a name twice in ``groups``: its last position)."""
    judges = list(judges)
    names = [*groups, POOLED]
    if len(judges) >= 2:  # every group's alpha at once, and the pooled one
        alphas = group_alphas(m, code, len(groups), level, pooled=True)
    else:
        alphas = [None] * len(names)
    # per unit: pairable (two ratings or more) and, if so, every rating the same; each group's
    # counted on its units (the pooled row: every unit): the share of pairable units in full
    # agreement, and how many are pairable
    pairable = np.count_nonzero(~np.isnan(m), axis=0) >= 2
    same = np.zeros(m.shape[1], dtype=bool)
    if pairable.any():
        p = m[:, pairable]
        with np.errstate(invalid="ignore"):
            same[pairable] = np.nanmax(p, axis=0) == np.nanmin(p, axis=0)
    G = len(groups)
    mine = code >= 0
    units, totals, sames = (np.append(np.bincount(code[mine & w], minlength=G), np.count_nonzero(w))
                            for w in (np.ones(m.shape[1], dtype=bool), pairable, same & pairable))
    lookup = {g: k for k, g in enumerate(groups)}
    out = []
    for group in names:
        k = G if group == POOLED else lookup[group]
        if units[k]:
            total = int(totals[k])
            out.append({"quantity": quantity, name: group, "judges": list(judges), "krippendorff_alpha": alphas[k],
                        "level": level, "full_agreement": int(sames[k]) / total if total else None, "items": total})
    return out
