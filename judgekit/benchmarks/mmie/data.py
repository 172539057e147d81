"""Reading MMIE questions (and models' native interleaved answers) from the released files.

Two formats are read, told apart by the first row (:func:`detect_format`):

``released``
    The dataset as published: a JSON list, or JSONL (one object a line), of::

        {"id": "SA_0001",
         "conversations": [{"from": "human", "content": [{"text": ..., "image": ...}, ...]},
                           {"from": "gpt",   "content": [{"text": ..., "image": ...}, ...]}],
         "catagory": "Situational analysis",      # sic; "category" is read too
         "field": "literature",
         "subfield": "visual storytelling"}       # optional ("sub_field" too)

    The ``human`` turn is the question, the ``gpt`` turn (optional) the ground truth.
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

Category (:func:`category_from_label`, :func:`category_from_id`): the row's
``category``/``catagory`` when present (``Situational analysis``, ``project-based learning``,
``MSR``, ... any case, spaces, hyphens or underscores), else the id's marker, as the reference
scorer does.  An id marker is first looked for as a whole token of the id (split at anything not
a letter or digit: ``MSR_12``, ``mmie-pbl-7``), then as a substring, the longer codes
first (``MSR``, ``PBL``, then ``SA``), upper case only, as the reference tests ``"SA" in id``.
A category field that contradicts a token marker of the id is an error (the reference would
score the row with the other category's prompt).

Every bad input raises :class:`~judgekit.errors.DataError` naming the file, the row (1-based,
with the line for JSONL and the id when known) and the field, e.g.
``data.json, row 3 (id 'SA_7'), column 'conversations[0].content[1].image': ...``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from judgekit.blobs import sniff_mime
from judgekit.datapaths import PathRefused, resolve_ref, shown_path
from judgekit.errors import DataError
from judgekit.tables import loads_json, not_utf8
from judgekit.types import ImagePart

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
    "detect_format",
    "load_items",
    "load_answers",
    "category_from_label",
    "category_from_id",
]

SA = "situational_analysis"
PBL = "project_based_learning"
MSR = "multi_step_reasoning"
#: the three categories, in the paper's column order (Table 3)
CATEGORIES: tuple[str, ...] = (SA, PBL, MSR)
#: category -> the code ids carry
CATEGORY_CODES: dict[str, str] = {SA: "SA", PBL: "PBL", MSR: "MSR"}

Format = Literal["released", "scorer"]

_LABELS: dict[str, str] = {
    "situational analysis": SA, "sa": SA,
    "project based learning": PBL, "pbl": PBL,
    "multi step reasoning": MSR, "msr": MSR,
}
# longest first, so "MSR"/"PBL" win over the accidental "SA" in a substring search
_ID_CODES: tuple[tuple[str, str], ...] = (("MSR", MSR), ("PBL", PBL), ("SA", SA))
_TOKEN = re.compile(r"[A-Za-z0-9]+")


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of an interleaved question or answer: a text, or an image file."""

    kind: Literal["text", "image"]
    text: str | None = None
    """The text of a text segment (as written, may be empty); None for an image."""
    path: Path | None = None
    """The image file, resolved (inside the images folder); None for a text."""
    ref: str | None = None
    """The image path as the data file wrote it."""
    sha256: str = ""
    """The image bytes' sha256 (hex); '' for a text."""
    mime: str = ""
    """The image type sniffed from its bytes (``image/png``, ...); '' for a text."""
    width: int = 0
    height: int = 0

    @classmethod
    def of_text(cls, text: str) -> "Segment":
        return cls("text", text=text)

    @property
    def is_image(self) -> bool:
        return self.kind == "image"

    def image_part(self) -> ImagePart:
        """The image as an :class:`~judgekit.types.ImagePart`, its bytes read now.

        Raises DataError when the file cannot be read or no longer has the hash it had when it
        was loaded; ValueError for a text segment.
        """
        if self.kind != "image" or self.path is None:
            raise ValueError("not an image segment")
        try:
            data = self.path.read_bytes()
        except OSError as e:
            raise DataError(str(self.path), f"cannot read image: {e.strerror or e}") from e
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.sha256:
            raise DataError(str(self.path), "image changed since the data file was loaded "
                                            f"(sha256 {digest[:12]}, was {self.sha256[:12]})")
        return ImagePart(data=data, mime=self.mime, sha256=digest, width=self.width, height=self.height)


@dataclass(frozen=True, slots=True)
class MMIEItem:
    """One MMIE question, with its ground truth and (scorer format) a model's answer."""

    id: str
    category: str
    """One of :data:`CATEGORIES`."""
    field: str | None
    """The paper's field (``literature``, ``health``, ``mathematics``, ...); None when absent."""
    subfield: str | None
    question: tuple[Segment, ...]
    gt_answer: tuple[Segment, ...] | None
    """The ground truth (the ``gpt`` turn, or ``gt_answer``); None when the row has none."""
    answer: tuple[Segment, ...] | None
    """A native answer imported with the row (scorer format); None otherwise."""
    model: str | None
    """The model that wrote ``answer`` (scorer format); None otherwise."""
    source: tuple[str, int]
    """(data file, 1-based row)."""

    @property
    def code(self) -> str:
        """``SA``, ``PBL`` or ``MSR``."""
        return CATEGORY_CODES[self.category]

    @property
    def question_images(self) -> list[Segment]:
        return [s for s in self.question if s.is_image]


