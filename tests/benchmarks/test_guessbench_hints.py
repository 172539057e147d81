"""GuessBench hints: reveal counts, Hint_3 keeping Hint_2's letters, seeding, parsing, wording."""

import pytest

from judgekit.benchmarks.guessbench.hints import (
    HEADER,
    format_hint,
    generate_hints,
    letter_count,
    ordinal,
    parse_hint,
    reveal_counts,
)

ANSWERS = ["caterpillar", "Glass of Milk", "apple", "rocking chair", "fish tank", "a", "ice cream cone"]


def revealed(hint: str) -> dict[tuple[int, int], str]:
    info = parse_hint(hint)
    assert info is not None
    return info.revealed


@pytest.mark.parametrize("seed", range(10))
def test_caterpillar_reveals_0_2_3_letters(seed):
    assert reveal_counts("caterpillar") == (0, 2, 3)
    assert [len(revealed(h)) for h in generate_hints("caterpillar", seed)] == [0, 2, 3]


@pytest.mark.parametrize("seed", range(10))
def test_glass_of_milk_has_11_letters_and_reveals_0_2_3(seed):
    assert letter_count("Glass of Milk") == 11
    assert [len(revealed(h)) for h in generate_hints("Glass of Milk", seed)] == [0, 2, 3]


@pytest.mark.parametrize("answer,counts", [("apple", (0, 1, 2)), ("fish tank", (0, 1, 2)),
                                           ("watermelon", (0, 2, 3)), ("a", (0, 1, 1)),
                                           ("rocking chair", (0, 2, 3)), ("abcdefghijklmnopq", (0, 3, 5))])
def test_reveal_counts_are_ceil_n_over_8_and_4(answer, counts):
    assert reveal_counts(answer) == counts


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("seed", range(8))
def test_hint3_keeps_hint2s_letters_and_letters_are_the_answers(answer, seed):
    h1, h2, h3 = generate_hints(answer, seed)
    r1, r2, r3 = revealed(h1), revealed(h2), revealed(h3)
    assert r1 == {}
    assert r2.items() <= r3.items()
    words = answer.lower().split()
    assert all(words[wi][li] == ch for (wi, li), ch in r3.items())
    assert [len(r) for r in (r1, r2, r3)] == list(reveal_counts(answer))


def test_same_seed_same_hints_and_different_seeds_usually_differ():
    assert generate_hints("caterpillar", 7) == generate_hints("caterpillar", 7)
    third_hints = {generate_hints("caterpillar", seed)[2] for seed in range(20)}
    assert len(third_hints) > 5
    assert generate_hints("caterpillar", 1)[0] == generate_hints("caterpillar", 2)[0]  # Hint_1 reveals nothing


@pytest.mark.parametrize("answer,positions", [
    ("caterpillar", {(0, 0), (0, 4), (0, 10)}),
    ("Glass of Milk", {(0, 1), (0, 4), (2, 3)}),
    ("rocking chair", {(1, 1), (1, 2)}),
    ("fish tank", set()),
    ("a b c d e f g h i j k l", {(10, 0), (11, 0), (0, 0)}),  # 11th and 12th words
])
def test_parse_hint_round_trips_format_hint(answer, positions):
    info = parse_hint(format_hint(answer, positions))
    assert info is not None
    assert info.word_lengths == tuple(len(w) for w in answer.split())
    words = answer.lower().split()
    assert info.revealed == {p: words[p[0]][p[1]] for p in positions}
    assert info.fits(answer)


def test_parse_hint_reads_the_last_hint_and_none_without_one():
    text = format_hint("apple", {(0, 0)}) + "\n\n" + format_hint("rocking chair", {(1, 1)})
    info = parse_hint(text)
    assert info is not None and info.word_lengths == (7, 5) and info.revealed == {(1, 1): "h"}
    assert parse_hint("no hint here") is None


@pytest.mark.parametrize("n,text", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                    (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (101, "101st"),
                                    (111, "111th")])
