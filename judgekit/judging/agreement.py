"""A judge panel's ensemble and agreement: pure functions over one value per (item, judge).

Ensembles (named in the results, so a reader knows what the ensemble column is):

* :func:`majority` (``"majority"``), for integer verdicts and right/wrong: the value most judges
  gave; when several are given equally often, the median of the valid values, rounded toward 0
  (so +1 against -1 is a tie verdict, +1 against +2 is +1, right against wrong is wrong).
  Failed judgments (None) take no part.
* :func:`mean_score` (``"mean"``), for scores: the mean of the valid values.

Agreement is Krippendorff's alpha, computed by the ``krippendorff`` package (a maintained
implementation: NumPy, every level of measurement, missing values), over the items that at
least two judges rated; the raw share of items where every valid judgment is the same is
reported beside it.

From judgment records to those values, shared by every panel (pairwise verdicts, rubric and MMIE
scores, GuessBench's right/wrong extractions):

* :func:`ratings`: item -> judge -> value, from (judge, record) pairs;
* :func:`agreement_rows`: one agreement record per candidate (or system), then pooled;
* :func:`by_item` and :func:`panel_mean`: a score ensemble's records (the judges' records of one
  item, and the mean of their valid scores);
* :func:`ensemble_summary`: ``summary["ensemble"]``, the rule by name, what it does and the rows.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

__all__ = ["ENSEMBLE_RULES", "POOLED", "majority", "mean_score", "krippendorff_alpha", "full_agreement", "agreement",
           "ratings", "agreement_rows", "by_item", "panel_mean", "ensemble_summary"]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Ratings = Mapping[Hashable, Mapping[str, float | None]]

#: the candidate (``model``) or system of a figure pooled over every candidate's items
POOLED = "all"

#: the ensemble rules by name, as they appear in summary.json
ENSEMBLE_RULES = {
    "majority": "the verdict most judges gave; with equal counts, the median verdict rounded toward 0",
    "mean": "the mean of the judges' valid scores",
}


def _valid(values: Sequence[float | None]) -> list[float]:
    out = []
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            v = int(v)
        out.append(v)
    return out


def majority(values: Sequence[int | bool | None]) -> int | None:
    """The most common valid value; with equal counts, the median of the valid values rounded
    toward 0.  None if none is valid.  Booleans count as 0/1 and come back as 0/1."""
    valid = _valid(values)
    if not valid:
        return None
    counts = Counter(valid)
    top = max(counts.values())
    tied = [v for v, c in counts.items() if c == top]
    if len(tied) == 1:
        return tied[0]
    return math.trunc(statistics.median(valid))


def mean_score(values: Sequence[float | None]) -> float | None:
    """The mean of the valid values; None if none valid."""
    valid = _valid(values)
    return sum(valid) / len(valid) if valid else None


def _matrix(ratings: Mapping[Hashable, Mapping[str, float | None]], judges: Sequence[str]) -> np.ndarray:
    nan = float("nan")
    m = np.full((len(judges), len(ratings)), np.nan)
    for j, judge in enumerate(judges):
        m[j] = [nan if v is None else float(v) for v in (per.get(judge) for per in ratings.values())]
    return m


def krippendorff_alpha(ratings: Mapping[Hashable, Mapping[str, float | None]], judges: Sequence[str],
                       level: Level = "interval") -> float | None:
    """Krippendorff's alpha of ``judges`` over ``ratings`` (item -> judge -> value, None or a
    missing judge = no rating).  None when it is undefined: fewer than two judges, no item rated
    by two, or every rating the same value (no variation to agree on)."""
    if len(judges) < 2:
        return None
    return matrix_alpha(_matrix(ratings, judges), level)


def matrix_alpha(m: np.ndarray, level: Level = "interval") -> float | None:
    """:func:`krippendorff_alpha` of a judges x items matrix (NaN: no rating), two or more judges."""
    import krippendorff

    pairable = np.sum(~np.isnan(m), axis=0) >= 2
    m = m[:, pairable]
    if m.shape[1] == 0:
        return None
    values = m[~np.isnan(m)]
    if np.unique(values).size < 2:
        return None
    a = krippendorff.alpha(reliability_data=m, level_of_measurement=level)
    return None if a is None or not np.isfinite(a) else float(a)


def full_agreement(ratings: Mapping[Hashable, Mapping[str, float | None]], judges: Sequence[str]) -> float | None:
    """The share (0..1) of items rated by two or more judges on which every rating is equal."""
    same = total = 0
    for per in ratings.values():
        vs = [per.get(j) for j in judges]
        vs = [v for v in vs if v is not None]
        if len(vs) >= 2:
            total += 1
            same += all(v == vs[0] for v in vs)
    return same / total if total else None


def agreement(ratings: Mapping[Hashable, Mapping[str, float | None]], judges: Sequence[str],
              level: Level) -> dict:
    """The agreement record of summary.json: alpha, its level, the full-agreement share and how
    many items two or more judges rated."""
    pairable = sum(1 for per in ratings.values() if sum(per.get(j) is not None for j in judges) >= 2)
    return {"judges": list(judges), "krippendorff_alpha": krippendorff_alpha(ratings, judges, level),
            "level": level, "full_agreement": full_agreement(ratings, judges), "items": pairable}


def ratings(judged: Iterable[tuple[str, Mapping[str, Any]]], item: Callable[[Mapping[str, Any]], Hashable], *,
            value: str | Callable[[Mapping[str, Any]], Any] = "score",
            keep: Callable[[Mapping[str, Any]], bool] | None = None) -> dict[Hashable, dict[str, Any]]:
    """item -> judge -> ``record[value]`` (or ``value(record)``) over ``(judge, record)`` pairs
    (items in the order first seen; a later record of the same judge and item replaces an earlier
    one), the records ``keep`` refuses left out.  The item key's first element names the candidate (or system) an
    item belongs to, which :func:`agreement_rows` groups by."""
    read = value if callable(value) else (lambda r: r.get(value))
    out: dict[Hashable, dict[str, Any]] = {}
    for judge, r in judged:
        if keep is None or keep(r):
            out.setdefault(item(r), {})[judge] = read(r)
    return out


def agreement_rows(rated: Ratings, judges: Sequence[str], level: Level, *, quantity: str,
                   groups: Sequence[str], name: str = "model", keep_empty: bool = False) -> list[dict[str, Any]]:
    """``{"quantity", name, **agreement}`` for each of ``groups`` (the items whose key starts with
    it), then :data:`POOLED` (every item); a group with no item is left out unless ``keep_empty``."""
    split: dict[Any, dict] = {}  # one pass: each group's items, in the order of ``rated``
    for k, v in rated.items():
        part = split.get(k[0])
        if part is None:
            part = split[k[0]] = {}
        part[k] = v
    out = []
    for group in [*groups, POOLED]:
        sel = rated if group == POOLED else split.get(group, {})
        if sel or keep_empty:
            out.append({"quantity": quantity, name: group, **agreement(sel, judges, level)})
    return out


def by_item(records: Iterable[Mapping[str, Any]], item: Callable[[Mapping[str, Any]], Hashable]
            ) -> dict[Hashable, list[Mapping[str, Any]]]:
    """item -> the panel's records of it, in the order first seen (an ensemble's records)."""
    out: dict[Hashable, list[Mapping[str, Any]]] = {}
    for r in records:
        out.setdefault(item(r), []).append(r)
    return out


def panel_mean(records: Sequence[Mapping[str, Any]], judges: Sequence[str] | None = None,
               value: str = "score") -> float | None:
    """The mean of the valid ``value`` of one item's records (:func:`mean_score`): in the records'
    order, or with ``judges`` in the panel's order (each judge's last record)."""
    if judges is None:
        return mean_score([r[value] for r in records])
    per = {r["judge"]: r[value] for r in records}
    return mean_score([per.get(j) for j in judges])


def ensemble_summary(rule: str, results: list[dict[str, Any]], *, description: str | None = None,
                     rules: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``summary["ensemble"]``: the rule by name (and, where quantities differ, each one's), what
    it does (:data:`ENSEMBLE_RULES`' text unless ``description``) and the ensemble's rows."""
    out: dict[str, Any] = {"rule": rule}
    if rules is not None:
        out["rules"] = dict(rules)
    out["description"] = ENSEMBLE_RULES[rule] if description is None else description
    out["results"] = results
    return out
