"""The figures of the agreement with human labels from contingency tables, and their bootstrap for
every (judge, row) at once: what :mod:`.human_agreement` computes once it has each judge's values
(see that module's docstring for the figures and the units).

:func:`table_figures` is the figures' definition, one table at a time along the first axis.  The
bootstrap needs them for every resample of every row (each candidate and the pooled one) and every
judge: 1,000 resamples x 21 rows x 4 judges at 20 candidates.  :func:`agreement_table_rows` reads
each row's resamples as one count matrix (clusters x resamples, the draws shared by the judges;
clusters holding the same cells counted together where that makes it smaller), turns it into every
judge's tables with one sparse product (cells x resamples: the resamples on the last axis), and
:func:`_figures_last` computes the figures on that layout, where each step is an operation on whole
rows of resamples.  A row's tables span only the J values its units have (with repeats, a panel's
ensemble has hundreds of distinct means, a candidate's items about half of them): a J value no
unit of the row has changes no figure.  The counts are whole numbers, so every sum the figures take
of them (n, the margins, the category table, the rank sums, Kendall's pairs: 2 C + T - N, the
pairs lower in both J and P, tied in J only, lower in P, each from running sums) is exact in any
order (below 2**53: up to about 10^5 units a row) and equals :func:`table_figures`'s; the kappas
take the category table through :func:`table_figures`'s own steps; the one sum of non-whole
numbers, the MAE's, adds each table's cells one after the other in (J, P) order, as the bootstrap
did before (a BLAS product would take a pass less, but move the MAE in its last bits).  So the
figures are the same numbers, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from .columns import codes, first_order
from .intervals import _draws, _percentiles, _rng
from .rates import wilson
from .uncertainty import IntervalOptions, min_items_for

__all__ = ["ALL", "FIGURES", "Valued", "table_figures", "agreement_table_rows"]

#: the ``model`` of the row pooled over candidates
ALL = "all"
#: the figures of a row, in column order
FIGURES = ("kappa", "kappa_linear", "kappa_quadratic", "spearman", "kendall", "mae", "consistency")
#: at most this many table cells (cells x resamples) at once in the bootstrap (resamples go in blocks)
_TABLE_CELLS = 500_000
#: at most this many counts (clusters x resamples) at once in the bootstrap (the draws count a few
#: resamples at a time, their scattered counts in the cache)
_DIRECT_COUNTS = 200_000
#: |J - P| is compared with the tolerance after this slack (a mean of thirds is still exactly 1 away)
_EPS = 1e-9


def _categories(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def table_figures(t: np.ndarray, vj: np.ndarray, vp: np.ndarray, tol: float = 1.0) -> dict[str, np.ndarray]:
    """Every figure of :data:`FIGURES` for each of the tables ``t`` (shape (B, len(vj), len(vp)):
    counts of units with judge value ``vj[a]`` and human value ``vp[b]``, both ascending); NaN
    where a figure is undefined."""
    t = np.asarray(t, dtype=float)
    vj, vp = np.asarray(vj, dtype=float), np.asarray(vp, dtype=float)
    n = t.sum(axis=(1, 2))
    out: dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.abs(vj[:, None] - vp[None, :])
        out["mae"] = np.where(n > 0, (t * gap).sum(axis=(1, 2)) / n, np.nan)
        out["consistency"] = np.where(n > 0, 100.0 * (t * (gap <= tol + _EPS)).sum(axis=(1, 2)) / n, np.nan)
        # kappa over whole-number categories
        cj, cp = _categories(vj), _categories(vp)
        cats = np.unique(np.concatenate([cj, cp]))
        oj = (cj[:, None] == cats[None, :]).astype(float)
        op = (cp[:, None] == cats[None, :]).astype(float)
        _kappas(out, oj.T[None] @ t @ op[None], n, cats)
        # Spearman: Pearson's correlation of the mid-ranks
        rj, rp = t.sum(axis=2), t.sum(axis=1)
        mj = np.cumsum(rj, axis=1) - rj + (rj + 1.0) / 2.0
        mp = np.cumsum(rp, axis=1) - rp + (rp + 1.0) / 2.0
        cross = (mj * (t @ mp[:, :, None])[:, :, 0]).sum(axis=1)
        _spearman(out, n, cross, (rj * mj ** 2).sum(axis=1), (rp * mp ** 2).sum(axis=1))
        # Kendall's tau-b: units with a higher J, then counted by whether their P is higher or lower
        above = np.cumsum(t[:, ::-1, :], axis=1)[:, ::-1, :] - t          # sum over a' > a
        higher = np.cumsum(above[:, :, ::-1], axis=2)[:, :, ::-1] - above  # ... and b' > b
        lower = np.cumsum(above, axis=2) - above                           # ... and b' < b
        conc = (t * higher).sum(axis=(1, 2))
        disc = (t * lower).sum(axis=(1, 2))
        _kendall(out, n, conc - disc, (rj * (rj - 1.0) / 2.0).sum(axis=1), (rp * (rp - 1.0) / 2.0).sum(axis=1))
    return out


def _kappas(out: dict[str, np.ndarray], o: np.ndarray, n: np.ndarray, cats: np.ndarray) -> None:
    """The three kappas from ``o`` (tables x categories x categories: the units per pair of
    categories) and each table's ``n``."""
    share = o / np.where(n > 0, n, 1.0)[:, None, None]
    e = share.sum(axis=2)[:, :, None] * share.sum(axis=1)[:, None, :]
    diff = cats[:, None] - cats[None, :]
    for name, w in (("kappa", (diff != 0).astype(float)), ("kappa_linear", np.abs(diff)),
                    ("kappa_quadratic", diff ** 2)):
        expected = (w * e).sum(axis=(1, 2))
        observed = (w * share).sum(axis=(1, 2))
        ok = (n > 0) & (expected > 1e-12)
        out[name] = np.where(ok, 1.0 - observed / np.where(ok, expected, 1.0), np.nan)


