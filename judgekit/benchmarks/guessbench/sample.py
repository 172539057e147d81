"""The shipped GuessBench sample: ten build sets drawn here, in the real layout.

None of it comes from the real benchmark.  Each set is a blocky, Minecraft-like build of a
concept drawn with Pillow as front-facing voxels on a sky and a row of grass: ``3.png`` is the
whole build, ``2.png`` about 70% of its blocks and ``1.png`` about 40% (a seeded, mostly
bottom-up build order, so the blocks of 1 are among those of 2, and those of 2 among 3's).
The hints are ``generate_hints(answer, seed=set number)``.  Beside the sets:

``example/``
    the paper's one-shot worked example, "Glass of Milk" (Table 5), whose Hint_3 reveals the
    paper's three letters (l, s, k) and Hint_2 two of them;
``retrieval/``
    one smoother, "photo"-style picture per sample answer and per distractor concept, named by
    its label (``rocking_chair.png``), with ``labels.json`` mapping file name -> label: the
    image folder a local retriever indexes.

Every PNG carries tEXt chunks saying what it shows: ``judgekit-label`` (the concept),
``judgekit-kind`` (``build`` or ``photo``) and, for builds, ``judgekit-stage`` (``1``..``3``).
Real models never see them; judgekit's simulator reads them (:func:`read_png_text`) to "see".
Everything is seeded and PNGs are written without timestamps, so a run gives the same bytes.

    python -m judgekit.benchmarks.guessbench.sample [OUT_DIR]     # default data/guessbench
"""

from __future__ import annotations

import argparse
import io
import json
import math
import random
import struct
import zlib
from pathlib import Path
from typing import Callable, Iterable

from PIL import Image, ImageDraw, ImageFilter, ImageOps, PngImagePlugin

from .data import ANSWER_FILE, HINT_FILES, IMAGE_FILES
from .hints import format_hint, generate_hints

__all__ = ["LABEL_KEY", "STAGE_KEY", "KIND_KEY", "SAMPLE_ANSWERS", "DISTRACTORS", "EXAMPLE_ANSWER",
           "STAGE_FRACTIONS", "read_png_text", "write_sample", "retrieval_file_name", "stage_cells",
           "set_seed_tag", "main"]

LABEL_KEY = "judgekit-label"
STAGE_KEY = "judgekit-stage"
KIND_KEY = "judgekit-kind"

#: set number -> answer, in folder order (mixed lengths: six short answers, four long)
SAMPLE_ANSWERS: dict[int, str] = {
    1: "apple", 2: "sword", 3: "pumpkin", 4: "caterpillar", 5: "snowman",
    6: "house", 7: "rocking chair", 8: "fish tank", 9: "lighthouse", 10: "watermelon",
}
#: concepts that only have a retrieval photo (near misses of the answers)
DISTRACTORS = ("pear", "tomato", "orange", "dagger", "castle", "windmill", "ice cream", "umbrella",
               "armchair", "snail")
EXAMPLE_ANSWER = "Glass of Milk"
#: the letters the paper's one-shot Hint_3 reveals: 1st word's 2nd (l), 5th (s), 3rd word's 4th (k)
EXAMPLE_HINT3 = frozenset({(0, 1), (0, 4), (2, 3)})
EXAMPLE_HINT2 = frozenset({(0, 1), (2, 3)})
#: share of the blocks shown in 1.png, 2.png, 3.png
STAGE_FRACTIONS = (0.4, 0.7, 1.0)

_PNG_SIG = b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- PNG text


def read_png_text(data: bytes) -> dict[str, str]:
    """The text chunks (tEXt, zTXt, iTXt) of PNG bytes before the first IDAT, key -> value.

    Walks the chunk structure with :mod:`struct` only (no decoding, no CRC check), so it is cheap
    enough to call on every image a request carries.  Not a PNG, or a truncated one: what could be
    read ({} at worst).
    """
    if data[:8] != _PNG_SIG:
        return {}
    out: dict[str, str] = {}
    pos, end = 8, len(data)
    while pos + 8 <= end:
        length, ctype = struct.unpack_from(">I4s", data, pos)
        start = pos + 8
        stop = start + length
        if ctype == b"IDAT" or stop > end:  # the pixels, or a chunk whose data is cut short
            break
        if ctype in (b"tEXt", b"zTXt", b"iTXt"):
            item = _text_chunk(ctype, data[start:stop])
            if item is not None:
                out[item[0]] = item[1]
        elif ctype == b"IEND":
            break
        pos = stop + 4  # skip the CRC
    return out


