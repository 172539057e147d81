"""Every candidate's and the pooled behaviour figures of one judge, from one pass over its records.

:func:`judgekit.judging.panel.behaviour_rows` asks for the figures of
:func:`judgekit.judging.behaviour.pairwise_behaviour` per candidate and pooled over candidates;
computed that way, every record is turned into a dict twice (its candidate's row and the pooled
one) and walked in Python three times.  Here each record is read once into columns (candidate,
item, order, verdict, length difference), and every candidate's counts come at once from
``bincount`` over the candidate codes (the pooled row: their totals).  The figures are the same
numbers, not approximations: counts are counted, shares are the same integer ratios, the last
verdict of an (item, order) wins as in ``pairwise_behaviour``'s dictionary, and Spearman's rho gets
the same values in the same (record) order.  Each candidate's rank sums are kept per list, so the
honesty pass's length correlation pooled within candidates (:func:`length_within`) is not ranked
again.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .behaviour import _rho, _spearman, _varies, pooled_within, rank_dots
from .pairwise import NO_VFS

__all__ = ["judge_behaviour", "length_pairs", "length_within"]

_NO_CALL = "candidate_failed"


def judge_behaviour(records: Sequence[Mapping[str, Any]], models: Sequence[Hashable]) -> list[dict[str, Any]]:
    """The behaviour figures of one judge's records for each of ``models`` (a record's ``model``;
    None: every record, pooled), as :func:`judgekit.judging.panel.behaviour_row` gives them on
    that model's records (or all of them).  Judgments with no judge call take no part."""
    if isinstance(records, list):
        return _from_columns(records, models)
    model_code: dict[Hashable, int] = {}
    items: dict[tuple, int] = {}
    p_model, p_item, p_order, p_score, p_failed, p_has, p_diff = [], [], [], [], [], [], []
    v_model, v_failed = [], []
    for r in records:
        if r.get("error_kind") == _NO_CALL:
            continue
        kind = r.get("kind")
        m = r.get("model")
        code = model_code.get(m)
        if code is None:
            code = model_code[m] = len(model_code)
        if kind == "pairwise":
            key = (r["model"], r["index"], r.get("repeat", 0))
            it = items.get(key)
            if it is None:
                it = items[key] = len(items)
            s = r.get("score")
            d = r.get("length_diff")
            p_model.append(code)
            p_item.append(it)
            p_order.append(int(r.get("order", 0)))
            p_failed.append(s is None)
            # float(verdict), as pairwise_behaviour hands it to Spearman's rho
            p_score.append(0.0 if s is None else float(s if isinstance(s, float) else int(s)))
            p_has.append(d is not None)
            p_diff.append(0.0 if d is None else float(d))
        elif kind == "vfs":
            v = r.get("vfs")
            if isinstance(v, str) and v == NO_VFS:
                continue
            v_model.append(code)
            v_failed.append(v is None)
    pm, failed = np.asarray(p_model, dtype=np.intp), np.asarray(p_failed, dtype=bool)
    score = np.asarray(p_score, dtype=float)
    paired = np.flatnonzero(~failed & np.asarray(p_has, dtype=bool))
    return _table(models, model_code, pm, failed, score, np.asarray(p_order, dtype=np.intp),
                  np.asarray(p_item, dtype=np.intp), paired, np.asarray(p_diff, dtype=float)[paired],
                  np.asarray(v_model, dtype=np.intp), np.asarray(v_failed, dtype=bool))[0]


def _from_columns(records: list, models: Sequence[Hashable]) -> list[dict[str, Any]]:
    """:func:`judge_behaviour` from the records' shared columns (:mod:`.columns`): the same
    judgments, in record order (a record's candidate and item by their names as text)."""
    from .columns import columns, first_order
    from .keys import packed

    col = columns(records)
    mc, mnames = col.model
    pos = np.flatnonzero(col.kind_is("pairwise") & col.called)
    pm = mc[pos]
    failed, score = _verdicts(col, pos)
    order = col.order[pos]
    if pos.size:
        item, _ = first_order(packed([pm, col.index[0][pos], col.repeat[pos]]))
    else:
        item = np.zeros(0, dtype=np.intp)
    diff = col.length_diff[pos]
    paired = np.flatnonzero(~failed & ~np.isnan(diff))
    vpos = np.flatnonzero(col.kind_is("vfs") & col.is_vfs & col.called)  # a VFS judgment not left out
    out, within = _table(models, {m: i for i, m in enumerate(mnames)}, pm, failed, score, order, item, paired,
                         diff[paired], mc[vpos], _vfs_failed(col, vpos))
    _keep_length(col, within)
    return out


