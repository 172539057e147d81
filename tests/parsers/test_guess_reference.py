"""Parity of GuessBench's rules with the authors' evaluation code (Zivenzhu/GuessBench).

Fixed cases give the outputs the code gives (worked out from ``evaluation.py``,
``invisible_utils.py`` and ``evaluate_gpt.py``), edge cases included; the property tests check
judgekit's functions against a transcription of each rule, in a line or two, on arbitrary text.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.parsers.guess_reference import (RETRIEVAL_SENTENCE, SELF_REFINE_SENTENCE, reference_gold, reply_matches,
                                              retrieval_guess, says_well_done, vote_replies)
from judgekit.resources import load_prompt

# ------------------------------------------------------------------ the rules, transcribed


def ref_gold(answer: str) -> str:  # evaluation.py: remove_trailing_period
    return re.sub("[\u3002\uff0e\uff61.]$", "", answer)


def ref_correct(answer: str, judge_reply: str) -> bool:  # evaluation.py: the extracted answer is lower-cased first
    extracted = judge_reply.lower()
    return ref_gold(answer).lower().replace(" ", "") in extracted.lower().replace(" ", "")


def ref_vote(judge_replies: list[str]) -> str:  # invisible_utils.py: get_most_frequent_value_and_index
    counts = Counter(r.lower() for r in judge_replies)
    return max(counts, key=counts.get)


def ref_stops(reply: str, sentence: str) -> bool:  # evaluate_gpt.py: the review loops' break
    return "$Well done!$" in reply and sentence not in reply


# ------------------------------------------------------------------ fixed cases


@pytest.mark.parametrize("answer, gold", [
    ("cat.", "cat"), ("cat\u3002", "cat"), ("cat\uff0e", "cat"), ("cat\uff61", "cat"),
    ("cat..", "cat."),  # one period only
    ("Rocking Chair", "Rocking Chair"),  # case and spaces kept
    ("cat.\n", "cat\n"),  # "$" also matches before a final line break
    ("cat.\n\n", "cat.\n\n"), ("cat. ", "cat. "), ("cat\n", "cat\n"),  # nothing is stripped
    ("", ""), (".", ""),
])
def test_reference_gold(answer, gold):
    assert reference_gold(answer) == gold == ref_gold(answer)


@pytest.mark.parametrize("answer, judge_reply, correct", [
    ("ant", "Answer: bridge\n(The hint suggests ant.)", True),  # the whole reply, not the guess
    ("ring", "No Answering", True),  # "noanswering" holds "ring"
    ("cat", "Answer: cats", True), ("cats", "Answer: cat", False),  # containment, one way
    ("Rocking Chair.", "Answer: rockingchair", True), ("rocking chair", "ANSWER: ROCKING CHAIR.", True),
    ("Rocking Chair.", "Answer: rocking-chair", False),
    ("ice cream", "Answer: ice\tcream", False),  # only the ASCII space is removed
    ("ice cream", "Answer: ice\u00a0cream", False),
    ("glass of milk.", "Answer: a glass of milk", True),
    ("caterpillar", "Answer: cat", False),
    ("cat\n", "Answer: cat", False),  # a gold with a line break needs the line break
    ("cat", "", False),
])
def test_reply_matches(answer, judge_reply, correct):
    assert reply_matches(answer, judge_reply) is correct
    assert ref_correct(answer, judge_reply) is correct


@pytest.mark.parametrize("replies, winner, counts, tied", [
    (["Answer: cat", "Answer: cat.", "No Answering"], "answer: cat",
     {"answer: cat": 1, "answer: cat.": 1, "no answering": 1}, True),  # three votes, the first seen wins
    (["No Answering", "Answer: cat", "no answering"], "no answering",
     {"no answering": 2, "answer: cat": 1}, False),  # No Answering wins
    (["Answer: Cat", "Answer: dog", "answer: cat"], "answer: cat", {"answer: cat": 2, "answer: dog": 1}, False),
    (["Answer: dog", "Answer: cat", "Answer: cat", "Answer: dog"], "answer: dog",
     {"answer: dog": 2, "answer: cat": 2}, True),
    (["Answer:  cat", "Answer: cat"], "answer:  cat", {"answer:  cat": 1, "answer: cat": 1}, True),  # spaces count
])
def test_vote_replies(replies, winner, counts, tied):
    v = vote_replies(replies)
    assert (v.winner, v.counts, v.tied) == (winner, counts, tied)
    assert v.winner == ref_vote(replies) and replies[v.index].lower() == winner
    assert v.index == [r.lower() for r in replies].index(winner)


def test_vote_tie_last_option_and_bad_input():
    assert vote_replies(["Answer: a", "Answer: b", "Answer: c"], tie_break="last").winner == "answer: c"
    assert vote_replies(["Answer: a", "Answer: b", "Answer: b", "Answer: a"], tie_break="last").winner == "answer: a"
    assert vote_replies(["Answer: a", "Answer: b", "Answer: b"], tie_break="last").winner == "answer: b"
    with pytest.raises(ValueError):
        vote_replies([])
    with pytest.raises(ValueError):
        vote_replies(["x"], tie_break="random")  # type: ignore[arg-type]


@pytest.mark.parametrize("reply, exact, lenient", [
    ("$Well done!$", True, True),
    ("The guess fits the hint.\n\n$Well done!$", True, True),
    ("**$Well done!$**", True, True),
    ("Well done!", False, True), ("**Well done!**", False, True), ("$Well Done!$", False, True),
    ("$well done!$", False, True), ("$Well done$", False, True),
    ("I think the build is well done! The answer is a cat.", False, False),
    ("Answer: cat", False, False), ("", False, False), (None, False, False),
])
def test_stop_signal(reply, exact, lenient):
    for sentence in (SELF_REFINE_SENTENCE, RETRIEVAL_SENTENCE):
        assert says_well_done(reply, sentence) is exact
        assert says_well_done(reply, sentence, "lenient") is lenient
        if reply is not None:
            assert ref_stops(reply, sentence) is exact


def test_a_reply_quoting_its_prompts_sentence_does_not_stop():
    for sentence, prompt in ((SELF_REFINE_SENTENCE, "self_refine"), (RETRIEVAL_SENTENCE, "image_retrieval")):
        assert sentence in load_prompt(f"guessbench/{prompt}.txt").text  # the sentence the code tests for
        quote = f"You asked: {sentence} So: $Well done!$"
        assert not says_well_done(quote, sentence) and not says_well_done(quote, sentence, "lenient")
    # the other prompt's sentence is no quote of this one
    assert says_well_done(f"{RETRIEVAL_SENTENCE} $Well done!$", SELF_REFINE_SENTENCE)
    with pytest.raises(ValueError):
        says_well_done("$Well done!$", SELF_REFINE_SENTENCE, "loose")  # type: ignore[arg-type]


@pytest.mark.parametrize("judge_reply, guess", [
    ("Answer: cat", " cat"),  # the leading space stays
    ("Answer: Rocking Chair.", " Rocking Chair."),
    ("No Answering", "No Answering"),
    ("Final Answer: cat", " cat"),
    ("Answer: cat\nAnswer: dog", " cat\nAnswer: dog"),  # the first Answer:, the rest kept
    ("answer: cat", "answer: cat"),  # case-sensitive
    ("**Answer:** cat", "** cat"),
])
def test_retrieval_guess(judge_reply, guess):
    assert retrieval_guess(judge_reply) == guess == judge_reply.split("Answer:", 1)[-1]


# ------------------------------------------------------------------ properties

_PIECES = st.sampled_from(["cat", "Cat", "CAT", "ant", "ring", "No Answering", "Answer:", "answer: ", " ", "  ", "\n",
                           "\t", ".", "\u3002", "\uff0e", "\uff61", "s", "rocking", " chair", "\u0130", "\u00df", "-"])
_TEXT = st.lists(_PIECES, max_size=8).map("".join)


@given(answer=_TEXT)
def test_gold_is_the_reference_regex(answer):
    assert reference_gold(answer) == ref_gold(answer)


@given(answer=_TEXT, judge_reply=_TEXT)
def test_matching_is_the_reference_rule(answer, judge_reply):
    assert reply_matches(answer, judge_reply) == ref_correct(answer, judge_reply)


@given(answer=st.text(max_size=12), judge_reply=st.text(max_size=40))
def test_matching_is_the_reference_rule_on_any_text(answer, judge_reply):
    assert reply_matches(answer, judge_reply) == ref_correct(answer, judge_reply)


@given(replies=st.lists(st.sampled_from(["Answer: cat", "Answer: Cat", "Answer: cat.", "No Answering",
                                         "no answering", "Answer: dog", "Answer: rocking chair"]),
                        min_size=1, max_size=5))
def test_vote_is_the_reference_vote(replies):
    v = vote_replies(replies)
    assert v.winner == ref_vote(replies)
    assert v.counts == dict(Counter(r.lower() for r in replies))


_REVIEW = st.lists(st.sampled_from(["$Well done!$", "$Well Done!$", "Well done!", "$", "well done", "Answer: cat",
                                    " ", "\n", SELF_REFINE_SENTENCE, RETRIEVAL_SENTENCE, "If it does, you MUST"]),
                   max_size=6).map("".join)


@given(reply=_REVIEW)
def test_stop_is_the_reference_rule(reply):
    for sentence in (SELF_REFINE_SENTENCE, RETRIEVAL_SENTENCE):
        assert says_well_done(reply, sentence) == ref_stops(reply, sentence)
        if says_well_done(reply, sentence):
            assert says_well_done(reply, sentence, "lenient")  # the option only adds stops
