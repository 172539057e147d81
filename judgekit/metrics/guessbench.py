"""GuessBench metrics: accuracy tables (paper Table 2) and the AutoBencher metrics (section 5.1).

Pure functions over plain values, usable from a notebook; no numpy.

Accuracy.  A *static* result is one bool per build set (None: the set failed, e.g. a failed call
or an unparsed extraction the caller chose not to score).  A *dynamic* result is a vector of three
bool|None, one per attempt.  Dynamic scoring stops at the first correct attempt and the later
attempts count as correct (:func:`carry_forward`).  Failed sets are left out of the denominators
and counted apart (``failed_static``, ``failed_dynamic``).  Accuracies are percentages rounded to
one decimal and are split by answer length as the paper does (``short``: at most 8 letters).

AutoBencher metrics, over one accuracy per model:

* Difficulty = 1 - max(v), with v as fractions (:func:`difficulty` divides by 100 when it is
  given percentages).  Paper: 0.422 = 1 - 0.578 (GPT-4o, static).
* Separability = mean(|v - mean(v)|), in the units of v (:func:`separability`);
  :func:`autobencher` reports it on fractions, as the paper does.
* Novelty = 1 - Spearman(v_hat, v), where v_hat is the ordinary least-squares fit, with an
  intercept, of v on the models' accuracies on earlier benchmarks (:func:`novelty`).  It does not
  depend on the scale of v or of any earlier benchmark's column (percent and fractions may be
  mixed).  With as many models as fitted parameters the fit is exact and novelty is 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit.errors import DataError
from judgekit.tables import read_rows

__all__ = [
    "ACCURACY_COLUMNS",
    "carry_forward",
    "accuracy_rows",
    "accuracy_items",
    "difficulty",
    "separability",
    "spearman",
    "least_squares_fit",
    "novelty",
    "read_earlier_accuracies",
    "autobencher",
]

_SPLITS = ("short", "long", "all")
_TASKS = ("static", "dynamic_1", "dynamic_2", "dynamic_3")
#: the accuracy columns of a row of :func:`accuracy_rows`, in order (Table 2's columns)
ACCURACY_COLUMNS: tuple[str, ...] = tuple(f"{t}_{s}" for t in _TASKS for s in _SPLITS)
_ATTEMPTS = 3

# relative size below which a design-matrix column counts as dependent on the earlier ones
_RANK_TOL = 1e-9


# --------------------------------------------------------------------------- accuracy


def carry_forward(correct_by_turn: Sequence[bool | None]) -> list[bool | None]:
    """A dynamic result with the first correct attempt carried forward.

    Walking the turns in order: before any correct turn a bool is kept; the first True makes that
    turn and every later one True (later turns were not asked, so they may be None); a None met
    before any correct turn (the turn was not answered: a failed call) stays None and so does
    every later turn, since the set stopped there.

    ``[False, True, None] -> [False, True, True]``; ``[False, None, True] -> [False, None, None]``.
    """
    out: list[bool | None] = []
    state = "open"  # "open" | "correct" | "stopped"
    for v in correct_by_turn:
        if state == "correct":
            out.append(True)
        elif state == "stopped" or v is None:
            out.append(None)
            state = "stopped"
        elif v:
            out.append(True)
            state = "correct"
        else:
            out.append(False)
    return out


def _pct(hits: int, n: int) -> float | None:
    return None if n == 0 else round(100.0 * hits / n, 1)


def _static_value(rec: Mapping[str, Any]) -> bool | None:
    v = rec.get("correct")
    if v is None or isinstance(v, bool):
        return v
    raise ValueError(f"static result must be a bool or None, not {v!r} (set {rec.get('set_id')!r})")


def _dynamic_value(rec: Mapping[str, Any]) -> list[bool | None]:
    v = rec.get("correct")
    if v is None:  # the whole set failed
        return [None] * _ATTEMPTS
    if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) != _ATTEMPTS:
        raise ValueError(
            f"dynamic result must be a list of {_ATTEMPTS} bool|None, not {v!r} (set {rec.get('set_id')!r})"
        )
    for x in v:
        if x is not None and not isinstance(x, bool):
            raise ValueError(f"dynamic result must hold bool|None, not {x!r} (set {rec.get('set_id')!r})")
    return carry_forward(v)


def _tally(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(model, approach) -> {"acc": column -> {set_id: 0|1}, the four counts}: each scored set's
    outcome in each column it counts in (the rules of :func:`accuracy_rows`)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    seen: set[tuple[str, str, str, Any]] = set()
    for rec in records:
        model, approach, task, set_id = rec["model"], rec["approach"], rec["task"], rec["set_id"]
        if task not in ("static", "dynamic"):
            raise ValueError(f"task must be 'static' or 'dynamic', not {task!r} (set {set_id!r})")
        key = (model, approach, task, set_id)
        if key in seen:
            raise ValueError(f"duplicate record for model {model!r}, approach {approach!r}, {task} set {set_id!r}")
        seen.add(key)
        g = groups.setdefault(
            (model, approach),
            {
                "acc": {c: {} for c in ACCURACY_COLUMNS},
                "n_static": 0, "failed_static": 0, "n_dynamic": 0, "failed_dynamic": 0,
            },
        )
        split = "short" if rec["short"] else "long"
        if task == "static":
            v = _static_value(rec)
            if v is None:
                g["failed_static"] += 1
                continue
            g["n_static"] += 1
            for s in (split, "all"):
                g["acc"][f"static_{s}"][set_id] = int(v)
        else:
            vec = _dynamic_value(rec)
            if None in vec:
                g["failed_dynamic"] += 1
            else:
                g["n_dynamic"] += 1
            for k, v in enumerate(vec, start=1):
                if v is None:
                    break
                for s in (split, "all"):
                    g["acc"][f"dynamic_{k}_{s}"][set_id] = int(v)
    return groups


def accuracy_rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Table 2: one row per (model, approach), in the order first seen.

    Each record is one (model, approach, task, set) with keys ``model``, ``approach``, ``task``
    (``"static"`` or ``"dynamic"``), ``set_id``, ``short`` (bool: the answer has at most 8
    letters) and ``correct``: a bool or None (failed) for static, a list of three bool|None for
    dynamic (or None for a wholly failed set); dynamic vectors are passed through
    :func:`carry_forward` here, so raw or already carried vectors give the same result.

    A row has ``model``, ``approach``, the twelve :data:`ACCURACY_COLUMNS` (``static_short``,
    ``static_long``, ``static_all``, ``dynamic_1_short`` ... ``dynamic_3_all``: percent, one
    decimal, None where no set counts), and the counts ``n_static`` / ``failed_static`` (static
    sets scored / with a None) and ``n_dynamic`` / ``failed_dynamic`` (dynamic sets whose carried
    vector has no None / has one).  A dynamic set counts for attempt k when its carried vector
    has no None in attempts 1..k, so a set that failed at attempt 3 still counts for attempts 1
    and 2 (and in ``failed_dynamic``).

    A repeated (model, approach, task, set_id) or an unknown task is a ValueError.
    """
    rows: list[dict[str, Any]] = []
    for (model, approach), g in _tally(records).items():
        row: dict[str, Any] = {"model": model, "approach": approach}
        for col in ACCURACY_COLUMNS:
            cell = g["acc"][col]
            row[col] = _pct(sum(cell.values()), len(cell))
        for k in ("n_static", "n_dynamic", "failed_static", "failed_dynamic"):
            row[k] = g[k]
        rows.append(row)
    return rows


