"""GuessBench turn logic with a scripted caller, checked against what the authors' code does
(Zivenzhu/GuessBench ``evaluation code/``): the conversation a dynamic turn sends, whole-reply
matching, the vote over whole extractor replies, the review loops' stop rule and rounds, image
retrieval's query and message, and each option that departs from the code."""

import pytest

from judgekit.benchmarks.guessbench.data import load_sets
from judgekit.benchmarks.guessbench.flow import FlowConfig, max_calls, run_set
from judgekit.engine import CallResult
from judgekit.resources import load_prompt, samples_dir
from judgekit.retrieval.base import Retrieved
from judgekit.types import ChatResponse, GenParams, ImagePart, TextPart

SETS = load_sets(samples_dir() / "guessbench")
GS = next(s for s in SETS if s.answer == "pumpkin")
PNG = SETS[0].images[0]


class Script:
    """Answers each call from a function of the request; records every request."""

    inexact = False

    def __init__(self, answer):
        self.answer = answer
        self.counts = {}
        self.requests = []
        self.aside = []  # requests whose reply steers nothing (another extractor of a panel)

    async def call(self, req, *, steers=True):
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        self.requests.append(req)
        if not steers:
            self.aside.append(req)
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

    def of(self, stage):
        return [r for r in self.requests if r.stage == stage]


def cfg(**kw):
    params = {a: GenParams(temperature=0, top_p=1, max_tokens=1000, seed=42) for a in ("cand", "judge")}
    return FlowConfig(extractor="judge", params=params, retriever="search", **kw)


def last_text(req):
    return req.messages[-1].text()


def extractor(req):
    """The judge: 'Answer: <x>' for the text after 'GUESS=' in the response it is shown."""
    text = last_text(req)
    if "GUESS=" in text:
        return "Answer: " + text.split("GUESS=", 1)[1].split()[0].replace("_", " ")
    return "No Answering"


def turn_of(req):
    """The attempt a guess request is about: the position of its last build image in the set."""
    imgs = [p for p in req.messages[-1].parts if isinstance(p, ImagePart)]
    return [i.sha256 for i in GS.images].index(imgs[0].sha256) + 1


def guesses(by_turn):
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        return f"I think it is GUESS={by_turn[turn_of(req)].replace(' ', '_')} ."
    return answer


# ------------------------------------------------------------------------------ turns and matching


async def test_dynamic_conversation_keeps_earlier_turns_but_no_replies():
    s = Script(guesses({1: "tree", 2: "Boat", 3: "never asked"}))
    out = await run_set(cfg(), "cand", "cot", "dynamic", GS, s)
    assert [t.turn for t in out.turns] == [1, 2, 3]
    first, second, third = s.of("cot")
    assert [m.role for m in first.messages] == ["system", "user"]
    assert [m.role for m in third.messages] == ["system", "user"] * 3  # no assistant message anywhere
    assert third.messages[:4] == second.messages  # each turn appends to the same conversation
    assert [m.images()[0].sha256 for m in third.messages[1::2]] == [i.sha256 for i in GS.images]
    # the previous guess is the previous extractor reply, lower-cased, as the reference inserts it
    assert second.messages[3].text().startswith("Your previous guess is: answer: tree. This guess is incorrect.")
    assert third.messages[5].text().startswith("Your previous guess is: answer: boat. This guess is incorrect.")
    assert out.turns[1].extracted == "answer: boat" and out.turns[1].guess == "boat"
    # the request parameters are the spec's, as the reference sends them (temperature 0, top_p 1, seed 42)
    assert first.params == GenParams(temperature=0, top_p=1, max_tokens=1000, seed=42)


async def test_dynamic_stops_at_first_correct_and_carries_forward():
    s = Script(guesses({1: "tree", 2: GS.answer, 3: "never asked"}))
    out = await run_set(cfg(), "cand", "cot", "dynamic", GS, s)
    assert out.correct == [False, True, True] and [t.turn for t in out.turns] == [1, 2]
    assert s.counts == {"cot": 2, "cot/extract": 2}


