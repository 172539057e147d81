"""Pairwise judges judged (Creation-MMBench's and the generic pairwise benchmark's): their agreement
and their behaviour, from the judgment records.

* Agreement (a panel): Krippendorff's alpha between the judges on the pairwise verdict (ordinal,
  the candidate's -2..+2 score) and on the candidate's VFS (interval, 0-10), rated per
  (candidate, item, order, repeat), for each candidate and pooled over candidates.
* Behaviour (every judge, and a panel's ensemble): :func:`judgekit.judging.behaviour.
  pairwise_behaviour` on each candidate's pairwise judgments and pooled over candidates (swap
  consistency, first-slot preference, ties, Spearman's rho of the verdict with the answers'
  length difference as the judge saw them), with the judge's parse-failure rate on the VFS
  judgments beside it.  Judgments with no judge call (``candidate_failed``) take no part: they
  say nothing about the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from .agreement import POOLED
from .agreement_table import coded_agreement_rows, rating_matrix
from .behaviour import pairwise_behaviour
from .behaviour_table import judge_behaviour
from .columns import codes, columns, first_order
from .keys import packed
from .pairwise import NO_VFS

__all__ = ["ALL", "QUANTITIES", "Rated", "agreement_records", "behaviour_row", "behaviour_rows", "candidate_codes",
           "rated", "rated_matrix"]

#: the ``model`` of a figure pooled over candidates
ALL = POOLED

#: what the judges rate: (quantity name, judgment kind, field, Krippendorff level)
QUANTITIES = (("pairwise verdict", "pairwise", "score", "ordinal"), ("vfs", "vfs", "vfs", "interval"))

_NO_CALL = "candidate_failed"


def _value(v: Any) -> float | None:
    return None if v is None or isinstance(v, str) and v == NO_VFS else v


def _rated_item(r: Mapping[str, Any]) -> tuple[str, str, int, int]:
    return str(r["model"]), str(r["index"]), int(r.get("order", 0)), int(r.get("repeat", 0))


class Rated(NamedTuple):
    """A panel's ratings of one quantity: ``matrix`` (judges x units, NaN: no rating) and each
    unit's (candidate, item, order, repeat) (:func:`_rated_item`), the candidate and the item as
    codes into ``models`` and ``indexes``."""

    matrix: np.ndarray
    model: np.ndarray
    index: np.ndarray
    order: np.ndarray
    repeat: np.ndarray
    models: list[str]
    indexes: list[str]

    def units(self) -> list[tuple[str, str, int, int]]:
        """Each unit as :func:`_rated_item` gives it."""
        return [(self.models[m], self.indexes[i], o, r) for m, i, o, r in
                zip(self.model.tolist(), self.index.tolist(), self.order.tolist(), self.repeat.tolist())]


def rated_matrix(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]], kind: str, field: str
                 ) -> tuple[np.ndarray, list[tuple[str, str, int, int]]]:
    """:func:`.agreement_table.rating_matrix` of the judges' ``kind`` judgments' ``field`` per
    (candidate, item, order, repeat) (:func:`_rated_item`, :func:`_value`): :func:`rated`'s
    matrix and units."""
    got = rated(records_by_judge, kind, field)
    return got.matrix, got.units()


def rated(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]], kind: str, field: str) -> Rated:
    """:func:`rated_matrix` with the units as arrays; from the records' shared columns
    (:mod:`.columns`) when every judge's records are a list: the same matrix and units (first
    seen over the judges' records in the panel's order; a judge's last record of a unit counts)."""
    lists = list(records_by_judge.values())
    if not all(isinstance(r, list) for r in lists):
        return _from_units(*rating_matrix(records_by_judge, kind, _rated_item, _value, field))
    cols = tuple(columns(r) for r in lists)
    key = (tuple(id(c) for c in cols), kind, field)
    got = _MATRICES.get(key)
    if got is not None and all(a is b for a, b in zip(got[0], cols)):
        return got[1]  # the agreement records and the honesty pass read the same matrix
    out = _rated_matrix(lists, kind, field)
    while len(_MATRICES) >= 4:
        _MATRICES.pop(next(iter(_MATRICES)))
    _MATRICES[key] = (cols, out)
    return out


#: the last few :func:`rated` results (the same panel's columns, kind and field give the same
#: matrix; read-only for their callers)
_MATRICES: dict[tuple, tuple] = {}


def _from_units(m: np.ndarray, units: list[tuple[str, str, int, int]]) -> Rated:
    model, models = codes([u[0] for u in units])
    index, indexes = codes([u[1] for u in units])
    order = np.array([u[2] for u in units], dtype=np.intp)
    repeat = np.array([u[3] for u in units], dtype=np.intp)
    return Rated(m, model, index, order, repeat, models, indexes)