def accuracy_items(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, dict[Any, int]]]:
    """What each accuracy of :func:`accuracy_rows` is made of: (model, approach) -> column ->
    {set_id: 1 (right) or 0 (wrong)} over the sets that count in that column (a column's
    accuracy is 100 x the mean of its values, before rounding).  The bootstrap resamples these
    sets (:mod:`judgekit.judging.intervals`)."""
    return {k: g["acc"] for k, g in _tally(records).items()}


# --------------------------------------------------------------------------- AutoBencher


def _floats(values: Sequence[float], what: str) -> list[float]:
    out = [float(x) for x in values]
    if not out:
        raise ValueError(f"{what}: no values")
    for x in out:
        if not math.isfinite(x):
            raise ValueError(f"{what}: non-finite value {x!r}")
    return out


def _as_fractions(values: Sequence[float], what: str) -> list[float]:
    """Fractions in 0..1: the values divided by 100 when any exceeds 1 (so they are percent)."""
    v = _floats(values, what)
    if any(x > 1.0 for x in v):
        v = [x / 100.0 for x in v]
    return v


def difficulty(acc: Sequence[float]) -> float:
    """1 - max(acc), the lowest error rate of any model.

    ``acc`` is in fractions; when any value exceeds 1 all values are read as percentages and
    divided by 100 (so an all-percent vector whose every value is at most 1% would be misread:
    pass fractions to be safe).
    """
    return 1.0 - max(_as_fractions(acc, "difficulty"))


