"""Unit tests of the simulator's deterministic replies."""

from __future__ import annotations

import hashlib

import pytest

from judge_parsing import parse_verdict, parse_vfs
from judgekit.benchmarks.creation_mmbench.sim import extract_answers
from judgekit.sim.replies import (
    VERDICTS,
    answer_quality,
    classify,
    make_reply,
    verdict_probabilities,
)


def digest(*parts: object) -> bytes:
    return hashlib.sha256(repr(parts).encode()).digest()


def judge(a: str, b: str, vfs: bool = False) -> str:
    tail = "Response A Visual Factuality Score: X/10" if vfs else "Final Verdict is: [[VERDICT]]"
    return (
        "Use the tags [ASSISTANT A] and [ASSISTANT B] in your evaluation.\n"
        f"[ASSISTANT A]\n{a}\n[END ASSISTANT A]\n[ASSISTANT B]\n{b}\n[END ASSISTANT B]\n{tail}"
    )


def test_classify():
    assert classify(judge("x", "y")) == "pairwise"
    assert classify(judge("x", "y", vfs=True)) == "vfs"
    assert classify("Write a Final Verdict for me") == "answer"
    assert classify("hello") == "answer"


def test_extract_answers_skips_mentions_in_instructions():
    assert extract_answers(judge("first answer", "second answer")) == ("first answer", "second answer")


def test_verdict_probabilities():
    p = verdict_probabilities(5.0, 5.0)
    assert sum(p) == pytest.approx(1.0)
    assert p[0] == pytest.approx(p[4]) and p[1] == pytest.approx(p[3])
    better_a = verdict_probabilities(6.0, 5.0)
    assert better_a[0] + better_a[1] > 0.7
    assert all(x >= 0 for x in verdict_probabilities(0.0, 9.0))


def test_quality_grows_with_model_quality():
    qs = []
    for q in (0.0, 0.25, 0.5, 0.75, 1.0):
        vals = [answer_quality(make_reply(f"topic {i}", digest(q, i), quality=q).text) for i in range(20)]
        qs.append(sum(vals) / len(vals))
    assert qs == sorted(qs) and qs[-1] - qs[0] > 2
    assert answer_quality("") == 0.0


def test_reply_is_deterministic():
    r1 = make_reply("Describe a garden.", digest(1))
    r2 = make_reply("Describe a garden.", digest(1))
    r3 = make_reply("Describe a garden.", digest(2))
    assert r1 == r2 and r1.text != r3.text
    assert r1.kind == "answer" and r1.finish_reason == "stop"
    assert "garden" in r1.text.lower() or "describe" in r1.text.lower()  # prompt words are mixed in


def test_max_tokens_cut():
    r = make_reply("Describe a garden.", digest(1), max_tokens=100)
    assert r.finish_reason == "length" and len(r.text.split()) == 75
    assert r.completion_tokens == round(75 * 1.3)
    short = make_reply(judge("a", "b"), digest(3), max_tokens=10)
    assert short.finish_reason == "length" and parse_verdict(short.text) is None


def test_pairwise_spellings_all_parse_and_about_five_percent_vary():
    varied = 0
    seen = set()
    for i in range(2000):
        text = make_reply(judge("one two three", "four five six"), digest("p", i)).text
        v = parse_verdict(text)
        assert v in VERDICTS
        seen.add(v)
        last = text.splitlines()[-1]
        if last[len("Final Verdict is: [["):-2] not in VERDICTS:
            varied += 1
    assert seen == set(VERDICTS)
    assert 60 <= varied <= 140  # ~5 % of 2000


def test_vfs_scores_follow_quality():
    rich = make_reply("topic", digest("rich"), quality=1.0).text
    thin = make_reply("topic", digest("thin"), quality=0.0).text
    total_a = total_b = 0.0
    for i in range(50):
        parsed = parse_vfs(make_reply(judge(rich, thin, vfs=True), digest("v", i)).text)
        assert parsed is not None
        total_a += parsed[0]
        total_b += parsed[1]
    assert total_a / 50 > total_b / 50 + 3


def test_garbage_only_for_judges():
    assert parse_verdict(make_reply(judge("a", "b"), digest(1), garbage=True).text) is None
    assert parse_vfs(make_reply(judge("a", "b", vfs=True), digest(1), garbage=True).text) is None
    r = make_reply("free text", digest(1), garbage=True)
    assert not r.garbage and r.kind == "answer"
