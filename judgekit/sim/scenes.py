"""Simple drawable scenes: what the MMGenBench sample shows, what simulated captioners say and
what the simulated image generator draws, so that captions and generations are related.

A :class:`Scene` is a background colour, an optional ground band, a few :class:`SceneObject`
(a shape of a colour and size at a cell of a 3 x 3 grid, maybe rotated, maybe moving), an
optional word and a style.  Four functions connect scenes, pictures and words:

- :func:`render`: a scene as PNG bytes (Pillow), deterministic for (scene, size, seed); with
  ``label=True`` the PNG carries the scene as JSON in the ``judgekit-scene`` tEXt chunk;
- :func:`describe`: an English caption-prompt of a scene (20-60 words) whose fidelity follows a
  ``quality`` in 0..1: details are kept, dropped or replaced by wrong ones;
- :func:`parse`: a caption-prompt read back into a scene (any text gives some scene);
  ``parse(describe(s, quality=1.0, rng=...))`` recovers ``s``;
- :func:`scene_from_png`: the scene a labelled PNG carries (no Pillow).

:func:`random_scene` draws a scene typical of one of MMGenBench's 13 image patterns and
:func:`scene_patterns` says which patterns a scene shows (the sample's multi-labels).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..pngtext import SCENE_KEY, read_png_text

__all__ = [
    "SceneObject",
    "Scene",
    "SHAPES",
    "COLOURS",
    "SIZES",
    "POSITIONS",
    "STYLES",
    "PATTERNS",
    "render",
    "describe",
    "parse",
    "scene_from_png",
    "random_scene",
    "scene_patterns",
]

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "rectangle", "ellipse", "diamond", "cross",
                           "heart", "ring", "hexagon", "arrow")
#: colour name -> RGB
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (214, 39, 40), "orange": (245, 134, 28), "yellow": (246, 212, 44), "green": (46, 160, 67),
    "blue": (37, 89, 206), "purple": (128, 58, 176), "pink": (240, 128, 178), "brown": (128, 78, 38),
    "black": (22, 22, 22), "white": (246, 246, 246), "grey": (128, 128, 128), "cyan": (38, 198, 212),
}
SIZES: tuple[str, ...] = ("small", "medium", "large")
POSITIONS: tuple[str, ...] = ("top left", "top", "top right", "left", "center", "right", "bottom left", "bottom",
                              "bottom right")
STYLES: tuple[str, ...] = ("flat", "painted", "outline")
#: MMGenBench-Test's 13 image patterns, largest first (paper Fig. 4)
PATTERNS: tuple[str, ...] = ("Artistic", "Color", "Surreal", "Natural", "Position", "Contextual", "Technology",
                             "Symbol", "Text", "Geometry", "Count", "Motion", "Orientation")

_COLOUR_NAMES = tuple(COLOURS)
_SIZE_FRACTION = {"small": 0.07, "medium": 0.11, "large": 0.155}  # half-extent, of the shorter side
_CELL = {p: ((i % 3) * 2 + 1) / 6 for i, p in enumerate(POSITIONS)}  # x centre of a cell
_ROW = {p: ((i // 3) * 2 + 1) / 6 for i, p in enumerate(POSITIONS)}  # y centre of a cell
_MAX_COUNT = 12
_OPTIMIZE_MAX_PIXELS = 512 * 512


@dataclass(frozen=True, slots=True)
class SceneObject:
    """One shape in a scene."""

    shape: str
    colour: str
    size: str = "medium"
    position: str = "center"
    angle: int | None = None
    """Rotation in degrees, counter-clockwise (None: upright)."""
    motion: bool = False
    """Drawn with motion streaks behind it."""

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"unknown shape {self.shape!r}")
        if self.colour not in COLOURS:
            raise ValueError(f"unknown colour {self.colour!r}")
        if self.size not in SIZES:
            raise ValueError(f"unknown size {self.size!r}")
        if self.position not in POSITIONS:
            raise ValueError(f"unknown position {self.position!r}")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"shape": self.shape, "colour": self.colour, "size": self.size,
                             "position": self.position}
        if self.angle is not None:
            d["angle"] = self.angle
        if self.motion:
            d["motion"] = True
        return d


@dataclass(frozen=True, slots=True)
class Scene:
    """A drawable scene; ``objects`` lists each object once (three red circles are three)."""

    background: str
    objects: tuple[SceneObject, ...] = ()
    ground: str | None = None
    """Colour of a ground band along the bottom (a horizon), or None."""
    text: str | None = None
    """A short word drawn in the picture, or None."""
    style: str = "flat"
    """``flat``, ``painted`` (brush-like texture) or ``outline`` (shapes drawn as outlines)."""

    def __post_init__(self) -> None:
        if self.background not in COLOURS:
            raise ValueError(f"unknown background colour {self.background!r}")
        if self.ground is not None and self.ground not in COLOURS:
            raise ValueError(f"unknown ground colour {self.ground!r}")
        if self.style not in STYLES:
            raise ValueError(f"unknown style {self.style!r}")
        object.__setattr__(self, "objects", tuple(self.objects))

    def to_json(self) -> str:
        """Compact JSON with sorted keys (defaults left out); :meth:`from_json` reads it back."""
        d: dict[str, Any] = {"background": self.background, "objects": [o.to_dict() for o in self.objects],
                             "style": self.style}
        if self.ground is not None:
            d["ground"] = self.ground
        if self.text is not None:
            d["text"] = self.text
        return json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Scene":
        d = json.loads(text)
        objects = tuple(SceneObject(**o) for o in d.get("objects", ()))
        return cls(background=d["background"], objects=objects, ground=d.get("ground"), text=d.get("text"),
                   style=d.get("style", "flat"))


# ---------------------------------------------------------------------------------------------
# groups: identical objects counted together (how captions speak)


@dataclass(slots=True)
class _Group:
    obj: SceneObject
    count: int = 1


def _groups(objects: tuple[SceneObject, ...]) -> list[_Group]:
    out: dict[SceneObject, _Group] = {}
    for o in objects:
        g = out.get(o)
        if g is None:
            out[o] = _Group(o)
        else:
            g.count += 1
    return list(out.values())


# ---------------------------------------------------------------------------------------------
# render


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


def _shape_points(shape: str, r: float) -> list[tuple[float, float]]:
    """The outline of a shape centred on (0, 0), half-extent ``r``, y pointing down."""
    if shape in ("circle", "ring"):
        return [(r * math.cos(t), r * math.sin(t)) for t in (2 * math.pi * k / 48 for k in range(48))]
    if shape == "ellipse":
        return [(r * math.cos(t), 0.6 * r * math.sin(t)) for t in (2 * math.pi * k / 48 for k in range(48))]
    if shape == "square":
        return [(-r, -r), (r, -r), (r, r), (-r, r)]
    if shape == "rectangle":
        return [(-r, -0.55 * r), (r, -0.55 * r), (r, 0.55 * r), (-r, 0.55 * r)]
    if shape == "triangle":
        return [(0, -r), (0.866 * r, 0.5 * r), (-0.866 * r, 0.5 * r)]
    if shape == "diamond":
        return [(0, -r), (0.7 * r, 0), (0, r), (-0.7 * r, 0)]
    if shape == "hexagon":
        return [(r * math.cos(math.pi / 3 * k), r * math.sin(math.pi / 3 * k)) for k in range(6)]
    if shape == "star":
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else 0.42 * r
            t = -math.pi / 2 + math.pi * k / 5
            pts.append((rad * math.cos(t), rad * math.sin(t)))
        return pts
    if shape == "cross":
        a = 0.33 * r
        return [(-a, -r), (a, -r), (a, -a), (r, -a), (r, a), (a, a), (a, r), (-a, r), (-a, a), (-r, a), (-r, -a),
                (-a, -a)]
    if shape == "heart":
        pts = []
        for k in range(48):
            t = 2 * math.pi * k / 48
            x = 16 * math.sin(t) ** 3
            y = 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t)
            pts.append((x * r / 17, -(y + 2) * r / 17))
        return pts
    if shape == "arrow":  # pointing right
        return [(-r, -0.25 * r), (0.2 * r, -0.25 * r), (0.2 * r, -0.7 * r), (r, 0), (0.2 * r, 0.7 * r),
                (0.2 * r, 0.25 * r), (-r, 0.25 * r)]
    raise ValueError(f"unknown shape {shape!r}")


def _rotate(points: list[tuple[float, float]], degrees: float) -> list[tuple[float, float]]:
    t = math.radians(-degrees)  # counter-clockwise on screen (y points down)
    c, s = math.cos(t), math.sin(t)
    return [(x * c - y * s, x * s + y * c) for x, y in points]


def _layout(scene: Scene, w: int, h: int, rng: random.Random) -> list[tuple[SceneObject, float, float, float]]:
    """(object, x, y, half-extent) for every object: objects sharing a cell share it in a grid."""
    short = min(w, h)
    by_cell: dict[str, list[SceneObject]] = {}
    for o in scene.objects:
        by_cell.setdefault(o.position, []).append(o)
    out = []
    for pos, objs in by_cell.items():
        k = len(objs)
        cols = math.ceil(math.sqrt(k))
        rows = math.ceil(k / cols)
        cell_w, cell_h = w / 3, h / 3
        step_x, step_y = cell_w / cols, cell_h / rows
        for i, o in enumerate(objs):
            cx = w * _CELL[pos] + (i % cols - (cols - 1) / 2) * step_x * 0.95
            cy = h * _ROW[pos] + (i // cols - (rows - 1) / 2) * step_y * 0.95
            r = short * _SIZE_FRACTION[o.size] * (1 + rng.uniform(-0.06, 0.06))
            r = min(r, 0.46 * min(step_x, step_y))
            cx += rng.uniform(-0.02, 0.02) * short
            cy += rng.uniform(-0.02, 0.02) * short
            out.append((o, cx, cy, r))
    return out


def _font() -> Any:
    from PIL import ImageFont

    loader = getattr(ImageFont, "load_default_imagefont", None)  # the bitmap font: same pixels everywhere
    return loader() if loader is not None else ImageFont.load_default()


def _draw_text(im: Any, word: str, ink: tuple[int, int, int]) -> None:
    from PIL import Image

    font = _font()
    left, top, right, bottom = font.getbbox(word)
    tw, th = max(1, right - left), max(1, bottom - top)
    mask = Image.new("L", (tw, th), 0)
    from PIL import ImageDraw

    ImageDraw.Draw(mask).text((-left, -top), word, fill=255, font=font)
    w, h = im.size
    scale = max(1, int(min(w * 0.5 / tw, h * 0.12 / th)))
    mask = mask.resize((tw * scale, th * scale), Image.NEAREST)
    x = (w - mask.width) // 2
    y = int(h * 0.5) - mask.height // 2
    im.paste(Image.new("RGB", mask.size, ink), (x, y), mask)


def _image(scene: Scene, w: int, h: int, seed: int) -> Any:
    from PIL import Image, ImageDraw, ImageFilter

    rng = random.Random(f"judgekit-scene|{seed}|{w}x{h}|{scene.to_json()}")
    bg = COLOURS[scene.background]
    im = Image.new("RGB", (w, h), bg)
    draw = ImageDraw.Draw(im)
    if scene.ground is not None:
        top = int(h * (0.72 + rng.uniform(-0.02, 0.02)))
        draw.rectangle([0, top, w, h], fill=COLOURS[scene.ground])
        draw.line([0, top, w, top], fill=_mix(COLOURS[scene.ground], (0, 0, 0), 0.3), width=max(1, h // 128))
    for obj, cx, cy, r in _layout(scene, w, h, rng):
        colour = COLOURS[obj.colour]
        if obj.motion:  # streaks trailing to the left
            streak = _mix(colour, bg, 0.45)
            for k in (-0.5, 0.0, 0.5):
                y = cy + k * r
                draw.line([cx - r * 2.6, y, cx - r * 1.15, y], fill=streak, width=max(1, int(r * 0.12)))
        pts = _shape_points(obj.shape, r)
        if obj.angle:
            pts = _rotate(pts, obj.angle)
        pts = [(cx + x, cy + y) for x, y in pts]
        line = max(2, int(r * 0.14))
        if obj.shape == "ring":
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=colour, width=max(2, int(r * 0.3)))
        elif scene.style == "outline":
            draw.line(pts + pts[:1], fill=colour, width=line, joint="curve")
        else:
            draw.polygon(pts, fill=colour)
    if scene.text:
        ink = (0, 0, 0) if sum(bg) > 380 else (255, 255, 255)  # the word sits mid-height, on the background
        _draw_text(im, scene.text, ink)
    if scene.style == "painted":
        nw, nh = max(1, w // 4), max(1, h // 4)  # a coarse grain, like canvas under paint
        noise = Image.frombytes("L", (nw, nh), rng.randbytes(nw * nh)).resize((w, h), Image.BILINEAR)
        im = Image.blend(im, Image.merge("RGB", (noise, noise, noise)), 0.08)
        draw = ImageDraw.Draw(im)
        short = min(w, h)
        for _ in range(160):
            x, y = rng.uniform(0, w - 1), rng.uniform(0, h - 1)
            base = im.getpixel((int(x), int(y)))
            c = tuple(max(0, min(255, v + rng.randint(-18, 18))) for v in base)
            t = rng.uniform(0, math.pi)
            length = short * rng.uniform(0.02, 0.06)
            draw.line([x, y, x + length * math.cos(t), y + length * math.sin(t)], fill=c,
                      width=max(1, short // 64))
        im = im.filter(ImageFilter.SMOOTH_MORE)
    return im


def _size_of(size: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(size, int):
        w = h = size
    else:
        w, h = size
    if not (8 <= w <= 4096 and 8 <= h <= 4096):
        raise ValueError(f"image size must be 8..4096 pixels a side, got {w}x{h}")
    return w, h


def render(scene: Scene, size: int | tuple[int, int] = 256, *, seed: int = 0, label: bool = False) -> bytes:
    """The scene as PNG bytes, ``size`` pixels square (or ``(width, height)``).

    Deterministic for (scene, size, seed): the seed jitters positions and sizes a little and
    draws the painted texture.  No timestamp is written.  ``label=True`` adds the tEXt chunk
    ``judgekit-scene`` holding :meth:`Scene.to_json` (written before the pixels).  Images up to
    512 x 512 get Pillow's optimising encoder (smaller files, as in the shipped sample); larger
    ones skip it, which costs seconds for a textured 1024 px image.
    """
    import io

    w, h = _size_of(size)
    im = _image(scene, w, h, seed)
    if label and w * h <= _OPTIMIZE_MAX_PIXELS:
        from ..pngtext import png_with_text

        return png_with_text(im, [(SCENE_KEY, scene.to_json())])
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    if label:
        info.add_text(SCENE_KEY, scene.to_json())
    buf = io.BytesIO()
    im.save(buf, format="PNG", pnginfo=info)  # no tIME chunk: same bytes every run
    return buf.getvalue()


def scene_from_png(data: bytes) -> Scene | None:
    """The scene a PNG's ``judgekit-scene`` chunk holds; None when it has none or it is unreadable."""
    text = read_png_text(data).get(SCENE_KEY)
    if text is None:
        return None
    try:
        return Scene.from_json(text)
    except (ValueError, TypeError, KeyError):
        return None


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


