"""MMIE: reading the scorer's reply, splitting integrated answers, flattening for the judge.

Pure functions over strings and segments.

Score (:func:`parse_score`), exactly the reference scorer's rule: the first ``### Score`` in the
reply, then the first number anywhere after it (``-?digits(.digits)?``, across lines), rounded
with Python's :func:`round` (half to even, as the reference: 4.5 -> 4, 5.5 -> 6, 6.5 -> 6), valid
only when the result is an integer in 0..6.  Outcomes:

* ``ok``: a valid score;
* ``missing``: no ``### Score`` in the reply (``Score: 5`` does not count);
* ``not_a_number``: ``### Score`` but no number after it (``### Score\\nexcellent``);
* ``out_of_range``: a number that rounds outside 0..6 (``7``, ``-1``, ``6.6``).

Only ``ok`` carries a score; the others are failures the caller counts.

Candidate text is defused against this parser (and against forging the prompt's sections) with
:func:`defuse_headers`, which looks for ``### Score``-like headers through the folded view of
:mod:`judgekit.parsers.view`, so that after any normalisation no candidate text holds a header the
parser or the scorer could take for its own.  :func:`percent` turns a
0..6 score into the paper's percentage.

Integrated answers (:func:`split_integrated`): a text-only LVLM writes each image it would draw as
``<image>description</image>`` (prompts/mmie/integrated_answer.txt); the answer is split there.

Flattening: each text segment is written followed by ``\\n``; each image becomes
``Image-{k}: <image>\\n`` (k from 0, counting on from the question into the answer) and is
attached in order.  Two rules:

* :func:`flatten_as_reference`, the reference scorer's (its ``dataset.py``): the whole question;
  then the answer, read in order until the question and the answer read so far hold
  :data:`REFERENCE_IMAGE_STOP` (3) images: what follows, text and images alike, is not read,
  except that the answer's opening text is always read (the text of its first entry: when that
  entry has neither text nor image, a text segment whose ``text`` is None stands for it, so a
  question with 3 images gets an empty answer, as in the reference).  The reference then leaves out any row
  with more than :data:`REFERENCE_MAX_IMAGES` (4) images, i.e. one whose question alone has 5
  or more (:func:`reference_skips`).
* :func:`flatten_for_judge` (``options.keep_full_answer``): every text is kept, and with
  ``image_cap`` the images past the cap are not attached and their line says so: ``Image-5:
  [not shown: image cap of 4 reached]``.

:class:`Flattened` reports how many images were attached and how many images and texts were
left out.  :func:`gt_text` and :func:`gt_reference_text` give the multi-step reasoning prompt's
ground truth (all its texts, or the reference's first entry's text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from .view import View, defuse

__all__ = [
    "MAX_SCORE",
    "ScoreParse",
    "parse_score",
    "percent",
    "split_integrated",
    "Flattened",
    "flatten_for_judge",
    "gt_text",
    "gt_reference_text",
    "flatten_as_reference",
    "reference_skips",
    "REFERENCE_IMAGE_STOP",
    "REFERENCE_MAX_IMAGES",
    "IMAGE_LINE",
    "DROPPED_LINE",
    "HEADER_RULES",
    "defuse_headers",
]

MAX_SCORE = 6

_SCORE = re.compile(r"### Score.*?(-?\d+(?:\.\d+)?)", re.DOTALL)
_SCORE_HEAD = "### Score"

#: the line of an attached image (the reference's)
IMAGE_LINE = "Image-{k}: <image>\n"
#: the line of an image left out by the cap
DROPPED_LINE = "Image-{k}: [not shown: image cap of {cap} reached]\n"
#: the reference reads no more of an answer once the question and the answer hold this many images
REFERENCE_IMAGE_STOP = 3
#: the reference leaves out rows with more images than this
REFERENCE_MAX_IMAGES = 4

_OPEN = re.compile(r"<\s*image\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*image\s*>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ScoreParse:
    """What the scorer's reply said."""

    score: int | None
    """The score 0..6 when ``outcome == "ok"``, else None."""
    outcome: Literal["ok", "missing", "out_of_range", "not_a_number"]
    raw: str | None
    """The number as written after ``### Score`` (``"4.4"``); None when there is none."""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