def _text_chunk(ctype: bytes, body: bytes) -> tuple[str, str] | None:
    key, sep, rest = body.partition(b"\0")
    if not sep:
        return None
    try:
        if ctype == b"tEXt":
            return key.decode("latin-1"), rest.decode("latin-1")
        if ctype == b"zTXt":  # compression method byte, then zlib data
            return key.decode("latin-1"), zlib.decompress(rest[1:]).decode("latin-1")
        # iTXt: compression flag, method, language tag \0, translated keyword \0, text (UTF-8)
        flag = rest[0]
        _lang, _, rest = rest[2:].partition(b"\0")
        _tkey, _, text = rest.partition(b"\0")
        if flag:
            text = zlib.decompress(text)
        return key.decode("latin-1"), text.decode("utf-8")
    except (zlib.error, UnicodeDecodeError, IndexError):
        return None


def _png_bytes(im: Image.Image, text: Iterable[tuple[str, str]]) -> bytes:
    info = PngImagePlugin.PngInfo()
    for key, value in text:
        info.add_text(key, value)
    buf = io.BytesIO()
    im.save(buf, format="PNG", pnginfo=info, optimize=True)  # no tIME chunk: same bytes every run
    return buf.getvalue()


# --------------------------------------------------------------------------- builds (voxels)

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
    "lighthouse": _lighthouse, "watermelon": _watermelon, EXAMPLE_ANSWER: _glass_of_milk,
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


def _build_images(answer: str, seed_tag: str) -> list[bytes]:
    build = _BUILDS[answer]()
    out = []
    for stage, shown in enumerate(stage_cells(answer, seed_tag), start=1):
        im = _render_build(build, set(shown), random.Random(f"guessbench-sky/{seed_tag}"))
        out.append(_png_bytes(im, [(LABEL_KEY, answer), (STAGE_KEY, str(stage)), (KIND_KEY, "build")]))
    return out


# --------------------------------------------------------------------------- retrieval "photos"

_PHOTO = 192
_Box = tuple[float, float, float, float]
_Colour = tuple[int, ...] | None  # RGB, or RGBA to blend
_SS = 4  # drawn at 4x and scaled down: smooth edges, unlike the builds


