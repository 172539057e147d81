"""The sample's builds: blocky, Minecraft-like voxels drawn with Pillow, shown in three stages.

``3.png`` is the whole build, ``2.png`` about 70 % of its blocks and ``1.png`` about 40 % (a
seeded, mostly bottom-up build order, so each stage's blocks are among the next one's).
"""

from __future__ import annotations

import math
import random
from typing import Callable

from PIL import Image, ImageDraw, ImageOps

from judgekit.pngtext import KIND_KEY, LABEL_KEY, STAGE_KEY, png_with_text

__all__ = ["STAGE_FRACTIONS", "stage_cells", "build_images"]

#: share of the blocks shown in 1.png, 2.png, 3.png
STAGE_FRACTIONS = (0.4, 0.7, 1.0)


_SIZE = 256
_GROUND_Y = 224  # the top of the grass row
_DEPTH = 4  # the oblique offset of the top and side faces, in pixels

#: block colours, Minecraft-like
_PALETTE: dict[str, tuple[int, int, int]] = {
    "R": (176, 42, 36),    # red wool
    "r": (222, 92, 80),    # light red
    "e": (122, 28, 26),    # dark red
    "G": (62, 112, 30),    # leaves / dark green
    "g": (118, 188, 38),   # lime
    "X": (34, 78, 28),     # dark green (rind)
    "w": (214, 236, 170),  # pale green
    "B": (98, 70, 42),     # oak log
    "P": (170, 136, 84),   # oak planks
    "O": (230, 134, 30),   # orange (pumpkin)
    "o": (184, 96, 20),    # dark orange
    "W": (244, 246, 248),  # snow / white wool
    "K": (30, 30, 36),     # black / coal
    "S": (128, 128, 128),  # stone
    "s": (206, 210, 214),  # iron / light grey
    "C": (96, 222, 212),   # diamond
    "c": (36, 150, 150),   # dark diamond
    "Y": (250, 212, 64),   # gold
    "y": (255, 240, 160),  # glowstone light
    "L": (178, 218, 240),  # glass
    "D": (52, 96, 204),    # water
    "d": (222, 206, 150),  # sand
    "M": (222, 56, 66),    # melon red
    "T": (250, 250, 246),  # milk
}


class _Build:
    """Blocks on a grid: (x, y) -> colour code, x to the right, y up (0 = resting on the grass)."""

    def __init__(self) -> None:
        self.blocks: dict[tuple[int, int], str] = {}

    def put(self, x: int, y: int, code: str) -> None:
        self.blocks[(x, y)] = code

    def rect(self, x0: int, y0: int, x1: int, y1: int, code: str) -> None:
        for x in range(x0, x1 + 1):
            for y in range(y0, y1 + 1):
                self.blocks[(x, y)] = code

    def disk(self, cx: float, cy: float, rx: float, code: str, ry: float | None = None,
             keep: Callable[[int, int], bool] | None = None) -> None:
        ry = rx if ry is None else ry
        for x in range(math.floor(cx - rx), math.ceil(cx + rx) + 1):
            for y in range(math.floor(cy - ry), math.ceil(cy + ry) + 1):
                if ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1.0 and (keep is None or keep(x, y)):
                    self.blocks[(x, y)] = code

    def line(self, x0: int, y0: int, x1: int, y1: int, code: str) -> None:
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(n + 1):
            self.blocks[(round(x0 + (x1 - x0) * i / n), round(y0 + (y1 - y0) * i / n))] = code

    def recolour(self, code: str, where: Callable[[int, int], bool]) -> None:
        for (x, y) in list(self.blocks):
            if where(x, y):
                self.blocks[(x, y)] = code

    def remove(self, *cells: tuple[int, int]) -> None:
        for c in cells:
            self.blocks.pop(c, None)


def _apple() -> _Build:
    b = _Build()
    b.disk(7.5, 6.5, 7.0, "R", ry=6.6)
    b.remove((7, 13), (8, 13), (7, 0), (8, 0))  # the dip at the stem and at the bottom
    b.recolour("e", lambda x, y: (x - 7.5) ** 2 + (y - 6.5) ** 2 > 30 and x > 9 and y < 6)
    for c in ((3, 10), (3, 9), (4, 11), (2, 8), (4, 10)):
        b.put(*c, "r")
    b.rect(8, 12, 8, 14, "B")
    b.put(9, 15, "B")
    for c in ((10, 15), (11, 15), (10, 16), (11, 16), (12, 16), (12, 17)):
        b.put(*c, "G")
    return b


