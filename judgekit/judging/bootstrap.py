"""Bootstrap intervals of a pairwise benchmark: Reward, Win Rate, VFS and VFS ref of every results
row (Creation-MMBench's, and the generic pairwise benchmark's Reward and Win Rate).

An item is a (candidate, index): its judgments in both orders are resampled together.  Each
figure is a ratio of per-item sums (:func:`judgekit.judging.pairwise.item_sums`), so its interval
is :func:`judgekit.judging.intervals.ratio_interval`'s percentile interval.

A row's stream is keyed by its level and group only, ``"rows:{level}:{group}"``
(:func:`row_key`), not by its candidate: the rows of every judge and of the ensemble, and their
four figures, use one draw, and so do the rows of every candidate at that (level, group).  So each
figure's interval is exactly ``ratio_interval(num, den, key=that key)`` on its row's items, the
judges are compared on the same resampled items, and so are the candidates (paired Monte Carlo).
The draw depends only on (seed, level, group, number of items): a row's interval does not depend
on which other candidates are in the run.  Rows with the same items in the same order (the usual
case: every candidate judged on every item) are resampled together: one draw, counted
(``bincount``), then the sums of all figures of all judges and candidates from one matrix product.
A row with other items (a candidate missing some) draws alone from the same stream.  A full
Creation-MMBench run (765 items x 3 candidates x 3 levels, a panel of three) draws 2.3 million
indices, not 110 million.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np

from .intervals import Interval, _draws, _percentiles, _rng, with_interval
from .pairwise import FIGURE_SUMS, SUM_COLUMNS, item_sums
from .uncertainty import IntervalOptions, _in_order, comparisons

__all__ = ["FIGURES", "add_intervals", "comparison_rows", "row_key"]

#: the figures with an interval, in column order
FIGURES = tuple(FIGURE_SUMS)
_COLUMN = {name: i for i, name in enumerate(SUM_COLUMNS)}
#: the matrix columns of one judge's figures: (numerator, denominator) per figure
_NUM = [_COLUMN[FIGURE_SUMS[f][0]] for f in FIGURES]
_DEN = [_COLUMN[FIGURE_SUMS[f][1]] for f in FIGURES]


def row_key(model: str, level: str, group: str) -> str:
    """The bootstrap stream of a (candidate, level, group) row of every judge: ``model`` is not
    part of it, every candidate's row at that (level, group) draws from the same stream."""
    return f"rows:{level}:{group}"


