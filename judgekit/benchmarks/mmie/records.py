"""MMIE's records (a question's segments, an item, what a load gave) and its categories.

Category rules (:data:`CategoryRule`, applied by the loader):

``id`` (the default, the reference scorer's)
    The authors' ``get_prompt`` and their averaging test the id alone, in this order:
    ``"SA" in id`` -> situational analysis, else ``"PBL" in id`` -> project-based learning, else
    ``"MSR" in id`` -> multi-step reasoning (case-sensitive substrings, so ``MSR_SAMPLE`` is
    situational analysis there too).  The row's ``category``/``catagory`` is read only when the id
    holds none of the three (the reference cannot score such a row at all).
``label`` (``options.category_from_label``)
    The row's ``category``/``catagory`` first (``Situational analysis``, ``project-based
    learning``, ``MSR``, ... any case, spaces, hyphens or underscores), the id's rule when the
    row has none.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from judgekit.errors import DataError
from judgekit.types import ImagePart

__all__ = [
    "SA",
    "PBL",
    "MSR",
    "CATEGORIES",
    "CATEGORY_CODES",
    "CategoryRule",
    "Format",
    "Segment",
    "MMIEItem",
    "SkippedRow",
    "Loaded",
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
CategoryRule = Literal["id", "label"]

_LABELS: dict[str, str] = {
    "situational analysis": SA, "sa": SA,
    "project based learning": PBL, "pbl": PBL,
    "multi step reasoning": MSR, "msr": MSR,
}
# the reference's order of tests: SA first, so an id holding both "SA" and "MSR" is SA
_ID_CODES: tuple[tuple[str, str], ...] = (("SA", SA), ("PBL", PBL), ("MSR", MSR))


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of an interleaved question or answer: a text, or an image file."""

    kind: Literal["text", "image"]
    text: str | None = None
    """The text of a text segment (as written, may be empty); None for an image, and for the text
    segment standing for an answer's first entry when it has neither text nor image (it writes
    nothing, but it is the answer's opening, as the reference's scorer reads it)."""
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
    """One of :data:`CATEGORIES` ('' for a native answer read by ``load_answers``)."""
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
    gt_lead_text: str | None = None
    """The text of the ground truth's first entry as written (None when that entry has no text,
    or there is no ground truth): what the reference gives the multi-step reasoning scorer."""

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
    """What :func:`~judgekit.benchmarks.mmie.data.load_items` read: the items, the rows it
    skipped, and the file's format."""

    items: list[MMIEItem]
    skipped: list[SkippedRow] = field(default_factory=list)
    format: Format = "released"

    def __iter__(self) -> Iterator[MMIEItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def _norm_label(label: str) -> str:
    return " ".join(re.split(r"[\s_\-]+", label.strip().lower()))


def category_from_label(label: str) -> str | None:
    """The category a ``category``/``catagory`` value names, or None when it names none."""
    return _LABELS.get(_norm_label(label))


def category_from_id(item_id: str) -> str | None:
    """The category the reference reads from an id, or None when it holds no code.

    ``"SA" in id`` first, then ``"PBL"``, then ``"MSR"``: case-sensitive substrings, in the
    reference's order (``MSR_SAMPLE_1`` -> situational analysis, as the reference scores it).
    """
    for code, cat in _ID_CODES:
        if code in item_id:
            return cat
    return None