def test_ordinals(n, text):
    assert ordinal(n) == text


def test_one_word_sentence_form():
    hint = format_hint("caterpillar", {(0, 4)})
    assert "The 5th letter is r." in hint
    assert "word's" not in hint
    assert "This means the answer consists of 1 word. The 1st word has 11 letters." in hint


def test_multi_word_sentence_and_symbolic_lines():
    hint = format_hint("Glass of Milk", {(0, 1), (0, 4), (2, 3)})
    header, top, blanks, sentence = hint.split("\n")
    assert header == HEADER + " "
    assert blanks == "_ _ _ _ _   _ _   _ _ _ _"
    # each revealed letter (lower-cased) sits right above its blank
    assert top == "  l     s               k"
    assert {i for i, ch in enumerate(top) if ch != " "} <= {i for i, ch in enumerate(blanks) if ch == "_"}
    assert sentence == ("This means the answer consists of 3 words. The 1st word has 5 letters. The 2nd word has "
                        "2 letters. The 3rd word has 4 letters. The 1st word's 2nd letter is l. The 1st word's "
                        "5th letter is s. The 3rd word's 4th letter is k. ")


def test_hint1_has_no_letter_line():
    h1 = generate_hints("rocking chair", 3)[0]
    assert h1.split("\n") == [HEADER + " ", "_ _ _ _ _ _ _   _ _ _ _ _", "This means the answer consists of 2 words. "
                                                                        "The 1st word has 7 letters. The 2nd word "
                                                                        "has 5 letters. "]


# the released files, byte for byte (Zivenzhu/GuessBench data/1 "cowboy hat", data/10 "rocking chair",
# data/107, data/113: their answers' word lengths and revealed letters)
RELEASED = [
    ("cowboy hat", {(0, 1), (0, 4), (1, 0)},
     "The answer format is as follows: \n  o     o     h    \n_ _ _ _ _ _   _ _ _\nThis means the answer consists "
     "of 2 words. The 1st word has 6 letters. The 2nd word has 3 letters. The 1st word's 2nd letter is o. The 1st "
     "word's 5th letter is o. The 2nd word's 1st letter is h. "),
    ("rocking chair", set(),
     "The answer format is as follows: \n_ _ _ _ _ _ _   _ _ _ _ _\nThis means the answer consists of 2 words. The "
     "1st word has 7 letters. The 2nd word has 5 letters. "),
    ("rocking chair", {(1, 0), (1, 1), (1, 2)},
     "The answer format is as follows: \n                c h a    \n_ _ _ _ _ _ _   _ _ _ _ _\nThis means the answer "
     "consists of 2 words. The 1st word has 7 letters. The 2nd word has 5 letters. The 2nd word's 1st letter is c. "
     "The 2nd word's 2nd letter is h. The 2nd word's 3rd letter is a. "),
    ("tot cxxxxx", {(0, 0), (0, 2), (1, 0)},
     "The answer format is as follows: \nt   t   c          \n_ _ _   _ _ _ _ _ _\nThis means the answer consists of "
     "2 words. The 1st word has 3 letters. The 2nd word has 6 letters. The 1st word's 1st letter is t. The 1st "
     "word's 3rd letter is t. The 2nd word's 1st letter is c. "),
    ("xxxp xxxt", {(0, 3), (1, 3)},
     "The answer format is as follows: \n      p         t\n_ _ _ _   _ _ _ _\nThis means the answer consists of 2 "
     "words. The 1st word has 4 letters. The 2nd word has 4 letters. The 1st word's 4th letter is p. The 2nd "
     "word's 4th letter is t. "),
]


@pytest.mark.parametrize("answer, positions, released", RELEASED)
def test_format_is_the_released_files(answer, positions, released):
    assert format_hint(answer, positions) == released


def test_empty_answer_is_an_error():
    with pytest.raises(ValueError):
        generate_hints("   ", 0)
