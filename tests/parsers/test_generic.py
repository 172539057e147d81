"""The generic benchmarks' parsers (judgekit.parsers.generic): fixed cases, the references' rules
restated in this test's own words, and property tests hunting for replies that break a rule."""

from __future__ import annotations

import ast
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from judgekit.parsers.generic import (
    ARENA_VERDICTS,
    SCORE_PARSERS,
    VERDICT_PARSERS,
    ParserOptions,
    Reading,
    scale_to_verdict,
    score_parser,
    verdict_parser,
)

FAST = settings(max_examples=150, deadline=None)

CANONICAL = {"A>>B": -2, "A>B": -1, "A=B": 0, "B>A": 1, "B>>A": 2}


def mirror(verdict: str) -> str:
    """The same judgment written from the other side: ``A>B`` -> ``B<A``."""
    return "".join({">": "<", "<": ">"}.get(c, c) for c in reversed(verdict))


# --------------------------------------------------------------------------- the references, restated

def arena_reference(judgment: str) -> int | None:
    """arena-hard-auto gen_judgment.get_score with regex_pattern \\[\\[([AB<>=]+)\\]\\], then the
    label's score (show_result's table); an unknown label is no score."""
    matches = [m for m in re.findall(r"\[\[([AB<>=]+)\]\]", judgment) if m != ""]
    if len(set(matches)) != 1:
        return None
    return {**CANONICAL, **{mirror(k): v for k, v in CANONICAL.items()}}.get(matches[0])


def mt_pair_reference(judgment: str) -> int | None:
    """FastChat llm_judge common.run_judge_pair, pair-v2's [[A]]/[[B]]/[[C]] branch."""
    if "[[A]]" in judgment:
        return -2
    if "[[B]]" in judgment:
        return 2
    if "[[C]]" in judgment:
        return 0
    return None


def mt_single_reference(judgment: str) -> float | None:
    """FastChat llm_judge common.run_judge_single: one_score_pattern, then its backup; -1 when none."""
    m = re.search(r"\[\[(\d+\.?\d*)\]\]", judgment) or re.search(r"\[(\d+\.?\d*)\]", judgment)
    return ast.literal_eval(m.groups()[0]) if m else -1


# --------------------------------------------------------------------------- fixed cases

ARENA_CASES = [
    ("My final verdict is tie: [[A=B]]", 0),
    ("My final verdict is: [[B>>A]]", 2),
    ("[[A>>B]]", -2),
    ("I think [[ B > A ]].", 1),  # inner spaces ignored
    ("First [[A>B]], and again: [[A>B]]", -1),  # the same verdict twice agrees
    ("[[A>B]] ... in other words [[B<A]]", -1),  # mirrored spellings of one judgment agree
    ("[[A>B]] but then [[B>A]]", None),  # two different verdicts
    ("[[A]] and [[A>B]]", None),  # Arena-Hard's pattern reads [[A]] too: ambiguous
    ("[[A>>>B]]", None),
    ("[[C]]", None),
    ("no verdict at all", None),
    ("", None),
    (None, None),
    ("[[]] [[B>A]]", 1),  # an empty pair is not a match
]


@pytest.mark.parametrize("text, score", ARENA_CASES)
def test_arena_hard_cases(text, score):
    got = verdict_parser("arena_hard")(text)
    assert (got.value if got else None) == score


def test_arena_hard_reading_is_the_last_verdict():
    text = "[[A>B]] so, finally: [[B<A]]."
    got = verdict_parser("arena_hard")(text)
    assert got == Reading(-1.0, "[[B<A]]", (21, 28))
    assert text[slice(*got.span)] == got.token


@pytest.mark.parametrize("text, score, token", [
    ("Verdict: [[A]]", -2, "[[A]]"),
    ("[[B]]", 2, "[[B]]"),
    ("It is a tie [[C]]", 0, "[[C]]"),
    ("[[C]] ... [[B]] ... [[A]]", -2, "[[A]]"),  # [[A]] is looked for first, anywhere
    ("[[C]] then [[B]]", 2, "[[B]]"),
    ("[[a]] [[ A ]] [[tie]]", None, None),  # exact, case-sensitive
    (None, None, None),
])
def test_mt_bench_cases(text, score, token):
    got = verdict_parser("mt_bench")(text)
    assert (got.value if got else None) == score
    if got:
        assert got.token == token and text[slice(*got.span)] == token