async def test_previous_guess_option_inserts_the_extracted_guess():
    s = Script(guesses({1: "Tree", 2: "x", 3: "y"}))
    await run_set(cfg(previous_guess="answer"), "cand", "cot", "dynamic", GS, s)
    assert "Your previous guess is: tree. This guess" in s.of("cot")[1].messages[3].text()


async def test_static_sends_the_complete_build_and_hint_3():
    s = Script(guesses({3: GS.answer + "s"}))  # a plural still contains the answer
    out = await run_set(cfg(), "cand", "cot", "static", GS, s)
    assert out.correct == [True] and out.turns[0].turn == 3
    (req,) = s.of("cot")
    assert len(req.messages) == 2 and req.messages[1].images() == [GS.images[2]]
    assert req.messages[1].text().endswith(f"\n\nHint: {GS.hints[2]}\n")


@pytest.mark.parametrize("judge_reply, reference, answer_only", [
    ("Answer: tree\n(The hint suggests pumpkin.)", True, False),  # the gold anywhere in the reply
    ("Answer: pump kin", True, True),  # spaces removed on both sides
    ("Answer: Pumpkins.", True, True),
    ("Answer: pumpkin\nNo wait, Answer: tree", True, False),  # the last Answer: is the guess
    ("No Answering", False, False),
    ("The model's guess appears to be pumpkin.", True, False),  # an unparsed reply still matches
])
async def test_the_gold_answer_is_looked_for_in_the_whole_extractor_reply(judge_reply, reference, answer_only):
    def answer(req):
        return judge_reply if req.stage.endswith("/extract") else "whatever the guesser said"

    out = await run_set(cfg(), "cand", "cot", "static", GS, Script(answer))
    assert out.correct == [reference] and out.turns[0].extracted == judge_reply.lower()
    out = await run_set(cfg(match="answer"), "cand", "cot", "static", GS, Script(answer))
    assert out.correct == [answer_only]


# ------------------------------------------------------------------------------ self-refine


def refine_script(replies):
    it = iter(replies)

    def answer(req):
        return extractor(req) if req.stage.endswith("/extract") else next(it)
    return answer


async def test_self_refine_stops_on_the_exact_signal_and_keeps_the_last_other_reply():
    s = Script(refine_script(["first GUESS=tree", "better GUESS=" + GS.answer, "$Well done!$"]))
    out = await run_set(cfg(), "cand", "self_refine", "static", GS, s)
    rec = out.turns[0]
    assert rec.stop == "well_done" and rec.final_reply == "better GUESS=" + GS.answer and out.correct == [True]
    assert s.counts == {"self_refine": 3, "self_refine/extract": 1}
    review = s.of("self_refine")[1]
    # the conversation, then one user message quoting the reply under review (no assistant turn)
    assert [m.role for m in review.messages] == ["system", "user", "user"]
    assert review.messages[:2] == s.of("self_refine")[0].messages
    assert last_text(review).startswith("Here is your response: first GUESS=tree\nPlease review your answer")
    assert s.of("self_refine")[2].messages[-1].text().startswith("Here is your response: better GUESS=")


@pytest.mark.parametrize("signal, stops_exact, stops_lenient", [
    ("$Well done!$", True, True),
    ("The guess fits. $Well done!$", True, True),
    ("Well done!", False, True),
    ("$Well Done!$", False, True),
    ('I was told: If it does, you MUST ONLY output "$Well done!$" Otherwise, provide your improved guess.',
     False, False),  # quoting the prompt is not the signal
])
async def test_self_refine_stop_rule_and_the_lenient_option(signal, stops_exact, stops_lenient):
    for rule, stops in (("exact", stops_exact), ("lenient", stops_lenient)):
        s = Script(refine_script(["GUESS=tree", signal, "GUESS=boat", "GUESS=cart"]))
        out = await run_set(cfg(stop_signal=rule), "cand", "self_refine", "static", GS, s)
        rec = out.turns[0]
        if stops:
            assert rec.stop == "well_done" and rec.final_reply == "GUESS=tree"
        else:  # the reply is the new answer; the loop goes on to its 3 rounds
            assert rec.stop == "rounds" and rec.final_reply == "GUESS=cart" and len(rec.replies) == 4
            assert s.of("self_refine")[2].messages[-1].text().startswith(f"Here is your response: {signal}\n")


