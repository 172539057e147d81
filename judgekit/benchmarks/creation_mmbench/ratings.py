"""Creation-MMBench human alignment ratings (Table 4 / Table 7): the CSV of human pairwise ratings."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from judgekit.errors import DataError
from judgekit.tables import not_utf8

__all__ = ["read_human_ratings", "read_human_rating_table"]


def _where(n: int, index: str) -> str:
    return f"{n} (index {index})"


_RATER_COLUMN = re.compile(r"^(human|rater|annotator)[ _\-]?\w*$|^h\d+$", re.IGNORECASE)


def read_human_rating_table(
    path: str | Path, *, rating_columns: tuple[str, ...] | None = None
) -> dict[tuple[str, str], dict[str, float]]:
    """Every rating of the alignment file: ``(model, index) -> {rater column: rating}``.

    The file is a CSV with an ``index`` column, an optional ``model`` column (``""`` when absent)
    and one or more rating columns: by default those named ``human*``, ``rater*``,
    ``annotator*`` or ``H1``, ``H2``...  Ratings are on the candidate's -2..+2 scale (positive =
    the candidate is better); a blank cell is a missing rating.  Used directly for
    human-human alignment (one rater against the mean of the others).
    """
    p = Path(path)
    try:
        fh = p.open("r", encoding="utf-8-sig", newline="")
    except OSError as e:
        raise DataError(str(p), f"cannot open: {e.strerror or e}") from None
    try:
        with fh:
            return _rating_table(p, fh, rating_columns)
    except UnicodeDecodeError:
        raise not_utf8(p) from None
    except OSError as e:  # a folder fails on the first read
        raise DataError(str(p), f"cannot read: {e.strerror or e}") from None


def _rating_table(p: Path, fh, rating_columns: tuple[str, ...] | None) -> dict[tuple[str, str], dict[str, float]]:
    out: dict[tuple[str, str], dict[str, float]] = {}
    reader = csv.DictReader(fh)
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    if "index" not in header:
        raise DataError(str(p), f"missing required column 'index' (columns: {header})", column="index")
    if rating_columns is None:
        cols = tuple(h for h in header if h not in ("index", "model") and _RATER_COLUMN.match(h))
    else:
        missing = [c for c in rating_columns if c not in header]
        if missing:
            raise DataError(str(p), f"missing rating column {missing[0]!r}", column=missing[0])
        cols = tuple(rating_columns)
    if not cols:
        raise DataError(str(p), f"no rating columns (expected human_1, human_2, ...; columns: {header})")
    try:
        for n, row in enumerate(reader, start=1):
            idx = (row.get("index") or "").strip()
            if not idx:
                raise DataError(str(p), "empty index", row=n, column="index")
            model = (row.get("model") or "").strip()
            key = (model, idx)
            if key in out:
                raise DataError(str(p), f"duplicate (model, index) {key}", row=_where(n, idx), column="index")
            ratings: dict[str, float] = {}
            for c in cols:
                cell = (row.get(c) or "").strip()
                if not cell:
                    continue
                try:
                    v = float(cell)
                except ValueError:
                    raise DataError(str(p), f"rating {cell!r} is not a number", row=_where(n, idx), column=c) from None
                if not -2.0 <= v <= 2.0:
                    raise DataError(str(p), f"rating {v} outside -2..+2", row=_where(n, idx), column=c)
                ratings[c] = v
            out[key] = ratings
    except csv.Error as e:
        raise DataError(str(p), f"malformed CSV: {e}", row=reader.line_num) from None
    return out


def read_human_ratings(
    path: str | Path, *, rating_columns: tuple[str, ...] | None = None
) -> dict[tuple[str, str], float]:
    """The reference value P of the alignment metrics: ``(model, index) -> mean human rating``.

    Items with no rating at all are left out.  See :func:`read_human_rating_table` for the file.
    """
    table = read_human_rating_table(path, rating_columns=rating_columns)
    return {k: sum(v.values()) / len(v) for k, v in table.items() if v}