class _Photo:
    """A smooth drawing on a backdrop; coordinates in output pixels (0..192)."""

    def __init__(self, backdrop: str) -> None:
        n = _PHOTO * _SS
        if backdrop == "studio":
            top, bottom = (244, 240, 234), (208, 200, 190)
        elif backdrop == "sea":
            top, bottom = (150, 196, 240), (226, 238, 250)
        else:
            top, bottom = (128, 184, 238), (222, 236, 250)
        self.im = ImageOps.colorize(Image.linear_gradient("L").resize((n, n)), black=top, white=bottom)
        self.d = ImageDraw.Draw(self.im, "RGBA")
        if backdrop == "outdoor":
            self.d.rectangle(self._s((0, 150, 192, 192)), fill=(104, 156, 76))
        elif backdrop == "sea":
            self.d.rectangle(self._s((0, 140, 192, 192)), fill=(48, 104, 170))
        else:
            self.d.rectangle(self._s((0, 150, 192, 192)), fill=(196, 180, 160, 140))

    @staticmethod
    def _s(v: Iterable[float]) -> list[float]:
        return [c * _SS for c in v]

    def _pts(self, pts: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x * _SS, y * _SS) for x, y in pts]

    def shadow(self, box: tuple[float, float, float, float]) -> None:
        mask = Image.new("L", self.im.size, 0)
        ImageDraw.Draw(mask).ellipse(self._s(box), fill=110)
        mask = mask.filter(ImageFilter.GaussianBlur(6 * _SS))
        self.im.paste(Image.new("RGB", self.im.size, (60, 50, 40)), (0, 0), mask)

    def ellipse(self, box: _Box, fill: _Colour, outline: _Colour = None, width: float = 0) -> None:
        self.d.ellipse(self._s(box), fill=fill, outline=outline, width=round(width * _SS))

    def rect(self, box: _Box, fill: _Colour, radius: float = 0, outline: _Colour = None,
             width: float = 0) -> None:
        self.d.rounded_rectangle(self._s(box), radius=radius * _SS, fill=fill, outline=outline,
                                 width=round(width * _SS))

    def poly(self, pts: Iterable[tuple[float, float]], fill: _Colour, outline: _Colour = None) -> None:
        self.d.polygon(self._pts(pts), fill=fill, outline=outline)

    def line(self, pts: Iterable[tuple[float, float]], fill: _Colour, width: float) -> None:
        self.d.line(self._pts(pts), fill=fill, width=round(width * _SS), joint="curve")

    def arc(self, box: _Box, start: float, end: float, fill: _Colour, width: float) -> None:
        self.d.arc(self._s(box), start, end, fill=fill, width=round(width * _SS))

    def pie(self, box: _Box, start: float, end: float, fill: _Colour) -> None:
        self.d.pieslice(self._s(box), start, end, fill=fill)

    def image(self) -> Image.Image:
        return self.im.resize((_PHOTO, _PHOTO), Image.Resampling.LANCZOS)


_HI = (255, 255, 255, 90)  # a highlight


def _p_apple(p: _Photo) -> None:
    p.shadow((50, 150, 146, 168))
    p.ellipse((44, 56, 116, 158), (196, 30, 40))
    p.ellipse((76, 56, 148, 158), (196, 30, 40))
    p.ellipse((60, 66, 82, 96), _HI)
    p.line([(96, 64), (100, 40)], (92, 62, 36), 5)
    p.poly([(102, 48), (124, 34), (138, 40), (118, 54)], (70, 150, 50))


def _p_pear(p: _Photo) -> None:
    p.shadow((52, 152, 140, 170))
    p.ellipse((48, 88, 144, 162), (190, 200, 70))
    p.ellipse((70, 44, 122, 110), (196, 206, 80))
    p.poly([(72, 90), (120, 90), (140, 120), (52, 120)], (192, 202, 74))
    p.ellipse((66, 96, 86, 130), _HI)
    p.line([(96, 46), (102, 26)], (92, 62, 36), 5)


def _p_tomato(p: _Photo) -> None:
    p.shadow((40, 146, 152, 166))
    p.ellipse((36, 64, 156, 156), (226, 48, 36))
    p.ellipse((58, 78, 88, 100), _HI)
    for a in range(0, 360, 72):  # the calyx, a green star
        r = math.radians(a)
        p.line([(96, 70), (96 + 22 * math.cos(r), 70 + 9 * math.sin(r))], (60, 130, 40), 6)
    p.line([(96, 70), (98, 56)], (60, 130, 40), 5)


def _p_orange(p: _Photo) -> None:
    p.shadow((44, 148, 148, 168))
    p.ellipse((44, 54, 148, 158), (244, 150, 30))
    rng = random.Random("orange-peel")
    for _ in range(60):
        x, y = rng.uniform(56, 136), rng.uniform(66, 146)
        if (x - 96) ** 2 + (y - 106) ** 2 < 46 ** 2:
            p.ellipse((x, y, x + 1.6, y + 1.6), (222, 126, 20))
    p.ellipse((62, 70, 90, 96), _HI)
    p.poly([(96, 56), (116, 38), (128, 46), (104, 58)], (70, 150, 50))