@pytest.mark.parametrize("text, score", [
    ("[[1]]", -2), ("[[2]]", -1), ("[[3]]", 0), ("[[4]]", 1), ("[[5]]", 2),
    ("[[1.5]]", -2), ("[[2.5]]", -1), ("[[3.5]]", 1), ("[[4.5]]", 2),  # half away from zero
    ("[[2]] on reflection [[4]]", 1),  # the last [[N]]
    ("Rating: 5", 2), ("rating: **2**", -1), ("**Rating:** 4", 1), ("a rating 5 film", None),
    ("Rating: 5\n[[1]]", -2),  # [[N]] before Rating: N
    ("[[0]]", None), ("[[6]]", None), ("[[-1]]", None),  # off the scale
    ("[[three]]", None), ("", None),
])
def test_scale_cases(text, score):
    got = verdict_parser("scale")(text)
    assert (got.value if got else None) == score


def test_scale_other_range():
    parse = verdict_parser("scale", scale=(0, 10))
    assert [parse(f"[[{n}]]").value for n in (0, 1, 2, 5, 8, 9, 10)] == [-2, -2, -1, 0, 1, 2, 2]
    assert parse("[[11]]") is None


@pytest.mark.parametrize("text, score", [
    ("Winner: A", -2), ("Winner: B", 2), ("Winner: tie", 0), ("Winner: C", 0),
    ("Winner: A>B", -1), ("Winner: b >> a", 2),
    ("Winner: A\nWinner: B", 2),  # the last match wins
    ("Winner: Z", None), ("nothing", None),
])
def test_regex_verdict_cases(text, score):
    got = verdict_parser("regex", regex=r"Winner: (?P<verdict>[^\n]+)")(text)
    assert (got.value if got else None) == score


def test_regex_verdict_values_and_score_group():
    parse = verdict_parser("regex", regex=r"choice=(?P<verdict>\w+)", verdict_values={"first": -2, "second": 2})
    assert parse("choice=second").value == 2 and parse("choice=A") is None
    parse = verdict_parser("regex", regex=r"pref (?P<score>\d+)", scale=(1, 7))
    assert [parse(f"pref {n}").value for n in (1, 4, 7)] == [-2, 0, 2] and parse("pref 8") is None
    got = parse("x pref 2 y")
    assert got.token == "2" and got.span == (7, 8)


@pytest.mark.parametrize("text, score", [
    ("Rating: [[7]]", 7), ("[[8.5]]", 8.5), ("[[10]]", 10), ("Rating: [[7.]]", 7),
    ("[[3]] ... [[9]]", 3),  # MT-Bench takes the first
    ("Rating: [6]", 6), ("[4] then [[9]]", 9),  # [[N]] is looked for first
    ("[[11]]", None), ("[[0]]", None), ("Rating: 7", None), ("[[-3]]", None), (None, None),
])
def test_rating_cases(text, score):
    got = score_parser("rating")(text)
    assert (got.value if got else None) == score


@pytest.mark.parametrize("text, score", [
    ("Overall: 7", 7), ("I'd say 6.5.", 6.5), ("Score: 7/10", 7), ("7 / 10", 7), ("8 out of 10", 8),
    ("3 strengths, 2 weaknesses; score 9", 9), ("score 12", None), ("score 0", None),
    ("version v2", None), ("no numbers", None), ("", None),
])
def test_last_number_cases(text, score):
    got = score_parser("last_number")(text)
    assert (got.value if got else None) == score


def test_regex_score():
    parse = score_parser("regex", regex=r"SCORE=(?P<score>\S+)", scale=(0, 100))
    assert parse("SCORE=40 SCORE=85").value == 85
    assert parse("SCORE=140") is None and parse("SCORE=high") is None


