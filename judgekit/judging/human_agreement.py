"""Agreement of each judge (and a panel's ensemble) with human labels, for any pairwise or rubric
benchmark: Cohen's kappa (unweighted, linear, quadratic), Spearman's rho, Kendall's tau-b, and
Creation-MMBench Table 4's MAE and consistency, each with a percentile bootstrap interval over
items (consistency, a share: Wilson's interval on the effective count of units,
:func:`_consistency_interval`) and the number of pairs beside it.

A *unit* is what a human labelled: a (candidate, item), or a (candidate, item, order) when the
labels file has an ``order`` column.  J is the judge's value for a unit: the mean of its valid
scores there (both orders pooled for a (candidate, item) unit, as Creation-MMBench's dual
evaluation pools them); P is the mean of the unit's human labels.  A pairwise score is the
candidate's, -2..+2 (positive: the candidate is better than the baseline); a rubric score is on
the rubric's scale.

Every figure is a function of the contingency table T[a, b] (how many units have the a-th
distinct J and the b-th distinct P), so a bootstrap resample is a reweighted table and every
figure of every resample comes from a few array operations (:func:`table_figures`):

* MAE = sum T |J - P| / n; consistency = 100 sum T [|J - P| <= 1] / n (Table 4's Eqs. 1 and 2);
* Cohen's kappa = 1 - sum w O / sum w E over the categories (J and P rounded to the nearest
  whole number, halves away from zero), O the observed joint shares and E the product of the
  margins; w = [i != j] (unweighted), |i - j| (linear), (i - j)^2 (quadratic);
* Spearman's rho: Pearson's correlation of the mid-ranks (ties share their mean rank);
* Kendall's tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)), C and D the concordant and discordant
  pairs, n0 = n(n-1)/2, n1 and n2 the pairs tied in J and in P.

A figure with no defined value (no pair, no spread in J or P, chance agreement of 1) is None.
The bootstrap resamples (candidate, item) clusters (a unit's orders together), one stream per
candidate row (and one for the pooled row) shared by every judge, so the judges are compared on
the same resampled items; a resample where a figure is undefined is left out of its percentiles.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field
from scipy import sparse

from ..config import STRICT_CONFIG
from ..errors import DataError
from ..report.doc import Table
from .intervals import _draws, _percentiles, _rng, shown
from .rates import wilson
from .uncertainty import IntervalOptions, min_items_for

__all__ = ["HumanLabelOptions", "HumanLabels", "load_human_labels", "labels_from_ratings", "unit_scores",
           "unit_values", "FIGURES", "table_figures", "agreement_rows", "agreement_display", "ALL", "NOTE",
           "add_human_agreement", "report_tables"]

#: the ``model`` of the row pooled over candidates
ALL = "all"
#: the figures of a row, in column order
FIGURES = ("kappa", "kappa_linear", "kappa_quadratic", "spearman", "kendall", "mae", "consistency")
#: what the printed table and the report say the figures are
NOTE = ("each judge's value per labelled unit against the mean human label: Cohen's kappa (quadratic weights), "
        "Spearman's rho, Kendall's tau-b, MAE and consistency % (|judge - human| <= 1, Creation-MMBench's "
        "Table 4); [low, high]: percentile bootstrap interval over items (consistency: Wilson's on the effective "
        "count of units); n: labelled units with a judge value, "
        "marked ! when they come from too few items for the interval")
#: at most this many table cells in one call of :func:`table_figures` (resamples go in blocks)
_TABLE_CELLS = 2_000_000
#: |J - P| is compared with the tolerance after this slack (a mean of thirds is still exactly 1 away)
_EPS = 1e-9
#: the columns naming a unit's item, candidate and order, with the names also accepted
_ITEM = ("item", "index", "id")
_CANDIDATE = ("candidate", "model")
#: pairwise verdicts for the candidate, by token; A/B tokens name slots (the candidate is B in order 0)
_WORDS = {"much better": 2, "better": 1, "tie": 0, "worse": -1, "much worse": -2}
_SLOTS = {"b>>a": 2, "b>a": 1, "a=b": 0, "b=a": 0, "a<b": 1, "a<<b": 2, "a>b": -1, "a>>b": -2}


class HumanLabelOptions(BaseModel):
    """``[options]`` for the human-labels file (the pairwise, rubric and Creation-MMBench benchmarks)."""

    model_config = STRICT_CONFIG

    human_labels: str | None = Field(
        None, description="a CSV, TSV or JSON-lines file of human labels (columns item, candidate, optional order, "
                          "score or verdict): each judge's Cohen's kappa, Spearman, Kendall, MAE and consistency "
                          "against them, with intervals")


@dataclass(frozen=True)
class HumanLabels:
    """The labels of a file: ``(candidate or "", item, order or None) -> [labels]`` ("" : every
    candidate; several labels of a unit are several raters, averaged)."""

    path: str
    values: dict[tuple[str, str, int | None], list[float]]

    @property
    def by_order(self) -> bool:
        return any(k[2] is not None for k in self.values)

    def reference(self) -> dict[tuple[str, str, int | None], float]:
        """P: the mean label of each unit."""
        return {k: sum(v) / len(v) for k, v in self.values.items() if v}


def labels_from_ratings(path: str, ratings: Mapping[tuple[str, str], Mapping[str, float]]) -> HumanLabels:
    """Creation-MMBench's ratings table (``(model, index) -> {rater: rating}``) as labels."""
    return HumanLabels(path, {(m, i, None): list(v.values()) for (m, i), v in ratings.items() if v})


