"""``embed_image``: one feature vector per image, stored as raw little-endian float32 (``.f32``).

Encoders
--------
``model.encoder`` is ``"transformers"`` (the default) or ``"package.module:function"``.

With transformers, the checkpoint's own image processor (``AutoImageProcessor``) prepares the
images and the model class follows its config: CLIP -> ``CLIPVisionModelWithProjection``
(vision tower and projection only), SigLIP -> ``SiglipVisionModel``, a config whose
architectures name a ``...WithProjection`` class -> that class, anything else (DINOv2, ViT, ...)
-> ``AutoModel``. ``model.pooling`` picks the vector:

- ``"auto"``: ``image_embeds`` when the model has a projection, else ``pooler_output``, else the
  CLS token;
- ``"image_embeds"``: the projected embedding (``get_image_features`` on two-tower models);
- ``"pooler"``: the vision tower's ``pooler_output``; ``"cls"``: ``last_hidden_state[:, 0]``
  (the first token: the CLS token where the model has one);
- ``"mean"``: the mean of ``last_hidden_state`` over all tokens.

Vectors are not normalised. The output's ``encoder`` names what produced them:
``"<model id>[@revision]:<pooling>"``.

Plug-in encoders (for encoders outside transformers, such as Unicom)
---------------------------------------------------------------------
``"package.module:function"`` is imported in the worker and called once per load as
``function(model_ref: dict, device: str, dtype: torch.dtype)``; ``model_ref`` is the batch's
whole MODEL object (``id``, ``revision``, ``pooling`` ...). It returns an object with

    encode(images: list[PIL.Image.Image]) -> list[list[float]] | torch.Tensor | numpy.ndarray

giving one vector per image, all of the same length, and optionally a ``name`` attribute (a
string, used as the output's ``encoder``; default ``"<module:function>:<model id>"``). The
worker counts the parameters of the ``torch.nn.Module`` attributes of that object for its
memory budget (or reads an ``nbytes`` attribute when there is one).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np
import torch

from ._common import BadInput, hf_kwargs, load_image, transformers_dtype_kwarg

POOLINGS = ("auto", "image_embeds", "pooler", "cls", "mean")

# model_type of a two-tower checkpoint -> the vision-only class that holds what image features
# need. (Vision-only configs, e.g. clip_vision_model, go by their architectures or AutoModel: a
# CLIPVisionModel checkpoint has no projection to load.)
_VISION_CLASS = {
    "clip": "CLIPVisionModelWithProjection",
    "siglip": "SiglipVisionModel",
    "siglip2": "Siglip2VisionModel",
}


class TransformersEncoder:
    """A transformers vision encoder with its image processor."""

    def __init__(self, model_ref: dict, device: str, dtype: torch.dtype) -> None:
        import transformers
        from transformers import AutoConfig, AutoImageProcessor, AutoModel

        kw = hf_kwargs(model_ref)
        model_id = model_ref["id"]
        config = AutoConfig.from_pretrained(model_id, **kw)
        name = _VISION_CLASS.get(getattr(config, "model_type", ""))
        if name is None:
            archs = getattr(config, "architectures", None) or []
            name = next((a for a in archs if a.endswith("WithProjection")), None)
        cls = getattr(transformers, name, None) if name else None
        load_kw = {transformers_dtype_kwarg(): dtype, **kw}
        if cls is not None and getattr(config, "vision_config", None) is not None:
            # A two-tower checkpoint loaded as its vision half: the projection's size is the
            # top-level projection_dim (the vision sub-config may carry a stale default).
            vision_config = config.vision_config
            if getattr(config, "projection_dim", None) and hasattr(vision_config, "projection_dim"):
                vision_config.projection_dim = config.projection_dim
            load_kw["config"] = vision_config
        self.model = (cls or AutoModel).from_pretrained(model_id, **load_kw)
        self.model.to(device).eval()
        self.processor = AutoImageProcessor.from_pretrained(model_id, **kw)
        self.device, self.dtype = device, dtype

    @torch.inference_mode()
    def encode(self, images: list, pooling: str = "auto") -> tuple[torch.Tensor, str]:
        """Vectors for ``images`` and the pooling actually used."""
        # Every tensor the processor makes (SigLIP2 adds a patch mask and shapes), floats in the
        # model's dtype.
        inputs = {
            k: v.to(self.device, self.dtype) if v.is_floating_point() else v.to(self.device)
            for k, v in self.processor(images=images, return_tensors="pt").items()
            if isinstance(v, torch.Tensor)
        }
        model = self.model
        if pooling in ("auto", "image_embeds"):
            if hasattr(model, "get_image_features"):  # a two-tower model (CLIPModel, ...)
                feats = model.get_image_features(**inputs)
                if not isinstance(feats, torch.Tensor):  # transformers 5 returns a model output
                    feats = _first(feats, "image_embeds", "pooler_output")
                return feats, "image_embeds"
            out = model(**inputs)
            if getattr(out, "image_embeds", None) is not None:
                return out.image_embeds, "image_embeds"
            if pooling == "image_embeds":
                raise BadInput("pooling 'image_embeds': this model has no projection")
            pooling = "pooler" if getattr(out, "pooler_output", None) is not None else "cls"
        else:
            # The tower's own outputs: CLIP's projection wrapper has no pooler_output.
            out = getattr(model, "vision_model", model)(**inputs)
        if pooling == "pooler":
            vecs = getattr(out, "pooler_output", None)
            if vecs is None:
                raise BadInput("pooling 'pooler': this model has no pooler output")
        elif pooling == "cls":
            vecs = out.last_hidden_state[:, 0]
        else:
            vecs = out.last_hidden_state.mean(dim=1)
        return vecs.reshape(vecs.shape[0], -1), pooling


def _first(output: Any, *names: str) -> torch.Tensor:
    for name in names:
        value = getattr(output, name, None)
        if value is not None:
            return value
    raise TypeError(f"encoder output has none of {names}")


class _Plugin:
    """A plug-in encoder and the name it reports."""

    def __init__(self, ref: str, model_ref: dict, device: str, dtype: torch.dtype) -> None:
        module_name, sep, func_name = ref.partition(":")
        if not sep or not module_name or not func_name:
            raise ValueError(f"encoder {ref!r}: expected 'transformers' or 'package.module:function'")
        factory = getattr(importlib.import_module(module_name), func_name)
        self.encoder = factory(model_ref, device, dtype)
        if not callable(getattr(self.encoder, "encode", None)):
            raise TypeError(f"encoder {ref!r} returned an object without encode(images)")
        self.name = getattr(self.encoder, "name", None) or f"{ref}:{model_ref['id']}"
        if hasattr(self.encoder, "nbytes"):
            self.nbytes = int(self.encoder.nbytes)


def check_model(model: dict) -> None:
    pooling = model.get("pooling") or "auto"
    if pooling not in POOLINGS:
        raise BadInput(f"unknown pooling {pooling!r}; use one of {', '.join(POOLINGS)}")
    encoder = model.get("encoder") or "transformers"
    if encoder != "transformers" and not re.fullmatch(r"[\w.]+:\w+", encoder):
        raise BadInput(f"encoder {encoder!r}: expected 'transformers' or 'package.module:function'")


def check_params(params: dict) -> dict:
    return dict(params or {})


def load_key(model: dict) -> tuple:
    return (model.get("encoder") or "transformers",)


def load(model: dict, device: str, dtype: torch.dtype) -> Any:
    ref = model.get("encoder") or "transformers"
    if ref == "transformers":
        return TransformersEncoder(model, device, dtype)
    return _Plugin(ref, model, device, dtype)


def prepare(inputs: dict, store) -> Any:
    if not isinstance(inputs, dict):
        raise BadInput('embed_image inputs must be {"image": {"sha256": ...}}')
    return load_image(inputs.get("image"), store)


def run(loaded: Any, prepared: list, params: dict, model: dict, store) -> list[dict]:
    pooling = model.get("pooling") or "auto"
    if isinstance(loaded, TransformersEncoder):
        vecs, used = loaded.encode(prepared, pooling)
        name = model["id"] + (f"@{model['revision']}" if model.get("revision") else "") + f":{used}"
    else:
        vecs, name = loaded.encoder.encode(prepared), loaded.name
    if isinstance(vecs, torch.Tensor):
        vecs = vecs.detach().to(device="cpu", dtype=torch.float32).numpy()
    array = np.asarray(vecs, dtype="<f4")
    if array.ndim != 2 or array.shape[0] != len(prepared):
        raise RuntimeError(f"encoder gave shape {array.shape} for {len(prepared)} images")
    outputs = []
    for row in array:
        sha = store.put(np.ascontiguousarray(row).tobytes(), ".f32")
        outputs.append(
            {"vector": {"sha256": sha, "dim": int(row.shape[0]), "dtype": "float32"}, "encoder": name}
        )
    return outputs