@pytest.mark.parametrize("call, message", [
    (lambda: verdict_parser("nope"), "unknown verdict parser"),
    (lambda: score_parser("arena_hard"), "unknown score parser"),
    (lambda: verdict_parser("regex"), "needs options.regex"),
    (lambda: verdict_parser("regex", regex="(unclosed"), "does not compile"),
    (lambda: verdict_parser("regex", regex=r"(\d)"), "no named group"),
    (lambda: score_parser("regex", regex=r"(?P<verdict>\w)"), "no named group (?P<score>"),
    (lambda: verdict_parser("scale", scale=(5, 1)), "low end must be below"),
    (lambda: verdict_parser("regex", regex="(?P<verdict>x)", verdict_values={"x": 3}), "-2..2"),
])
def test_bad_options(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_parser_options_model():
    o = ParserOptions.model_validate({"scale": [1, 7], "regex": r"(?P<score>\d)", "verdict_values": {"x": 1}})
    assert o.scale == (1.0, 7.0)
    for bad in ({"scale": [3, 3]}, {"regex": "("}, {"verdict_values": {"x": 5}}, {"scale": ["1", 5]},
                {"other": 1}):
        with pytest.raises(ValidationError):
            ParserOptions.model_validate(bad)
    assert set(VERDICT_PARSERS) == {"arena_hard", "mt_bench", "scale", "regex"}
    assert set(SCORE_PARSERS) == {"rating", "last_number", "regex"}


# --------------------------------------------------------------------------- properties

# replies assembled from pieces a judge writes, verdict-like tokens among them
_PIECES = st.sampled_from([
    *(f"[[{v}]]" for v in ARENA_VERDICTS), "[[A]]", "[[B]]", "[[C]]", "[[AB]]", "[[A>>>B]]", "[[ B > A ]]",
    "[[3]]", "[[7.5]]", "[1]", "Rating: 4", "7/10", "12", "0", " ", "\n", "My final verdict is: ", "[[", "]]",
])
REPLIES = st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=8).map("".join)


@FAST
@given(reply=REPLIES, scale=st.sampled_from([(1, 5), (1, 10), (0, 1), (-3, 3)]))
def test_every_verdict_is_an_integer_in_range_and_its_span_holds_its_token(reply, scale):
    parsers = [verdict_parser(n, scale=scale) for n in ("arena_hard", "mt_bench", "scale")]
    parsers.append(verdict_parser("regex", regex=r"(?P<verdict>[AB<>=]+)|\[\[(?P<score>[^\]]*)\]\]", scale=scale))
    for parse in parsers:
        got = parse(reply)
        if got is not None:
            assert got.value in (-2, -1, 0, 1, 2)
            assert reply[slice(*got.span)] == got.token


@FAST
@given(reply=REPLIES)
def test_arena_hard_agrees_with_the_reference_on_canonical_spellings(reply):
    # without inner spaces and mirrored spellings the reference's rule and ours coincide
    if " " in "".join(re.findall(r"\[\[([AB<>=\s]+)\]\]", reply)) or any(
        f"[[{mirror(v)}]]" in reply for v in CANONICAL if mirror(v) != v
    ):
        return
    got = verdict_parser("arena_hard")(reply)
    assert (got.value if got else None) == arena_reference(reply)


@FAST
@given(reply=REPLIES)
def test_mt_bench_pair_and_single_agree_with_the_reference(reply):
    got = verdict_parser("mt_bench")(reply)
    assert (got.value if got else None) == mt_pair_reference(reply)
    ref = mt_single_reference(reply)
    got = score_parser("rating")(reply)
    assert (got.value if got else None) == (ref if 1 <= ref <= 10 else None)


@FAST
@given(verdict=st.sampled_from(sorted(ARENA_VERDICTS)), pad=st.lists(st.sampled_from(["", " ", "  "]), min_size=6,
                                                                       max_size=6), before=st.text(max_size=20))
def test_mirrored_and_spaced_spellings_agree(verdict, pad, before):
    before = before.replace("[", "(").replace("]", ")")
    spaced = "".join(p + c for p, c in zip(pad, verdict, strict=False)) + pad[-1]
    parse = verdict_parser("arena_hard")
    one = parse(f"{before}[[{verdict}]]")
    assert one.value == ARENA_VERDICTS[verdict]
    assert parse(f"{before}[[{mirror(verdict)}]]").value == one.value
    assert parse(f"{before}[[{spaced}]] and [[{mirror(verdict)}]]").value == one.value


