"""MMIE end to end: interleaved answers (integrated LVLM + text-to-image, or imported native ones),
scored 0-6 by the category prompts, Tables 3-5.

Systems under test
    * integrated (``roles.candidates`` x ``roles.generators``, named ``LVLM+generator``): the
      LVLM gets the instruction of ``prompts/mmie/integrated_answer.txt`` and the interleaved
      question (text and images in order) and answers in text, writing each image it would show
      as ``<image>description</image>``; each description is drawn by the generator (seeded:
      ``options.seed`` + a hash of the item id + the image's position, recorded), giving the
      interleaved answer that is scored.  The LVLM's answer is asked once and shared by every
      generator;
    * text (``answer_mode = "text"``): the candidate answers the interleaved question in plain
      text, with no instruction and no generator;
    * native (``options.native_answers``): interleaved answers imported from scorer-format files
      (:func:`judgekit.benchmarks.mmie.data.load_answers`), named by their ``model`` field.

Scoring (``roles.judge``: an API model, or the local MMIE-Score checkpoint through the worker;
    or a panel, ``roles.judges``: every scorer scores every answer, the answers and images made once)
    the request the authors' scorer builds (:mod:`judgekit.benchmarks.mmie.scoring`): the
    category's prompt from their ``prompts.py``, question and answer flattened as their
    ``dataset.py`` does (the answer read until question and answer hold 3 images), each
    ``Image-k: <image>`` line followed by its image; rows whose question has more than 4 images
    are not scored, as there (outcome ``skipped``, counted, no call made for them).  Every answer
    text and image left unread is counted in the results; ``options.keep_full_answer`` shows the
    scorer all of them instead (``options.image_cap`` then caps the images).  The reply's
    ``### Score`` is parsed as the reference does; a reply with no valid score is a counted parse
    failure (outcome ``missing``, ``not_a_number`` or ``out_of_range``), never a silent zero.  The
    injection guards (on by default, listed under ``deviations``): candidate text that repeats
    the prompt's section headers (``### Score`` ..., in any case, width or spacing) is defused to
    ``## Score``, and a literal ``<image>`` is written ``[image]``.

Resumable at every stage: answers, images and scores are cached calls (each scorer's on its own);
images are in the store.
Outputs (:mod:`~judgekit.benchmarks.mmie.results`): ``scores.csv`` (one row per system, item and
scorer), ``answers.csv``, ``images.csv``, ``categories.csv`` (Table 3, per scorer and the panel's
ensemble, with bootstrap intervals), ``fields.csv`` (Table 4), ``distribution.csv``,
``comparisons.csv`` (paired Avg. differences), ``agreement.csv`` (a panel's Krippendorff's alpha),
``alignment.csv`` (Table 5 per scorer, with ``options.human_scores``) and
``answers_scorer_format.json``: every scored answer in the scorer format (the first scorer's score),
images as paths relative to that file, so another scorer can read them; and
one ``answers_scorer_format.<system>.json`` per system (ids are unique only within a system), which
``load_answers`` and ``options.native_answers`` read back.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path

from ...blobs import BlobMissing, missing_output
from ...engine import Engine
from ...errors import DataError, SpecError
from ...hub import is_hub
from ...judging.roles import is_chat_model
from ...parsers.mmie import REFERENCE_MAX_IMAGES, parse_score, reference_skips, split_integrated
from ...plural import plural
from ...resources import Prompt, load_prompt
from ...types import (
    ChatRequest,
    GenParams,
    ImagePart,
    Message,
    Part,
    TextPart,
)
from ..base import BenchmarkResult, PlannedCall
from ..calls import Aborted, FlowCaller, each_item, generation_tokens
from .data import MMIEItem, Segment, load_answers, load_items
from .options import Options
from .outcomes import GeneratedImage, Judged, Outcome, Prepared, System
from .scoring import interleave, score_prompts, scorer_text

__all__ = ["Options", "Prepared", "prepare", "plan", "run", "stages", "System"]

ANSWER, GENERATE, SCORE = "answer", "generate", "score"
stages = [ANSWER, GENERATE, SCORE]
ITEM_WINDOW = 128
GENERATOR_PROVIDERS = ("openai_image", "sim_image")

_INTEGRATED_PROMPT = "mmie/integrated_answer.txt"

# the estimate's stand-ins where no answer exists yet: a typical integrated answer (two images)
_STANDIN_ANSWER = (
    "To answer this, start with what the question shows and build the reply step by step. First, "
    "look at the key elements and how they relate; then explain the idea in a few sentences.\n"
    "<image>A clear diagram on a white background: a large blue circle in the centre linked by "
    "arrows to three small orange squares, flat style.</image>\n"
    "Next, the second part of the answer continues the explanation and gives the result, with a "
    "short summary of why it holds and what to check.\n"
    "<image>A simple illustration of a green triangle at the bottom left and a yellow star at the "
    "top right on a light grey background.</image>\nThis completes the answer.")
_STANDIN_SCORE = "### Feedback\nA stand-in feedback of typical length for the estimate.\n### Score\n4"


def _is_generator(m) -> bool:
    return m.provider in GENERATOR_PROVIDERS or (m.provider == "local" and m.local.task == "text_to_image")


def prepare(spec, options: Options, limit: int | None = None) -> Prepared:
    where = spec.source_path
    roles = spec.roles
    panel = roles.panel
    if not panel:
        raise SpecError(f"{where}: MMIE needs roles.judge (the scoring model: an API model, or the MMIE-Score "
                        f"checkpoint as a local chat model), or a panel of them in roles.judges")
    role = "roles.judges" if roles.judges else "roles.judge"
    for alias in panel:
        if not is_chat_model(spec.models[alias]):
            raise SpecError(f"{where}: {role}: '{alias}' cannot score (provider "
                            f"{spec.models[alias].provider!r})")
    for alias in roles.candidates:
        if not is_chat_model(spec.models[alias]):
            raise SpecError(f"{where}: roles.candidates: '{alias}' cannot answer questions (provider "
                            f"{spec.models[alias].provider!r})")
    for alias in roles.generators:
        if not _is_generator(spec.models[alias]):
            raise SpecError(f"{where}: roles.generators: '{alias}' is not a text-to-image model")
    systems: list[System] = []
    if roles.candidates and options.answer_mode == "integrated":
        if not roles.generators:
            raise SpecError(f"{where}: answer_mode \"integrated\" needs roles.generators (the text-to-image "
                            f"models that draw the answers' image descriptions)")
        systems += [System(f"{c}+{g}", "integrated", c, g) for c in roles.candidates for g in roles.generators]
    elif roles.candidates:
        if roles.generators:
            raise SpecError(f"{where}: roles.generators draw integrated answers' images; with answer_mode = "
                            f"\"text\" nothing would use them (remove them, or use answer_mode = \"integrated\")")
        systems += [System(c, "text", c) for c in roles.candidates]
    native_files: dict[str, Path] = {}
    for raw in options.native_answers:
        path = spec.resolve_path(raw)
        images = spec.resolve_path(options.native_images_dir) if options.native_images_dir else None
        answers = load_answers(path, images)
        models = {m for m, _ in answers.values() if m}
        name = models.pop() if len(models) == 1 else path.stem
        systems.append(System(name, "native", answers=answers))
        native_files[name] = path
    if not systems:
        raise SpecError(f"{where}: nothing to score: list roles.candidates or options.native_answers")
    names = [s.name for s in systems]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise SpecError(f"{where}: two systems are named {dup!r} (native answer files need distinct models)")
    images_dir = spec.resolve_path(options.images_dir) if options.images_dir else None
    if is_hub(spec.data):  # data = "hf:MMIE/MMIE": its JSON file and unpacked images.tar.gz
        from .hub import hub_data

        data_file, hub_images = hub_data(spec)
        images_dir = images_dir or hub_images
    else:
        data_file = spec.data_path()
    loaded = load_items(data_file, images_dir, limit, options.skip_unreadable,
                        category_from="label" if options.category_from_label else "id")
    for s in systems:
        if s.kind == "native":
            missing = [it.id for it in loaded.items if it.id not in s.answers]
            if missing:
                raise DataError(str(native_files[s.name]), f"no answer of {s.name!r} for "
                                                           f"{plural(len(missing), 'item')} "
                                                           f"of the data, e.g. id {missing[0]!r}")
    human = human_system = None
    if options.human_scores:
        from ...metrics.mmie import load_human_scores

        human = load_human_scores(spec.resolve_path(options.human_scores))
        human_system = options.human_scores_system or (names[0] if len(names) == 1 else None)
        if human_system is None:
            raise SpecError(f"{where}: options.human_scores_system: name the system the human scores rate "
                            f"(one of {', '.join(names)})")
        if human_system not in names:
            raise SpecError(f"{where}: options.human_scores_system: {human_system!r} is not a system of this run "
                            f"({', '.join(names)})")
    return Prepared(spec, options, list(loaded.items), list(loaded.skipped), systems, panel[0], human,
                    human_system, judges=panel)


# -- flows ------------------------------------------------------------------------------------------
def _parts(segments: tuple[Segment, ...] | list[Segment]) -> list[Part]:
    out: list[Part] = []
    for s in segments:
        if s.is_image:
            out.append(s.image_part())
        elif s.text:
            out.append(TextPart(s.text))
    return out


class _Flow:
    def __init__(self, prep: Prepared, engine: Engine, caller: FlowCaller) -> None:
        self.prep, self.engine, self.caller = prep, engine, caller
        spec = prep.spec
        self.params = {a: spec.models[a].params.gen_params() for a in [*spec.roles.candidates, *prep.judges]}
        self.instruction: Prompt = load_prompt(_INTEGRATED_PROMPT)
        self.score_prompts = score_prompts()
        self.expected_image_tokens = {g: generation_tokens(engine, g) for g in spec.roles.generators}

    def seed_of(self, item: MMIEItem, k: int) -> int:
        return (self.prep.options.seed + zlib.crc32(item.id.encode("utf-8")) + k) % (2 ** 31)

    async def run_item(self, item: MMIEItem) -> list[Outcome]:
        if _skipped(self.prep, item):
            n = len(item.question_images)
            why = f"{plural(n, 'image')} in the question: the reference scores rows with at most {REFERENCE_MAX_IMAGES}"
            return [Outcome(s.name, item, skipped=why) for s in self.prep.systems]
        question = await asyncio.to_thread(_parts, item.question)
        known = {p.sha256: p for p in question if isinstance(p, ImagePart)}
        by_candidate: dict[str, list[System]] = {}
        jobs = []
        for s in self.prep.systems:
            if s.kind == "native":
                jobs.append(self._native(s, item, known))
            else:
                by_candidate.setdefault(s.candidate, []).append(s)
        for cand, systems in by_candidate.items():
            jobs.append(self._candidate(cand, systems, item, question, known))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        out: list[Outcome] = []
        for r in results:
            if isinstance(r, BaseException):
                raise r
            out.extend(r)
        return out

    async def _native(self, system: System, item: MMIEItem, known: dict[str, ImagePart]) -> list[Outcome]:
        o = Outcome(system.name, item, question_images=known)
        o.answer = system.answers[item.id][1]
        await self._guarded(o, self._score(o, exact=True))
        return [o]

    async def _guarded(self, o: Outcome, coro) -> None:
        try:
            await coro
        except Aborted:
            o.aborted = True

    async def _candidate(self, cand: str, systems: list[System], item: MMIEItem,
                         question: list[Part], known: dict[str, ImagePart]) -> list[Outcome]:
        outs = [Outcome(s.name, item, question_images=known) for s in systems]
        integrated = systems[0].kind == "integrated"
        parts: list[Part] = [TextPart(self.instruction.text)] if integrated else []
        parts += question
        req = ChatRequest(cand, (Message("user", tuple(parts)),), params=self.params[cand], stage=ANSWER,
                          item_id=item.id, prompt_hash=self.instruction.hash if integrated else "")
        try:
            r, real = await self.caller.call(req, expected=350.0)
        except Aborted:
            for o in outs:
                o.aborted = True
            return outs
        if real and not r.ok:
            for o in outs:
                o.error, o.stage = r.error or r.error_kind, ANSWER
            return outs
        text = r.text if real else _STANDIN_ANSWER
        for o in outs:
            o.raw_answer = text
        if not integrated:
            for o in outs:
                o.answer = (Segment.of_text(text),)
            await asyncio.gather(*(self._guarded(o, self._score(o, exact=real)) for o in outs))
            return outs
        await asyncio.gather(*(self._guarded(o, self._integrated(o, s, text, real)) for o, s in zip(outs, systems)))
        return outs

    async def _integrated(self, o: Outcome, system: System, text: str, exact: bool) -> None:
        pieces = split_integrated(text)
        descriptions = [d for kind, d in pieces if kind == "image"]
        o.images = [GeneratedImage(d, self.seed_of(o.item, n)) for n, d in enumerate(descriptions)]
        # the estimate: an answer not written yet may hold more images than its stand-in
        more = 0 if exact else max(0, _most_images(self.params[system.candidate]) - len(o.images))
        drawn = await asyncio.gather(*(self._draw(o, system.generator, g, exact, more if n == 0 else 0)
                                       for n, g in enumerate(o.images)))
        bad = next((g for g in o.images if g.error), None)
        if bad is not None:
            o.error, o.stage = f"image {o.images.index(bad) + 1} of {len(o.images)}: {bad.error}", GENERATE
            return
        standin = any(d is None for d in drawn)  # (planning only: a run gets an image or an error)
        segments: list[Segment] = []
        it = iter(drawn)
        for kind, value in pieces:
            if kind == "text":
                segments.append(Segment.of_text(value))
            else:
                seg = next(it)
                segments.append(seg if seg is not None else _standin_segment(o.item))
        o.answer = tuple(segments)
        await self._score(o, exact=exact and not standin)

    async def _draw(self, o: Outcome, gen: str, g: GeneratedImage, exact: bool, more: int = 0) -> Segment | None:
        expected = self.expected_image_tokens.get(gen)
        req = ChatRequest(gen, (Message.user(g.description),), params=GenParams(seed=g.seed), stage=GENERATE,
                          item_id=f"{o.system}/{o.item.id}")
        r, real = await self.caller.call(req, exact=exact, expected=expected,
                                         max_out=None if expected is None else int(expected), more_at_most=more)
        if not real:
            return None
        if not r.ok:
            g.error = r.error or r.error_kind
            return None
        try:
            g.image = dict(json.loads(r.text)["image"])
            sha = g.image["sha256"]
            path = await asyncio.to_thread(self.engine.blobs.path, sha, g.image.get("mime"))
        except BlobMissing as e:  # gone since the engine looked (a cached reply's is drawn again)
            g.error = missing_output(e, "the generated image")
            return None
        except (ValueError, KeyError, TypeError) as e:
            g.error = f"unexpected generator reply ({type(e).__name__}: {e})"
            return None
        return Segment("image", path=path, ref=f"{sha}{path.suffix}", sha256=sha,
                       mime=g.image.get("mime") or "image/png", width=int(g.image.get("width") or 0),
                       height=int(g.image.get("height") or 0))

    async def _score(self, o: Outcome, exact: bool) -> None:
        """Every scorer of the panel scores the answer: one prompt, built once, sent to each."""
        item = o.item
        built = scorer_text(item, o.answer, self.prep.options, self.score_prompts)
        flat = built.flat
        o.images_attached, o.images_dropped, o.texts_dropped = (flat.images_attached, flat.images_dropped,
                                                                flat.texts_dropped)
        known = o.question_images
        images = await asyncio.to_thread(lambda: [known.get(s.sha256) or s.image_part() for s in flat.images])
        message = Message("user", tuple(interleave(built.text, images)))
        o.judged = {j: Judged() for j in self.prep.judges}
        await asyncio.gather(*(self._score_by(o, j, message, built.prompt.hash, exact) for j in self.prep.judges))

    async def _score_by(self, o: Outcome, judge: str, message: Message, prompt_hash: str, exact: bool) -> None:
        jd = o.judged[judge]
        req = ChatRequest(judge, (message,), params=self.params[judge], stage=SCORE,
                          item_id=f"{o.system}/{o.item.id}", prompt_hash=prompt_hash)
        try:
            r, real = await self.caller.call(req, exact=exact, expected=250.0)
        except Aborted:
            jd.aborted = True
            return
        if not real:
            jd.reply = _STANDIN_SCORE
            return
        if not r.ok:
            jd.error = r.error or r.error_kind
            return
        jd.reply = r.text
        jd.parse = parse_score(r.text)


def _skipped(prep: Prepared, item: MMIEItem) -> bool:
    """Whether the reference's rules leave ``item`` unscored (no call is made for it)."""
    return not prep.options.keep_full_answer and reference_skips(item.question)


