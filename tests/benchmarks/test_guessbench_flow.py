"""GuessBench turn logic with a scripted caller: carry-forward, refinement context, self-refine
stopping, self-consistency votes and samples, retrieval failures as recorded outcomes."""

import json

import pytest

from judgekit.benchmarks.guessbench.data import load_sets
from judgekit.benchmarks.guessbench.flow import FlowConfig, RunCaller, max_calls, run_set
from judgekit.engine import CallResult
from judgekit.resources import samples_dir
from judgekit.retrieval.base import Retrieved
from judgekit.types import ChatResponse, GenParams, ImagePart

SETS = load_sets(samples_dir() / "guessbench")
GS = next(s for s in SETS if len(s.answer.split()) == 1)  # a one-word answer
PNG = SETS[0].images[0]


class Script:
    """Answers each call from a function of (stage, request); records every request."""

    def __init__(self, answer):
        self.answer = answer
        self.counts = {}
        self.requests = []

    async def call(self, req):
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        self.requests.append(req)
        out = self.answer(req)
        if isinstance(out, CallResult):
            return out
        return CallResult(req, ChatResponse(out))

    def image(self, retrieved):
        return PNG if retrieved.status == "ok" else None

    def decide(self, kind, stopped):
        pass

    def loop_done(self):
        pass


def cfg(**kw):
    params = {a: GenParams(temperature=0, max_tokens=1000, seed=42) for a in ("cand", "judge")}
    return FlowConfig(extractor="judge", params=params, retriever="search", **kw)


def last_text(req):
    return req.messages[-1].text()


def extractor(req):
    """The judge: pulls 'GUESS=<x>' out of the response it is shown."""
    text = last_text(req)
    if "GUESS=" in text:
        return "Answer: " + text.split("GUESS=", 1)[1].split()[0].replace("_", " ")
    return "No Answering"


def guesses(by_turn):
    """A guesser answering per turn (the image's position in the set tells the turn)."""

    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        user = req.messages[1]
        img = [p for p in user.parts if isinstance(p, ImagePart)][-1]
        turn = [i.sha256 for i in GS.images].index(img.sha256) + 1
        return f"I think it is GUESS={by_turn[turn].replace(' ', '_')} ."
    return answer


async def test_dynamic_stops_at_first_correct_and_carries_forward():
    s = Script(guesses({1: "tree", 2: GS.answer, 3: "never asked"}))
    out = await run_set(cfg(), "cand", "cot", "dynamic", GS, s)
    assert out.correct == [False, True, True]
    assert [t.turn for t in out.turns] == [1, 2]
    assert s.counts == {"cot": 2, "cot/extract": 2}
    # the refinement turn carries the extracted previous guess, not the earlier conversation
    second = [r for r in s.requests if r.stage == "cot"][1]
    assert len(second.messages) == 2 and second.messages[0].role == "system"
    assert "Your previous guess is: tree. This guess is incorrect." in second.messages[1].text()
    assert GS.hints[1] in second.messages[1].text()


async def test_dynamic_all_wrong_and_static_uses_the_complete_build():
    s = Script(guesses({1: "a", 2: "b", 3: "c"}))
    out = await run_set(cfg(), "cand", "cot", "dynamic", GS, s)
    assert out.correct == [False, False, False] and len(out.turns) == 3
    s = Script(guesses({1: "x", 2: "x", 3: GS.answer + "s"}))  # plural still contains the answer
    out = await run_set(cfg(), "cand", "cot", "static", GS, s)
    assert out.correct == [True] and out.turns[0].turn == 3
    assert GS.hints[2] in s.requests[0].messages[1].text()


async def test_self_refine_stops_on_well_done_and_keeps_the_last_other_reply():
    replies = iter(["first GUESS=tree", "better GUESS=" + GS.answer, "$Well done!$"])

    def answer(req):
        return extractor(req) if req.stage.endswith("/extract") else next(replies)

    s = Script(answer)
    out = await run_set(cfg(rounds=3), "cand", "self_refine", "static", GS, s)
    rec = out.turns[0]
    assert rec.stop == "well_done" and rec.final_reply == "better GUESS=" + GS.answer
    assert out.correct == [True]
    assert s.counts == {"self_refine": 3, "self_refine/extract": 1}
    review = s.requests[1]
    assert review.messages[-2].role == "assistant" and review.messages[-2].text() == "first GUESS=tree"
    assert "Here is your response: first GUESS=tree Please review your answer" in last_text(review)


async def test_self_refine_uses_all_rounds_when_never_satisfied():
    n = iter(range(100))

    def answer(req):
        return extractor(req) if req.stage.endswith("/extract") else f"GUESS=try{next(n)}"

    s = Script(answer)
    out = await run_set(cfg(rounds=2), "cand", "self_refine", "static", GS, s)
    assert out.turns[0].stop == "rounds" and out.turns[0].guess == "try2"
    assert s.counts["self_refine"] == 3


