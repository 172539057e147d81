"""Every candidate's and the pooled behaviour figures of one judge, from one pass over its records.

:func:`judgekit.judging.panel.behaviour_rows` asks for the figures of
:func:`judgekit.judging.behaviour.pairwise_behaviour` per candidate and pooled over candidates;
computed that way, every record is turned into a dict twice (its candidate's row and the pooled
one) and walked in Python three times.  Here each record is read once into columns (candidate,
item, order, verdict, length difference), and each row's counts come from NumPy masks over them.
The figures are the same numbers, not approximations: counts are counted, shares are the same
integer ratios, the last verdict of an (item, order) wins as in ``pairwise_behaviour``'s
dictionary, and Spearman's rho gets the same values in the same (record) order.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .behaviour import _spearman
from .pairwise import NO_VFS

__all__ = ["judge_behaviour"]

_NO_CALL = "candidate_failed"


def _figures(pos: np.ndarray, score: np.ndarray, failed: np.ndarray, order: np.ndarray, item: np.ndarray,
             has_diff: np.ndarray, diff: np.ndarray, scores: list) -> dict[str, Any]:
    """``pairwise_behaviour``'s figures of the pairwise judgments at positions ``pos`` (record order)."""
    total = int(pos.size)
    f = failed[pos]
    failures = int(np.count_nonzero(f))
    ok = pos[~f]
    s, o = score[ok], order[ok]
    ties = int(np.count_nonzero(s == 0))
    decided = s != 0
    first_won = np.where(o == 0, s < 0, s > 0) & decided
    first = int(np.count_nonzero(first_won))
    second = int(np.count_nonzero(decided)) - first
    # both orders of an item: the last judgment of each (item, order) counts, as a dict would keep it
    two = pos[(order[pos] == 0) | (order[pos] == 1)]
    slot = item[two] * 2 + order[two]
    last = two[::-1][np.unique(slot[::-1], return_index=True)[1]]
    # each item's last judgment in order 0 and in order 1 (-1: none), the pairs with neither failed
    n_items = int(item.max()) + 1 if item.size else 0
    first_slot, second_slot = np.full(n_items, -1), np.full(n_items, -1)
    o = order[last]
    first_slot[item[last[o == 0]]] = last[o == 0]
    second_slot[item[last[o == 1]]] = last[o == 1]
    paired_items = (first_slot >= 0) & (second_slot >= 0)
    a_pos, b_pos = first_slot[paired_items], second_slot[paired_items]
    keep = ~failed[a_pos] & ~failed[b_pos]
    a_pos, b_pos = a_pos[keep], b_pos[keep]
    n_both = int(a_pos.size)
    if n_both:
        a, b = score[a_pos], score[b_pos]
        consistent = int(np.count_nonzero(np.sign(a) == np.sign(b)))
        exact = int(np.count_nonzero(a == b))
    paired = ok[has_diff[ok]]
    valid = total - failures
    return {
        "judgments": total,
        "parse_failures": failures,
        "parse_failure_rate": failures / total if total else None,
        "items_both_orders": n_both,
        "swap_consistency": consistent / n_both if n_both else None,
        "swap_exact": exact / n_both if n_both else None,
        "first_slot_preference": first / (first + second) if first + second else None,
        "first_slot_wins": first,
        "second_slot_wins": second,
        "tie_rate": ties / valid if valid else None,
        "length_correlation": _spearman(diff[paired].tolist(), [scores[p] for p in paired.tolist()]),
        "length_pairs": int(paired.size),
    }


def judge_behaviour(records: Sequence[Mapping[str, Any]], models: Sequence[Hashable]) -> list[dict[str, Any]]:
    """The behaviour figures of one judge's records for each of ``models`` (a record's ``model``;
    None: every record, pooled), as :func:`judgekit.judging.panel.behaviour_row` gives them on
    that model's records (or all of them).  Judgments with no judge call take no part."""
    if isinstance(records, list):
        return _from_columns(records, models)
    model_code: dict[Hashable, int] = {}
    items: dict[tuple, int] = {}
    p_model, p_item, p_order, p_score, p_failed, p_has, p_diff = [], [], [], [], [], [], []
    scores: list[float] = []  # float(verdict), as pairwise_behaviour hands it to Spearman's rho
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
            if s is None:
                p_score.append(0.0)
                scores.append(0.0)
            else:
                s = s if isinstance(s, float) else int(s)
                p_score.append(s)
                scores.append(float(s))
            p_has.append(d is not None)
            p_diff.append(0.0 if d is None else float(d))
        elif kind == "vfs":
            v = r.get("vfs")
            if isinstance(v, str) and v == NO_VFS:
                continue
            v_model.append(code)
            v_failed.append(v is None)
    pm, vm = np.asarray(p_model, dtype=np.intp), np.asarray(v_model, dtype=np.intp)
    arrays = (np.asarray(p_score, dtype=float), np.asarray(p_failed, dtype=bool), np.asarray(p_order, dtype=np.intp),
              np.asarray(p_item, dtype=np.intp), np.asarray(p_has, dtype=bool), np.asarray(p_diff, dtype=float))
    vf = np.asarray(v_failed, dtype=bool)
    return _rows(models, model_code, pm, vm, arrays, vf, scores)


def _from_columns(records: list, models: Sequence[Hashable]) -> list[dict[str, Any]]:
    """:func:`judge_behaviour`'s arrays from the records' shared columns (:mod:`.columns`): the same
    judgments, in record order (a record's candidate and item by their names as text)."""
    from .columns import columns, first_order

    col = columns(records)
    called = np.fromiter((e != _NO_CALL for e in col.error_kind), dtype=bool, count=col.n)
    pos = np.flatnonzero(col.kind_is("pairwise") & called)
    (mc, mnames) = col.model
    model_code = {m: i for i, m in enumerate(mnames)}
    raw = col.raw_score
    got = [raw[i] for i in pos.tolist()]
    failed = np.fromiter((s is None for s in got), dtype=bool, count=pos.size)
    score = np.array([0.0 if s is None else (s if isinstance(s, float) else int(s)) for s in got], dtype=float)
    if pos.size:
        item, _ = first_order(np.column_stack([mc[pos], col.index[0][pos], col.repeat[pos]]).astype(np.int64))
    else:
        item = np.zeros(0, dtype=np.intp)
    diff = col.length_diff[pos]
    has = ~np.isnan(diff)
    arrays = (score, failed, col.order[pos], item, has, np.where(has, diff, 0.0))
    vfs = col.raw("vfs")
    vpos = [i for i in np.flatnonzero(col.kind_is("vfs") & called).tolist()
            if not (isinstance(vfs[i], str) and vfs[i] == NO_VFS)]
    vf = np.fromiter((vfs[i] is None for i in vpos), dtype=bool, count=len(vpos))
    vm = mc[np.asarray(vpos, dtype=np.intp)]
    return _rows(models, model_code, mc[pos], vm, arrays, vf, score.tolist())


def _rows(models, model_code, pm, vm, arrays, vf, scores) -> list[dict[str, Any]]:
    out = []
    for model in models:
        if model is None:
            pos, vpos = np.arange(pm.size), np.arange(vm.size)
        else:
            code = model_code.get(model, -1)
            pos, vpos = np.flatnonzero(pm == code), np.flatnonzero(vm == code)
        failures = int(np.count_nonzero(vf[vpos]))
        n_vfs = int(vpos.size)
        out.append({**_figures(pos, *arrays, scores), "vfs_judgments": n_vfs, "vfs_parse_failures": failures,
                    "vfs_parse_failure_rate": failures / n_vfs if n_vfs else None})
    return out
