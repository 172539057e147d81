"""What an MMIE run prepares and what its flow keeps, beneath its flow, results and report: the
answering systems, the prepared run, and per (system, item) the answer made, the images drawn for
it and each scorer's score."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...parsers.mmie import ScoreParse
from ...types import ImagePart
from .options import Options
from .records import MMIEItem, Segment

__all__ = ["System", "Prepared", "GeneratedImage", "Judged", "Outcome"]


@dataclass(frozen=True)
class System:
    """One answering system: how its answers come about."""

    name: str
    kind: Literal["integrated", "text", "native"]
    candidate: str | None = None  # the answering model alias
    generator: str | None = None  # integrated: the text-to-image alias
    answers: dict[str, tuple[str | None, tuple[Segment, ...]]] | None = None  # native: id -> answer


@dataclass
class Prepared:
    spec: Any
    options: Options
    items: list[MMIEItem]
    skipped: list[Any]
    systems: list[System]
    judge: str  # the first scorer
    human: dict[str, float] | None = None
    human_system: str | None = None
    #: the panel of scorers (``roles.judges``, or the one ``roles.judge``); ``judge`` is its first
    judges: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.judges:
            self.judges = [self.judge]
        elif self.judges[0] != self.judge:
            raise ValueError(f"the first of the panel ({self.judges[0]!r}) is not the judge ({self.judge!r})")


@dataclass
class GeneratedImage:
    description: str
    seed: int
    image: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class Judged:
    """One scorer's score of one answer."""

    reply: str | None = None
    parse: ScoreParse | None = None
    error: str | None = None  # the scoring call failed
    aborted: bool = False  # the run stopped before the call was made


@dataclass
class Outcome:
    """One system's answer to one item, and each scorer's score of it."""

    system: str
    item: MMIEItem
    raw_answer: str | None = None  # the LVLM's text (integrated / text)
    answer: tuple[Segment, ...] | None = None  # the interleaved answer that was scored
    images: list[GeneratedImage] = field(default_factory=list)
    #: scorer alias -> its score, in the panel's order (empty when the answer was not scored)
    judged: dict[str, Judged] = field(default_factory=dict)
    images_attached: int = 0
    images_dropped: int = 0
    texts_dropped: int = 0
    skipped: str | None = None  # why the reference's rules leave the row unscored
    error: str | None = None  # making the answer failed (a scoring call's failure is its Judged's)
    stage: str | None = None  # where it failed
    aborted: bool = False  # the answer was not made (the run stopped)
    #: the item's question images, read once per item and shared by every system's scoring
    question_images: dict[str, ImagePart] = field(default_factory=dict, repr=False)