def _spearman(out: dict[str, np.ndarray], n: np.ndarray, cross: np.ndarray, sj: np.ndarray, sp: np.ndarray) -> None:
    """Spearman's rho from the sums of the mid-ranks' products (``cross``) and squares."""
    mean = (n + 1.0) / 2.0
    safe = np.where(n > 0, n, 1.0)
    cov = cross / safe - mean ** 2
    var_j = sj / safe - mean ** 2
    var_p = sp / safe - mean ** 2
    tiny = 1e-9 * np.maximum(mean, 1.0) ** 2
    ok = (n > 1) & (var_j > tiny) & (var_p > tiny)
    out["spearman"] = np.where(ok, cov / np.sqrt(np.where(ok, var_j * var_p, 1.0)), np.nan)


def _kendall(out: dict[str, np.ndarray], n: np.ndarray, cd: np.ndarray, n1: np.ndarray, n2: np.ndarray) -> None:
    """Kendall's tau-b from the concordant minus discordant pairs and the pairs tied in J and in P."""
    n0 = n * (n - 1.0) / 2.0
    den = (n0 - n1) * (n0 - n2)
    ok = den > 0
    out["kendall"] = np.where(ok, cd / np.sqrt(np.where(ok, den, 1.0)), np.nan)


class _Layout:
    """What :func:`_figures_last` needs of a judge's (vj, vp), computed once."""

    def __init__(self, vj: np.ndarray, vp: np.ndarray, tol: float, cats: np.ndarray | None = None):
        self.gap = np.abs(vj[:, None] - vp[None, :])
        self.close = (self.gap <= tol + _EPS).astype(float).ravel()
        cj, cp = _categories(vj), _categories(vp)
        # the categories (the judge's, when ``vj`` is some of its values: the kappas then sum as many)
        self.cats = np.unique(np.concatenate([cj, cp])) if cats is None else cats
        self.oj = (cj[None, :] == self.cats[:, None]).astype(float)  # categories x J values
        self.op = (cp[:, None] == self.cats[None, :]).astype(float)  # P values x categories
        # the values ascend, so each category's are a run: the runs' ends (the J runs' last values, the
        # P runs' bounds) and their categories
        jstart, self.jcat = self._runs(cj)
        self.jlast = np.append(jstart[1:], cj.size) - 1
        pstart, self.pcat = self._runs(cp)
        self.pbounds = np.append(pstart, cp.size)

    def _runs(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = np.flatnonzero(np.concatenate([[True], c[1:] != c[:-1]])) if c.size else np.zeros(0, np.int64)
        return start, np.searchsorted(self.cats, c[start])


def _running(x: np.ndarray, axis: int = 0, out: np.ndarray | None = None) -> np.ndarray:
    """``np.cumsum(x, axis)`` (the same sums, one row after the other), a row of tables at a
    time: numpy's cumsum along an axis other than the last walks it in short strides, ten times
    slower.  ``out``: where to write them (``x`` itself, in place)."""
    out = np.empty_like(x) if out is None else out
    src, dst = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
    dst[0] = src[0]
    for a in range(1, src.shape[0]):
        np.add(dst[a - 1], src[a], out=dst[a])
    return out


def _figures_last(t: np.ndarray, lay: _Layout) -> dict[str, np.ndarray]:
    """:func:`table_figures` of the tables ``t`` laid out (J values, P values, tables): the same
    numbers (see the module docstring), each step an operation on whole rows of tables."""
    nj, npv, k = t.shape
    out: dict[str, np.ndarray] = {}
    # Kendall's concordant minus discordant pairs = 2 C + T - N (every count whole, so exact in any
    # order): C the pairs lower in both J and P, T those tied in J but not in P, N those lower in P
    conc = tied_j = np.zeros(k)
    if npv > 1:
        lower = np.empty((nj, npv - 1, k))  # lower[a, b - 1]: units of J value a with a P below b
        lower[:, 0] = t[:, 0]
        for b in range(2, npv):
            np.add(lower[:, b - 2], t[:, b - 1], out=lower[:, b - 1])
        rj = lower[:, -1] + t[:, -1]  # (J values, tables)
        tied_j = np.einsum("abk,abk->k", t[:, 1:], lower)
        _running(lower, out=lower)  # ... of the J values up to a
        if nj > 1:
            conc = np.einsum("abk,abk->k", t[1:, 1:], lower[:-1])
    else:
        rj = t[:, 0]
    upto = _running(rj)  # units with J values up to a
    n = upto[-1]
    # the units with J values up to each category's last one and P values below b (b = 0..npv; a
    # first row of zeros): whole counts, so the cells of a category's runs of J and P values are two
    # differences of these
    ends = np.zeros((lay.jlast.size + 1, npv + 1, k))
    if npv > 1:
        ends[1:, 1:npv] = lower[lay.jlast]
    ends[1:, npv] = upto[lay.jlast]
    rp = np.diff(ends[-1], axis=0)  # (P values, tables)
    flat = t.reshape(nj * npv, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        # the MAE's sum: each table's cells added one by one in (J, P) order, as the bootstrap took it
        # before (its tables had this memory layout)
        out["mae"] = np.where(n > 0, (t * lay.gap[:, :, None]).sum(axis=(0, 1)) / n, np.nan)
        out["consistency"] = np.where(n > 0, 100.0 * (lay.close @ flat) / n, np.nan)
        # the units per pair of categories
        runs = np.diff(np.diff(ends[:, lay.pbounds], axis=0), axis=1)
        o = np.zeros((k, lay.cats.size, lay.cats.size))
        o[:, lay.jcat[:, None], lay.pcat[None, :]] = runs.transpose(2, 0, 1)
        _kappas(out, o, n, lay.cats)
        mj = upto - rj + (rj + 1.0) / 2.0
        mp = _running(rp) - rp + (rp + 1.0) / 2.0
        cross = np.einsum("ak,ak->k", mj, np.einsum("abk,bk->ak", t, mp))
        _spearman(out, n, cross, (rj * mj ** 2).sum(axis=0), (rp * mp ** 2).sum(axis=0))
        lower_p = (rp * (mp - (rp + 1.0) / 2.0)).sum(axis=0)
        _kendall(out, n, 2.0 * conc + tied_j - lower_p, (rj * (rj - 1.0) / 2.0).sum(axis=0),
                 (rp * (rp - 1.0) / 2.0).sum(axis=0))
    return out


# -- the judges' values as arrays ------------------------------------------------------------------------
@dataclass
class Valued:
    """One judge's J per unit: unit u is ``(models[model[u]], items[item[u]], orders[order[u]])``
    (an order None: both orders pooled) with value ``value[u]``."""

    models: list[Any]
    items: list[Any]
    orders: list[Any]
    model: np.ndarray
    item: np.ndarray
    order: np.ndarray
    value: np.ndarray

    @classmethod
    def from_dict(cls, per: Mapping[tuple[Any, Any, Any], float]) -> Valued:
        keys = list(per)
        m, models = codes([k[0] for k in keys])
        i, items = codes([k[1] for k in keys])
        o, orders = codes([k[2] for k in keys])
        return cls(models, items, orders, m, i, o, np.array(list(per.values()), dtype=float).reshape(len(keys)))

    def as_dict(self) -> dict[tuple[Any, Any, Any], float]:
        m, i, o = self.models, self.items, self.orders
        return {(m[a], i[b], o[c]): v for a, b, c, v in zip(self.model.tolist(), self.item.tolist(),
                                                             self.order.tolist(), self.value.tolist())}


def _unify(lists: Sequence[list[Any]]) -> tuple[dict[Any, int], list[np.ndarray]]:
    """One numbering of the names of several lists, and each list's names in it."""
    every: dict[Any, int] = {}
    for names in lists:
        for x in names:
            every.setdefault(x, len(every))
    return every, [np.array([every[x] for x in names], dtype=np.int64) for names in lists]


def _ranks(names: Sequence[Any], key=None) -> np.ndarray:
    """Each name's place in the sorted names (names sorting alike share a place)."""
    keys = [key(x) if key else x for x in names]
    place = {x: r for r, x in enumerate(sorted(set(keys)))}
    return np.array([place[x] for x in keys], dtype=np.int64)


@dataclass
class _Units:
    """The labelled units every judge's rows read, sorted by (candidate, item, order)."""

    cluster: np.ndarray       # each unit's (candidate, item) cluster
    owner: np.ndarray         # each cluster's candidate (a number in ``models``)
    models: list[Any]         # candidates by number
    vp: np.ndarray            # the distinct P values, ascending
    bp: np.ndarray            # each unit's P, as its place in vp
    judged: list[tuple[np.ndarray, np.ndarray]]  # per judge: (units it values, its J there)
    unmatched: int            # labelled units no judge values


def _join(valued: Sequence[Valued], reference: Mapping[tuple[Any, Any, Any], float],
          labelled: Sequence[tuple[Any, Any, Any]]) -> _Units:
    """The units of the judges' values with a P (the unit's own label, else its item's label for
    every candidate, candidate ""), as the record-walking join made them."""
    gm, mcodes = _unify([v.models for v in valued])
    gi, icodes = _unify([v.items for v in valued])
    go, ocodes = _unify([v.orders for v in valued])
    dims = (len(gm) + 1, max(len(gi), 1), max(len(go), 1))  # candidate 0: "" (every candidate)
    m = np.concatenate([mc[v.model] + 1 for v, mc in zip(valued, mcodes)]) if valued else np.zeros(0, np.int64)
    i = np.concatenate([ic[v.item] for v, ic in zip(valued, icodes)]) if valued else np.zeros(0, np.int64)
    o = np.concatenate([oc[v.order] for v, oc in zip(valued, ocodes)]) if valued else np.zeros(0, np.int64)
    key = np.ravel_multi_index((m, i, o), dims) if m.size else np.zeros(0, np.int64)
    unit, first = first_order(key)  # units in order of first appearance (judges in order)
    ukey = key[first]
    # the labels' keys in the same numbering (-1: a name no judge has, so no unit's)
    lkeys = np.full(len(labelled), -1, dtype=np.int64)
    for n, (c, item, order) in enumerate(labelled):
        a = 0 if c == "" else gm.get(c, -1) + 1
        b, d = gi.get(item), go.get(order)
        if a >= 0 and (a > 0 or c == "") and b is not None and d is not None:
            lkeys[n] = (a * dims[1] + b) * dims[2] + d
    known = lkeys >= 0
    every = ukey % (dims[1] * dims[2])  # the unit's (item, order) under candidate "" (every candidate)
    unmatched = int((~known).sum() + (~np.where(lkeys[known] < dims[1] * dims[2], np.isin(lkeys[known], every),
                                                np.isin(lkeys[known], ukey))).sum())
    # P: the unit's own label, else its item's for every candidate
    ref = [reference.get(k) for k in labelled]
    has_ref = known & np.array([r is not None for r in ref], dtype=bool).reshape(len(labelled))
    lk = lkeys[has_ref]
    lv = np.array([r for r, h in zip(ref, has_ref.tolist()) if h], dtype=float).reshape(lk.size)
    srt = np.argsort(lk, kind="stable")
    lk, lv = lk[srt], lv[srt]
    p = np.full(ukey.size, np.nan)
    found = np.zeros(ukey.size, dtype=bool)
    for probe in (ukey, every) if lk.size else ():  # own label first
        at = np.minimum(np.searchsorted(lk, probe), lk.size - 1)
        hit = ~found & (lk[at] == probe)
        p[hit], found[hit] = lv[at[hit]], True
    # sorted as (candidate, item, order) sort (order None first), ties in order of first appearance
    gnames, inames, onames = list(gm), list(gi), list(go)
    um, rest = np.divmod(ukey, dims[1] * dims[2])
    ui, uo = np.divmod(rest, dims[2])
    mrank = np.concatenate([[-1], _ranks(gnames)]) if gnames else np.array([-1])
    keep = np.flatnonzero(found)
    keep = keep[np.lexsort((keep, _ranks(onames, lambda x: -1 if x is None else x)[uo[keep]] if onames else keep,
                            _ranks(inames)[ui[keep]], mrank[um[keep]]))]
    # each sorted unit's cluster: a new (candidate, item) starts a new one
    pair = um[keep] * dims[1] + ui[keep]
    new = np.ones(keep.size, dtype=bool)
    new[1:] = pair[1:] != pair[:-1]
    cluster = np.cumsum(new) - 1
    vp, bp = np.unique(p[keep], return_inverse=True)
    place = np.full(ukey.size, -1, dtype=np.int64)
    place[keep] = np.arange(keep.size)
    judged, start = [], 0
    for v in valued:  # each judge's values at the sorted units
        at = place[unit[start:start + v.value.size]]
        ok = at >= 0
        jv = np.full(keep.size, np.nan)
        jv[at[ok]] = v.value[ok]
        has = np.zeros(keep.size, dtype=bool)
        has[at[ok]] = True
        judged.append((has, jv))
        start += v.value.size
    return _Units(cluster, um[keep][new] - 1, gnames, vp, bp.reshape(keep.size), judged, unmatched)


def _groups(cells: np.ndarray, cols: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The clusters ``0..m-1`` in groups of those with the same cells (``cells[e]`` is in cluster
    ``cols[e]``): a resample's tables need only how many of its draws fall in each group.  (Each
    cluster's group, each group's first cluster.)"""
    order = np.lexsort((cells, cols))
    c, e = cols[order], cells[order]
    pos = np.arange(c.size) - np.searchsorted(c, np.arange(m))[c]  # place among its cluster's cells
    sig = np.full((m, int(pos.max()) + 1 if c.size else 1), -1, dtype=np.int64)
    sig[c, pos] = e
    return first_order(sig)


# -- rows ------------------------------------------------------------------------------------------------
def _consistency_interval(close: np.ndarray, cluster: np.ndarray, clusters: int,
                          level: float) -> tuple[float, float]:
    """The interval of a row's consistency (percent): Wilson's on the effective count of units.
    ``close``: each of the row's units (with a J and a P), whether it is consistent; ``cluster``:
    its (candidate, item) cluster (0..clusters-1).  The share's variance over the clusters,
    ``sum_c (a_c - p m_c)^2 / M^2`` (a_c consistent units of the m_c in cluster c, M all units),
    gives ``n_eff = p (1 - p) / variance``, at most M (with one unit per item, n_eff is the units'
    count and this is Wilson's interval); at a share of 0 or 1, the clusters' count.  A percentile
    bootstrap of this share undercovers at 25-50 items (80 % and 91 % of a nominal 95 % near 0.87,
    perf/coverage.py); Wilson's keeps near it."""
    m = np.bincount(cluster, minlength=clusters).astype(float)
    a = np.bincount(cluster, weights=close.astype(float), minlength=clusters)
    keep = m > 0
    m, a = m[keep], a[keep]
    total = m.sum()
    p = a.sum() / total
    var = float(((a - p * m) ** 2).sum()) / total ** 2
    n_eff = float(keep.sum()) if p <= 0.0 or p >= 1.0 or var <= 0.0 else min(total, p * (1.0 - p) / var)
    lo, hi = wilson(p * n_eff, n_eff, level)
    return 100.0 * lo, 100.0 * hi


def _defined(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass
class _Judge:
    """One judge's side of the labelled units: the units it values (``has``), its distinct J
    values, each valued unit's cell (J value x P value, numbered J-major) and whether it is
    consistent (|J - P| <= tol)."""

    has: np.ndarray
    vj: np.ndarray
    cell: np.ndarray
    close: np.ndarray
    layout: _Layout
    tol: float

    @classmethod
    def of(cls, has: np.ndarray, jv: np.ndarray, u: _Units, tol: float) -> _Judge:
        vj, code = np.unique(jv[has], return_inverse=True)
        code = code.reshape(-1)
        close = np.abs(vj[code] - u.vp[u.bp[has]]) <= tol + _EPS
        return cls(has, vj, code * u.vp.size + u.bp[has], close, _Layout(vj, u.vp, tol), tol)


def _bootstrap(u: _Units, per: list[_Judge], chosen_rows: list[np.ndarray], keys: list[str],
               options: IntervalOptions) -> list[dict[str, np.ndarray]]:
    """Every judge's figures of every resample of every row: per judge, figure -> rows x
    resamples (NaN where undefined).  Row r resamples the clusters ``chosen_rows[r]`` from the
    stream named ``human:<keys[r]>``, one draw shared by the judges."""
    samples = options.bootstrap_samples
    npv = u.vp.size
    boot = [{f: np.full((len(chosen_rows), samples), np.nan) for f in FIGURES} for _ in per]
    local = np.full(u.owner.size, -1, dtype=np.int64)
    for r, chosen in enumerate(chosen_rows):
        m = chosen.size
        if not samples or not m:
            continue
        local[:] = -1
        local[chosen] = np.arange(m)
        at = [local[u.cluster[j.has]] for j in per]
        # each judge's tables over the J values its units in the row have (a J value no unit of the
        # row has is a row of zeros in every resample: it changes no figure), its cells renumbered
        lays, row_cells = [], []
        for j, a in zip(per, at):
            cell = j.cell[a >= 0]
            seen = np.zeros(j.vj.size, dtype=bool)
            seen[cell // npv] = True
            renumber = np.cumsum(seen) - 1
            row_cells.append(renumber[cell // npv] * npv + cell % npv)
            lays.append(j.layout if seen.all() else _Layout(j.vj[seen], u.vp, j.tol, j.layout.cats))
        offsets = np.concatenate([[0], np.cumsum([lay.gap.size for lay in lays])]).astype(np.int64)
        cells = np.concatenate([offsets[jn] + c for jn, c in enumerate(row_cells)])
        cols = np.concatenate([a[a >= 0] for a in at])
        # a table's count is at most m draws times a cluster's cells: below 2**24, single precision
        # holds every count and sum of counts exactly (the product below)
        exact = np.float32 if m * int(np.bincount(cols, minlength=1).max()) < 2 ** 24 else np.float64
        # clusters that hold the same cells are one column of the incidence: with many clusters to a
        # cell (the pooled row), a look-up per draw makes the count matrix and the product smaller
        group, first = _groups(cells, cols, m) if m > 2 * offsets[-1] else (None, np.arange(m))
        grouped = first.size <= m // 2
        if grouped:
            keep = cols == first[group[cols]]
            cells, cols = cells[keep], group[cols[keep]]
        width = first.size if grouped else m
        # every judge's cells x the row's clusters (or groups of them; a unit's orders summed): a
        # resample's tables are this times its draw counts
        incidence = sparse.csr_matrix((np.ones(cells.size, dtype=exact), (cells, cols)),
                                      shape=(int(offsets[-1]), width))
        done = 0
        for idx in _draws(_rng(options.bootstrap_seed, f"human:{keys[r]}"), m, samples):
            k = idx.shape[0]
            drawn = group[idx] if grouped else idx
            # each resample's draws counted per cluster, straight into the product's layout (clusters
            # x resamples), a few resamples at a time so that the counts stay in the cache
            counts = np.empty((width, k), dtype=exact)
            step = max(1, _DIRECT_COUNTS // width)
            for lo in range(0, k, step):
                part = drawn[lo:lo + step]
                ks = part.shape[0]
                part *= ks
                part += np.arange(ks)[:, None]
                counts[:, lo:lo + ks] = np.bincount(part.ravel(), minlength=ks * width).reshape(width, ks)
            tables = incidence @ counts  # cells x resamples
            for jn, lay in enumerate(lays):
                size = lay.gap.size
                step = max(1, _TABLE_CELLS // max(size, 1))
                for lo in range(0, k if size else 0, step):
                    t = tables[offsets[jn]:offsets[jn + 1], lo:lo + step].reshape(lay.gap.shape[0], npv, -1)
                    for f, v in _figures_last(t.astype(float), lay).items():
                        boot[jn][f][r, done + lo:done + lo + v.size] = v
            done += k
    return boot


def agreement_table_rows(valued: Mapping[str, Valued], reference: Mapping[tuple[Any, Any, Any], float],
                         labelled: Sequence[tuple[Any, Any, Any]], candidates: Sequence[Hashable],
                         options: IntervalOptions, tol: float = 1.0) -> tuple[list[dict[str, Any]], int]:
    """:func:`.human_agreement.agreement_rows` of the judges' values as arrays, and the count of
    ``labelled`` units (the labels file's keys; ``reference``: their mean labels) that no judge
    values (candidate "": an item no judge values for any candidate)."""
    judges = list(valued)
    u = _join([valued[j] for j in judges], reference, labelled)
    present = set(u.owner.tolist())
    number = {name: c for c, name in enumerate(u.models)}
    models = [m for m in dict.fromkeys(candidates) if number.get(m, -1) in present]
    models += sorted({u.models[c] for c in present} - set(models))
    keys = [*models, ALL]
    row_of = np.full(max(len(u.models), 1), -1, dtype=np.int64)  # each candidate's row
    row_of[[number[m] for m in models]] = np.arange(len(models))
    cluster_row = row_of[u.owner]
    chosen_rows = [np.flatnonzero(cluster_row == r) for r in range(len(models))] + [np.arange(u.owner.size)]
    per = [_Judge.of(has, jv, u, tol) for has, jv in u.judged]
    boot = _bootstrap(u, per, chosen_rows, keys, options)
    level, samples, nrows = options.interval_level, options.bootstrap_samples, len(keys)
    least = min_items_for(options, FIGURES)
    tail = (1.0 - level) / 2.0
    rows: list[list[dict[str, Any]]] = [[] for _ in keys]  # per row, the judges in order
    for jn, j in enumerate(per):
        size = j.vj.size * u.vp.size
        unit_row = cluster_row[u.cluster[j.has]]
        # each row's whole table (the pooled one: their sum), every row's estimates at once
        whole = np.zeros((nrows, size))
        whole[:-1] = np.bincount(unit_row * size + j.cell, minlength=(nrows - 1) * size).reshape(nrows - 1, size)
        whole[-1] = whole[:-1].sum(axis=0)
        est = table_figures(whole.reshape(nrows, j.vj.size, u.vp.size), j.vj, u.vp, tol)
        clusters = np.unique(u.cluster[j.has])
        units = np.bincount(unit_row, minlength=nrows)
        items = np.bincount(cluster_row[clusters], minlength=nrows)
        units[-1], items[-1] = j.has.sum(), clusters.size
        # the percentiles of the rows whose resamples all have the figure, a figure at a time
        quant = {}
        for f in FIGURES if samples else ():
            full = ~np.isnan(boot[jn][f]).any(axis=1)
            quant[f] = np.full((nrows, 2), np.nan)
            if full.any():
                quant[f][full] = np.quantile(boot[jn][f][full], [tail, 1.0 - tail], axis=1).T
        for r, model in enumerate(keys):
            row: dict[str, Any] = {"judge": judges[jn], "model": model, "n": int(units[r]), "items": int(items[r])}
            # the interval resamples items: fewer than the threshold and it covers less than it says
            row["small_n"] = row["items"] < least
            for f in FIGURES:
                row[f] = _defined(est[f][r]) if row["n"] else None
                lo = hi = None
                if row[f] is not None and samples:
                    if f == "consistency":
                        sel = unit_row == r if r < nrows - 1 else slice(None)
                        at = np.searchsorted(chosen_rows[r], u.cluster[j.has][sel])
                        lo, hi = _consistency_interval(j.close[sel], at, chosen_rows[r].size, level)
                    elif not np.isnan(quant[f][r, 0]):
                        lo, hi = float(quant[f][r, 0]), float(quant[f][r, 1])
                    else:  # some resamples without the figure: the others'
                        lo, hi = _percentiles(boot[jn][f][r], level)
                row[f"{f}_ci_low"], row[f"{f}_ci_high"] = lo, hi
            rows[r].append(row)
    return [row for by_judge in rows for row in by_judge], u.unmatched