async def test_self_consistency_samples_are_separate_calls_and_vote():
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        return {0: "GUESS=tree", 1: f"GUESS={GS.answer}", 2: f"GUESS={GS.answer}"}[req.sample_index]

    s = Script(answer)
    out = await run_set(cfg(sc_temperature=0.7), "cand", "self_consistency", "static", GS, s)
    rec = out.turns[0]
    assert rec.votes == {"tree": 1, GS.answer.lower(): 2} and not rec.vote_tied
    assert out.correct == [True]
    samples = [r for r in s.requests if r.stage == "self_consistency"]
    assert sorted(r.sample_index for r in samples) == [0, 1, 2]
    assert {r.params.seed for r in samples} == {42, 43, 44}
    assert all(r.params.temperature == 0.7 and r.params.top_p is None for r in samples)


async def test_self_consistency_tie_rule():
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        return f"GUESS={['tree', 'boat', GS.answer][req.sample_index]}"

    first = await run_set(cfg(sc_tie_break="first"), "cand", "self_consistency", "static", GS, Script(answer))
    last = await run_set(cfg(sc_tie_break="last"), "cand", "self_consistency", "static", GS, Script(answer))
    assert first.turns[0].guess == "tree" and first.turns[0].vote_tied and first.correct == [False]
    assert last.turns[0].guess == GS.answer.lower() and last.correct == [True]


def retrieval_script(outcome):
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        if req.stage.endswith("/retrieve"):
            return outcome(req)
        if len(req.messages) > 2:
            return "$Well done!$"
        return "GUESS=tree"
    return answer


async def test_retrieval_attaches_the_image_and_records_the_query():
    ok = Retrieved(status="ok", query="tree", sha256=PNG.sha256, mime="image/png", url="http://x/t.png",
                   page_url=None, title="t", source="brave", error=None).to_json()
    s = Script(retrieval_script(lambda req: ok))
    out = await run_set(cfg(), "cand", "image_retrieval", "static", GS, s)
    rec = out.turns[0]
    assert rec.stop == "well_done" and rec.retrievals[0]["query"] == "tree" and rec.retrievals[0]["status"] == "ok"
    review = [r for r in s.requests if r.stage == "image_retrieval"][1]
    parts = review.messages[-1].parts
    assert isinstance(parts[0], ImagePart) and "Previously, your guess was: tree" in review.messages[-1].text()


@pytest.mark.parametrize("outcome,status", [
    (lambda req: Retrieved(status="no_result", query="tree", sha256=None, mime=None, url=None, page_url=None,
                           title=None, source="brave", error=None).to_json(), "no_result"),
    (lambda req: CallResult(req, None, "transient", "HTTP 503 after 6 attempts"), "error"),
])
async def test_retrieval_failures_are_recorded_outcomes(outcome, status):
    s = Script(retrieval_script(outcome))
    out = await run_set(cfg(), "cand", "image_retrieval", "static", GS, s)
    rec = out.turns[0]
    assert out.error is None and out.correct == [False]  # scored with the guess it had
    assert rec.stop == f"retrieval_{status}" and rec.retrievals[0]["status"] == status
    assert rec.guess == "tree"


async def test_a_failed_guess_call_fails_the_set_not_the_run():
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        if "previous guess" in last_text(req):
            return CallResult(req, None, "transient", "boom")
        return "GUESS=tree"

    out = await run_set(cfg(), "cand", "cot", "dynamic", GS, Script(answer))
    assert out.error and "boom" in out.error
    assert out.correct == [False, None, None]


async def test_one_shot_shows_the_example_attempts_up_to_the_current_one():
    example = SETS[-1]
    s = Script(guesses({1: "a", 2: "b", 3: "c"}))
    await run_set(cfg(example=example), "cand", "one_shot", "dynamic", GS, s)
    third = [r for r in s.requests if r.stage == "one_shot"][2]
    text = third.messages[1].text()
    assert "Here is an example" in text and "Hint_1:" in text and "Hint_3:" in text
    assert text.count(f"Answer: The build represents {example.answer}.") == 3
    imgs = [p for p in third.messages[1].parts if isinstance(p, ImagePart)]
    assert [i.sha256 for i in imgs] == [*(i.sha256 for i in example.images), GS.images[2].sha256]


async def test_single_modality_ablations():
    s = Script(guesses({3: "x"}))
    await run_set(cfg(), "cand", "image_only", "static", GS, s)
    assert "answer format" not in s.requests[0].messages[1].text()
    s = Script(lambda req: extractor(req) if req.stage.endswith("/extract") else "GUESS=x")
    await run_set(cfg(), "cand", "hint_only", "static", GS, s)
    assert not s.requests[0].messages[1].images() and GS.hints[2] in s.requests[0].messages[1].text()


def test_max_calls_upper_bounds():
    c = cfg(rounds=2, sc_samples=3)
    assert max_calls("cot", "dynamic", c) == {"cot": 3, "cot/extract": 3}
    assert max_calls("self_consistency", "static", c) == {"self_consistency": 3, "self_consistency/extract": 3}
    assert max_calls("image_retrieval", "static", c) == {"image_retrieval": 3, "image_retrieval/extract": 3,
                                                         "image_retrieval/retrieve": 2}
