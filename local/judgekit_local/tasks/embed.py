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

Preprocessing fast path
-----------------------
A processor that is transformers' plain PIL backend (``backend == "pil"``, none of its
preprocessing methods overridden, as ``CLIPImageProcessorPil``, ``BitImageProcessorPil`` and
``SiglipImageProcessorPil`` are where torchvision is not installed) with the standard settings --
resize (shortest edge, or a fixed height and width) with a PIL filter, an optional center crop,
rescale and normalize, nothing else -- is replaced by :class:`FastPixels`: the same PIL resize
per image, then the crop, rescale and normalize of the whole batch at once through a lookup
table that holds, for each channel and 8-bit value, the very float32 the processor computes
(its float64 rescale, then float32 normalize). The pixel values are the processor's, bit for
bit (checked when the model loads, on two noise images: a mismatch turns the fast path off). Any
other processor (torchvision's, a model-specific one, other settings, transformers 4) runs as
is, once per batch on the list of images.

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
import logging
import re
from typing import Any

import numpy as np
import torch

from ._common import BadInput, hf_kwargs, load_image, transformers_dtype_kwarg

POOLINGS = ("auto", "image_embeds", "pooler", "cls", "mean")

log = logging.getLogger("judgekit_local")

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
        self.fast = FastPixels.for_processor(self.processor)
        self.device, self.dtype = device, dtype

    def pixels(self, images: list) -> dict[str, torch.Tensor]:
        """The model's inputs for ``images``: the fast path's, else the processor's."""
        if self.fast is not None:
            pixel_values = self.fast(images)
            if pixel_values is not None:
                return {"pixel_values": pixel_values}
        # Every tensor the processor makes (SigLIP2 adds a patch mask and shapes).
        return {k: v for k, v in self.processor(images=images, return_tensors="pt").items()
                if isinstance(v, torch.Tensor)}

    @torch.inference_mode()
    def encode(self, images: list, pooling: str = "auto") -> tuple[torch.Tensor, str]:
        """Vectors for ``images`` and the pooling actually used."""
        # Floats in the model's dtype.
        inputs = {
            k: v.to(self.device, self.dtype) if v.is_floating_point() else v.to(self.device)
            for k, v in self.pixels(images).items()
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


class FastPixels:
    """The standard PIL-backend preprocessing of a batch, vectorised (see the module docstring).

    ``FastPixels.for_processor(processor)`` is None unless the processor qualifies; calling the
    object gives the ``pixel_values`` tensor for a list of RGB PIL images, or None when the batch
    needs the processor after all (an image not in RGB, one too small for the crop, sizes that
    do not stack)."""

    # The methods whose standard versions the fast path replicates: none may be overridden.
    _METHODS = ("__call__", "preprocess", "_standardize_kwargs", "_preprocess_image_like_inputs",
                "_prepare_image_like_inputs", "_prepare_images_structure", "process_image",
                "convert_to_rgb", "_preprocess", "resize", "center_crop", "rescale", "normalize", "pad")

    def __init__(self, *, shortest_edge: int | None, size: tuple[int, int] | None,
                 crop: tuple[int, int] | None, resample: int, lut: np.ndarray) -> None:
        self.shortest_edge = shortest_edge  # resize the shorter side to this, keeping the aspect
        self.size = size  # or resize to this (height, width)
        self.crop = crop  # then center crop to this (height, width), if not None
        self.resample = resample
        self.lut = lut  # (3, 256) float32: channel, 8-bit value -> the processor's pixel value

    @classmethod
    def for_processor(cls, processor: Any) -> FastPixels | None:
        """The fast path for ``processor``, or None. A candidate must also give the processor's
        very pixel values on two noise images of odd sizes (a guard against a transformers
        release whose standard preprocessing differs from what this class replicates)."""
        try:
            fast = cls._for_processor(processor)
            if fast is None:
                return None
            from PIL import Image

            rng = np.random.default_rng(0)
            probe = [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")
                     for w, h in ((61, 47), (35, 70))]
            mine = fast(probe)
            theirs = processor(images=probe, return_tensors="pt")["pixel_values"]
            return fast if mine is not None and torch.equal(mine, theirs) else None
        except Exception:  # an attribute of an unexpected type, ...: no fast path
            log.debug("no preprocessing fast path for %s", type(processor).__name__, exc_info=True)
            return None

    @classmethod
    def _for_processor(cls, processor: Any) -> FastPixels | None:
        try:
            from transformers.image_processing_backends import PilBackend
        except ImportError:  # transformers 4: its processors run as they are
            return None
        kind = type(processor)
        if not isinstance(processor, PilBackend) or getattr(processor, "backend", None) != "pil":
            return None
        if any(getattr(kind, m, None) is not getattr(PilBackend, m, None) for m in cls._METHODS):
            return None
        p = processor
        if not (p.do_resize and p.do_rescale and p.do_normalize) or getattr(p, "do_pad", None):
            return None
        sizes = _size_keys(p.size)
        if sizes is None:
            return None
        shortest_edge = size = crop = None
        if set(sizes) == {"shortest_edge"}:
            shortest_edge = int(sizes["shortest_edge"])
        elif set(sizes) == {"height", "width"}:
            size = (int(sizes["height"]), int(sizes["width"]))
        else:
            return None
        if p.do_center_crop:
            crops = _size_keys(p.crop_size)
            if crops is None or set(crops) != {"height", "width"}:
                return None
            crop = (int(crops["height"]), int(crops["width"]))
        elif size is None:
            return None  # shortest-edge resizes without a crop do not stack
        resample = p.resample
        if resample is None or isinstance(resample, bool) or int(resample) not in range(6):
            return None  # not a PIL filter (PilBackend maps the others to BILINEAR)
        mean, std = _per_channel(p.image_mean), _per_channel(p.image_std)
        if mean is None or std is None:
            return None
        # The processor's arithmetic, per value: float64 rescale, float32, then float32 normalize.
        values = (np.arange(256, dtype=np.float64) * float(p.rescale_factor)).astype(np.float32)
        lut = (values[None, :] - mean[:, None]) / std[:, None]
        return cls(shortest_edge=shortest_edge, size=size, crop=crop, resample=int(resample),
                   lut=np.ascontiguousarray(lut, dtype=np.float32))

    def __call__(self, images: list) -> torch.Tensor | None:
        if not images:
            return None
        arrays = []
        for im in images:
            if getattr(im, "mode", None) != "RGB":
                return None
            w, h = im.size
            if self.size is not None:
                nh, nw = self.size
            elif w <= h:  # transformers' get_resize_output_image_size(default_to_square=False)
                nw, nh = self.shortest_edge, int(self.shortest_edge * h / w)
            else:
                nw, nh = int(self.shortest_edge * w / h), self.shortest_edge
            if (nw, nh) != (w, h):  # PIL's resize to the same size is a copy
                im = im.resize((nw, nh), resample=self.resample)
            a = np.asarray(im)
            if self.crop is not None:
                ch, cw = self.crop
                if nh < ch or nw < cw:
                    return None  # the processor pads: leave it to it
                top, left = (nh - ch) // 2, (nw - cw) // 2
                a = a[top:top + ch, left:left + cw]
            arrays.append(a)
        shape = arrays[0].shape
        if any(a.shape != shape for a in arrays):
            return None
        batch = np.stack(arrays)  # (B, H, W, 3) uint8
        pixel_values = torch.empty((len(arrays), 3, shape[0], shape[1]), dtype=torch.float32)
        out = pixel_values.numpy()
        for c in range(3):  # one table lookup per channel does rescale, normalize and HWC -> CHW
            np.take(self.lut[c], batch[..., c], out=out[:, c], mode="clip")
        return pixel_values


def _size_keys(size: Any) -> dict[str, Any] | None:
    """The set entries of a SizeDict (or dict)."""
    if size is None:
        return None
    items = size.items() if isinstance(size, dict) else dict(size).items()
    return {k: v for k, v in items if v is not None}


def _per_channel(value: Any) -> np.ndarray | None:
    if isinstance(value, (int, float)):
        value = [value] * 3
    if value is None or len(value) != 3:
        return None
    return np.asarray(value, dtype=np.float32)


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
    array = np.ascontiguousarray(vecs, dtype="<f4")  # the whole batch converted at once
    if array.ndim != 2 or array.shape[0] != len(prepared):
        raise RuntimeError(f"encoder gave shape {array.shape} for {len(prepared)} images")
    n, dim = array.shape
    data, step = array.tobytes(), dim * 4
    put = store.put
    return [
        {"vector": {"sha256": put(data[k * step:(k + 1) * step], ".f32"), "dim": dim, "dtype": "float32"},
         "encoder": name}
        for k in range(n)
    ]