@FAST
@given(a=st.sampled_from(sorted(ARENA_VERDICTS)), b=st.sampled_from(sorted(ARENA_VERDICTS)), mid=st.text(max_size=30))
def test_two_different_arena_verdicts_are_no_verdict(a, b, mid):
    mid = mid.replace("[", "(").replace("]", ")")
    got = verdict_parser("arena_hard")(f"[[{a}]]{mid}[[{b}]]")
    if ARENA_VERDICTS[a] == ARENA_VERDICTS[b]:
        assert got.value == ARENA_VERDICTS[a]
    else:
        assert got is None


_NUMBER_TEXT = st.decimals(min_value=-20, max_value=20, places=2, allow_nan=False, allow_infinity=False).map(
    lambda d: format(d.normalize(), "f"))


@FAST
@given(x=_NUMBER_TEXT, y=_NUMBER_TEXT, scale=st.sampled_from([(1, 5), (1, 10), (0, 1), (-3, 3), (1, 7)]))
def test_scale_mapping_is_monotone_symmetric_and_bounded(x, y, scale):
    parse = verdict_parser("scale", scale=scale)
    low, high = Fraction(scale[0]), Fraction(scale[1])
    rx, ry = parse(f"[[{x}]]"), parse(f"[[{y}]]")
    for text, r in ((x, rx), (y, ry)):
        assert (r is None) == (not low <= Fraction(text) <= high)  # off the scale: no verdict
    if rx and ry and Fraction(x) <= Fraction(y):
        assert rx.value <= ry.value
    if rx:
        assert scale_to_verdict(low + high - Fraction(x), scale) == -rx.value  # the scale's mirror
    assert verdict_parser("scale", scale=scale)(f"[[{scale[0]}]]").value == -2
    assert verdict_parser("scale", scale=scale)(f"[[{scale[1]}]]").value == 2


@FAST
@given(values=st.lists(st.sampled_from(["A", "B", "C", "tie", "A>B", "B>>A", "zzz"]), min_size=1, max_size=5),
       sep=st.sampled_from(["\n", " ... ", "; "]))
def test_regex_last_match_wins(values, sep):
    reply = sep.join(f"<v>{v}</v>" for v in values)
    got = verdict_parser("regex", regex=r"<v>(?P<verdict>[^<]*)</v>")(reply)
    table = {**ARENA_VERDICTS, "A": -2, "B": 2, "C": 0, "TIE": 0}
    last = values[-1].upper()
    assert (got.value if got else None) == table.get(last)
    if got:
        assert got.span[0] == reply.rindex("<v>") + 3


@FAST
@given(n=_NUMBER_TEXT, scale=st.sampled_from([(1, 10), (0, 5), (1, 100)]), noise=st.sampled_from(["", "Overall, ",
                                                                                                  "Rating: "]))
def test_a_score_off_the_scale_is_none(n, scale, noise):
    on = Fraction(scale[0]) <= Fraction(n) <= Fraction(scale[1])
    readings = [
        score_parser("last_number", scale=scale)(f"{noise}{n}"),
        score_parser("regex", regex=r"S=(?P<score>\S+)", scale=scale)(f"S={n}"),
    ]
    if not n.startswith("-"):  # MT-Bench's pattern has no sign
        readings.append(score_parser("rating", scale=scale)(f"{noise}[[{n}]]"))
    for got in readings:
        if on:
            assert got is not None and Fraction(str(got.value)) == Fraction(n)
        else:
            assert got is None


@FAST
@given(reply=REPLIES, scale=st.sampled_from([(1, 10), (0, 5)]))
def test_every_score_lies_on_the_scale(reply, scale):
    for name in ("rating", "last_number"):
        got = score_parser(name, scale=scale)(reply)
        if got is not None:
            assert scale[0] <= got.value <= scale[1]
            assert reply[slice(*got.span)] == got.token