def _object_phrase(g: _Group, quality: float, rng: random.Random) -> str | None:
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
        words.append(_other(o.colour, _COLOUR_NAMES, rng))
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
    phrases = [p for p in (_object_phrase(g, quality, rng) for g in _groups(scene.objects)) if p]
    body = _join(phrases) if phrases else "an empty scene"
    fate = _keep(quality, rng)
    if fate != "drop":
        bg = scene.background if fate == "keep" else _other(scene.background, _COLOUR_NAMES, rng)
        body += f" on a {bg} background"
    if scene.ground is not None:
        fate = _keep(quality, rng)
        if fate != "drop":
            ground = scene.ground if fate == "keep" else _other(scene.ground, _COLOUR_NAMES, rng)
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
    return _COLOUR_NAMES[h[0] % len(_COLOUR_NAMES)]


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
        count = max(1, min(_MAX_COUNT, count))
        size = _SIZE_SYNONYMS[om.group("size")] if om.group("size") else "medium"
        colour = _COLOUR_WORD[om.group("colour")] if om.group("colour") else "black"
        pm = _POSITION_RE.search(window)
        am = _ANGLE_RE.search(window)
        angle = int(am.group(1)) % 360 if am else None
        obj = SceneObject(shape, colour, size, _position(pm) if pm else "center", angle or None,
                          bool(_MOTION_RE.search(window)))
        objects.extend([obj] * count)
        if len(objects) >= 4 * _MAX_COUNT:
            break
    return Scene(background=background, objects=tuple(objects[: 4 * _MAX_COUNT]), ground=ground, text=text,
                 style=style)