def _table(models: Sequence[Hashable], code: Mapping[Hashable, int], pm: np.ndarray, failed: np.ndarray,
           score: np.ndarray, order: np.ndarray, item: np.ndarray, paired: np.ndarray, diff: np.ndarray,
           vm: np.ndarray, vfs_failed: np.ndarray) -> tuple[list[dict[str, Any]], list]:
    """(each of ``models``' figures; every candidate's length rank sums, :func:`_length`) from the
    pairwise judgments' candidate codes ``pm`` (``code``: a model -> its code), failures, verdicts
    (0 for a failure), orders and items, in record order; ``paired``: those with a verdict and a
    length difference (``diff``); the VFS judgments' candidate codes and failures."""
    groups = len(code)
    counts = _counts(pm, failed, score, order, item, groups)
    length, within = _length(pm[paired], diff, score[paired], groups)
    n_vfs = np.bincount(vm, minlength=groups)
    n_failed = np.bincount(vm[vfs_failed], minlength=groups)
    n_vfs, n_failed = np.append(n_vfs, vm.size), np.append(n_failed, n_failed.sum())  # one more code: pooled
    out = []
    for model in models:
        k = groups if model is None else code.get(model, -1)
        figures = _row({name: int(c[k]) if k >= 0 else 0 for name, c in counts.items()},
                       length[k] if k >= 0 else (None, 0))
        nv, failures = (int(n_vfs[k]), int(n_failed[k])) if k >= 0 else (0, 0)
        out.append({**figures, "vfs_judgments": nv, "vfs_parse_failures": failures,
                    "vfs_parse_failure_rate": failures / nv if nv else None})
    return out, within


