"""Scenes drawn: :func:`render` (PNG bytes with Pillow, deterministic for scene, size and seed;
``label=True`` stores the scene in the ``judgekit-scene`` chunk) and :func:`scene_from_png`."""

from __future__ import annotations

import math
import random
from typing import Any

from .scene_model import COLOURS, POSITIONS, Scene, SceneObject

_SIZE_FRACTION = {"small": 0.07, "medium": 0.11, "large": 0.155}  # half-extent, of the shorter side
_CELL = {p: ((i % 3) * 2 + 1) / 6 for i, p in enumerate(POSITIONS)}  # x centre of a cell
_ROW = {p: ((i // 3) * 2 + 1) / 6 for i, p in enumerate(POSITIONS)}  # y centre of a cell
_OPTIMIZE_MAX_PIXELS = 512 * 512

from ..pngtext import SCENE_KEY, read_png_text

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


