"""The sample's retrieval "photos": smoother pictures of concepts, drawn with Pillow, that a local
image retriever indexes (one per sample answer and per distractor)."""

from __future__ import annotations

import math
import random
from typing import Callable, Iterable

from PIL import Image, ImageDraw, ImageFilter, ImageOps

from judgekit.pngtext import KIND_KEY, LABEL_KEY, png_with_text

__all__ = ["photo_bytes", "retrieval_file_name", "PHOTO_LABELS"]


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


def photo_bytes(label: str) -> bytes:
    backdrop, draw = _PHOTOS[label]
    p = _Photo(backdrop)
    draw(p)
    return png_with_text(p.image(), [(LABEL_KEY, label), (KIND_KEY, "photo")])

#: every concept that has a photo
PHOTO_LABELS = tuple(_PHOTOS)