def _verdicts(col, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which pairwise records' scores are None; ``float(s if isinstance(s, float) else int(s))``
    of each score, as ``pairwise_behaviour`` reads a verdict, 0.0 for None) at positions ``pos``."""
    raw = col.raw_score
    if col.plain_scores:  # ints and floats: float() of each is the same number, None is NaN
        score = col.float_score[pos]
        failed = np.zeros(pos.size, dtype=bool)
        nan = np.flatnonzero(np.isnan(score))  # None, or a float NaN (a verdict, if an odd one)
        failed[nan] = [raw[i] is None for i in pos[nan].tolist()]
        return failed, np.where(failed, 0.0, score)
    got = [raw[i] for i in pos.tolist()]
    failed = np.array([s is None for s in got], dtype=bool).reshape(pos.size)
    return failed, np.array([0.0 if s is None else (s if isinstance(s, float) else int(s)) for s in got],
                            dtype=float).reshape(pos.size)


def _vfs_failed(col, vpos: np.ndarray) -> np.ndarray:
    """Which VFS judgments at positions ``vpos`` have no value (None)."""
    raw = col.raw("vfs")
    try:
        nan = vpos[np.isnan(col.vfs[vpos])]  # None, or a float NaN
    except (TypeError, ValueError):  # a value float() refuses: each looked at
        nan = vpos
    out = np.zeros(col.n, dtype=bool)
    out[nan] = [raw[i] is None for i in nan.tolist()]
    return out[vpos]


def _counts(pm: np.ndarray, failed: np.ndarray, score: np.ndarray, order: np.ndarray, item: np.ndarray,
            groups: int) -> dict[str, np.ndarray]:
    """Per candidate code, then pooled (one more code): the counts ``pairwise_behaviour`` makes
    of the pairwise judgments (their candidate codes ``pm``, in record order)."""
    def per(mask: np.ndarray) -> np.ndarray:
        c = np.bincount(pm[mask], minlength=groups)
        return np.append(c, c.sum())

    ok = ~failed
    decided = ok & (score != 0)
    # the first slot holds the baseline in order 0 (it wins when the candidate loses)
    first_won = decided & np.where(order == 0, score < 0, score > 0)
    # both orders of an item: the last judgment of each (item, order) counts, as a dict would keep
    # it; an item's pair counts when neither of its two is a failure
    two = np.flatnonzero((order == 0) | (order == 1))
    slot = item[two] * 2 + order[two]
    last = two[::-1][np.unique(slot[::-1], return_index=True)[1]]
    n_items = int(item.max()) + 1 if item.size else 0
    first_slot, second_slot = np.full(n_items, -1), np.full(n_items, -1)
    o = order[last]
    first_slot[item[last[o == 0]]] = last[o == 0]
    second_slot[item[last[o == 1]]] = last[o == 1]
    both = (first_slot >= 0) & (second_slot >= 0)
    a, b = first_slot[both], second_slot[both]
    keep = ok[a] & ok[b]
    a, b = a[keep], b[keep]

    def pairs(mask: np.ndarray) -> np.ndarray:
        c = np.bincount(pm[a[mask]], minlength=groups)
        return np.append(c, c.sum())

    everything = np.ones(pm.size, dtype=bool)
    decided_n = per(decided)
    first = per(first_won)
    return {"judgments": per(everything), "parse_failures": per(failed), "ties": per(ok & (score == 0)),
            "first": first, "second": decided_n - first, "both": pairs(np.ones(a.size, dtype=bool)),
            "consistent": pairs(np.sign(score[a]) == np.sign(score[b])), "exact": pairs(score[a] == score[b])}


def _row(c: dict[str, int], length: tuple[float | None, int]) -> dict[str, Any]:
    """``pairwise_behaviour``'s figures from one row's counts and (length correlation, pairs)."""
    total, failures, n_both = c["judgments"], c["parse_failures"], c["both"]
    first, second = c["first"], c["second"]
    valid = total - failures
    return {
        "judgments": total,
        "parse_failures": failures,
        "parse_failure_rate": failures / total if total else None,
        "items_both_orders": n_both,
        "swap_consistency": c["consistent"] / n_both if n_both else None,
        "swap_exact": c["exact"] / n_both if n_both else None,
        "first_slot_preference": first / (first + second) if first + second else None,
        "first_slot_wins": first,
        "second_slot_wins": second,
        "tie_rate": c["ties"] / valid if valid else None,
        "length_correlation": length[0],
        "length_pairs": length[1],
    }


def _length(code: np.ndarray, diff: np.ndarray, score: np.ndarray, groups: int):
    """(per candidate code, then pooled: (Spearman's rho of verdict and length difference, pairs);
    every candidate's (pairs, :func:`.behaviour.rank_dots`) in order of first appearance, for the
    correlation pooled within candidates).  Each candidate's pairs in record order, as
    ``pairwise_behaviour`` ranks them."""
    at = np.argsort(code, kind="stable")
    n = np.bincount(code, minlength=groups)
    ends = np.cumsum(n)
    rows: list[tuple[float | None, int]] = []
    dots: dict[int, tuple[int, float, float, float]] = {}
    for g in range(groups):
        x, y = diff[at[ends[g] - n[g]:ends[g]]], score[at[ends[g] - n[g]:ends[g]]]
        rho = None
        if n[g] >= 2:
            dots[g] = (int(n[g]), *rank_dots(x, y))
            if n[g] >= 3 and _varies(x) and _varies(y):
                rho = _rho(*dots[g][1:])
        rows.append((rho, int(n[g])))
    rows.append((_spearman(diff, score), int(code.size)))
    firsts = np.unique(code, return_index=True)[1] if code.size else np.zeros(0, dtype=np.intp)
    within = [dots.get(int(g), (1, 0.0, 0.0, 0.0)) for g in code[np.sort(firsts)]]
    return rows, within


#: the last few lists' per-candidate length rank sums (a Columns -> its list), for the honesty
#: pass's correlation pooled within candidates (:func:`length_within`)
_LENGTH: dict[int, tuple[Any, list]] = {}


def _keep_length(col, within: list) -> None:
    while len(_LENGTH) >= 8:
        _LENGTH.pop(next(iter(_LENGTH)))
    _LENGTH[id(col)] = (col, within)


def length_within(records: Sequence[Mapping[str, Any]]) -> float | None:
    """Spearman's rho of the verdict and the length difference pooled within candidates
    (:func:`.behaviour.pooled_within`) over a judge's pairwise judgments with a judge call, a
    verdict and a length difference; from what :func:`judge_behaviour` computed on the same list
    when it did, else from the records."""
    if isinstance(records, list):
        from .columns import columns

        col = columns(records)
        got = _LENGTH.get(id(col))
        if got is None or got[0] is not col:
            judge_behaviour(records, [])
            got = _LENGTH[id(col)]
        return pooled_within(got[1])
    return pooled_within((len(xs), *rank_dots(xs, ys)) for xs, ys in length_pairs(records) if len(xs) >= 2)


def length_pairs(records: Sequence[Mapping[str, Any]]) -> list[tuple[list[float], list[float]]]:
    """Per candidate (in order of first appearance), the (length difference, verdict) of its
    pairwise judgments with a judge call, a verdict and a length difference, in record order."""
    if isinstance(records, list):
        from .columns import columns

        col = columns(records)
        raw = col.raw_score
        ok = col.kind_is("pairwise") & col.called & ~np.isnan(col.length_diff)
        ok[ok] = [raw[i] is not None for i in np.flatnonzero(ok).tolist()]
        pos = np.flatnonzero(ok)
        mc = col.model[0][pos]
        out = []
        for code in list(dict.fromkeys(mc.tolist())):
            mine = pos[mc == code]
            out.append((col.length_diff[mine].tolist(), [float(raw[i]) for i in mine.tolist()]))
        return out
    per: dict[str, tuple[list[float], list[float]]] = {}
    for r in records:
        if (r.get("kind") == "pairwise" and r.get("error_kind") != _NO_CALL and r.get("score") is not None
                and r.get("length_diff") is not None):
            xs, ys = per.setdefault(str(r["model"]), ([], []))
            xs.append(float(r["length_diff"]))
            ys.append(float(r["score"]))
    return list(per.values())