async def test_self_refine_runs_three_rounds_by_default_and_the_papers_two_as_an_option():
    for rounds, calls in ((None, 4), (2, 3)):
        s = Script(refine_script([f"GUESS=try{i}" for i in range(9)]))
        out = await run_set(cfg() if rounds is None else cfg(rounds=rounds), "cand", "self_refine", "static", GS, s)
        assert out.turns[0].stop == "rounds" and s.counts["self_refine"] == calls
        assert out.turns[0].guess == f"try{calls - 1}"


# ------------------------------------------------------------------------------ self-consistency


def sc_script(by_sample):
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        return by_sample[req.sample_index]
    return answer


async def test_self_consistency_votes_on_whole_extractor_replies():
    s = Script(sc_script({0: "GUESS=Tree", 1: f"GUESS={GS.answer}.", 2: f"GUESS={GS.answer}"}))
    out = await run_set(cfg(), "cand", "self_consistency", "static", GS, s)
    rec = out.turns[0]
    # "Answer: pumpkin." and "Answer: pumpkin" are two votes: a three-way tie, the first seen wins
    assert rec.votes == {"answer: tree": 1, f"answer: {GS.answer}.": 1, f"answer: {GS.answer}": 1}
    assert rec.vote_tied and rec.extracted == "answer: tree" and out.correct == [False]
    # voting on the extracted guesses (an option) makes them one guess
    out = await run_set(cfg(vote="answer"), "cand", "self_consistency", "static", GS, Script(s.answer))
    assert out.turns[0].votes == {"tree": 1, GS.answer: 2} and out.correct == [True]


async def test_no_answering_can_win_the_vote():
    s = Script(sc_script({0: "no idea", 1: f"GUESS={GS.answer}", 2: "still no idea"}))
    out = await run_set(cfg(), "cand", "self_consistency", "static", GS, s)
    assert out.turns[0].votes == {"no answering": 2, f"answer: {GS.answer}": 1}
    assert out.turns[0].extracted == "no answering" and out.correct == [False]
    out = await run_set(cfg(vote="answer"), "cand", "self_consistency", "static", GS, Script(s.answer))
    assert out.turns[0].guess == GS.answer and out.correct == [True]


async def test_self_consistency_samples_send_no_sampling_parameters_unless_asked():
    s = Script(sc_script({i: f"GUESS=g{i}" for i in range(3)}))
    await run_set(cfg(), "cand", "self_consistency", "static", GS, s)
    samples = s.of("self_consistency")
    assert sorted(r.sample_index for r in samples) == [0, 1, 2]
    # each sample's reply is extracted by its own call, as the reference does, even the same reply
    assert sorted(r.sample_index for r in s.of("self_consistency/extract")) == [0, 1, 2]
    s = Script(sc_script({i: "GUESS=tree" for i in range(3)}))
    await run_set(cfg(), "cand", "self_consistency", "static", GS, s)
    assert sorted(r.sample_index for r in s.of("self_consistency/extract")) == [0, 1, 2]
    assert all(r.params == GenParams(max_tokens=1000) for r in samples)  # as the reference: max_tokens alone
    s = Script(s.answer)
    await run_set(cfg(sc_seed=True, sc_temperature=0.7), "cand", "self_consistency", "static", GS, s)
    assert {r.params.seed for r in s.of("self_consistency")} == {42, 43, 44}
    assert all(r.params.temperature == 0.7 and r.params.top_p is None for r in s.of("self_consistency"))


async def test_self_consistency_tie_rule():
    answer = sc_script({0: "GUESS=tree", 1: "GUESS=boat", 2: f"GUESS={GS.answer}"})
    first = await run_set(cfg(), "cand", "self_consistency", "static", GS, Script(answer))
    last = await run_set(cfg(sc_tie_break="last"), "cand", "self_consistency", "static", GS, Script(answer))
    assert first.turns[0].extracted == "answer: tree" and first.turns[0].vote_tied and first.correct == [False]
    assert last.turns[0].extracted == f"answer: {GS.answer}" and last.correct == [True]