def _p_pumpkin(p: _Photo) -> None:
    p.shadow((24, 146, 168, 168))
    for box, c in (((28, 72, 92, 160), (212, 110, 20)), ((100, 72, 164, 160), (212, 110, 20)),
                   ((46, 66, 110, 162), (236, 132, 30)), ((82, 66, 146, 162), (236, 132, 30)),
                   ((68, 64, 124, 164), (246, 148, 40))):
        p.ellipse(box, c, outline=(190, 96, 16), width=1.5)
    p.poly([(90, 68), (94, 44), (106, 42), (102, 68)], (96, 110, 40))


def _blade(p: _Photo, tip: float, base: float, half: float, guard: tuple[float, float]) -> None:
    p.shadow((60, 164, 132, 178))
    p.poly([(96, tip), (96 + half, tip + 16), (96 + half, base), (96 - half, base), (96 - half, tip + 16)],
           (200, 206, 214))
    p.poly([(96, tip), (96 + half, tip + 16), (96 + half, base), (96, base)], (170, 176, 186))
    p.line([(96, tip + 12), (96, base - 2)], (140, 146, 156), 1.5)
    p.rect((96 - guard[0], base, 96 + guard[0], base + guard[1]), (200, 160, 50), radius=3)
    p.rect((91, base + guard[1], 101, base + guard[1] + 30), (100, 60, 36), radius=3)
    p.ellipse((88, base + guard[1] + 28, 104, base + guard[1] + 44), (200, 160, 50))


def _p_sword(p: _Photo) -> None:
    _blade(p, 12, 112, 8, (30, 8))


def _p_dagger(p: _Photo) -> None:
    _blade(p, 66, 118, 9, (18, 6))


def _p_snowman(p: _Photo) -> None:
    p.shadow((48, 164, 144, 180))
    for box in ((50, 110, 142, 174), (62, 70, 130, 126), (72, 36, 120, 82)):
        p.ellipse(box, (248, 250, 252), outline=(190, 205, 222), width=1.5)
    p.rect((76, 16, 116, 40), (30, 30, 34))
    p.rect((66, 36, 126, 42), (30, 30, 34))
    p.ellipse((84, 52, 90, 58), (20, 20, 20))
    p.ellipse((102, 52, 108, 58), (20, 20, 20))
    p.poly([(96, 62), (120, 66), (96, 68)], (240, 120, 30))
    p.rect((70, 78, 122, 86), (200, 40, 40), radius=3)
    for y in (94, 106, 118):
        p.ellipse((93, y, 99, y + 6), (20, 20, 20))
    p.line([(64, 96), (30, 76), (22, 80)], (110, 74, 40), 3)
    p.line([(128, 96), (164, 72), (170, 62)], (110, 74, 40), 3)


def _p_house(p: _Photo) -> None:
    p.rect((40, 86, 152, 156), (232, 214, 180))
    p.poly([(30, 90), (96, 36), (162, 90)], (150, 50, 40))
    p.rect((120, 40, 134, 70), (120, 70, 60))
    p.rect((84, 116, 108, 156), (110, 70, 44), radius=2)
    for x in (52, 122):
        p.rect((x, 100, x + 22, 122), (170, 210, 236), outline=(255, 255, 255), width=2)
        p.line([(x + 11, 100), (x + 11, 122)], (255, 255, 255), 1.5)


def _p_castle(p: _Photo) -> None:
    stone = (160, 160, 166)
    p.rect((52, 80, 140, 156), stone)
    for x in range(52, 140, 12):
        p.rect((x, 72, x + 7, 82), stone)
    for x0 in (24, 132):
        p.rect((x0, 60, x0 + 36, 156), (150, 150, 158))
        p.poly([(x0 - 4, 62), (x0 + 18, 22), (x0 + 40, 62)], (70, 80, 140))
        p.rect((x0 + 13, 86, x0 + 23, 104), (50, 50, 60), radius=4)
    p.pie((80, 110, 112, 142), 180, 360, (70, 50, 40))
    p.rect((80, 126, 112, 156), (70, 50, 40))


