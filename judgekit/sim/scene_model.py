"""Scenes as data: :class:`Scene` and :class:`SceneObject`, the vocabularies (shapes, colours,
sizes, grid positions, styles), MMGenBench's 13 patterns, :func:`random_scene` and
:func:`scene_patterns`.  Drawing is :mod:`judgekit.sim.scene_draw`, words
:mod:`judgekit.sim.scene_words`; :mod:`judgekit.sim.scenes` gathers all three.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

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

COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)
#: the most objects of one kind a scene holds (and a caption counts)
MAX_COUNT = 12


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
class Group:
    obj: SceneObject
    count: int = 1


def groups(objects: tuple[SceneObject, ...]) -> list[Group]:
    out: dict[SceneObject, Group] = {}
    for o in objects:
        g = out.get(o)
        if g is None:
            out[o] = Group(o)
        else:
            g.count += 1
    return list(out.values())


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
    counted = groups(objs)
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
    if any(g.count >= 3 for g in counted):
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
    background = _pick(rng, COLOUR_NAMES)
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
        colour = colour or _pick(rng, COLOUR_NAMES, used_colours)
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
