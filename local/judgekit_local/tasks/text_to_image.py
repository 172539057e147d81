"""``text_to_image``: diffusers pipelines; one PNG per item, saved to the store.

``model.pipeline``: ``"auto"`` -> ``AutoPipelineForText2Image`` (the class named in the
checkpoint's ``model_index.json``), ``"flux"`` -> ``FluxPipeline``, ``"sd3"`` ->
``StableDiffusion3Pipeline``, any other value -> the diffusers class of that name.

Item inputs: ``prompt`` (str), ``negative_prompt`` (str or null) and ``seed`` (int, required:
judgekit seeds every generation). Each item gets its own ``torch.Generator(device)`` seeded with
its seed, so an image depends on its prompt and seed, not on its batch neighbours (up to the
floating-point differences of batched kernels). ``negative_prompt`` is passed only when the
pipeline's ``__call__`` takes one (it is ignored otherwise); items with and items without one
run as separate pipeline calls, so null never turns into "".

Params: ``steps`` (``num_inference_steps``), ``guidance`` (``guidance_scale``), ``width``,
``height``; a missing or null one keeps the pipeline's default.
"""

from __future__ import annotations

import inspect
import io
from typing import Any

import torch

from ._common import BadInput, diffusers_dtype_kwarg, hf_kwargs

PIPELINE_CLASSES = {"flux": "FluxPipeline", "sd3": "StableDiffusion3Pipeline"}


def check_model(model: dict) -> None:
    name = model.get("pipeline") or "auto"
    if not isinstance(name, str) or not name.isidentifier():
        raise BadInput(f"pipeline {name!r}: expected auto, flux, sd3 or a diffusers class name")


def check_params(params: dict) -> dict:
    p = dict(params or {})
    for key in ("steps", "width", "height"):
        value = p.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise BadInput(f"params.{key} must be a positive integer, got {value!r}")
    guidance = p.get("guidance")
    if guidance is not None and (isinstance(guidance, bool) or not isinstance(guidance, (int, float))):
        raise BadInput(f"params.guidance must be a number, got {guidance!r}")
    return p


def load_key(model: dict) -> tuple:
    return (model.get("pipeline") or "auto",)


def load(model: dict, device: str, dtype: torch.dtype) -> Any:
    import diffusers

    name = model.get("pipeline") or "auto"
    if name == "auto":
        cls = diffusers.AutoPipelineForText2Image
    else:
        cls = getattr(diffusers, PIPELINE_CLASSES.get(name, name), None)
        if cls is None or not hasattr(cls, "from_pretrained"):
            raise ValueError(f"pipeline {name!r}: no such diffusers pipeline class")
    pipe = cls.from_pretrained(model["id"], **{diffusers_dtype_kwarg(): dtype}, **hf_kwargs(model))
    pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def prepare(inputs: dict, store) -> dict:
    if not isinstance(inputs, dict):
        raise BadInput('text_to_image inputs must be {"prompt": ..., "seed": ...}')
    prompt, negative, seed = inputs.get("prompt"), inputs.get("negative_prompt"), inputs.get("seed")
    if not isinstance(prompt, str):
        raise BadInput(f"prompt must be a string, got {prompt!r:.80}")
    if negative is not None and not isinstance(negative, str):
        raise BadInput(f"negative_prompt must be a string or null, got {negative!r:.80}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BadInput(f"seed must be an integer, got {seed!r}")
    return {"prompt": prompt, "negative_prompt": negative, "seed": seed}


def _call_kwargs(pipe: Any, params: dict) -> dict:
    accepted = inspect.signature(pipe.__call__).parameters
    kwargs: dict[str, Any] = {"output_type": "pil"}
    for ours, theirs in (
        ("steps", "num_inference_steps"),
        ("guidance", "guidance_scale"),
        ("width", "width"),
        ("height", "height"),
    ):
        if params.get(ours) is not None and theirs in accepted:
            kwargs[theirs] = params[ours]
    if "num_images_per_prompt" in accepted:
        kwargs["num_images_per_prompt"] = 1
    return kwargs


def _png(image: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def run(pipe: Any, prepared: list, params: dict, model: dict, store) -> list[dict]:
    base = _call_kwargs(pipe, params)
    takes_negative = "negative_prompt" in inspect.signature(pipe.__call__).parameters
    device = str(pipe.device)
    outputs: list[dict | None] = [None] * len(prepared)
    with_negative = [i for i, p in enumerate(prepared) if p["negative_prompt"] is not None]
    without = [i for i, p in enumerate(prepared) if p["negative_prompt"] is None]
    for group in (without, with_negative):
        if not group:
            continue
        kwargs = dict(base)
        kwargs["prompt"] = [prepared[i]["prompt"] for i in group]
        kwargs["generator"] = [torch.Generator(device).manual_seed(prepared[i]["seed"]) for i in group]
        if takes_negative and group is with_negative:
            kwargs["negative_prompt"] = [prepared[i]["negative_prompt"] for i in group]
        images = pipe(**kwargs).images
        if len(images) != len(group):
            raise RuntimeError(f"pipeline returned {len(images)} images for {len(group)} prompts")
        for i, image in zip(group, images):
            sha = store.put(_png(image), ".png")
            outputs[i] = {
                "image": {"sha256": sha, "mime": "image/png", "width": image.width, "height": image.height}
            }
    return outputs  # type: ignore[return-value]
