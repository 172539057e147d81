"""A user's items for the generic benchmarks, read from a data file or the Hugging Face hub.

:func:`read_rows` reads a file by its suffix: JSONL (an object a line, blank lines skipped), JSON
(a list of objects), CSV / TSV (Python's csv rules, UTF-8, a byte-order mark dropped) and parquet
(through DuckDB: no pandas or pyarrow needed; a hub image column's ``{bytes, path}`` structs keep
their bytes).  :func:`load_items` turns the rows into :class:`GenericItem` s by the
``[options.columns]`` names (:class:`Columns`), and :func:`load_answers` reads one model's
imported answers.  Every problem is one :class:`~judgekit.errors.DataError` naming the file, the
row (the line of a JSONL file; the data row of a CSV, counted from 1 after the header) and the
column.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from judgekit.config import STRICT_CONFIG
from judgekit.errors import DataError
from judgekit.tables import loads_json, open_rows, read_text
from judgekit.types import ImagePart

from .item_images import ImageReader, is_empty

__all__ = [
    "SUFFIXES",
    "Columns",
    "GenericItem",
    "Items",
    "cell_text",
    "load_answers",
    "load_items",
    "read_rows",
]

#: the data files read, by suffix
SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")


class Columns(BaseModel):
    """Which column holds what (the spec's ``[options.columns]`` table).  A column named here
    that no row has is an error, except for a default name left as it is (an optional column)."""

    model_config = STRICT_CONFIG

    id: str = Field("id", description="the item's id (absent: the row number)")
    question: str = Field("question", description="the question or instruction (required)")
    images: str = Field("images", description="the item's images: paths, base64, data: URLs; one or a list")
    reference: str = Field("reference", description="a reference answer (optional)")
    criteria: str = Field("criteria", description="per-item criteria or rubric (optional)")
    category: str = Field("category", description="the category the item is reported under (optional)")


@dataclass
class GenericItem:
    """One item of a generic benchmark."""

    #: the id column's value as text; without an id column, the 1-based row number as text
    id: str
    #: the 1-based row (the line of a JSONL file) in the file, for messages
    row: int
    question: str
    #: the item's images, in order
    images: list[ImagePart]
    reference: str | None
    criteria: str | None
    #: None: reported under "all"
    category: str | None
    #: every column of the row as text (:func:`cell_text`), for a prompt's placeholders; a column
    #: other rows have and this one lacks is ""
    fields: dict[str, str]


class Items(list):
    """The items :func:`load_items` returns: a list, with ``all_ids`` the ids of every row of the
    file, ``limit`` or not, so :func:`load_answers` can tell an answer for an item cut off by
    ``--limit`` (skipped) from one for no item at all (an error)."""

    all_ids: frozenset[str] = frozenset()


def cell_text(value: Any) -> str:
    """A cell as a prompt's text: None and NaN are "", text as it is, a bool "true"/"false",
    lists and objects as JSON (bytes inside as ``<N bytes>``), anything else ``str()``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, default=_json_default)
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, (datetime.date, datetime.time, decimal.Decimal)):
        return str(value)
    if isinstance(value, float):  # NaN, inf (json.dumps writes NaN otherwise)
        return None
    return str(value)


# --------------------------------------------------------------------------- reading rows


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL, JSON, CSV, TSV or parquet file (by suffix), as dicts."""
    return [row for _, row in _numbered_rows(Path(path))]


def _numbered_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise DataError(str(path), f"unknown data file type {suffix or '(no suffix)'!r}; "
                                   f"use one of {', '.join(SUFFIXES)}")
    if suffix == ".parquet":
        return _parquet_rows(path)
    if suffix in (".csv", ".tsv"):
        delimiter, kind = ("\t", "TSV") if suffix == ".tsv" else (",", "CSV")
        header, rows = open_rows(path, delimiter=delimiter, kind=kind)
        seen = set()
        for name in header:
            if name in seen:
                raise DataError(str(path), f"the header names column {name!r} twice", row=0)
            seen.add(name)
        return [(n, dict(zip(header, cells))) for n, cells in rows]
    text = read_text(path)
    if suffix == ".json":
        data = loads_json(text, path)
        if not isinstance(data, list):
            raise DataError(str(path), f"a .json data file must hold a list of objects, not {type(data).__name__} "
                                       f"(one object a line: name it .jsonl)")
        out = []
        for n, row in enumerate(data, start=1):
            if not isinstance(row, dict):
                raise DataError(str(path), f"item {n} of the list is {type(row).__name__}, not an object", row=n)
            out.append((n, row))
        return out
    out = []
    # split at "\n" only: str.splitlines would also cut at U+2028 and the like, which JSON strings may hold
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        row = loads_json(line, path, row=n)
        if not isinstance(row, dict):
            raise DataError(str(path), f"line {n} is a JSON {type(row).__name__}, not an object", row=n)
        out.append((n, row))
    return out


def _parquet_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    import duckdb

    if not path.is_file():
        raise DataError(str(path), "file not found" if not path.exists() else "not a file")
    con = duckdb.connect(":memory:")
    try:
        cur = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    except duckdb.Error as e:
        raise DataError(str(path), f"cannot read as parquet: {str(e).splitlines()[0]}") from None
    finally:
        con.close()
    return [(n, dict(zip(names, row))) for n, row in enumerate(rows, start=1)]


def _source_rows(spec: Any) -> tuple[str, Path | None, list[tuple[int, dict[str, Any]]]]:
    """(name for messages, folder for relative image paths, numbered rows) of the spec's data."""
    if spec.data.startswith("hf:"):
        from judgekit.hub import hub_rows

        rows = hub_rows(spec)
        return spec.data, None, [(n, dict(row)) for n, row in enumerate(rows, start=1)]
    path = spec.data_path()
    if path.is_dir():
        raise DataError(str(path), f"is a folder; data must be one file ({', '.join(SUFFIXES)}) or hf:org/name")
    return str(path), path.parent, _numbered_rows(path)


