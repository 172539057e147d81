"""MMGenBench's simulated behaviour: the captioner of its scene images.

Registered for the simulator by :data:`judgekit.benchmarks.registry.SIMULATED` (order 40, see
:mod:`judgekit.sim.behaviours`).

``caption``
    MMGenBench's caption prompt (``prompts/mmgenbench/caption.txt``: "image caption-prompt" and
    "Text-to-Image model").  With an image whose PNG carries a ``judgekit-scene`` chunk, the reply
    is :func:`judgekit.sim.scenes.describe` of that scene at the model's quality; without one, a
    generic caption from the simulator's word list.  About 5 % of captions leak the way real
    models do (wrapped in quotes, a trailing ``</s>`` or ``<|im_end|>``) and about 3 % run past 70
    words, which MMGenBench's clean-up must handle.

The pictures themselves (the scene model, and the image-generation API drawing a prompt's scene)
are the simulator's own: :mod:`judgekit.sim.scenes`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from judgekit.pngtext import SCENE_KEY
from judgekit.sim.behaviours import Behaviour, Request
from judgekit.sim.replies import ADJECTIVES, VOCAB
from judgekit.sim.scenes import Scene, describe

__all__ = ["KIND_CAPTION", "behaviours", "caption_text", "classify"]

KIND_CAPTION = "caption"
#: markers of MMGenBench's caption prompt (prompts/mmgenbench/caption.txt)
_CAPTION_MARKS = ("image caption-prompt", "Text-to-Image model")

_CAPTION_TAILS = (
    "Rendered in high resolution with crisp details and a clean, uncluttered composition.",
    "Highly detailed, sharp focus, balanced framing, professional quality, no watermark, no extra "
    "elements, soft even lighting, trending digital art style.",
)


def classify(text: str, last_user: str) -> str | None:
    """``caption`` for MMGenBench's caption prompt, else None."""
    return KIND_CAPTION if all(m in text for m in _CAPTION_MARKS) else None


def _generic_caption(quality: float, rng: random.Random) -> str:
    """A caption of an image the simulator cannot see: vocabulary words in a caption's frame."""
    pool = VOCAB[: min(int(60 + 540 * quality), len(VOCAB))]
    n = rng.randint(20, 45)
    words = [rng.choice(pool) for _ in range(n - 6)]
    return (f"A {rng.choice(ADJECTIVES)} image of a {words[0]} with {' '.join(words[1:4])}, "
            f"{' '.join(words[4:])}, {rng.choice(ADJECTIVES)} and detailed.")


def caption_text(images: Sequence[Mapping[str, str]], quality: float, rng: random.Random) -> str:
    """The caption of the request's first scene image (module docstring)."""
    scene = None
    for meta in images:
        if SCENE_KEY in meta:
            try:
                scene = Scene.from_json(meta[SCENE_KEY])
            except (ValueError, TypeError, KeyError):
                continue
            break
    out = describe(scene, quality=quality, rng=rng) if scene is not None else _generic_caption(quality, rng)
    if rng.random() < 0.03:  # a rambling caption, past the 70 words the clean-up keeps
        while len(out.split()) <= 70:
            out += " " + rng.choice(_CAPTION_TAILS)
    u = rng.random()
    if u < 0.02:
        out = f'"{out}"'
    elif u < 0.035:
        out += "</s>"
    elif u < 0.05:
        out += "<|im_end|>"
    return out


def _reply(kind: str, req: Request, rng: random.Random) -> tuple[str, bool]:
    return caption_text(req.images, req.quality, rng), req.garbage


behaviours = [Behaviour("mmgenbench", (KIND_CAPTION,), classify, _reply, order=40,
                        description="MMGenBench's captioner of scene images")]