# ---------------------------------------------------------------------------------------------
# patterns and random scenes

_SYMBOL_SHAPES = frozenset({"cross", "heart", "arrow", "star"})
_POLYGONS = frozenset({"square", "triangle", "hexagon", "diamond", "rectangle"})
_TECH_SHAPES = frozenset({"hexagon", "ring"})
_TECH_COLOURS = frozenset({"cyan", "white", "grey", "blue"})
_DARK = frozenset({"black", "grey", "blue", "purple"})
_SKY = frozenset({"blue", "cyan", "white", "grey", "orange", "black"})
_EARTH = frozenset({"green", "brown", "yellow"})
_WORDS = ("STOP", "OPEN", "SALE", "HELLO", "EXIT", "LOVE", "CAFE", "JAZZ", "PLAY", "SUN", "GO", "ZOOM")


def scene_patterns(scene: Scene) -> frozenset[str]:
    """The MMGenBench patterns a scene shows, by rule: Artistic (painted), Color (3+ object
    colours), Surreal (a ground under an unnatural sky), Natural (a ground of earth colours
    under a sky colour), Position (objects at 2+ places), Contextual (a ground and 2+ kinds of
    object), Technology (hexagons or rings in cyan/white/grey/blue on a dark background), Symbol
    (crosses, hearts, arrows, stars), Text (a word), Geometry (outline style or 2+ kinds of
    polygon), Count (3+ identical objects), Motion (motion streaks), Orientation (a rotation)."""
    out: set[str] = set()
    objs = scene.objects
    groups = _groups(objs)
    if scene.style == "painted":
        out.add("Artistic")
    if len({o.colour for o in objs}) >= 3:
        out.add("Color")
    if scene.ground is not None:
        if scene.background in _SKY and scene.ground in _EARTH:
            out.add("Natural")
        else:
            out.add("Surreal")
        if len({o.shape for o in objs}) >= 2:
            out.add("Contextual")
    if len({o.position for o in objs}) >= 2:
        out.add("Position")
    if scene.background in _DARK and any(o.shape in _TECH_SHAPES and o.colour in _TECH_COLOURS for o in objs):
        out.add("Technology")
    if any(o.shape in _SYMBOL_SHAPES for o in objs):
        out.add("Symbol")
    if scene.text:
        out.add("Text")
    if scene.style == "outline" or len({o.shape for o in objs} & _POLYGONS) >= 2:
        out.add("Geometry")
    if any(g.count >= 3 for g in groups):
        out.add("Count")
    if any(o.motion for o in objs):
        out.add("Motion")
    if any(o.angle for o in objs):
        out.add("Orientation")
    return frozenset(out)