def _p_lighthouse(p: _Photo) -> None:
    p.poly([(30, 168), (60, 134), (136, 134), (166, 168)], (120, 116, 110))
    p.poly([(74, 138), (84, 48), (108, 48), (118, 138)], (246, 246, 246))
    for y0 in (58, 96):
        t0, t1 = (y0 - 48) / 90, (y0 + 18 - 48) / 90
        p.poly([(84 - 10 * t0, y0), (108 + 10 * t0, y0), (108 + 10 * t1, y0 + 18), (84 - 10 * t1, y0 + 18)],
               (200, 40, 40))
    p.rect((78, 42, 114, 48), (40, 40, 44))
    p.rect((84, 24, 108, 42), (255, 230, 120))
    p.poly([(80, 24), (96, 10), (112, 24)], (200, 40, 40))
    p.poly([(108, 30), (190, 14), (190, 46)], (255, 240, 160, 110))
    p.poly([(84, 30), (2, 18), (2, 44)], (255, 240, 160, 90))


def _p_windmill(p: _Photo) -> None:
    p.poly([(76, 156), (84, 68), (108, 68), (116, 156)], (230, 220, 200))
    p.poly([(78, 70), (96, 48), (114, 70)], (150, 60, 50))
    p.rect((90, 130, 102, 156), (110, 70, 44), radius=2)
    for a in (20, 110, 200, 290):
        r = math.radians(a)
        cx, cy = 96 + 30 * math.cos(r), 64 + 30 * math.sin(r)
        dx, dy = 8 * -math.sin(r), 8 * math.cos(r)
        p.poly([(96, 64), (96 + 56 * math.cos(r), 64 + 56 * math.sin(r)),
                (96 + 56 * math.cos(r) + dx, 64 + 56 * math.sin(r) + dy), (cx + dx, cy + dy)], (120, 90, 60))
    p.ellipse((91, 59, 101, 69), (80, 60, 40))


def _p_fish_tank(p: _Photo) -> None:
    p.shadow((20, 150, 172, 172))
    p.rect((22, 46, 170, 156), (60, 130, 200), radius=6)
    p.rect((26, 50, 166, 66), (150, 200, 236))
    p.rect((26, 140, 166, 152), (226, 206, 150))
    for x in (40, 50, 146):
        p.line([(x, 142), (x - 6, 110), (x + 2, 90)], (50, 150, 70), 5)
    p.ellipse((72, 88, 108, 108), (246, 140, 30))
    p.poly([(106, 98), (122, 86), (122, 110)], (246, 140, 30))
    p.ellipse((78, 94, 83, 99), (20, 20, 20))
    p.ellipse((116, 112, 140, 124), (250, 210, 60))
    p.poly([(139, 118), (150, 110), (150, 126)], (250, 210, 60))
    for x, y in ((96, 80), (100, 72), (94, 64)):
        p.ellipse((x, y, x + 5, y + 5), None, outline=(230, 244, 255), width=1)
    p.rect((22, 46, 170, 156), None, radius=6, outline=(40, 40, 44), width=3)


def _p_caterpillar(p: _Photo) -> None:
    p.poly([(10, 150), (90, 120), (182, 140), (100, 170)], (90, 170, 70))
    for i, x in enumerate(range(30, 140, 22)):
        y = 112 + (8 if i % 2 else 0)
        p.ellipse((x, y - 20, x + 30, y + 10), (120, 200, 60) if i % 2 else (96, 180, 50),
                  outline=(70, 130, 40), width=1)
        p.line([(x + 10, y + 8), (x + 8, y + 16)], (40, 40, 40), 2)
    p.ellipse((138, 76, 176, 114), (210, 50, 40))
    p.ellipse((150, 86, 158, 94), (255, 255, 255))
    p.ellipse((163, 86, 171, 94), (255, 255, 255))
    p.line([(148, 80), (140, 58)], (40, 40, 40), 2)
    p.line([(166, 80), (174, 58)], (40, 40, 40), 2)


def _p_snail(p: _Photo) -> None:
    p.shadow((30, 150, 170, 168))
    p.poly([(24, 156), (150, 156), (176, 146), (168, 134), (40, 140)], (200, 180, 140))
    p.line([(160, 140), (170, 110)], (200, 180, 140), 4)
    p.line([(168, 140), (182, 114)], (200, 180, 140), 4)
    for i, r in enumerate((48, 36, 24, 12)):
        shell = (176, 110, 50) if i % 2 == 0 else (204, 144, 80)
        p.ellipse((92 - r + 6 * i, 100 - r, 92 + r + 6 * i, 100 + r), shell)


