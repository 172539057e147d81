"""GuessBench turn logic: one build set, one model, one approach, one task.

The same code plans and runs.  It talks to a *caller*: when running, :class:`RunCaller` makes
each call through the engine; when estimating, :class:`PlanCaller` answers from the cache where
it can and otherwise records the call and hands back a stand-in reply that is never right, never
"$Well done!$" and always retrieves an image, so the plan follows the longest path from there
(every dynamic turn, every refine round) and marks those calls inexact.  Each stand-in reply is a
different text, as real replies are, so every reply the run would extract is extracted in the
plan too (one shared stand-in text was extracted once per flow: the estimate counted half the
extractions).  The longest path is the estimate's bound; its expected figure weights each call
past an early-stop point by the chance of going on (:class:`StopTally`).

A turn (static: ``3.png`` + Hint_3; dynamic turn t: ``t.png`` + Hint_t):

- messages: the system prompt, then one user message with [the one-shot example: its images,
  hints and answers up to this attempt], the build image, and the instruction with the hint.
  The refinement instruction carries the extracted previous guess, never the earlier
  conversation (as the reference);
- ``self_consistency``: ``n`` samples (sampling on: the spec's ``sc_temperature``, each sample
  sent with its own seed so samples are reproducible), each extracted, majority vote;
- ``self_refine``: after the guess, up to ``rounds`` reviews ("Here is your response: ...");
  a reply containing "$Well done!$" ends the loop and the last other reply is the answer;
- ``image_retrieval``: the same loop, but each review attaches one image retrieved for the
  current extracted guess.  A retrieval that finds nothing or fails ends the loop and keeps the
  guess; the outcome is recorded;
- every final reply goes to the extractor (the judge model, Table 4 prompt).

Dynamic scoring stops at the first correct turn; later turns count as correct.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...engine import NOT_RUN, CallResult, Engine
from ...parsers.guess import Extraction, is_correct, is_well_done, parse_extraction, vote
from ...resources import Prompt, load_prompt
from ...retrieval.base import Retrieved
from ...types import ChatRequest, ChatResponse, GenParams, ImagePart, Message, TextPart
from ..base import PlannedCall
from .data import GuessSet

__all__ = ["APPROACHES", "TASKS", "FlowConfig", "TurnRecord", "SetOutcome", "Aborted", "RunCaller", "PlanCaller",
           "StopTally", "PRIOR_STOP", "run_set", "stage_names", "max_calls"]

APPROACHES = ("cot", "no_cot", "one_shot", "self_consistency", "self_refine", "image_retrieval",
              "image_only", "hint_only")
TASKS = ("static", "dynamic")

#: instruction variant of each approach (prompt file suffix)
_VARIANT = {"no_cot": "_no_cot", "image_only": "_image_only", "hint_only": "_hint_only"}

_NO_GUESS = "No Answering"


class Aborted(Exception):
    """A call was not made because the run is stopping; the set is left for the next run."""


@dataclass(frozen=True)
class FlowConfig:
    """What every flow of a run shares."""

    extractor: str  # alias of the extraction judge
    params: dict[str, GenParams]  # alias -> the spec's generation parameters
    retriever: str | None = None
    example: GuessSet | None = None  # the one-shot worked example
    sc_samples: int = 3
    sc_temperature: float | None = None
    sc_tie_break: str = "first"
    rounds: int = 2
    retrieval_source: str = "Google Images"


@dataclass
class TurnRecord:
    """One turn of one set: every raw reply and extraction is kept."""

    turn: int  # 1..3 (static: 3, the complete build)
    replies: list[str] = field(default_factory=list)  # guesses/samples/refine rounds, in order
    extractions: list[dict[str, Any]] = field(default_factory=list)  # {"reply": i, "outcome", "guess", "raw"}
    retrievals: list[dict[str, Any]] = field(default_factory=list)
    votes: dict[str, int] | None = None
    vote_tied: bool = False
    final_reply: str | None = None
    guess: str | None = None
    extraction_outcome: str | None = None  # answer / no_answer / unparsed of the final reply
    correct: bool | None = None
    stop: str = ""  # well_done / rounds / retrieval_<status> / no_guess / ""
    error: str | None = None


@dataclass
class SetOutcome:
    """A set under one (model, approach, task)."""

    set_id: str
    turns: list[TurnRecord] = field(default_factory=list)
    correct: list[bool | None] = field(default_factory=list)  # static: [c]; dynamic: 3, carried forward
    error: str | None = None


def stage_names(approach: str) -> tuple[str, str, str]:
    """(guess stage, extraction stage, retrieval stage) of an approach, for progress and cost."""
    return approach, f"{approach}/extract", f"{approach}/retrieve"


def max_calls(approach: str, task: str, cfg: FlowConfig) -> dict[str, int]:
    """The most calls one set can take, per stage (dynamic sets that end early take fewer)."""
    g, e, r = stage_names(approach)
    turns = 3 if task == "dynamic" else 1
    if approach == "self_consistency":
        per = {g: cfg.sc_samples, e: cfg.sc_samples}
    elif approach == "self_refine":
        per = {g: 1 + cfg.rounds, e: 1}
    elif approach == "image_retrieval":
        per = {g: 1 + cfg.rounds, e: 1 + cfg.rounds, r: cfg.rounds}
    else:
        per = {g: 1, e: 1}
    return {k: v * turns for k, v in per.items()}


# -- callers -------------------------------------------------------------------------------------
class Caller(Protocol):
    counts: dict[str, int]

    async def call(self, req: ChatRequest) -> CallResult: ...

    def image(self, retrieved: Retrieved) -> ImagePart | None: ...

    def decide(self, kind: str, stopped: bool) -> None:
        """The flow passed an early-stop point of ``kind`` (``"turn"``: a dynamic turn's guess was
        judged; ``"round"``: a review round replied) and stopped there or went on."""

    def loop_done(self) -> None:
        """The review loop of a turn ended: what follows does not depend on its stop points."""


class RunCaller:
    """Makes the calls through the engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.counts: dict[str, int] = {}

    async def call(self, req: ChatRequest) -> CallResult:
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        r = await self.engine.call(req)
        if r.error_kind == NOT_RUN:
            raise Aborted(r.error or "not run")
        return r

    def image(self, retrieved: Retrieved) -> ImagePart | None:
        return _stored_image(self.engine, retrieved)

    def decide(self, kind: str, stopped: bool) -> None:
        pass

    def loop_done(self) -> None:
        pass