async def test_dynamic_self_consistency_carries_the_winning_reply():
    def answer(req):
        if req.stage.endswith("/extract"):
            return extractor(req)
        return "GUESS=Tree" if req.sample_index else "GUESS=boat"

    s = Script(answer)
    await run_set(cfg(), "cand", "self_consistency", "dynamic", GS, s)
    second = [r for r in s.of("self_consistency") if len(r.messages) == 4]
    assert len(second) == 3
    assert all("Your previous guess is: answer: tree. This" in r.messages[3].text() for r in second)


# ------------------------------------------------------------------------------ image retrieval


def ok(query):
    return Retrieved(status="ok", query=query, sha256=PNG.sha256, mime="image/png", url="http://x/t.png",
                     page_url=None, title="t", source="brave", error=None).to_json()


def retrieval_script(outcome, judge=extractor, reviews=("$Well done!$",)):
    it = iter(reviews)

    def answer(req):
        if req.stage.endswith("/extract"):
            return judge(req)
        if req.stage.endswith("/retrieve"):
            return outcome(req)
        if len(req.messages) > 2:
            return next(it)
        return "GUESS=Tree"
    return answer


async def test_retrieval_searches_the_text_after_answer_and_attaches_build_and_photo():
    s = Script(retrieval_script(lambda req: ok(last_text(req))))
    out = await run_set(cfg(), "cand", "image_retrieval", "static", GS, s)
    rec = out.turns[0]
    assert rec.stop == "well_done" and rec.retrievals[0]["query"] == "Tree" and rec.retrievals[0]["status"] == "ok"
    # the loop's extraction uses the code's second extraction prompt (indented), the answer's the first
    loop_x, final_x = s.of("image_retrieval/extract")
    assert "\n\n    Language model's response: GUESS=Tree\n    " in last_text(loop_x)
    assert last_text(final_x).endswith("\n\nLanguage model's response: GUESS=Tree\n")
    assert [e["prompt"] for e in rec.extractions] == ["extract_retrieval", "extract"]
    review = s.of("image_retrieval")[1]
    assert [m.role for m in review.messages] == ["system", "user", "user"]
    parts = review.messages[-1].parts
    assert [type(p) for p in parts] == [TextPart, TextPart, ImagePart, TextPart, ImagePart]
    # the guess goes in as the split leaves it: a leading space, case kept
    assert parts[0].text.startswith("Previously, your guess was:  Tree.\n\nNow, I have searched for a real "
                                    "image of  Tree")
    assert parts[1].text == "Here is the provided Minecraft build." and parts[2] == GS.images[2]
    assert parts[3].text == "Here is the real image of your guess." and parts[4] == PNG


async def test_retrieval_of_no_answering_searches_for_it_as_the_reference_does():
    s = Script(retrieval_script(lambda req: ok(last_text(req)), judge=lambda req: "No Answering"))
    out = await run_set(cfg(), "cand", "image_retrieval", "static", GS, s)
    assert out.turns[0].retrievals[0]["query"] == "No Answering"
    assert s.of("image_retrieval")[1].messages[-1].parts[0].text.startswith("Previously, your guess was: No Answering.")


async def test_retrieval_stop_rule_ignores_a_quote_of_the_prompt():
    quote = 'If they match, you MUST ONLY output: "$Well done!$". Otherwise, provide your improved guess.'
    s = Script(retrieval_script(lambda req: ok(last_text(req)), reviews=(quote, "GUESS=boat", "$Well done!$")))
    out = await run_set(cfg(), "cand", "image_retrieval", "static", GS, s)
    assert out.turns[0].stop == "well_done" and out.turns[0].final_reply == "GUESS=boat"
    assert [r["query"] for r in out.turns[0].retrievals] == ["Tree", "No Answering", "boat"]


@pytest.mark.parametrize("outcome,status", [
    (lambda req: Retrieved(status="no_result", query="tree", sha256=None, mime=None, url=None, page_url=None,
                           title=None, source="brave", error=None).to_json(), "no_result"),
    (lambda req: CallResult(req, None, "transient", "HTTP 503 after 6 attempts"), "error"),
])
async def test_retrieval_failures_are_recorded_outcomes(outcome, status):
    s = Script(retrieval_script(outcome))
    out = await run_set(cfg(), "cand", "image_retrieval", "static", GS, s)
    rec = out.turns[0]
    assert out.error is None and out.correct == [False]  # scored with the reply it had
    assert rec.stop == f"retrieval_{status}" and rec.retrievals[0]["status"] == status
    assert rec.guess == "tree"