def _sword() -> _Build:
    b = _Build()
    for k in range(5, 16):  # the blade, on the diagonal, tip at the top right
        b.put(k, k, "C")
        if k < 15:
            b.put(k + 1, k, "c")
        if k < 14:
            b.put(k, k + 1, "s")
    for t in range(-3, 4):  # the crossguard, across the blade
        b.put(4 + t, 4 - t, "Y")
        if -3 < t < 3:
            b.put(5 + t, 4 - t, "Y")
    b.put(3, 3, "B")
    b.put(2, 2, "B")
    b.put(3, 2, "B")
    b.put(2, 3, "B")
    b.rect(0, 0, 1, 1, "Y")  # the pommel
    return b


def _pumpkin() -> _Build:
    b = _Build()
    b.disk(8, 5.2, 8.4, "O", ry=5.6)
    b.recolour("o", lambda x, y: x in (3, 6, 10, 13))
    b.remove((8, 10), (7, 10), (9, 10))
    b.rect(7, 10, 8, 12, "B")
    for c in ((9, 12), (10, 12), (10, 13), (11, 13), (5, 11), (5, 12), (4, 12)):
        b.put(*c, "G")
    return b


def _caterpillar() -> _Build:
    b = _Build()
    for i, cx in enumerate((2, 5, 8, 11)):  # body segments on a little wave
        cy = 2.6 if i % 2 else 2.0
        b.disk(cx, cy, 1.6, "g" if i % 2 else "G")
        b.put(cx, 0, "K")  # a leg under each
    b.disk(14.5, 3.6, 2.2, "R")  # the head
    b.put(15, 4, "K")
    b.put(13, 4, "K")
    b.line(13, 6, 12, 8, "K")  # antennae
    b.line(16, 6, 17, 8, "K")
    return b


def _snowman() -> _Build:
    b = _Build()
    b.disk(7, 4.2, 4.6, "W")
    b.disk(7, 11.0, 3.3, "W")
    b.disk(7, 15.8, 2.3, "W")
    b.put(6, 16, "K")
    b.put(8, 16, "K")
    b.put(7, 15, "O")
    b.put(8, 15, "O")
    b.put(7, 12, "K")
    b.put(7, 10, "K")
    b.put(7, 6, "K")
    b.line(10, 11, 13, 14, "B")  # stick arms
    b.line(4, 11, 1, 14, "B")
    b.line(12, 13, 12, 15, "B")
    b.rect(4, 18, 10, 18, "K")  # the hat
    b.rect(5, 19, 9, 21, "K")
    b.rect(5, 19, 9, 19, "R")
    b.rect(5, 13, 9, 13, "R")  # a scarf
    b.put(9, 12, "R")
    b.put(9, 11, "R")
    return b


def _house() -> _Build:
    b = _Build()
    b.rect(1, 0, 14, 6, "P")
    b.rect(1, 0, 1, 6, "B")
    b.rect(14, 0, 14, 6, "B")
    b.rect(7, 0, 8, 3, "B")  # the door
    b.put(8, 1, "Y")
    b.rect(3, 2, 5, 4, "L")  # windows
    b.rect(10, 2, 12, 4, "L")
    b.put(4, 3, "B")
    b.put(11, 3, "B")
    b.rect(11, 9, 12, 13, "S")  # the chimney, behind the roof
    for i in range(8):  # the roof
        b.rect(i - 1, 7 + i, 16 - i, 7 + i, "R" if i % 2 == 0 else "e")
    b.rect(6, 9, 9, 10, "L")  # an attic window
    return b


def _rocking_chair() -> _Build:
    b = _Build()
    prev = None
    for x in range(0, 17):  # the rocker: a curve resting on the grass at its middle
        y = round(0.05 * (x - 8) ** 2)
        b.put(x, y, "B")
        if prev is not None and prev != y:  # no gap where the curve steps
            b.put(x - 1 if prev < y else x, max(prev, y), "B")
        prev = y
    b.rect(4, 1, 4, 5, "B")  # front leg
    b.rect(11, 1, 11, 5, "B")  # back leg
    b.rect(3, 6, 12, 6, "P")  # seat
    b.rect(3, 5, 12, 5, "B")
    b.rect(4, 10, 10, 10, "P")  # armrest
    b.rect(5, 7, 5, 9, "B")
    for y in range(7, 17):  # the backrest, leaning back
        x = 11 + (y - 7) // 3
        b.put(x, y, "B")
        b.put(x + 1, y, "P")
    b.rect(13, 17, 15, 17, "B")
    return b


