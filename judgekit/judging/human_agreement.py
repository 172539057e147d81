"""Agreement of each judge (and a panel's ensemble) with human labels, for any pairwise or rubric
benchmark: Cohen's kappa (unweighted, linear, quadratic), Spearman's rho, Kendall's tau-b, and
Creation-MMBench Table 4's MAE and consistency, each with a percentile bootstrap interval over
items (consistency, a share: Wilson's interval on the effective count of units,
:func:`_consistency_interval`) and the number of pairs beside it.

A *unit* is what a human labelled: a (candidate, item), or a (candidate, item, order) when the
labels file has an ``order`` column.  J is the judge's value for a unit: the mean of its valid
scores there (both orders pooled for a (candidate, item) unit, as Creation-MMBench's dual
evaluation pools them); P is the mean of the unit's human labels.  A pairwise score is the
candidate's, -2..+2 (positive: the candidate is better than the baseline); a rubric score is on
the rubric's scale.

Every figure is a function of the contingency table T[a, b] (how many units have the a-th
distinct J and the b-th distinct P), so a bootstrap resample is a reweighted table and every
figure of every resample comes from a few array operations (:func:`table_figures`):

* MAE = sum T |J - P| / n; consistency = 100 sum T [|J - P| <= 1] / n (Table 4's Eqs. 1 and 2);
* Cohen's kappa = 1 - sum w O / sum w E over the categories (J and P rounded to the nearest
  whole number, halves away from zero), O the observed joint shares and E the product of the
  margins; w = [i != j] (unweighted), |i - j| (linear), (i - j)^2 (quadratic);
* Spearman's rho: Pearson's correlation of the mid-ranks (ties share their mean rank);
* Kendall's tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)), C and D the concordant and discordant
  pairs, n0 = n(n-1)/2, n1 and n2 the pairs tied in J and in P.

A figure with no defined value (no pair, no spread in J or P, chance agreement of 1) is None.
The bootstrap resamples (candidate, item) clusters (a unit's orders together), one stream per
candidate row (and one for the pooled row) shared by every judge, so the judges are compared on
the same resampled items; a resample where a figure is undefined is left out of its percentiles.
The tables, their figures and the bootstrap of every row at once are :mod:`.human_tables`'s; this
module reads the labels and the judges' values (from the records' shared columns).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ..config import STRICT_CONFIG
from ..errors import DataError
from ..report.doc import Table
from .human_tables import ALL, FIGURES, Valued, agreement_table_rows, table_figures
from .intervals import shown
from .uncertainty import IntervalOptions

__all__ = ["HumanLabelOptions", "HumanLabels", "load_human_labels", "labels_from_ratings", "unit_scores",
           "unit_values", "FIGURES", "table_figures", "agreement_rows", "agreement_display", "ALL", "NOTE",
           "add_human_agreement", "report_tables"]

#: what the printed table and the report say the figures are
NOTE = ("each judge's value per labelled unit against the mean human label: Cohen's kappa (quadratic weights), "
        "Spearman's rho, Kendall's tau-b, MAE and consistency % (|judge - human| <= 1, Creation-MMBench's "
        "Table 4); [low, high]: percentile bootstrap interval over items (consistency: Wilson's on the effective "
        "count of units); n: labelled units with a judge value, "
        "marked ! when they come from too few items for the interval")
#: the columns naming a unit's item, candidate and order, with the names also accepted
_ITEM = ("item", "index", "id")
_CANDIDATE = ("candidate", "model")
#: pairwise verdicts for the candidate, by token; A/B tokens name slots (the candidate is B in order 0)
_WORDS = {"much better": 2, "better": 1, "tie": 0, "worse": -1, "much worse": -2}
_SLOTS = {"b>>a": 2, "b>a": 1, "a=b": 0, "b=a": 0, "a<b": 1, "a<<b": 2, "a>b": -1, "a>>b": -2}


class HumanLabelOptions(BaseModel):
    """``[options]`` for the human-labels file (the pairwise, rubric and Creation-MMBench benchmarks)."""

    model_config = STRICT_CONFIG

    human_labels: str | None = Field(
        None, description="a CSV, TSV or JSON-lines file of human labels (columns item, candidate, optional order, "
                          "score or verdict): each judge's Cohen's kappa, Spearman, Kendall, MAE and consistency "
                          "against them, with intervals")


@dataclass(frozen=True)
class HumanLabels:
    """The labels of a file: ``(candidate or "", item, order or None) -> [labels]`` ("" : every
    candidate; several labels of a unit are several raters, averaged)."""

    path: str
    values: dict[tuple[str, str, int | None], list[float]]

    @property
    def by_order(self) -> bool:
        return any(k[2] is not None for k in self.values)

    def reference(self) -> dict[tuple[str, str, int | None], float]:
        """P: the mean label of each unit."""
        return {k: sum(v) / len(v) for k, v in self.values.items() if v}


def labels_from_ratings(path: str, ratings: Mapping[tuple[str, str], Mapping[str, float]]) -> HumanLabels:
    """Creation-MMBench's ratings table (``(model, index) -> {rater: rating}``) as labels."""
    return HumanLabels(path, {(m, i, None): list(v.values()) for (m, i), v in ratings.items() if v})


