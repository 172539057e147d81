"""Image input tokens by the providers' published rules, computed from the pixel size alone.

OpenAI (platform.openai.com/docs/guides/images-vision, "Calculating costs"), two schemes:

* **tiles** (GPT-4o, GPT-4.1, GPT-4.5, GPT-4-turbo, GPT-5, o1/o3): ``detail="low"`` costs the
  base alone.  ``"high"``, ``"auto"`` and unset: scale the image to fit within 2048 x 2048, then
  so that its shortest side is 768 px (both steps only ever shrink it), count the 512 x 512
  tiles that cover it and charge ``base + tile * tiles``.  Base/tile are 85/170 for GPT-4o-class
  models (1024 x 1024 -> 765, 2048 x 4096 -> 1105), 2833/5667 for gpt-4o-mini, 75/150 for
  o1/o3 and 70/140 for GPT-5.
* **patches** (gpt-4.1-mini/nano, gpt-5-mini/nano, o4-mini): count the 32 x 32 patches that
  cover the image; above 1536 patches the image is shrunk to fit 1536 (keeping whole patches on
  the limiting side); tokens = patches x a per-model multiplier (1.62, 2.46, 1.72), rounded up.  ``detail``
  does not change these.

Gemini, by generation (ai.google.dev/gemini-api/docs/tokens, "Count multimodal tokens", and
docs/image-understanding, "Technical details"):

* **Gemini 2.x**: an image whose sides are both <= 384 px costs 258 tokens; a larger one is
  "cropped and scaled as needed into tiles of 768x768 pixels, each counted as 258 tokens":
  ``258 * ceil(w / 768) * ceil(h / 768)`` (1024 x 1024 -> 4 tiles, 1032; 600 x 400 -> 1 tile).
* **Gemini 1.5**: the image-understanding guide's older rule: <= 384 px both sides is 258; else
  square crop units of side ``clamp(min(w, h) / 1.5, 256, 768)``, each resized to 768 x 768 and
  counted 258 (the tokens guide says a flat 258 "prior to Gemini 2.0"; the crop units are never
  fewer, so an estimate or a cost-cap reservation is never short).
* **Gemini 3 and later**: by ``media_resolution``, whose default for images (high) is at most
  1120 tokens per image, whatever its size (judgekit sends no ``media_resolution``).

Claude (provider ``anthropic``, or a model named ``claude-*``; platform.claude.com/docs, "Vision",
"Evaluate image size" and "Calculate image costs"): an image whose long edge is over 1568 px, or
that would cost more than about 1,600 tokens, is first scaled down, keeping its aspect ratio,
until it fits both; it then costs ``ceil(width * height / 750)`` tokens (200 x 200 -> 54,
1000 x 1000 -> 1334, 1092 x 1092 -> 1590; 2048 x 2048 is scaled to 1095 x 1095 -> 1599).  The
"about 1,600 tokens" is taken as 1,200,000 pixels, so a scaled image never costs more than 1,600.

The rules are written from the providers' docs as of 2025; an unknown provider gets the OpenAI
tile rule with the GPT-4o numbers.

Image *generation* (the Images API) bills the generated image as output tokens, by model
family, quality and size: :func:`generation_output_tokens`, from OpenAI's gpt-image-1 table
(platform.openai.com/docs/guides/image-generation, "Cost and latency"):

=========  =========  =========  =========
quality    1024x1024  1024x1536  1536x1024
=========  =========  =========  =========
low        272        408        400
medium     1056       1584       1568
high       4160       6240       6208
=========  =========  =========  =========

gpt-image-1 and gpt-image-1-mini share it.  ``quality`` unset or ``auto`` counts as ``high`` and
``size="auto"`` as 1024x1024, so an estimate is never too low; another size (the simulator's
256x256 and 512x512) is the 1024x1024 count scaled by pixel area, rounded up.  DALL-E models bill
per image, not per token: None.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from ._names import base_name, undated

__all__ = ["image_tokens", "GEMINI_PROVIDERS", "generation_output_tokens", "GENERATION_OUTPUT_TOKENS"]

#: provider ids whose images follow the Gemini rule (a model named ``gemini-*`` does too)
GEMINI_PROVIDERS = frozenset({"gemini", "google", "google-gla", "google-vertex", "vertex", "vertexai"})
#: provider ids whose images follow Claude's rule (a model named ``claude-*`` does too)
ANTHROPIC_PROVIDERS = frozenset({"anthropic"})


@dataclass(frozen=True, slots=True)
class _Tiles:
    base: int
    tile: int


@dataclass(frozen=True, slots=True)
class _Patches:
    multiplier: float


@dataclass(frozen=True, slots=True)
class _Gemini:
    generation: int  # 1, 2 (tiled crop units) or 3 (media_resolution)


@dataclass(frozen=True, slots=True)
class _Claude:
    pass


_Rule = _Tiles | _Patches | _Gemini | _Claude

_GPT4O = _Tiles(85, 170)
# Most specific first: the first prefix that matches the model's base name wins.
_OPENAI_RULES: tuple[tuple[str, _Rule], ...] = (
    ("gpt-4.1-mini", _Patches(1.62)),
    ("gpt-4.1-nano", _Patches(2.46)),
    ("gpt-5-mini", _Patches(1.62)),
    ("gpt-5-nano", _Patches(2.46)),
    ("o4-mini", _Patches(1.72)),
    ("gpt-4o-mini", _Tiles(2833, 5667)),
    ("gpt-5", _Tiles(70, 140)),
    ("o1", _Tiles(75, 150)),
    ("o3", _Tiles(75, 150)),
)
_GEMINI_VERSION = re.compile(r"gemini-(\d+)")


@lru_cache(maxsize=256)
def _rule(provider: str, model: str) -> _Rule:
    name = base_name(model)
    if provider.lower() in ANTHROPIC_PROVIDERS or name.startswith("claude"):
        return _Claude()
    if provider.lower() in GEMINI_PROVIDERS or name.startswith("gemini"):
        m = _GEMINI_VERSION.match(name)
        gen = int(m.group(1)) if m else 2
        return _Gemini(1 if gen < 2 else 3 if gen >= 3 else 2)  # a name with no number: 2.x
    for prefix, rule in _OPENAI_RULES:
        if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1] in ("", "-", "."):
            return rule
    return _GPT4O


def image_tokens(provider: str, model: str, width: int, height: int, detail: str | None) -> int:
    """Input tokens one image of ``width`` x ``height`` pixels costs (see the module docstring).

    ``detail`` is OpenAI's ``low``/``high``/``auto`` (None = auto); other providers ignore it.
    Raises ValueError for a non-positive size.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    rule = _rule(provider, model)
    if isinstance(rule, _Tiles):
        if detail == "low":
            return rule.base
        return rule.base + rule.tile * _openai_tiles(width, height)
    if isinstance(rule, _Patches):
        return math.ceil(_openai_patches(width, height) * rule.multiplier)
    if isinstance(rule, _Claude):
        return claude_image_tokens(width, height)
    return _gemini_tokens(rule.generation, width, height)


