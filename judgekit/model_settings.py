"""Spec records shared by the run spec and how a model runs: the strict pydantic settings every
spec record uses, a local model's worker settings and an image generator's request settings.
:mod:`judgekit.config` re-exports them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["STRICT_CONFIG", "LocalSettings", "ImageGenSettings"]

#: the pydantic settings of every spec record (and of every benchmark's ``[options]``): unknown
#: keys are errors, types are strict (an int is accepted for a float, nothing else is coerced),
#: inf and nan are refused, and a validated record cannot be changed
STRICT_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class _Strict(BaseModel):
    model_config = STRICT_CONFIG



class LocalSettings(_Strict):
    """How a ``provider = "local"`` model runs: the task, how the weights load, and the worker
    process (``<python> -m judgekit_local``) that runs them.  Settings that change the output
    (task, revision, dtype, chat_api, max_tiles, pipeline, encoder, pooling and the text-to-image
    defaults) are part of the cache key; the rest (device, batching, memory, process settings) are
    not."""

    task: Literal["chat", "text_to_image", "embed_image"] = Field(
        description="chat: a (vision-)language model answers messages; text_to_image: a diffusers pipeline "
                    "draws the last message's text; embed_image: an image encoder turns the request's one "
                    "image into a vector")
    device: str = Field("auto", description="auto | cpu | cuda | cuda:N | mps; the worker's device")
    dtype: Literal["auto", "bf16", "fp16", "fp32"] = Field(
        "auto", description="weights' dtype; auto = the preset's, else the checkpoint's own")
    revision: str | None = Field(None, description="hub revision (branch, tag or commit) of the weights")
    trust_remote_code: bool = Field(False, description="let transformers/diffusers run code shipped with "
                                                       "the checkpoint (off unless you trust it)")
    pipeline: str = Field("auto", description="text_to_image: auto | flux | sd3 | a diffusers pipeline class "
                                              "name")
    preset: str | None = Field(None, description="text_to_image: a reference preset (flux-dev, sd3.5-large, "
                                                 "kolors, lumina) giving the checkpoint, dtype and defaults; "
                                                 "then `model` may be left out")
    chat_api: Literal["transformers", "internvl"] = Field(
        "transformers", description="chat: transformers = AutoModelForImageTextToText with its processor's "
                                    "chat template, items batched; internvl = an InternVL-family checkpoint "
                                    "with its own modeling code (AutoModel + the model's chat(), e.g. "
                                    "MMIE-Score; needs trust_remote_code = true): images tiled at 448 px, "
                                    "items run one at a time")
    max_tiles: int = Field(12, ge=1, description="chat_api internvl: the most 448 px tiles an image is cut "
                                                 "into (dynamic tiling; a thumbnail is added when there are "
                                                 "several)")
    encoder: str = Field("transformers", description="embed_image: transformers | module:function")
    pooling: str = Field("auto", description="embed_image: auto | pooler | cls | mean | image_embeds")
    steps: int | None = Field(None, ge=1, description="text_to_image default denoising steps (else the "
                                                      "preset's, else the pipeline's)")
    guidance: float | None = Field(None, ge=0, description="text_to_image default guidance scale")
    width: int | None = Field(None, ge=8, description="text_to_image default image width in pixels")
    height: int | None = Field(None, ge=8, description="text_to_image default image height in pixels")
    negative_prompt: str | None = Field(None, description="text_to_image default negative prompt")
    batch_size: int = Field(8, ge=1, description="items per batch sent to the worker")
    max_wait_ms: float = Field(20, ge=0, description="how long a partial batch waits for more items while "
                                                     "the worker is idle")
    memory_budget_gb: float | None = Field(None, gt=0, description="the worker keeps loaded models within "
                                                                   "this (least recently used unloaded first)")
    python: str | None = Field(None, description="the worker's Python executable (an environment with "
                                                 "judgekit-local, torch...); default: the one running "
                                                 "judgekit; a relative path is relative to the spec file")
    backend: Literal["subprocess", "ray"] = Field("subprocess", description="subprocess: one worker process "
                                                                            "on this machine; ray: Ray actors")
    ray_address: str | None = Field(None, description="ray: the cluster address (None: RAY_ADDRESS, else the "
                                                      "Ray this process runs, else a local one started for "
                                                      "the run)")
    workers: int = Field(1, ge=1, description="ray: how many actors (each one worker) run batches in parallel")
    gpus_per_worker: float = Field(0, ge=0, description="ray: GPUs each actor reserves (num_gpus)")
    cpus_per_worker: int = Field(1, ge=1, description="torch's CPU threads in a worker, on either backend (the "
                                                      "same count gives the same bits); ray: the CPUs each "
                                                      "actor reserves (num_cpus)")
    place_timeout_s: float = Field(60, gt=0, description="ray: how long the run's start waits for an actor to be "
                                                        "placed (a replacement waits in the background)")
    start_timeout_s: float = Field(60, gt=0, description="ray: how long a placed actor may take to start (import "
                                                        "torch, build its core) at the run's start")
    no_worker_timeout_s: float = Field(60, gt=0, description="ray: how long batches wait while no actor is alive "
                                                            "(nodes lost, a full cluster); then their items fail, "
                                                            "retryable, and the rest of the run goes on")
    max_restarts: int = Field(3, ge=0, description="worker crashes an item may go through before it fails")

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str | None) -> str | None:
        if v is not None:
            from .local.presets import PRESETS

            if v not in PRESETS:
                raise ValueError(f"unknown preset {v!r} (known: {', '.join(PRESETS)})")
        return v

    @model_validator(mode="after")
    def _task_fields(self) -> "LocalSettings":
        if self.preset is not None and self.task != "text_to_image":
            raise ValueError(f"preset is for task 'text_to_image', not '{self.task}'")
        if self.chat_api != "transformers" and self.task != "chat":
            raise ValueError(f"chat_api is for task 'chat', not '{self.task}'")
        return self


class ImageGenSettings(_Strict):
    """How an image generator (``provider = "openai_image"`` or ``"sim_image"``) is asked for an
    image: every field is part of the cache key."""

    size: str = Field("1024x1024", pattern=r"^(auto|[1-9][0-9]*x[1-9][0-9]*)$",
                      description="WIDTHxHEIGHT or auto; what the model accepts (gpt-image-1: 1024x1024, "
                                  "1024x1536, 1536x1024, auto; the simulator also 256x256 and 512x512)")
    quality: str | None = Field(None, description="low | medium | high | auto (gpt-image), standard | hd "
                                                  "(dall-e-3); None: the API's default")
    extra: dict[str, Any] = Field(default_factory=dict, description="more request fields, sent as they are "
                                                                   "(extra_body), e.g. background, moderation")
