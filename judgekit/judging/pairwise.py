"""Pairwise-preference and visual-factuality metrics: Creation-MMBench's, and the generic pairwise
benchmark's (which has no VFS).

Pure functions over plain values, usable from a notebook.  A *score* is one pairwise judgment
from the candidate's point of view: +2 much better, +1 better, 0 tie, -1 worse, -2 much worse,
None a failure (unparseable reply or failed call).  A *VFS value* is the candidate's visual
factuality score in [0, 10], None a failure.

Definitions (paper Sec. 3.1 and Table 5; the reference evaluation):

* Reward = 50 x mean(valid scores) = (100 n(+2) + 50 n(+1) - 50 n(-1) - 100 n(-2)) / valid
* Win Rate = (n(+2) + n(+1)) / valid x 100
* VFS = mean of the valid candidate VFS values; VFS ref = the mean, over the same judgments, of
  the baseline's VFS (both come from one reply, so they are valid together)
* failures are left out of every denominator and reported as the parse-ok rate (a fraction)

Dual evaluation pools judgments: each item contributes its forward and its swapped judgment
(the swapped one negated by the caller), and a failure in one order drops only that judgment.

Every figure is a ratio of per-item sums (:func:`item_sums`, :data:`FIGURE_SUMS`), which is what
an item bootstrap resamples; :func:`ensemble_records` turns a judge panel's records into one
record per (candidate, item, kind, order) that :func:`summarize` reads like a judge's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .columns import NO_VFS, _check_score
from .ensemble_mean import ENSEMBLE_JUDGE, mean_ensemble

__all__ = [
    "SCORE_NAMES",
    "NO_VFS",
    "pairwise_counts",
    "pairwise_reward",
    "win_rate",
    "parse_ok_rate",
    "vfs_mean",
    "summarize",
    "SUM_COLUMNS",
    "FIGURE_SUMS",
    "item_sums",
    "record_sums",
    "ENSEMBLE_JUDGE",
    "ensemble_records",
]

#: score -> the name of its count (Table 5's columns, and "fail" for None)
SCORE_NAMES: dict[int | None, str] = {
    2: "much_better",
    1: "better",
    0: "tie",
    -1: "worse",
    -2: "much_worse",
    None: "fail",
}

# NO_VFS and the check of a score live in .columns (a leaf beneath this module and the shared columns)


def _score(r: Mapping[str, Any]) -> float | None:
    """A record's checked score (a mean ensemble's record says ``averaged``)."""
    return _check_score(r.get("score"), bool(r.get("averaged")))


def _verdict_bin(v: float | None) -> int | None:
    """The verdict a score counts as: itself, or for an averaged score the nearest verdict of its
    sign (0 < |v| < 1.5: +-1, |v| >= 1.5: +-2), so better + much better counts the wins (v > 0)."""
    if v is None or v == 0:
        return None if v is None else 0
    sign = 1 if v > 0 else -1
    return sign * (2 if abs(v) >= 1.5 else 1)


def pairwise_counts(scores: Iterable[float | None], *, averaged: bool = False) -> dict[str, int]:
    """Counts by outcome: ``much_better, better, tie, worse, much_worse, fail`` (``averaged``:
    scores may be a panel's mean verdicts, binned as :func:`_verdict_bin` says)."""
    counts = {name: 0 for name in SCORE_NAMES.values()}
    for s in scores:
        counts[SCORE_NAMES[_verdict_bin(_check_score(s, averaged))]] += 1
    return counts


def _valid(scores: Iterable[float | None], averaged: bool = False) -> list[float]:
    return [v for v in (_check_score(s, averaged) for s in scores) if v is not None]


def pairwise_reward(scores: Iterable[float | None], *, averaged: bool = False) -> float | None:
    """50 x the mean of the valid scores, in [-100, 100]; None when no score is valid."""
    valid = _valid(scores, averaged)
    if not valid:
        return None
    return 50.0 * sum(valid) / len(valid)


def win_rate(scores: Iterable[float | None], *, averaged: bool = False) -> float | None:
    """Percent of valid judgments where the candidate is better or much better (a score above 0);
    None if none valid."""
    valid = _valid(scores, averaged)
    if not valid:
        return None
    return 100.0 * sum(1 for v in valid if v > 0) / len(valid)


def parse_ok_rate(values: Iterable[Any]) -> float | None:
    """Fraction (0..1, as the reference reports it) of values that are not None; None if empty."""
    values = list(values)
    if not values:
        return None
    return sum(1 for v in values if v is not None) / len(values)


def vfs_mean(values: Iterable[float | None]) -> float | None:
    """Mean of the valid VFS values (None entries are failures and are left out)."""
    valid = [float(v) for v in values if v is not None]
    if not valid:
        return None
    return sum(valid) / len(valid)


# --------------------------------------------------------------------------- grouping


def _is_pairwise(r: Mapping[str, Any]) -> bool:
    return r.get("kind", "pairwise") == "pairwise"


def _no_vfs(r: Mapping[str, Any]) -> bool:
    return isinstance(r.get("vfs"), str) and r["vfs"] == NO_VFS


def _is_vfs(r: Mapping[str, Any]) -> bool:
    if "kind" in r:  # a VFS judgment whose reply was empty is left out, as the reference does
        return r["kind"] == "vfs" and not _no_vfs(r)
    return "vfs" in r and not _no_vfs(r)


def _stats(scores: list[Any], vfs: list[Any], refs: list[Any]) -> dict[str, Any]:
    """A group's figures from its records' checked pairwise scores (each checked by its own rule:
    a verdict; a mean ensemble's averaged verdict), its VFS judgments' values and, for each valid
    VFS value, the baseline's VFS from the same judgment (all in record order)."""
    counts = pairwise_counts(scores, averaged=True)
    row: dict[str, Any] = {
        "n_pairwise": len(scores),
        **counts,
        "reward": pairwise_reward(scores, averaged=True),
        "win_rate": win_rate(scores, averaged=True),
        "pairwise_parse_ok": parse_ok_rate(scores),
        "n_vfs": len(vfs),
        "vfs_fail": sum(1 for v in vfs if v is None),
        "vfs": vfs_mean(vfs),
        "vfs_parse_ok": parse_ok_rate(vfs),
        # the baseline's VFS (the reference's visual_factuality_ref_score): the mean over the
        # same valid judgments of the score each gave the baseline
        "vfs_ref": vfs_mean(refs),
    }
    return row


def summarize(
    records: Iterable[Mapping[str, Any]],
    *,
    levels: Sequence[str] = ("task", "category", "overall"),
) -> list[dict[str, Any]]:
    """Per-model metric rows for each task, each category and overall.

    ``records`` are judgment records: dicts with ``model``, ``task``, ``category``, ``order``
    and either

    * ``kind`` = ``"pairwise"`` with ``score`` (the pairwise score for the candidate, already
      negated for the swapped order; None for a failure), or ``kind`` = ``"vfs"`` with ``vfs``
      (the candidate's VFS, None for a failure, :data:`NO_VFS` for a judgment left out) and
      ``vfs_ref`` (the baseline's VFS from the same reply); records of other kinds are ignored; or
    * no ``kind``: one record per (item, order) carrying both ``score`` and ``vfs``, where
      ``vfs`` absent or :data:`NO_VFS` means the item gets no VFS judgment.

    Both orders are pooled (the reference's dual evaluation), so one failed order costs one
    judgment, not the item.  Each returned row has ``model``, ``level`` (``task``,
    ``category`` or ``overall``), ``group`` (the task or category name; ``overall``), the
    counts ``much_better ... much_worse, fail``, ``n_pairwise``, ``reward``, ``win_rate``,
    ``pairwise_parse_ok``, ``n_vfs``, ``vfs_fail``, ``vfs``, ``vfs_parse_ok`` and ``vfs_ref``
    (None when no record carries it).  Rows come sorted by model, level (in ``levels`` order)
    and group.
    """
    for level in levels:
        if level not in ("task", "category", "overall"):
            raise ValueError(f"unknown level {level!r}")
    if isinstance(records, list):  # the shared columns (judging.columns): the same rows
        return _summarize_columns(records, levels)
    # each record read once (its checked score, its VFS values), then added to its groups' lists
    groups: dict[tuple[str, str, str], tuple[list, list, list]] = {}
    for r in records:
        model = str(r.get("model", ""))
        pairwise = _is_pairwise(r)
        score = _score(r) if pairwise else None
        vfs = _is_vfs(r)
        value = r.get("vfs") if vfs else None
        for level in levels:
            key = (model, level, "overall" if level == "overall" else str(r.get(level, "")))
            lists = groups.get(key)
            if lists is None:
                lists = groups[key] = ([], [], [])
            if pairwise:
                lists[0].append(score)
            if vfs:
                lists[1].append(value)
                if value is not None:
                    lists[2].append(r.get("vfs_ref"))
    order = {lvl: i for i, lvl in enumerate(levels)}
    rows = []
    for model, level, name in sorted(groups, key=lambda k: (k[0], order[k[1]], k[2])):
        rows.append({"model": model, "level": level, "group": name, **_stats(*groups[(model, level, name)])})
    return rows


def _summarize_columns(records: list, levels: Sequence[str]) -> list[dict[str, Any]]:
    """:func:`summarize` from the records' shared columns: every count counted, every mean the
    same sum in record order (``np.bincount`` adds its weights in input order) over the same count."""
    import numpy as np

    from .columns import columns, first_order as _first_order

    col = columns(records)
    if col.n == 0:
        return []
    mc, mnames = col.model
    pw = col.is_pairwise
    s = col.score  # NaN: a failure, or not a pairwise judgment
    valid = pw & ~np.isnan(s)
    mag = np.where(np.abs(s) >= 1.5, 2, 1)
    vbin = np.where(valid, np.where(s > 0, mag, np.where(s < 0, -mag, 0)), 9)
    vbin = np.where(pw & ~valid, 8, vbin)  # 8: a failure; 9: no pairwise judgment
    vfs_rec = col.is_vfs
    v = col.vfs
    vok = vfs_rec & ~np.isnan(v)
    ref = col.vfs_ref
    rok = vok & ~np.isnan(ref)
    names = [n for n in SCORE_NAMES.values()]
    # each record's outcome as a column of the counts: 0..4 the verdicts 2..-2 (SCORE_NAMES' order),
    # 5 a failure, 6 no pairwise judgment
    outcome = np.where(vbin == 8, 5, np.where(vbin == 9, 6, 2 - vbin))
    order = {lvl: i for i, lvl in enumerate(levels)}
    out = []
    for level in levels:
        gc, gnames = col.level(level)
        key = mc.astype(np.int64) * max(len(gnames), 1) + gc
        group, first = _first_order(key)
        m = first.size

        def count(mask):
            return np.bincount(group[mask], minlength=m).tolist()

        def total(mask, values):
            return np.bincount(group[mask], weights=values[mask], minlength=m).tolist()

        n_pw, n_valid, wins = count(pw), count(valid), count(valid & (s > 0))
        by_outcome = np.bincount(group * 7 + outcome, minlength=7 * m).reshape(m, 7)[:, :6].tolist()
        score_sum = total(valid, s)
        n_vfs, n_vok, n_rok = count(vfs_rec), count(vok), count(rok)
        vfs_sum, ref_sum = total(vok, v), total(rok, ref)
        for g, (mi, gi) in enumerate(zip(mc[first].tolist(), gc[first].tolist())):
            nv, nf = n_valid[g], n_vok[g]
            row = {"model": mnames[mi], "level": level,
                   "group": "overall" if level == "overall" else gnames[gi],
                   "n_pairwise": n_pw[g], **dict(zip(names, by_outcome[g])),
                   "reward": 50.0 * score_sum[g] / nv if nv else None,
                   "win_rate": 100.0 * wins[g] / nv if nv else None,
                   "pairwise_parse_ok": nv / n_pw[g] if n_pw[g] else None,
                   "n_vfs": n_vfs[g], "vfs_fail": n_vfs[g] - nf,
                   "vfs": vfs_sum[g] / nf if nf else None,
                   "vfs_parse_ok": nf / n_vfs[g] if n_vfs[g] else None,
                   "vfs_ref": ref_sum[g] / n_rok[g] if n_rok[g] else None}
            out.append(row)
    out.sort(key=lambda r: (r["model"], order[r["level"]], r["group"]))
    return out


# --------------------------------------------------------------------------- per-item sums

#: the sums :func:`item_sums` gives each item, in this order
SUM_COLUMNS = ("reward_num", "win_num", "valid", "vfs_num", "vfs_ref_num", "vfs_valid")

#: each figure of :func:`summarize` as sum(numerator) / sum(denominator) over items: figure ->
#: (numerator column, denominator column) of :data:`SUM_COLUMNS`
FIGURE_SUMS = {
    "reward": ("reward_num", "valid"),
    "win_rate": ("win_num", "valid"),
    "vfs": ("vfs_num", "vfs_valid"),
    "vfs_ref": ("vfs_ref_num", "vfs_valid"),
}


def item_sums(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """``(model, index) -> sums`` in :data:`SUM_COLUMNS` order, over the item's judgment records
    (both orders; records as :func:`summarize` reads them, each with an ``index``):

    * ``reward_num`` = 50 x the sum of the valid pairwise scores, ``win_num`` = 100 x the valid
      scores above 0, ``valid`` = how many scores are valid;
    * ``vfs_num`` = the sum of the valid VFS values, ``vfs_ref_num`` = the sum of the baseline's
      VFS over the same judgments, ``vfs_valid`` = how many VFS values are valid.

    Summed over a group's items, each :data:`FIGURE_SUMS` ratio is :func:`summarize`'s figure
    for the group (failures and judgments left out count nowhere).  Items come in the order of
    their first record."""
    if isinstance(records, list):  # the shared columns (judging.columns): each column summed in record order
        import numpy as np

        from .columns import columns, first_order as _first_order

        col = columns(records)
        if col.n == 0:
            return {}
        (mc, mnames), (ic, inames) = col.model, col.index
        item, first = _first_order(mc.astype(np.int64) * max(len(inames), 1) + ic)
        S = col.sums
        per = np.column_stack([np.bincount(item, weights=S[:, c], minlength=first.size)
                               for c in range(len(SUM_COLUMNS))])
        return dict(zip([(mnames[m], inames[i]) for m, i in zip(mc[first].tolist(), ic[first].tolist())],
                        per.tolist()))
    out: dict[tuple[str, str], list[float]] = {}
    for r in records:
        key = (str(r.get("model", "")), str(r["index"]))
        sums = out.setdefault(key, [0.0] * len(SUM_COLUMNS))
        if _is_pairwise(r):  # the hot path: summed in place (record_sums gives one record's part)
            s = _score(r)
            if s is not None:
                sums[0] += 50.0 * s
                sums[1] += 100.0 * (s > 0)
                sums[2] += 1.0
        if _is_vfs(r) and r.get("vfs") is not None:
            sums[3] += float(r["vfs"])
            sums[4] += float(r["vfs_ref"]) if r.get("vfs_ref") is not None else 0.0
            sums[5] += 1.0
    return out


def record_sums(r: Mapping[str, Any]) -> list[float]:
    """One judgment record's part of :func:`item_sums` (in :data:`SUM_COLUMNS` order)."""
    kind = r.get("kind", "pairwise")
    if kind == "pairwise" and "kind" in r:  # the hot path: a pairwise judgment (no VFS on it)
        s = _score(r)
        if s is None:
            return [0.0] * len(SUM_COLUMNS)
        return [50.0 * s, 100.0 * (s > 0), 1.0, 0.0, 0.0, 0.0]
    sums = [0.0] * len(SUM_COLUMNS)
    if kind == "pairwise":
        s = _score(r)
        if s is not None:
            sums[0] = 50.0 * s
            sums[1] = 100.0 * (s > 0)
            sums[2] = 1.0
    if _is_vfs(r) and r.get("vfs") is not None:
        sums[3] = float(r["vfs"])
        sums[4] = float(r["vfs_ref"]) if r.get("vfs_ref") is not None else 0.0
        sums[5] = 1.0
    return sums


def _record_sums_columnar(records: list[Mapping[str, Any]]):
    """:func:`record_sums` of every record at once (records x 6), from the shared columns."""
    from .columns import columns

    return columns(records).sums


record_sums.columnar = _record_sums_columnar  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- a panel's ensemble

def _number(v: Any) -> bool:
    return v is not None and not isinstance(v, (str, bool))


def ensemble_records(records: Iterable[Mapping[str, Any]], *, pairwise_rule: Callable[[Sequence[Any]], Any],
                     score_rule: Callable[[Sequence[Any]], Any]) -> list[dict[str, Any]]:
    """One record per (model, index, kind, order, repeat) from the records of every judge of a
    panel (``kind`` "pairwise" or "vfs", as :func:`summarize` reads them; ``repeat`` 0 where a
    record has none, and kept in the record only where the judges' records have it), with
    ``judge`` = :data:`ENSEMBLE_JUDGE`:

    * pairwise: ``score`` = ``pairwise_rule`` of the judges' valid scores (e.g.
      :func:`judgekit.judging.agreement.majority`, or the mean, which may give a non-integer
      score: the record then says ``averaged``); None when no judge's score is valid;
    * vfs: ``vfs`` and ``vfs_ref`` = ``score_rule`` (e.g. the mean) over the judges whose VFS is
      valid; with none valid, :data:`NO_VFS` when every judge's judgment was left out (an empty
      reply), else None (a failure).

    ``ok`` says whether the ensemble has a value; ``error_kind`` is the judges' common failure
    kind (``candidate_failed``...) or ``no_valid_judgment`` when they failed differently.  The
    item's ``task``, ``category`` and ``length_diff`` are the first record's.  Records come in
    the order of each group's first record."""
    if isinstance(records, list):
        from .agreement import mean_score

        if pairwise_rule is mean_score and score_rule is mean_score:  # the default: every mean at once
            return mean_ensemble(records)
    groups: dict[tuple[str, str, str, int, int], list[Mapping[str, Any]]] = {}
    for r in records:
        kind = r.get("kind")
        if kind not in ("pairwise", "vfs"):
            continue
        key = (str(r.get("model", "")), str(r["index"]), kind, int(r.get("order", 0)), int(r.get("repeat", 0)))
        groups.setdefault(key, []).append(r)
    out = []
    for (model, index, kind, order, repeat), recs in groups.items():
        first = recs[0]
        rec: dict[str, Any] = {"model": model, "judge": ENSEMBLE_JUDGE, "index": index, "task": first.get("task"),
                               "category": first.get("category"), "kind": kind, "order": order,
                               "score": None, "vfs": None, "vfs_ref": None}
        if kind == "pairwise":
            rec["score"] = pairwise_rule([r.get("score") for r in recs if r.get("score") is not None])
            ok = rec["score"] is not None
            if ok and not isinstance(rec["score"], int):
                rec["averaged"] = True
        else:
            valid = [r for r in recs if _number(r.get("vfs"))]
            if valid:
                rec["vfs"] = score_rule([r["vfs"] for r in valid])
                rec["vfs_ref"] = score_rule([r["vfs_ref"] for r in valid if r.get("vfs_ref") is not None])
            elif all(_no_vfs(r) for r in recs):
                rec["vfs"] = NO_VFS
            ok = bool(valid)
        kinds = {r.get("error_kind") for r in recs}
        rec["ok"] = ok
        rec["error_kind"] = None if ok else (kinds.pop() if len(kinds) == 1 else "no_valid_judgment")
        rec["judges"] = len(recs)
        rec["length_diff"] = first.get("length_diff")
        if "repeat" in first:
            rec["repeat"] = repeat
        out.append(rec)
    return out