def _item_groups(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per candidate: its items in first-seen order with their task and category."""
    if all(isinstance(r, list) for r in records_by_judge.values()):
        return _item_groups_columns(list(records_by_judge.values()))
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


def _item_groups_columns(lists: list[list[Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """:func:`_item_groups` from the records' shared columns (:mod:`.columns`): the same items in
    the same order, each with the task and category of its first record."""
    items = _item_table(lists)
    out: dict[str, dict[str, Any]] = {}
    if items is None:
        return out
    model, index, task, category = (items.names[f] for f in ("model", "index", "task", "category"))
    for m, i, t, c in zip(items.model.tolist(), items.index.tolist(), items.task.tolist(), items.category.tolist()):
        got = out.setdefault(model[m], {"items": {}, "task": [], "category": []})
        got["items"][index[i]] = len(got["items"])
        got["task"].append(task[t])
        got["category"].append(category[c])
    return out


class _Items(NamedTuple):
    """Every candidate's items (a (candidate, index) in order of first appearance over the lists)
    as codes into ``names`` (model, index, task, category: the first record's), and their
    :func:`~judgekit.judging.pairwise.item_sums` in every list side by side (items x (lists x
    sums))."""

    model: np.ndarray
    index: np.ndarray
    task: np.ndarray
    category: np.ndarray
    names: dict[str, list[str]]
    sums: np.ndarray


def _item_table(lists: list[list[Mapping[str, Any]]]) -> _Items | None:
    """:class:`_Items` of the lists' shared columns (None without a judgment): each list's sums are
    its records' :attr:`.columns.Columns.sums` added per item in record order, as ``item_sums``
    adds them (the records of no item, judgments of another kind, add nothing)."""
    from .columns import columns, first_order
    from .keys import packed

    names: dict[str, dict[str, int]] = {f: {} for f in ("model", "index", "task", "category")}
    parts = []
    for records in lists:
        col = columns(records)
        sel = np.flatnonzero(col.is_pairwise | col.kind_is("vfs")) if col.n else np.zeros(0, dtype=np.intp)
        got = []
        for field, (code, values) in (("model", col.model), ("index", col.index), ("task", col.task),
                                      ("category", col.category)) if sel.size else ():
            seen = names[field]
            glob = np.array([seen.setdefault(v, len(seen)) for v in values], dtype=np.int64)
            got.append(glob[code[sel]])
        parts.append((col, sel, got))
    if not any(sel.size for _, sel, _ in parts):
        return None
    fields = [np.concatenate([got[f] for _, sel, got in parts if sel.size]) for f in range(4)]
    item, first = first_order(packed(fields[:2]))
    n_items, width = first.size, len(SUM_COLUMNS)
    table = np.zeros((n_items, len(lists) * width))
    at = 0
    for j, (col, sel, _) in enumerate(parts):
        mine = item[at:at + sel.size]
        at += sel.size
        if sel.size:
            S = col.sums[sel]
            for c in range(width):
                table[:, j * width + c] = np.bincount(mine, weights=S[:, c], minlength=n_items)
    return _Items(*(f[first] for f in fields), {f: list(v) for f, v in names.items()}, table)


#: drawn indices counted per block of about this many (the counts stay in the processor's cache)
_COUNT_BLOCK = 131_072


def _resampled(matrix: np.ndarray, options: IntervalOptions, key: str, *, blocks: bool = True) -> np.ndarray:
    """Every column's sum over each of ``options.bootstrap_samples`` resamples of ``matrix``'s rows
    (items), drawn from the stream ``key``: each resample's items counted, then one matrix product.

    With ``blocks``, a block of resamples at a time (about :data:`_COUNT_BLOCK` drawn indices, two
    rows or more): the counts stay in the processor's cache, about twice as fast.  Each resample's
    sums are its counts times the matrix either way, but BLAS may add a smaller product's terms in
    another order: a sum can differ in its last bits (1e-13 relative at most in the tests) from the
    single product's, which ``blocks=False`` gives."""
    n = matrix.shape[0]
    if not blocks:
        out = []
        for idx in _draws(_rng(options.bootstrap_seed, key), n, options.bootstrap_samples):
            k = idx.shape[0]
            counts = np.bincount((idx + (np.arange(k) * n)[:, None]).ravel(), minlength=k * n).reshape(k, n)
            out.append(counts.astype(float) @ matrix)
        return np.concatenate(out)
    out = np.empty((options.bootstrap_samples, matrix.shape[1]))
    rows = max(2, _COUNT_BLOCK // max(n, 1))
    offsets = (np.arange(rows + 1) * n)[:, None]
    counts = np.zeros((rows + 1) * n)
    done = 0
    for idx in _draws(_rng(options.bootstrap_seed, key), n, options.bootstrap_samples):
        starts = list(range(0, idx.shape[0], rows))
        if len(starts) > 1 and idx.shape[0] - starts[-1] == 1:  # no block of one row: the last one joins
            starts.pop()
        for a, b in zip(starts, starts[1:] + [idx.shape[0]]):
            part = idx[a:b]
            k = b - a
            part += offsets[:k]  # each resample's items in its own row of counts
            c = counts[:k * n]
            c[:] = 0.0
            np.add.at(c, part.ravel(), 1.0)
            np.matmul(c.reshape(k, n), matrix, out=out[done + a:done + b])
        done += idx.shape[0]
    return out


def _intervals(matrix: np.ndarray, options: IntervalOptions, key: str) -> list[tuple[float | None, float | None]]:
    """(low, high) of every figure of ``matrix`` (items x (judges x sums)): one draw of the items,
    counted, then every column's resampled sums at once."""
    return _all_intervals([(matrix, key)], options)[0]


def _all_intervals(jobs: Sequence[tuple[np.ndarray, str] | tuple[np.ndarray, str, Hashable]],
                   options: IntervalOptions) -> list[list[tuple[float | None, float | None]]]:
    """:func:`_intervals` of each (matrix, key) or (matrix, key, items): the jobs with the same key
    and the same ``items`` (not None: the row's items in order) share one draw and one matrix product of their
    matrices side by side, the others draw alone; the percentiles of every figure with no undefined
    resample from one quantile call (each column's quantiles are its own), the others' one by one."""
    level = options.interval_level
    width = len(SUM_COLUMNS)
    out: list[list[tuple[float | None, float | None]]] = []
    full: list[np.ndarray] = []  # resampled ratios of the columns with none undefined, one row each
    where: list[tuple[int, int]] = []  # (job, column) of each of those rows
    figures: list[tuple[list[int], list[int], np.ndarray]] = []  # each job's numerators, denominators, defined
    together: dict[Hashable, list[int]] = {}  # the jobs resampled by one draw
    for jn, job in enumerate(jobs):
        matrix, key, items = job[0], job[1], (job[2] if len(job) > 2 else None)
        judges = matrix.shape[1] // width
        nums = [j * width + c for j in range(judges) for c in _NUM]
        dens = [j * width + c for j in range(judges) for c in _DEN]
        defined = matrix[:, dens].sum(axis=0) > 0  # as ratio_interval: no estimate, no interval
        figures.append((nums, dens, defined))
        out.append([(None, None)] * len(nums))
        if matrix.shape[0] and defined.any():
            together.setdefault(("items", key, items) if items is not None else ("alone", jn), []).append(jn)
    resampled: dict[int, np.ndarray] = {}
    for members in together.values():
        parts = [jobs[jn][0] for jn in members]
        sums = _resampled(parts[0] if len(parts) == 1 else np.hstack(parts), options, jobs[members[0]][1])
        at = 0
        for jn, part in zip(members, parts):  # each job's columns back
            resampled[jn] = sums[:, at:at + part.shape[1]]
            at += part.shape[1]
    for jn, sums in resampled.items():
        nums, dens, defined = figures[jn]
        mine = out[jn]
        top, bottom = sums[:, nums], sums[:, dens]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)
        complete = defined & ~np.isnan(ratios).any(axis=0)
        if complete.any():
            full.append(ratios[:, complete].T)
            where += [(jn, int(c)) for c in np.flatnonzero(complete)]
        for col in np.flatnonzero(defined & ~complete):
            mine[col] = _percentiles(ratios[:, col], level)
    if full:
        tail = (1.0 - level) / 2.0
        q = np.quantile(np.concatenate(full), [tail, 1.0 - tail], axis=1)
        for (jn, col), lo, hi in zip(where, q[0].tolist(), q[1].tolist()):
            out[jn][col] = (lo, hi)
    return out


def _record_jobs(rows_by_judge, records_by_judge, wanted, sums
                 ) -> dict[tuple[str, str, str], tuple[np.ndarray, str, Hashable]]:
    """Each wanted (candidate, level, group)'s (items x (judges x sums), stream key, its items in
    order) from the records (or the judges' ``item_sums``)."""
    judges = list(rows_by_judge)
    sums = sums or {j: item_sums(records_by_judge[j]) for j in judges}
    zero = [0.0] * len(SUM_COLUMNS)
    groups = _item_groups(records_by_judge)
    matrices = {model: np.array([[v for j in judges for v in sums[j].get((model, index), zero)]
                                 for index in g["items"]], dtype=float).reshape(len(g["items"]), -1)
                for model, g in groups.items()}
    jobs = {}
    for model, level, group in wanted:
        g = groups.get(model)
        if g is None:
            continue
        names = tuple(g["items"])
        if level == "overall":
            matrix = matrices[model]
        else:
            mask = np.asarray(g[level]) == group
            matrix, names = matrices[model][mask], tuple(i for i, keep in zip(names, mask.tolist()) if keep)
        jobs[(model, level, group)] = (matrix, row_key(model, level, group), names)
    return jobs


def _column_jobs(rows_by_judge, records_by_judge, wanted
                 ) -> dict[tuple[str, str, str], tuple[np.ndarray, str, Hashable]]:
    """:func:`_record_jobs` from the lists' shared columns (:func:`_item_table`): the same items in
    the same order, the same sums."""
    items = _item_table(list(records_by_judge.values()))
    if items is None:
        return {}
    listed = list(records_by_judge)
    width = len(SUM_COLUMNS)
    cols = np.array([listed.index(j) * width + c for j in rows_by_judge for c in range(width)], dtype=np.intp)
    code = {f: {v: k for k, v in enumerate(items.names[f])} for f in ("model", "task", "category")}
    # each candidate's items (in order) and their sums in the judges' order, sliced once
    at = np.argsort(items.model, kind="stable")
    ends = np.cumsum(np.bincount(items.model, minlength=len(items.names["model"])))
    mine: dict[int, tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]] = {}
    jobs = {}
    for model, level, group in wanted:
        m = code["model"].get(model)
        if m is None:
            continue
        if m not in mine:
            rows = at[ends[m - 1] if m else 0:ends[m]]
            mine[m] = (items.sums[np.ix_(rows, cols)], items.index[rows],
                       {"task": items.task[rows], "category": items.category[rows]})
        matrix, index, groups = mine[m]
        if level != "overall":
            keep = groups[level] == code[level].get(group, -1)
            matrix, index = matrix[keep], index[keep]
        # the items' codes (shared by every candidate) in order: rows with the same share one draw
        jobs[(model, level, group)] = (matrix, row_key(model, level, group), index.tobytes())
    return jobs


def add_intervals(rows_by_judge: Mapping[str, list[dict[str, Any]]],
                  records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                  options: IntervalOptions, sums: Mapping[str, Mapping[tuple[str, str], list[float]]] | None = None
                  ) -> None:
    """Add ``<figure>_ci_low`` / ``<figure>_ci_high`` for every figure of :data:`FIGURES` to every
    row of every judge's :func:`~judgekit.judging.pairwise.summarize` rows (in place); nothing
    when intervals are off.  A row's items are its candidate's items in its task, its category
    or all of them.  ``sums``: each judge's :func:`~judgekit.judging.pairwise.item_sums`, when
    the caller has them (read where the records are not lists: lists are summed per item from
    their shared columns, the same numbers)."""
    if options.bootstrap_samples == 0:
        return
    judges = list(rows_by_judge)
    wanted: dict[tuple[str, str, str], None] = {}
    for j in judges:
        for r in rows_by_judge[j]:
            wanted.setdefault((r["model"], r["level"], r["group"]), None)
    if all(isinstance(r, list) for r in records_by_judge.values()):  # summed from the shared columns
        jobs = _column_jobs(rows_by_judge, records_by_judge, wanted)
    else:
        jobs = _record_jobs(rows_by_judge, records_by_judge, wanted, sums)
    found = dict(zip(jobs, _all_intervals(list(jobs.values()), options)))
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
    rows have ``judge``.

    When every candidate has the same items (the usual case), one draw of the items, keyed
    ``"{judge}:comparisons"``, serves every pair and figure of the judge (:func:`_shared_comparisons`):
    each pair's interval is still a paired bootstrap over its items, and 1,000 resamples of 765
    items x 20 candidates cost one draw instead of 570.  Otherwise each figure and pair draws
    its own (:func:`judgekit.judging.uncertainty.comparisons`)."""
    if options.bootstrap_samples == 0:
        return []
    sums = item_sums(records) if sums is None else sums
    per_model: dict[str, dict[str, list[float]]] = {}
    for (model, index), s in sums.items():
        per_model.setdefault(model, {})[index] = s
    names = [c for c in candidates if c in per_model]
    if names and all(per_model[c].keys() == per_model[names[0]].keys() for c in names):
        return _shared_comparisons(per_model, names, judge, options)
    rows = []
    for figure in COMPARED:
        num, den = (_COLUMN[c] for c in FIGURE_SUMS[figure])
        per = {model: {index: (s[num], s[den]) for index, s in items.items()} for model, items in per_model.items()}
        for row in comparisons(per, options, figure, key=f"{judge}:", candidates=candidates):
            rows.append({"judge": judge, **row})
    return rows


def _shared_comparisons(per_model: Mapping[str, Mapping[str, list[float]]], names: Sequence[str], judge: str,
                        options: IntervalOptions) -> list[dict[str, Any]]:
    """:func:`comparison_rows` when the candidates ``names`` have the same items: the items in
    ``repr`` order (as :func:`judgekit.judging.uncertainty.comparisons` orders them), one draw
    counted per resample, every candidate's resampled sums from one matrix product, then every
    pair's differences and percentiles as columns at once; the p-values are the swap permutation
    test's (:func:`judgekit.judging.multiplicity.swap_p`), one set of swaps for the judge.  The estimates are
    computed as :func:`~judgekit.judging.intervals.paired_difference_p` computes them."""
    from .multiplicity import swap_p_from, swap_signs

    order = _in_order(per_model[names[0]])
    n, k = len(order), len(names)
    cols = [(_COLUMN[FIGURE_SUMS[f][0]], _COLUMN[FIGURE_SUMS[f][1]]) for f in COMPARED]
    # items x (candidate, figure, num/den)
    matrix = np.array([[per_model[c][i][col] for c in names for pair in cols for col in pair] for i in order],
                      dtype=float).reshape(n, k * len(cols) * 2)
    totals = {}  # (candidate, figure) -> (num, den) over all items, summed as paired_difference_p sums
    for ci, c in enumerate(names):
        for fi in range(len(cols)):
            at = (ci * len(cols) + fi) * 2
            totals[(ci, fi)] = (float(np.ascontiguousarray(matrix[:, at]).sum()),
                                float(np.ascontiguousarray(matrix[:, at + 1]).sum()))
    pairs = list(combinations(range(k), 2))
    resampled = (_resampled(matrix, options, f"{judge}:comparisons", blocks=False) if n
                 else np.zeros((0, matrix.shape[1])))
    samples, level = options.bootstrap_samples, options.interval_level
    signed = total = None  # the swap test's random swaps, drawn once for every pair and figure of the judge
    rows = []
    for fi, figure in enumerate(COMPARED):
        defined = [n > 0 and totals[(a, fi)][1] > 0 and totals[(b, fi)][1] > 0 for a, b in pairs]
        lows: list[float | None] = [None] * len(pairs)
        highs: list[float | None] = [None] * len(pairs)
        pvalues: list[float | None] = [None] * len(pairs)
        use = [p for p, ok in enumerate(defined) if ok]
        if use:
            with np.errstate(invalid="ignore", divide="ignore"):
                num = resampled[:, 0::2].reshape(samples, k, len(cols))[:, :, fi]
                den = resampled[:, 1::2].reshape(samples, k, len(cols))[:, :, fi]
                ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
            a_idx = np.array([pairs[p][0] for p in use])
            b_idx = np.array([pairs[p][1] for p in use])
            diff = ratio[:, a_idx] - ratio[:, b_idx]  # samples x pairs
            complete = ~np.isnan(diff).any(axis=0)
            if complete.any():
                tail = (1.0 - level) / 2.0
                q = np.quantile(diff[:, complete], [tail, 1.0 - tail], axis=0)
                for col, lo, hi in zip(np.flatnonzero(complete), q[0], q[1]):
                    lows[use[col]], highs[use[col]] = float(lo), float(hi)
            for col in np.flatnonzero(~complete):
                lo, hi = _percentiles(diff[:, col].copy(), level)
                lows[use[col]], highs[use[col]] = lo, hi
            if signed is None:  # every candidate's and figure's signed sums: one product for all pairs
                signed = swap_signs(_rng(options.bootstrap_seed, f"{judge}:swaps"), n, samples) @ matrix
                total = matrix.sum(axis=0)
            at_a = (a_idx * len(cols) + fi) * 2
            at_b = (b_idx * len(cols) + fi) * 2
            p = swap_p_from((total[at_a], total[at_a + 1], total[at_b], total[at_b + 1]),
                            (signed[:, at_a], signed[:, at_a + 1], signed[:, at_b], signed[:, at_b + 1]))
            for col, pv in enumerate(p):
                pvalues[use[col]] = None if np.isnan(pv) else float(pv)
        for p, (a, b) in enumerate(pairs):
            estimate = None
            if defined[p]:
                (na, da), (nb, db) = totals[(a, fi)], totals[(b, fi)]
                estimate = float(na / da - nb / db)
            lo, hi = lows[p], highs[p]
            rows.append({"judge": judge, "metric": figure, "a": names[a], "b": names[b], "items": n,
                         "difference": estimate, "ci_low": lo, "ci_high": hi, "level": level,
                         "excludes_zero": (lo is not None and hi is not None and (lo > 0 or hi < 0)),
                         "p_value": pvalues[p]})
    return rows