def _pick(rng: random.Random, options: Any, exclude: Any = ()) -> Any:
    return rng.choice([o for o in options if o not in exclude])


def random_scene(rng: random.Random, pattern: str | None = None) -> Scene:
    """A random scene; with ``pattern`` (one of :data:`PATTERNS`) one that shows it (see
    :func:`scene_patterns`), often with other patterns too, as real images are multi-label.

    One to three kinds of object (a kind may repeat up to five times), at distinct cells; all
    values drawn from ``rng``, so the same generator state gives the same scene.
    """
    if pattern is not None and pattern not in PATTERNS:
        raise ValueError(f"unknown pattern {pattern!r} (known: {', '.join(PATTERNS)})")
    background = _pick(rng, _COLOUR_NAMES)
    ground: str | None = None
    text: str | None = None
    style = "flat"
    cells = list(POSITIONS)
    rng.shuffle(cells)
    n_kinds = rng.choice((1, 1, 2, 2, 3))
    groups: list[tuple[SceneObject, int]] = []
    used_colours = {background}

    def add(shape: str | None = None, colour: str | None = None, count: int = 1, *, angle: int | None = None,
            motion: bool = False, position: str | None = None) -> None:
        shape = shape or _pick(rng, SHAPES)
        colour = colour or _pick(rng, _COLOUR_NAMES, used_colours)
        used_colours.add(colour)
        pos = position if position is not None else cells.pop()
        if position is not None and position in cells:
            cells.remove(position)
        size = _pick(rng, SIZES) if count < 3 else rng.choice(("small", "medium"))
        groups.append((SceneObject(shape, colour, size, pos, angle, motion), count))

    if pattern == "Artistic":
        style = "painted"
    elif pattern == "Natural" or pattern == "Contextual":
        background = _pick(rng, ("blue", "cyan", "white", "orange"))
        ground = _pick(rng, sorted(_EARTH), (background,))
        used_colours = {background, ground}
        add("circle", "yellow" if background != "orange" else "white", 1, position=rng.choice(("top left", "top right")))
        if pattern == "Contextual":
            add(_pick(rng, ("triangle", "square", "rectangle", "hexagon")), None, 1,
                position=rng.choice(("bottom", "bottom left", "bottom right")))
    elif pattern == "Surreal":
        background = _pick(rng, ("pink", "purple", "green", "red"))
        ground = _pick(rng, ("cyan", "pink", "purple", "blue", "white"), (background,))
        used_colours = {background, ground}
        add(_pick(rng, ("heart", "star", "ring", "ellipse")), None, 1)
    elif pattern == "Technology":
        background = _pick(rng, sorted(_DARK))
        used_colours = {background}
        add(rng.choice(("hexagon", "ring")), _pick(rng, sorted(_TECH_COLOURS), (background,)), rng.choice((1, 3)))
    elif pattern == "Symbol":
        add(_pick(rng, sorted(_SYMBOL_SHAPES)))
    elif pattern == "Text":
        text = rng.choice(_WORDS)
    elif pattern == "Geometry":
        if rng.random() < 0.5:
            style = "outline"
        else:
            a, b = rng.sample(sorted(_POLYGONS), 2)
            add(a)
            add(b)
    elif pattern == "Count":
        add(None, None, rng.randint(3, 5))
    elif pattern == "Motion":
        add(_pick(rng, ("circle", "arrow", "star", "triangle", "square")), None, 1, motion=True)
    elif pattern == "Orientation":
        add(_pick(rng, ("arrow", "triangle", "rectangle", "cross", "diamond", "star")), None, 1,
            angle=rng.choice((15, 30, 45, 60, 90, 120, 135, 180, 225, 270, 315)))
    elif pattern == "Position":
        add()
        add()
    elif pattern == "Color":
        for _ in range(3 - len(groups)):
            add(rng.choice(("circle", "square", "star", "heart", "diamond")))
    while len(groups) < n_kinds and len(groups) < 3:
        add(count=rng.choice((1, 1, 1, 2)))
    if pattern not in ("Artistic", "Geometry") and rng.random() < 0.25:
        style = rng.choice(("flat", "painted", "outline"))
    if text is None and rng.random() < 0.12:
        text = rng.choice(_WORDS)
    if pattern is not None and pattern not in ("Orientation", "Motion") and rng.random() < 0.15:
        obj, count = groups[-1]
        groups[-1] = (SceneObject(obj.shape, obj.colour, obj.size, obj.position,
                                  rng.choice((30, 45, 90)) if rng.random() < 0.5 else None,
                                  obj.motion or rng.random() < 0.5), count)
    objects = tuple(o for o, count in groups for _ in range(count))
    return Scene(background=background, objects=objects, ground=ground, text=text, style=style)
