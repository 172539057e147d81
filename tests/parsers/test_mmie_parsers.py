"""MMIE parsers (score, integrated answers, flattening), with parity tests against the reference
scorer's rules (Lillianwei-h/MMIE ``main.py`` ``find_score`` and its 0..6 check, ``dataset.py``
``get_dataset``), restated here by hand.  The prompt texts: tests/benchmarks/test_mmie_scorer_request.py."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.parsers.mmie import (
    Flattened,
    ScoreParse,
    flatten_as_reference,
    flatten_for_judge,
    gt_reference_text,
    gt_text,
    parse_score,
    percent,
    reference_skips,
    split_integrated,
)
from judgekit.resources import load_prompt

PROPERTY = settings(max_examples=400, deadline=None, derandomize=True, database=None)


@pytest.mark.parametrize("text, score, outcome, raw", [
    ("### Feedback\nGood.\n### Score\n5", 5, "ok", "5"),
    ("### Score: 4.4", 4, "ok", "4.4"),
    ("### Score\n\nThe score is 6/6", 6, "ok", "6"),
    ("### Score\n0", 0, "ok", "0"),
    ("### Score\n4.5", 4, "ok", "4.5"),       # Python's round: half to even, as the reference
    ("### Score\n5.5", 6, "ok", "5.5"),
    ("### Score\n6.5", 6, "ok", "6.5"),
    ("### Score\n**3** out of 6", 3, "ok", "3"),
    ("### Score\nI would give it\n\nabout 2 points", 2, "ok", "2"),
    ("Score: 5", None, "missing", None),
    ("## Score\n5", None, "missing", None),
    ("", None, "missing", None),
    (None, None, "missing", None),
    ("### score\n5", None, "missing", None),  # the reference's search is case-sensitive
    ("### Score\n7", None, "out_of_range", "7"),
    ("### Score\n-1", None, "out_of_range", "-1"),
    ("### Score\n6.6", None, "out_of_range", "6.6"),
    ("### Score\n10/10", None, "out_of_range", "10"),
    ("### Score\nexcellent", None, "not_a_number", None),
    ("### Score\n", None, "not_a_number", None),
])
def test_parse_score(text, score, outcome, raw):
    p = parse_score(text)
    assert p == ScoreParse(score, outcome, raw)
    assert p.ok == (outcome == "ok")


def test_parse_score_takes_the_first_score_header_and_the_first_number_after_it():
    assert parse_score("Answer 3 was fine.\n### Score\n2\n### Score\n5").score == 2
    # numbers before the header do not count
    assert parse_score("I counted 9 errors.\n### Score\n1").score == 1
    # the first header has no number before the second one: the number after it is taken
    assert parse_score("### Score\nsee below\n### Score\n4").score == 4


def _reference_score(text: str) -> int | None:
    """The reference's reading, restated: after the first ``### Score``, the first number (an
    optional minus directly before digits, then an optional ``.digits`` part), rounded by Python's
    ``round``; kept only when 0..6.  None when no valid score."""
    head = text.find("### Score")
    if head < 0:
        return None
    rest = text[head + len("### Score"):]
    for i, ch in enumerate(rest):
        if ch.isdigit() and ch.isascii() or (ch == "-" and rest[i + 1:i + 2].isdigit() and rest[i + 1].isascii()):
            number = re.match(r"-?[0-9]+(?:\.[0-9]+)?", rest[i:]).group(0)
            value = round(float(number))
            return value if 0 <= value <= 6 else None
    return None


_REPLY_PIECES = st.sampled_from(["### Score", "### score", "## Score", "Score:", "\n", " ", "-", ".", "4", "5.5",
                                 "6.6", "7", "0", "10", "-1", "-0.4", "4.5", "x", "good", "/6", "**", "###"])


@PROPERTY
@given(st.lists(_REPLY_PIECES, max_size=14).map("".join))
def test_parse_score_parity_with_the_reference(reply):
    want = _reference_score(reply)
    got = parse_score(reply)
    assert got.score == want and got.ok == (want is not None)


def test_percent():
    assert percent(6) == 100.0 and percent(0) == 0.0 and percent(3) == 50.0
    assert percent(4) == pytest.approx(66.6667, abs=1e-4)


def test_split_integrated():
    text = ("First, the kite rises.\n<image>a red kite in a blue sky</image>\nThen it falls.\n"
            "<IMAGE>\n  a green tree\n  with a kite in it\n</Image>\n\n< image >   </ image >\nThe end.")
    assert split_integrated(text) == [
        ("text", "First, the kite rises."),
        ("image", "a red kite in a blue sky"),
        ("text", "Then it falls."),
        ("image", "a green tree\n  with a kite in it"),
        ("text", "The end."),
    ]


def test_split_integrated_edge_cases():
    assert split_integrated("") == []
    assert split_integrated("just text  ") == [("text", "just text")]
    assert split_integrated("<image>only a picture</image>") == [("image", "only a picture")]
    # an unclosed description runs to the end
    assert split_integrated("Intro\n<image>a boat at sea\nat dusk") == [("text", "Intro"),
                                                                      ("image", "a boat at sea\nat dusk")]
    # back to back images, and a stray closing tag in the text is dropped
    assert split_integrated("<image>a</image><image>b</image> tail </image>") == [
        ("image", "a"), ("image", "b"), ("text", "tail")]


@dataclass(frozen=True)
class Seg:
    kind: str
    text: str | None = None
    name: str = ""


def _t(s: str) -> Seg:
    return Seg("text", s)


def _i(name: str) -> Seg:
    return Seg("image", None, name)


def test_flatten_as_the_reference_without_a_cap():
    q = [_t("Question?"), _i("q0"), _t("More."), _i("q1")]
    a = [_t("Answer."), _i("a0"), _t("Done.")]
    f = flatten_for_judge(q, a, image_cap=None)
    assert isinstance(f, Flattened)
    assert f.question == "Question?\nImage-0: <image>\nMore.\nImage-1: <image>\n"
    assert f.answer == "Answer.\nImage-2: <image>\nDone.\n"
    assert [s.name for s in f.images] == ["q0", "q1", "a0"]
    assert (f.images_attached, f.images_dropped) == (3, 0)


def test_flatten_with_a_cap_keeps_every_text_and_says_what_was_dropped():
    q = [_t("Q"), _i("q0"), _i("q1"), _i("q2")]
    a = [_i("a0"), _t("middle text"), _i("a1"), _i("a2"), _t("last text")]
    f = flatten_for_judge(q, a, image_cap=4)
    assert f.question == "Q\nImage-0: <image>\nImage-1: <image>\nImage-2: <image>\n"
    assert f.answer == ("Image-3: <image>\nmiddle text\n"
                        "Image-4: [not shown: image cap of 4 reached]\n"
                        "Image-5: [not shown: image cap of 4 reached]\nlast text\n")
    assert [s.name for s in f.images] == ["q0", "q1", "q2", "a0"]
    assert (f.images_attached, f.images_dropped) == (4, 2)
    f0 = flatten_for_judge(q, a, image_cap=0)
    assert f0.images == () and (f0.images_attached, f0.images_dropped) == (0, 6)
    assert "last text" in f0.answer and "Image-0: [not shown" in f0.question


def test_flatten_rejects_bad_input():
    with pytest.raises(ValueError):
        flatten_for_judge([_t("q")], [], image_cap=-1)
    with pytest.raises(ValueError):
        flatten_for_judge([Seg("audio")], [], image_cap=None)


def test_flatten_accepts_loader_segments():
    from judgekit.benchmarks.mmie.data import Segment

    f = flatten_for_judge([Segment.of_text("hi")], [Segment.of_text("")], image_cap=None)
    assert (f.question, f.answer) == ("hi\n", "\n")


def test_gt_text():
    assert gt_text(None) == "" and gt_text([]) == ""
    assert gt_text([_t("10 cm"), _i("x"), _t("24 cm^2")]) == "10 cm\n24 cm^2"
    # the reference: str.format of gt_answer[0]['text']
    assert gt_reference_text("10 cm") == "10 cm" and gt_reference_text(None) == "None"
    assert gt_reference_text("") == ""


# --------------------------------------------------------------------------- the reference's cut


def test_flatten_as_the_reference_reads_until_3_images():
    q = [_t("Q"), _i("q0"), _t("More."), _i("q1")]
    a = [_t("Answer."), _i("a0"), _t("Done."), _i("a1")]
    f = flatten_as_reference(q, a)
    assert f.question == "Q\nImage-0: <image>\nMore.\nImage-1: <image>\n"
    # the third image ends the reading: "Done." and the fourth image are not read
    assert f.answer == "Answer.\nImage-2: <image>\n"
    assert [s.name for s in f.images] == ["q0", "q1", "a0"]
    assert (f.images_attached, f.images_dropped, f.texts_dropped) == (3, 1, 1)


@pytest.mark.parametrize("q_images, answer, shown, dropped", [
    # the answer's opening text is read even when the question already has 3 images
    (3, [_t("A"), _i("a0"), _t("B")], "A\n", (1, 1)),
    (4, [_t("A"), _t("B")], "A\n", (0, 1)),
    (3, [_i("a0"), _t("B")], "", (1, 1)),
    # fewer: images are read until the third, then nothing more
    (0, [_i("a0"), _i("a1"), _i("a2"), _t("C")],
     "Image-0: <image>\nImage-1: <image>\nImage-2: <image>\n", (0, 1)),
    (2, [_t("A"), _t("B"), _i("a0"), _t("C"), _i("a1")], "A\nB\nImage-2: <image>\n", (1, 1)),
    (1, [_t("A"), _i("a0"), _t("")], "A\nImage-1: <image>\n\n", (0, 0)),
    (0, [], "", (0, 0)),
    # an empty first entry (a text segment without text) is the answer's opening: with 3
    # images in the question the reference reads nothing more (issue 25)
    (3, [Seg("text", None), _t("B"), _i("a0")], "", (1, 1)),
    (4, [Seg("text", None), _t("B")], "", (0, 1)),
    (2, [Seg("text", None), _t("B"), _i("a0"), _t("C")], "B\nImage-2: <image>\n", (0, 1)),
])
def test_flatten_as_the_reference_edge_cases(q_images, answer, shown, dropped):
    f = flatten_as_reference([_i(f"q{k}") for k in range(q_images)], answer)
    assert f.answer == shown and (f.images_dropped, f.texts_dropped) == dropped


def test_reference_skips_rows_whose_question_has_more_than_4_images():
    assert not reference_skips([_i("q")] * 4 + [_t("x")])
    assert reference_skips([_i("q")] * 5)
    assert not reference_skips([])


def _reference_row(question: list[dict], answer: list[dict] | str) -> tuple[str, str, list[str], bool]:
    """``get_dataset`` for one row, restated (every image file exists): the question's and the
    answer's text, the images in order, and whether the row is kept (at most 4 images)."""
    images: list[str] = []

    def text_of(entries, stop_at_three: bool) -> str:
        out = ""
        for e in entries:
            if e["text"] is not None:
                out += e["text"] + "\n"
            for slot in (("image", e["image"]),):
                if stop_at_three and len(images) >= 3:
                    return out
                if slot[1] is not None:
                    out += f"Image-{len(images)}: <image>\n"
                    images.append(slot[1])
            if stop_at_three and len(images) >= 3:
                return out
        return out

    q = text_of(question, False)
    entries = [{"text": answer, "image": None}] if isinstance(answer, str) else answer
    a = text_of(entries, True)
    return q, a, images, len(images) <= 4


