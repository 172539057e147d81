"""The simulator's MMIE replies: the scorer and integrated answers."""

from __future__ import annotations

import random
import re
from statistics import mean

import pytest

from judgekit.parsers.mmie import flatten_for_judge, parse_score, split_integrated
from judgekit.resources import load_prompt
from judgekit.benchmarks.mmie.sim import (
    KIND_INTEGRATED,
    KIND_SCORE,
    answer_signal,
    drawable_description,
    mmie_kind,
    mmie_reply,
    score_centre,
)

_RICH = ("The wind lifted the red kite high above the village, and Mia laughed as the string pulled "
         "at her hands. Grandfather pointed at the clouds drifting over the hills, telling her how he "
         "flew his first kite from the same meadow sixty years earlier. When the sun began to set, "
         "they wound the string slowly, walked home along the river and hung the kite above her bed.")
_POOR = "It was nice."


def _score_prompt(category: str, answer_segments, gt: str = "") -> str:
    from judgekit.benchmarks.mmie.data import Segment

    question = [Segment.of_text("I will give you the beginning of a story."), Segment("image")]
    f = flatten_for_judge(question, answer_segments, image_cap=None)
    return load_prompt(f"mmie/score_{category}.txt").render(question=f.question, answer=f.answer, gt_answer=gt)


def _answer(text: str, images: int):
    from judgekit.benchmarks.mmie.data import Segment

    segs = [Segment.of_text(text)]
    for _ in range(images):
        segs += [Segment("image"), Segment.of_text("And then more happened.")]
    return segs


@pytest.mark.parametrize("category", ["situational_analysis", "project_based_learning", "multi_step_reasoning"])
def test_kind_of_scoring_prompts(category):
    assert mmie_kind(_score_prompt(category, _answer(_POOR, 0)), None) == KIND_SCORE


def test_kind_of_integrated_requests_and_others():
    instr = load_prompt("mmie/integrated_answer.txt").text
    assert mmie_kind(instr + "\nHow to paint a sunset?\nStep 1: paint the sky.", "How to paint") == KIND_INTEGRATED
    assert mmie_kind("Describe this picture.", "Describe this picture.") is None
    assert mmie_kind("### Answer\nfoo", None) is None
    guess = "Guess the Build: what does this Minecraft build represent?"
    assert mmie_kind(guess, guess) is None


def _words(s: str) -> int:
    return len(s.split())


@pytest.mark.parametrize("seed", range(40))
def test_integrated_answers_have_the_promised_shape(seed):
    instr = load_prompt("mmie/integrated_answer.txt").text
    text = instr + "\nHow to Wash Your Hands Properly?\nStep 1: Wet your hands under running water."
    q = (seed % 5) / 4
    out = mmie_reply(KIND_INTEGRATED, text, random.Random(seed), quality=q, garbage=seed % 2 == 0)
    assert 60 <= _words(out) <= 150, out
    parts = split_integrated(out)
    descs = [d for k, d in parts if k == "image"]
    assert 1 <= len(descs) <= 3
    # each description is on its own line, and the text is not empty
    assert len(re.findall(r"^<image>[^<>\n]+</image>$", out, re.MULTILINE)) == len(descs)
    assert any(k == "text" for k, _ in parts)
    assert out == mmie_reply(KIND_INTEGRATED, text, random.Random(seed), quality=q, garbage=seed % 2 == 0)


def test_integrated_answers_use_the_question_and_grow_with_quality():
    instr = load_prompt("mmie/integrated_answer.txt").text
    text = instr + "\nThe children built a snowman with a carrot nose."
    outs_lo = [mmie_reply(KIND_INTEGRATED, text, random.Random(s), quality=0.0, garbage=False) for s in range(60)]
    outs_hi = [mmie_reply(KIND_INTEGRATED, text, random.Random(s), quality=1.0, garbage=False) for s in range(60)]
    assert mean(map(_words, outs_hi)) > mean(map(_words, outs_lo)) + 20
    assert any("snowman" in o or "children" in o or "carrot" in o for o in outs_lo)


