"""MMIE's simulated behaviour: the scorer, and a text-only LVLM answering in "integrated" mode.

Registered for the simulator by :data:`judgekit.benchmarks.registry.SIMULATED` (order 30, see
:mod:`judgekit.sim.behaviours`).

Two kinds of request (:func:`mmie_kind`):

``mmie_score``
    A scoring prompt (prompts/mmie/score_*.txt): it holds ``### Question``, ``### Answer``,
    ``### Feedback`` and the criteria's ``### Score``.  The reply is two or three sentences of
    feedback and ``### Score`` followed by a score 0..6, drawn around a centre that rises with
    the judged answer's surface quality (:func:`answer_signal`):

        centre = 1.1 * (0.35 ln(1 + words) + 0.65 ln(1 + distinct words) - 1.0)
                 + 0.6 * min(images, 3)  [+ 1.6 * hit - 0.6 for multi-step reasoning]

    clamped to 0..6, where ``hit`` is the share of the ground truth's final answer (the text after
    its last ``Answer:``, else all of it) found among the answer's words: of its numbers when it
    has any (``43``), else of its words (``yes``, ``isomorphic``).  A one-line answer lands near
    0.5, a 30-word one with an image near 3, 70 words with two images near 4.5; the score is ``round(centre + N(0, sigma))`` clamped to 0..6, with
    ``sigma = 1.2 - 0.8 * quality`` (a better judge is less noisy); a scorer's
    :class:`~judgekit.sim.judge_style.JudgeStyle` (``SimConfig.judge_styles``) scales the noise
    (``noise``; 0: always ``round(centre)``) and adds its leniency (``score_offset``).  The answer is the text after
    the last ``### Answer`` line; its images are its ``Image-k:`` lines (attached or left out by a
    cap).  With ``garbage`` the reply has no valid score: no ``### Score`` at all, a word instead
    of a number, or a number out of range (7, 10, -1), so the failure counting is exercised.
``mmie_integrated``
    The integrated-answer instruction (prompts/mmie/integrated_answer.txt, recognised by its
    ``<image>a detailed description of the image</image>`` line).  The reply is 60 to 150 words
    (more with a higher ``quality``) of text with 1 to 3 ``<image>...</image>`` lines on their
    own, each a concrete drawable scene: shapes, colours, positions and a background (``a large
    red circle in the center on a white background``).  Words of the question are woven in.

Everything is drawn from the caller's ``random.Random`` (seeded by the request digest), so a
reply is a pure function of the request.
"""

from __future__ import annotations

import math
import random
import re

from judgekit.sim.behaviours import Behaviour, Request
from judgekit.sim.judge_style import JudgeStyle, styled_score

__all__ = [
    "behaviours",
    "KIND_SCORE",
    "KIND_INTEGRATED",
    "MMIE_KINDS",
    "MMIE_JUDGE_KINDS",
    "INTEGRATED_MARK",
    "mmie_kind",
    "mmie_reply",
    "answer_signal",
    "score_centre",
    "gt_hit",
    "drawable_description",
]

KIND_SCORE = "mmie_score"
KIND_INTEGRATED = "mmie_integrated"
MMIE_KINDS: tuple[str, ...] = (KIND_SCORE, KIND_INTEGRATED)
#: the kinds whose reply a judge parser reads (``garbage`` applies to them only)
MMIE_JUDGE_KINDS: tuple[str, ...] = (KIND_SCORE,)

def _integrated_mark() -> str:
    """The line of prompts/mmie/integrated_answer.txt that shows the ``<image>...</image>`` form
    (read from the prompt file, so the simulator follows the prompt when it is edited)."""
    from judgekit.resources import load_prompt

    prompt = load_prompt("mmie/integrated_answer.txt")
    for line in prompt.text.splitlines():
        if "<image>" in line and "</image>" in line:
            return line.strip()
    raise RuntimeError(f"{prompt.name} shows no <image>...</image> form")