def _rated_matrix(lists: list[list], kind: str, field: str) -> Rated:
    models: dict[str, int] = {}
    indexes: dict[str, int] = {}
    parts = []
    for records in lists:
        col = columns(records)
        sel = np.flatnonzero(col.kind_is(kind)) if col.n else np.zeros(0, dtype=np.intp)
        if sel.size == 0:
            parts.append(((np.zeros(0, dtype=np.int64),) * 4, np.zeros(0)))
            continue
        (mc, mn), (ic, inn) = col.model, col.index
        gm = np.array([models.setdefault(x, len(models)) for x in mn], dtype=np.int64)
        gi = np.array([indexes.setdefault(x, len(indexes)) for x in inn], dtype=np.int64)
        raw = col.raw(field)
        if field == "score" and kind == "pairwise":  # float() of each score (a pairwise record's)
            v = col.float_score[sel]
            for i in sel[np.isnan(v)].tolist():  # None, NO_VFS, NaN, or a score float() refuses (raises)
                x = _value(raw[i])
                if x is not None:
                    float(x)
        elif field == "vfs" and kind == "vfs":  # the VFS column: float() of each, NaN for None and NO_VFS
            v = col.vfs[sel]
        else:
            vals = [_value(raw[i]) for i in sel.tolist()]
            v = np.array([np.nan if x is None else float(x) for x in vals], dtype=float)
        parts.append(((gm[mc[sel]], gi[ic[sel]], col.order[sel], col.repeat[sel]), v))
    keys = [np.concatenate([k[c] for k, _ in parts]) if parts else np.zeros(0, dtype=np.int64) for c in range(4)]
    unit, first = first_order(packed(keys))
    m = np.full((len(lists), first.size), np.nan)
    at = 0
    for j, (k, v) in enumerate(parts):
        c = unit[at:at + len(v)]
        at += len(v)
        if c.size:
            c, vv = c[::-1], v[::-1]
            _, last = np.unique(c, return_index=True)  # each unit's last record of the judge
            m[j, c[last]] = vv[last]
    model, index, order, repeat = (k[first].astype(np.intp) for k in keys)
    return Rated(m, model, index, order, repeat, list(models), list(indexes))


def agreement_records(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                      candidates: Sequence[str]) -> list[dict[str, Any]]:
    """Agreement records ({quantity, model, judges, krippendorff_alpha, level, full_agreement,
    items}) per quantity, for each candidate (in ``candidates`` order) then ``"all"``."""
    judges = list(records_by_judge)
    out = []
    for quantity, kind, field, level in QUANTITIES:  # one matrix per quantity (.agreement_table)
        got = rated(records_by_judge, kind, field)
        if got.model.size:
            out += coded_agreement_rows(got.matrix, candidate_codes(got, candidates), judges, level,
                                        quantity=quantity, groups=candidates)
    return out


def candidate_codes(got: Rated, candidates: Sequence[str]) -> np.ndarray:
    """Each unit's candidate's position in ``candidates`` (-1: none of them)."""
    lookup = {c: k for k, c in enumerate(candidates)}
    return np.array([lookup.get(m, -1) for m in got.models], dtype=np.intp)[got.model] if got.models else \
        np.zeros(got.model.size, dtype=np.intp)


def behaviour_row(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The behaviour figures of one judge's records (one candidate's, or several candidates')."""
    pairwise = [{"item": (r["model"], r["index"], r.get("repeat", 0)), "order": r.get("order", 0), "score": r.get("score"),
                 "length_diff": r.get("length_diff")}
                for r in records if r.get("kind") == "pairwise" and r.get("error_kind") != _NO_CALL]
    # a VFS judgment left out (an empty reply, as the reference) is neither a value nor a failure
    vfs = [r for r in records if r.get("kind") == "vfs" and r.get("error_kind") != _NO_CALL
           and not (isinstance(r.get("vfs"), str) and r["vfs"] == NO_VFS)]
    failures = sum(1 for r in vfs if r.get("vfs") is None)
    return {**pairwise_behaviour(pairwise), "vfs_judgments": len(vfs), "vfs_parse_failures": failures,
            "vfs_parse_failure_rate": failures / len(vfs) if vfs else None}


def behaviour_rows(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                   candidates: Sequence[str]) -> list[dict[str, Any]]:
    """``{judge, model, ...figures}`` for every judge (in order) x candidate, then the judge
    pooled over candidates (``model`` = ``"all"``): :func:`behaviour_row`'s figures, from one pass
    over each judge's records (:func:`.behaviour_table.judge_behaviour`)."""
    rows = []
    models = [*candidates, ALL]
    for judge, records in records_by_judge.items():  # one pass over each judge's records
        figures = judge_behaviour(records, [None if m == ALL else m for m in models])
        rows += [{"judge": judge, "model": model, **f} for model, f in zip(models, figures)]
    return rows