#: the chance that a flow stops at an early-stop point, assumed where the cache has no real replies
#: to count (:class:`StopTally`): a dynamic turn's guess is right ("turn": GuessBench is hard; the
#: paper's best static accuracy is 57.8 %, most models are far lower), a review round says
#: "$Well done!$" ("round")
PRIOR_STOP = {"turn": 0.3, "round": 0.5}
#: how many observations the prior counts as (the tally's rate moves from the prior to the
#: observed rate as real stop decisions accumulate)
_PRIOR_WEIGHT = 4.0


class StopTally:
    """How often real (cached) replies stopped flows at each early-stop point, per (model,
    approach, kind), shared by the plan's flows; :meth:`rate` is the chance of a stop that the
    expected figure assumes where the reply deciding it is a stand-in."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], list[int]] = {}

    def add(self, alias: str, approach: str, kind: str, stopped: bool) -> None:
        c = self.counts.setdefault((alias, approach, kind), [0, 0])
        c[0] += int(stopped)
        c[1] += 1

    def rate(self, alias: str, approach: str, kind: str) -> float:
        stops, n = self.counts.get((alias, approach, kind), (0, 0))
        return (stops + PRIOR_STOP[kind] * _PRIOR_WEIGHT) / (n + _PRIOR_WEIGHT)


#: stand-in replies for calls not made yet (the estimate); sized like typical replies
_STANDIN_GUESS = (
    "The build shows a compact structure of coloured blocks on a grass floor, with a rounded top and "
    "a darker base. Its proportions and the hint's letter pattern suggest an everyday object, and the "
    "colours fit it well. Answer: The build represents a stand-in guess."
)
_STANDIN_EXTRACT = "Answer: stand-in guess"


class PlanCaller:
    """Follows the cache; records each call not cached and answers it with a stand-in.

    Every call of the longest path is planned (the bound).  Past an early-stop point decided by a
    stand-in reply, the flow goes on as if it did not stop, and the calls from there are tagged
    with the stop points passed; :meth:`weigh` then sets each call's chance from ``tally``'s
    rates.  A stop point decided by real (cached) replies is certain and is counted in ``tally``.
    """

    def __init__(self, engine: Engine, placeholder: ImagePart, *, alias: str = "", approach: str = "",
                 tally: StopTally | None = None) -> None:
        self.engine = engine
        self.placeholder = placeholder
        self.alias, self.approach = alias, approach
        self.tally = tally if tally is not None else StopTally()
        self.counts: dict[str, int] = {}
        self.planned: list[PlannedCall] = []
        self.inexact = False
        self._passed: list[str] = []  # stand-in-decided stop points passed so far
        self._passed_at: list[tuple[str, ...]] = []  # per planned call

    async def call(self, req: ChatRequest) -> CallResult:
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        key, hit = await self.engine.lookup(req)
        kind = _kind_of(req.stage)
        self.planned.append(PlannedCall(req.stage, req, exact=not self.inexact,
                                        expected_output_tokens={"extract": 12.0, "retrieve": 0.0}.get(kind)))
        self._passed_at.append(tuple(self._passed))
        if hit is not None:
            return CallResult(req, hit, key=key)
        self.inexact = True  # everything after this depends on a reply we do not have
        n = len(self.planned)  # each stand-in differs, as real replies do (so each is extracted)
        if kind == "retrieve":
            text = Retrieved(status="ok", query=req.messages[-1].text(), sha256=self.placeholder.sha256,
                             mime=self.placeholder.mime, url=None, page_url=None, title=None,
                             source="estimate", error=None).to_json()
        elif kind == "extract":
            text = _STANDIN_EXTRACT
        else:
            text = f"{_STANDIN_GUESS} ({n})"
        return CallResult(req, ChatResponse(text), key=key)

    def decide(self, kind: str, stopped: bool) -> None:
        if self.inexact:  # decided by a stand-in, which never stops: the run may stop here
            self._passed.append(kind)
        else:
            self.tally.add(self.alias, self.approach, kind, stopped)

    def loop_done(self) -> None:
        # the turn's final extraction and later turns are made whether the loop stopped early
        self._passed = [k for k in self._passed if k != "round"]

    def weigh(self) -> list[PlannedCall]:
        """The planned calls, each with its chance: the product over the stop points it lies
        past of the chance of going on (call after every flow of the plan has been followed, so
        the tally holds every real decision)."""
        for pc, passed in zip(self.planned, self._passed_at):
            chance = 1.0
            for kind in passed:
                chance *= 1.0 - self.tally.rate(self.alias, self.approach, kind)
            pc.chance = chance
        return self.planned

    def image(self, retrieved: Retrieved) -> ImagePart | None:
        if retrieved.source != "estimate":  # a cached retrieval: its real image, as the run sends it
            found = _stored_image(self.engine, retrieved)
            if found is not None:
                return found
        return self.placeholder


def _stored_image(engine: Engine, retrieved: Retrieved) -> ImagePart | None:
    blobs = engine.blobs
    if blobs is None or not retrieved.sha256:
        return None
    try:
        data = blobs.get(retrieved.sha256)
    except KeyError:
        return None
    return ImagePart(data, retrieved.mime or "image/png", sha256=retrieved.sha256)


def _kind_of(stage: str) -> str:
    return stage.rsplit("/", 1)[1] if "/" in stage else "guess"


# -- one set ----------------------------------------------------------------------------------------
class _Turns:
    """Builds the requests of one (model, approach, set) and runs its turns."""

    def __init__(self, cfg: FlowConfig, alias: str, approach: str, gs: GuessSet, caller: Caller) -> None:
        self.cfg, self.alias, self.approach, self.gs, self.caller = cfg, alias, approach, gs, caller
        self.g_stage, self.e_stage, self.r_stage = stage_names(approach)
        self.system = load_prompt("guessbench/system.txt")
        variant = _VARIANT.get(approach, "")
        self.initial = load_prompt(f"guessbench/initial_guess{variant}.txt")
        self.refine = load_prompt(f"guessbench/refine_guess{variant}.txt")
        self._extracted: dict[str, Extraction] = {}

    # messages ------------------------------------------------------------------------------
    def _example_parts(self, turn: int, static: bool) -> tuple[list[Any], list[Prompt]]:
        ex = self.cfg.example
        if self.approach != "one_shot" or ex is None:
            return [], []
        intro = load_prompt("guessbench/one_shot_intro.txt")
        attempt = load_prompt("guessbench/one_shot_attempt.txt")
        outro = load_prompt("guessbench/one_shot_outro.txt")
        parts: list[Any] = [TextPart(intro.text)]
        for k in ([3] if static else range(1, turn + 1)):
            parts.append(ex.images[k - 1])
            parts.append(TextPart(attempt.render(n=str(k), hint=ex.hints[k - 1], answer=ex.answer)))
        parts.append(TextPart(outro.text))
        return parts, [intro, attempt, outro]

    def base_messages(self, turn: int, static: bool, previous_guess: str | None) -> tuple[tuple[Message, ...], str]:
        gs = self.gs
        parts, used = self._example_parts(turn, static)
        if self.approach != "hint_only":
            parts.append(gs.images[turn - 1])
        hint = gs.hints[turn - 1]
        if previous_guess is None:
            instr, prompt = self.initial.render(hint=hint), self.initial
        else:
            instr, prompt = self.refine.render(hint=hint, previous_guess=previous_guess), self.refine
        parts.append(TextPart(instr))
        used = [self.system, *used, prompt]
        return (Message.system(self.system.text), Message("user", tuple(parts))), "+".join(p.hash for p in used)

    def _req(self, stage: str, messages: tuple[Message, ...], phash: str, *, alias: str | None = None,
             params: GenParams | None = None, sample: int = 0, tag: str = "") -> ChatRequest:
        alias = alias or self.alias
        return ChatRequest(alias, messages, params or self.cfg.params[alias], stage=stage, item_id=self.gs.set_id,
                           sample_index=sample, prompt_hash=phash, attempt_tag=tag)

    # steps ---------------------------------------------------------------------------------
    async def guess(self, messages, phash: str, *, sample: int = 0, tag: str = "") -> CallResult:
        params = self.cfg.params[self.alias]
        if self.approach == "self_consistency":
            base_seed = params.seed if params.seed is not None else 0
            params = GenParams(temperature=self.cfg.sc_temperature, max_tokens=params.max_tokens, top_p=None,
                               seed=base_seed + sample, image_detail=params.image_detail, extra=params.extra)
        return await self.caller.call(self._req(self.g_stage, messages, phash, params=params, sample=sample, tag=tag))

    async def extract(self, reply: str, rec: TurnRecord, index: int) -> Extraction:
        hit = self._extracted.get(reply)
        if hit is None:
            prompt = load_prompt("guessbench/extract.txt")
            msg = (Message.user(prompt.render(response=reply)),)
            r = await self.caller.call(self._req(self.e_stage, msg, prompt.hash, alias=self.cfg.extractor))
            if not r.ok:
                raise _Failed(f"extraction: {r.error}")
            hit = self._extracted[reply] = parse_extraction(r.text, response=reply)
        rec.extractions.append({"reply": index, "outcome": hit.outcome, "guess": hit.guess, "raw": hit.raw})
        return hit

    async def retrieve(self, query: str, rec: TurnRecord, round_: int) -> ImagePart | None:
        req = ChatRequest(self.cfg.retriever or "", (Message.user(query),), GenParams(), stage=self.r_stage,
                          item_id=self.gs.set_id)
        r = await self.caller.call(req)
        row: dict[str, Any] = {"round": round_, "query": query}
        if not r.ok:
            row.update(status="error", error=r.error, error_kind=r.error_kind)
            rec.retrievals.append(row)
            return None
        got = Retrieved.from_json(r.text)
        row.update(status=got.status, sha256=got.sha256, mime=got.mime, url=got.url, page_url=got.page_url,
                   title=got.title, source=got.source, error=got.error)
        image = self.caller.image(got) if got.status == "ok" else None
        if got.status == "ok" and image is None:
            row.update(status="image_missing", error="the retrieved image is not in the image store")
        rec.retrievals.append(row)
        return image

    async def turn(self, turn: int, static: bool, previous_guess: str | None) -> TurnRecord:
        rec = TurnRecord(turn)
        base, phash = self.base_messages(turn, static, previous_guess)
        if self.approach == "self_consistency":
            results = await asyncio.gather(*(self.guess(base, phash, sample=i) for i in range(self.cfg.sc_samples)))
            bad = [r for r in results if not r.ok]
            if bad:
                raise _Failed(f"guess: {bad[0].error}")
            rec.replies = [r.text for r in results]
            ext = await asyncio.gather(*(self.extract(t, rec, i) for i, t in enumerate(rec.replies)))
            v = vote([e.guess for e in ext], tie_break=self.cfg.sc_tie_break)  # type: ignore[arg-type]
            rec.votes, rec.vote_tied = dict(v.counts), v.tied
            rec.guess = v.winner
            rec.extraction_outcome = "answer" if v.winner is not None else "no_answer"
            rec.final_reply = next((t for t, e in zip(rec.replies, ext) if e.guess is not None
                                    and " ".join(e.guess.split()).lower() == v.winner), None)
        else:
            r = await self.guess(base, phash)
            if not r.ok:
                raise _Failed(f"guess: {r.error}")
            reply = r.text
            rec.replies.append(reply)
            if self.approach in ("self_refine", "image_retrieval"):
                reply = await self._refine(base, phash, reply, rec)
                self.caller.loop_done()
            rec.final_reply = reply
            ext = await self.extract(reply, rec, rec.replies.index(reply))
            rec.guess, rec.extraction_outcome = ext.guess, ext.outcome
        rec.correct = is_correct(self.gs.answer, rec.guess)
        return rec

    async def _refine(self, base, phash: str, reply: str, rec: TurnRecord) -> str:
        """The self-refine / image-retrieval loop; returns the answer reply."""
        review = load_prompt("guessbench/self_refine.txt" if self.approach == "self_refine"
                             else "guessbench/image_retrieval.txt")
        rec.stop = "rounds"
        for rnd in range(1, self.cfg.rounds + 1):
            if self.approach == "self_refine":
                ask = Message.user(review.render(response=reply))
            else:
                ext = await self.extract(reply, rec, len(rec.replies) - 1)
                if ext.guess is None:
                    rec.stop = "no_guess"
                    return reply
                image = await self.retrieve(ext.guess, rec, rnd)
                if image is None:
                    rec.stop = f"retrieval_{rec.retrievals[-1]['status']}"
                    return reply
                ask = Message.user(image, review.render(previous_guess=ext.guess, source=self.cfg.retrieval_source))
            messages = (*base, Message("assistant", (TextPart(reply),)), ask)
            r = await self.guess(messages, f"{phash}+{review.hash}", tag=f"round{rnd}")
            if not r.ok:
                raise _Failed(f"{self.approach} round {rnd}: {r.error}")
            rec.replies.append(r.text)
            done = is_well_done(r.text)
            if rnd < self.cfg.rounds:  # (after the last round nothing more is asked either way)
                self.caller.decide("round", done)
            if done:
                rec.stop = "well_done"
                return reply
            reply = r.text
        return reply


class _Failed(Exception):
    """A call of the set failed after its retries; the set is reported, not scored."""


async def run_set(cfg: FlowConfig, alias: str, approach: str, task: str, gs: GuessSet, caller: Caller) -> SetOutcome:
    """Run (or plan) one set.  Raises :class:`Aborted` when the run is stopping."""
    t = _Turns(cfg, alias, approach, gs, caller)
    out = SetOutcome(gs.set_id)
    try:
        if task == "static":
            rec = await t.turn(3, True, None)
            out.turns.append(rec)
            out.correct = [rec.correct]
            return out
        previous: str | None = None
        for turn in (1, 2, 3):
            rec = await t.turn(turn, False, previous)
            out.turns.append(rec)
            if turn < 3:
                caller.decide("turn", bool(rec.correct))
            if rec.correct:
                break
            previous = rec.guess if rec.guess is not None else _NO_GUESS
        got = [r.correct for r in out.turns]
        first = next((i for i, c in enumerate(got) if c), None)
        out.correct = [bool(c) for c in got] + [True] * (3 - len(got)) if first is not None else [bool(c) for c in got]
        return out
    except _Failed as e:
        out.error = str(e)
        if task == "static":
            out.correct = [None]
        else:
            got = [r.correct for r in out.turns]
            out.correct = got + [None] * (3 - len(got))
        return out