def _p_rocking_chair(p: _Photo) -> None:
    wood = (130, 80, 40)
    p.arc((10, 40, 182, 170), 40, 140, wood, 7)
    p.line([(58, 160), (62, 104)], wood, 6)
    p.line([(126, 160), (124, 104)], wood, 6)
    p.line([(50, 104), (132, 104)], wood, 8)
    p.line([(124, 104), (146, 30)], wood, 7)
    p.line([(108, 104), (128, 34)], wood, 4)
    p.line([(140, 30), (124, 32)], wood, 6)
    p.line([(54, 74), (134, 70)], wood, 5)
    p.line([(60, 78), (60, 102)], wood, 4)


def _p_armchair(p: _Photo) -> None:
    p.shadow((30, 150, 162, 170))
    fabric, dark = (70, 110, 170), (50, 84, 140)
    p.rect((46, 30, 146, 120), fabric, radius=16)
    p.rect((24, 84, 62, 150), dark, radius=12)
    p.rect((130, 84, 168, 150), dark, radius=12)
    p.rect((56, 104, 136, 138), (86, 126, 186), radius=8)
    p.rect((34, 148, 44, 162), (90, 60, 36))
    p.rect((148, 148, 158, 162), (90, 60, 36))


def _p_watermelon(p: _Photo) -> None:
    p.shadow((24, 132, 168, 154))
    p.pie((20, 20, 172, 172), 0, 180, (40, 120, 50))
    p.pie((28, 28, 164, 164), 0, 180, (220, 240, 190))
    p.pie((34, 34, 158, 158), 0, 180, (232, 60, 70))
    for x, y in ((70, 110), (96, 122), (122, 110), (84, 136), (110, 136), (58, 100), (134, 100)):
        p.ellipse((x, y, x + 5, y + 8), (30, 20, 20))


def _p_ice_cream(p: _Photo) -> None:
    p.poly([(68, 96), (124, 96), (96, 176)], (216, 170, 100))

    def edge(t: float, side: int) -> tuple[float, float]:  # a point on the cone's left/right edge
        return 96 + side * 28 * (1 - t), 96 + 80 * t

    for i in range(6):  # the waffle pattern, edge to edge
        t = i / 6
        p.line([edge(t, -1), edge(min(1.0, t + 0.35), 1)], (180, 130, 70), 1.5)
        p.line([edge(t, 1), edge(min(1.0, t + 0.35), -1)], (180, 130, 70), 1.5)
    p.ellipse((62, 64, 130, 110), (250, 240, 220))
    p.ellipse((66, 30, 126, 80), (240, 160, 180))
    p.ellipse((88, 18, 104, 34), (200, 20, 40))


def _p_umbrella(p: _Photo) -> None:
    p.pie((20, 30, 172, 150), 180, 360, (200, 40, 60))
    for a in (210, 240, 270, 300, 330):
        r = math.radians(a)
        p.line([(96, 90), (96 + 76 * math.cos(r), 90 + 60 * math.sin(r))], (150, 20, 40), 1.5)
    p.line([(96, 30), (96, 150)], (60, 40, 30), 4)
    p.arc((84, 140, 108, 164), 0, 180, (60, 40, 30), 4)


_PHOTOS: dict[str, tuple[str, Callable[[_Photo], None]]] = {
    "apple": ("studio", _p_apple), "pear": ("studio", _p_pear), "tomato": ("studio", _p_tomato),
    "orange": ("studio", _p_orange), "pumpkin": ("studio", _p_pumpkin), "sword": ("studio", _p_sword),
    "dagger": ("studio", _p_dagger), "snowman": ("outdoor", _p_snowman), "house": ("outdoor", _p_house),
    "castle": ("outdoor", _p_castle), "lighthouse": ("sea", _p_lighthouse),
    "windmill": ("outdoor", _p_windmill), "fish tank": ("studio", _p_fish_tank),
    "caterpillar": ("outdoor", _p_caterpillar), "snail": ("outdoor", _p_snail),
    "rocking chair": ("studio", _p_rocking_chair), "armchair": ("studio", _p_armchair),
    "watermelon": ("studio", _p_watermelon), "ice cream": ("studio", _p_ice_cream),
    "umbrella": ("outdoor", _p_umbrella),
}