# -- reading the file ------------------------------------------------------------------------------------
def _rows(p: Path):
    """(row number, {column: text}) of a CSV, TSV or JSON-lines file."""
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl"):
        raise DataError(str(p), f"a human-labels file is .csv, .tsv or .jsonl, not {suffix or 'no suffix'!r}")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(str(p), "not UTF-8 text") from None
    except OSError as e:
        raise DataError(str(p), f"cannot read: {e.strerror or e}") from None
    if suffix == ".jsonl":
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(str(p), f"not JSON: {e.msg}", row=n) from None
            if not isinstance(obj, dict):
                raise DataError(str(p), "the line is not a JSON object", row=n)
            yield n, {str(k): "" if v is None else str(v) for k, v in obj.items()}
        return
    reader = csv.DictReader(text.splitlines(), delimiter="\t" if suffix == ".tsv" else ",")
    try:
        for n, row in enumerate(reader, start=1):
            if None in row:
                raise DataError(str(p), "more cells than columns", row=n)
            yield n, {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
    except csv.Error as e:
        raise DataError(str(p), f"malformed: {e}", row=reader.line_num) from None


def _pick(row: Mapping[str, str], names: Sequence[str]) -> str | None:
    return next((n for n in names if n in row), None)


def _value(p: Path, n: int, row: Mapping[str, str], kind: str, scale: tuple[float, float]) -> tuple[float, str]:
    present = [c for c in ("score", "verdict") if c in row]
    if not present:
        raise DataError(str(p), "no 'score' or 'verdict' column", row=n)
    column = next((c for c in present if row[c].strip()), None)
    if column is None:
        raise DataError(str(p), "empty label", row=n, column=present[0])
    cell = row[column].strip()
    if column == "verdict" and kind == "pairwise":
        token = cell.lower().replace(" ", "") if ">" in cell or "<" in cell or "=" in cell else cell.lower()
        if token in _WORDS:
            return float(_WORDS[token]), column
        if token in _SLOTS:
            order = row.get("order", "").strip()
            return float(_SLOTS[token] if order in ("", "0") else -_SLOTS[token]), column
        known = ", ".join([*_WORDS, "A>>B", "A>B", "A=B", "B>A", "B>>A"])
        raise DataError(str(p), f"verdict {cell!r} is none of {known}", row=n, column=column)
    try:
        v = float(cell)
    except ValueError:
        raise DataError(str(p), f"{column} {cell!r} is not a number", row=n, column=column) from None
    if not math.isfinite(v) or not scale[0] <= v <= scale[1]:
        raise DataError(str(p), f"{column} {cell} outside {scale[0]:g}..{scale[1]:g}", row=n, column=column)
    return v, column


def load_human_labels(path: str | Path, *, kind: Literal["pairwise", "rubric"],
                      scale: tuple[float, float] = (-2.0, 2.0)) -> HumanLabels:
    """Read a human-labels file (see docs/statistics.md, "Agreement with human labels"): one row
    per label with ``item`` (or ``index``/``id``), optional ``candidate`` (or ``model``; blank:
    every candidate), optional ``order`` (pairwise: 0 the baseline as Assistant A, 1 swapped) and
    ``score`` (the candidate's -2..+2, or a rubric score on ``scale``) or, pairwise only,
    ``verdict`` (much better/better/tie/worse/much worse for the candidate, or A>>B..B>>A where the
    candidate is B unless order is 1).  Any other column (a rater's name) is kept out.  Bad input
    raises :class:`~judgekit.errors.DataError` naming the file, the row and the column."""
    p = Path(path)
    if not p.is_file():
        raise DataError(str(p), "no such file" if not p.exists() else "not a file")
    values: dict[tuple[str, str, int | None], list[float]] = {}
    for n, row in _rows(p):
        item_col = _pick(row, _ITEM)
        if item_col is None or not row[item_col]:
            raise DataError(str(p), "no item (a column 'item', 'index' or 'id')", row=n, column=item_col or "item")
        cand_col = _pick(row, _CANDIDATE)
        order: int | None = None
        if row.get("order", "") != "":
            if kind != "pairwise":
                raise DataError(str(p), "a rubric judgment has no order", row=n, column="order")
            if row["order"] not in ("0", "1"):
                raise DataError(str(p), f"order {row['order']!r} is neither 0 nor 1", row=n, column="order")
            order = int(row["order"])
        v, _ = _value(p, n, row, kind, scale)
        values.setdefault((row[cand_col] if cand_col else "", row[item_col], order), []).append(v)
    if not values:
        raise DataError(str(p), "no labels")
    orders = {k[2] is None for k in values}
    if len(orders) > 1:
        raise DataError(str(p), "some rows have an order and some not: give every row's order or none",
                        column="order")
    return HumanLabels(str(p), values)


# -- the judges' values ----------------------------------------------------------------------------------
def unit_scores(records: Sequence[Mapping[str, Any]], kinds: Sequence[str] = ("pairwise",)
                ) -> dict[tuple[str, str], dict[int, list[float]]]:
    """(model, index) -> order -> the valid scores of the records of ``kinds`` (order 0 when a
    record has none): what Table 4 and the human agreement read of a judge."""
    out: dict[tuple[str, str], dict[int, list[float]]] = {}
    for r in records:
        if r.get("kind", "pairwise") in kinds and r.get("score") is not None:
            key = (str(r["model"]), str(r["index"]))
            out.setdefault(key, {}).setdefault(int(r.get("order") or 0), []).append(float(r["score"]))
    return out


def unit_values(records: Sequence[Mapping[str, Any]], by_order: bool, kinds: Sequence[str] = ("pairwise",)
                ) -> dict[tuple[str, str, int | None], float]:
    """J per unit: the mean valid score of a (model, index) over its orders, or per order."""
    if isinstance(records, list):
        return _unit_values_columns(records, by_order, kinds)
    out: dict[tuple[str, str, int | None], float] = {}
    for (model, index), per in unit_scores(records, kinds).items():
        if by_order:
            for order, scores in per.items():
                out[(model, index, order)] = sum(scores) / len(scores)
        else:
            every = [s for order in sorted(per) for s in per[order]]
            out[(model, index, None)] = sum(every) / len(every)
    return out


def _unit_values_columns(records: list, by_order: bool, kinds: Sequence[str]
                         ) -> dict[tuple[str, str, int | None], float]:
    """:func:`unit_values` from the records' shared columns (:mod:`judgekit.judging.columns`): the
    same units in the same order, each mean the same sum (in the same order: by order, then record
    order) over the same count."""
    from .columns import columns, first_order

    col = columns(records)
    if col.n == 0:
        return {}
    raw = col.raw_score
    # a record without a kind counts as "pairwise"; a kind that is no string is never one of kinds
    code, distinct = col.kind_code
    missing = ~col.has_kind
    ok = np.array([isinstance(k, str) and k in kinds for k in distinct], dtype=bool)
    wanted = np.flatnonzero(np.where(missing, "pairwise" in kinds, ok[code]))
    pos = wanted[np.fromiter((raw[i] is not None for i in wanted.tolist()), dtype=bool, count=wanted.size)]
    if pos.size == 0:
        return {}
    (mc, mnames), (ic, inames) = col.model, col.index
    rorder = col.raw("order")
    order = np.array([int(rorder[i] or 0) for i in pos.tolist()], dtype=np.int64)
    score = np.array([float(raw[i]) for i in pos.tolist()], dtype=float)
    unit, ufirst = first_order(np.column_stack([mc[pos], ic[pos]]).astype(np.int64))
    names = [(mnames[mc[pos[f]]], inames[ic[pos[f]]]) for f in ufirst.tolist()]
    out: dict[tuple[str, str, int | None], float] = {}
    if by_order:
        cell, cfirst = first_order(np.column_stack([unit, order]))
        total = np.bincount(cell, weights=score, minlength=cfirst.size).tolist()
        count = np.bincount(cell, minlength=cfirst.size).tolist()
        cunit = unit[cfirst]
        for c in np.lexsort((cfirst, cunit)).tolist():  # units in order, each one's orders as first seen
            m, i = names[cunit[c]]
            out[(m, i, int(order[cfirst[c]]))] = total[c] / count[c]
        return out
    seq = np.lexsort((np.arange(pos.size), order, unit))  # each unit's scores by order, then record order
    total = np.bincount(unit[seq], weights=score[seq], minlength=ufirst.size).tolist()
    count = np.bincount(unit, minlength=ufirst.size).tolist()
    for u, (m, i) in enumerate(names):
        out[(m, i, None)] = total[u] / count[u]
    return out


# -- the figures from contingency tables -----------------------------------------------------------------
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
        o = oj.T[None] @ t @ op[None]
        share = o / np.where(n > 0, n, 1.0)[:, None, None]
        e = share.sum(axis=2)[:, :, None] * share.sum(axis=1)[:, None, :]
        diff = cats[:, None] - cats[None, :]
        for name, w in (("kappa", (diff != 0).astype(float)), ("kappa_linear", np.abs(diff)),
                        ("kappa_quadratic", diff ** 2)):
            expected = (w * e).sum(axis=(1, 2))
            observed = (w * share).sum(axis=(1, 2))
            ok = (n > 0) & (expected > 1e-12)
            out[name] = np.where(ok, 1.0 - observed / np.where(ok, expected, 1.0), np.nan)
        # Spearman: Pearson's correlation of the mid-ranks
        rj, rp = t.sum(axis=2), t.sum(axis=1)
        mj = np.cumsum(rj, axis=1) - rj + (rj + 1.0) / 2.0
        mp = np.cumsum(rp, axis=1) - rp + (rp + 1.0) / 2.0
        mean = (n + 1.0) / 2.0
        safe = np.where(n > 0, n, 1.0)
        cov = (mj * (t @ mp[:, :, None])[:, :, 0]).sum(axis=1) / safe - mean ** 2
        var_j = (rj * mj ** 2).sum(axis=1) / safe - mean ** 2
        var_p = (rp * mp ** 2).sum(axis=1) / safe - mean ** 2
        tiny = 1e-9 * np.maximum(mean, 1.0) ** 2
        ok = (n > 1) & (var_j > tiny) & (var_p > tiny)
        out["spearman"] = np.where(ok, cov / np.sqrt(np.where(ok, var_j * var_p, 1.0)), np.nan)
        # Kendall's tau-b: units with a higher J, then counted by whether their P is higher or lower
        above = np.cumsum(t[:, ::-1, :], axis=1)[:, ::-1, :] - t          # sum over a' > a
        higher = np.cumsum(above[:, :, ::-1], axis=2)[:, :, ::-1] - above  # ... and b' > b
        lower = np.cumsum(above, axis=2) - above                           # ... and b' < b
        conc = (t * higher).sum(axis=(1, 2))
        disc = (t * lower).sum(axis=(1, 2))
        n0 = n * (n - 1.0) / 2.0
        n1 = (rj * (rj - 1.0) / 2.0).sum(axis=1)
        n2 = (rp * (rp - 1.0) / 2.0).sum(axis=1)
        den = (n0 - n1) * (n0 - n2)
        ok = den > 0
        out["kendall"] = np.where(ok, (conc - disc) / np.sqrt(np.where(ok, den, 1.0)), np.nan)
    return out


def _defined(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _consistency_interval(cells: np.ndarray, vj: np.ndarray, vp: np.ndarray, tol: float,
                          level: float) -> tuple[float, float]:
    """The interval of a row's consistency (percent): Wilson's on the effective count of units.
    ``cells``: clusters x units per cluster, each unit's (J value, P value) code (-1: none).  The
    share's variance over the clusters, ``sum_c (a_c - p m_c)^2 / M^2`` (a_c consistent units of
    the m_c in cluster c, M all units), gives ``n_eff = p (1 - p) / variance``, at most M (with
    one unit per item, n_eff is the units' count and this is Wilson's interval); at a share of 0
    or 1, the clusters' count.  A percentile bootstrap of this share undercovers at 25-50 items
    (80 % and 91 % of a nominal 95 % near 0.87, perf/coverage.py); Wilson's keeps near it."""
    has = cells >= 0
    code = np.where(has, cells, 0)
    close = np.abs(vj[code // len(vp)] - vp[code % len(vp)]) <= tol + _EPS
    m = has.sum(axis=1).astype(float)
    a = (close & has).sum(axis=1).astype(float)
    keep = m > 0
    m, a = m[keep], a[keep]
    total = m.sum()
    p = a.sum() / total
    var = float(((a - p * m) ** 2).sum()) / total ** 2
    n_eff = float(keep.sum()) if p <= 0.0 or p >= 1.0 or var <= 0.0 else min(total, p * (1.0 - p) / var)
    lo, hi = wilson(p * n_eff, n_eff, level)
    return 100.0 * lo, 100.0 * hi


# -- rows per judge --------------------------------------------------------------------------------------
def agreement_rows(values_by_judge: Mapping[str, Mapping[tuple[str, str, int | None], float]],
                   labels: HumanLabels, candidates: Sequence[str], options: IntervalOptions, *,
                   tol: float = 1.0) -> list[dict[str, Any]]:
    """Rows {judge, model, n, items, <figure>, <figure>_ci_low, <figure>_ci_high...} per judge (in
    order; ``values_by_judge``: J per unit, :func:`unit_values`) for each candidate with a labelled
    unit (``candidates`` order) and pooled (``model`` = ``"all"``).  ``n``: units with both J and
    P; ``items``: their (candidate, item) clusters; ``small_n``: fewer items than
    ``options.min_items_for_interval`` or the figures' own thresholds (too few for the
    intervals, :mod:`.honest`, :data:`~judgekit.judging.uncertainty.FIGURE_MIN_ITEMS`)."""
    reference = labels.reference()
    judges = list(values_by_judge)
    # P of each unit a judge valued: the candidate's own label, else the item's label for every candidate
    units: dict[tuple[str, str, int | None], float] = {}
    for per in values_by_judge.values():
        for key in per:
            if key not in units:
                p = reference.get(key, reference.get(("", key[1], key[2])))
                if p is not None:
                    units[key] = p
    keys = sorted(units, key=lambda k: (k[0], k[1], -1 if k[2] is None else k[2]))
    clusters = list(dict.fromkeys((k[0], k[1]) for k in keys))
    cid = {c: i for i, c in enumerate(clusters)}
    vp = np.array(sorted({units[k] for k in keys}), dtype=float)
    bp = {v: i for i, v in enumerate(vp.tolist())}
    width = 2 if labels.by_order else 1  # units per (candidate, item): its orders
    models = [m for m in dict.fromkeys(candidates) if any(c[0] == m for c in clusters)]
    models += sorted({c[0] for c in clusters} - set(models))
    rows = []
    per_judge = {}
    for j in judges:
        vals = values_by_judge[j]
        vj = np.array(sorted({vals[k] for k in keys if k in vals}), dtype=float)
        bj = {v: i for i, v in enumerate(vj.tolist())}
        cells = np.full((len(clusters), width), -1, dtype=np.int64)
        fill = np.zeros(len(clusters), dtype=np.int64)
        for k in keys:
            if k in vals:
                c = cid[(k[0], k[1])]
                cells[c, fill[c]] = bj[vals[k]] * len(vp) + bp[units[k]]
                fill[c] += 1
        per_judge[j] = (vj, cells)
    # each judge's cluster x (J value, P value) incidence (a unit's orders summed), sparse: a resample's
    # tables are its draw counts times it, whatever the number of distinct values
    onehot = {}
    for j in judges:
        cells = per_judge[j][1]
        has = cells >= 0
        onehot[j] = sparse.csr_matrix((np.ones(int(has.sum())), (np.nonzero(has)[0], cells[has])),
                                      shape=(len(clusters), len(per_judge[j][0]) * len(vp)))
    owner = np.array([models.index(c[0]) for c in clusters], dtype=np.int64)
    for model in [*models, ALL]:
        chosen = np.arange(len(clusters)) if model == ALL else np.flatnonzero(owner == models.index(model))
        subs = {j: onehot[j][chosen].T.tocsr() for j in judges}  # (cells, clusters of the row)
        boot: dict[str, dict[str, list[np.ndarray]]] = {j: {f: [] for f in FIGURES} for j in judges}
        if options.bootstrap_samples and chosen.size:
            m = chosen.size
            for idx in _draws(_rng(options.bootstrap_seed, f"human:{model}"), m, options.bootstrap_samples):
                k = idx.shape[0]  # each resample's draw counts, shared by the judges
                counts = np.bincount((idx + (np.arange(k) * m)[:, None]).ravel(), minlength=k * m).reshape(k, m)
                for j in judges:
                    vj = per_judge[j][0]
                    if not len(vj):
                        continue
                    t = np.asarray(subs[j] @ counts.T.astype(float)).T.reshape(k, len(vj), len(vp))
                    step = max(1, _TABLE_CELLS // max(1, t[0].size))  # bounded temporaries
                    for lo in range(0, k, step):
                        for f, v in table_figures(t[lo:lo + step], vj, vp, tol).items():
                            boot[j][f].append(v)
        for j in judges:
            vj = per_judge[j][0]
            valid = per_judge[j][1][chosen] >= 0
            n = int(valid.sum())
            row: dict[str, Any] = {"judge": j, "model": model, "n": n, "items": int(valid.any(axis=1).sum())}
            # the interval resamples items: fewer than the threshold and it covers less than it says
            row["small_n"] = row["items"] < min_items_for(options, FIGURES)
            if n == 0:
                for f in FIGURES:
                    row[f] = row[f"{f}_ci_low"] = row[f"{f}_ci_high"] = None
                rows.append(row)
                continue
            whole = np.asarray(subs[j].sum(axis=1)).reshape(1, len(vj), len(vp))
            est = table_figures(whole, vj, vp, tol)
            for f in FIGURES:
                row[f] = _defined(est[f][0])
                if f == "consistency" and row[f] is not None and options.bootstrap_samples:
                    row[f"{f}_ci_low"], row[f"{f}_ci_high"] = _consistency_interval(
                        per_judge[j][1][chosen], vj, vp, tol, options.interval_level)
                    continue
                drawn = boot[j][f]
                lo, hi = (_percentiles(np.concatenate(drawn), options.interval_level) if drawn and row[f] is not None
                          else (None, None))
                row[f"{f}_ci_low"], row[f"{f}_ci_high"] = lo, hi
            rows.append(row)
    return rows


def agreement_display(r: Mapping[str, Any]) -> dict[str, Any]:
    """A row as printed: quadratic kappa, Spearman, Kendall, MAE and consistency with intervals."""
    def fig(name: str, digits: int = 2) -> str:
        return shown(r.get(name), r.get(f"{name}_ci_low"), r.get(f"{name}_ci_high"), digits)
    n = f"{r['n']}!" if r.get("small_n") else r["n"]
    return {"judge": r["judge"], "model": r["model"], "n": n, "kappa (quad.)": fig("kappa_quadratic"),
            "kappa": fig("kappa"), "Spearman": fig("spearman"), "Kendall": fig("kendall"), "MAE": fig("mae"),
            "consistency %": fig("consistency", 1)}


def add_human_agreement(summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]],
                        more: list[tuple[str, list[dict[str, Any]]]],
                        everyone: Mapping[str, Sequence[Mapping[str, Any]]], labels: HumanLabels,
                        candidates: Sequence[str], options: IntervalOptions, *,
                        kinds: Sequence[str] = ("pairwise",), scale: str = "-2..+2") -> None:
    """``summary["human_agreement"]`` ({file, units, scale, figures, note, rows}), the
    ``human_agreement`` CSV table and the printed table, from every judge's records (and the
    ensemble's)."""
    values = {j: unit_values(records, labels.by_order, kinds) for j, records in everyone.items()}
    rows = agreement_rows(values, labels, candidates, options)
    judged = {k for per in values.values() for k in per}
    anyone = {(k[1], k[2]) for k in judged}
    unmatched = sum(1 for k in labels.values if (k not in judged if k[0] else (k[1], k[2]) not in anyone))
    summary["human_agreement"] = {
        "file": labels.path, "unit": "(candidate, item, order)" if labels.by_order else "(candidate, item)",
        "scale": scale, "figures": list(FIGURES), "note": NOTE,
        "unmatched_units": unmatched,  # labelled units no judge has a valid score for (a typo'd id?)
        "rows": rows}
    tables["human_agreement"] = rows
    what = (f"[{options.interval_level:.0%} bootstrap interval over items]" if options.bootstrap_samples
            else "(no intervals)")
    more.append((f"Agreement with human labels: each judge's value against the mean label, {what}",
                 [agreement_display(r) for r in rows]))


def report_tables(summary: Mapping[str, Any]) -> list[Table]:
    """The report's table of the agreement with human labels (none without labels)."""
    got = summary.get("human_agreement")
    if not got:
        return []
    return [Table("Agreement with human labels", [agreement_display(r) for r in got["rows"]],
                  note=f"{NOTE}; unit: {got['unit']}; labels: {Path(got['file']).name}")]