#: the line of prompts/mmie/integrated_answer.txt that marks an integrated-answer request
INTEGRATED_MARK = _integrated_mark()

_ANSWER_HEAD = "### Answer\n"
_GT_HEAD = "### Correct Answer\n"
_GT_LEAD = "The correct answer to this question should be: "
_FEEDBACK_HEAD = "### Feedback"
_IMAGE_LINE = re.compile(r"^Image-\d+: .*$", re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]+")
_FINAL = re.compile(r"\banswer\s*:", re.IGNORECASE)
_GT_STOP = frozenset("a an and the of is are so to".split())

_INTEGRATED_MIN, _INTEGRATED_MAX = 60, 150


def mmie_kind(text: str, last_user_text: str | None = None) -> str | None:
    """``mmie_score``, ``mmie_integrated``, or None when the request is not an MMIE one.

    ``text`` is the whole prompt text; ``last_user_text`` (the last user message) is accepted
    for symmetry with the other benchmarks and not needed: both markers are in ``text``.
    """
    if "### Question" in text and _ANSWER_HEAD in text and _FEEDBACK_HEAD in text and "### Score" in text:
        return KIND_SCORE
    if INTEGRATED_MARK in text:
        return KIND_INTEGRATED
    return None


def mmie_reply(kind: str, text: str, rng: random.Random, *, quality: float, garbage: bool,
               style: JudgeStyle | None = None) -> str:
    """The reply to an MMIE request of ``kind`` (see the module docstring).

    ``quality`` (0..1) is the replying model's quality; ``garbage`` makes a scoring reply carry
    no valid score and is ignored for integrated answers; ``style`` is the scorer's
    :class:`~judgekit.sim.judge_style.JudgeStyle` (its ``noise`` scales ``sigma``, its
    ``score_offset`` is added to the centre; None: the usual scorer).
    """
    if kind == KIND_SCORE:
        return _score_reply(text, rng, quality, garbage, style)
    if kind == KIND_INTEGRATED:
        return _integrated_reply(text, rng, quality)
    raise ValueError(f"not an MMIE kind: {kind!r}")


# --------------------------------------------------------------------------- scoring


def _judged_answer(text: str) -> tuple[str, str | None]:
    """The answer under ``### Answer`` and the multi-step ground truth (or None)."""
    i = text.rfind(_ANSWER_HEAD)
    if i < 0:
        return "", None
    rest = text[i + len(_ANSWER_HEAD):]
    gt = None
    j = rest.rfind("\n" + _GT_HEAD)
    if j >= 0:
        gt_part = rest[j + 1 + len(_GT_HEAD):]
        rest = rest[:j]
        k = gt_part.rfind(_FEEDBACK_HEAD)
        gt_part = gt_part[:k] if k >= 0 else gt_part
        gt = gt_part.replace(_GT_LEAD, "", 1).strip()
    else:
        k = rest.rfind(_FEEDBACK_HEAD)
        rest = rest[:k] if k >= 0 else rest
    return rest, gt


def answer_signal(answer: str) -> tuple[int, int, int]:
    """``(words, distinct words, images)`` of a flattened answer; ``Image-k:`` lines are images,
    not words."""
    images = len(_IMAGE_LINE.findall(answer))
    prose = _IMAGE_LINE.sub(" ", answer)
    words = _WORD.findall(prose.lower())
    return len(words), len(set(words)), images


def score_centre(answer: str, gt: str | None = None) -> float:
    """The score (0..6) the simulated scorer leans to for ``answer`` (module docstring)."""
    words, distinct, images = answer_signal(answer)
    if words == 0 and images == 0:
        return 0.0
    surface = 0.35 * math.log1p(words) + 0.65 * math.log1p(distinct)
    centre = 1.1 * (surface - 1.0) + 0.6 * min(images, 3)
    if gt:
        centre += 1.6 * gt_hit(answer, gt) - 0.6
    return min(6.0, max(0.0, centre))


