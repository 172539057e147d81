"""The report document: what every benchmark hands to the one report layer.

A benchmark builds a :class:`ReportDoc` (its charts, its tables and one :class:`Item` per thing a
reader wants to look at); :func:`judgekit.report.write.write_report` turns it into the run
folder's ``report.json`` (images made into thumbnails under ``report_files/``) and renders
``report.html`` from that.  ``judgekit report RUN_DIR`` renders again from ``report.json`` alone,
so a run folder copied elsewhere, with its cache pruned or deleted, still has its whole report.

The model is plain data, JSON both ways (:meth:`ReportDoc.to_json` / :meth:`ReportDoc.from_json`)::

    ReportDoc
      title, benchmark, meta {key: value}
      headline [Headline]        one figure per candidate (and judge): the leaderboard's rows
      charts [Chart]             grouped bars (with interval whiskers) or stacked shares
      tables [Table]             titled rows of dicts (e.g. agreement, comparisons)
      items [Item]               browsable, searchable
        id, title, tags {name: value} (filters), flags ["failed", "reasked", ...], score
        blocks [Block]           shown in order; consecutive blocks of one ``group`` share a box
          kind   question | answer | baseline | reference | judgment | turn | note
          label  who or what (a candidate, "judge · order B/A", "round 2 · extractor")
          parts  [Part]          text and images interleaved (MMIE answers, GuessBench turns)
          verdict, highlight     a judgment's parsed result; ``highlight`` is the text of the
                                 reply the parser read it from (its last occurrence is marked)
          status ok | failed | reasked | skipped
          meta {key: value}      small facts (tokens, seed, error kind)

Every text is shown as text: the renderer never interprets model output as markup.
Images enter as :class:`Image` (a file path or encoded bytes; or nothing, with the reason); the
writer turns them into thumbnails and stores ``src`` (a path relative to the run folder).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["Image", "Part", "Block", "Item", "Series", "Chart", "Table", "Headline", "ReportDoc",
           "BLOCK_KINDS", "STATUSES", "TONES", "PALETTES", "text", "image"]

BLOCK_KINDS = ("question", "answer", "baseline", "reference", "judgment", "turn", "note")
STATUSES = ("ok", "failed", "reasked", "skipped")
TONES = ("good", "bad", "neutral")
PALETTES = ("categorical", "diverging")


@dataclass
class Image:
    """An image to show.  Give ``path`` (a file) or ``data`` (encoded bytes, e.g. a PNG); with
    neither, ``missing`` says why there is none (the generation failed, the file is gone)."""

    path: Path | None = None
    data: bytes | None = None
    missing: str | None = None
    caption: str | None = None
    """A short line under the image (e.g. "generated, seed 1234")."""
    src: str | None = None
    """Set by the writer: the thumbnail's path relative to the run folder (``report_files/...``)."""
    width: int | None = None
    height: int | None = None
    """Set by the writer: the original image's size in pixels."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k in ("src", "missing", "caption", "width", "height"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Image":
        return cls(missing=d.get("missing"), caption=d.get("caption"), src=d.get("src"),
                   width=d.get("width"), height=d.get("height"))


@dataclass
class Part:
    """One piece of a block: text, or an image."""

    text: str | None = None
    image: Image | None = None
    mono: bool = False
    """Show the text in a fixed-width font (laid-out text such as GuessBench's letter hints)."""

    def to_json(self) -> dict[str, Any]:
        if self.image is not None:
            return {"image": self.image.to_json()}
        return {"text": self.text or "", "mono": True} if self.mono else {"text": self.text or ""}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Part":
        if "image" in d:
            return cls(image=Image.from_json(d["image"]))
        return cls(text=str(d.get("text", "")), mono=bool(d.get("mono", False)))


def text(s: Any, *, mono: bool = False) -> Part:
    """A text part (None shows as an empty text); ``mono``: in a fixed-width font."""
    return Part(text="" if s is None else str(s), mono=mono)


def image(path: Path | str | None = None, data: bytes | None = None, *, missing: str | None = None,
          caption: str | None = None) -> Part:
    """An image part; with no path and no data, a placeholder that says ``missing``."""
    if path is None and data is None and missing is None:
        missing = "no image"
    return Part(image=Image(path=Path(path) if path is not None else None, data=data, missing=missing,
                            caption=caption))


@dataclass
class Block:
    """One box of an item's view (a question, an answer, a judge's reply, a turn)."""

    kind: Literal["question", "answer", "baseline", "reference", "judgment", "turn", "note"]
    label: str
    parts: list[Part] = field(default_factory=list)
    group: str | None = None
    """Consecutive blocks with the same group are drawn in one box under this heading."""
    role: str | None = None
    """For turns: who speaks ("user", "assistant", "extractor", "judge"), which sets the side."""
    verdict: str | None = None
    """A judgment's parsed result as shown (e.g. "A>>B (+2 for the candidate)", "score 4")."""
    highlight: str | None = None
    """The text in the reply the verdict was parsed from; its last occurrence is marked."""
    tone: Literal["good", "bad", "neutral"] | None = None
    """How the verdict reads for the candidate (colours its badge): good (won, right), bad
    (lost, wrong), neutral (tie, a score); None: neutral."""
    status: Literal["ok", "failed", "reasked", "skipped"] | None = None
    meta: dict[str, str] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)
    """(label, href) shown as links in the block's head, hrefs relative to the page (a comparison's
    changed item: the item in each run's report.html, ``run/report.html#item=ID``)."""

    def __post_init__(self) -> None:
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"block kind {self.kind!r}: expected one of {', '.join(BLOCK_KINDS)}")
        if self.status is not None and self.status not in STATUSES:
            raise ValueError(f"block status {self.status!r}: expected one of {', '.join(STATUSES)}")
        if self.tone is not None and self.tone not in TONES:
            raise ValueError(f"block tone {self.tone!r}: expected one of {', '.join(TONES)}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "label": self.label, "parts": [p.to_json() for p in self.parts]}
        for k in ("group", "role", "verdict", "highlight", "tone", "status"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        if self.meta:
            out["meta"] = {str(k): str(v) for k, v in self.meta.items()}
        if self.links:
            out["links"] = [[str(label), str(href)] for label, href in self.links]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Block":
        return cls(kind=d["kind"], label=d.get("label", ""), parts=[Part.from_json(p) for p in d.get("parts", [])],
                   group=d.get("group"), role=d.get("role"), verdict=d.get("verdict"),
                   highlight=d.get("highlight"), tone=d.get("tone"), status=d.get("status"),
                   meta=dict(d.get("meta", {})), links=[(str(a), str(b)) for a, b in d.get("links", [])])

    def images(self) -> list[Image]:
        return [p.image for p in self.parts if p.image is not None]


@dataclass
class Item:
    """One thing to browse: a question with its answers and judgments, a guessing set, an image."""

    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    tags: dict[str, str | list[str]] = field(default_factory=dict)
    """Filterable facts (category, task, pattern); shown as chips and offered as filters.  A list
    value is several values of one tag (an image in two patterns): each is offered and matches."""
    flags: list[str] = field(default_factory=list)
    """Marks such as "failed", "reasked", "skipped": shown in red/amber, and filterable."""
    score: str | None = None
    """A short figure shown beside the title (e.g. "SIM 0.71", "Reward +50")."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": str(self.id), "title": self.title, "blocks": [b.to_json() for b in self.blocks]}
        if self.tags:
            out["tags"] = {str(k): ([str(x) for x in v] if isinstance(v, (list, tuple)) else str(v))
                           for k, v in self.tags.items()}
        if self.flags:
            out["flags"] = list(dict.fromkeys(self.flags))
        if self.score is not None:
            out["score"] = self.score
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Item":
        return cls(id=str(d["id"]), title=d.get("title", ""), blocks=[Block.from_json(b) for b in d.get("blocks", [])],
                   tags=dict(d.get("tags", {})), flags=list(d.get("flags", [])), score=d.get("score"))


@dataclass
class Series:
    """One bar colour of a chart: a value per group, with optional interval ends."""

    name: str
    values: list[float | None]
    low: list[float | None] | None = None
    high: list[float | None] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "values": list(self.values)}
        if self.low is not None:
            out["low"], out["high"] = list(self.low), list(self.high or [])
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Series":
        return cls(name=d["name"], values=list(d["values"]), low=d.get("low"), high=d.get("high"))


@dataclass
class Chart:
    """A chart.  ``bars``: for each group (an x label) one bar per series, with a whisker from
    ``low`` to ``high`` where given.  ``stacked``: for each group one bar split into the series
    (e.g. verdict shares per candidate), values summing to the bar's total."""

    title: str
    groups: list[str]
    series: list[Series]
    kind: Literal["bars", "stacked"] = "bars"
    unit: str = ""
    palette: Literal["categorical", "diverging"] = "categorical"
    """diverging: the series are an ordered scale from best to worst (verdicts much better ..
    much worse), coloured from one hue through grey to another; categorical: distinct colours."""
    note: str | None = None
    range: tuple[float, float] | None = None
    """The value axis's ends; None: from the data (and 0)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "kind": self.kind, "groups": list(self.groups),
                               "series": [s.to_json() for s in self.series], "unit": self.unit}
        if self.palette != "categorical":
            out["palette"] = self.palette
        if self.note:
            out["note"] = self.note
        if self.range is not None and all(isinstance(e, (int, float)) and math.isfinite(e) for e in self.range):
            out["range"] = list(self.range)  # an end that is not a number: the axis from the data
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Chart":
        r = d.get("range")
        return cls(title=d["title"], groups=list(d["groups"]), series=[Series.from_json(s) for s in d["series"]],
                   kind=d.get("kind", "bars"), unit=d.get("unit", ""), note=d.get("note"),
                   palette=d.get("palette", "categorical"),
                   range=(r[0], r[1]) if r else None)


@dataclass
class Table:
    """A titled table: rows of dicts, columns in first-seen order."""

    title: str
    rows: list[dict[str, Any]]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "rows": self.rows}
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Table":
        return cls(title=d["title"], rows=list(d["rows"]), note=d.get("note"))


@dataclass
class Headline:
    """One leaderboard cell: a candidate's figure (e.g. Reward), with its interval when known."""

    candidate: str
    figure: str
    value: float | None
    low: float | None = None
    high: float | None = None
    judge: str | None = None
    """Which judge (or "ensemble") gave it; None where the benchmark has no judge."""
    higher_is_better: bool = True
    unit: str = ""
    """Shown after the figure's name (e.g. "%")."""

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("candidate", "figure", "value", "low", "high", "judge",
                                                "higher_is_better", "unit")}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Headline":
        return cls(**{k: d.get(k) for k in ("candidate", "figure", "value", "low", "high", "judge")},
                   higher_is_better=d.get("higher_is_better", True), unit=str(d.get("unit") or ""))


@dataclass
class ReportDoc:
    title: str
    benchmark: str
    meta: dict[str, str] = field(default_factory=dict)
    headline: list[Headline] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    items_note: str | None = None
    """A line above the item list (e.g. "best and worst 5 per candidate and generator")."""
    links: list[tuple[str, str]] = field(default_factory=list)
    """(label, href) shown as links under the title; hrefs relative to the page (a leaderboard's
    runs: ``("creation run", "runs/a/report.html")``)."""

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "title": self.title, "benchmark": self.benchmark,
                "meta": {str(k): str(v) for k, v in self.meta.items()},
                "headline": [h.to_json() for h in self.headline], "charts": [c.to_json() for c in self.charts],
                "tables": [t.to_json() for t in self.tables], "items": [i.to_json() for i in self.items],
                "items_note": self.items_note, "links": [list(x) for x in self.links]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ReportDoc":
        return cls(title=d["title"], benchmark=d.get("benchmark", ""), meta=dict(d.get("meta", {})),
                   headline=[Headline.from_json(h) for h in d.get("headline", [])],
                   charts=[Chart.from_json(c) for c in d.get("charts", [])],
                   tables=[Table.from_json(t) for t in d.get("tables", [])],
                   items=[Item.from_json(i) for i in d.get("items", [])], items_note=d.get("items_note"),
                   links=[(str(a), str(b)) for a, b in d.get("links", [])])

    def images(self):
        """Every image of the items, in order."""
        for it in self.items:
            for b in it.blocks:
                yield from b.images()