def retrieval_file_name(label: str) -> str:
    """``rocking chair`` -> ``rocking_chair.png``."""
    return "_".join(label.lower().split()) + ".png"


def _photo_bytes(label: str) -> bytes:
    backdrop, draw = _PHOTOS[label]
    p = _Photo(backdrop)
    draw(p)
    return _png_bytes(p.image(), [(LABEL_KEY, label), (KIND_KEY, "photo")])


# --------------------------------------------------------------------------- writing

_README = """\
# GuessBench sample (synthetic)

Made by judgekit, not taken from GuessBench: ten build sets in the benchmark's layout
(`N/1.png 2.png 3.png Hint_1.txt Hint_2.txt Hint_3.txt Answer.txt`), drawn with Pillow as blocky,
Minecraft-like builds; `example/` is the paper's one-shot example (Glass of Milk) and
`retrieval/` the "real photo" stand-ins a local image retriever indexes (`labels.json`).
Every PNG carries tEXt chunks (`judgekit-label`, `judgekit-stage`, `judgekit-kind`) that
judgekit's simulator reads; real models ignore them.

Regenerate (same bytes every time):

    python -m judgekit.benchmarks.guessbench.sample data/guessbench
"""


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def set_seed_tag(set_id: str) -> str:
    """The tag that seeds a sample set's drawings (``"set-7"``, ``"example"``)."""
    return "example" if set_id == "example" else f"set-{set_id}"


def _write_set(folder: Path, answer: str, hints: tuple[str, str, str], seed_tag: str) -> None:
    for name, data in zip(IMAGE_FILES, _build_images(answer, seed_tag)):
        _write(folder / name, data)
    for name, hint in zip(HINT_FILES, hints):
        _write(folder / name, (hint + "\n").encode("utf-8"))
    _write(folder / ANSWER_FILE, (answer + "\n").encode("utf-8"))


def write_sample(out_dir: str | Path) -> Path:
    """Write the sample into ``out_dir`` (created if needed; files of the same names are replaced)."""
    out = Path(out_dir)
    for n, answer in SAMPLE_ANSWERS.items():
        _write_set(out / str(n), answer, generate_hints(answer, seed=n), set_seed_tag(str(n)))
    example_hints = (format_hint(EXAMPLE_ANSWER, frozenset()), format_hint(EXAMPLE_ANSWER, EXAMPLE_HINT2),
                     format_hint(EXAMPLE_ANSWER, EXAMPLE_HINT3))
    _write_set(out / "example", EXAMPLE_ANSWER, example_hints, set_seed_tag("example"))
    labels: dict[str, str] = {}
    for label in (*SAMPLE_ANSWERS.values(), *DISTRACTORS):
        name = retrieval_file_name(label)
        _write(out / "retrieval" / name, _photo_bytes(label))
        labels[name] = label
    _write(out / "retrieval" / "labels.json",
           (json.dumps(dict(sorted(labels.items())), indent=2) + "\n").encode("utf-8"))
    _write(out / "README.md", _README.encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m judgekit.benchmarks.guessbench.sample",
        description="Write the synthetic GuessBench sample: 10 build sets, the one-shot example and "
                    "the retrieval images.",
    )
    ap.add_argument("out_dir", nargs="?", default="data/guessbench",
                    help="where to write (default: %(default)s)")
    args = ap.parse_args(argv)
    out = write_sample(args.out_dir)
    files = [p for p in out.rglob("*") if p.is_file()]
    print(f"wrote {out} ({len(files)} files, {sum(p.stat().st_size for p in files):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