# -- reading the file ------------------------------------------------------------------------------------
def _rows(p: Path):
    """(row number, {column: text}) of a CSV, TSV or JSON-lines file."""
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl"):
        raise DataError(str(p), f"a human-labels file is .csv, .tsv or .jsonl, not {suffix or 'no suffix'!r}")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(str(p), "not UTF-8 text") from None
    except OSError as e:
        raise DataError(str(p), f"cannot read: {e.strerror or e}") from None
    if suffix == ".jsonl":
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(str(p), f"not JSON: {e.msg}", row=n) from None
            if not isinstance(obj, dict):
                raise DataError(str(p), "the line is not a JSON object", row=n)
            yield n, {str(k): "" if v is None else str(v) for k, v in obj.items()}
        return
    reader = csv.DictReader(text.splitlines(), delimiter="\t" if suffix == ".tsv" else ",")
    try:
        for n, row in enumerate(reader, start=1):
            if None in row:
                raise DataError(str(p), "more cells than columns", row=n)
            yield n, {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
    except csv.Error as e:
        raise DataError(str(p), f"malformed: {e}", row=reader.line_num) from None


def _pick(row: Mapping[str, str], names: Sequence[str]) -> str | None:
    return next((n for n in names if n in row), None)


def _value(p: Path, n: int, row: Mapping[str, str], kind: str, scale: tuple[float, float]) -> tuple[float, str]:
    present = [c for c in ("score", "verdict") if c in row]
    if not present:
        raise DataError(str(p), "no 'score' or 'verdict' column", row=n)
    column = next((c for c in present if row[c].strip()), None)
    if column is None:
        raise DataError(str(p), "empty label", row=n, column=present[0])
    cell = row[column].strip()
    if column == "verdict" and kind == "pairwise":
        token = cell.lower().replace(" ", "") if ">" in cell or "<" in cell or "=" in cell else cell.lower()
        if token in _WORDS:
            return float(_WORDS[token]), column
        if token in _SLOTS:
            order = row.get("order", "").strip()
            return float(_SLOTS[token] if order in ("", "0") else -_SLOTS[token]), column
        known = ", ".join([*_WORDS, "A>>B", "A>B", "A=B", "B>A", "B>>A"])
        raise DataError(str(p), f"verdict {cell!r} is none of {known}", row=n, column=column)
    try:
        v = float(cell)
    except ValueError:
        raise DataError(str(p), f"{column} {cell!r} is not a number", row=n, column=column) from None
    if not math.isfinite(v) or not scale[0] <= v <= scale[1]:
        raise DataError(str(p), f"{column} {cell} outside {scale[0]:g}..{scale[1]:g}", row=n, column=column)
    return v, column


def load_human_labels(path: str | Path, *, kind: Literal["pairwise", "rubric"],
                      scale: tuple[float, float] = (-2.0, 2.0)) -> HumanLabels:
    """Read a human-labels file (see docs/statistics.md, "Agreement with human labels"): one row
    per label with ``item`` (or ``index``/``id``), optional ``candidate`` (or ``model``; blank:
    every candidate), optional ``order`` (pairwise: 0 the baseline as Assistant A, 1 swapped) and
    ``score`` (the candidate's -2..+2, or a rubric score on ``scale``) or, pairwise only,
    ``verdict`` (much better/better/tie/worse/much worse for the candidate, or A>>B..B>>A where the
    candidate is B unless order is 1).  Any other column (a rater's name) is kept out.  Bad input
    raises :class:`~judgekit.errors.DataError` naming the file, the row and the column."""
    p = Path(path)
    if not p.is_file():
        raise DataError(str(p), "no such file" if not p.exists() else "not a file")
    values: dict[tuple[str, str, int | None], list[float]] = {}
    for n, row in _rows(p):
        item_col = _pick(row, _ITEM)
        if item_col is None or not row[item_col]:
            raise DataError(str(p), "no item (a column 'item', 'index' or 'id')", row=n, column=item_col or "item")
        cand_col = _pick(row, _CANDIDATE)
        order: int | None = None
        if row.get("order", "") != "":
            if kind != "pairwise":
                raise DataError(str(p), "a rubric judgment has no order", row=n, column="order")
            if row["order"] not in ("0", "1"):
                raise DataError(str(p), f"order {row['order']!r} is neither 0 nor 1", row=n, column="order")
            order = int(row["order"])
        v, _ = _value(p, n, row, kind, scale)
        values.setdefault((row[cand_col] if cand_col else "", row[item_col], order), []).append(v)
    if not values:
        raise DataError(str(p), "no labels")
    orders = {k[2] is None for k in values}
    if len(orders) > 1:
        raise DataError(str(p), "some rows have an order and some not: give every row's order or none",
                        column="order")
    return HumanLabels(str(p), values)


# -- the judges' values ----------------------------------------------------------------------------------
def unit_scores(records: Sequence[Mapping[str, Any]], kinds: Sequence[str] = ("pairwise",)
                ) -> dict[tuple[str, str], dict[int, list[float]]]:
    """(model, index) -> order -> the valid scores of the records of ``kinds`` (order 0 when a
    record has none): what Table 4 and the human agreement read of a judge."""
    out: dict[tuple[str, str], dict[int, list[float]]] = {}
    for r in records:
        if r.get("kind", "pairwise") in kinds and r.get("score") is not None:
            key = (str(r["model"]), str(r["index"]))
            out.setdefault(key, {}).setdefault(int(r.get("order") or 0), []).append(float(r["score"]))
    return out


def unit_values(records: Sequence[Mapping[str, Any]], by_order: bool, kinds: Sequence[str] = ("pairwise",)
                ) -> dict[tuple[str, str, int | None], float]:
    """J per unit: the mean valid score of a (model, index) over its orders, or per order."""
    if isinstance(records, list):
        return _valued(records, by_order, kinds).as_dict()
    out: dict[tuple[str, str, int | None], float] = {}
    for (model, index), per in unit_scores(records, kinds).items():
        if by_order:
            for order, scores in per.items():
                out[(model, index, order)] = sum(scores) / len(scores)
        else:
            every = [s for order in sorted(per) for s in per[order]]
            out[(model, index, None)] = sum(every) / len(every)
    return out


def _valued(records: Sequence[Mapping[str, Any]], by_order: bool, kinds: Sequence[str]) -> Valued:
    """:func:`unit_values` as arrays (:class:`~.human_tables.Valued`): from the records' shared
    columns for a list (:func:`_unit_values_columns`), else by walking them."""
    if isinstance(records, list):
        return _unit_values_columns(records, by_order, kinds)
    return Valued.from_dict(unit_values(records, by_order, kinds))


def _scores(col: Any, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the positions among ``pos`` whose raw score is not None, ``float()`` of those scores), from
    the columns' ``float_score`` (a pairwise record's ``float(score)``, NaN for None) where it
    answers, else from the raw scores themselves (a score float() refuses raises, as it did)."""
    raw = col.raw_score
    score = np.full(pos.size, np.nan)
    pw = col.is_pairwise[pos]
    score[pw] = col.float_score[pos[pw]]
    ask = np.flatnonzero(np.isnan(score))  # None, another kind, or a score float_score left out
    got = [(k, raw[i]) for k, i in zip(ask.tolist(), pos[ask].tolist()) if raw[i] is not None]
    valid = np.ones(pos.size, dtype=bool)
    valid[ask] = False
    for k, s in got:
        score[k] = float(s)
        valid[k] = True
    return pos[valid], score[valid]


def _orders(col: Any, pos: np.ndarray) -> np.ndarray:
    """``int(r.get("order") or 0)`` of the records at ``pos``: the columns' ``int(r.get("order",
    0))`` when every record has one (the same for any order int() takes), else record by record."""
    try:
        return col.order[pos].astype(np.int64)
    except (TypeError, ValueError):  # an order of None, or one int() refuses (outside pos, maybe)
        rorder = col.raw("order")
        return np.array([int(rorder[i] or 0) for i in pos.tolist()], dtype=np.int64)


def _unit_values_columns(records: list, by_order: bool, kinds: Sequence[str]) -> Valued:
    """:func:`unit_values` from the records' shared columns (:mod:`judgekit.judging.columns`): the
    same units in the same order, each mean the same sum (in the same order: by order, then record
    order) over the same count."""
    from .columns import columns, first_order

    col = columns(records)
    if col.n == 0:
        return Valued.from_dict({})
    # a record without a kind counts as "pairwise"; a kind that is no string is never one of kinds
    code, distinct = col.kind_code
    missing = ~col.has_kind
    ok = np.array([isinstance(k, str) and k in kinds for k in distinct], dtype=bool)
    wanted = np.flatnonzero(np.where(missing, "pairwise" in kinds, ok[code]))
    pos, score = _scores(col, wanted)
    if pos.size == 0:
        return Valued.from_dict({})
    (mc, mnames), (ic, inames) = col.model, col.index
    order = _orders(col, pos)
    unit, ufirst = first_order(mc[pos].astype(np.int64) * len(inames) + ic[pos])
    um, ui = mc[pos[ufirst]], ic[pos[ufirst]]
    if by_order:
        cell, cfirst = first_order(np.column_stack([unit, order]))
        total = np.bincount(cell, weights=score, minlength=cfirst.size)
        count = np.bincount(cell, minlength=cfirst.size)
        cunit = unit[cfirst]
        seq = np.lexsort((cfirst, cunit))  # units in order, each one's orders as first seen
        ocode, orders = np.unique(order[cfirst[seq]], return_inverse=True)[::-1]
        return Valued(mnames, inames, orders.tolist(), um[cunit[seq]], ui[cunit[seq]], ocode.reshape(-1),
                      total[seq] / count[seq])
    # each unit's scores by order, then record order (one stable sort of a combined key where it fits)
    low, span = int(order.min()), int(order.max()) - int(order.min()) + 1
    seq = (np.argsort(unit * span + (order - low), kind="stable") if span * ufirst.size < 2 ** 62
           else np.lexsort((np.arange(pos.size), order, unit)))
    total = np.bincount(unit[seq], weights=score[seq], minlength=ufirst.size)
    count = np.bincount(unit, minlength=ufirst.size)
    return Valued(mnames, inames, [None], um, ui, np.zeros(ufirst.size, dtype=np.int64), total / count)


# -- rows per judge --------------------------------------------------------------------------------------
def agreement_rows(values_by_judge: Mapping[str, Mapping[tuple[str, str, int | None], float]],
                   labels: HumanLabels, candidates: Sequence[str], options: IntervalOptions, *,
                   tol: float = 1.0) -> list[dict[str, Any]]:
    """Rows {judge, model, n, items, <figure>, <figure>_ci_low, <figure>_ci_high...} per judge (in
    order; ``values_by_judge``: J per unit, :func:`unit_values`) for each candidate with a labelled
    unit (``candidates`` order) and pooled (``model`` = ``"all"``).  ``n``: units with both J and
    P; ``items``: their (candidate, item) clusters; ``small_n``: fewer items than
    ``options.min_items_for_interval`` or the figures' own thresholds (too few for the
    intervals, :mod:`.honest`, :data:`~judgekit.judging.uncertainty.FIGURE_MIN_ITEMS`).  The
    figures come from :mod:`.human_tables`, every (judge, candidate) row's bootstrap at once."""
    valued = {j: Valued.from_dict(per) for j, per in values_by_judge.items()}
    return agreement_table_rows(valued, labels.reference(), list(labels.values), candidates, options, tol)[0]