#: Claude scales an image down until its long edge is at most this many pixels...
CLAUDE_MAX_EDGE = 1568
#: ... and it holds at most this many pixels (about 1,600 tokens at 750 pixels a token)
CLAUDE_MAX_PIXELS = 1_200_000
CLAUDE_PIXELS_PER_TOKEN = 750


def claude_image_tokens(width: int, height: int) -> int:
    """Claude's tokens for an image of ``width`` x ``height`` pixels, after the API's downscaling
    (see the module docstring)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if max(width, height) > CLAUDE_MAX_EDGE:  # the long edge to 1568, the short one in proportion
        if width >= height:
            width, height = CLAUDE_MAX_EDGE, max(1, height * CLAUDE_MAX_EDGE // width)
        else:
            width, height = max(1, width * CLAUDE_MAX_EDGE // height), CLAUDE_MAX_EDGE
    if width * height > CLAUDE_MAX_PIXELS:
        scale = math.sqrt(CLAUDE_MAX_PIXELS / (width * height))
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return math.ceil(width * height / CLAUDE_PIXELS_PER_TOKEN)


def _openai_tiles(w: int, h: int) -> int:
    """512 px tiles after fitting in 2048 x 2048 and bringing the shortest side down to 768."""
    if max(w, h) > 2048:
        w, h = (2048, h * 2048 // w) if w >= h else (w * 2048 // h, 2048)
    short = min(w, h)
    if short > 768:
        w, h = w * 768 // short, h * 768 // short
    return math.ceil(w / 512) * math.ceil(h / 512)


_PATCH = 32
_MAX_PATCHES = 1536


def _openai_patches(w: int, h: int) -> int:
    """32 px patches, the image shrunk to at most 1536 of them (OpenAI's worked procedure)."""
    patches = math.ceil(w / _PATCH) * math.ceil(h / _PATCH)
    if patches <= _MAX_PATCHES:
        return patches
    shrink = math.sqrt(_PATCH * _PATCH * _MAX_PATCHES / (w * h))
    sw, sh = w * shrink / _PATCH, h * shrink / _PATCH  # size in patches, fractional
    shrink *= min(math.floor(sw) / sw, math.floor(sh) / sh)  # whole patches on the tighter side
    return min(_MAX_PATCHES, math.ceil(int(w * shrink) / _PATCH) * math.ceil(int(h * shrink) / _PATCH))


_GEMINI_IMAGE = 258
_GEMINI3_IMAGE = 1120


_GEMINI_TILE = 768
_GEMINI_SMALL = 384


def _gemini_tokens(generation: int, w: int, h: int) -> int:
    """Gemini's image tokens by model generation (see the module docstring)."""
    if generation >= 3:
        return _GEMINI3_IMAGE
    if w <= _GEMINI_SMALL and h <= _GEMINI_SMALL:
        return _GEMINI_IMAGE
    if generation == 1:  # 1.5: crop units of a third less than the short side, 256..768 px
        unit = min(max(min(w, h) / 1.5, 256.0), float(_GEMINI_TILE))
        return _GEMINI_IMAGE * math.ceil(w / unit) * math.ceil(h / unit)
    return _GEMINI_IMAGE * math.ceil(w / _GEMINI_TILE) * math.ceil(h / _GEMINI_TILE)


#: output tokens of one generated image: quality -> size -> tokens (gpt-image-1 family)
GENERATION_OUTPUT_TOKENS: dict[str, dict[str, int]] = {
    "low": {"1024x1024": 272, "1024x1536": 408, "1536x1024": 400},
    "medium": {"1024x1024": 1056, "1024x1536": 1584, "1536x1024": 1568},
    "high": {"1024x1024": 4160, "1024x1536": 6240, "1536x1024": 6208},
}
_GPT_IMAGE_1 = re.compile(r"gpt-image-1(?:-mini)?$")
_SIZE = re.compile(r"(\d+)x(\d+)$")


def generation_output_tokens(model: str, size: str, quality: str | None) -> int | None:
    """Output tokens of one image ``model`` generates at ``size`` (``"1024x1536"``, ``"auto"``)
    and ``quality`` (``low``/``medium``/``high``, None or ``auto``: high); None for a model
    outside the gpt-image-1 family, an unknown quality or a malformed size (see the module
    docstring)."""
    if not _GPT_IMAGE_1.match(undated(model)):
        return None
    q = "high" if quality in (None, "auto") else quality
    table = GENERATION_OUTPUT_TOKENS.get(q)  # type: ignore[arg-type]
    if table is None:
        return None
    size = "1024x1024" if size == "auto" else size
    if size in table:
        return table[size]
    m = _SIZE.match(size)
    if not m or int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
        return None
    return math.ceil(table["1024x1024"] * int(m.group(1)) * int(m.group(2)) / (1024 * 1024))