# ------------------------------------------------------------------------------ the rest


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


async def test_one_shot_puts_the_task_first_and_the_example_after_it():
    example = load_sets(samples_dir() / "guessbench", skip={"retrieval"})[-1]
    assert example.set_id == "example"
    s = Script(guesses({1: "a", 2: "b", 3: "c"}))
    await run_set(cfg(example=example), "cand", "one_shot", "dynamic", GS, s)
    second = s.of("one_shot")[1].messages[3]
    kinds = [("img", p.sha256) if isinstance(p, ImagePart) else ("text", p.text[:12]) for p in second.parts]
    assert kinds == [("img", GS.images[1].sha256), ("text", "Your Task:\nY"), ("text", "\nI will give"),
                     ("img", example.images[0].sha256), ("text", "Hint_1: The "),
                     ("img", example.images[1].sha256), ("text", "Hint_2: The "), ("text", "Answer: The ")]
    assert second.parts[-1].text == "Answer: The build represents Glass of Milk."
    # the static task is attempt 3: the example shows all three attempts
    s = Script(guesses({3: "c"}))
    await run_set(cfg(example=example), "cand", "one_shot", "static", GS, s)
    imgs = s.of("one_shot")[0].messages[1].images()
    assert [i.sha256 for i in imgs] == [GS.images[2].sha256, *(i.sha256 for i in example.images)]


async def test_single_modality_ablations():
    s = Script(guesses({3: "x"}))
    await run_set(cfg(), "cand", "image_only", "static", GS, s)
    assert "Hint:" not in s.requests[0].messages[1].text()
    s = Script(lambda req: extractor(req) if req.stage.endswith("/extract") else "GUESS=x")
    await run_set(cfg(), "cand", "hint_only", "dynamic", GS, s)
    third = s.of("hint_only")[2]
    assert not any(m.images() for m in third.messages) and GS.hints[2] in third.messages[-1].text()


def test_max_calls_upper_bounds():
    c = cfg(sc_samples=3)
    assert max_calls("cot", "dynamic", c) == {"cot": 3, "cot/extract": 3}
    assert max_calls("self_consistency", "static", c) == {"self_consistency": 3, "self_consistency/extract": 3}
    assert max_calls("image_retrieval", "static", c) == {"image_retrieval": 4, "image_retrieval/extract": 4,
                                                         "image_retrieval/retrieve": 3}
    assert max_calls("self_refine", "dynamic", cfg(rounds=2)) == {"self_refine": 9, "self_refine/extract": 3}


# ------------------------------------------------------------------------------ a panel of extractors


def panel_cfg(**kw):
    params = {a: GenParams(temperature=0, top_p=1, max_tokens=1000, seed=42) for a in ("cand", "judge", "j2")}
    return FlowConfig(extractor="judge", params=params, retriever="search", panel=("judge", "j2"), **kw)


def second_reads(other, by_turn):
    """The first extractor reads as ``extractor``; "j2" answers ``other(req)``; guesses by turn."""
    def answer(req):
        if req.stage.endswith("/extract"):
            return other(req) if req.model == "j2" else extractor(req)
        return f"I think it is GUESS={by_turn[turn_of(req)].replace(' ', '_')} ."
    return answer


