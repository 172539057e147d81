"""A judge panel's mean ensemble from the judges' records' shared columns (:mod:`.columns`): the
fast path of :func:`.pairwise.ensemble_records` when both rules are the mean.

Every group's count and sum of valid values come from one ``np.bincount`` each (the values added
in record order, as :func:`.agreement.mean_score` adds them), and the ensemble's own columns are
registered from the same arrays, so no later stage reads them back from the records.  The records
themselves (:class:`EnsembleRecords`) are built only when something reads them as records, which
no statistic does: 183,600 dicts at 765 items x 20 candidates x 3 repeats.  They are the ones the
record walk makes: the same values, the same keys in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import is_not, itemgetter
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


class EnsembleRecords(list):
    """The mean ensemble's records as a list whose dicts are built the first time anything reads
    the list as records (iterates, indexes, compares, copies or changes it): until then it holds
    the records' fields as lists (``fields``: key -> each record's value; ``averaged`` True where
    the record says ``averaged``; ``repeat`` kept where ``carries`` says, every record without
    it), its length, and lends its fields to :func:`.columns.read`, so every stage that reads the
    ensemble's columns builds no dict.  The dicts built are those of the record walk, keys in its
    order: model, judge, index, task, category, kind, order, score, vfs, vfs_ref, [averaged], ok,
    error_kind, judges, length_diff, [repeat]."""

    def __init__(self, fields: dict[str, list[Any]], carries: list[bool] | None):
        super().__init__()
        self.built = False
        self._fields, self._carries, self._n = fields, carries, len(fields["model"])
        self._columns: Columns | None = None

    def __len__(self) -> int:
        return list.__len__(self) if self.built else self._n

    def _build(self) -> None:
        if self.built:
            return
        f = self._fields
        out = [{"model": m, "judge": ENSEMBLE_JUDGE, "index": ix, "task": t, "category": c, "kind": k, "order": o,
                "score": s, "vfs": v, "vfs_ref": vr, "averaged": True, "ok": g_ok, "error_kind": e, "judges": nj,
                "length_diff": d} if av else
               {"model": m, "judge": ENSEMBLE_JUDGE, "index": ix, "task": t, "category": c, "kind": k, "order": o,
                "score": s, "vfs": v, "vfs_ref": vr, "ok": g_ok, "error_kind": e, "judges": nj, "length_diff": d}
               for m, ix, t, c, k, o, s, v, vr, av, g_ok, e, nj, d
               in zip(f["model"], f["index"], f["task"], f["category"], f["kind"], f["order"], f["score"], f["vfs"],
                      f["vfs_ref"], f["averaged"], f["ok"], f["error_kind"], f["judges"], f["length_diff"])]
        carries = self._carries
        for k, (rec, rp) in enumerate(zip(out, f["repeat"])):  # "repeat" last
            if carries is None or carries[k]:
                rec["repeat"] = rp
        list.extend(self, out)
        self.built = True
        self._fields = {}
        if self._columns is not None:  # the registered columns: now of these dicts
            self._columns.first, self._columns.last = (out[0], out[-1]) if out else (None, None)

    def field_values(self, name: str, default: Any = None) -> list[Any] | None:
        """``r.get(name, default)`` of every record, from the fields (None once the dicts are built)."""
        if self.built:
            return None
        f, n = self._fields, self._n
        if name == "judge":
            return [ENSEMBLE_JUDGE] * n
        if name == "averaged":
            return [True if a else default for a in f["averaged"]]
        if name == "repeat" and self._carries is not None:
            return [r if c else default for r, c in zip(f["repeat"], self._carries)]
        return list(f[name]) if name in f else [default] * n

    def registered(self, col: Columns) -> None:
        """``col`` (:func:`.columns.columns` of this list) gets its first and last record once they are built."""
        self._columns = col

    def taken(self, take) -> "EnsembleRecords":
        """A new list of the records ``take`` picks (``take``: a list of values -> the values picked)."""
        return EnsembleRecords({k: take(v) for k, v in self._fields.items()},
                               None if self._carries is None else take(self._carries))

    def __radd__(self, other: Any) -> Any:  # a plain list + this one: list's + would read this storage as it is
        if not isinstance(other, list):
            return NotImplemented
        self._build()
        return list.__add__(other, self)

    def __reduce__(self):  # a copy or a pickle is a plain list of the dicts
        return list, (list(self),)


def _built_first(name: str):
    method = getattr(list, name)

    def call(self, *args, **kwargs):
        for x in (self, *args):  # list's own methods read another such list's storage directly
            if isinstance(x, EnsembleRecords):
                x._build()
        return method(self, *args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    return call


for _name in ("__getitem__", "__setitem__", "__delitem__", "__iter__", "__reversed__", "__contains__", "__eq__",
              "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__iadd__", "__mul__", "__rmul__",
              "__imul__", "__repr__", "append", "extend", "insert", "pop", "remove", "clear", "copy", "count",
              "index", "reverse", "sort"):
    setattr(EnsembleRecords, _name, _built_first(_name))


def _valid_values(col: Columns, sel: np.ndarray, is_pw: np.ndarray, at_sel):
    """The values the means take, at the records ``sel`` (``is_pw``: which are pairwise): (which
    scores, their values; which VFS values, their values; which baselines, their values).  A score
    is taken where it is not None (float() of it, a bool as 0/1, as agreement._valid takes it); a VFS
    value where it is a number (not None, text or a bool); a baseline where its VFS value is taken
    and it is not None.

    With verdicts and VFS values as the pipelines write them (integers, None, :data:`NO_VFS`), these
    are the records' checked columns (:attr:`.Columns.score`, ``vfs``, ``vfs_ref``), which every
    judge's records then take as their share (:func:`.columns.subset`) instead of reading again."""
    scores, vraw, rraw = col.raw_score, col.raw("vfs"), col.raw("vfs_ref")
    plain = (col.types("score") <= {int, type(None)} and col.types("vfs_ref") <= {int, type(None)}
             and col.types("vfs") <= {int, str, type(None)})
    if plain and str in col.types("vfs"):  # text only as NO_VFS (== on int, str and None is the test)
        plain = list(map(type, vraw)).count(str) == vraw.count(NO_VFS)
    if plain:
        try:
            s = col.score[sel]
        except ValueError:  # a verdict out of range: the mean takes it, the check refuses it
            s = None
        if s is not None:
            v, r = col.vfs[sel], col.vfs_ref[sel]
            has, vnum = is_pw & ~np.isnan(s), ~is_pw & ~np.isnan(v)
            return has, s, vnum, v, vnum & ~np.isnan(r), r
    scores, vraw, rraw = at_sel(scores), at_sel(vraw), at_sel(rraw)
    has = _not_none(scores) & is_pw
    vnum = _numbers(vraw) & ~is_pw
    rnum = vnum & _not_none(rraw)
    return has, floats(scores, has), vnum, floats(vraw, vnum), rnum, floats(rraw, rnum)


def mean_ensemble(records: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`.pairwise.ensemble_records` with the mean for both rules: the same records in the
    same order (an :class:`EnsembleRecords`, whose dicts are built when first read as records),
    and their columns registered (:func:`.columns.columns` of the returned list is them)."""
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

    has, values, vnum, vvalues, rnum, rvalues = _valid_values(col, sel, is_pw, at_sel)
    n_score, score = _means(group, has, values, G)
    n_vfs, vfs = _means(group, vnum, vvalues, G)
    n_ref, ref = _means(group, rnum, rvalues, G)

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
    try:  # "repeat", where the group's first record has one
        list(map(itemgetter("repeat"), firsts))
        carries = None
    except KeyError:
        carries = ["repeat" in r for r in firsts]
    out = EnsembleRecords({"model": models, "index": indexes, "task": tasks, "category": categories, "kind": kinds,
                           "order": orders.tolist(), "score": score_list, "vfs": vfs_list, "vfs_ref": ref_list,
                           "averaged": averaged.tolist(), "ok": ok.tolist(), "error_kind": error_kinds,
                           "judges": judges.tolist(), "length_diff": length_diffs, "repeat": repeats.tolist()},
                          carries)

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

