"""Scenes in words: :func:`describe` (a caption-prompt whose fidelity follows a quality) and
:func:`parse` (a caption-prompt read back into a scene)."""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

from .scene_model import (
    COLOUR_NAMES,
    COLOURS,
    MAX_COUNT,
    POSITIONS,
    SHAPES,
    SIZES,
    STYLES,
    Group,
    Scene,
    SceneObject,
    groups,
)

# ---------------------------------------------------------------------------------------------
# words

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve")
_PLURAL = {s: s + "es" if s.endswith(("s", "x", "sh", "ch")) else s + "s" for s in SHAPES}
_STYLE_OPENERS = {
    "flat": ("A flat illustration of", "A flat vector graphic of", "A minimalist flat design showing"),
    "painted": ("An expressive painting of", "A painted artwork with visible brushstrokes of",
                "An impressionist oil painting of"),
    "outline": ("An outline drawing of", "A simple line art drawing of", "A clean outline sketch of"),
}
_NEUTRAL_OPENERS = ("An image of", "A picture showing", "A simple composition of")
_FILLERS = (
    "The composition is simple and clean, with crisp edges and even lighting.",
    "Clear shapes, balanced spacing, high detail, sharp focus.",
    "The overall mood is calm and orderly, with no people or extra elements.",
    "Soft even light, no shadows, graphic poster aesthetic.",
    "Every element is clearly separated and easy to read.",
)


def _count_word(n: int) -> str:
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def _position_phrase(position: str) -> str:
    return "in the center" if position == "center" else f"at the {position}"


def _keep(quality: float, rng: random.Random) -> str:
    """``keep``, ``drop`` or ``wrong`` for one detail of a caption of this quality."""
    if rng.random() < 0.35 + 0.65 * quality:
        return "keep"
    return "wrong" if rng.random() < 0.6 * (1 - quality) + 0.2 else "drop"


def _other(value: str, options: tuple[str, ...], rng: random.Random) -> str:
    return rng.choice([o for o in options if o != value])


def _object_phrase(g: Group, quality: float, rng: random.Random) -> str | None:
    o, n = g.obj, g.count
    fate = _keep(quality, rng)
    if fate != "keep" and rng.random() < 0.4:
        return None  # the whole object left out
    count = n
    if _keep(quality, rng) == "wrong":
        count = max(1, n + rng.choice((-1, 1)))
    shape = o.shape if _keep(quality, rng) != "wrong" else _other(o.shape, SHAPES, rng)
    words: list[str] = []
    count_fate = _keep(quality, rng)
    if count == 1:
        words.append("a")
    elif count_fate == "drop" and count > 1:
        words.append("several" if count > 3 else "some")
    else:
        words.append(_count_word(count))
    size_fate = _keep(quality, rng)
    if size_fate == "keep":
        words.append(o.size)
    elif size_fate == "wrong":
        words.append(_other(o.size, SIZES, rng))
    colour_fate = _keep(quality, rng)
    if colour_fate == "keep":
        words.append(o.colour)
    elif colour_fate == "wrong":
        words.append(_other(o.colour, COLOUR_NAMES, rng))
    words.append(shape if count == 1 else _PLURAL[shape])
    if words[0] == "a" and words[1][:1] in "aeiou":
        words[0] = "an"
    phrase = " ".join(words)
    if o.angle:
        fate = _keep(quality, rng)
        if fate == "keep":
            phrase += f" tilted {o.angle} degrees"
        elif fate == "wrong":
            phrase += f" tilted {(o.angle + rng.choice((45, 90))) % 360} degrees"
    if o.motion and _keep(quality, rng) == "keep":
        phrase += " with motion streaks"
    pos_fate = _keep(quality, rng)
    if pos_fate == "keep":
        phrase += " " + _position_phrase(o.position)
    elif pos_fate == "wrong":
        phrase += " " + _position_phrase(_other(o.position, POSITIONS, rng))
    return phrase


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def describe(scene: Scene, *, quality: float, rng: random.Random) -> str:
    """An English caption-prompt of the scene, 20-60 words, as a captioner would write it.

    ``quality`` (0..1) sets the fidelity: every detail (style, each object's count, size,
    colour, shape, angle, motion and position, the background, the ground, the word) is kept
    with probability ``0.35 + 0.65 * quality``; a detail not kept is left out or, more often at
    low quality, replaced by a wrong one.  At quality 1 :func:`parse` recovers the scene.
    Deterministic given ``rng``.
    """
    quality = min(1.0, max(0.0, float(quality)))
    style_fate = _keep(quality, rng)
    style = scene.style if style_fate == "keep" else _other(scene.style, STYLES, rng) if style_fate == "wrong" else None
    opener = rng.choice(_STYLE_OPENERS[style]) if style else rng.choice(_NEUTRAL_OPENERS)
    phrases = [p for p in (_object_phrase(g, quality, rng) for g in groups(scene.objects)) if p]
    body = _join(phrases) if phrases else "an empty scene"
    fate = _keep(quality, rng)
    if fate != "drop":
        bg = scene.background if fate == "keep" else _other(scene.background, COLOUR_NAMES, rng)
        body += f" on a {bg} background"
    if scene.ground is not None:
        fate = _keep(quality, rng)
        if fate != "drop":
            ground = scene.ground if fate == "keep" else _other(scene.ground, COLOUR_NAMES, rng)
            body += f" above a {ground} ground strip"
    sentences = [f"{opener} {body}."]
    if scene.text:
        fate = _keep(quality, rng)
        if fate == "keep":
            sentences.append(f'The word "{scene.text}" is written in bold block letters.')
        elif fate == "wrong":
            garbled = scene.text[:-1] + rng.choice("AEIOUXZ") if len(scene.text) > 1 else "A"
            sentences.append(f'The word "{garbled}" is written in bold block letters.')
    fillers = list(_FILLERS)
    rng.shuffle(fillers)
    text = " ".join(sentences)
    target = rng.randint(24, 44)
    for f in fillers:
        if len(text.split()) >= target or len(text.split()) + len(f.split()) > 60:
            break
        text += " " + f
    words = text.split()
    if len(words) > 60:  # many objects: keep the first sixty words
        text = " ".join(words[:60]).rstrip(",;") + "."
    return text


