"""MMIE metrics: the category table (paper Tables 3-4), fields, score counts, human alignment.

Pure functions over plain values; no numpy.

A record is one scored answer: ``{"model", "category", "field", "score"}`` with ``category`` one
of ``situational_analysis``, ``project_based_learning``, ``multi_step_reasoning`` (the codes
``SA``, ``PBL``, ``MSR`` are read too) and ``score`` the scorer's 0..6 integer, or None when the
item failed (a failed call, a reply with no valid score).  Failures are counted apart and left
out of every mean, as the reference scorer drops replies without a valid score.

Percent = mean score / 6 * 100, rounded to two decimals as the paper prints them.

"Avg." of Table 3 is the mean over ALL scored items of the model, not the mean of the three
category means: the reference scorer averages the list of every valid score, and the paper's
numbers agree (MiniGPT-5: 47.63 / 55.12 / 42.17 weighted by the category sizes 5005 / 11482 /
3616 gives 50.93, printed 50.92; the mean of the three would be 48.31).  The mean of the three
category percentages is reported too, as ``mean_of_categories``.

The reference scorer prints the mean scores themselves (0..6), ``round(np.mean(scores), 3)``:
``score_avg``, ``score_sa``, ``score_pbl``, ``score_msr`` are those numbers (NumPy rounds a float
to 3 decimals as ``rint(x * 1000) / 1000``, which :func:`_reference_mean` does in plain Python).

Alignment with humans (Table 5) is computed on the 0..6 scores, not on percentages: the paper's
MSE (3.300) and MAE (1.444) are in points of the 0..6 scale.

A panel's ensemble score of an answer (the mean of its scorers' valid scores) may be fractional:
``whole=False`` lets :func:`category_table` and :func:`field_table` read such scores, by the same
code.  :func:`item_sums` gives each figure's per-item numerator and denominator for its bootstrap
interval, from the records the point estimate reads, the same way: a scored item contributes
(score, 1), an item with no valid score (0, 0), so it is drawn but, as in the mean, counts in
neither sum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit.errors import DataError
from judgekit.tables import read_json, read_rows

__all__ = [
    "CATEGORY_KEYS",
    "category_table",
    "field_table",
    "score_distribution",
    "alignment",
    "load_human_scores",
    "item_sums",
    "FIGURES",
]

_CATS = ("situational_analysis", "project_based_learning", "multi_step_reasoning")
#: category -> its column key in :func:`category_table` rows
CATEGORY_KEYS: dict[str, str] = {"situational_analysis": "sa", "project_based_learning": "pbl",
                                 "multi_step_reasoning": "msr"}
_CODES = {"SA": "situational_analysis", "PBL": "project_based_learning", "MSR": "multi_step_reasoning"}
_MAX = 6
#: the figures of a :func:`category_table` row that are percentages over items
FIGURES: tuple[str, ...] = ("sa", "pbl", "msr", "avg")


def _category(rec: Mapping[str, Any]) -> str:
    c = rec.get("category")
    if c in CATEGORY_KEYS:
        return c  # type: ignore[return-value]
    if isinstance(c, str) and c.upper() in _CODES:
        return _CODES[c.upper()]
    raise ValueError(f"unknown category {c!r} in record {dict(rec)!r}")


def _score(rec: Mapping[str, Any], whole: bool = True) -> float | None:
    """The record's score: an integer 0..6 (``whole``), or any number in 0..6 (a panel's mean)."""
    s = rec.get("score")
    if s is None:
        return None
    if whole:
        if isinstance(s, bool) or not isinstance(s, (int, float)) or s != int(s) or not 0 <= s <= _MAX:
            raise ValueError(f"score must be an integer 0..6 or None, not {s!r}")
        return int(s)
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or not 0 <= s <= _MAX:
        raise ValueError(f"score must be a number 0..6 or None, not {s!r}")
    return s


def _reference_mean(total: float, n: int) -> float | None:
    """``round(np.mean(scores), 3)`` of the reference for ``n`` scores summing to ``total``: the sum
    of integers is exact in float64, the mean is ``total / n``, and NumPy's rounding to 3 decimals
    is ``rint(mean * 1000) / 1000`` (``round`` of a float rounds half to even, as ``rint``)."""
    return None if n == 0 else round(total / n * 1000) / 1000


def _pct(total: float, n: int) -> float | None:
    return None if n == 0 else round(100.0 * total / (_MAX * n), 2)


def category_table(records: Iterable[Mapping[str, Any]], *, whole: bool = True) -> list[dict[str, Any]]:
    """Tables 3 and 4: one row per model, in the order first seen.

    A row has ``model``; ``sa``, ``pbl``, ``msr`` (percent, None when no item of the category
    was scored); ``avg`` (percent over all scored items, the paper's "Avg."); ``mean_of_categories``
    (the mean of the category percentages that exist); ``score_avg``, ``score_sa``, ... (the mean
    scores 0..6 the reference prints); ``n`` and ``failed`` (scored and failed items) and
    ``n_sa``, ``failed_sa``, ... per category.  ``whole=False``: scores may be fractional (an
    ensemble's means).
    """
    acc: dict[str, dict[str, list[float]]] = {}
    for rec in records:
        model = rec.get("model")
        cat = _category(rec)
        score = _score(rec, whole)
        m = acc.setdefault(str(model), {c: [0, 0, 0] for c in _CATS})  # sum, n, failed
        cell = m[cat]
        if score is None:
            cell[2] += 1
        else:
            cell[0] += score
            cell[1] += 1
    rows = []
    for model, cells in acc.items():
        row: dict[str, Any] = {"model": model}
        cat_pcts = []
        for c in _CATS:
            key = CATEGORY_KEYS[c]
            row[key] = _pct(cells[c][0], cells[c][1])
            row[f"score_{key}"] = _reference_mean(cells[c][0], cells[c][1])
            if row[key] is not None:
                cat_pcts.append(100.0 * cells[c][0] / (_MAX * cells[c][1]))
        total = sum(cells[c][0] for c in _CATS)
        n = sum(cells[c][1] for c in _CATS)
        row["avg"] = _pct(total, n)
        row["score_avg"] = _reference_mean(total, n)
        row["mean_of_categories"] = round(sum(cat_pcts) / len(cat_pcts), 2) if cat_pcts else None
        row["n"] = n
        row["failed"] = sum(cells[c][2] for c in _CATS)
        for c in _CATS:
            key = CATEGORY_KEYS[c]
            row[f"n_{key}"] = cells[c][1]
            row[f"failed_{key}"] = cells[c][2]
        rows.append(row)
    return rows


def field_table(records: Iterable[Mapping[str, Any]], *, whole: bool = True) -> list[dict[str, Any]]:
    """Percent per model and field (the paper's per-field comparison): rows of ``model``,
    ``field``, ``category``, ``percent`` (None when nothing was scored), ``n``, ``failed``; models
    and, within a model, fields in the order first seen.  A record without a field counts under
    the field None.  ``whole=False``: scores may be fractional (an ensemble's means)."""
    acc: dict[tuple[str, Any], list[Any]] = {}
    for rec in records:
        key = (str(rec.get("model")), rec.get("field"))
        cat = _category(rec)
        score = _score(rec, whole)
        cell = acc.setdefault(key, [0, 0, 0, cat])
        if score is None:
            cell[2] += 1
        else:
            cell[0] += score
            cell[1] += 1
    order: dict[str, list[tuple[str, Any]]] = {}
    for key in acc:
        order.setdefault(key[0], []).append(key)
    rows = []
    for keys in order.values():
        for key in keys:
            s, n, failed, cat = acc[key]
            rows.append({"model": key[0], "field": key[1], "category": cat, "percent": _pct(s, n),
                         "n": n, "failed": failed})
    return rows


def item_sums(records: Iterable[Mapping[str, Any]], *,
              whole: bool = True) -> dict[str, dict[str, dict[Any, tuple[float, float]]]]:
    """model -> figure (``sa``, ``pbl``, ``msr``, ``avg``) -> item ``id`` -> (numerator, denominator)
    of the figure's mean score over the records :func:`category_table` reads: (score, 1) for a
    scored item, (0, 0) for one with no valid score (drawn, but in neither sum, as the mean leaves
    it out).  ``100 / 6 x sum(num) / sum(den)`` over an entry's items is the row's percentage.
    Models in the order first seen, each with every figure (empty where it has no item); an id
    seen twice for a model and figure adds up."""
    out: dict[str, dict[str, dict[Any, tuple[float, float]]]] = {}
    for rec in records:
        model = str(rec.get("model"))
        cat = _category(rec)
        score = _score(rec, whole)
        figs = out.setdefault(model, {f: {} for f in FIGURES})
        add = (0.0, 0.0) if score is None else (float(score), 1.0)
        item = rec.get("id")
        for fig in (CATEGORY_KEYS[cat], "avg"):
            num, den = figs[fig].get(item, (0.0, 0.0))
            figs[fig][item] = (num + add[0], den + add[1])
    return out


def score_distribution(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """How often each score was given, per model: rows of ``model``, ``"0"`` .. ``"6"`` (counts)
    and ``failed``, in the order first seen."""
    acc: dict[str, dict[str, Any]] = {}
    for rec in records:
        model = str(rec.get("model"))
        score = _score(rec)
        row = acc.setdefault(model, {"model": model, **{str(k): 0 for k in range(_MAX + 1)}, "failed": 0})
        if score is None:
            row["failed"] += 1
        else:
            row[str(score)] += 1
    return list(acc.values())


# --------------------------------------------------------------------------- alignment


def alignment(scorer: Sequence[float | None], human: Sequence[float | None]) -> dict[str, Any]:
    """Agreement of a scorer with humans over the same items (Table 5), on the 0..6 scale.

    Over the pairs where both values are present: ``n``; ``cosine`` = a.b / (|a| |b|) (None when
    a side is all zeros); ``mse`` = mean (a - b)^2; ``mae`` = mean |a - b|; ``pearson`` (None
    when a side is constant or n < 2).  Every value is None when there is no pair.  The sequences
    must be equally long (item i of one is item i of the other).
    """
    if len(scorer) != len(human):
        raise ValueError(f"scorer has {len(scorer)} values, human has {len(human)}")
    pairs = [(float(a), float(b)) for a, b in zip(scorer, human) if a is not None and b is not None]
    n = len(pairs)
    if n == 0:
        return {"n": 0, "cosine": None, "mse": None, "mae": None, "pearson": None}
    xs = [a for a, _ in pairs]
    ys = [b for _, b in pairs]
    dot = sum(a * b for a, b in pairs)
    nx = math.sqrt(sum(a * a for a in xs))
    ny = math.sqrt(sum(b * b for b in ys))
    cosine = None if nx == 0 or ny == 0 else dot / (nx * ny)
    mse = sum((a - b) ** 2 for a, b in pairs) / n
    mae = sum(abs(a - b) for a, b in pairs) / n
    pearson = None
    if n >= 2:
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((a - mx) ** 2 for a in xs)
        syy = sum((b - my) ** 2 for b in ys)
        if sxx > 0 and syy > 0:
            sxy = sum((a - mx) * (b - my) for a, b in pairs)
            pearson = sxy / math.sqrt(sxx * syy)
    return {"n": n, "cosine": cosine, "mse": mse, "mae": mae, "pearson": pearson}


def _human_value(path: Path, row: object, raw: Any) -> float:
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            raise DataError(str(path), f"score {raw!r} is not a number", row=row, column="score") from None
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = float(raw)
    else:
        raise DataError(str(path), f"score must be a number, not {type(raw).__name__}", row=row,
                        column="score")
    if not math.isfinite(value) or not 0 <= value <= _MAX:
        raise DataError(str(path), f"score {raw!r} is outside 0..6", row=row, column="score")
    return value


def load_human_scores(path: str | Path) -> dict[str, float]:
    """Human scores, id -> 0..6 score (a mean of several raters may be fractional).

    A ``.json`` file holds a list of ``{"id", "score"}`` or an object ``{id: score}``; anything
    else is read as CSV with the columns ``id`` and ``score`` (others ignored).  A missing column
    or field, an empty id, a score that is not a number in 0..6 and a repeated id raise
    DataError naming the file, the row and the field.
    """
    p = Path(path)
    out: dict[str, float] = {}
    first_row: dict[str, object] = {}

    def put(row: object, item_id: Any, raw: Any) -> None:
        if isinstance(item_id, bool) or not isinstance(item_id, (str, int)) or not str(item_id).strip():
            raise DataError(str(p), f"id must be a non-empty string, not {item_id!r}", row=row, column="id")
        key = str(item_id).strip()
        if key in out:
            raise DataError(str(p), f"duplicate id {key!r} (first at row {first_row[key]})", row=row,
                            column="id")
        out[key] = _human_value(p, row, raw)
        first_row[key] = row

    if p.suffix.lower() == ".json":
        data = read_json(p)  # unreadable, not UTF-8 or bad JSON: a DataError naming the file
        if isinstance(data, Mapping):
            for i, (k, v) in enumerate(data.items(), start=1):
                put(i, k, v)
        elif isinstance(data, list):
            for i, rec in enumerate(data, start=1):
                if not isinstance(rec, Mapping):
                    raise DataError(str(p), f"expected an object with 'id' and 'score', not "
                                            f"{type(rec).__name__}", row=i)
                for key in ("id", "score"):
                    if key not in rec:
                        raise DataError(str(p), "missing field", row=i, column=key)
                put(i, rec["id"], rec["score"])
        else:
            raise DataError(str(p), "expected a JSON list of {id, score} or an object id -> score")
        return out
    header, rows = read_rows(p)
    for col in ("id", "score"):
        if col not in header:
            raise DataError(str(p), f"missing column (header: {', '.join(header)})", row=0, column=col)
    i_id, i_score = header.index("id"), header.index("score")
    for n, cells in rows:
        put(n, cells[i_id], cells[i_score])
    return out