def agreement_display(r: Mapping[str, Any]) -> dict[str, Any]:
    """A row as printed: quadratic kappa, Spearman, Kendall, MAE and consistency with intervals."""
    def fig(name: str, digits: int = 2) -> str:
        return shown(r.get(name), r.get(f"{name}_ci_low"), r.get(f"{name}_ci_high"), digits)
    n = f"{r['n']}!" if r.get("small_n") else r["n"]
    return {"judge": r["judge"], "model": r["model"], "n": n, "kappa (quad.)": fig("kappa_quadratic"),
            "kappa": fig("kappa"), "Spearman": fig("spearman"), "Kendall": fig("kendall"), "MAE": fig("mae"),
            "consistency %": fig("consistency", 1)}


def add_human_agreement(summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]],
                        more: list[tuple[str, list[dict[str, Any]]]],
                        everyone: Mapping[str, Sequence[Mapping[str, Any]]], labels: HumanLabels,
                        candidates: Sequence[str], options: IntervalOptions, *,
                        kinds: Sequence[str] = ("pairwise",), scale: str = "-2..+2") -> None:
    """``summary["human_agreement"]`` ({file, units, scale, figures, note, rows}), the
    ``human_agreement`` CSV table and the printed table, from every judge's records (and the
    ensemble's)."""
    valued = {j: _valued(records, labels.by_order, kinds) for j, records in everyone.items()}
    rows, unmatched = agreement_table_rows(valued, labels.reference(), list(labels.values), candidates, options)
    summary["human_agreement"] = {
        "file": labels.path, "unit": "(candidate, item, order)" if labels.by_order else "(candidate, item)",
        "scale": scale, "figures": list(FIGURES), "note": NOTE,
        "unmatched_units": unmatched,  # labelled units no judge has a valid score for (a typo'd id?)
        "rows": rows}
    tables["human_agreement"] = rows
    what = (f"[{options.interval_level:.0%} bootstrap interval over items]" if options.bootstrap_samples
            else "(no intervals)")
    more.append((f"Agreement with human labels: each judge's value against the mean label, {what}",
                 [agreement_display(r) for r in rows]))


def report_tables(summary: Mapping[str, Any]) -> list[Table]:
    """The report's table of the agreement with human labels (none without labels)."""
    got = summary.get("human_agreement")
    if not got:
        return []
    return [Table("Agreement with human labels", [agreement_display(r) for r in got["rows"]],
                  note=f"{NOTE}; unit: {got['unit']}; labels: {Path(got['file']).name}")]