# ---------------------------------------------------------------------------------------------
# parse

_COLOUR_SYNONYMS = {"gray": "grey", "violet": "purple", "magenta": "pink", "teal": "cyan", "turquoise": "cyan",
                    "gold": "yellow", "golden": "yellow", "navy": "blue", "crimson": "red", "scarlet": "red",
                    "silver": "grey", "lime": "green", "tan": "brown", "beige": "brown"}
_COLOUR_WORD = {**{c: c for c in COLOURS}, **_COLOUR_SYNONYMS}
_SIZE_SYNONYMS = {"small": "small", "tiny": "small", "little": "small", "medium": "medium",
                  "medium-sized": "medium", "mid-sized": "medium", "large": "large", "big": "large",
                  "huge": "large", "giant": "large"}
_SHAPE_WORD: dict[str, str] = {}
for _s in SHAPES:
    _SHAPE_WORD[_s] = _s
    _SHAPE_WORD[_PLURAL[_s]] = _s
_SHAPE_WORD.update({"oval": "ellipse", "ovals": "ellipse", "dot": "circle", "dots": "circle", "disc": "circle",
                    "discs": "circle", "disk": "circle", "disks": "circle", "rhombus": "diamond",
                    "rhombuses": "diamond"})
_COUNTS = {w: i for i, w in enumerate(_NUMBER_WORDS)} | {"a": 1, "an": 1, "single": 1, "pair": 2, "couple": 2,
                                                          "several": 3, "some": 2, "few": 3, "many": 5}


def _alt(words: Any) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_OBJECT_RE = re.compile(
    rf"\b(?:(?P<count>{_alt(_COUNTS)}|\d+)\s+)?(?:(?P<size>{_alt(_SIZE_SYNONYMS)})\s+)?"
    rf"(?:(?P<colour>{_alt(_COLOUR_WORD)})\s+)?(?P<shape>{_alt(_SHAPE_WORD)})\b"
)
_POSITION_RE = re.compile(
    r"\b(?:(?P<v>top|upper|bottom|lower)[\s-]+(?P<h>left|right)(?:[\s-]+(?:corner|side))?"
    r"|(?P<v1>top|upper|bottom|lower)\b(?:[\s-]+(?:center|centre|middle))?"
    r"|(?P<h1>left|right)\b"
    r"|(?P<c>center|centre|middle))"
)
_BACKGROUND_RE = re.compile(rf"\b(?P<colour>{_alt(_COLOUR_WORD)})\s+(?:colou?red\s+)?background\b")
_GROUND_RE = re.compile(rf"\b(?P<colour>{_alt(_COLOUR_WORD)})\s+(?:ground|horizon|field|grass|floor)\b")
_TEXT_RE = re.compile(r"(?<![A-Za-z])[\"“”'‘’]([A-Za-z0-9][A-Za-z0-9 !?&.-]{0,19})[\"“”'‘’]")
_ANGLE_RE = re.compile(r"\b(?:tilted|rotated|turned|angled|slanted)\s+(?:by\s+)?(?:about\s+)?(-?\d{1,3})\s*(?:degrees|deg|°)")
_MOTION_RE = re.compile(r"\b(?:motion|moving|speeding|streaks?|blur(?:red)?|dynamic|racing)\b")
_PAINTED_RE = re.compile(r"\b(?:paint\w*|brush\w*|impressionis\w*|oil|watercolou?r|artistic|canvas)\b")
_OUTLINE_RE = re.compile(r"\b(?:outlines?|outlined|line[\s-]art|line drawing|sketch\w*|wireframe)\b")
_CLAUSE_BREAK = re.compile(r"[.;!?]\s|\bbackground\b|\bground strip\b|\bthe word\b")


