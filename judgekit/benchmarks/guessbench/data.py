"""Reading GuessBench build sets from a folder.

The layout is the authors' (``data/N/``), one folder per build set::

    ROOT/
      1/   1.png 2.png 3.png Hint_1.txt Hint_2.txt Hint_3.txt Answer.txt
      2/   ...
      ...

``1.png`` .. ``3.png`` are the build at three stages of completion (the dynamic task shows them
in turn; the static task shows only ``3.png``), ``Hint_k.txt`` is the hint given with image k
and ``Answer.txt`` the concept.  Sets are ordered by folder name read as a number; names that
are not numbers come after, in string order.  Hidden entries, files and the folders named in
``skip`` (by default ``example`` and ``retrieval``, where the shipped sample keeps its one-shot
example and its retrieval images) are not sets.

Text files are UTF-8, read as the authors' code reads them (``open(path).read()`` under a UTF-8
locale): ``\\r\\n`` and ``\\r`` are read as ``\\n``, and a byte-order mark at the start stays, as
U+FEFF (``drop_bom=True`` drops it).  A hint is kept exactly as read, trailing spaces and line
breaks included, as the authors' code puts it into the prompt (the released files end without a
line break).  The answer (the gold, and the one-shot example's answer in its prompt) is kept as
read too: a final line break stays, so no reply matches it, as in the authors' code
(``strip_answer=True`` strips surrounding white space; the released files have none).  The
answer, BOM and surrounding white space aside, must hold a letter or digit (a bare ``.`` loses its
period and would match every reply).  :func:`load_notes` says, one line per kind, how many files
hold a BOM or an answer with surrounding white space.  Images are passed on as their bytes, the
type read from the bytes, not the file name; each is checked with Pillow first (a PNG's chunks and CRCs, which catches truncated and
damaged files; any other type is decoded).

Nothing is read from outside the data folder (for :func:`load_set` alone, the set's folder): a
set folder or file that is a symlink leading out of it, or a symlink loop, is refused with the
message every loader gives (:mod:`judgekit.datapaths`).

Anything missing or malformed raises :class:`~judgekit.errors.DataError` naming the file and the
set, e.g. ``.../17/Hint_2.txt: set 17: missing Hint_2.txt``.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Collection

from judgekit.blobs import sniff_mime
from judgekit.datapaths import PathRefused, resolve_inside
from judgekit.errors import DataError
from judgekit.types import ImagePart

from ...plural import plural
from .hints import letter_count

__all__ = ["GuessSet", "load_set", "load_sets", "load_notes", "set_folders", "IMAGE_FILES", "HINT_FILES",
           "ANSWER_FILE", "DEFAULT_SKIP", "SHORT_MAX_LETTERS", "BOM"]

IMAGE_FILES = ("1.png", "2.png", "3.png")
HINT_FILES = ("Hint_1.txt", "Hint_2.txt", "Hint_3.txt")
ANSWER_FILE = "Answer.txt"
#: root folders that are never build sets: the sample's one-shot example and retrieval images
DEFAULT_SKIP: frozenset[str] = frozenset({"example", "retrieval"})
#: an answer of at most this many letters (spaces not counted) is "short", as in the paper
SHORT_MAX_LETTERS = 8

_NUMBER = re.compile(r"[0-9]+")
#: a UTF-8 byte-order mark as text mode reads it
BOM = "\ufeff"


def _clean(answer: str) -> str:
    """The answer without a BOM and surrounding white space (for its letter count and the checks)."""
    return answer.removeprefix(BOM).strip()


@dataclass(frozen=True, slots=True)
class GuessSet:
    """One build set: the answer, the three stages of the build and the three hints."""

    set_id: str
    """The folder name (``"17"``)."""
    answer: str
    """``Answer.txt`` as the authors' code reads it, case kept (``"Glass of Milk"``): a BOM and
    surrounding white space stay unless the load was told to drop or strip them."""
    images: tuple[ImagePart, ImagePart, ImagePart]
    """``1.png``, ``2.png``, ``3.png``: the build about 40%, 70% and fully built."""
    hints: tuple[str, str, str]
    """``Hint_1.txt`` .. ``Hint_3.txt`` exactly as read."""
    folder: Path
    """Where the set was read from."""

    @property
    def letters(self) -> int:
        """N: the letters of the answer, spaces not counted (a BOM and surrounding white space aside)."""
        return letter_count(_clean(self.answer))

    @property
    def is_short(self) -> bool:
        """Whether the answer has at most 8 letters (the paper's short/long split)."""
        return self.letters <= SHORT_MAX_LETTERS


def _sort_key(name: str) -> tuple[int, int, str]:
    if _NUMBER.fullmatch(name):
        return 0, int(name), name
    return 1, 0, name


def set_folders(root: Path, *, skip: Collection[str] = DEFAULT_SKIP) -> list[Path]:
    """The set folders under ``root`` in benchmark order (numeric names by number, then the rest).

    Raises DataError when ``root`` is missing or not a folder; an empty list is returned as is.
    """
    root = Path(root)
    if not root.exists():
        raise DataError(str(root), "no such folder (expected the GuessBench data folder: 1/, 2/, ...)")
    if not root.is_dir():
        raise DataError(str(root), "not a folder (expected the GuessBench data folder: 1/, 2/, ...)")
    base = root.resolve()
    try:
        entries = [p for p in root.iterdir() if not p.name.startswith(".") and p.name not in skip]
    except OSError as e:
        raise DataError(str(root), f"cannot list the folder: {e.strerror or e}") from None
    for p in entries:  # a set folder (or file) that is a symlink leading out, or a loop, is refused
        if p.is_symlink():
            _inside(base, p, p.name)
    folders = [p for p in entries if p.is_dir()]
    return sorted(folders, key=lambda p: _sort_key(p.name))


def _inside(base: Path, path: Path, set_id: str) -> Path:
    try:
        return resolve_inside(base, path)
    except PathRefused as e:
        raise DataError(str(path), f"set {set_id}: {e}") from None


def load_sets(root: Path, limit: int | None = None, *,
              skip: Collection[str] = DEFAULT_SKIP, drop_bom: bool = False,
              strip_answer: bool = False) -> list[GuessSet]:
    """Load the build sets under ``root``, in order; with ``limit``, only the first ``limit``.

    ``skip`` names root folders that are not sets; ``drop_bom`` and ``strip_answer``: see
    :func:`load_set`.  Raises DataError for a missing root, a root with no set folders, and any
    malformed set (see :func:`load_set`).
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")
    folders = set_folders(root, skip=skip)
    if not folders:
        raise DataError(str(root), "no build sets found (expected folders 1/, 2/, ... each holding "
                                   + ", ".join((*IMAGE_FILES, *HINT_FILES, ANSWER_FILE)) + ")")
    if limit is not None:
        folders = folders[:limit]
    base = Path(root).resolve()
    return [load_set(f, root=base, drop_bom=drop_bom, strip_answer=strip_answer) for f in folders]


def load_set(folder: Path, *, root: Path | None = None, drop_bom: bool = False,
             strip_answer: bool = False) -> GuessSet:
    """Load one build set folder; raises DataError naming the set and the file at fault.  No
    file is read from outside ``root`` (default: the set's own folder).  Text as the authors'
    code reads it, unless ``drop_bom`` (a leading byte-order mark dropped from every text file)
    or ``strip_answer`` (the answer stripped of surrounding white space)."""
    folder = Path(folder)
    set_id = folder.name
    if not folder.is_dir():
        raise DataError(str(folder), f"set {set_id}: no such folder")
    base = Path(root).resolve() if root is not None else folder.resolve()
    for name in (*IMAGE_FILES, *HINT_FILES, ANSWER_FILE):  # report the first missing file before reading
        _inside(base, folder / name, set_id)
        if not (folder / name).is_file():
            raise DataError(str(folder / name), f"set {set_id}: missing {name}")
    answer = _read_text(folder, ANSWER_FILE, drop_bom)
    if strip_answer:
        answer = answer.strip()
    if not _clean(answer):
        raise DataError(str(folder / ANSWER_FILE), f"set {set_id}: {ANSWER_FILE} is empty")
    if not any(c.isalnum() for c in answer):  # "." would match every reply (the gold loses its period)
        raise DataError(str(folder / ANSWER_FILE), f"set {set_id}: {ANSWER_FILE} has no letter or digit")
    hints = []
    for name in HINT_FILES:
        text = _read_text(folder, name, drop_bom)
        if not text.removeprefix(BOM).strip():
            raise DataError(str(folder / name), f"set {set_id}: {name} is empty")
        hints.append(text)
    images = tuple(_read_image(folder, name) for name in IMAGE_FILES)
    return GuessSet(set_id=set_id, answer=answer, images=images,  # type: ignore[arg-type]
                    hints=(hints[0], hints[1], hints[2]), folder=folder)


def load_notes(sets: Collection[GuessSet], example: GuessSet | None = None) -> list[str]:
    """One line per kind of text the authors' code reads oddly, with the count: a byte-order mark
    in ``Answer.txt`` or a hint file (kept: in the prompt, and no reply matches such a gold), an
    answer with surrounding white space (a final line break: no reply matches)."""
    every = [*sets, *([example] if example is not None else [])]
    answer_bom = sum(1 for s in every if s.answer.startswith(BOM))
    hint_bom = sum(1 for s in every for h in s.hints if h.startswith(BOM))
    spaced = sum(1 for s in every if s.answer.removeprefix(BOM) != s.answer.removeprefix(BOM).strip())
    notes = []
    if answer_bom:
        notes.append(f"{plural(answer_bom, f'{ANSWER_FILE} file')} {'starts' if answer_bom == 1 else 'start'} "
                     "with a UTF-8 byte-order mark: kept, as the "
                     "authors' file.read() keeps it, so no reply matches that gold (options.drop_bom = true "
                     "drops it)")
    if hint_bom:
        notes.append(f"{plural(hint_bom, 'hint file')} {'starts' if hint_bom == 1 else 'start'} with a UTF-8 "
                     "byte-order mark: kept in the prompt, as the "
                     "authors' file.read() keeps it (options.drop_bom = true drops it)")
    if spaced:
        notes.append(f"{plural(spaced, f'{ANSWER_FILE} file')} {'has' if spaced == 1 else 'have'} white space "
                     "around the answer (a final line break): "
                     "kept, as the authors' file.read() keeps it, so no reply matches that gold "
                     "(options.strip_answer = true strips it)")
    return notes


def _read_text(folder: Path, name: str, drop_bom: bool = False) -> str:
    path = folder / name
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(str(path), f"set {folder.name}: cannot read {name}: {e.strerror or e}") from e
    try:
        text = raw.decode("utf-8-sig" if drop_bom else "utf-8")
    except UnicodeDecodeError as e:
        raise DataError(str(path), f"set {folder.name}: {name} is not UTF-8 (byte {e.start})") from e
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_image(folder: Path, name: str) -> ImagePart:
    path = folder / name
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DataError(str(path), f"set {folder.name}: cannot read {name}: {e.strerror or e}") from e
    mime = sniff_mime(data)
    if mime is None:
        what = "is empty" if not data else "is not an image (not PNG, JPEG, WebP, GIF or BMP)"
        raise DataError(str(path), f"set {folder.name}: {name} {what}")
    from PIL import Image  # Pillow only when images are loaded

    try:
        with Image.open(io.BytesIO(data)) as im:
            if mime == "image/png":
                im.verify()  # walks every chunk and checks its CRC, without decoding the pixels
            else:
                im.load()  # Pillow's verify() checks nothing for JPEG and the rest: decode them
    except Exception as e:  # Pillow raises many types for broken files
        why = f"{type(e).__name__}: {e}"
        raise DataError(str(path), f"set {folder.name}: {name} does not decode ({why})") from e
    return ImagePart(data=data, mime=mime)
