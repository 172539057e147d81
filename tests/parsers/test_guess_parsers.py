"""GuessBench parsing rules: extraction, matching, the self-refine stop signal, voting."""

from __future__ import annotations

import dataclasses

import pytest

from judgekit.parsers.guess import (
    Extraction,
    Vote,
    is_correct,
    is_well_done,
    normalize_gold,
    parse_extraction,
    vote,
)

# --------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    "gold, expected",
    [
        ("cat.", "cat"),
        ("cat\u3002", "cat"),  # ideographic full stop
        ("cat\uff0e", "cat"),  # full-width full stop
        ("cat\uff61", "cat"),  # half-width ideographic full stop
        ("  cat.  ", "cat"),  # whitespace first, then the period
        ("cat..", "cat."),  # only ONE period goes
        ("Rocking Chair", "Rocking Chair"),  # case and inner spaces kept
        ("cat", "cat"),
    ],
)
def test_normalize_gold(gold, expected):
    assert normalize_gold(gold) == expected


@pytest.mark.parametrize(
    "gold, guess, ok",
    [
        ("cat", "cat", True),
        ("Cat.", "cat", True),  # trailing period and case
        ("cat\u3002", "CAT", True),
        ("rocking chair", "a rockingchair", True),  # spaces removed on both sides
        ("rockingchair", "rocking chair", True),
        ("Glass of Milk.", "a glass of milk", True),
        ("cat", "cats", True),  # gold inside the guess
        ("cats", "cat", False),  # not the reverse
        ("caterpillar", "cat", False),
        ("cat", "the build is a cat on a mat", True),  # containment anywhere
        ("cat", None, False),
        ("", "anything", False),  # empty gold never matches
        (".", "anything", False),  # empty once the period is gone
        ("cat", "", False),
        ("ice\tcream", "ice cream", False),  # only the ASCII space is removed, as the reference
    ],
)
def test_is_correct(gold, guess, ok):
    assert is_correct(gold, guess) is ok


# --------------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    "text, guess",
    [
        ("Answer: cat", "cat"),
        ("Answer: [Rocking Chair]", "rocking chair"),
        ('Answer: "cat"', "cat"),
        ("Answer: \u201cCat\u201d", "cat"),
        ("Answer: 'cat'.", "cat"),
        ("**Answer:** cat", "cat"),
        ("**Answer: Cat.**", "cat"),
        ("Answer: [**A Glass of Milk**].", "a glass of milk"),
        ("answer:   cat  ", "cat"),
        ("ANSWER : cat", "cat"),
        ("Answer: cat\nThe model guessed a cat.", "cat"),  # up to the end of the line
        ("Answer: dog\nAnswer: cat", "cat"),  # the last Answer: wins
        ("Answer: dog. Answer: cat", "cat"),  # also on one line
        ("Final Answer: caterpillar", "caterpillar"),
        ("Answer: cat\nNo Answering", "cat"),  # an Answer: line beats No Answering
        ("Answer: Cat\u3002", "cat"),
        ("Answer: jack-o'-lantern", "jack-o'-lantern"),  # inner quotes kept
    ],
)
def test_extraction_answer(text, guess):
    e = parse_extraction(text)
    assert e == Extraction("answer", guess, text)


@pytest.mark.parametrize(
    "text",
    [
        "No Answering",
        "no answering.",
        "NO ANSWERING",
        "The response gives no guess. No Answering",
        "Answer:",  # nothing after it
        "Answer:   \nsomething on the next line",
        "Answer: []",
        "Answer: **.**",
        "Answer: No Answering",
    ],
)
def test_extraction_no_answer(text):
    e = parse_extraction(text)
    assert e.outcome == "no_answer"
    assert e.guess is None
    assert e.raw == text


@pytest.mark.parametrize("text", ["", "cat", "The model guesses a cat.", "Answering is hard", "I have no answer"])
def test_extraction_unparsed(text):
    e = parse_extraction(text)
    assert e == Extraction("unparsed", None, text)


def test_extraction_none_and_frozen():
    assert parse_extraction(None) == Extraction("unparsed", None, "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        parse_extraction("Answer: cat").guess = "dog"  # type: ignore[misc]


def test_extraction_then_match():
    assert is_correct("Rocking chair.", parse_extraction("Answer: [A Rocking-Chair]").guess) is False  # hyphen stays
    assert is_correct("Rocking chair.", parse_extraction("Answer: [A RockingChair]").guess) is True
    assert is_correct("cat", parse_extraction("No Answering").guess) is False


# --------------------------------------------------------------------------- well done


@pytest.mark.parametrize(
    "text",
    [
        "$Well done!$",
        "$well done!$",
        "  $WELL DONE!$\n",
        "The guess matches the hint.\n$Well done!$",  # the signal inside a longer reply
        "\u201c$Well done!$\u201d",
        "Well done!",
        "well done",
        "**Well done!**",
        '"Well Done!"',
        "`$Well done!$`",
        "$Well done$",
    ],
)
def test_well_done_positive(text):
    assert is_well_done(text) is True


@pytest.mark.parametrize(
    "text",
    [
        "I think the build is well done! The answer is a cat.",
        "Well done! But on reflection the answer is a dog.",
        "The builder did a well done job; my improved guess: a rocking chair.",
        "Answer: cat",
        "",
        None,
    ],
)
def test_well_done_negative(text):
    assert is_well_done(text) is False


# --------------------------------------------------------------------------- voting


def test_vote_majority_two_to_one():
    v = vote(["Cat", "dog", " cat "])
    assert v == Vote("cat", {"cat": 2, "dog": 1}, False)
    assert vote(["Cat", "dog", "cat"], tie_break="last").winner == "cat"  # a majority ignores the rule


def test_vote_whitespace_collapsed():
    v = vote(["rocking  chair", "Rocking Chair", "rocking\tchair"])
    assert v == Vote("rocking chair", {"rocking chair": 3}, False)


def test_vote_all_differ_first_vs_last():
    g = ["cat", "dog", "fox"]
    assert vote(g) == Vote("cat", {"cat": 1, "dog": 1, "fox": 1}, True)
    assert vote(g, tie_break="first").winner == "cat"  # the authors' code
    assert vote(g, tie_break="last") == Vote("fox", {"cat": 1, "dog": 1, "fox": 1}, True)  # the paper


def test_vote_tie_last_is_latest_occurrence():
    g = ["cat", "dog", "dog", "cat"]
    assert vote(g).winner == "cat"
    assert vote(g, tie_break="last").winner == "cat"  # cat appears last
    assert vote(["cat", "dog", "cat", "dog"], tie_break="last").winner == "dog"


def test_vote_none_is_not_a_vote():
    assert vote([None, "dog", None]) == Vote("dog", {"dog": 1}, False)
    assert vote(["cat", None, "dog"]) == Vote("cat", {"cat": 1, "dog": 1}, True)
    assert vote(["cat", None, "dog"], tie_break="last").winner == "dog"
    assert vote([None, "  ", "fox"]).winner == "fox"  # an empty guess is not a vote either


@pytest.mark.parametrize("guesses", [[None, None, None], [], [None, ""]])
def test_vote_no_votes(guesses):
    assert vote(guesses) == Vote(None, {}, False)
    assert vote(guesses, tie_break="last").winner is None


def test_vote_bad_tie_break():
    with pytest.raises(ValueError):
        vote(["cat"], tie_break="random")  # type: ignore[arg-type]