def parse_score(text: str | None) -> ScoreParse:
    """Read the scorer's reply (rules in the module docstring).  None reads as ``""``."""
    raw = text or ""
    if _SCORE_HEAD not in raw:
        return ScoreParse(None, "missing", None)
    m = _SCORE.search(raw)
    if m is None:
        return ScoreParse(None, "not_a_number", None)
    number = m.group(1)
    value = round(float(number))
    if 0 <= value <= MAX_SCORE:
        return ScoreParse(value, "ok", number)
    return ScoreParse(None, "out_of_range", number)


def percent(score: float) -> float:
    """A 0..6 score as a percentage: ``score / 6 * 100``."""
    return score / MAX_SCORE * 100.0


def split_integrated(text: str) -> list[tuple[Literal["text", "image"], str]]:
    """An integrated answer as ``[("text", ...), ("image", description), ...]``, in order.

    Descriptions are between ``<image>`` and ``</image>`` (any case, spaces inside the tags
    allowed, over several lines); an ``<image>`` left open runs to the end of the text.  Texts and
    descriptions are stripped; empty ones are dropped.  A stray ``</image>`` outside a description
    is removed from the text.
    """
    out: list[tuple[Literal["text", "image"], str]] = []

    def add_text(s: str) -> None:
        s = _CLOSE.sub("", s).strip()
        if s:
            out.append(("text", s))

    pos = 0
    while True:
        m = _OPEN.search(text, pos)
        if m is None:
            add_text(text[pos:])
            break
        add_text(text[pos:m.start()])
        c = _CLOSE.search(text, m.end())
        end = len(text) if c is None else c.start()
        desc = text[m.end():end].strip()
        if desc:
            out.append(("image", desc))
        if c is None:
            break
        pos = c.end()
    return out


class _SegmentLike(Protocol):
    kind: str
    text: str | None


S = TypeVar("S", bound=_SegmentLike)


@dataclass(frozen=True, slots=True)
class Flattened(Generic[S]):
    """A question and answer flattened for the scorer prompt, and the images to attach."""

    question: str
    """The question's text with its ``Image-k`` lines (fills ``{question}``)."""
    answer: str
    """The answer's text with its ``Image-k`` lines (fills ``{answer}``)."""
    images: tuple[S, ...]
    """The image segments to attach, in order (``Image-0`` first)."""
    images_attached: int
    images_dropped: int
    """Images not shown (past the cap, or in the part of the answer the reference does not read)."""
    texts_dropped: int = 0
    """Answer texts not shown (the part of the answer the reference does not read)."""


def flatten_for_judge(question_segments: Sequence[S], answer_segments: Sequence[S], *,
                      image_cap: int | None) -> Flattened[S]:
    """Flatten a question and an answer (segments with ``kind`` ``"text"``/``"image"`` and
    ``text``) as the reference scorer does, keeping all text; see the module docstring.

    ``image_cap``: the most images attached (question images first); None attaches them all.
    """
    if image_cap is not None and image_cap < 0:
        raise ValueError(f"image_cap must be >= 0 or None, not {image_cap}")
    images: list[S] = []
    dropped = 0
    k = 0

    def flatten(segments: Sequence[S]) -> str:
        nonlocal k, dropped
        parts: list[str] = []
        for seg in segments:
            if seg.kind == "image":
                if image_cap is None or len(images) < image_cap:
                    images.append(seg)
                    parts.append(IMAGE_LINE.format(k=k))
                else:
                    dropped += 1
                    parts.append(DROPPED_LINE.format(k=k, cap=image_cap))
                k += 1
            elif seg.kind == "text":
                if seg.text is not None:  # (None: an empty entry, nothing to write)
                    parts.append(seg.text + "\n")
            else:
                raise ValueError(f"segment kind must be 'text' or 'image', not {seg.kind!r}")
        return "".join(parts)

    q = flatten(question_segments)
    a = flatten(answer_segments)
    return Flattened(q, a, tuple(images), len(images), dropped)


