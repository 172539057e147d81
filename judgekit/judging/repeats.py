"""Judge repeats (``options.judge_repeats = k``): every judgment asked k times, and the spread the
judge's own sampling puts on each figure.

**The requests.**  Repeat 0 is the judgment as it is asked without repeats (the same request, the
same cache entry: a run with ``k = 1`` is the run it was).  Repeat ``r > 0`` is the same request
with ``sample_index = r`` (part of the cache key, so each repeat is its own cache entry and a
resumed run pays for none twice) and the judge's seed, or 0, plus ``r`` (sent where the API takes
a seed: OpenAI's and Gemini's; Anthropic's has none).  A real judge sampled at a temperature above
0 answers a repeated request differently anyway; the seed makes the simulator, whose reply is a
function of the request, do the same, and makes the repeats reproducible where a seed is honoured.
A judge at temperature 0 may give the same reply every time: then the spread is 0, which is
what such a judge's repeats show.

**The spread** (:func:`repeat_spread`): each figure computed on each repeat's judgments alone,
``F_1 .. F_k``; reported are their standard deviation ``sd = sqrt(sum (F_r - mean F)^2 / (k - 1))``
(the between-repeat, judge-induced spread of a one-repeat run's figure) and their range
``max F_r - min F_r``.  The item-sampling interval beside it is the bootstrap over items (all
repeats of an item resampled together).  With ``k = 1`` there is nothing to measure and no column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ..config import STRICT_CONFIG
from ..types import ChatRequest

__all__ = ["RepeatOptions", "repeated", "repeat_of", "SPREAD", "repeat_spread", "add_spread", "repeat_cell"]


class RepeatOptions(BaseModel):
    """``[options]``: how many times each judgment is asked."""

    model_config = STRICT_CONFIG

    judge_repeats: int = Field(1, ge=1, le=100, description="ask every judgment this many times (each repeat its "
                                                            "own cache entry; the figures pool the repeats and show "
                                                            "the spread between them)")


def repeated(req: ChatRequest, k: int) -> list[ChatRequest]:
    """``req`` and its repeats 1 .. k-1 (``sample_index`` r, seed + r); ``[req]`` when k is 1."""
    out = [req]
    for r in range(1, k):
        params = dataclasses.replace(req.params, seed=(req.params.seed or 0) + r)
        out.append(dataclasses.replace(req, params=params, sample_index=r))
    return out


def repeat_of(req: ChatRequest) -> int:
    """The repeat a request is (its ``sample_index``)."""
    return req.sample_index


#: the suffixes of the spread columns of a figure ``F``: ``F_repeat_sd``, ``F_repeat_range``
SPREAD = ("repeat_sd", "repeat_range")


def repeat_spread(records: Iterable[Mapping[str, Any]], sums_of, figures: Mapping[str, tuple[int, int]],
                  levels: Sequence[str], k: int, *, overall_group: str = "overall"
                  ) -> dict[tuple[str, str, str], dict[str, float | None]]:
    """(model, level, group) -> {``F_repeat_sd``, ``F_repeat_range``} for each figure ``F`` of
    ``figures`` (name -> (numerator column, denominator column) of the vectors ``sums_of`` gives
    a record: the figure is sum(num) / sum(den) over the group's records of one repeat).  A
    figure undefined in some repeat (no valid judgment) is left out of that repeat; below two
    defined repeats the spread is None.  The overall row's group is ``overall_group``."""
    if k < 2:
        return {}
    ncol = 1 + max(max(c) for c in figures.values())
    named = [level for level in levels if level != "overall"]
    many = getattr(sums_of, "columnar", None)
    if many is not None and isinstance(records, list):
        cells, cell_idx, rep, values = _columnar_cells(records, many, named)
    else:
        cells, cell_idx, rep, values = _record_cells(records, sums_of, named, ncol)
    if values is None:
        return {}
    # each cell's group at every level: (model, level, group) -> row of the accumulator
    keys: dict[tuple[str, str, str], int] = {}
    to_group = np.empty((len(levels), len(cells)), dtype=np.intp)
    for cell, c in cells.items():
        for li, level in enumerate(levels):
            name = overall_group if level == "overall" else str(cell[1 + named.index(level)])
            to_group[li, c] = keys.setdefault((str(cell[0]), level, name), len(keys))
    per_cell = np.zeros((len(cells), k, ncol))
    if rep.size and 0 <= rep.min() and rep.max() < k:  # each column summed in record order, as np.add.at does
        slot = cell_idx * k + rep
        for c in range(ncol):
            per_cell[:, :, c] = np.bincount(slot, weights=values[:, c], minlength=len(cells) * k).reshape(len(cells), k)
    else:
        np.add.at(per_cell, (cell_idx, rep), values)
    acc = np.zeros((len(keys), k, ncol))
    for li in range(len(levels)):
        np.add.at(acc, to_group[li], per_cell)
    out: dict[tuple[str, str, str], dict[str, float | None]] = {key: {} for key in keys}
    for name, (num, den) in figures.items():
        d = acc[:, :, den]
        defined = d > 0
        f = np.where(defined, acc[:, :, num] / np.where(defined, d, 1.0), np.nan)
        n = defined.sum(axis=1)
        mean = np.nansum(f, axis=1) / np.maximum(n, 1)
        dev = np.where(defined, f - mean[:, None], 0.0)
        sd = np.sqrt((dev ** 2).sum(axis=1) / np.maximum(n - 1, 1))
        rng = np.where(n > 0, np.nanmax(np.where(defined, f, -np.inf), axis=1)
                       - np.nanmin(np.where(defined, f, np.inf), axis=1), np.nan)
        for key, g in keys.items():
            two = n[g] >= 2
            out[key][f"{name}_{SPREAD[0]}"] = float(sd[g]) if two else None
            out[key][f"{name}_{SPREAD[1]}"] = float(rng[g]) if two else None
    return out


def _record_cells(records, sums_of, named: Sequence[str], ncol: int):
    """(cell -> code, each record's cell, repeat and sums) from one pass over the records: a cell is
    (model, the record's group at each named level)."""
    cells: dict[tuple, int] = {}
    cell_of: list[int] = []
    reps: list[int] = []
    vecs: list[Sequence[float]] = []
    fields = ("model", *named)
    defaults = ("",) * len(fields)
    for r in records:  # one pass: each record's sums once, one lookup for its groups
        v = sums_of(r)
        if v is None:
            continue
        vecs.append(v)
        reps.append(r.get("repeat", 0))
        cell = tuple(map(r.get, fields, defaults))
        c = cells.get(cell)
        if c is None:
            c = cells[cell] = len(cells)
        cell_of.append(c)
    if not vecs:
        return cells, None, None, None
    return (cells, np.asarray(cell_of, dtype=np.intp), np.asarray(reps, dtype=np.intp),
            np.asarray(vecs, dtype=float).reshape(len(vecs), ncol))


def _columnar_cells(records: list, many, named: Sequence[str]):
    """:func:`_record_cells` from the records' shared columns (:mod:`.columns`), for a ``sums_of``
    whose ``columnar`` gives every record's sums at once (each record kept); the cells in order of
    first appearance, as the record pass numbers them."""
    from .columns import columns

    col = columns(records)
    if col.n == 0:
        return {}, None, None, None
    parts = [col.model, *(col.level(level) for level in named)]
    key = np.zeros(col.n, dtype=np.int64)
    for code, names in parts:
        key = key * max(len(names), 1) + code
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # cells numbered by their first record
    renumber = np.empty(order.size, dtype=np.intp)
    renumber[order] = np.arange(order.size)
    cells = {tuple(names[code[i]] for code, names in parts): c for c, i in enumerate(first[order].tolist())}
    return cells, renumber[inverse.ravel()], col.repeat, many(records)


def add_spread(rows: Mapping[str, list[dict[str, Any]]], records: Mapping[str, Sequence[Mapping[str, Any]]],
               sums_of, figures: Mapping[str, tuple[int, int]], k: int, *, overall_group: str = "overall") -> None:
    """Each row of ``rows`` (judge -> :func:`~judgekit.judging.pairwise.summarize` rows) gets its
    figures' spread columns from that judge's ``records`` (nothing when ``k`` < 2)."""
    if k < 2:
        return
    for judge, judge_rows in rows.items():
        levels = tuple(dict.fromkeys(r["level"] for r in judge_rows))
        spread = repeat_spread(records.get(judge, ()), sums_of, figures, levels, k, overall_group=overall_group)
        for i, row in enumerate(judge_rows):
            s = spread.get((row["model"], row["level"], row["group"]), {})
            judge_rows[i] = _beside(row, {f"{name}_{suffix}": s.get(f"{name}_{suffix}")
                                          for name in figures for suffix in SPREAD}, figures)


def _beside(row: dict[str, Any], spread: dict[str, Any], figures: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with each figure's spread columns right after its interval (or the figure)."""
    anchors = {}
    for name in figures:
        anchors[f"{name}_ci_high" if f"{name}_ci_high" in row else name] = name
    out: dict[str, Any] = {}
    for key, value in row.items():
        out[key] = value
        if key in anchors:
            for suffix in SPREAD:
                out[f"{anchors[key]}_{suffix}"] = spread[f"{anchors[key]}_{suffix}"]
    for key, value in spread.items():  # a figure the row lacks: at the end
        out.setdefault(key, value)
    return out


def repeat_cell(r: Mapping[str, Any], name: str, digits: int) -> str:
    """A figure's judge-induced spread as printed: ``SD (range)``, ``-`` when undefined."""
    sd, rng = r.get(f"{name}_repeat_sd"), r.get(f"{name}_repeat_range")
    return "-" if sd is None else f"{sd:.{digits}f} ({rng:.{digits}f})"
