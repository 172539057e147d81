"""Bootstrap intervals of a pairwise benchmark: Reward, Win Rate, VFS and VFS ref of every results
row (Creation-MMBench's, and the generic pairwise benchmark's Reward and Win Rate).

An item is a (candidate, index): its judgments in both orders are resampled together.  Each
figure is a ratio of per-item sums (:func:`judgekit.judging.pairwise.item_sums`), so its interval
is :func:`judgekit.judging.intervals.ratio_interval`'s percentile interval.

One draw serves a whole row group: the rows of the same (candidate, level, group) of every judge
and of the ensemble, and their four figures, use one stream, keyed ``"{candidate}:{level}:
{group}"``.  So each figure's interval is exactly ``ratio_interval(num, den, key=that key)`` on
its row's items, the judges are compared on the same resampled items, and a full Creation-MMBench
run (765 items x 3 candidates x 3 levels, a panel of three) draws 7 million indices, not 110
million.  The resampled items are counted (``bincount``) and the sums of all figures of all
judges come from one matrix product.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .intervals import Interval, _draws, _percentiles, _rng, with_interval
from .pairwise import FIGURE_SUMS, SUM_COLUMNS, item_sums
from .uncertainty import IntervalOptions, comparisons

__all__ = ["FIGURES", "add_intervals", "comparison_rows", "row_key"]

#: the figures with an interval, in column order
FIGURES = tuple(FIGURE_SUMS)
_COLUMN = {name: i for i, name in enumerate(SUM_COLUMNS)}
#: the matrix columns of one judge's figures: (numerator, denominator) per figure
_NUM = [_COLUMN[FIGURE_SUMS[f][0]] for f in FIGURES]
_DEN = [_COLUMN[FIGURE_SUMS[f][1]] for f in FIGURES]


def row_key(model: str, level: str, group: str) -> str:
    """The bootstrap stream of a (candidate, level, group) row of every judge."""
    return f"{model}:{level}:{group}"


def _item_groups(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per candidate: its items in first-seen order with their task and category."""
    out: dict[str, dict[str, Any]] = {}
    for records in records_by_judge.values():
        for r in records:
            if r.get("kind", "pairwise") not in ("pairwise", "vfs"):
                continue
            m = out.setdefault(str(r.get("model", "")), {"items": {}, "task": [], "category": []})
            index = str(r["index"])
            if index not in m["items"]:
                m["items"][index] = len(m["items"])
                m["task"].append(str(r.get("task", "")))
                m["category"].append(str(r.get("category", "")))
    return out


def _intervals(matrix: np.ndarray, options: IntervalOptions, key: str) -> list[tuple[float | None, float | None]]:
    """(low, high) of every figure of ``matrix`` (items x (judges x sums)): one draw of the items,
    counted, then every column's resampled sums at once."""
    n = matrix.shape[0]
    judges = matrix.shape[1] // len(SUM_COLUMNS)
    nums = [j * len(SUM_COLUMNS) + c for j in range(judges) for c in _NUM]
    dens = [j * len(SUM_COLUMNS) + c for j in range(judges) for c in _DEN]
    defined = matrix[:, dens].sum(axis=0) > 0  # as ratio_interval: no estimate, no interval
    out: list[tuple[float | None, float | None]] = [(None, None)] * len(nums)
    if n == 0 or not defined.any():
        return out
    blocks = []
    for idx in _draws(_rng(options.bootstrap_seed, key), n, options.bootstrap_samples):
        k = idx.shape[0]
        counts = np.bincount((idx + (np.arange(k) * n)[:, None]).ravel(), minlength=k * n).reshape(k, n)
        blocks.append(counts.astype(float) @ matrix)
    sums = np.concatenate(blocks)
    top, bottom = sums[:, nums], sums[:, dens]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)
    level = options.interval_level
    complete = defined & ~np.isnan(ratios).any(axis=0)
    if complete.any():  # one quantile call for the columns with no undefined resample
        tail = (1.0 - level) / 2.0
        q = np.quantile(ratios[:, complete], [tail, 1.0 - tail], axis=0)
        for col, lo, hi in zip(np.flatnonzero(complete), q[0], q[1]):
            out[col] = (float(lo), float(hi))
    for col in np.flatnonzero(defined & ~complete):
        out[col] = _percentiles(ratios[:, col], level)
    return out


def add_intervals(rows_by_judge: Mapping[str, list[dict[str, Any]]],
                  records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                  options: IntervalOptions, sums: Mapping[str, Mapping[tuple[str, str], list[float]]] | None = None
                  ) -> None:
    """Add ``<figure>_ci_low`` / ``<figure>_ci_high`` for every figure of :data:`FIGURES` to every
    row of every judge's :func:`~judgekit.judging.pairwise.summarize` rows (in place); nothing
    when intervals are off.  A row's items are its candidate's items in its task, its category
    or all of them.  ``sums``: each judge's :func:`~judgekit.judging.pairwise.item_sums`, when
    the caller has them."""
    if options.bootstrap_samples == 0:
        return
    judges = list(rows_by_judge)
    sums = sums or {j: item_sums(records_by_judge[j]) for j in judges}
    zero = [0.0] * len(SUM_COLUMNS)
    groups = _item_groups(records_by_judge)
    matrices = {model: np.array([[v for j in judges for v in sums[j].get((model, index), zero)]
                                 for index in g["items"]], dtype=float).reshape(len(g["items"]), -1)
                for model, g in groups.items()}
    wanted: dict[tuple[str, str, str], None] = {}
    for j in judges:
        for r in rows_by_judge[j]:
            wanted.setdefault((r["model"], r["level"], r["group"]), None)
    found: dict[tuple[str, str, str], list[tuple[float | None, float | None]]] = {}
    for model, level, group in wanted:
        g = groups.get(model)
        if g is None:
            continue
        if level == "overall":
            matrix = matrices[model]
        else:
            matrix = matrices[model][np.asarray(g[level]) == group]
        found[(model, level, group)] = _intervals(matrix, options, row_key(model, level, group))
    for jn, j in enumerate(judges):
        for r in rows_by_judge[j]:
            ivs = found.get((r["model"], r["level"], r["group"]))
            for fn, figure in enumerate(FIGURES):
                lo, hi = ivs[jn * len(FIGURES) + fn] if ivs else (None, None)
                with_interval(r, figure, Interval(r.get(figure), lo, hi, 0, options.bootstrap_samples,
                                                  options.interval_level, options.bootstrap_seed))


#: the figures compared between candidates
COMPARED = ("reward", "win_rate", "vfs")


def comparison_rows(records: Sequence[Mapping[str, Any]], judge: str, candidates: Sequence[str],
                    options: IntervalOptions, sums: Mapping[tuple[str, str], list[float]] | None = None
                    ) -> list[dict[str, Any]]:
    """Every candidate pair's Reward, Win Rate and VFS difference (a - b) with its paired interval,
    on the items both have, from one judge's (or the ensemble's) records (or their ``sums``);
    rows have ``judge``."""
    if options.bootstrap_samples == 0:
        return []
    sums = item_sums(records) if sums is None else sums
    rows = []
    for figure in COMPARED:
        num, den = (_COLUMN[c] for c in FIGURE_SUMS[figure])
        per: dict[str, dict[str, tuple[float, float]]] = {}
        for (model, index), s in sums.items():
            per.setdefault(model, {})[index] = (s[num], s[den])
        for row in comparisons(per, options, figure, key=f"{judge}:", candidates=candidates):
            rows.append({"judge": judge, **row})
    return rows