def _position(m: re.Match[str]) -> str:
    if m.group("v"):
        v = "top" if m.group("v") in ("top", "upper") else "bottom"
        return f"{v} {m.group('h')}"
    if m.group("v1"):
        return "top" if m.group("v1") in ("top", "upper") else "bottom"
    if m.group("h1"):
        return m.group("h1")
    return "center"


def _hash_colour(text: str) -> str:
    h = hashlib.sha256(text.encode("utf-8", "replace")).digest()
    return COLOUR_NAMES[h[0] % len(COLOUR_NAMES)]


def parse(prompt: str) -> Scene:
    """Read a caption-prompt back into a scene; any text gives a scene.

    Objects are ``[count] [size] [colour] shape`` phrases (number words or digits, plurals,
    synonyms such as ``big``, ``gray``, ``oval``), each followed by optional ``tilted N
    degrees``, motion words and a position (``at the top left``, ``in the upper right corner``,
    ``in the middle``...; none: the center).  ``on a X background`` sets the background (none: a
    colour derived from the text's hash), ``X ground`` (or horizon, field, grass) the ground, the
    first quoted word the text, and painting or outline words the style.  Missing sizes are
    medium, missing colours black, plurals without a count two; counts are capped at 12.
    """
    low = prompt.lower()
    m = _BACKGROUND_RE.search(low)
    background = _COLOUR_WORD[m.group("colour")] if m else _hash_colour(prompt)
    masked = _BACKGROUND_RE.sub(lambda x: " " * len(x.group(0)), low)
    g = _GROUND_RE.search(masked)
    ground = _COLOUR_WORD[g.group("colour")] if g else None
    masked = _GROUND_RE.sub(lambda x: " " * len(x.group(0)), masked)
    t = _TEXT_RE.search(prompt)
    text = t.group(1).strip() if t else None
    if t and len(low) == len(prompt):
        masked = masked[: t.start()] + " " * (t.end() - t.start()) + masked[t.end():]
    style = "painted" if _PAINTED_RE.search(low) else "outline" if _OUTLINE_RE.search(low) else "flat"
    matches = list(_OBJECT_RE.finditer(masked))
    objects: list[SceneObject] = []
    for i, om in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(masked)
        window = masked[om.end(): end]
        brk = _CLAUSE_BREAK.search(window)
        if brk:
            window = window[: brk.start()]
        shape = _SHAPE_WORD[om.group("shape")]
        word = om.group("count")
        plural = om.group("shape") != shape and om.group("shape") not in ("oval", "dot", "disc", "disk", "rhombus")
        if word is None:
            count = 2 if plural else 1
        elif word.isdigit():
            count = int(word)
        else:
            count = _COUNTS[word]
        count = max(1, min(MAX_COUNT, count))
        size = _SIZE_SYNONYMS[om.group("size")] if om.group("size") else "medium"
        colour = _COLOUR_WORD[om.group("colour")] if om.group("colour") else "black"
        pm = _POSITION_RE.search(window)
        am = _ANGLE_RE.search(window)
        angle = int(am.group(1)) % 360 if am else None
        obj = SceneObject(shape, colour, size, _position(pm) if pm else "center", angle or None,
                          bool(_MOTION_RE.search(window)))
        objects.extend([obj] * count)
        if len(objects) >= 4 * MAX_COUNT:
            break
    return Scene(background=background, objects=tuple(objects[: 4 * MAX_COUNT]), ground=ground, text=text,
                 style=style)


