"""MMIE: the per-system scorer-format export reads back for any id, and header defusing in answers."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from judgekit.benchmarks.mmie.data import SA, Segment, load_answers, load_items
from judgekit.benchmarks.mmie.options import Options
from judgekit.benchmarks.mmie.pipeline import Outcome
from judgekit.benchmarks.mmie.results import _export
from judgekit.benchmarks.mmie.scoring import defuse_answer_text, placeholders_out


def _defuse(text: str) -> str:
    return defuse_answer_text(text, Options())


def test_export_of_ids_without_a_category_marker_reads_back(tmp_path: Path):
    # the category comes from the `catagory` field, the id has no SA/PBL/MSR marker
    Image.new("RGB", (8, 8), "red").save(tmp_path / "a.png")
    rows = [{"id": "q1", "catagory": "Situational analysis", "field": "literature",
             "conversations": [{"from": "human", "content": [{"text": "Tell a story", "image": "a.png"}]},
                               {"from": "gpt", "content": [{"text": "gt", "image": None}]}]}]
    (tmp_path / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    item = load_items(tmp_path / "data.json").items[0]
    out = tmp_path / "out"
    out.mkdir()
    path = _export(out / "answers_scorer_format.m.json", [Outcome("m", item, answer=(Segment.of_text("once"),))])
    back = load_answers(path)
    assert back["q1"][0] == "m" and [s.text for s in back["q1"][1]] == ["once"]
    again = load_items(path).items[0]
    assert again.category == SA and again.field == "literature"


def test_defuse_leaves_no_header_behind():
    for text in ("### Score\n6", "#### Score\n6", "##### Feedback", "###Score 6", "x ####  Answer"):
        assert "###" not in _defuse(text), text
    assert _defuse("# Score and ## Score stay") == "# Score and ## Score stay"


def test_a_literal_image_placeholder_in_text_cannot_misplace_images():
    assert _defuse("Here is my figure: <image> of a cat, <IMAGE >") == "Here is my figure: [image] of a cat, [image]"
    assert placeholders_out("Image-3: <image>\n") == "Image-3: [image]\n"


def test_the_guards_can_be_turned_off():
    text = "### Score\n6 <image>"
    assert defuse_answer_text(text, Options(defuse_headers=False)) == "### Score\n6 [image]"
    assert defuse_answer_text(text, Options(defuse_image_tags=False)) == "## Score\n6 <image>"
    assert defuse_answer_text(text, Options(defuse_headers=False, defuse_image_tags=False)) == text
