"""A GuessBench response can never forge the extractor's reading.

The extractor is modelled as one that introduces and quotes the response (which may itself hold
``Answer: ...`` or ``No Answering``, disguised) before its own verdict.  Its prompt gets the
response unchanged (the reference does not defuse, and ``Answer:`` is the ordinary way to answer);
instead :func:`parse_extraction`, given the response, sets aside markers that only quote it.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgekit.parsers.guess import parse_extraction

from forgery_cases import CI, candidate_texts, quote, quote_styles

GUESSES = st.sampled_from(["ring", "bridge", "a rocking chair", "cat", "ant", "glass of milk", "no answer"])
CLOSING = "That is my reading of it."  # the extractor's own words (never in a generated response)


def _reply(response: str, style: str, verdict: str) -> str:
    return f"The model's response reads:\n{quote(response, style)}\n{verdict}"


@CI
@given(response=candidate_texts(), style=quote_styles, guess=GUESSES)
def test_a_quoted_response_never_overrides_the_extracted_answer(response, style, guess):
    got = parse_extraction(_reply(response, style, f"Answer: {guess}"), response=response)
    assert (got.outcome, got.guess) == ("answer", guess)
    # the verdict first, the quote after
    got = parse_extraction(f"Answer: {guess}\nThe response said:\n{quote(response, style)}\n{CLOSING}",
                           response=response)
    assert (got.outcome, got.guess) == ("answer", guess)


@CI
@given(response=candidate_texts(), style=quote_styles)
def test_a_quoted_response_never_turns_no_answering_or_silence_into_an_answer(response, style):
    assert parse_extraction(_reply(response, style, "No Answering"), response=response).outcome == "no_answer"
    assert parse_extraction(_reply(response, style, CLOSING), response=response).outcome == "unparsed"


GENUINE = st.sampled_from(["Answer: {g}", "**Answer:** {g}", "Answer: {g}.", "Answer: [{g}]", "ANSWER : {g}",
                            "Final answer: {g}", "No Answering", "Answer: No Answering", "I see no guess."])


@CI
@given(response=candidate_texts(), shape=GENUINE, guess=st.sampled_from(["trebuchet", "lighthouse", "sunflower"]))
def test_a_genuine_reply_reads_as_it_always_did(response, shape, guess):
    # the extractor's own reply, whatever the response says (its guess is not in the response)
    reply = shape.format(g=guess)
    assert parse_extraction(reply, response=response) == parse_extraction(reply)


@pytest.mark.parametrize("reply, expected", [
    ("Answer: ring", ("answer", "ring")),  # repeating the response's own line is answering
    ("Answer: ring\nThe model states it plainly.", ("answer", "ring")),  # ... even with a comment after
    ("The model's guess:\nAnswer: ring", ("answer", "ring")),  # ... or an introduction before
    ("The response says:\n> Answer: ring\nNo Answering", ("no_answer", None)),  # was: ring
    ("The response says 'Answer: ring'. I cannot tell what it means.", ("unparsed", None)),  # was: ring'. i cannot...
    ("Answer: bridge\nIt wrote 'Answer: ring' earlier.", ("answer", "bridge")),  # was: ring' earlier
    ("Answer: rings", ("answer", "rings")),  # not the response's text
    ("Answer: bridge, not its 'Answer: ring'", ("answer", "bridge, not its")),  # was: bridge, not its 'answer: ring
    ("The response: Answer: ring", ("answer", "ring")),
])
def test_quoted_markers(reply, expected):
    response = "I think it is a ring.\n\nAnswer: ring"
    got = parse_extraction(reply, response=response)
    assert (got.outcome, got.guess) == expected


def test_a_disguised_quote_is_still_a_quote():
    response = "It looks round.\nA\u200bnswer: \uff52\uff49\uff4e\uff47"
    reply = "It says: ANSWER: RING, but that is only the shape.\nNo Answering"
    assert parse_extraction(reply).guess is not None  # read as an answer without the response
    assert parse_extraction(reply, response=response).outcome == "no_answer"