@dataclass(frozen=True, slots=True)
class SkippedRow:
    """A row left out because an image of it does not decode (``skip_unreadable``)."""

    path: str
    row: int
    id: str | None
    reason: str


@dataclass(slots=True)
class Loaded:
    """What :func:`load_items` read: the items, the rows it skipped, and the file's format."""

    items: list[MMIEItem]
    skipped: list[SkippedRow] = field(default_factory=list)
    format: Format = "released"

    def __iter__(self) -> Iterator[MMIEItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# --------------------------------------------------------------------------- categories


def _norm_label(label: str) -> str:
    return " ".join(re.split(r"[\s_\-]+", label.strip().lower()))


def category_from_label(label: str) -> str | None:
    """The category a ``category``/``catagory`` value names, or None when it names none."""
    return _LABELS.get(_norm_label(label))


def _category_from_id_tokens(item_id: str) -> str | None:
    found = {cat for code, cat in _ID_CODES for tok in _TOKEN.findall(item_id) if tok == code}
    return found.pop() if len(found) == 1 else None


def category_from_id(item_id: str) -> str | None:
    """The category an id names (``MSR_12`` -> multi-step reasoning), or None.

    A whole token (``SA``, ``PBL``, ``MSR``, upper case) is looked for first; when no single
    category's token is found, the first of ``MSR``, ``PBL``, ``SA`` that occurs as a substring.
    """
    by_token = _category_from_id_tokens(item_id)
    if by_token is not None:
        return by_token
    for code, cat in _ID_CODES:
        if code in item_id:
            return cat
    return None


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

    def __init__(self, path: Path, images_dir: Path | None):
        self.path = path
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
        fld = self._opt_str(value, "field", ctx, required=(fmt == "released"))
        sub = self._opt_str(value, "subfield", ctx)
        if sub is None:
            sub = self._opt_str(value, "sub_field", ctx)
        if fmt == "released":
            question, gt = self._conversations(value["conversations"], ctx)
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
                        gt_answer=gt, answer=answer, model=model, source=(str(self.path), ctx.row))

    def _opt_str(self, value: Mapping[str, Any], key: str, ctx: _Ctx, *, required: bool = False) -> str | None:
        v = value.get(key)
        if v is None:
            if required:
                raise ctx.error("missing field", key)
            return None
        if not isinstance(v, str):
            raise ctx.error(f"must be a string, not {type(v).__name__}", key)
        return v

    def _category(self, value: Mapping[str, Any], item_id: str, ctx: _Ctx) -> str:
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
            by_id = _category_from_id_tokens(item_id)
            if by_id is not None and by_id != cat:
                raise ctx.error(f"category {label!r} contradicts the id, which marks "
                                f"{CATEGORY_CODES[by_id]}", key)
            return cat
        cat = category_from_id(item_id)
        if cat is None:
            raise ctx.error("no category: the row has no 'category'/'catagory' and the id contains "
                            "none of SA, PBL, MSR", "catagory")
        return cat

    def _conversations(self, conv: Any, ctx: _Ctx) -> tuple[tuple[Segment, ...], tuple[Segment, ...] | None]:
        if not isinstance(conv, list):
            raise ctx.error(f"must be a list of turns, not {type(conv).__name__}", "conversations")
        human: tuple[Segment, ...] | None = None
        gpt: tuple[Segment, ...] | None = None
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
                gpt = segs
        if human is None:
            raise ctx.error("no 'human' turn (the question)", "conversations")
        return human, gpt


def _read(path: str | Path, images_dir: str | Path | None, limit: int | None, skip_unreadable: bool,
          only: Format | None) -> Loaded:
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
    reader = _Reader(p, None if images_dir is None else Path(images_dir))
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
               skip_unreadable: bool = False) -> Loaded:
    """Read MMIE items from a released or scorer-format file (JSON list or JSONL).

    ``images_dir``: the folder image paths are relative to (default: the file's folder).
    ``limit``: only the first ``limit`` rows are read (and their images checked).
    ``skip_unreadable``: leave out rows with an image that does not decode, listing them in
    :attr:`Loaded.skipped`, instead of raising.  Everything else wrong raises DataError.
    """
    return _read(path, images_dir, limit, skip_unreadable, None)


def load_answers(path: str | Path, images_dir: str | Path | None = None
                 ) -> dict[str, tuple[str | None, tuple[Segment, ...]]]:
    """A model's native interleaved answers from a scorer-format file: id -> (model, answer).

    Every row must carry an ``answer`` (a list of entries, or a string); a released-format file,
    a row without an answer, and any bad input raise DataError.
    """
    loaded = _read(path, images_dir, None, False, "scorer")
    out: dict[str, tuple[str | None, tuple[Segment, ...]]] = {}
    for item in loaded.items:
        if item.answer is None:
            raise DataError(str(path), "missing field (a native answer is needed)",
                            row=f"{item.source[1]} (id {item.id!r})", column="answer")
        out[item.id] = (item.model, item.answer)
    return out
