"""Reference text-to-image presets, as plain data (the core's copy).

The worker distribution (``judgekit_local.presets``) holds the same four presets; the core keeps
its own copy because it may run without ``judgekit_local`` installed (the worker can live in
another Python).  A preset fills what a spec leaves out: the checkpoint (``model``), the dtype,
the pipeline and the generation defaults.  Everything a preset sets ends up in the provider's cache identity,
so changing a value here changes the keys of the calls that relied on it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Preset", "PRESETS", "preset"]


@dataclass(frozen=True, slots=True)
class Preset:
    """One reference setting of a text-to-image model."""

    checkpoint: str
    """Hub id of the weights (a spec's ``model`` may still point at a local copy)."""
    dtype: str
    """``bf16`` | ``fp16`` | ``fp32``."""
    pipeline: str
    """The worker's ``pipeline``: ``flux``, ``sd3``, a diffusers class name, or ``auto``."""
    guidance: float
    """Classifier-free guidance scale (FLUX: the distilled guidance embedding)."""
    steps: int
    """Denoising steps."""
    width: int
    height: int
    negative_prompt: str | None = None
    """``None``: no negative prompt is sent."""


# MMGenBench's generation settings, as judgekit_local.presets.TEXT_TO_IMAGE_PRESETS has them
# (tests/local_core/test_local_config.py compares the two when the worker's copy is there)
PRESETS: dict[str, Preset] = {
    "flux-dev": Preset("black-forest-labs/FLUX.1-dev", "bf16", "flux", guidance=3.5, steps=50, width=1024,
                       height=1024),
    "sd3.5-large": Preset("stabilityai/stable-diffusion-3.5-large", "bf16", "sd3", guidance=3.5, steps=28,
                          width=1024, height=1024),
    "kolors": Preset("Kwai-Kolors/Kolors-diffusers", "fp16", "KolorsPipeline", guidance=5.0, steps=50, width=1024,
                     height=1024, negative_prompt=""),
    "lumina": Preset("Alpha-VLLM/Lumina-Next-SFT-diffusers", "bf16", "auto", guidance=4.0, steps=30, width=1024,
                     height=1024),
}


def preset(name: str) -> Preset:
    """The preset called ``name``; a KeyError naming the known ones otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown text_to_image preset {name!r} (known: {', '.join(PRESETS)})") from None
