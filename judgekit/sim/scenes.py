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

from .scene_draw import render, scene_from_png
from .scene_model import (
                          COLOURS,
                          PATTERNS,
                          POSITIONS,
                          SHAPES,
                          SIZES,
                          STYLES,
                          Scene,
                          SceneObject,
                          random_scene,
                          scene_patterns,
)
from .scene_words import describe, parse

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
