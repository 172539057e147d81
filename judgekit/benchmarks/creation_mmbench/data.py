"""Reading the Creation-MMBench TSV and the human-alignment ratings file.

The TSV is the authors' file (765 rows), written by pandas ``to_csv(sep='\\t')``: a header, one
row per item, fields quoted with ``"`` when they hold a tab, a quote or a line break.  It is
read here with the csv module only (no pandas), exactly as the reference evaluation reads it:

``image``
    base64 of one image, or a string holding a Python list of base64 strings.  A field of 64
    characters or fewer is a *pointer*: the ``index`` of another row whose images to reuse
    (one hop; the reference rejects a pointer to a pointer, and so do we).
``image_path``
    the file name(s), one string or a list literal.  Kept as metadata.
``criteria``
    a Python dict literal, parsed with :func:`ast.literal_eval` (never ``eval``).  A key
    containing "subjective" (any case) holds the General Subjective Criteria; every other key
    holds Visual Factuality Criteria.  A string that is not a dict literal is subjective
    criteria only.
``ground_truth``
    empty (or one of pandas' NA spellings such as ``nan``) means "no ground truth", as
    ``pd.isna`` does in the reference.

Every malformed thing raises :class:`~judgekit.errors.DataError` naming the file, the row (its
1-based data row number and ``index``) and the column.
"""

from __future__ import annotations

import ast
import base64
import binascii
import csv
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from judgekit.errors import DataError
from judgekit.tables import not_utf8, read_rows
from judgekit.types import ImagePart

from .tasks import UNCATEGORIZED, resolve_category

__all__ = [
    "CreationItem",
    "LoadedData",
    "REQUIRED_COLUMNS",
    "POINTER_MAX_LEN",
    "load_tsv",
    "parse_criteria",
    "image_mime",
    "read_human_ratings",
    "read_human_rating_table",
]

#: columns without which the file cannot be judged
REQUIRED_COLUMNS = ("index", "question", "task_name", "criteria", "reference_answer_by_gpt4o", "image")
#: an ``image`` field this short is the index of another row, not base64
POINTER_MAX_LEN = 64

# pandas' default NA spellings: a ground truth written as one of these is "missing", because the
# reference reads the file with pandas and tests ``pd.isna(ground_truth)``.
_NA_STRINGS = frozenset(
    "#N/A #N/A N/A #NA -1.#IND -1.#QNAN -NaN -nan 1.#IND 1.#QNAN <NA> N/A NA NULL NaN None n/a nan null".split()
)
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class CreationItem:
    """One benchmark item: the query, its criteria, its images and the GPT-4o baseline answer."""

    index: str
    """The row's ``index`` as written in the file (the key of records and of image pointers)."""
    question: str
    """The composed query (role / background / instruction / requirement, Fig. 30)."""
    task_name: str
    """The task as written in the file (e.g. ``story_continue``)."""
    category: str
    """Category name (e.g. ``Literary Writing``), or ``Uncategorized``."""
    role: str
    background: str
    instruction: str
    requirement: str
    ground_truth: str
    """'' when the file has none; selects the with-GT visual factuality prompt otherwise."""
    source: str
    subjective_criteria: str
    """The General Subjective Criteria, rendered as text."""
    vf_criteria: str | None
    """The Visual Factuality Criteria as text; None when the item has none (no VFS judgment)."""
    image_paths: tuple[str, ...]
    """File names from ``image_path`` (metadata only)."""
    images: tuple[ImagePart, ...]
    """The decoded images, in order; a pointer row shares the images of the row it names."""
    reference_answer: str
    """The baseline answer (``reference_answer_by_gpt4o``), Assistant A in the forward order."""


@dataclass(slots=True)
class LoadedData:
    """What :func:`load_tsv` returns."""

    path: str
    items: list[CreationItem]
    unknown_tasks: set[str] = field(default_factory=set)
    """Task names (as written) that no table, override or ``category`` cell placed: these items
    have category ``Uncategorized``."""
    warnings: list[str] = field(default_factory=list)
    """Oddities that do not stop the run (e.g. an image_path count that differs from the images)."""

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[CreationItem]:
        return iter(self.items)

    def by_index(self) -> dict[str, CreationItem]:
        return {it.index: it for it in self.items}