def _fish_tank() -> _Build:
    b = _Build()
    b.rect(0, 3, 16, 3, "P")  # the stand
    b.rect(1, 0, 1, 2, "B")
    b.rect(15, 0, 15, 2, "B")
    b.rect(1, 4, 15, 4, "K")  # the tank: black rims, glass sides
    b.rect(1, 14, 15, 14, "K")
    b.rect(1, 5, 1, 13, "L")
    b.rect(15, 5, 15, 13, "L")
    b.rect(2, 5, 14, 12, "D")
    b.rect(2, 13, 14, 13, "L")
    b.rect(2, 5, 14, 5, "d")
    b.rect(3, 6, 3, 10, "G")  # plants
    b.rect(4, 6, 4, 8, "g")
    b.rect(13, 6, 13, 11, "G")
    b.rect(12, 6, 12, 7, "g")
    for c in ((6, 9), (7, 9), (8, 9), (7, 10), (7, 8), (5, 10), (5, 8)):  # an orange fish
        b.put(*c, "O")
    b.put(8, 10, "K")
    for c in ((10, 7), (11, 7), (10, 6), (9, 8), (9, 6)):  # a yellow fish
        b.put(*c, "Y")
    b.put(10, 11, "W")  # bubbles
    b.put(9, 12, "W")
    return b


