"""A judge panel's mean ensemble from the judges' records' shared columns (:mod:`.columns`): the
fast path of :func:`.pairwise.ensemble_records` when both rules are the mean.

Every group's count and sum of valid values come from one ``np.bincount`` each (the values added
in record order, as :func:`.agreement.mean_score` adds them), the records are built from those
columns in one pass, and the ensemble's own columns are registered from the same arrays, so no
later stage reads them back from the records.  The records are the ones the record walk makes:
the same values, the same keys in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import is_not, itemgetter
from itertools import repeat
from typing import Any

import numpy as np

from .columns import NO_VFS, Columns, _register, codes, columns, first_order, floats, is_no_vfs, read, text_codes

__all__ = ["ENSEMBLE_JUDGE", "mean_ensemble"]

#: the ``judge`` of the ensemble's records and rows
ENSEMBLE_JUDGE = "ensemble"

_KINDS = ("vfs", "pairwise")


def _not_none(values: Sequence[Any]) -> np.ndarray:
    """``v is not None`` of each value."""
    return np.fromiter(map(is_not, values, repeat(None)), dtype=bool, count=len(values))


def _numbers(values: Sequence[Any]) -> np.ndarray:
    """``v is not None and not isinstance(v, (str, bool))`` of each value (a VFS value the mean takes)."""
    code, types = codes(list(map(type, values)))
    ok = np.array([t is not type(None) and not issubclass(t, (str, bool)) for t in types], dtype=bool)
    return ok[code] if len(values) else np.zeros(0, dtype=bool)


def _means(group: np.ndarray, has: np.ndarray, values: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    """(each group's count of ``has``, the sum of its ``values`` there over that count; NaN for none)."""
    n = np.bincount(group[has], minlength=G)
    total = np.bincount(group[has], weights=values[has], minlength=G)
    with np.errstate(invalid="ignore", divide="ignore"):
        return n, np.where(n > 0, total / np.where(n > 0, n, 1), np.nan)


def _or_none(values: np.ndarray, where: np.ndarray) -> list[Any]:
    """``values`` as Python floats where ``where``, None elsewhere."""
    out = np.full(values.size, None, dtype=object)
    out[where] = values[where].tolist()
    return out.tolist()


def mean_ensemble(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`.pairwise.ensemble_records` with the mean for both rules: the same records in the
    same order, and their columns registered (:func:`.columns.columns` of the returned list is
    them)."""
    col = columns(records)
    pw, vf = col.kind_is("pairwise"), col.kind_is("vfs")
    sel = np.flatnonzero(pw | vf)
    if sel.size == 0:
        return []
    everything = sel.size == col.n
    sl = sel.tolist()

    def at_sel(values: list[Any]) -> list[Any]:
        return values if everything else [values[i] for i in sl]

    (mc, mnames), (ic, inames) = col.model, col.index
    is_pw = pw[sel]
    group, first = first_order(np.column_stack([mc[sel], ic[sel], is_pw, col.order[sel], col.repeat[sel]]
                                               ).astype(np.int64))
    G = first.size
    judges = np.bincount(group, minlength=G)
    pairwise = is_pw[first]

    # pairwise: the judges' scores that are not None, float() of each (a bool as 0/1), as agreement._valid
    scores = at_sel(col.raw_score)
    has = _not_none(scores) & is_pw
    n_score, score = _means(group, has, floats(scores, has), G)
    # VFS: the judges' numeric VFS values, and the baselines' of those that are not None
    vraw, rraw = at_sel(col.raw("vfs")), at_sel(col.raw("vfs_ref"))
    vnum = _numbers(vraw) & ~is_pw
    rnum = vnum & _not_none(rraw)
    n_vfs, vfs = _means(group, vnum, floats(vraw, vnum), G)
    n_ref, ref = _means(group, rnum, floats(rraw, rnum), G)

    ok = np.where(pairwise, n_score > 0, n_vfs > 0)
    averaged = pairwise & ok
    score_list = _or_none(score, averaged)
    vfs_ok = ~pairwise & ok
    vfs_list, ref_list = _or_none(vfs, vfs_ok), _or_none(ref, vfs_ok & (n_ref > 0))
    error_kinds: list[Any] = [None] * G
    failed = np.flatnonzero(~ok)
    if failed.size:  # a group with no valid value: NO_VFS when every judge's VFS was left out; the common failure
        members = sel[np.argsort(group, kind="stable")].tolist()
        starts = np.concatenate([[0], np.cumsum(judges)[:-1]]).tolist()
        nj = judges.tolist()
        for g in failed.tolist():
            recs = [records[k] for k in members[starts[g]:starts[g] + nj[g]]]
            if not pairwise[g] and all(isinstance(r.get("vfs"), str) and r["vfs"] == NO_VFS for r in recs):
                vfs_list[g] = NO_VFS
            kinds = {r.get("error_kind") for r in recs}
            error_kinds[g] = kinds.pop() if len(kinds) == 1 else "no_valid_judgment"

    at = sel[first]  # each group's first record
    firsts = [records[i] for i in at.tolist()]
    tasks, categories, length_diffs = read(firsts, "task"), read(firsts, "category"), read(firsts, "length_diff")
    model_code, model_first = first_order(mc[at])
    index_code, index_first = first_order(ic[at])
    models = [mnames[m] for m in mc[at].tolist()]
    indexes = [inames[i] for i in ic[at].tolist()]
    kinds = list(map(_KINDS.__getitem__, pairwise.astype(np.intp).tolist()))
    orders, repeats = col.order[at], col.repeat[at]
    out = [{"model": m, "judge": ENSEMBLE_JUDGE, "index": ix, "task": t, "category": c, "kind": k, "order": o,
            "score": s, "vfs": v, "vfs_ref": vr, "averaged": True, "ok": g_ok, "error_kind": e, "judges": nj,
            "length_diff": d} if av else
           {"model": m, "judge": ENSEMBLE_JUDGE, "index": ix, "task": t, "category": c, "kind": k, "order": o,
            "score": s, "vfs": v, "vfs_ref": vr, "ok": g_ok, "error_kind": e, "judges": nj, "length_diff": d}
           for m, ix, t, c, k, o, s, v, vr, av, g_ok, e, nj, d
           in zip(models, indexes, tasks, categories, kinds, orders.tolist(), score_list, vfs_list, ref_list,
                  averaged.tolist(), ok.tolist(), error_kinds, judges.tolist(), length_diffs)]
    try:  # "repeat" last, where the group's first record has one
        list(map(itemgetter("repeat"), firsts))
        carries = None
    except KeyError:
        carries = ["repeat" in r for r in firsts]
    if carries is None or any(carries):
        for k, (rec, rp) in enumerate(zip(out, repeats.tolist())):
            if carries is None or carries[k]:
                rec["repeat"] = rp

    # the ensemble's columns, from the same values (what reading them back from ``out`` gives)
    c = Columns(out)
    d = c.__dict__
    d["model"] = (model_code, [mnames[k] for k in mc[at][model_first].tolist()])
    d["index"] = (index_code, [inames[k] for k in ic[at][index_first].tolist()])
    d["task"], d["category"] = text_codes(tasks), text_codes(categories)
    kind_names = kinds[:1]  # in order of first appearance
    if pairwise.any() and not pairwise.all():
        kind_names.append(_KINDS[not pairwise[0]])
    d["kind_code"] = (np.where(pairwise, kind_names.index("pairwise") if "pairwise" in kind_names else 0,
                               kind_names.index("vfs") if "vfs" in kind_names else 0).astype(np.intp), kind_names)
    d["kind_is:pairwise"] = d["is_pairwise"] = pairwise.copy()
    d["kind_is:vfs"] = ~pairwise
    d["has_kind"] = np.ones(G, dtype=bool)
    d["judge"] = (np.zeros(G, dtype=np.intp), [ENSEMBLE_JUDGE])
    d["order"], d["repeat"] = orders, repeats
    d["raw_score"], d["raw:vfs"], d["raw:vfs_ref"] = score_list, vfs_list, ref_list
    d["error_kind"] = error_kinds
    d["length_diff"] = floats(length_diffs)
    if not (np.abs(score[averaged]) > 2).any():  # else left to the check, which raises
        d["score"] = np.where(averaged, score, np.nan)
    d["is_vfs"] = ~pairwise & ~is_no_vfs(vfs_list)
    d["vfs"] = np.where(vfs_ok, vfs, np.nan)
    d["vfs_ref"] = np.where(vfs_ok & (n_ref > 0), ref, np.nan)
    _register(out, c)
    return out

