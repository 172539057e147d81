"""Reading MMIE questions (and models' native interleaved answers) from the released files.

Two formats are read, told apart by the first row (:func:`detect_format`):

``released``
    The dataset as published: a JSON list, or JSONL (one object a line), of::

        {"id": "SA_0001",
         "conversations": [{"from": "human", "content": [{"text": ..., "image": ...}, ...]},
                           {"from": "gpt",   "content": [{"text": ..., "image": ...}, ...]}],
         "catagory": "Situational analysis",      # sic; "category" is read too
         "field": "literature",                   # optional, as everything below
         "subfield": "visual storytelling"}       # ("sub_field" too)

    The ``human`` turn is the question, the ``gpt`` turn (optional) the ground truth.  The
    reference scorer reads none of ``catagory``, ``field`` and ``subfield``: rows without them
    load (the category then comes from the id, see below).
``scorer``
    The input of the authors' scorer, a JSON list (or JSONL) of::

        {"id": ..., "question": [{"text", "image"}, ...], "answer": [...] or "text",
         "model": "name", "gt_answer": [...]}

    ``answer`` is a model's native interleaved answer; :func:`load_answers` imports only those.
    ``category``/``catagory``, ``field`` and ``subfield`` are read when present.

A content entry ``{"text": t, "image": p}`` becomes a text segment then an image segment, in
that order (either may be null or absent; an entry with both null adds nothing, one with
neither key is an error).  A bare string where a list of entries is expected is one text
segment, as the reference scorer reads a string answer.  Ids are strings (an integer is read as
its decimal string).

Images are paths relative to ``images_dir`` (default: the data file's folder).  A path that is
absolute, has a ``..`` component, a NUL byte or an over-long name, is a symlink loop or resolves
(through symlinks) outside ``images_dir`` is rejected (the rules of :mod:`judgekit.datapaths`,
shared by every loader); so is a missing file.  Every image is read once when the file is loaded: its type is
sniffed from the bytes, it is checked with Pillow (PNG: every chunk's CRC; other types: the
header) and hashed; the bytes themselves are not kept (:meth:`Segment.image_part` reads them
again and checks the hash).  An image that does not decode raises too, unless
``skip_unreadable`` is set: then its row is left out and listed in :attr:`Loaded.skipped`.

Category (:mod:`judgekit.benchmarks.mmie.records`): ``category_from="id"`` (the default) takes
it from the id as the reference scorer does (``"SA" in id``, else ``"PBL"``, else ``"MSR"``), and
from the row's ``category``/``catagory`` only when the id holds none of them;
``category_from="label"`` takes the row's label first.  A row with neither is an error.

The ground truth's first entry's text is kept as it was written (:attr:`MMIEItem.gt_lead_text`):
the reference gives the multi-step reasoning scorer that text alone.

Every bad input raises :class:`~judgekit.errors.DataError` naming the file, the row (1-based,
with the line for JSONL and the id when known) and the field, e.g.
``data.json, row 3 (id 'SA_7'), column 'conversations[0].content[1].image': ...``.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.blobs import sniff_mime
from judgekit.datapaths import PathRefused, resolve_ref, shown_path
from judgekit.errors import DataError
from judgekit.tables import loads_json, not_utf8

from .records import (
    CATEGORIES,
    CATEGORY_CODES,
    MSR,
    PBL,
    SA,
    CategoryRule,
    Format,
    Loaded,
    MMIEItem,
    Segment,
    SkippedRow,
    category_from_id,
    category_from_label,
)

__all__ = [
    "SA",
    "PBL",
    "MSR",
    "CATEGORIES",
    "CATEGORY_CODES",
    "Segment",
    "MMIEItem",
    "SkippedRow",
    "Loaded",
    "CategoryRule",
    "detect_format",
    "load_items",
    "load_answers",
    "category_from_label",
    "category_from_id",
]

# --------------------------------------------------------------------------- reading rows


@dataclass(slots=True)
class _Ctx:
    """Where a row is, for error messages."""

    path: str
    row: int
    line: int | None = None
    id: str | None = None

    def where(self) -> str:
        bits = [str(self.row)]
        extra = []
        if self.line is not None:
            extra.append(f"line {self.line}")
        if self.id is not None:
            extra.append(f"id {self.id!r}")
        if extra:
            bits.append("(" + ", ".join(extra) + ")")
        return " ".join(bits)

    def error(self, message: str, column: str | None = None) -> DataError:
        return DataError(self.path, message, row=self.where(), column=column)


class _Unreadable(Exception):
    """An image that does not decode (turned into a DataError or a skipped row)."""

    def __init__(self, error: DataError):
        super().__init__(str(error))
        self.error = error


def _read_rows(path: Path) -> list[tuple[int, int | None, Any]]:
    """``[(row, line or None, value)]`` of a JSON list or a JSONL file."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(str(path), f"cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    stripped = text.lstrip()
    if not stripped:
        raise DataError(str(path), "empty file (expected a JSON list or JSONL rows)")
    if stripped[0] == "[":
        value = loads_json(text, path)
        if not isinstance(value, list):  # pragma: no cover - a '[' document is a list
            raise DataError(str(path), "expected a JSON list of rows")
        return [(i, None, v) for i, v in enumerate(value, start=1)]
    if stripped[0] != "{":
        raise DataError(str(path), "expected a JSON list of rows or JSONL (one object a line)")
    rows: list[tuple[int, int | None, Any]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(str(path), f"bad JSON (JSONL) at column {e.colno}: {e.msg}",
                            row=f"{len(rows) + 1} (line {lineno})") from None
        except (ValueError, RecursionError) as e:  # nested too deeply, or an integer too long to read
            why = "nested too deeply to read" if isinstance(e, RecursionError) else str(e)
            raise DataError(str(path), f"bad JSON (JSONL): {why}", row=f"{len(rows) + 1} (line {lineno})") from None
        rows.append((len(rows) + 1, lineno, value))
    return rows


def detect_format(row: Any) -> Format | None:
    """``released`` for a row with ``conversations``, ``scorer`` for one with ``question``."""
    if isinstance(row, Mapping):
        if "conversations" in row:
            return "released"
        if "question" in row:
            return "scorer"
    return None


class _Reader:
    """Reads the rows of one file; caches image checks by resolved path."""

    def __init__(self, path: Path, images_dir: Path | None, category_from: CategoryRule | None = "id"):
        self.path = path
        self.category_from = category_from  # None: no category needed (native answers)
        root = Path(images_dir) if images_dir is not None else path.parent
        if not root.is_dir():
            raise DataError(str(root), "images folder does not exist or is not a folder")
        self.root = root.resolve()
        self._images: dict[Path, tuple[str, str, int, int]] = {}

    # ---- images

    def image(self, ref: Any, ctx: _Ctx, column: str) -> Segment:
        if not isinstance(ref, str):
            raise ctx.error(f"image must be a path string or null, not {type(ref).__name__}", column)
        try:
            resolved = resolve_ref(self.root, ref, folder="images folder")
            found = resolved.is_file()
        except PathRefused as e:
            raise ctx.error(f"image path {e}", column) from None
        except OSError as e:
            raise ctx.error(f"image path {shown_path(ref)}: {e.strerror or e}", column) from None
        if not found:
            raise ctx.error(f"image file not found: {resolved}", column)
        info = self._images.get(resolved)
        if info is None:
            info = self._check_image(resolved, ref, ctx, column)
            self._images[resolved] = info
        sha, mime, w, h = info
        return Segment("image", path=resolved, ref=ref, sha256=sha, mime=mime, width=w, height=h)

    def _check_image(self, resolved: Path, ref: str, ctx: _Ctx, column: str) -> tuple[str, str, int, int]:
        try:
            data = resolved.read_bytes()
        except OSError as e:
            raise _Unreadable(ctx.error(f"cannot read image {ref!r}: {e.strerror or e}", column)) from None
        mime = sniff_mime(data)
        if mime is None:
            what = "is empty" if not data else "is not an image (not PNG, JPEG, WebP, GIF or BMP)"
            raise _Unreadable(ctx.error(f"image {ref!r} {what}", column))
        from PIL import Image  # Pillow only when images are loaded

        try:
            with Image.open(io.BytesIO(data)) as im:
                size = im.size
                im.verify()  # PNG: every chunk and CRC; the others: the header was parsed by open()
        except Exception as e:  # Pillow raises many types for broken files
            raise _Unreadable(ctx.error(f"image {ref!r} does not decode ({type(e).__name__}: {e})",
                                        column)) from None
        return hashlib.sha256(data).hexdigest(), mime, size[0], size[1]

    # ---- segments

    def segments(self, value: Any, ctx: _Ctx, column: str) -> tuple[Segment, ...]:
        if isinstance(value, str):
            return (Segment.of_text(value),)
        if not isinstance(value, list):
            raise ctx.error(f"expected a list of {{'text', 'image'}} entries, not {type(value).__name__}",
                            column)
        out: list[Segment] = []
        for k, entry in enumerate(value):
            col = f"{column}[{k}]"
            if not isinstance(entry, Mapping):
                raise ctx.error(f"expected an object with 'text' and/or 'image', not {type(entry).__name__}",
                                col)
            if "text" not in entry and "image" not in entry:
                raise ctx.error("entry has neither 'text' nor 'image'", col)
            text, image = entry.get("text"), entry.get("image")
            if k == 0 and column == "answer" and text is None and image is None:
                # an answer opening with an empty entry: kept as a text segment without text, since
                # the reference's scorer reads the first entry before it stops at 3 images, so
                # such an answer is empty for it when the question holds 3 images
                out.append(Segment("text", text=None))
            if text is not None:
                if not isinstance(text, str):
                    raise ctx.error(f"text must be a string or null, not {type(text).__name__}", col + ".text")
                out.append(Segment.of_text(text))
            if image is not None:
                out.append(self.image(image, ctx, col + ".image"))
        return tuple(out)

    # ---- rows

    def row(self, fmt: Format, value: Any, ctx: _Ctx) -> MMIEItem:
        if not isinstance(value, Mapping):
            raise ctx.error(f"a row must be a JSON object, not {type(value).__name__}")
        if "id" not in value:
            raise ctx.error("missing field", "id")
        raw_id = value["id"]
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
            raise ctx.error(f"id must be a string, not {type(raw_id).__name__}", "id")
        item_id = str(raw_id)
        if not item_id.strip():
            raise ctx.error("id is empty", "id")
        ctx.id = item_id
        row_fmt = detect_format(value)
        if row_fmt != fmt:
            want = "conversations" if fmt == "released" else "question"
            raise ctx.error(f"missing field (the file's first row is in the {fmt} format)", want)
        category = self._category(value, item_id, ctx)
        fld = self._opt_str(value, "field", ctx)
        sub = self._opt_str(value, "subfield", ctx)
        if sub is None:
            sub = self._opt_str(value, "sub_field", ctx)
        if fmt == "released":
            question, gt, gt_raw = self._conversations(value["conversations"], ctx)
            answer, model = None, None
        else:
            question = self.segments(value["question"], ctx, "question")
            gt_raw = value.get("gt_answer")
            gt = None if gt_raw is None else self.segments(gt_raw, ctx, "gt_answer")
            ans_raw = value.get("answer")
            answer = None if ans_raw is None else self.segments(ans_raw, ctx, "answer")
            model = self._opt_str(value, "model", ctx)
        if not question:
            raise ctx.error("the question is empty", "conversations" if fmt == "released" else "question")
        return MMIEItem(id=item_id, category=category, field=fld, subfield=sub, question=question,
                        gt_answer=gt, answer=answer, model=model, source=(str(self.path), ctx.row),
                        gt_lead_text=_lead_text(gt_raw))

    def _opt_str(self, value: Mapping[str, Any], key: str, ctx: _Ctx) -> str | None:
        v = value.get(key)
        if v is None:
            return None
        if not isinstance(v, str):
            raise ctx.error(f"must be a string, not {type(v).__name__}", key)
        return v

    def _category(self, value: Mapping[str, Any], item_id: str, ctx: _Ctx) -> str:
        if self.category_from is None:
            return ""  # native answers: the data file's item gives the category
        by_id = category_from_id(item_id)
        if by_id is not None and self.category_from == "id":
            return by_id  # the reference's rule: the label is not read
        for key in ("category", "catagory"):
            label = value.get(key)
            if label is None:
                continue
            if not isinstance(label, str):
                raise ctx.error(f"must be a string, not {type(label).__name__}", key)
            cat = category_from_label(label)
            if cat is None:
                raise ctx.error(f"unknown category {label!r} (expected Situational analysis, "
                                "Project-based learning or Multi-step reasoning)", key)
            return cat
        if by_id is None:
            raise ctx.error("no category: the id contains none of SA, PBL, MSR and the row has no "
                            "'category'/'catagory'", "catagory")
        return by_id

    def _conversations(self, conv: Any, ctx: _Ctx) -> tuple[tuple[Segment, ...], tuple[Segment, ...] | None, Any]:
        """(question, ground truth or None, the ground truth's raw content or None)."""
        if not isinstance(conv, list):
            raise ctx.error(f"must be a list of turns, not {type(conv).__name__}", "conversations")
        human: tuple[Segment, ...] | None = None
        gpt: tuple[Segment, ...] | None = None
        gpt_raw: Any = None
        for t, turn in enumerate(conv):
            col = f"conversations[{t}]"
            if not isinstance(turn, Mapping):
                raise ctx.error(f"a turn must be an object, not {type(turn).__name__}", col)
            who = turn.get("from")
            if who not in ("human", "gpt"):
                raise ctx.error(f"'from' must be 'human' or 'gpt', not {who!r}", col + ".from")
            if "content" not in turn:
                raise ctx.error("missing field", col + ".content")
            segs = self.segments(turn["content"], ctx, col + ".content")
            if who == "human":
                if human is not None:
                    raise ctx.error("more than one 'human' turn", col)
                human = segs
            else:
                if gpt is not None:
                    raise ctx.error("more than one 'gpt' turn", col)
                gpt, gpt_raw = segs, turn["content"]
        if human is None:
            raise ctx.error("no 'human' turn (the question)", "conversations")
        return human, gpt, gpt_raw


def _lead_text(raw: Any) -> str | None:
    """The text of a (checked) list of entries' first entry, or of a bare string; None otherwise:
    ``gt_answer[0]['text']`` of the reference."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and raw and isinstance(raw[0], Mapping):
        return raw[0].get("text")
    return None


def _read(path: str | Path, images_dir: str | Path | None, limit: int | None, skip_unreadable: bool,
          only: Format | None, category_from: CategoryRule | None = "id") -> Loaded:
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")
    p = Path(path)
    rows = _read_rows(p)
    if not rows:
        raise DataError(str(p), "no rows")
    first = rows[0]
    fmt = detect_format(first[2])
    if fmt is None:
        ctx = _Ctx(str(p), first[0], first[1])
        if not isinstance(first[2], Mapping):
            raise ctx.error(f"a row must be a JSON object, not {type(first[2]).__name__}")
        raise ctx.error("the first row has neither 'conversations' (released format) nor 'question' "
                        "(scorer format)", "conversations")
    if only is not None and fmt != only:
        raise DataError(str(p), f"expected the {only} format, found the {fmt} format")
    if category_from not in ("id", "label", None):
        raise ValueError(f"category_from must be 'id' or 'label', not {category_from!r}")
    reader = _Reader(p, None if images_dir is None else Path(images_dir), category_from)
    if limit is not None:
        rows = rows[:limit]
    items: list[MMIEItem] = []
    skipped: list[SkippedRow] = []
    seen: dict[str, int] = {}
    for row, line, value in rows:
        ctx = _Ctx(str(p), row, line)
        try:
            item = reader.row(fmt, value, ctx)
        except _Unreadable as u:
            if not skip_unreadable:
                raise u.error from None
            skipped.append(SkippedRow(str(p), row, ctx.id, str(u.error)))
            continue
        if item.id in seen:
            raise ctx.error(f"duplicate id (first at row {seen[item.id]})", "id")
        seen[item.id] = row
        items.append(item)
    return Loaded(items, skipped, fmt)


def load_items(path: str | Path, images_dir: str | Path | None = None, limit: int | None = None,
               skip_unreadable: bool = False, *, category_from: CategoryRule = "id") -> Loaded:
    """Read MMIE items from a released or scorer-format file (JSON list or JSONL).

    ``images_dir``: the folder image paths are relative to (default: the file's folder).
    ``limit``: only the first ``limit`` rows are read (and their images checked).
    ``skip_unreadable``: leave out rows with an image that does not decode, listing them in
    :attr:`Loaded.skipped`, instead of raising.  Everything else wrong raises DataError.
    ``category_from``: ``"id"`` (the reference's rule) or ``"label"`` (see the module docstring).
    """
    return _read(path, images_dir, limit, skip_unreadable, None, category_from)


def load_answers(path: str | Path, images_dir: str | Path | None = None
                 ) -> dict[str, tuple[str | None, tuple[Segment, ...]]]:
    """A model's native interleaved answers from a scorer-format file: id -> (model, answer).

    Every row must carry an ``answer`` (a list of entries, or a string); a released-format file,
    a row without an answer, and any bad input raise DataError.  No category is needed (the
    data file's item has it).
    """
    loaded = _read(path, images_dir, None, False, "scorer", None)
    out: dict[str, tuple[str | None, tuple[Segment, ...]]] = {}
    for item in loaded.items:
        if item.answer is None:
            raise DataError(str(path), "missing field (a native answer is needed)",
                            row=f"{item.source[1]} (id {item.id!r})", column="answer")
        out[item.id] = (item.model, item.answer)
    return out