def _raise_field_limit() -> None:
    limit = sys.maxsize
    while True:  # C long may be 32-bit on some platforms
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def load_tsv(path: str | Path, *, task_categories: Mapping[str, str] | None = None) -> LoadedData:
    """Read a Creation-MMBench TSV into items.

    ``task_categories`` (task -> category, names matched after normalising) overrides both the
    shipped table and a ``category`` column.  Tasks nothing places get ``Uncategorized`` and are
    listed in :attr:`LoadedData.unknown_tasks`.
    """
    p = Path(path)
    _raise_field_limit()
    header, cells_by_row = read_rows(p, delimiter="\t", kind="TSV", strict=True)
    for col in REQUIRED_COLUMNS:
        if col not in header:
            raise DataError(str(p), f"missing required column {col!r} (columns: {header})", column=col)
    pos = {name: i for i, name in enumerate(header)}
    rows = [(n, {name: cells[i] for name, i in pos.items()}) for n, cells in cells_by_row]
    return _build(str(p), rows, task_categories)


def _where(n: int, index: str) -> str:
    return f"{n} (index {index})"


def _build(path: str, rows: list[tuple[int, dict[str, str]]], overrides: Mapping[str, str] | None) -> LoadedData:
    seen: dict[str, int] = {}
    for n, row in rows:
        idx = row["index"].strip()
        if not idx:
            raise DataError(path, "empty index", row=n, column="index")
        if idx in seen:
            raise DataError(path, f"duplicate index (also on row {seen[idx]})", row=_where(n, idx), column="index")
        seen[idx] = n

    # decode every non-pointer image field once, then resolve pointers (one hop, as the reference)
    decoded: dict[str, tuple[ImagePart, ...]] = {}
    pointers: list[tuple[int, str, str]] = []
    for n, row in rows:
        idx = row["index"].strip()
        raw = row["image"].strip()
        if len(raw) <= POINTER_MAX_LEN:
            pointers.append((n, idx, raw))
        else:
            decoded[idx] = _decode_images(path, _where(n, idx), raw)
    sources = set(decoded)
    for n, idx, target in pointers:
        where = _where(n, idx)
        if not target:
            raise DataError(path, "empty image field", row=where, column="image")
        if target not in seen:
            raise DataError(path, f"image pointer to index {target!r}, which is not in the file", row=where, column="image")
        if target not in sources:
            raise DataError(
                path, f"image pointer to index {target!r}, whose image is itself a pointer", row=where, column="image"
            )
        decoded[idx] = decoded[target]

    data = LoadedData(path=path, items=[])
    for n, row in rows:
        idx = row["index"].strip()
        where = _where(n, idx)
        question = row["question"]
        if not question.strip():
            raise DataError(path, "empty question", row=where, column="question")
        subjective, vf = parse_criteria(row["criteria"], path=path, row=where)
        task = row["task_name"].strip()
        if not task:
            raise DataError(path, "empty task_name", row=where, column="task_name")
        category = resolve_category(task, tsv_category=row.get("category"), overrides=overrides)
        if category is None:
            category = UNCATEGORIZED
            data.unknown_tasks.add(task)
        images = decoded[idx]
        paths = _parse_paths(path, where, row.get("image_path", ""))
        if paths and len(paths) != len(images):
            data.warnings.append(
                f"row {where}: image_path names {len(paths)} file(s) but the row has {len(images)} image(s)"
            )
        gt = row.get("ground_truth", "")
        if gt.strip() in _NA_STRINGS or not gt.strip():
            gt = ""
        data.items.append(
            CreationItem(
                index=idx,
                question=question,
                task_name=task,
                category=category,
                role=row.get("role", ""),
                background=row.get("background", ""),
                instruction=row.get("instruction", ""),
                requirement=row.get("requirement", ""),
                ground_truth=gt,
                source=row.get("source", ""),
                subjective_criteria=subjective,
                vf_criteria=vf,
                image_paths=paths,
                images=images,
                reference_answer=row["reference_answer_by_gpt4o"],
            )
        )
    return data


