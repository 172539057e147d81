"""How a figure is written for a reader: one format per kind of figure, the same in the terminal's
tables and on the report page (and in report.json's display strings).

A figure's *kind* fixes its decimals (:data:`DECIMALS`): percentages and rates (Reward, Win Rate,
accuracy, shares) 1; scores (VFS, a rubric score, MMIE's scores in % as its paper prints them),
coefficients (alpha, rho, MAE) and distances (FID) 2; similarities in [0, 1] (MMGenBench's SIM)
4; counts 0.  An
interval is written with the decimals of its estimate (``29.2 [6.2, 54.2]``) and trailing zeros
are kept (``12.5 [0.0, 25.0]``), so the figures of a column line up.  A figure of no known kind
takes :func:`column_decimals` of its whole column (three significant digits of the column's
largest value), again one number of decimals for the column.

:func:`figure_kind` reads a kind from a summary key (``win_rate``) or a shown name
(``Win Rate``, ``SIM · flux``, ``Score (1-10)``) and a unit; :func:`label` turns a summary key
into words for titles (``win_rate`` -> ``Win rate``).  This module imports nothing of judgekit:
the judging core, the benchmarks, the CLI and the report all write their numbers through it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["DECIMALS", "KINDS", "LABELS", "MISSING", "figure_kind", "decimals", "number", "interval",
           "column_decimals", "figure", "label", "is_number", "finite"]

#: decimals by kind of figure
DECIMALS = {"rate": 1, "score": 2, "coefficient": 2, "distance": 2, "similarity": 4, "count": 0}

#: what the terminal and the page write for a figure that is not there
MISSING = "-"

#: summary keys and shown names (lower case, before any " · ", " (" or " per ") -> kind
KINDS = {
    "reward": "rate", "pairwise": "rate", "win_rate": "rate", "win rate": "rate", "win rate %": "rate", "accuracy": "rate",
    "pct": "rate", "% of scale": "rate", "share": "rate", "rate": "rate", "consistency": "rate",
    "swap consistency": "rate", "first-slot preference": "rate", "ties": "rate", "full agreement": "rate",
    "avg": "score", "avg.": "score", "msr": "score", "pbl": "score", "sa": "score",
    "static_all": "rate", "dynamic_1_all": "rate", "dynamic_2_all": "rate", "dynamic_3_all": "rate",
    "vfs": "score", "score": "score", "mean score": "score", "fid": "distance",
    "sim": "similarity", "sim_mean": "similarity", "sim mean": "similarity",
    "alpha": "coefficient", "krippendorff_alpha": "coefficient", "krippendorff's α": "coefficient",
    "rho": "coefficient", "length rho": "coefficient", "length_correlation": "coefficient",
    "length correlation": "coefficient", "mae": "coefficient", "dual mae": "coefficient",
    "single mae": "coefficient", "mse": "coefficient", "cosine": "coefficient", "pearson": "coefficient",
    "difficulty": "coefficient", "separability": "coefficient", "novelty": "coefficient",
    "items": "count", "n": "count", "images": "count", "judgments": "count",
}

#: summary keys -> the words a title or a column head shows
LABELS = {
    "reward": "Reward", "win_rate": "Win rate", "vfs": "Visual factuality score (VFS)", "sim": "SIM",
    "sim_mean": "SIM", "fid": "FID", "score": "Score", "pct": "% of scale", "accuracy": "Accuracy",
    "krippendorff_alpha": "Krippendorff's alpha", "length_correlation": "Length correlation",
    "swap_consistency": "Swap consistency", "first_slot_preference": "First-slot preference",
    "tie_rate": "Ties", "full_agreement": "Full agreement", "parse_failure_rate": "Parse failures",
    "avg": "Avg. (MMIE)", "static_all": "Static accuracy (all answers)",
    "dynamic_1_all": "Dynamic #1 accuracy (all answers)", "dynamic_2_all": "Dynamic #2 accuracy (all answers)",
    "dynamic_3_all": "Dynamic #3 accuracy (all answers)",
}

_CUT = re.compile(r" · | \(| per | by |,")


def is_number(v: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def finite(v: Any) -> float | None:
    """``v`` as a float where it :func:`is_number`, else None."""
    return float(v) if is_number(v) else None


def figure_kind(name: Any, unit: Any = "") -> str | None:
    """The kind of the figure called ``name`` (a summary key or a shown name) with ``unit``; None
    when neither says."""
    n = str(name or "").strip().lower()
    if n in KINDS:
        return KINDS[n]
    u = str(unit or "").strip().lower()
    if u in KINDS:  # a chart of images ("images"), of SIM ("SIM")
        return KINDS[u]
    head = _CUT.split(n, maxsplit=1)[0].strip()
    if head in KINDS:
        return KINDS[head]
    if n.endswith("%") or str(unit or "").strip() == "%":
        return "rate"
    for word in re.split(r"[\s:]+", head):  # "Overall Reward", "Paired differences: Reward"
        if word in KINDS:
            return KINDS[word]
    return None


def decimals(kind: str | None, values: Iterable[Any] = ()) -> int:
    """The decimals of ``kind``; of no known kind, :func:`column_decimals` of ``values``."""
    return DECIMALS[kind] if kind in DECIMALS else column_decimals(values)


def column_decimals(values: Iterable[Any]) -> int:
    """One number of decimals for a column of figures of no known kind: 0 when every value is a
    whole number; the most decimals any value has when all were rounded to 4 or fewer (a
    benchmark's own rounding, as its terminal table shows it: ``5.332`` beside ``2.320``); else
    enough for three significant digits of the largest (1 to 4)."""
    nums = [float(v) for v in values if is_number(v)]
    if not nums or all(float(v).is_integer() and abs(v) < 1e15 for v in nums):
        return 0
    places = [len(repr(v).partition(".")[2]) if "e" not in repr(v) else 99 for v in nums]
    if max(places) <= 4:
        return max(places)
    big = max((abs(v) for v in nums if v != 0), default=0.0)
    if big == 0:
        return 1
    return min(4, max(1, 2 - math.floor(math.log10(big))))


def number(v: Any, places: int) -> str:
    """``v`` with ``places`` decimals, trailing zeros kept; :data:`MISSING` where there is no
    finite number; never ``-0.0``."""
    if not is_number(v):
        return MISSING
    s = f"{float(v):.{places}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def interval(value: Any, low: Any, high: Any, places: int) -> str:
    """``value [low, high]`` with ``places`` decimals for all three; ``value`` alone when the
    interval is not known; :data:`MISSING` when there is no value."""
    if not is_number(value):
        return MISSING
    text = number(value, places)
    if is_number(low) and is_number(high):
        text += f" [{number(low, places)}, {number(high, places)}]"
    return text


def figure(value: Any, low: Any = None, high: Any = None, *, name: Any = "", unit: Any = "",
           column: Iterable[Any] = ()) -> str:
    """A figure (and its interval) as written everywhere: the decimals of its kind (from ``name``
    and ``unit``), else of its ``column``'s values."""
    vals = list(column) or [value, low, high]
    return interval(value, low, high, decimals(figure_kind(name, unit), vals))


def label(key: Any) -> str:
    """A summary key in words for a title: ``win_rate`` -> ``Win rate``; an unknown key with
    underscores becomes words (``sim_std`` -> ``Sim std``); anything else is kept."""
    k = str(key)
    if k in LABELS:
        return LABELS[k]
    if "_" in k and k == k.lower():
        words = k.replace("_", " ").strip()
        return words[:1].upper() + words[1:]
    return k
