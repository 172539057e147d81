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
from typing import Any

from .agreement import POOLED
from .agreement_table import matrix_agreement_rows, rating_matrix
from .behaviour import pairwise_behaviour
from .behaviour_table import judge_behaviour
from .pairwise import NO_VFS

__all__ = ["ALL", "QUANTITIES", "agreement_records", "behaviour_row", "behaviour_rows"]

#: the ``model`` of a figure pooled over candidates
ALL = POOLED

#: what the judges rate: (quantity name, judgment kind, field, Krippendorff level)
QUANTITIES = (("pairwise verdict", "pairwise", "score", "ordinal"), ("vfs", "vfs", "vfs", "interval"))

_NO_CALL = "candidate_failed"


def _value(v: Any) -> float | None:
    return None if v is None or isinstance(v, str) and v == NO_VFS else v


def _rated_item(r: Mapping[str, Any]) -> tuple[str, str, int, int]:
    return str(r["model"]), str(r["index"]), int(r.get("order", 0)), int(r.get("repeat", 0))


def agreement_records(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                      candidates: Sequence[str]) -> list[dict[str, Any]]:
    """Agreement records ({quantity, model, judges, krippendorff_alpha, level, full_agreement,
    items}) per quantity, for each candidate (in ``candidates`` order) then ``"all"``."""
    judges = list(records_by_judge)
    out = []
    for quantity, kind, field, level in QUANTITIES:  # one matrix per quantity (.agreement_table)
        m, units = rating_matrix(records_by_judge, kind, _rated_item, _value, field)
        if units:
            out += matrix_agreement_rows(m, units, judges, level, quantity=quantity, groups=candidates)
    return out


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