def _most_images(params: GenParams) -> int:
    """The most ``<image>...</image>`` descriptions an answer can hold: each takes at least three
    output tokens (the two tags and a word), within the LVLM's ``max_tokens`` (the estimate's
    default output bound when unset).  The estimate's bound for an answer not written yet."""
    from ...cost.estimate import DEFAULT_MAX_OUTPUT_TOKENS

    limit = params.max_tokens if params.max_tokens is not None else DEFAULT_MAX_OUTPUT_TOKENS
    return -(-limit // 3)


def _standin_segment(item: MMIEItem) -> Segment:
    """The estimate's stand-in for an image not drawn yet: the question's first image, if any."""
    for s in item.question:
        if s.is_image:
            return s
    return Segment.of_text("[an image]")


# -- estimate and run ---------------------------------------------------------------------------
async def plan(prep: Prepared, engine: Engine) -> list[PlannedCall]:
    """Every call, following cached replies where they exist and stand-ins where not."""
    planned: list[PlannedCall] = []

    async def one(item: MMIEItem) -> list[PlannedCall]:
        caller = FlowCaller(engine, planning=True)
        await _Flow(prep, engine, caller).run_item(item)
        return caller.planned

    for calls in await each_item(prep.items, one, ITEM_WINDOW):
        planned.extend(calls)
    return planned


async def run(prep: Prepared, engine: Engine) -> BenchmarkResult:
    from .results import build_result

    st = engine.stats
    n = sum(1 for it in prep.items if not _skipped(prep, it))
    cands = {s.candidate for s in prep.systems if s.candidate}
    st.plan(ANSWER, n * len(cands))
    st.plan(SCORE, n * len(prep.systems) * len(prep.judges))
    flow = _Flow(prep, engine, FlowCaller(engine, planning=False))

    async def one(item: MMIEItem) -> list[Outcome]:
        outs = await flow.run_item(item)
        for o in outs:
            if o.images:
                st.plan(GENERATE, len(o.images), "images the answers asked for")
            if o.stage in (ANSWER, GENERATE):
                st.drop(SCORE, len(prep.judges), "answers failed: their scores are not asked" if o.stage == ANSWER
                        else "answers' images failed: their scores are not asked")
        return outs

    per_item = await each_item(prep.items, one, ITEM_WINDOW)
    return build_result(prep, engine, [o for outs in per_item for o in outs])