async def test_the_first_extractor_steers_a_dynamic_set_and_the_second_reads_the_same_replies():
    # j2 reads every reply as the gold answer: right from turn 1, but the flow follows "judge"
    s = Script(second_reads(lambda req: f"Answer: {GS.answer}", {1: "tree", 2: GS.answer, 3: "never asked"}))
    out = await run_set(panel_cfg(), "cand", "cot", "dynamic", GS, s)
    assert [t.turn for t in out.turns] == [1, 2] and out.correct == [False, True, True]
    assert [(t.readings["judge"].correct, t.readings["j2"].correct) for t in out.turns] == [(False, True),
                                                                                          (True, True)]
    # the next attempt quotes the steering extractor's reply, never the other's
    assert s.of("cot")[1].messages[3].text().startswith("Your previous guess is: answer: tree.")
    # each extractor read each answer reply once; the turn's own fields are the first's
    assert sorted((r.model, turn) for turn in (1, 2) for r in s.of("cot/extract")
                  if f"GUESS={ {1: 'tree', 2: GS.answer}[turn]}" in last_text(r)) == [
        ("j2", 1), ("j2", 2), ("judge", 1), ("judge", 2)]
    t1 = out.turns[0]
    assert t1.extracted == "answer: tree" and t1.readings["j2"].extracted == f"answer: {GS.answer}"
    assert {e["judge"] for e in t1.extractions} == {"judge"}
    assert {r.model for r in s.aside} == {"j2"} and len(s.aside) == 2
    assert [e["judge"] for e in t1.readings["j2"].extractions] == ["j2"]


async def test_another_extractors_failure_is_its_reading_not_the_set():
    def fails(req):
        return CallResult(req, None, error_kind="server", error="HTTP 500")

    out = await run_set(panel_cfg(), "cand", "cot", "static", GS,
                        Script(second_reads(fails, {3: GS.answer})))
    assert out.error is None and out.correct == [True]
    assert out.turns[0].readings["j2"].correct is None and "HTTP 500" in out.turns[0].readings["j2"].error
    assert out.extraction_failures == {"j2": 1}
    # the first extractor's failure still fails the set, as with one extractor
    swapped = FlowConfig(extractor="j2", params=panel_cfg().params, retriever="search", panel=("j2", "judge"))
    out = await run_set(swapped, "cand", "cot", "static", GS, Script(second_reads(fails, {3: GS.answer})))
    assert out.error and out.correct == [None] and out.extraction_failures == {"j2": 1}


async def test_each_extractor_votes_over_its_own_readings_of_the_samples():
    def answer(req):
        if req.stage.endswith("/extract"):
            return "No Answering" if req.model == "j2" else extractor(req)
        return {0: f"GUESS={GS.answer}", 1: f"GUESS={GS.answer}", 2: "GUESS=tree"}[req.sample_index]

    s = Script(answer)
    out = await run_set(panel_cfg(), "cand", "self_consistency", "static", GS, s)
    first, second = out.turns[0].readings["judge"], out.turns[0].readings["j2"]
    assert first.votes == {f"answer: {GS.answer}": 2, "answer: tree": 1} and first.correct
    assert second.votes == {"no answering": 3} and second.correct is False
    assert [e["reply"] for e in second.extractions] == [0, 1, 2]  # in sample order
    assert sorted((r.model, r.sample_index) for r in s.of("self_consistency/extract")) == [
        ("j2", 0), ("j2", 1), ("j2", 2), ("judge", 0), ("judge", 1), ("judge", 2)]


async def test_only_the_first_extractor_reads_the_retrieval_rounds():
    s = Script(retrieval_script(lambda req: ok(last_text(req)), reviews=("GUESS=boat", "$Well done!$")))
    out = await run_set(panel_cfg(), "cand", "image_retrieval", "static", GS, s)
    names = {load_prompt(f"guessbench/{n}.txt").hash: n for n in ("extract", "extract_retrieval")}
    by = sorted((r.model, names[r.prompt_hash]) for r in s.of("image_retrieval/extract"))
    # the two rounds' queries by the first alone, the answer reply (boat) by both
    assert by == [("j2", "extract"), ("judge", "extract"), ("judge", "extract_retrieval"),
                  ("judge", "extract_retrieval")]
    assert out.turns[0].readings["j2"].extracted == "answer: boat"
    assert max_calls("image_retrieval", "static", panel_cfg())["image_retrieval/extract"] == 3 + 2
    assert out.turns[0].readings["j2"].final_reply == out.turns[0].final_reply


def test_max_calls_count_every_extractor():
    c = panel_cfg(sc_samples=3)
    assert max_calls("cot", "dynamic", c) == {"cot": 3, "cot/extract": 6}
    assert max_calls("self_consistency", "static", c) == {"self_consistency": 3, "self_consistency/extract": 6}
    assert max_calls("self_refine", "static", c) == {"self_refine": 4, "self_refine/extract": 2}