def _segments(entries: list[dict] | str, *, answer: bool = False) -> list[Seg]:
    """Segments as judgekit's loader makes them (an answer's empty first entry: a text without text)."""
    if isinstance(entries, str):
        return [_t(entries)]
    out = []
    for k, e in enumerate(entries):
        if answer and k == 0 and e["text"] is None and e["image"] is None:
            out.append(Seg("text", None))
        if e["text"] is not None:
            out.append(_t(e["text"]))
        if e["image"] is not None:
            out.append(_i(e["image"]))
    return out


_TEXT = st.sampled_from(["a", "b c", "", "line\nbreak"])
_ENTRY = st.builds(lambda t, i: {"text": t, "image": i}, st.none() | _TEXT,
                   st.none() | st.sampled_from(["p.png", "q.png", "r.png"]))


@PROPERTY
@given(question=st.lists(_ENTRY, max_size=7), answer=st.lists(_ENTRY, max_size=7) | _TEXT)
def test_flatten_parity_with_the_reference(question, answer):
    # an answer opening with an entry that has neither text nor image included (issue 25: the
    # reference then stops before the next entry's text when the question holds 3 images)
    q_text, a_text, images, kept = _reference_row(question, answer)
    q_segs, a_segs = _segments(question), _segments(answer, answer=True)
    f = flatten_as_reference(q_segs, a_segs)
    assert (f.question, f.answer) == (q_text, a_text)
    assert [s.name for s in f.images] == images
    assert reference_skips(q_segs) == (not kept)
    read = len(a_segs) - f.images_dropped - f.texts_dropped
    assert f.images_dropped + f.texts_dropped == len(a_segs[read:])


def test_integrated_instruction():
    text = load_prompt("mmie/integrated_answer.txt").text
    assert "<image>a detailed description of the image</image>" in text.splitlines()
    assert "{question}" not in text and len(text.split()) < 150
