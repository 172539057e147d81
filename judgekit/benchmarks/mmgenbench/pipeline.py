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
the image), is listed, and is retried by the next run.  So is an image or an encoding deleted from
the store after it was made: the engine does not serve a cached reply whose file is gone, and
makes the call again.  The estimate (:func:`plan`) follows the
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

from ...blobs import BlobMissing, missing_output
from ...engine import Engine
from ...parsers.mmgenbench import clean_caption, reference_caption
from ...types import ChatRequest, GenParams, ImagePart, Message
from ..base import BenchmarkResult, PlannedCall
from ..calls import Aborted, FlowCaller, each_item, generation_tokens
from .data import MMGenItem
from .jpeg import JpegCopies
from .records import (CAPTION, CAPTION_PROMPT, ENCODE_GENERATED, ENCODE_ORIGINAL, GENERATE, CaptionRecord,
                      GenerationRecord, ItemOutcome, Options, Prepared, prepare, stages)
from .results import build_result

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages", "CAPTION_PROMPT"]

#: images in flight at once (each runs its candidates and generators concurrently)
ITEM_WINDOW = 128

# what the estimate assumes where no caption exists yet: a caption of typical length (the
# prompt asks for 20 to 60 words)
_STANDIN_CAPTION = (
    "A detailed flat illustration of several brightly coloured geometric shapes arranged across a "
    "plain background, with a large red circle near the top left, a small blue star in the centre, "
    "two green triangles at the bottom right and soft shadows, rendered in a clean modern style."
)


# -- one image ------------------------------------------------------------------------------------


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
                data = await asyncio.to_thread(self.engine.blobs.get, sha, rec.image.get("mime"))
            except BlobMissing as e:  # gone since the engine looked (a cached reply's is made again)
                rec.error, rec.stage = missing_output(e, "the generated image"), GENERATE
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
                st.drop(GENERATE, 1, "captions failed: their images are not drawn")
                st.drop(ENCODE_GENERATED, 1, "captions failed: their images are not drawn")
            elif rec.stage == GENERATE:
                st.drop(ENCODE_GENERATED, 1, "drawings failed: there is no image to encode")
        return out

    outcomes = await each_item(prep.data.items, one, ITEM_WINDOW)
    return build_result(prep, engine, outcomes)
