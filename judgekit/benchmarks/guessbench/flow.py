"""GuessBench turn logic: one build set, one model, one approach, one task, as the authors' code
runs it (``evaluation.py``, ``evaluate_gpt.py``, ``invisible_utils.py``).

The messages are laid out in :mod:`judgekit.benchmarks.guessbench.messages`; the calls go through
a caller (:mod:`judgekit.benchmarks.guessbench.callers`), so the same code runs and plans.

A turn (static: ``3.png`` + Hint_3; dynamic attempt t: ``t.png`` + Hint_t):

- the conversation: every earlier turn's system and user messages, then this turn's; the
  refinement instruction carries the previous guess (the previous turn's extractor reply,
  lower-cased, as the reference inserts it; ``previous_guess = "answer"``: its extracted guess);
- ``self_consistency``: ``n`` samples (no temperature, top_p or seed sent, as the reference;
  ``sc_temperature`` / ``sc_seed`` change that), each extracted, and a majority vote over the
  lower-cased extractor replies (``vote = "answer"``: over the extracted guesses);
- ``self_refine``: after the guess, up to ``rounds`` reviews (3, as the code; the paper says 2),
  each quoting the reply under review; a reply that contains ``$Well done!$`` and not the prompt's
  own sentence ends the loop, and the last other reply is the answer;
- ``image_retrieval``: the same loop; each round first has the extractor read the reply under
  review (the code's second extraction prompt), searches for the text after its first
  ``Answer:`` and attaches the image found.  A retrieval that finds nothing or fails ends the loop
  and keeps the reply (the reference has no such case: its search always returned an image);
- the answer reply goes to the extractor (the judge model, the code's extraction prompt), and the
  turn is right when the gold answer occurs in the whole lower-cased extractor reply
  (:func:`~judgekit.parsers.guess_reference.reply_matches`; ``match = "answer"``: in the guess
  after ``Answer:`` only).

Dynamic scoring stops at the first correct turn; later turns count as correct.

A panel of extractors (``FlowConfig.extractors``): every extractor reads every reply that is
scored (each turn's answer reply; each self-consistency sample, and votes over its own readings),
all at once, and each turn keeps every extractor's :class:`Reading`.  The first extractor steers
the flow as the single extractor does: its verdict stops a dynamic set at the first right guess,
its reply is the previous guess the next turn quotes, and it alone reads the reply under review
in an image-retrieval round (that reading is a search query, not a score).  The others score the
same replies; a failed call of theirs is a failed reading (``Reading.error``), not a failed set.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ...blobs import missing_output
from ...engine import CallResult
from ...parsers.guess import Extraction, is_correct, normalize_guess, parse_extraction, vote
from ...parsers.guess_reference import (RETRIEVAL_SENTENCE, SELF_REFINE_SENTENCE, reply_matches, retrieval_guess,
                                        says_well_done, vote_replies)
from ...resources import load_prompt
from ...retrieval.base import Retrieved
from ...types import ChatRequest, GenParams, ImagePart, Message
from .callers import PRIOR_STOP, Aborted, Caller, PlanCaller, RunCaller, StopTally
from .data import GuessSet
from .messages import TurnPrompts

__all__ = ["APPROACHES", "TASKS", "FlowConfig", "Reading", "TurnRecord", "SetOutcome", "Aborted", "RunCaller", "PlanCaller",
           "StopTally", "PRIOR_STOP", "run_set", "stage_names", "max_calls"]

APPROACHES = ("cot", "no_cot", "one_shot", "self_consistency", "self_refine", "image_retrieval",
              "image_only", "hint_only")
TASKS = ("static", "dynamic")

_NO_GUESS = "No Answering"


@dataclass(frozen=True)
class FlowConfig:
    """What every flow of a run shares (the benchmark's options, resolved)."""

    extractor: str  # alias of the extraction judge (the panel's first, which steers the flow)
    params: dict[str, GenParams]  # alias -> the spec's generation parameters
    retriever: str | None = None
    example: GuessSet | None = None  # the one-shot worked example
    sc_samples: int = 3
    sc_temperature: float | None = None
    sc_seed: bool = False
    sc_tie_break: str = "first"
    rounds: int = 3
    retrieval_source: str = "Google Images"
    match: str = "reply"  # "reply" (the reference) | "answer"
    vote: str = "reply"  # "reply" (the reference) | "answer"
    previous_guess: str = "reply"  # "reply" (the reference) | "answer"
    stop_signal: str = "exact"  # "exact" (the reference) | "lenient"
    panel: tuple[str, ...] = ()  # every extractor, the first = extractor; () = the extractor alone

    @property
    def extractors(self) -> tuple[str, ...]:
        """The extractors that score each reply, the steering one first."""
        return self.panel or (self.extractor,)


@dataclass
class Reading:
    """One extractor's reading of a turn: what it extracted and whether that is right."""

    judge: str
    extractions: list[dict[str, Any]] = field(default_factory=list)  # as TurnRecord.extractions
    votes: dict[str, int] | None = None
    vote_tied: bool = False
    final_reply: str | None = None  # the reply its verdict is on (self-consistency: its vote's)
    extracted: str | None = None  # its reply on final_reply, lower-cased
    guess: str | None = None
    outcome: str | None = None  # answer / no_answer / unparsed
    correct: bool | None = None  # None: its extraction call failed
    error: str | None = None


@dataclass
class TurnRecord:
    """One turn of one set: every raw reply and extraction is kept."""

    turn: int  # 1..3 (static: 3, the complete build)
    replies: list[str] = field(default_factory=list)  # guesses/samples/review rounds, in order
    extractions: list[dict[str, Any]] = field(default_factory=list)  # {"reply", "prompt", "outcome", "guess", "raw"}
    retrievals: list[dict[str, Any]] = field(default_factory=list)
    votes: dict[str, int] | None = None
    vote_tied: bool = False
    final_reply: str | None = None
    extracted: str | None = None  # the extractor's reply on the answer, lower-cased: what the reference matches
    guess: str | None = None  # the guess after its Answer: (parse_extraction), or the vote's winning guess
    extraction_outcome: str | None = None  # answer / no_answer / unparsed of the final reply
    correct: bool | None = None
    stop: str = ""  # well_done / rounds / retrieval_<status> / no_guess / ""
    error: str | None = None
    #: every extractor's reading, the steering one's first (its fields are the ones above)
    readings: dict[str, Reading] = field(default_factory=dict)


@dataclass
class SetOutcome:
    """A set under one (model, approach, task)."""

    set_id: str
    turns: list[TurnRecord] = field(default_factory=list)
    correct: list[bool | None] = field(default_factory=list)  # static: [c]; dynamic: 3, carried forward
    error: str | None = None
    extraction_failures: dict[str, int] = field(default_factory=dict)  # extractor -> its failed calls


def stage_names(approach: str) -> tuple[str, str, str]:
    """(guess stage, extraction stage, retrieval stage) of an approach, for progress and cost."""
    return approach, f"{approach}/extract", f"{approach}/retrieve"


def max_calls(approach: str, task: str, cfg: FlowConfig) -> dict[str, int]:
    """The most calls one set can take, per stage (dynamic sets that end early take fewer)."""
    g, e, r = stage_names(approach)
    turns = 3 if task == "dynamic" else 1
    n = len(cfg.extractors)
    if approach == "self_consistency":
        per = {g: cfg.sc_samples, e: cfg.sc_samples * n}
    elif approach == "self_refine":
        per = {g: 1 + cfg.rounds, e: n}
    elif approach == "image_retrieval":
        per = {g: 1 + cfg.rounds, e: cfg.rounds + n, r: cfg.rounds}  # round readings: the first only
    else:
        per = {g: 1, e: n}
    return {k: v * turns for k, v in per.items()}


class _Failed(Exception):
    """A call of the set failed after its retries; the set is reported, not scored."""


class _Turns:
    """Runs the turns of one (model, approach, set)."""

    def __init__(self, cfg: FlowConfig, alias: str, approach: str, gs: GuessSet, caller: Caller) -> None:
        self.cfg, self.alias, self.approach, self.gs, self.caller = cfg, alias, approach, gs, caller
        self.g_stage, self.e_stage, self.r_stage = stage_names(approach)
        self.prompts = TurnPrompts(approach, cfg.example, cfg.retrieval_source)
        self._extracted: dict[tuple[str, str, str, int], Extraction] = {}
        self.failures: dict[str, int] = {}  # extractor -> failed extraction calls

    def _req(self, stage: str, messages: tuple[Message, ...], phash: str, *, alias: str | None = None,
             params: GenParams | None = None, sample: int = 0, tag: str = "") -> ChatRequest:
        alias = alias or self.alias
        return ChatRequest(alias, messages, params or self.cfg.params[alias], stage=stage, item_id=self.gs.set_id,
                           sample_index=sample, prompt_hash=phash, attempt_tag=tag)

    # steps ---------------------------------------------------------------------------------
    async def guess(self, messages, phash: str, *, sample: int = 0, tag: str = "") -> CallResult:
        params = self.cfg.params[self.alias]
        if self.approach == "self_consistency":
            # the reference sends max_tokens alone with the samples
            seed = ((params.seed or 0) + sample) if self.cfg.sc_seed else None
            params = GenParams(temperature=self.cfg.sc_temperature, max_tokens=params.max_tokens, top_p=None,
                               seed=seed, image_detail=params.image_detail, extra=params.extra)
        return await self.caller.call(self._req(self.g_stage, messages, phash, params=params, sample=sample, tag=tag))

    async def extract(self, reply: str, into: list[dict[str, Any]], index: int, *, prompt_name: str = "extract",
                      sample: int = 0, judge: str | None = None) -> Extraction:
        """``judge``'s reading of ``reply`` (default: the steering extractor), recorded in
        ``into``.  Each self-consistency sample's is its own call (``sample``), as in the
        reference, even when two samples wrote the same reply.  A failed call raises
        :class:`_Failed`."""
        judge = judge or self.cfg.extractor
        key = (judge, prompt_name, reply, sample)
        hit = self._extracted.get(key)
        if hit is None:
            prompt = load_prompt(f"guessbench/{prompt_name}.txt")
            msg = (Message.user(prompt.render(response=reply)),)
            req = self._req(self.e_stage, msg, prompt.hash, alias=judge, sample=sample)
            # (steers is passed only when False: a caller written for one extractor needs no change)
            r = await (self.caller.call(req) if judge == self.cfg.extractor else self.caller.call(req, steers=False))
            if not r.ok:
                self.failures[judge] = self.failures.get(judge, 0) + 1
                raise _Failed(f"extraction by {judge}: {r.error}" if len(self.cfg.extractors) > 1
                              else f"extraction: {r.error}")
            hit = self._extracted[key] = parse_extraction(r.text, response=reply)
        into.append({"judge": judge, "reply": index, "prompt": prompt_name, "outcome": hit.outcome,
                     "guess": hit.guess, "raw": hit.raw})
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
            row.update(status="image_missing", error=missing_output(got.sha256 or "", "the retrieved image"))
        rec.retrievals.append(row)
        return image

    async def turn(self, attempt: int, context: tuple[Message, ...], phash: str) -> TurnRecord:
        """One turn; ``context`` ends with this turn's system and user messages."""
        rec = TurnRecord(attempt)
        if self.approach == "self_consistency":
            results = await asyncio.gather(*(self.guess(context, phash, sample=i) for i in range(self.cfg.sc_samples)))
            bad = [r for r in results if not r.ok]
            if bad:
                raise _Failed(f"guess: {bad[0].error}")
            rec.replies = [r.text for r in results]
            read = self._read_samples
        else:
            r = await self.guess(context, phash)
            if not r.ok:
                raise _Failed(f"guess: {r.error}")
            reply = r.text
            rec.replies.append(reply)
            if self.approach in ("self_refine", "image_retrieval"):
                reply = await self._review(context, phash, reply, rec, self.gs.images[attempt - 1])
                self.caller.loop_done()
            rec.final_reply = reply
            read = self._read_reply
        judges = self.cfg.extractors
        got = await asyncio.gather(*(read(rec, j) for j in judges), return_exceptions=True)
        for j, g in zip(judges, got):
            if isinstance(g, _Failed) and j != judges[0]:
                rec.readings[j] = Reading(j, correct=None, error=str(g))  # another extractor's failure: its own
            elif isinstance(g, BaseException):
                raise g
            else:
                rec.readings[j] = g
        first = rec.readings[judges[0]]
        # the steering extractor's reading is the turn's (as with a single extractor); its
        # extractions follow the retrieval rounds' (which only it reads)
        rec.extractions.extend(first.extractions)
        rec.votes, rec.vote_tied, rec.final_reply = first.votes, first.vote_tied, first.final_reply
        rec.extracted, rec.guess, rec.extraction_outcome, rec.correct = (first.extracted, first.guess, first.outcome,
                                                                         first.correct)
        return rec

    def _verdict(self, reading: Reading) -> None:
        if self.caller.inexact:  # planning past a stand-in reply: never right, so the plan goes on
            reading.correct = False
        elif self.cfg.match == "answer":
            reading.correct = is_correct(self.gs.answer, reading.guess)
        else:
            reading.correct = reply_matches(self.gs.answer, reading.extracted)

    async def _read_reply(self, rec: TurnRecord, judge: str) -> Reading:
        reading = Reading(judge, final_reply=rec.final_reply)
        assert rec.final_reply is not None
        chosen = await self.extract(rec.final_reply, reading.extractions, rec.replies.index(rec.final_reply),
                                    judge=judge)
        reading.guess, reading.outcome, reading.extracted = chosen.guess, chosen.outcome, chosen.raw.lower()
        self._verdict(reading)
        return reading

    async def _read_samples(self, rec: TurnRecord, judge: str) -> Reading:
        reading = Reading(judge)
        ext = await asyncio.gather(*(self.extract(t, reading.extractions, i, sample=i, judge=judge)
                                     for i, t in enumerate(rec.replies)))
        reading.extractions.sort(key=lambda e: e["reply"])  # in sample order, not the order they came back
        pick, guess = self._vote(reading, list(ext))
        reading.final_reply = rec.replies[pick]
        reading.guess = guess
        reading.outcome = ext[pick].outcome if self.cfg.vote == "reply" else (
            "answer" if guess is not None else "no_answer")
        reading.extracted = ext[pick].raw.lower()
        self._verdict(reading)
        return reading

    def _vote(self, rec: Reading, ext: list[Extraction]) -> tuple[int, str | None]:
        """The self-consistency vote: (the sample that carries the winner, the winning guess)."""
        if self.cfg.vote == "answer":
            v = vote([e.guess for e in ext], tie_break=self.cfg.sc_tie_break)  # type: ignore[arg-type]
            rec.votes, rec.vote_tied = dict(v.counts), v.tied
            pick = next((i for i, e in enumerate(ext) if e.guess is not None
                         and normalize_guess(e.guess) == v.winner), 0)
            return pick, v.winner
        rv = vote_replies([e.raw for e in ext], tie_break=self.cfg.sc_tie_break)  # type: ignore[arg-type]
        rec.votes, rec.vote_tied = dict(rv.counts), rv.tied
        return rv.index, ext[rv.index].guess

    async def _review(self, context: tuple[Message, ...], phash: str, reply: str, rec: TurnRecord,
                      build: ImagePart) -> str:
        """The self-refine / image-retrieval loop; returns the answer reply."""
        refine = self.approach == "self_refine"
        sentence = SELF_REFINE_SENTENCE if refine else RETRIEVAL_SENTENCE
        phash = "+".join([phash, *(p.hash for p in self.prompts.review)])
        rec.stop = "rounds"
        for rnd in range(1, self.cfg.rounds + 1):
            if refine:
                ask = self.prompts.self_refine(reply)
            else:
                ext = await self.extract(reply, rec.extractions, len(rec.replies) - 1,
                                         prompt_name="extract_retrieval")
                guess = retrieval_guess(ext.raw)
                if not guess.strip():
                    rec.stop = "no_guess"
                    return reply
                image = await self.retrieve(guess.strip(), rec, rnd)
                if image is None:
                    rec.stop = f"retrieval_{rec.retrievals[-1]['status']}"
                    return reply
                ask = self.prompts.retrieval(guess, build, image)
            r = await self.guess((*context, ask), phash, tag=f"round{rnd}")
            if not r.ok:
                raise _Failed(f"{self.approach} round {rnd}: {r.error}")
            rec.replies.append(r.text)
            done = says_well_done(r.text, sentence, self.cfg.stop_signal)  # type: ignore[arg-type]
            if rnd < self.cfg.rounds:  # (after the last round nothing more is asked either way)
                self.caller.decide("round", done)
            if done:
                rec.stop = "well_done"
                return reply
            reply = r.text
        return reply


async def run_set(cfg: FlowConfig, alias: str, approach: str, task: str, gs: GuessSet, caller: Caller) -> SetOutcome:
    """Run (or plan) one set.  Raises :class:`Aborted` when the run is stopping."""
    t = _Turns(cfg, alias, approach, gs, caller)
    out = SetOutcome(gs.set_id, extraction_failures=t.failures)  # counted as the calls fail
    context: tuple[Message, ...] = ()
    hashes: list[str] = []

    def add_turn(attempt: int, previous: str | None) -> str:
        nonlocal context
        messages, used = t.prompts.turn(gs, attempt, previous)
        context = (*context, *messages)
        hashes.extend(p.hash for p in used if p.hash not in hashes)
        return "+".join(hashes)

    try:
        if task == "static":
            phash = add_turn(3, None)
            rec = await t.turn(3, context, phash)
            out.turns.append(rec)
            out.correct = [rec.correct]
            return out
        previous: str | None = None
        for attempt in (1, 2, 3):
            phash = add_turn(attempt, previous)
            rec = await t.turn(attempt, context, phash)
            out.turns.append(rec)
            if attempt < 3:
                caller.decide("turn", bool(rec.correct))
            if rec.correct:
                break
            if cfg.previous_guess == "answer":
                previous = rec.guess if rec.guess is not None else _NO_GUESS
            else:
                previous = rec.extracted
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
