"""MMIE: a native answer whose first entry has neither text nor image, to a question holding 3
images, is an empty answer for the reference's scorer (``get_dataset`` reads the first entry,
then stops at 3 images) and so for judgekit's default; ``keep_full_answer`` reads every text.
Issue 25, point 3."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from judgekit.benchmarks.mmie.data import load_answers, load_items
from judgekit.benchmarks.mmie.options import Options
from judgekit.benchmarks.mmie.scoring import score_prompts, scorer_text


def _case(tmp_path: Path, q_images: int) -> Path:
    for name in ("q.png", "a.png"):
        Image.new("RGB", (8, 8), "red").save(tmp_path / name)
    question = [{"text": "Look.", "image": None}] + [{"text": None, "image": "q.png"}] * q_images
    answer = [{"text": None, "image": None}, {"text": "Second entry.", "image": "a.png"}]
    row = {"id": "SA_1", "question": question, "answer": answer, "model": "m",
           "gt_answer": [{"text": "x", "image": None}]}
    path = tmp_path / "native.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    return path


def _answer_field(tmp_path: Path, q_images: int, **options) -> str:
    path = _case(tmp_path, q_images)
    (item,) = load_items(path).items
    _, answer = load_answers(path)["SA_1"]
    built = scorer_text(item, answer, Options(**options), score_prompts())
    return built.text.split("### Answer\n", 1)[1].split("\n### Feedback\n", 1)[0]


def test_three_question_images_and_an_empty_first_entry_score_an_empty_answer(tmp_path):
    assert _answer_field(tmp_path, 3) == ""  # judgekit before issue 25: "Second entry.\n"


def test_fewer_question_images_read_on_past_the_empty_entry(tmp_path):
    assert _answer_field(tmp_path, 1) == "Second entry.\nImage-1: <image>\n"


def test_keep_full_answer_reads_every_text(tmp_path):
    assert _answer_field(tmp_path, 3, keep_full_answer=True) == "Second entry.\nImage-3: <image>\n"
