"""What an MMGenBench run is made of, beneath its flow, results and report: the stage names, the
``[options]``, what a run prepares before any call (the images and their patterns, the caption
prompt, the checked roles: candidates that caption, text-to-image generators, an image encoder),
and the records the flow keeps per image (each candidate's caption, each generation and its
encoding)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from ...config import STRICT_CONFIG
from ...errors import SpecError
from ...hub import is_hub
from ...judging.roles import is_chat_model
from ...judging.uncertainty import IntervalOptions
from ...parsers.mmgenbench import Caption
from ...resources import Prompt, load_prompt
from ..base import require_candidates
from ..deviations import ours
from .data import LoadedSet, MMGenItem, load_data

__all__ = ["CAPTION", "GENERATE", "ENCODE_ORIGINAL", "ENCODE_GENERATED", "stages", "CAPTION_PROMPT", "Options",
           "Prepared", "prepare", "CaptionRecord", "GenerationRecord", "ItemOutcome"]

CAPTION, GENERATE, ENCODE_ORIGINAL, ENCODE_GENERATED = "caption", "generate", "encode/original", "encode/generated"
stages = [CAPTION, GENERATE, ENCODE_ORIGINAL, ENCODE_GENERATED]
CAPTION_PROMPT = "mmgenbench/caption.txt"
GENERATOR_PROVIDERS = ("openai_image", "sim_image")


class Options(IntervalOptions):
    """``[options]`` of an MMGenBench spec (the bootstrap options add SIM's intervals and change
    no score)."""

    model_config = STRICT_CONFIG  # unknown keys, loose types, inf and nan are spec errors

    labels: str | None = Field(None, description="a label-index JSON (pattern -> image indices); default: "
                                                  "labels.json beside a folder's images, or <name>-label-index.json "
                                                  "beside <name>.tsv (MMGenBench-Test-label-index.json), if there "
                                                  "is one")
    skip_unreadable: bool = Field(False, description="leave out images that do not decode (listed in "
                                                     "summary.json) instead of stopping with an error")
    clean_captions: bool = ours(False, reference="drops a final </s>, every <|im_end|> if the caption ends with "
                                                 "one, outer double quotes, final newlines and outer spaces; cuts "
                                                 "at 70 pieces of split(' ')",
                                description="judgekit's clean-up: chat-template leftovers anywhere, all double "
                                            "quotes, wrapping single quotes, whitespace runs collapsed, cut at "
                                            "max_words whitespace-separated words")
    max_words: int = ours(70, ge=1, reference="70", description="captions are cut to this many words (pieces of "
                                                               "split(' ') under the reference rule) before "
                                                               "generation")
    lossless_generated: bool = ours(False, reference="saves each generated image as a JPEG (Pillow's default, "
                                                     "quality 75) and encodes that",
                                    description="encode each generated image as the generator returned it, "
                                                "without the JPEG round trip")
    seed: int = Field(0, ge=0, description="the image with index k is generated with seed + k")
    count_listed_index_once: bool = ours(
        False, reference="an image index listed twice in a pattern of the label index counts twice in that "
                         "pattern's SIM mean and std",
        description="an image counts once in each pattern that lists it")


@dataclass
class Prepared:
    spec: Any
    options: Options
    data: LoadedSet
    prompt: Prompt
    candidates: list[str]
    generators: list[str]
    encoder: str


def _check_roles(spec) -> tuple[list[str], list[str], str]:
    require_candidates(spec)
    where = spec.source_path
    roles = spec.roles
    if roles.panel:
        role = "roles.judges" if roles.judges else "roles.judge"
        raise SpecError(f"{where}: {role}: MMGenBench has no judge ('{roles.panel[0]}'): SIM and FID come from "
                        f"the image encoder (roles.encoder); remove {role}")
    if not roles.generators:
        raise SpecError(f"{where}: MMGenBench needs roles.generators (text-to-image models: local text_to_image, "
                        f"openai_image or sim_image aliases)")
    if not roles.encoder:
        raise SpecError(f"{where}: MMGenBench needs roles.encoder (a local embed_image alias)")
    for alias in roles.generators:
        m = spec.models[alias]
        ok = m.provider in GENERATOR_PROVIDERS or (m.provider == "local" and m.local.task == "text_to_image")
        if not ok:
            raise SpecError(f"{where}: roles.generators: '{alias}' is not a text-to-image model (provider "
                            f"{m.provider!r}; use local with local.task = \"text_to_image\", openai_image or "
                            f"sim_image)")
    enc = spec.models[roles.encoder]
    if not (enc.provider == "local" and enc.local.task == "embed_image"):
        raise SpecError(f"{where}: roles.encoder: '{roles.encoder}' is not an image encoder (use provider "
                        f"\"local\" with local.task = \"embed_image\")")
    for alias in roles.candidates:
        m = spec.models[alias]
        if not is_chat_model(m):
            raise SpecError(f"{where}: roles.candidates: '{alias}' cannot caption images (provider {m.provider!r})")
    return list(roles.candidates), list(roles.generators), roles.encoder


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    candidates, generators, encoder = _check_roles(spec)
    labels = spec.resolve_path(options.labels) if options.labels else None
    if is_hub(spec.data):  # data = "hf:lerogo/MMGenBench" (data_config: the TSV)
        from .hub import hub_table

        path, released = hub_table(spec)
        labels = labels or released
    else:
        path = spec.data_path()
    data = load_data(path, labels=labels, limit=limit, skip_unreadable=options.skip_unreadable)
    return Prepared(spec, options, data, load_prompt(CAPTION_PROMPT), candidates, generators, encoder)


# -- the records of one image ---------------------------------------------------------------------
@dataclass
class CaptionRecord:
    raw: str | None = None
    caption: Caption | None = None
    error: str | None = None


@dataclass
class GenerationRecord:
    seed: int
    image: dict[str, Any] | None = None  # {"sha256", "mime", "width", "height"}
    record: dict[str, Any] | None = None  # the generator's whole response (settings, revised prompt)
    vector: str | None = None  # sha256 of the encoding in the store
    error: str | None = None
    stage: str | None = None  # where it failed


@dataclass
class ItemOutcome:
    item: MMGenItem
    image_sha256: str = ""
    vector: str | None = None  # the original's encoding
    encoder_name: str | None = None  # what the encoder says it is (model and pooling)
    error: str | None = None  # the original's encoding failed
    captions: dict[str, CaptionRecord] = field(default_factory=dict)
    generations: dict[tuple[str, str], GenerationRecord] = field(default_factory=dict)
    aborted: bool = False