def separability(acc: Sequence[float]) -> float:
    """The mean absolute deviation of the accuracies, in the units of ``acc``."""
    v = _floats(acc, "separability")
    m = sum(v) / len(v)
    return sum(abs(x - m) for x in v) / len(v)


def _ranks(v: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    ranks = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        avg = (i + j) / 2.0 + 1.0
        for t in range(i, j + 1):
            ranks[order[t]] = avg
        i = j + 1
    return ranks


def _pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    da = [x - ma for x in a]
    db = [y - mb for y in b]
    saa = sum(x * x for x in da)
    sbb = sum(y * y for y in db)
    if saa == 0.0 or sbb == 0.0:
        return None
    r = sum(x * y for x, y in zip(da, db)) / math.sqrt(saa * sbb)
    return max(-1.0, min(1.0, r))


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation: Pearson's r of the ranks, ties given their average rank.

    None when there are fewer than two values or either side is constant (undefined).  The
    sequences must be equally long.
    """
    if len(a) != len(b):
        raise ValueError(f"spearman: {len(a)} values against {len(b)}")
    if len(a) < 2:
        return None
    return _pearson(_ranks([float(x) for x in a]), _ranks([float(y) for y in b]))


def _dot(x: Sequence[float], y: Sequence[float]) -> float:
    return math.fsum(p * q for p, q in zip(x, y))


def least_squares_fit(v: Sequence[float], X: Sequence[Sequence[float]]) -> list[float]:
    """The fitted values of the ordinary least-squares fit of ``v`` on the columns of ``X``.

    ``X`` has one row per model (the same order as ``v``) and one column per earlier benchmark;
    an intercept column is added first.  The fit is the orthogonal projection of ``v`` onto the
    span of [1, columns of X], computed by Gram-Schmidt orthogonalisation (twice, for accuracy)
    in column order.  A column that is (numerically) a linear combination of the intercept and
    the columns before it adds nothing to the span and is dropped, so a rank-deficient ``X``
    gives the same, unique fitted values as a pseudo-inverse would.  Zero columns give the mean.
    """
    y = _floats(v, "least_squares_fit")
    n = len(y)
    if len(X) != n:
        raise ValueError(f"least_squares_fit: {n} values but {len(X)} rows in X")
    width = len(X[0]) if n else 0
    for i, row in enumerate(X):
        if len(row) != width:
            raise ValueError(f"least_squares_fit: row {i} of X has {len(row)} columns, row 0 has {width}")
    columns = [[1.0] * n] + [_floats([row[j] for row in X], f"least_squares_fit column {j}") for j in range(width)]

    basis: list[list[float]] = []
    for col in columns:
        norm0 = math.sqrt(_dot(col, col))
        if norm0 == 0.0:
            continue
        u = list(col)
        for _ in range(2):
            for q in basis:
                c = _dot(q, u)
                u = [ui - c * qi for ui, qi in zip(u, q)]
        norm = math.sqrt(_dot(u, u))
        if norm <= _RANK_TOL * norm0:
            continue  # dependent on the columns already in the basis
        basis.append([ui / norm for ui in u])

    fit = [0.0] * n
    for q in basis:
        c = _dot(q, y)
        fit = [f + c * qi for f, qi in zip(fit, q)]
    return fit


def novelty(acc: Sequence[float], earlier: Sequence[Sequence[float]]) -> float | None:
    """1 - Spearman(v_hat, acc), v_hat the :func:`least_squares_fit` of ``acc`` on ``earlier``.

    ``earlier`` has one row per model, one column per earlier benchmark.  None when the rank
    correlation is undefined (fewer than two models, constant ``acc``, or a constant fit, e.g.
    no earlier benchmark).  Ranges over 0..2; 0 means the earlier benchmarks predict the ranking
    exactly.
    """
    fit = least_squares_fit(acc, earlier)
    # values that differ only by rounding error are ties, not a ranking
    scale = max(1.0, max(abs(x) for x in fit))
    fit = [round(x / scale, 12) for x in fit]
    rho = spearman(fit, acc)
    return None if rho is None else 1.0 - rho


def read_earlier_accuracies(path: Path, models: Sequence[str]) -> tuple[list[str], list[list[float]]]:
    """Read a CSV of accuracies on earlier benchmarks: ``(benchmark names, rows in models' order)``.

    The header is ``model,<bench1>,<bench2>,...``; each further line is one model's accuracies
    (percent or fractions; :func:`novelty` does not mind which).  Rows of models not asked for
    are ignored; blank lines are skipped.  Data rows are numbered from 1, after the header.

    A :class:`~judgekit.errors.DataError` names the file, row and column for: a missing or
    unreadable file, an empty file, a header whose first column is not ``model`` or that has no
    benchmark or a repeated name, a row with the wrong number of cells, a repeated model, a
    non-numeric or non-finite cell, and a model in ``models`` that has no row.
    """
    p = Path(path)
    header, data = read_rows(p)
    if not header or header[0].lower() != "model":
        raise DataError(str(p), "the first column must be 'model'", row=0, column=header[0] if header else None)
    benchmarks = header[1:]
    if not benchmarks:
        raise DataError(str(p), "no benchmark columns after 'model'", row=0)
    for j, name in enumerate(benchmarks):
        if not name:
            raise DataError(str(p), f"empty benchmark name in column {j + 2}", row=0)
        if name in benchmarks[:j]:
            raise DataError(str(p), "repeated benchmark name", row=0, column=name)
    found: dict[str, list[float]] = {}
    first_row: dict[str, int] = {}
    for n, cells in data:
        model = cells[0].strip()
        if not model:
            raise DataError(str(p), "empty model name", row=n, column="model")
        if model in found:
            raise DataError(
                str(p), f"repeated model (also on row {first_row[model]})", row=f"{n} (model {model})", column="model"
            )
        values: list[float] = []
        for name, cell in zip(benchmarks, cells[1:]):
            try:
                x = float(cell.strip())
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                raise DataError(str(p), f"not a number: {cell!r}", row=f"{n} (model {model})", column=name)
            values.append(x)
        found[model] = values
        first_row[model] = n

    rows: list[list[float]] = []
    for m in models:
        if m not in found:
            raise DataError(str(p), f"no row for model {m!r} (models in the file: {sorted(found)})", column="model")
        rows.append(found[m])
    return benchmarks, rows


def autobencher(acc_by_model: Mapping[str, float], earlier_csv: Path | None) -> dict[str, Any]:
    """Difficulty, separability and novelty of one benchmark over several models.

    ``acc_by_model`` maps model name -> accuracy (percent or fractions; read as percent when any
    value exceeds 1).  Difficulty and separability are reported on fractions, as in the paper.
    Novelty needs ``earlier_csv`` (see :func:`read_earlier_accuracies`; every model must have a
    row) and is None without it.  Returns ``{"models", "difficulty", "separability", "novelty",
    "benchmarks"}`` (``benchmarks``: the earlier benchmarks used, empty without a CSV).
    """
    models = list(acc_by_model)
    acc = _as_fractions([acc_by_model[m] for m in models], "autobencher")
    benchmarks: list[str] = []
    nov: float | None = None
    if earlier_csv is not None:
        benchmarks, earlier = read_earlier_accuracies(Path(earlier_csv), models)
        nov = novelty(acc, earlier)
    return {
        "models": models,
        "difficulty": difficulty(acc),
        "separability": separability(acc),
        "novelty": nov,
        "benchmarks": benchmarks,
    }