# --------------------------------------------------------------------------- items


def load_items(spec: Any, columns: Columns, *, limit: int | None = None) -> Items:
    """The spec's items (``spec.data``: a file, or ``hf:org/name``), the first ``limit`` if set."""
    source, folder, rows = _source_rows(spec)
    if not rows:
        raise DataError(source, "no rows: the data holds no items")
    names: dict[str, None] = {}
    for _, row in rows:
        names.update(dict.fromkeys(row))
    explicit = columns.model_fields_set
    for field in ("id", "question", "images", "reference", "criteria", "category"):
        column = getattr(columns, field)
        if column not in names and (field == "question" or field in explicit):
            raise DataError(source, f"no column {column!r} (the {field} column, options.columns.{field}); "
                                    f"the data has: {', '.join(names) or 'none'}")
    has_id = columns.id in names

    all_ids: dict[str, int] = {}
    for n, row in rows:
        item_id = _id_of(row, n, has_id, columns.id, source)
        if item_id in all_ids:
            raise DataError(source, f"duplicate id {item_id!r} (row {all_ids[item_id]} has it too)",
                            row=n, column=columns.id)
        all_ids[item_id] = n

    reader = ImageReader(source, folder)
    items = Items()
    items.all_ids = frozenset(all_ids)
    for n, row in rows[:limit] if limit is not None else rows:
        question = row.get(columns.question)
        if is_empty(question):
            raise DataError(source, "the question is missing or empty", row=n, column=columns.question)
        if not isinstance(question, str):
            raise DataError(source, f"the question must be text, not {type(question).__name__}",
                            row=n, column=columns.question)
        items.append(GenericItem(
            id=_id_of(row, n, has_id, columns.id, source),
            row=n,
            question=question,
            images=reader.cell(row.get(columns.images), row=n, column=columns.images),
            reference=_optional(row, columns.reference),
            criteria=_optional(row, columns.criteria),
            category=_optional(row, columns.category),
            fields={name: cell_text(row.get(name)) for name in names},
        ))
    return items


def _id_of(row: dict[str, Any], n: int, has_id: bool, column: str, source: str) -> str:
    if not has_id:
        return str(n)
    value = row.get(column)
    if is_empty(value) or isinstance(value, (list, tuple, dict)):
        raise DataError(source, "the id is missing or empty" if is_empty(value) else
                        f"the id must be text or a number, not {type(value).__name__}", row=n, column=column)
    if (isinstance(value, float) and value.is_integer()) or (
            isinstance(value, decimal.Decimal) and value.is_finite() and value == value.to_integral_value()):
        value = int(value)  # an integer id in a column with nulls (pandas writes 1.0): the same id as 1
    return cell_text(value).strip()


def _optional(row: dict[str, Any], column: str) -> str | None:
    value = row.get(column)
    return None if is_empty(value) else cell_text(value)


# --------------------------------------------------------------------------- imported answers


def load_answers(path: Path, items: list[GenericItem], *, id_column: str = "id",
                 answer_column: str = "answer", setting: str = "") -> dict[str, str]:
    """One model's imported answers (a JSONL/JSON/CSV/TSV/parquet file): item id -> answer text;
    ``setting``: the spec field that named ``answer_column``, which a missing column's message names.

    A row whose id is no item's is an error (an item cut off by ``--limit`` is skipped when
    ``items`` came from :func:`load_items`), and so is an id given twice; an item the file lacks,
    or a row whose answer is null, is simply absent (the benchmark counts it as a failure).
    """
    path = Path(path)
    rows = _numbered_rows(path)
    names: dict[str, None] = {}
    for _, row in rows:
        names.update(dict.fromkeys(row))
    for column in (id_column, answer_column):
        if column not in names:
            named = f" ({setting})" if setting and column == answer_column else ""
            raise DataError(str(path), f"no column {column!r}{named}; the answers file has: "
                            f"{', '.join(names) or 'none'}", row=rows[0][0] if rows else None)
    order = [item.id for item in items]
    known = set(order)
    cut_off = getattr(items, "all_ids", frozenset()) - known
    answers: dict[str, str] = {}
    first_row: dict[str, int] = {}
    for n, row in rows:
        item_id = _id_of(row, n, True, id_column, str(path))
        if item_id in first_row:
            raise DataError(str(path), f"duplicate id {item_id!r} (row {first_row[item_id]} has it too)",
                            row=n, column=id_column)
        first_row[item_id] = n
        if item_id not in known:
            if item_id in cut_off:
                continue
            sample = ", ".join(repr(i) for i in order[:3])
            raise DataError(str(path), f"id {item_id!r} is not an item of the data (ids look like {sample})",
                            row=n, column=id_column)
        if answer_column not in row:
            raise DataError(str(path), "the row has no answer", row=n, column=answer_column)
        value = row[answer_column]
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if not isinstance(value, str):
            raise DataError(str(path), f"the answer must be text, not {type(value).__name__}",
                            row=n, column=answer_column)
        answers[item_id] = value
    return answers