def _lighthouse() -> _Build:
    b = _Build()
    b.rect(2, 0, 13, 0, "S")  # rocks
    b.rect(3, 1, 12, 1, "S")
    for y in range(2, 14):
        half = 4 if y < 6 else 3 if y < 11 else 2
        b.rect(8 - half, y, 7 + half, y, "R" if ((y - 2) // 3) % 2 == 0 else "W")
    b.rect(7, 2, 8, 3, "K")  # the door
    b.put(7, 9, "K")
    b.rect(4, 14, 11, 14, "K")  # the gallery
    b.rect(6, 15, 9, 16, "L")  # the lamp room
    b.rect(7, 15, 8, 16, "Y")
    for x in (1, 2, 3, 4, 11, 12, 13, 14):  # the beams
        b.put(x, 15 if x in (3, 4, 11, 12) else 16, "y")
    b.rect(5, 17, 10, 17, "R")
    b.rect(6, 18, 9, 18, "R")
    b.rect(7, 19, 8, 19, "K")
    return b


def _watermelon() -> _Build:
    b = _Build()
    cx, cy, r = 8.0, 9.0, 8.6
    for x in range(0, 17):
        for y in range(0, 10):
            d = math.hypot(x - cx, y - cy)
            if d <= r:
                b.put(x, y, "X" if d > r - 1.2 else "w" if d > r - 2.2 else "M")
    for c in ((4, 7), (7, 6), (10, 7), (12, 5), (6, 4), (9, 3), (4, 5), (11, 8), (8, 8)):
        if b.blocks.get(c) == "M":
            b.put(*c, "K")
    return b


def _glass_of_milk() -> _Build:
    b = _Build()
    b.rect(0, 0, 9, 0, "L")
    b.rect(0, 1, 0, 13, "L")
    b.rect(9, 1, 9, 13, "L")
    b.rect(1, 1, 8, 10, "T")
    b.rect(1, 10, 8, 10, "W")
    return b


_BUILDS: dict[str, Callable[[], _Build]] = {
    "apple": _apple, "sword": _sword, "pumpkin": _pumpkin, "caterpillar": _caterpillar,
    "snowman": _snowman, "house": _house, "rocking chair": _rocking_chair, "fish tank": _fish_tank,
    "lighthouse": _lighthouse, "watermelon": _watermelon, "Glass of Milk": _glass_of_milk,
}


def _shade(rgb: tuple[int, int, int], f: float) -> tuple[int, int, int]:
    return tuple(max(0, min(255, round(c * f))) for c in rgb)  # type: ignore[return-value]


def _texture(code: str, bs: int) -> Image.Image:
    """A block's front face: its colour in 4x4 texels of slightly varied brightness, a dark rim."""
    rng = random.Random(f"guessbench-texture/{code}")
    face = Image.new("RGB", (bs, bs))
    d = ImageDraw.Draw(face)
    base = _PALETTE[code]
    n = 4
    for i in range(n):
        for j in range(n):
            x0, y0 = i * bs // n, j * bs // n
            d.rectangle((x0, y0, (i + 1) * bs // n - 1, (j + 1) * bs // n - 1),
                        fill=_shade(base, rng.choice((0.9, 0.95, 1.0, 1.0, 1.05))))
    d.rectangle((0, 0, bs - 1, bs - 1), outline=_shade(base, 0.72))
    return face


def _background(rng: random.Random) -> Image.Image:
    sky = ImageOps.colorize(Image.linear_gradient("L").resize((_SIZE, _GROUND_Y)),
                            black=(112, 164, 246), white=(190, 220, 255))
    im = Image.new("RGB", (_SIZE, _SIZE))
    im.paste(sky, (0, 0))
    d = ImageDraw.Draw(im)
    d.rectangle((206, 18, 229, 41), fill=(255, 244, 150))  # the square sun
    for _ in range(2):  # blocky clouds
        x, y = rng.randrange(0, 170, 8), rng.randrange(10, 60, 8)
        d.rectangle((x, y, x + 64, y + 16), fill=(250, 252, 255))
        d.rectangle((x + 16, y - 8, x + 48, y), fill=(250, 252, 255))
    grass, dirt = (98, 160, 52), (134, 96, 62)
    d.rectangle((0, _GROUND_Y, _SIZE, _SIZE), fill=dirt)
    d.rectangle((0, _GROUND_Y, _SIZE, _GROUND_Y + 5), fill=grass)
    for x in range(0, _SIZE, 4):  # grass hanging over the dirt, and pebbles in it
        d.rectangle((x, _GROUND_Y + 6, x + 3, _GROUND_Y + 6 + rng.choice((0, 0, 3, 7))), fill=grass)
    for _ in range(40):
        x, y = rng.randrange(0, _SIZE, 4), rng.randrange(_GROUND_Y + 12, _SIZE, 4)
        d.rectangle((x, y, x + 3, y + 3), fill=_shade(dirt, rng.choice((0.8, 1.15))))
    return im


def _stage_order(build: _Build, rng: random.Random) -> list[tuple[int, int]]:
    """The order the blocks are placed: mostly bottom-up, with some randomness."""
    top = max(y for _, y in build.blocks) or 1
    cells = sorted(build.blocks)
    keys = {c: 0.55 * c[1] / top + 0.45 * rng.random() for c in cells}
    return sorted(cells, key=lambda c: keys[c])


def _render_build(build: _Build, shown: set[tuple[int, int]], rng: random.Random) -> Image.Image:
    min_x = min(x for x, _ in build.blocks)
    min_y = min(y for _, y in build.blocks)
    cells = {(x - min_x, y - min_y): code for (x, y), code in build.blocks.items()}
    visible = {(x - min_x, y - min_y) for x, y in shown}
    width = max(x for x, _ in cells) + 1
    height = max(y for _, y in cells) + 1
    bs = min(12, (_GROUND_Y - 16) // height, (_SIZE - 24) // width)
    left = (_SIZE - width * bs - _DEPTH) // 2
    im = _background(rng)
    d = ImageDraw.Draw(im)
    faces = {code: _texture(code, bs) for code in set(cells.values())}

    def corner(x: int, y: int) -> tuple[int, int]:
        return left + x * bs, _GROUND_Y - (y + 1) * bs

    for (x, y) in sorted(visible, key=lambda c: (c[1], -c[0])):  # top and side faces, behind the fronts
        code = cells[(x, y)]
        px, py = corner(x, y)
        k = _DEPTH
        if (x, y + 1) not in visible:
            d.polygon([(px, py), (px + k, py - k), (px + bs + k - 1, py - k), (px + bs - 1, py)],
                      fill=_shade(_PALETTE[code], 1.18))
        if (x + 1, y) not in visible:
            d.polygon([(px + bs, py), (px + bs + k - 1, py - k), (px + bs + k - 1, py + bs - k - 1),
                       (px + bs, py + bs - 1)], fill=_shade(_PALETTE[code], 0.7))
    for (x, y) in visible:
        im.paste(faces[cells[(x, y)]], corner(x, y))
    return im


def stage_cells(answer: str, seed_tag: str) -> tuple[frozenset[tuple[int, int]], ...]:
    """The blocks (x, y) shown in 1.png, 2.png and 3.png of a sample build: each stage a prefix
    of one seeded build order, so stage 1 is within stage 2 and stage 2 within stage 3."""
    build = _BUILDS[answer]()
    order = _stage_order(build, random.Random(f"guessbench-order/{seed_tag}"))
    return tuple(frozenset(order[: round(frac * len(order))]) for frac in STAGE_FRACTIONS)


def build_images(answer: str, seed_tag: str) -> list[bytes]:
    build = _BUILDS[answer]()
    out = []
    for stage, shown in enumerate(stage_cells(answer, seed_tag), start=1):
        im = _render_build(build, set(shown), random.Random(f"guessbench-sky/{seed_tag}"))
        out.append(png_with_text(im, [(LABEL_KEY, answer), (STAGE_KEY, str(stage)), (KIND_KEY, "build")]))
    return out
