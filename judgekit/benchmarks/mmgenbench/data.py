"""MMGenBench's inputs: the released TSVs with their label-index JSON, a folder of images (any
domain) with an optional label-index JSON, or a TSV with base64 images and a patterns column.

Released layout
    MMGenBench as released (Hugging Face ``lerogo/MMGenBench``) is ``MMGenBench-Test.tsv``
    (VLMEvalKit's TSV: ``index``, ``image`` as base64) with ``MMGenBench-Test-label-index.json``
    beside it, and ``MMGenBench-Domain.tsv`` with no labels.  ``data`` names the TSV; the label
    index beside it, ``<name>-label-index.json``, is read when it exists (``labels`` names
    another).  The other files of the release (``*-label-count.json``, ``MMGenBench-Test.json``,
    ``MMGenBench-Domain.json``) are not read by the authors' evaluation code, nor here.

Folder
    ``data`` names a folder of images (``.png .jpg .jpeg .webp .bmp .gif``; sub-folders are not
    read), or a folder holding ``images/`` and, optionally, ``labels.json`` (the shipped sample's
    layout).  An item's id is its file stem.  Its *index* (what the label-index JSON refers to) is
    the stem as an integer when every stem is one (``0.png``, ``17.jpg``; the released layout),
    else its position in name order.  Nothing is read from outside the folder: an image (or
    ``images/``, or ``labels.json``) that is a symlink leading out of it, or a symlink loop, is an
    error naming the file (the rule of :mod:`judgekit.datapaths`, shared by every loader).
Label index
    MMGenBench-Test's label file: ``{"Artistic": [0, 5, ...], "Color": [...], ...}``, pattern name
    -> indices of the images showing it; an image may be in several patterns, or in none.  An
    index that names no image is an error naming the file, pattern and index.
TSV
    A header row and the columns ``index`` and ``image`` (base64), and optionally ``patterns``
    (comma-separated names) or ``category``, read only when no label-index JSON goes with the TSV.
    An ``image`` of at most 64 characters that equals another row's ``index`` is a pointer to that
    row's image (VLMEvalKit's convention, one hop).  A label index's indices are the ``index``
    column's values (as the reference's ``sim[str(index)]``); one that names no row is an error.

Every image is checked to decode (Pillow; JPEGs at reduced scale, which still finds truncated
files).  An unreadable image is an error naming the file (and the TSV row); with
``skip_unreadable`` it is left out and listed in :attr:`LoadedSet.skipped` instead.

Folder images are read from disk when a stage needs them (:meth:`MMGenItem.image`), so a
10,000-image folder does not sit in memory; TSV images are decoded once.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...datapaths import PathRefused, resolve_inside, shown_path
from ...errors import DataError
from ...image_cells import image_mime
from ...plural import plural
from ...tables import _raise_field_limit, read_json, read_rows
from ...types import ImagePart

__all__ = ["MMGenItem", "LoadedSet", "IMAGE_SUFFIXES", "PATTERNS", "LABEL_INDEX_SUFFIX", "load_data", "load_folder",
           "load_tsv", "load_label_index", "released_label_index"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif")
#: MMGenBench-Test's 13 image patterns (paper, Table 1; any other names are accepted too)
PATTERNS = ("Artistic", "Color", "Surreal", "Natural", "Position", "Contextual", "Technology", "Symbol",
            "Text", "Geometry", "Count", "Motion", "Orientation")
_POINTER_MAX = 64
_WS = re.compile(r"\s+")


@dataclass
class MMGenItem:
    """One image to caption, regenerate and compare."""

    item_id: str
    index: int
    source: str  # the file (folder layout) or "file.tsv, row N"
    patterns: tuple[str, ...] = ()
    path: Path | None = None  # folder layout: read on demand
    data: bytes | None = None  # TSV layout: decoded once
    mime: str = "image/png"

    def image(self) -> ImagePart:
        """The image as a message part (reads the file for folder items; a file that can no
        longer be read is a DataError naming it)."""
        if self.data is not None:
            return ImagePart(data=self.data, mime=self.mime)
        try:
            data = self.path.read_bytes()
        except OSError as e:
            raise DataError(str(self.path), f"cannot read the image: {e.strerror or e}") from None
        return ImagePart(data=data, mime=self.mime)


@dataclass
class LoadedSet:
    items: list[MMGenItem]
    source: str
    labels: str | None = None  # the label-index file used, if any
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why) of unreadable images
    repeats: dict[tuple[str, int], int] = field(default_factory=dict)
    """(pattern, index) -> how many times the label index lists the index in that pattern, for
    those it lists more than once (the reference's SIM summary counts each listing)."""

    @property
    def patterns(self) -> dict[str, list[str]]:
        """Pattern -> item ids, in the order patterns first appear (only patterns with items)."""
        out: dict[str, list[str]] = {}
        for it in self.items:
            for p in it.patterns:
                out.setdefault(p, []).append(it.item_id)
        return out

    def listed_patterns(self, *, once: bool = False) -> dict[str, list[str]]:
        """:attr:`patterns` with each item id as many times as the label index lists it in the
        pattern (the reference's counting); ``once``: each id once."""
        found = self.patterns
        if once or not self.repeats:
            return found
        index_of = {it.item_id: it.index for it in self.items}
        return {p: [i for i in ids for _ in range(self.repeats.get((p, index_of[i]), 1))] for p, ids in found.items()}

    def notes(self) -> list[str]:
        """One line per kind of thing in the data the reference handles oddly, with the count."""
        if not self.repeats:
            return []
        kept = {it.index for it in self.items}
        extra = sum(n - 1 for (_, idx), n in self.repeats.items() if idx in kept)
        pairs = sum(1 for (_, idx) in self.repeats if idx in kept)
        if not pairs:
            return []
        return [f"{plural(pairs, 'image')} listed more than once in a pattern of the label index "
                f"({plural(extra, 'extra listing')}): each listing counts in that pattern's SIM, as in the reference "
                "(options.count_listed_index_once = true: once)"]


#: the released label index of ``<name>.tsv`` is ``<name>-label-index.json`` beside it
LABEL_INDEX_SUFFIX = "-label-index.json"


def load_data(path: str | Path, *, labels: str | Path | None = None, limit: int | None = None,
              skip_unreadable: bool = False) -> LoadedSet:
    """A folder or a TSV (by what ``path`` is); ``labels`` overrides the label index found beside
    the data (a folder's ``labels.json``, a TSV's ``<name>-label-index.json``)."""
    p = Path(path)
    if p.is_dir():
        return load_folder(p, labels=labels, limit=limit, skip_unreadable=skip_unreadable)
    if not p.exists():
        raise DataError(str(p), "no such file or folder")
    if p.suffix.lower() in (".tsv", ".txt"):
        if labels is None:
            labels = released_label_index(p)
        return load_tsv(p, labels=labels, limit=limit, skip_unreadable=skip_unreadable)
    raise DataError(str(p), "expected a folder of images or a .tsv file")


def released_label_index(tsv: Path) -> Path | None:
    """``<name>-label-index.json`` beside ``<name>.tsv`` if it exists (a symlink leading out of the
    TSV's folder is refused, as every loader's)."""
    found = tsv.with_name(tsv.stem + LABEL_INDEX_SUFFIX)
    if not found.exists() and not found.is_symlink():
        return None
    try:
        resolve_inside(tsv.parent.resolve(), found)
    except PathRefused as e:
        raise DataError(str(found), str(e)) from None
    return found


# -- folder ---------------------------------------------------------------------------------------
def load_folder(folder: str | Path, *, labels: str | Path | None = None, limit: int | None = None,
                skip_unreadable: bool = False) -> LoadedSet:
    root = Path(folder)
    base = root.resolve()  # nothing is read from outside it (judgekit.datapaths)
    images_dir = root / "images" if (root / "images").is_dir() else root
    try:
        resolve_inside(base, images_dir)
        listed = [f for f in images_dir.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES]
    except PathRefused as e:
        raise DataError(str(images_dir), str(e)) from None
    except OSError as e:
        raise DataError(str(images_dir), f"cannot list the folder: {e.strerror or e}") from None
    for f in listed:  # a symlink out of the data folder, or a loop, is refused before anything is read
        try:
            resolve_inside(base, f)
        except PathRefused as e:
            raise DataError(str(f), str(e)) from None
    files = sorted((f for f in listed if f.is_file()),
                   key=lambda f: (_numeric(f.stem) is None, _numeric(f.stem) or 0, f.name))
    if not files:
        tables = sorted(f.name for f in listed_tables(images_dir))
        hint = (f"; it holds {', '.join(tables)}: set data to one of them (the released MMGenBench layout)"
                if tables else "")
        raise DataError(str(images_dir), f"no images ({', '.join(IMAGE_SUFFIXES)}) in this folder{hint}")
    stems = [f.stem for f in files]
    dup = _first_duplicate(stems)
    if dup is not None:
        raise DataError(str(images_dir), f"two images share the name {dup!r} (ids are file stems)")
    numeric = all(_numeric(s) is not None for s in stems)
    indices = [_numeric(s) if numeric else k for k, s in enumerate(stems)]
    if numeric:
        seen: dict[int, str] = {}
        for f, idx in zip(files, indices):
            if idx in seen:
                raise DataError(str(f), f"index {idx} again (also {seen[idx]}): names like 1.png and 01.png "
                                        f"are the same image index")
            seen[idx] = f.name
    label_file = Path(labels) if labels is not None else (root / "labels.json" if (root / "labels.json").exists() else None)
    if labels is None and label_file is not None:  # the folder's own labels.json stays inside it too
        try:
            resolve_inside(base, label_file)
        except PathRefused as e:
            raise DataError(str(label_file), str(e)) from None
    by_index: dict[int, list[str]] = {}
    repeats: dict[tuple[str, int], int] = {}
    if label_file is not None:
        by_index = load_label_index(label_file, known=set(indices), of="the folder", repeats=repeats)
    items: list[MMGenItem] = []
    skipped: list[tuple[str, str]] = []
    for f, idx in zip(files, indices):
        if limit is not None and len(items) >= limit:
            break
        try:
            data = f.read_bytes()
        except OSError as e:
            why = f"cannot read: {e.strerror or e}"
            if not skip_unreadable:
                raise DataError(str(f), why) from None
            skipped.append((str(f), why))
            continue
        why = _undecodable(data)
        if why is not None:
            if not skip_unreadable:
                raise DataError(str(f), f"{why} (set options.skip_unreadable = true to leave such images out)")
            skipped.append((str(f), why))
            continue
        items.append(MMGenItem(f.stem, idx, str(f), tuple(by_index.get(idx, ())), path=f,
                               mime=image_mime(data) or "image/png"))
    return LoadedSet(items, str(root), str(label_file) if label_file else None, skipped, repeats)


def load_label_index(path: str | Path, *, known: set[int] | None = None,
                     of: str = "the data", repeats: dict[tuple[str, int], int] | None = None) -> dict[int, list[str]]:
    """A label-index JSON as index -> patterns (in the file's order).  With ``known``, an index
    that is not among them is an error (naming ``of``, where the images are).  ``repeats``, when
    given, is filled with (pattern, index) -> times listed, for indices a pattern lists more than once."""
    p = Path(path)
    raw = read_json(p)  # unreadable, not UTF-8 or bad JSON: a DataError naming the file
    if not isinstance(raw, dict):
        raise DataError(str(p), "expected an object mapping pattern name -> list of image indices")
    out: dict[int, list[str]] = {}
    for pattern, indices in raw.items():
        if not isinstance(indices, list):
            raise DataError(str(p), f"pattern {pattern!r}: expected a list of image indices", column=pattern)
        for v in indices:
            if isinstance(v, bool) or not isinstance(v, (int, str)) or _numeric(str(v)) is None:
                raise DataError(str(p), f"pattern {pattern!r}: {v!r} is not an image index", column=pattern)
            idx = int(v)
            if known is not None and idx not in known:
                raise DataError(str(p), f"pattern {pattern!r}: index {idx} names no image of {of}",
                                column=pattern)
            names = out.setdefault(idx, [])
            if pattern not in names:
                names.append(pattern)
            elif repeats is not None:
                repeats[(pattern, idx)] = repeats.get((pattern, idx), 1) + 1
    return out


# -- TSV ------------------------------------------------------------------------------------------
def load_tsv(path: str | Path, *, labels: str | Path | None = None, limit: int | None = None,
             skip_unreadable: bool = False) -> LoadedSet:
    """A TSV of base64 images; patterns from the label-index JSON ``labels`` when given, else from
    a ``patterns`` or ``category`` column if there is one."""
    p = str(path)
    _raise_field_limit()
    header, rows = read_rows(p, delimiter="\t", kind="TSV")
    for col in ("index", "image"):
        if col not in header:
            raise DataError(p, f"no column {col!r} (columns: {', '.join(header)})")
    pos = {h: k for k, h in enumerate(header)}
    label_col = "patterns" if "patterns" in pos else ("category" if "category" in pos else None)
    index_of: dict[str, int] = {}
    cells_of: list[tuple[int, str, list[str]]] = []
    for n, cells in rows:
        value = _numeric(cells[pos["index"]])
        if value is None:
            raise DataError(p, f"index {shown_path(cells[pos['index']].strip())} is not an integer", row=n,
                            column="index")
        idx = str(value)  # 7 and 007 are one index, as pandas reads them
        if idx in index_of:
            raise DataError(p, f"index {idx} appears twice (first on row {index_of[idx]})", row=n, column="index")
        index_of[idx] = n
        cells_of.append((n, idx, cells))
    raw_image = {idx: cells[pos["image"]].strip() for _, idx, cells in cells_of}
    by_index: dict[int, list[str]] | None = None
    repeats: dict[tuple[str, int], int] = {}
    if labels is not None:  # checked against every row, also under a limit
        by_index = load_label_index(labels, known={int(i) for i in index_of}, of=Path(p).name, repeats=repeats)
    items: list[MMGenItem] = []
    skipped: list[tuple[str, str]] = []
    for n, idx, cells in cells_of:
        if limit is not None and len(items) >= limit:
            break
        where = f"{p}, row {n}"
        raw = raw_image[idx]
        if not raw:
            raise DataError(p, "empty image", row=n, column="image")
        if len(raw) <= _POINTER_MAX and raw in raw_image and raw != idx:
            target = raw_image[raw]
            if len(target) <= _POINTER_MAX and target in raw_image:
                raise DataError(p, f"image pointer to index {raw}, whose image is itself a pointer", row=n,
                                column="image")
            raw = target
        try:
            data = base64.b64decode(_WS.sub("", raw), validate=True)
            why = _undecodable(data)
        except (binascii.Error, ValueError) as e:
            why = f"bad base64 ({e})"
        if why is not None:
            if not skip_unreadable:
                raise DataError(p, f"{why} (set options.skip_unreadable = true to leave such rows out)", row=n,
                                column="image")
            skipped.append((where, why))
            continue
        patterns: tuple[str, ...] = ()
        if by_index is not None:
            patterns = tuple(by_index.get(int(idx), ()))
        elif label_col is not None:
            patterns = tuple(dict.fromkeys(x.strip() for x in cells[pos[label_col]].split(",") if x.strip()))
        items.append(MMGenItem(idx, int(idx), where, patterns, data=data, mime=image_mime(data) or "image/png"))
    return LoadedSet(items, p, str(labels) if labels is not None else None, skipped, repeats)


# -- helpers ---------------------------------------------------------------------------------------
def _numeric(s: str) -> int | None:
    s = s.strip()  # (at most 18 digits: a longer one is no index, and int() refuses > 4300 digits)
    return int(s) if s.isdigit() and s.isascii() and len(s) <= 18 else None


def listed_tables(folder: Path) -> list[Path]:
    """The TSVs directly in ``folder`` (for the hint when ``data`` names the release's folder)."""
    try:
        return [f for f in folder.iterdir() if f.suffix.lower() == ".tsv" and f.is_file()]
    except OSError:
        return []


def _first_duplicate(values: list[str]) -> str | None:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def _undecodable(data: bytes) -> str | None:
    """Why Pillow cannot decode these bytes, or None when it can."""
    if image_mime(data) is None:
        return "not an image (unknown format)"
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.format == "JPEG":
                im.draft("RGB", (64, 64))  # decode at 1/8 scale: fast, still reads every scan
            im.load()
            if not (im.width and im.height):
                return "an image of size 0"
    except Exception as e:  # noqa: BLE001 - any decoder failure means unreadable
        return f"unreadable image ({type(e).__name__}: {e})"
    return None
