"""The pictures of the shipped MMIE sample, drawn with Pillow: :data:`IMAGES` maps each file name to
its short description (stored in the PNG's ``judgekit-label`` chunk, what the simulator "sees") and
the function that draws it.  Fixed drawing only; text uses Pillow's built-in bitmap font, so the
pixels are the same everywhere.  ``mmie_sample.py`` beside this file writes them with the rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["IMAGES", "W", "H"]

W, H = 320, 256
SKY = (170, 210, 240)
GRASS = (90, 160, 70)
WHITE = (255, 255, 255)
BLACK = (20, 20, 20)


# --------------------------------------------------------------------------- drawing helpers


def _canvas(bg: tuple[int, int, int] = WHITE, size: tuple[int, int] = (W, H)) -> Any:
    from PIL import Image

    return Image.new("RGB", size, bg)


def _draw(im: Any) -> Any:
    from PIL import ImageDraw

    return ImageDraw.Draw(im)


def _text(im: Any, xy: tuple[int, int], text: str, fill: tuple[int, int, int] = BLACK, scale: int = 2,
          anchor: str = "la") -> None:
    """Text in Pillow's bitmap font, scaled up by ``scale`` (nearest neighbour: crisp pixels).

    ``anchor``: ``la`` (left, top), ``ma`` (centred, top).
    """
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default_imagefont()
    l, t, r, b = font.getbbox(text)
    mask = Image.new("L", (r + 1, b + 1), 0)
    ImageDraw.Draw(mask).text((0, 0), text, font=font, fill=255)
    mask = mask.resize((mask.width * scale, mask.height * scale), Image.NEAREST)
    x, y = xy
    if anchor == "ma":
        x -= mask.width // 2
    im.paste(Image.new("RGB", mask.size, fill), (x, y), mask)


def _sun(d: Any, cx: int, cy: int, r: int, fill: tuple[int, int, int] = (250, 210, 40)) -> None:
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)


def _kite(d: Any, cx: int, cy: int, s: int) -> None:
    d.polygon([(cx, cy - s), (cx + int(s * 0.7), cy), (cx, cy + s), (cx - int(s * 0.7), cy)],
              fill=(220, 40, 40), outline=(120, 20, 20))
    d.line([(cx, cy - s), (cx, cy + s)], fill=(120, 20, 20))
    d.line([(cx - int(s * 0.7), cy), (cx + int(s * 0.7), cy)], fill=(120, 20, 20))


def _person(d: Any, x: int, y: int, h: int, colour: tuple[int, int, int]) -> None:
    """A stick figure standing with its feet at (x, y)."""
    head = h // 5
    d.ellipse((x - head // 2, y - h, x + head // 2, y - h + head), fill=(240, 200, 170), outline=BLACK)
    d.line([(x, y - h + head), (x, y - h // 3)], fill=colour, width=4)
    d.line([(x, y - h // 3), (x - h // 6, y)], fill=BLACK, width=3)
    d.line([(x, y - h // 3), (x + h // 6, y)], fill=BLACK, width=3)
    d.line([(x - h // 5, y - h * 2 // 3), (x + h // 5, y - h * 2 // 3)], fill=colour, width=3)


def _tree(d: Any, x: int, ground: int, h: int) -> None:
    d.rectangle((x - h // 12, ground - h // 2, x + h // 12, ground), fill=(120, 80, 40))
    d.ellipse((x - h // 2, ground - h, x + h // 2, ground - h // 3), fill=(40, 130, 50))


def _boat(d: Any, x: int, y: int, s: int, sail: tuple[int, int, int] = (240, 140, 40), tilt: int = 0) -> None:
    d.polygon([(x - s, y), (x + s, y + tilt), (x + int(s * 0.7), y + s // 2 + tilt),
               (x - int(s * 0.7), y + s // 2)], fill=WHITE, outline=BLACK)
    d.line([(x, y), (x + tilt // 2, y - int(s * 1.4))], fill=BLACK, width=2)
    d.polygon([(x + tilt // 2, y - int(s * 1.4)), (x + tilt // 2, y - 2), (x + s, y - 2 + tilt // 2)], fill=sail)


def _sea(d: Any, top: int, colour: tuple[int, int, int] = (40, 100, 180)) -> None:
    d.rectangle((0, top, W, H), fill=colour)
    for k in range(6):
        y = top + 12 + k * 14
        for x in range(10 + (k % 2) * 20, W, 40):
            d.arc((x, y, x + 20, y + 8), 180, 360, fill=(200, 230, 250))


def _lighthouse(d: Any, x: int, base: int) -> None:
    d.polygon([(x - 14, base), (x + 14, base), (x + 8, base - 90), (x - 8, base - 90)], fill=WHITE, outline=BLACK)
    for k in range(3):
        y = base - 20 - k * 25
        d.rectangle((x - 12 + k * 2, y - 10, x + 12 - k * 2, y), fill=(210, 40, 40))
    d.rectangle((x - 9, base - 104, x + 9, base - 90), fill=(250, 230, 90), outline=BLACK)


def _snowman(d: Any, x: int, ground: int, s: int, hat: bool = False) -> None:
    d.ellipse((x - s, ground - 2 * s, x + s, ground), fill=WHITE, outline=(150, 150, 160))
    r2 = int(s * 0.7)
    top2 = ground - 2 * s - 2 * r2 + 8
    d.ellipse((x - r2, top2, x + r2, top2 + 2 * r2), fill=WHITE, outline=(150, 150, 160))
    r3 = int(s * 0.5)
    top3 = top2 - 2 * r3 + 8
    d.ellipse((x - r3, top3, x + r3, top3 + 2 * r3), fill=WHITE, outline=(150, 150, 160))
    cy = top3 + r3
    d.ellipse((x - 10, cy - 8, x - 5, cy - 3), fill=BLACK)
    d.ellipse((x + 5, cy - 8, x + 10, cy - 3), fill=BLACK)
    d.polygon([(x, cy), (x + 26, cy + 4), (x, cy + 8)], fill=(240, 130, 30))
    d.rectangle((x - r3 - 4, top3 + 2 * r3 - 10, x + r3 + 4, top3 + 2 * r3 - 2), fill=(40, 80, 200))
    d.rectangle((x + r3 - 8, top3 + 2 * r3 - 10, x + r3 + 2, top3 + 2 * r3 + 18), fill=(40, 80, 200))
    if hat:
        d.rectangle((x - r3, top3 - 4, x + r3, top3 + 2), fill=BLACK)
        d.rectangle((x - r3 + 8, top3 - 30, x + r3 - 8, top3 - 4), fill=BLACK)


def _cake(d: Any, cx: int, base: int, candles: int, lit: bool = True) -> None:
    d.rectangle((cx - 80, base - 70, cx + 80, base), fill=(250, 220, 230), outline=(200, 120, 150))
    d.rectangle((cx - 80, base - 40, cx + 80, base - 30), fill=(200, 90, 130))
    d.ellipse((cx - 100, base - 6, cx + 100, base + 10), fill=(235, 235, 240), outline=(150, 150, 160))
    step = 140 // max(1, candles)
    for k in range(candles):
        x = cx - 70 + step // 2 + k * step
        d.rectangle((x - 3, base - 100, x + 3, base - 70), fill=(80, 140, 230))
        if lit:
            d.ellipse((x - 4, base - 114, x + 4, base - 100), fill=(255, 180, 30))


def _gift(d: Any, cx: int, base: int) -> None:
    d.rectangle((cx - 60, base - 100, cx + 60, base), fill=(210, 40, 50))
    d.rectangle((cx - 70, base - 120, cx + 70, base - 95), fill=(190, 30, 40))
    d.rectangle((cx - 8, base - 120, cx + 8, base), fill=(250, 210, 50))
    d.ellipse((cx - 40, base - 145, cx - 2, base - 118), outline=(250, 210, 50), width=6)
    d.ellipse((cx + 2, base - 145, cx + 40, base - 118), outline=(250, 210, 50), width=6)


def _hands(d: Any, y: int) -> None:
    d.ellipse((90, y, 160, y + 50), fill=(240, 200, 170), outline=(160, 110, 80))
    d.ellipse((160, y, 230, y + 50), fill=(240, 200, 170), outline=(160, 110, 80))


def _tap(d: Any) -> None:
    d.rectangle((120, 20, 230, 40), fill=(170, 170, 180), outline=BLACK)
    d.rectangle((150, 40, 170, 70), fill=(170, 170, 180), outline=BLACK)
    for k in range(5):
        d.ellipse((152 + (k % 2) * 8, 80 + k * 14, 162 + (k % 2) * 8, 92 + k * 14), fill=(60, 140, 230))


def _soap(d: Any, cx: int, cy: int) -> None:
    d.rounded_rectangle((cx - 60, cy - 30, cx + 60, cy + 30), radius=14, fill=(250, 230, 110), outline=(180, 150, 40))
    for k, (dx, dy, r) in enumerate(((-70, -50, 14), (-30, -60, 10), (20, -58, 16), (65, -45, 9), (80, -10, 12))):
        d.ellipse((cx + dx - r, cy + dy - r, cx + dx + r, cy + dy + r), outline=(120, 170, 230), width=2)


def _clock(im: Any, d: Any, cx: int, cy: int, r: int, seconds: int) -> None:
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=WHITE, outline=BLACK, width=3)
    for k in range(12):
        a = math.radians(k * 30)
        d.line([(cx + (r - 10) * math.sin(a), cy - (r - 10) * math.cos(a)),
                (cx + r * math.sin(a), cy - r * math.cos(a))], fill=BLACK, width=2)
    a = math.radians(seconds * 6)
    d.pieslice((cx - r + 4, cy - r + 4, cx + r - 4, cy + r - 4), -90, -90 + seconds * 6, fill=(150, 220, 150))
    d.line([(cx, cy), (cx + (r - 14) * math.sin(a), cy - (r - 14) * math.cos(a))], fill=(200, 30, 30), width=3)
    _text(im, (cx, cy + r + 8), f"{seconds} s", anchor="ma")


def _gradient(im: Any, top: tuple[int, int, int], bottom: tuple[int, int, int]) -> None:
    d = _draw(im)
    for y in range(im.height):
        t = y / (im.height - 1)
        d.line([(0, y), (im.width, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)))


def _hills(d: Any, colour: tuple[int, int, int]) -> None:
    d.polygon([(0, H), (0, 200), (60, 170), (130, 195), (200, 160), (270, 185), (W, 175), (W, H)], fill=colour)


def _court(d: Any, x0: int, y0: int, x1: int, y1: int) -> None:
    d.rectangle((x0, y0, x1, y1), outline=WHITE, width=3)
    inset = (y1 - y0) // 12
    d.line([(x0, y0 + inset), (x1, y0 + inset)], fill=WHITE, width=2)
    d.line([(x0, y1 - inset), (x1, y1 - inset)], fill=WHITE, width=2)
    mx = (x0 + x1) // 2
    d.line([(mx - 40, (y0 + y1) // 2), (x0, (y0 + y1) // 2)], fill=WHITE, width=2)
    d.line([(mx + 40, (y0 + y1) // 2), (x1, (y0 + y1) // 2)], fill=WHITE, width=2)
    d.line([(mx - 40, y0), (mx - 40, y1)], fill=WHITE, width=2)
    d.line([(mx + 40, y0), (mx + 40, y1)], fill=WHITE, width=2)


def _graph(im: Any, pos: dict[str, tuple[int, int]], edges: list[tuple[str, str]], colour: tuple[int, int, int]) -> None:
    d = _draw(im)
    for a, b in edges:
        d.line([pos[a], pos[b]], fill=BLACK, width=3)
    for name, (x, y) in pos.items():
        d.ellipse((x - 16, y - 16, x + 16, y + 16), fill=colour, outline=BLACK, width=2)
        _text(im, (x, y - 10), name, fill=WHITE, anchor="ma")


def _spring(im: Any, mass: str, stretch: str, length: int) -> None:
    d = _draw(im)
    d.rectangle((60, 10, 260, 24), fill=(120, 120, 130))
    x, top = 160, 24
    coils = 10
    pitch = length / coils
    pts = [(x, top)]
    for k in range(coils):
        pts.append((x + (14 if k % 2 == 0 else -14), top + pitch * (k + 0.5)))
    pts.append((x, top + length))
    d.line(pts, fill=(60, 60, 60), width=3)
    d.rectangle((x - 30, top + length, x + 30, top + length + 46), fill=(90, 110, 170), outline=BLACK)
    _text(im, (x, top + length + 12), mass, fill=WHITE, anchor="ma")
    # the stretch, measured from the unstretched length (60 px) to the actual one
    y0, y1 = top + 60, top + length
    d.line([(230, y0), (230, y1)], fill=(200, 30, 30), width=2)
    d.line([(222, y0), (238, y0)], fill=(200, 30, 30), width=2)
    d.line([(222, y1), (238, y1)], fill=(200, 30, 30), width=2)
    d.line([(150, y0), (222, y0)], fill=(200, 30, 30))
    _text(im, (244, (y0 + y1) // 2 - 10), stretch, fill=(200, 30, 30))


# --------------------------------------------------------------------------- the pictures


def _kite_hill() -> Any:
    im = _canvas(SKY)
    d = _draw(im)
    _sun(d, 270, 45, 25)
    d.ellipse((-80, 170, 400, 420), fill=GRASS)
    _kite(d, 200, 70, 26)
    _person(d, 110, 200, 60, (40, 80, 200))
    _person(d, 140, 198, 44, (220, 60, 120))
    d.line([(150, 170), (200, 96)], fill=BLACK)
    return im


def _kite_tree() -> Any:
    im = _canvas(SKY)
    d = _draw(im)
    d.rectangle((0, 200, W, H), fill=GRASS)
    _tree(d, 180, 205, 170)
    _kite(d, 200, 70, 20)
    d.line([(200, 90), (230, 200)], fill=BLACK)
    return im


def _kite_high() -> Any:
    im = _canvas(SKY)
    d = _draw(im)
    for cx, cy in ((70, 60), (230, 90)):
        d.ellipse((cx - 45, cy - 18, cx + 45, cy + 18), fill=WHITE)
    _kite(d, 160, 40, 10)
    d.rectangle((0, 220, W, H), fill=GRASS)
    d.line([(160, 50), (120, 220)], fill=BLACK)
    return im


def _harbour() -> Any:
    im = _canvas(SKY)
    d = _draw(im)
    _sea(d, 140)
    d.rectangle((0, 120, 140, 150), fill=(140, 100, 60))
    for x in range(10, 140, 30):
        d.rectangle((x, 150, x + 6, 200), fill=(110, 80, 50))
    _boat(d, 200, 160, 30)
    _boat(d, 270, 170, 20, sail=(240, 240, 240))
    return im


def _boat_leaving() -> Any:
    im = _canvas((250, 200, 150))
    d = _draw(im)
    _sun(d, 240, 120, 30, fill=(250, 150, 50))
    _sea(d, 140)
    _lighthouse(d, 50, 150)
    _boat(d, 220, 150, 14)
    return im


def _storm() -> Any:
    im = _canvas((110, 115, 125))
    d = _draw(im)
    for cx, cy in ((60, 40), (150, 30), (250, 45), (110, 70), (210, 75)):
        d.ellipse((cx - 60, cy - 25, cx + 60, cy + 25), fill=(70, 70, 80))
    _sea(d, 150, colour=(30, 60, 100))
    _boat(d, 170, 150, 26, tilt=14)
    d.line([(280, 20), (265, 60), (285, 60), (268, 110)], fill=(250, 240, 120), width=3)
    return im


def _snowman_garden(hat: bool = False) -> Any:
    im = _canvas((200, 205, 215))
    d = _draw(im)
    d.rectangle((0, 200, W, H), fill=WHITE)
    _snowman(d, 160, 225, 42, hat=hat)
    return im


def _snowman_melted() -> Any:
    im = _canvas(SKY)
    d = _draw(im)
    _sun(d, 60, 50, 30)
    d.rectangle((0, 190, W, H), fill=GRASS)
    d.ellipse((110, 180, 210, 215), fill=WHITE, outline=(150, 150, 160))
    d.polygon([(175, 185), (205, 180), (178, 193)], fill=(240, 130, 30))
    d.rectangle((120, 205, 200, 214), fill=(40, 80, 200))
    return im


def _birthday_cake(lit: bool = True) -> Any:
    im = _canvas((250, 240, 220))
    d = _draw(im)
    d.rectangle((0, 200, W, H), fill=(170, 120, 80))
    _cake(d, 160, 200, 7, lit=lit)
    _text(im, (160, 16), "70", fill=(200, 90, 130), scale=3, anchor="ma")
    return im


def _gift_box() -> Any:
    im = _canvas((250, 240, 220))
    d = _draw(im)
    d.rectangle((0, 210, W, H), fill=(170, 120, 80))
    _gift(d, 160, 215)
    return im


def _wet_hands() -> Any:
    im = _canvas((225, 240, 250))
    d = _draw(im)
    _tap(d)
    _hands(d, 160)
    return im


def _soap_bar() -> Any:
    im = _canvas((225, 240, 250))
    _soap(_draw(im), 160, 150)
    return im


def _scrub_clock() -> Any:
    im = _canvas((225, 240, 250))
    _clock(im, _draw(im), 160, 110, 80, 20)
    return im


def _sky_gradient() -> Any:
    im = _canvas()
    _gradient(im, (110, 60, 150), (250, 150, 60))
    return im


def _sunset_sun() -> Any:
    im = _sky_gradient()
    d = _draw(im)
    d.pieslice((110, 150, 210, 250), 180, 360, fill=(255, 220, 60))
    d.line([(0, 200), (W, 200)], fill=(250, 150, 60))
    return im


def _sunset_hills() -> Any:
    im = _sunset_sun()
    _hills(_draw(im), (40, 30, 50))
    return im


def _sunset_native() -> Any:
    im = _canvas()
    _gradient(im, (60, 90, 170), (240, 170, 90))
    d = _draw(im)
    _sun(d, 160, 120, 40, fill=(255, 230, 80))
    d.rectangle((0, 200, W, H), fill=(40, 60, 40))
    return im


def _subject_list() -> Any:
    im = _canvas((250, 250, 235))
    d = _draw(im)
    for y in range(40, H, 32):
        d.line([(20, y + 26), (W - 20, y + 26)], fill=(170, 200, 230))
    d.line([(50, 0), (50, H)], fill=(230, 120, 120), width=2)
    for k, line in enumerate(("Maths    4 h", "Science  3 h", "English  3 h", "History  2 h")):
        _text(im, (64, 44 + k * 32), line)
    _text(im, (64, 12), "My subjects", fill=(40, 80, 200))
    return im


def _timetable(filled: bool = True) -> Any:
    im = _canvas()
    d = _draw(im)
    days = ("Mon", "Tue", "Wed", "Thu", "Fri")
    x0, y0, cw, rh = 40, 40, 54, 60
    colours = {"M": (240, 120, 110), "S": (110, 190, 120), "E": (110, 150, 230), "H": (240, 200, 90)}
    plan = ("MSE", "EMH", "MSH", "SEM", "MEH")
    for c, day in enumerate(days):
        _text(im, (x0 + c * cw + cw // 2, 14), day, anchor="ma")
        for r in range(3):
            box = (x0 + c * cw, y0 + r * rh, x0 + (c + 1) * cw, y0 + (r + 1) * rh)
            if filled:
                d.rectangle(box, fill=colours[plan[c][r]])
                _text(im, (box[0] + cw // 2, box[1] + 20), plan[c][r], anchor="ma")
            d.rectangle(box, outline=BLACK, width=2)
    for r in range(3):
        _text(im, (6, y0 + r * rh + 20), f"{r + 1}")
    return im


def _tape_measure() -> Any:
    im = _canvas(GRASS)
    d = _draw(im)
    d.rectangle((20, 120, 300, 136), fill=(250, 210, 40), outline=BLACK)
    for k in range(15):
        x = 20 + k * 20
        d.line([(x, 120), (x, 128 if k % 5 else 134)], fill=BLACK)
    d.ellipse((276, 104, 316, 152), fill=(220, 60, 40), outline=BLACK)
    _text(im, (160, 80), "13.4 m", fill=WHITE, anchor="ma")
    d.rectangle((14, 100, 24, 150), fill=WHITE)
    return im


def _court_marked() -> Any:
    im = _canvas(GRASS)
    d = _draw(im)
    _court(d, 20, 50, 300, 206)
    _text(im, (160, 12), "13.4 m x 6.1 m", fill=WHITE, anchor="ma")
    return im


def _court_net() -> Any:
    im = _court_marked()
    d = _draw(im)
    d.rectangle((156, 30, 164, 226), fill=(90, 90, 90))
    for y in range(50, 206, 8):
        d.line([(152, y), (168, y)], fill=(240, 240, 240))
    d.line([(160, 40), (160, 216)], fill=WHITE, width=2)
    return im


def _court_native() -> Any:
    im = _canvas(GRASS)
    d = _draw(im)
    d.rectangle((40, 60, 280, 196), outline=WHITE, width=3)
    d.line([(160, 50), (160, 206)], fill=(40, 40, 40), width=5)
    return im


def _bar_chart() -> Any:
    im = _canvas(size=(384, 288))
    d = _draw(im)
    values = (("Mon", 12), ("Tue", 7), ("Wed", 15), ("Thu", 9))
    x0, y0, top = 50, 250, 40
    unit = (y0 - top) / 16
    _text(im, (192, 8), "Apples sold", anchor="ma")
    d.line([(x0, top - 10), (x0, y0), (370, y0)], fill=BLACK, width=2)
    for v in range(0, 17, 4):
        y = round(y0 - v * unit)
        d.line([(x0 - 5, y), (x0, y)], fill=BLACK)
        d.line([(x0 + 1, y), (370, y)], fill=(225, 225, 225))
        _text(im, (10, y - 8), f"{v:>2}", scale=1)
    for k, (day, v) in enumerate(values):
        bx = x0 + 20 + k * 78
        d.rectangle((bx, round(y0 - v * unit), bx + 50, y0 - 1), fill=(200, 60, 50))
        _text(im, (bx + 25, y0 + 6), day, anchor="ma", scale=1)
        _text(im, (bx + 25, round(y0 - v * unit) - 14), str(v), anchor="ma", scale=1)
    return im


def _triangle(hyp_label: str | None = None) -> Any:
    im = _canvas()
    d = _draw(im)
    a, b, c = (60, 210), (260, 210), (60, 60)
    d.polygon([a, b, c], outline=BLACK, width=3, fill=(235, 240, 250))
    d.rectangle((60, 192, 78, 210), outline=BLACK, width=2)
    _text(im, (160, 220), "8 cm", anchor="ma")
    _text(im, (10, 125), "6 cm")
    if hyp_label:
        _text(im, (172, 112), hyp_label, fill=(200, 30, 30))
    return im


def _graph_a() -> Any:
    im = _canvas(size=(256, 256))
    _graph(im, {"A": (60, 60), "B": (196, 60), "C": (196, 196), "D": (60, 196)},
           [("A", "B"), ("B", "C"), ("C", "D"), ("D", "A")], (40, 100, 200))
    return im


def _graph_b() -> Any:
    im = _canvas(size=(256, 256))
    _graph(im, {"1": (60, 60), "2": (196, 60), "3": (196, 196), "4": (60, 196)},
           [("1", "3"), ("3", "2"), ("2", "4"), ("4", "1")], (200, 90, 40))
    return im


def _spring_2kg() -> Any:
    im = _canvas(size=(320, 288))
    _spring(im, "2 kg", "4 cm", 100)
    return im


def _spring_5kg() -> Any:
    im = _canvas(size=(320, 288))
    _spring(im, "5 kg", "? cm", 160)
    return im


#: file name -> (label, drawing)
IMAGES: dict[str, tuple[str, Callable[[], Any]]] = {
    "SA_0001_q1.png": ("a red diamond kite above a green hill where a man and a girl stand, yellow sun, blue sky", _kite_hill),
    "SA_0001_gt1.png": ("a red kite caught in the crown of a green tree on a lawn", _kite_tree),
    "SA_0001_ans1.png": ("a small red kite very high in a blue sky between white clouds", _kite_high),
    "SA_0002_q1.png": ("a wooden pier and two small sailing boats in a blue harbour", _harbour),
    "SA_0002_q2.png": ("a small sailing boat heading out to sea past a red and white lighthouse at sunrise", _boat_leaving),
    "SA_0002_gt1.png": ("a tilted sailing boat on a dark sea under grey storm clouds and lightning", _storm),
    "SA_0003_q1.png": ("a big snowman with a carrot nose and a blue scarf in a snowy garden", _snowman_garden),
    "SA_0003_gt1.png": ("a melted snowman: a white lump, a carrot and a blue scarf on green grass in the sun", _snowman_melted),
    "SA_0003_ans1.png": ("a snowman with a black top hat, carrot nose and blue scarf in the snow", lambda: _snowman_garden(hat=True)),
    "SA_0004_q1.png": ("a pink birthday cake with seven lit candles and the number 70", _birthday_cake),
    "SA_0004_gt1.png": ("a red gift box with a yellow ribbon and bow on a table", _gift_box),
    "SA_0004_ans1.png": ("a pink birthday cake with seven blown-out candles and the number 70", lambda: _birthday_cake(lit=False)),
    "PBL_0001_q1.png": ("two hands under a running tap with blue water drops", _wet_hands),
    "PBL_0001_gt1.png": ("a yellow bar of soap with soap bubbles", _soap_bar),
    "PBL_0001_gt2.png": ("a clock face with the first 20 seconds shaded green, labelled 20 s", _scrub_clock),
    "PBL_0001_ans1.png": ("a yellow bar of soap with soap bubbles", _soap_bar),
    "PBL_0002_q1.png": ("a sky painted as a gradient from purple at the top to orange at the bottom", _sky_gradient),
    "PBL_0002_gt1.png": ("a half yellow sun on the horizon of a purple to orange gradient sky", _sunset_sun),
    "PBL_0002_gt2.png": ("dark hill silhouettes in front of a half sun and a purple to orange sky", _sunset_hills),
    "PBL_0002_ans1.png": ("a full yellow sun in a blue to orange sky above a dark green strip", _sunset_native),
    "PBL_0003_q1.png": ("a lined notebook page listing Maths 4 h, Science 3 h, English 3 h, History 2 h", _subject_list),
    "PBL_0003_gt1.png": ("an empty weekly grid, Monday to Friday, three study slots a day", lambda: _timetable(filled=False)),
    "PBL_0003_gt2.png": ("a weekly timetable grid with coloured slots for Maths, Science, English and History", _timetable),
    "PBL_0004_q1.png": ("a yellow tape measure stretched over a lawn, labelled 13.4 m", _tape_measure),
    "PBL_0004_q2.png": ("a badminton court marked in white lines on grass, 13.4 m x 6.1 m", _court_marked),
    "PBL_0004_gt1.png": ("a badminton court on grass with a net across the middle between two posts", _court_net),
    "PBL_0004_ans1.png": ("a white rectangle on grass with a dark line across the middle", _court_native),
    "MSR_0001_q1.png": ("a bar chart 'Apples sold': Mon 12, Tue 7, Wed 15, Thu 9", _bar_chart),
    "MSR_0002_q1.png": ("a right triangle with legs labelled 6 cm and 8 cm", _triangle),
    "MSR_0002_ans1.png": ("a right triangle with legs 6 cm and 8 cm and the hypotenuse labelled 10 cm", lambda: _triangle("10 cm")),
    "MSR_0003_q1.png": ("graph A: vertices A, B, C, D with edges A-B, B-C, C-D, D-A (a square)", _graph_a),
    "MSR_0003_q2.png": ("graph B: vertices 1, 2, 3, 4 with edges 1-3, 3-2, 2-4, 4-1 (crossing diagonals)", _graph_b),
    "MSR_0004_q1.png": ("a spring hanging from a ceiling holding a 2 kg block, stretched 4 cm", _spring_2kg),
    "MSR_0004_q2.png": ("the same spring holding a 5 kg block, its stretch marked '? cm'", _spring_5kg),
}
