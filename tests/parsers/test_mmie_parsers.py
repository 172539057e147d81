"""MMIE parsers (score, integrated answers, flattening) and the scoring prompts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from judgekit.parsers.mmie import (
    Flattened,
    ScoreParse,
    flatten_for_judge,
    gt_text,
    parse_score,
    percent,
    split_integrated,
)
from judgekit.resources import load_prompt


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


# --------------------------------------------------------------------------- prompts

_CRITERIA_ENDS = {
    "situational_analysis": "The final score should be an integer between 0 and 6.",
    "project_based_learning": "beginning with \u2019### Score\\n\u2019.",
    "multi_step_reasoning": "The final score should be an integer between 0 to 6.",
}


@pytest.mark.parametrize("category", list(_CRITERIA_ENDS))
def test_scoring_prompts_lay_out_as_the_reference(category):
    p = load_prompt(f"mmie/score_{category}.txt")
    tail = "### Question\n{question}\n### Answer\n{answer}\n"
    if category == "multi_step_reasoning":
        tail += "### Correct Answer\nThe correct answer to this question should be: {gt}\n"
    tail += "### Feedback\n"
    assert p.text.endswith(_CRITERIA_ENDS[category] + tail)
    assert p.text.startswith("In this task, you will evaluate the quality of the ")
    # the paper's criteria, one a line, numbered 1) .. 6) or 7)
    n = 6 if category == "multi_step_reasoning" else 7
    lines = p.text.splitlines()
    assert [ln.split(")")[0] for ln in lines if ln[:1].isdigit()] == [str(k) for k in range(1, n + 1)]
    rendered = p.render(question="Q {x}", answer="A", gt="G")
    assert "### Question\nQ {x}\n### Answer\nA\n" in rendered and "{question}" not in rendered
    assert ("should be: G\n### Feedback\n" in rendered) == (category == "multi_step_reasoning")


def test_prompt_texts_are_the_papers():
    sa = load_prompt("mmie/score_situational_analysis.txt").text
    assert "2) Image Quality: Evaluate the vividness and clarity of the image descriptions." in sa
    assert "7) Emotional Impact (penalty only): This criterion is used only to deduct points." in sa
    pbl = load_prompt("mmie/score_project_based_learning.txt").text
    assert "4) Method Quality and Practical Utility: The method should be actionable" in pbl
    msr = load_prompt("mmie/score_multi_step_reasoning.txt").text
    assert "The evaluation will focus on six key aspects:" in msr
    assert "6) Excellency: The answer is correct and all the intermediate steps are correct" in msr


def test_integrated_instruction():
    text = load_prompt("mmie/integrated_answer.txt").text
    assert "<image>a detailed description of the image</image>" in text.splitlines()
    assert "{question}" not in text and len(text.split()) < 150