def test_descriptions_are_drawable():
    colours = {"red", "blue", "green", "yellow", "orange", "purple", "black", "white", "grey", "brown"}
    for s in range(50):
        d = drawable_description(random.Random(s))
        words = set(d.replace(",", "").split())
        assert words & colours, d
        assert re.search(r"\b(center|top|bottom|left|right)\b", d), d
        assert re.search(r" on (a|an) [a-z ]+$", d), d  # ends with the background


def test_answer_signal_and_centre():
    flat = flatten_for_judge([], _answer("One two two three.", 2), image_cap=1).answer
    assert answer_signal(flat) == (4 + 8, 3 + 4, 2)  # 'And then more happened.' twice; both image lines
    assert score_centre("") == 0.0
    assert score_centre(_RICH + "\nImage-1: <image>\n") > score_centre(_RICH) > score_centre(_POOR)
    assert score_centre("The answer is 43 apples.", gt="43") > score_centre("The answer is 41 apples.", gt="43")


def _mean_score(prompt: str, n: int = 80) -> float:
    scores = []
    for s in range(n):
        p = parse_score(mmie_reply(KIND_SCORE, prompt, random.Random(s), quality=0.7, garbage=False))
        assert p.ok, p
        scores.append(p.score)
    return mean(scores)


def test_scores_rise_with_the_answer_quality():
    poor = _mean_score(_score_prompt("situational_analysis", _answer(_POOR, 0)))
    rich = _mean_score(_score_prompt("situational_analysis", _answer(_RICH, 0)))
    rich_images = _mean_score(_score_prompt("situational_analysis", _answer(_RICH, 2)))
    assert poor < 1.5 < rich < rich_images
    assert rich_images - poor > 2.5


def test_multi_step_scores_follow_the_ground_truth():
    right = _score_prompt("multi_step_reasoning", _answer("12 + 7 + 15 + 9 = 43, so 43 apples.", 0), gt="43")
    wrong = _score_prompt("multi_step_reasoning", _answer("12 + 7 + 13 + 9 = 41, so 41 apples.", 0), gt="43")
    assert _mean_score(right) > _mean_score(wrong) + 1


def test_garbage_scoring_replies_never_parse():
    prompt = _score_prompt("project_based_learning", _answer(_RICH, 1))
    outcomes = set()
    for s in range(60):
        p = parse_score(mmie_reply(KIND_SCORE, prompt, random.Random(s), quality=0.7, garbage=True))
        assert not p.ok
        outcomes.add(p.outcome)
    assert outcomes == {"missing", "not_a_number", "out_of_range"}


def test_scoring_reply_is_deterministic_and_shaped():
    prompt = _score_prompt("situational_analysis", _answer(_RICH, 1))
    a = mmie_reply(KIND_SCORE, prompt, random.Random(3), quality=0.5, garbage=False)
    assert a == mmie_reply(KIND_SCORE, prompt, random.Random(3), quality=0.5, garbage=False)
    assert "### Score" in a and len(a.split()) < 80
    with pytest.raises(ValueError):
        mmie_reply("guess", prompt, random.Random(0), quality=0.5, garbage=False)


def test_gt_hit_reads_the_final_answer():
    from judgekit.benchmarks.mmie.sim import gt_hit

    gt = "The total is 12 + 7 + 15 + 9 = 43. Answer: 43 apples; most were sold on Wednesday."
    assert gt_hit("So 43 apples, Wednesday.", gt) == 1.0
    assert gt_hit("So 41 apples, most were sold on Wednesday.", gt) == 0.0  # the number decides
    assert gt_hit("Yes, they are isomorphic.", "Same degrees. Answer: yes, they are isomorphic.") == 1.0
    assert gt_hit("No.", "Answer: yes, they are isomorphic.") == 0.0
    assert gt_hit("anything", "") == 0.0