def gt_hit(answer: str, gt: str) -> float:
    """The share (0..1) of the ground truth's final answer found among the answer's words: its
    numbers when it has any, else its words (see the module docstring)."""
    final = _FINAL.split(gt)[-1]
    tokens = set(_WORD.findall(final.lower())) - _GT_STOP
    numbers = {t for t in tokens if t.isdigit()}
    want = numbers or tokens
    if not want:
        return 0.0
    have = set(_WORD.findall(_IMAGE_LINE.sub(" ", answer).lower()))
    return len(want & have) / len(want)


_FEEDBACK = {
    "low": ["The answer barely engages with the question.",
            "Most of what the question asks for is missing.",
            "The response is short and does not follow on from the given context.",
            "The image descriptions, if any, do not match the text."],
    "mid": ["The answer addresses the question in part.",
            "The text is readable, but the reasoning skips steps.",
            "Some images fit the text, others feel loosely attached.",
            "The response is coherent but rather plain."],
    "high": ["The answer follows the question closely and is easy to read.",
             "Text and images support each other well.",
             "Each step is explained clearly and in a consistent style.",
             "The response is detailed and stays consistent throughout."],
}


def _feedback(score: float, rng: random.Random) -> str:
    band = "low" if score < 2 else "mid" if score < 4.5 else "high"
    lines = rng.sample(_FEEDBACK[band], k=rng.choice((2, 3)))
    return " ".join(lines)


def _score_reply(text: str, rng: random.Random, quality: float, garbage: bool, style: JudgeStyle | None) -> str:
    answer, gt = _judged_answer(text)
    centre = score_centre(answer, gt)
    sigma = max(0.2, 1.2 - 0.8 * min(1.0, max(0.0, quality)))
    score = int(min(6, max(0, round(styled_score(centre, rng.gauss(0.0, sigma), style)))))
    lead = "### Feedback\n" if rng.random() < 0.5 else ""
    body = lead + _feedback(score, rng)
    if garbage:
        shape = rng.randrange(3)
        if shape == 0:
            return body + f"\nOverall I would rate it {score} out of 6."
        if shape == 1:
            return body + "\n### Score\n" + rng.choice(("excellent", "good", "poor", "N/A"))
        return body + "\n### Score\n" + rng.choice(("7", "10", "-1", "9/10"))
    fmt = rng.choice(("\n### Score\n{n}", "\n### Score\n{n}", "\n### Score: {n}", "\n### Score\n{n}/6"))
    return body + fmt.format(n=score)


# --------------------------------------------------------------------------- integrated answers

_SIZES = ("a large", "a small", "a medium-sized", "two small", "three tiny")
_COLOURS = ("red", "blue", "green", "yellow", "orange", "purple", "black", "white", "grey", "brown")
_SHAPES = ("circle", "square", "triangle", "star", "rectangle", "house", "tree", "car", "boat",
           "cup", "book", "flower", "bar chart", "arrow")
_PLURAL = {"circle": "circles", "square": "squares", "triangle": "triangles", "star": "stars",
           "rectangle": "rectangles", "house": "houses", "tree": "trees", "car": "cars",
           "boat": "boats", "cup": "cups", "book": "books", "flower": "flowers",
           "bar chart": "bar charts", "arrow": "arrows"}
_POSITIONS = ("in the center", "at the top left", "at the top right", "at the bottom left",
              "at the bottom right", "on the left side", "on the right side", "near the bottom edge")
_BACKGROUNDS = ("a white background", "a pale yellow background", "a light blue background",
                "a dark green background", "a grey background", "a sky with soft clouds",
                "a wooden table", "a sandy beach")

_OPENERS = ("Here is how I would answer this.", "Let me work through the question step by step.",
            "The question asks for a continuation, so I describe what comes next.",
            "To answer, I look at the given text and images first.")
