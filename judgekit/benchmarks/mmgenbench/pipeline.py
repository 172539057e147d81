"""MMGenBench end to end: caption -> text-to-image -> encode -> SIM-Score and FID-Score.

Per image (one flow each, many at once):

1. ``encode/original``: the encoder (``roles.encoder``, a local ``embed_image`` model) encodes the
   original once; every candidate and generator reuses that vector;
2. ``caption``: each candidate (``roles.candidates``, API or local) gets the image and then the
   prompt of the authors' code (VLMEvalKit's ``MMGenBench.prompt_list[0]``, the paper's Fig. 16:
   ``prompts/mmgenbench/caption.txt``, byte for byte, its leading newline included); the reply is
   cleaned up by the reference's rule, or judgekit's with ``options.clean_captions``
   (:mod:`judgekit.parsers.mmgenbench`); raw and cleaned captions are both kept;
3. ``generate``: each generator (``roles.generators``: local diffusers pipelines or an images API)
   draws the cleaned caption with the item's seed, ``options.seed + index``: the same for every
   candidate and generator, so a difference between two captions is never a difference of noise
   (the reference seeds nothing but Kolors).  Images go to the content-addressed store
   (``<cache>.blobs/``) and every call is cached, so a resumed run never draws a finished image
   again.  A caption that is empty after clean-up is not drawn (the providers refuse an empty
   prompt; the reference would draw it) and is counted under ``empty_captions``;
4. ``encode/generated``: the encoder encodes each generated image after the reference's JPEG
   round trip (:mod:`.jpeg`: Pillow's default JPEG, as the reference stores generated images), or
   as drawn with ``options.lossless_generated``;
5. metrics (:mod:`judgekit.metrics.mmgenbench`): SIM per image (cosine of the two vectors), its
   mean and std overall and per pattern, each mean with a percentile bootstrap interval over the
   images and candidates compared on the same images (:mod:`.results`), and FID per (candidate,
   generator) over the images both sides of which were encoded (no interval: a whole-set
   statistic).

A failed call fails only what depends on it (a failed caption: that candidate's generations of
the image), is listed, and is retried by the next run.  The estimate (:func:`plan`) follows the
cache the same way the run does and, where a caption or an image does not exist yet, plans the
rest with a 55-word stand-in caption and the original image as a stand-in drawing (marked "~").

Outputs: ``summary.json`` (with ``reference_format``: the reference's ``{"sim": {index: float},
"fid": float}`` per candidate and generator), ``captions.csv``, ``generations.csv``,
``originals.csv``, ``patterns.csv``, ``results.csv``, and ``report.html`` (:mod:`.report`): SIM and
FID with their charts and tables, and every image: the original, each candidate's caption and the
image each generator drew from it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from ...blobs import BlobMissing
from ...config import STRICT_CONFIG
from ...engine import Engine
from ...errors import SpecError
from ...hub import is_hub
from ...judging.roles import is_chat_model
from ...judging.uncertainty import IntervalOptions
from ...parsers.mmgenbench import Caption, clean_caption, reference_caption
from ...resources import Prompt, load_prompt
from ...types import ChatRequest, GenParams, ImagePart, Message
from ..base import BenchmarkResult, PlannedCall, require_candidates
from ..calls import Aborted, FlowCaller, each_item, generation_tokens
from ..deviations import ours
from .data import LoadedSet, MMGenItem, load_data
from .jpeg import JpegCopies
from .results import build_result

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages", "CAPTION_PROMPT"]

CAPTION, GENERATE, ENCODE_ORIGINAL, ENCODE_GENERATED = "caption", "generate", "encode/original", "encode/generated"
stages = [CAPTION, GENERATE, ENCODE_ORIGINAL, ENCODE_GENERATED]
CAPTION_PROMPT = "mmgenbench/caption.txt"
#: images in flight at once (each runs its candidates and generators concurrently)
ITEM_WINDOW = 128

GENERATOR_PROVIDERS = ("openai_image", "sim_image")
# what the estimate assumes where no caption exists yet: a caption of typical length (the
# prompt asks for 20 to 60 words)
_STANDIN_CAPTION = (
    "A detailed flat illustration of several brightly coloured geometric shapes arranged across a "
    "plain background, with a large red circle near the top left, a small blue star in the centre, "
    "two green triangles at the bottom right and soft shadows, rendered in a clean modern style."
)


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


# -- one image ------------------------------------------------------------------------------------
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


class _Flow:
    def __init__(self, prep: Prepared, engine: Engine, caller: FlowCaller) -> None:
        self.prep, self.engine, self.caller = prep, engine, caller
        spec = prep.spec
        self.params = {a: spec.models[a].params.gen_params() for a in prep.candidates}
        # output tokens of a generation: an images API's image tokens; a local pipeline has none
        self.expected_image_tokens = {g: generation_tokens(engine, g) for g in prep.generators}
        self.clean = clean_caption if prep.options.clean_captions else reference_caption
        self.jpeg = None if prep.options.lossless_generated else JpegCopies(engine.blobs)

    def seed_of(self, item: MMGenItem) -> int:
        return self.prep.options.seed + item.index

    async def run_item(self, item: MMGenItem) -> ItemOutcome:
        image = item.image() if item.data is not None else await asyncio.to_thread(item.image)
        out = ItemOutcome(item, image.sha256)
        jobs = [self._original(out, image)]
        jobs += [self._candidate(out, image, cand) for cand in self.prep.candidates]
        results = await asyncio.gather(*jobs, return_exceptions=True)
        for r in results:
            if isinstance(r, Aborted):
                out.aborted = True
            elif isinstance(r, BaseException):
                raise r
        return out

    async def _original(self, out: ItemOutcome, image: ImagePart) -> None:
        req = ChatRequest(self.prep.encoder, (Message("user", (image,)),), stage=ENCODE_ORIGINAL,
                          item_id=out.item.item_id)
        r, real = await self.caller.call(req, expected=0.0, max_out=0)  # an encoding has no tokens out
        if not real:
            return
        if not r.ok:
            out.error = r.error or r.error_kind
            return
        out.vector, err = _vector_of(r.text)
        out.error = err
        try:
            out.encoder_name = json.loads(r.text).get("encoder")
        except (ValueError, AttributeError):
            pass

    async def _candidate(self, out: ItemOutcome, image: ImagePart, cand: str) -> None:
        item = out.item
        prompt = self.prep.prompt
        req = ChatRequest(cand, (Message.user(image, prompt.text),), params=self.params[cand], stage=CAPTION,
                          item_id=item.item_id, prompt_hash=prompt.hash)
        r, real = await self.caller.call(req)
        rec = out.captions[cand] = CaptionRecord()
        if real and not r.ok:
            rec.error = r.error or r.error_kind
            for g in self.prep.generators:
                out.generations[(cand, g)] = GenerationRecord(self.seed_of(item), error="no caption", stage=CAPTION)
            return
        rec.raw = r.text if real else _STANDIN_CAPTION
        rec.caption = self.clean(rec.raw, self.prep.options.max_words)
        if not rec.caption.text:
            rec.error = "the caption is empty after clean-up"
            for g in self.prep.generators:
                out.generations[(cand, g)] = GenerationRecord(self.seed_of(item), error="empty caption", stage=CAPTION)
            return
        await asyncio.gather(*(self._generate(out, image, cand, g, rec.caption.text, exact=real)
                               for g in self.prep.generators))

    async def _generate(self, out: ItemOutcome, original: ImagePart, cand: str, gen: str, caption: str,
                        exact: bool) -> None:
        item = out.item
        rec = out.generations[(cand, gen)] = GenerationRecord(self.seed_of(item))
        expected = self.expected_image_tokens.get(gen)
        req = ChatRequest(gen, (Message.user(caption),), params=GenParams(seed=rec.seed), stage=GENERATE,
                          item_id=f"{cand}/{item.item_id}")
        r, real = await self.caller.call(req, exact=exact, expected=expected,
                                         max_out=None if expected is None else int(expected))
        if real and not r.ok:
            rec.error, rec.stage = r.error or r.error_kind, GENERATE
            return
        drawn: ImagePart
        if real:
            try:
                rec.record = json.loads(r.text)
                rec.image = dict(rec.record["image"])
                sha = rec.image["sha256"]
                data = await asyncio.to_thread(self.engine.blobs.get, sha)
            except BlobMissing as e:
                rec.error, rec.stage = (f"{e}: the generated image is not in the store beside the cache; prune "
                                        f"this stage's cache rows (judgekit cache prune --stage generate) to "
                                        f"draw it again"), GENERATE
                return
            except (ValueError, KeyError, TypeError) as e:
                rec.error, rec.stage = f"unexpected generator reply ({type(e).__name__}: {e})", GENERATE
                return
            drawn = ImagePart(data, rec.image.get("mime") or "image/png", sha256=sha)
            if self.jpeg is not None:  # what the reference encodes: the image saved as a JPEG
                try:
                    drawn = await asyncio.to_thread(self.jpeg.copy_of, drawn)
                except Exception as e:  # noqa: BLE001 - an image Pillow cannot decode or save
                    rec.error, rec.stage = (f"the generated image cannot be saved as JPEG "
                                            f"({type(e).__name__}: {e})"), GENERATE
                    return
        else:
            drawn = original  # the estimate's stand-in drawing
        ereq = ChatRequest(self.prep.encoder, (Message("user", (drawn,)),), stage=ENCODE_GENERATED,
                           item_id=f"{cand}/{gen}/{item.item_id}")
        er, ereal = await self.caller.call(ereq, exact=exact and real, expected=0.0, max_out=0)
        if not ereal:
            return
        if not er.ok:
            rec.error, rec.stage = er.error or er.error_kind, ENCODE_GENERATED
            return
        rec.vector, err = _vector_of(er.text)
        if err:
            rec.error, rec.stage = err, ENCODE_GENERATED


def _vector_of(text: str) -> tuple[str | None, str | None]:
    try:
        ref = json.loads(text)["vector"]
        return str(ref["sha256"]), None
    except (ValueError, KeyError, TypeError) as e:
        return None, f"unexpected encoder reply ({type(e).__name__}: {e})"


# -- estimate ------------------------------------------------------------------------------------
async def plan(prep: Prepared, engine: Engine) -> list[PlannedCall]:
    """Every call, following cached replies where they exist and stand-ins where not."""
    planned: list[PlannedCall] = []

    async def one(item: MMGenItem) -> list[PlannedCall]:
        caller = FlowCaller(engine, planning=True)
        await _Flow(prep, engine, caller).run_item(item)
        return caller.planned

    for calls in await each_item(prep.data.items, one, ITEM_WINDOW):
        planned.extend(calls)
    return planned


# -- run -----------------------------------------------------------------------------------------
async def run(prep: Prepared, engine: Engine) -> BenchmarkResult:
    st = engine.stats
    n, c, g = len(prep.data.items), len(prep.candidates), len(prep.generators)
    st.plan(ENCODE_ORIGINAL, n)
    st.plan(CAPTION, n * c)
    st.plan(GENERATE, n * c * g)
    st.plan(ENCODE_GENERATED, n * c * g)
    flow = _Flow(prep, engine, FlowCaller(engine, planning=False))

    async def one(item: MMGenItem) -> ItemOutcome:
        out = await flow.run_item(item)
        # generations that never started (no caption) leave the progress totals
        for rec in out.generations.values():
            if rec.stage == CAPTION:
                st.stage(GENERATE).total -= 1
                st.stage(ENCODE_GENERATED).total -= 1
            elif rec.stage == GENERATE:
                st.stage(ENCODE_GENERATED).total -= 1
        return out

    outcomes = await each_item(prep.data.items, one, ITEM_WINDOW)
    return build_result(prep, engine, outcomes)
