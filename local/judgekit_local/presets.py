"""Named text-to-image presets: the reference settings of MMGenBench's generation stage.

Plain data with no imports, so the core can read it too (import it where judgekit-local is
installed, or load this file on its own). Each preset gives the protocol's MODEL object, the
``text_to_image`` batch params, and the ``negative_prompt`` to put in every item (``None``: send
none). The reference pipeline generates one 1024x1024 image at a time; it seeds only Kolors,
judgekit seeds every item (the seed is the core's choice, recorded with the result).
"""

__all__ = ["DEFAULT_TEXT_TO_IMAGE_PRESET", "TEXT_TO_IMAGE_PRESETS"]

DEFAULT_TEXT_TO_IMAGE_PRESET = "flux-dev"

TEXT_TO_IMAGE_PRESETS = {
    "flux-dev": {
        "model": {"id": "black-forest-labs/FLUX.1-dev", "dtype": "bf16", "pipeline": "flux"},
        "params": {"guidance": 3.5, "steps": 50, "width": 1024, "height": 1024},
        "negative_prompt": None,
    },
    "sd3.5-large": {
        "model": {"id": "stabilityai/stable-diffusion-3.5-large", "dtype": "bf16", "pipeline": "sd3"},
        "params": {"guidance": 3.5, "steps": 28, "width": 1024, "height": 1024},
        "negative_prompt": None,
    },
    "kolors": {
        "model": {"id": "Kwai-Kolors/Kolors-diffusers", "dtype": "fp16", "pipeline": "KolorsPipeline"},
        "params": {"guidance": 5.0, "steps": 50, "width": 1024, "height": 1024},
        "negative_prompt": "",
    },
    "lumina": {
        # "auto": the class is LuminaPipeline in recent diffusers, LuminaText2ImgPipeline before.
        "model": {"id": "Alpha-VLLM/Lumina-Next-SFT-diffusers", "dtype": "bf16", "pipeline": "auto"},
        "params": {"guidance": 4.0, "steps": 30, "width": 1024, "height": 1024},
        "negative_prompt": None,
    },
}