_SENTENCES = (
    "The first thing to notice is the {w}, which sets the scene for everything that follows.",
    "Next, the {w} should be placed where it can be seen clearly.",
    "This step matters because the {w} links the earlier part to the result.",
    "After that, we compare the {w} with what the question describes.",
    "A simple picture makes the {w} easier to follow.",
    "The {w} changes a little here, and the text explains why.",
    "Finally, the {w} is checked once more so that nothing is missed.",
    "In short, the {w} and the {v} work together in this answer.",
    "It helps to keep the {w} in the same style throughout.",
    "One could also show the {v} from a different angle.",
)
_FILLERS = ("answer", "scene", "step", "picture", "result", "story", "method", "detail")
_STOP = frozenset(
    "about above after again against also among because before being below between both could "
    "does doing during each every from further have having here into itself just more most once "
    "only other over same should some such than that their them then there these they this those "
    "through under until very were what when where which while will with would your image images "
    "answer question description write detailed interleaved describe".split())


def drawable_description(rng: random.Random) -> str:
    """A concrete scene a text-to-image model can draw: size, colour, shape, position, background."""
    size = rng.choice(_SIZES)
    shape = rng.choice(_SHAPES)
    noun = _PLURAL[shape] if size.startswith(("two", "three")) else shape
    first = f"{size} {rng.choice(_COLOURS)} {noun} {rng.choice(_POSITIONS)}"
    if rng.random() < 0.5:
        second = f"{rng.choice(('a', 'a small', 'a large'))} {rng.choice(_COLOURS)} " \
                 f"{rng.choice(_SHAPES)} {rng.choice(_POSITIONS)}"
        return f"{first} and {second} on {rng.choice(_BACKGROUNDS)}"
    return f"{first} on {rng.choice(_BACKGROUNDS)}"


def _topic_words(text: str) -> list[str]:
    body = text.replace(INTEGRATED_MARK, " ")
    seen: dict[str, None] = {}
    for w in re.findall(r"[A-Za-z]{5,}", body):
        lw = w.lower()
        if lw not in _STOP:
            seen.setdefault(lw, None)
    return list(seen) or list(_FILLERS)


def _count(s: str) -> int:
    return len(s.split())


def _integrated_reply(text: str, rng: random.Random, quality: float) -> str:
    q = min(1.0, max(0.0, quality))
    topics = _topic_words(text)[:40]
    n_images = min(3, 1 + int(q * 2.2 * rng.random() + rng.random() * 0.8))
    target = int(_INTEGRATED_MIN + (_INTEGRATED_MAX - _INTEGRATED_MIN - 20) * q * (0.7 + 0.3 * rng.random()))
    descs = [f"<image>{drawable_description(rng)}</image>" for _ in range(n_images)]
    budget = target - sum(_count(d) for d in descs)
    sentences = [rng.choice(_OPENERS)]
    while sum(_count(s) for s in sentences) < budget:
        tpl = rng.choice(_SENTENCES)
        sentences.append(tpl.format(w=rng.choice(topics), v=rng.choice(topics)))
    while len(sentences) > 1 and sum(_count(s) for s in sentences) + sum(_count(d) for d in descs) > _INTEGRATED_MAX:
        sentences.pop()
    # images go after evenly spread sentences, the first one after the opening
    slots = sorted(rng.sample(range(1, len(sentences) + 1), k=min(n_images, len(sentences))))
    lines: list[str] = []
    paragraph: list[str] = []
    di = 0
    for i, s in enumerate(sentences, start=1):
        paragraph.append(s)
        if di < len(descs) and i in slots:
            lines.append(" ".join(paragraph))
            paragraph = []
            lines.append(descs[di])
            di += 1
    if paragraph:
        lines.append(" ".join(paragraph))
    lines.extend(descs[di:])
    return "\n".join(lines)


def _reply(kind: str, req: Request, rng: random.Random) -> tuple[str, bool]:
    text = mmie_reply(kind, req.text, rng, quality=req.quality, garbage=req.garbage, style=req.style)
    return text, req.garbage and kind in MMIE_JUDGE_KINDS


behaviours = [Behaviour("mmie", MMIE_KINDS, mmie_kind, _reply, order=30,
                        description="MMIE's scorer and its integrated (text and picture) answers")]