# --------------------------------------------------------------------------- images


def _decode_images(path: str, where: str, raw: str) -> tuple[ImagePart, ...]:
    if raw.startswith("["):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
            raise DataError(path, f"unparseable list of images: {type(e).__name__}", row=where, column="image") from None
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise DataError(path, "image list must be a non-empty list of base64 strings", row=where, column="image")
        blobs = value
    else:
        blobs = [raw]
    parts = []
    for k, b64 in enumerate(blobs):
        label = f"image {k + 1} of {len(blobs)}: " if len(blobs) > 1 else ""
        try:
            data = base64.b64decode(_WS.sub("", b64), validate=True)
        except (binascii.Error, ValueError) as e:
            raise DataError(path, f"{label}bad base64 ({e})", row=where, column="image") from None
        mime = image_mime(data)
        part = ImagePart(data=data, mime=mime or "application/octet-stream")
        if mime is None or not (part.width and part.height):
            raise DataError(path, f"{label}bytes are not a decodable image", row=where, column="image")
        parts.append(part)
    return tuple(parts)


_MAGIC = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


def image_mime(data: bytes) -> str | None:
    """The MIME type read from the magic bytes (JPEG, PNG, GIF, WebP, BMP, TIFF); None if unknown."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    return None


def _parse_paths(path: str, where: str, raw: str) -> tuple[str, ...]:
    raw = (raw or "").strip()
    if not raw or raw in _NA_STRINGS:
        return ()
    if raw.startswith("["):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise DataError(path, "unparseable list of file names", row=where, column="image_path") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError(path, "image_path list must hold strings", row=where, column="image_path")
        return tuple(value)
    return (raw,)


# --------------------------------------------------------------------------- criteria


def parse_criteria(raw: str, *, path: str = "<criteria>", row: object = None) -> tuple[str, str | None]:
    """``(subjective, visual_factuality or None)`` from a ``criteria`` cell.

    A cell starting with ``{`` must be a dict literal (parsed with ``ast.literal_eval``); any
    other text is subjective criteria only.  Several subjective keys, or several visual
    factuality keys, are joined with a blank line (the reference keeps only the last of each;
    the real file has one of each).  Values may be strings, lists or dicts and are rendered as
    readable text.  A dict without a subjective key is an error (the reference asserts on it).
    """
    text = raw.strip()
    if not text:
        raise DataError(path, "empty criteria", row=row, column="criteria")
    if not text.startswith("{"):
        return raw, None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise DataError(path, f"unparseable criteria dict literal: {type(e).__name__}", row=row, column="criteria") from None
    if not isinstance(value, dict):
        raise DataError(path, f"criteria literal is a {type(value).__name__}, not a dict", row=row, column="criteria")
    subjective: list[str] = []
    visual: list[str] = []
    for key, val in value.items():
        if not isinstance(key, str):
            raise DataError(path, f"criteria key {key!r} is not a string", row=row, column="criteria")
        (subjective if "subjective" in key.lower() else visual).append(_render(val))
    if not subjective:
        raise DataError(path, f"criteria dict has no subjective key (keys: {list(value)})", row=row, column="criteria")
    return "\n\n".join(subjective), ("\n\n".join(visual) if visual else None)


def _render(value: Any, depth: int = 0) -> str:
    """Criteria values as text: strings as they are; lists one entry a line; dicts ``key: value``;
    nested entries indented two spaces a level."""
    pad = "  " * depth
    if isinstance(value, str):
        return value if depth == 0 else "\n".join(pad + line for line in value.splitlines())
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list, tuple)):
                lines.append(f"{pad}{k}:")
                lines.append(_render(v, depth + 1))
            else:
                lines.append(f"{pad}{k}: {v}")
        return "\n".join(lines)
    if isinstance(value, (list, tuple)):
        return "\n".join(_render(v, depth) if isinstance(v, (dict, list, tuple, str)) else f"{pad}{v}" for v in value)
    return f"{pad}{value}"


# --------------------------------------------------------------------------- human ratings

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