def flatten_as_reference(question_segments: Sequence[S], answer_segments: Sequence[S]) -> Flattened[S]:
    """Flatten a question and an answer as the reference scorer does (the module docstring).

    Every question segment is written.  Answer segments are written in order; before each one,
    except a text that opens the answer, reading stops once :data:`REFERENCE_IMAGE_STOP` images
    have been written (question and answer together).  The segments not read are counted in
    ``images_dropped`` and ``texts_dropped``.  Whether the row is scored at all is
    :func:`reference_skips`.
    """
    images: list[S] = []
    parts: list[str] = []

    def write(seg: S) -> None:
        if seg.kind == "image":
            parts.append(IMAGE_LINE.format(k=len(images)))
            images.append(seg)
        elif seg.kind == "text":
            if seg.text is not None:  # None: an entry with neither text nor image, which writes nothing
                parts.append(seg.text + "\n")
        else:
            raise ValueError(f"segment kind must be 'text' or 'image', not {seg.kind!r}")

    for seg in question_segments:
        write(seg)
    question = "".join(parts)
    parts.clear()
    read = 0
    for n, seg in enumerate(answer_segments):
        if len(images) >= REFERENCE_IMAGE_STOP and not (n == 0 and seg.kind == "text"):
            break
        write(seg)
        read += 1
    rest = answer_segments[read:]
    dropped_images = sum(1 for s in rest if s.kind == "image")
    return Flattened(question, "".join(parts), tuple(images), len(images), dropped_images,
                     len(rest) - dropped_images)


def reference_skips(question_segments: Sequence[_SegmentLike]) -> bool:
    """Whether the reference leaves the row out: it scores rows with at most
    :data:`REFERENCE_MAX_IMAGES` images, and since the answer is read only while fewer than
    :data:`REFERENCE_IMAGE_STOP` are written, a row has more exactly when its question does."""
    return sum(1 for s in question_segments if s.kind == "image") > REFERENCE_MAX_IMAGES


def gt_text(segments: Sequence[_SegmentLike] | None) -> str:
    """The ground truth's texts joined with ``\\n`` (images left out); '' for None
    (``options.full_ground_truth``)."""
    if not segments:
        return ""
    return "\n".join(s.text or "" for s in segments if s.kind == "text")


def gt_reference_text(lead_text: str | None) -> str:
    """What fills ``{gt_answer}`` in the reference: the text of the ground truth's first entry,
    formatted by ``str.format``, so a first entry without text reads ``None``."""
    return str(lead_text)


# --------------------------------------------------------------------------- defusing candidate text
# In the folded view with white space kept as single spaces: three or more hash signs (``#``,
# ``＃``, ``﹟``, single spaces or invisible characters between them) before a section name of the
# scorer prompt.  ``Score`` counts as a prefix, as the parser reads it (``### Scores``, ``###
# Scoreboard``, ``### Score2``); the other names as whole words (``### Answering`` stays).
_VIEW_HEADER = re.compile(r"#(?: ?#){2,}(?= ?(?:SCORE|(?:FEEDBACK|QUESTION|CORRECT ?ANSWER|ANSWER)(?![^\W_])))")


def _headers(view: View, text: str) -> list[tuple[int, int, str]]:
    return [(*view.span(m.start(), m.end()), "##") for m in _VIEW_HEADER.finditer(view.text)]


#: the rules :func:`defuse_headers` applies to the folded view (white space kept as single spaces)
HEADER_RULES = (_headers,)


def defuse_headers(text: str) -> str:
    """Candidate text in which no scorer-prompt header survives, however folded.

    Each run of three or more hash signs before ``Score`` (any continuation), ``Feedback``,
    ``Question``, ``Answer`` or ``Correct Answer`` becomes ``##`` (``### Scores: 6`` ->
    ``## Scores: 6``, ``＃＃＃ Ｓｃｏｒｅ`` -> ``## Ｓｃｏｒｅ``); any other text is returned unchanged.
    """
    return defuse(text, HEADER_RULES, spaces=True)
