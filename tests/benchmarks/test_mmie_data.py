"""MMIE data loading: both formats, categories, path safety, image checks, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from judgekit.benchmarks.mmie.data import (
    MSR,
    PBL,
    SA,
    Segment,
    category_from_id,
    category_from_label,
    detect_format,
    load_answers,
    load_items,
)
from judgekit.errors import DataError


def _png(path: Path, colour: str = "red") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), colour).save(path)
    return path


def _released(item_id: str = "SA_1", q_image: str | None = "images/q.png", **extra) -> dict:
    row = {
        "id": item_id,
        "conversations": [
            {"from": "human", "content": [{"text": "Once upon a time", "image": None},
                                          {"text": None, "image": q_image}]},
            {"from": "gpt", "content": [{"text": "They lived happily.", "image": None}]},
        ],
        "catagory": "Situational analysis",
        "field": "literature",
    }
    row.update(extra)
    return row


def _write(path: Path, rows) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    _png(tmp_path / "images" / "q.png")
    _png(tmp_path / "images" / "a.png", "blue")
    return tmp_path


def test_released_json_list(root):
    loaded = load_items(_write(root / "data.json", [_released()]))
    assert loaded.format == "released" and loaded.skipped == []
    (item,) = loaded.items
    assert item.id == "SA_1" and item.category == SA and item.field == "literature"
    assert [s.kind for s in item.question] == ["text", "image"]
    assert item.question[0].text == "Once upon a time"
    img = item.question[1]
    assert img.path == (root / "images" / "q.png").resolve() and img.ref == "images/q.png"
    part = img.image_part()
    assert part.sha256 == img.sha256 and part.mime == "image/png" and (part.width, part.height) == (8, 8)
    assert [s.text for s in item.gt_answer] == ["They lived happily."]
    assert item.answer is None and item.model is None
    assert item.source == (str(root / "data.json"), 1)


def test_released_jsonl_and_category_spelling(root):
    rows = [_released("a1", category="project-based LEARNING"), _released("a2", catagory="Multi-step reasoning")]
    del rows[0]["catagory"]
    path = root / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    items = load_items(path).items
    assert [(i.id, i.category) for i in items] == [("a1", PBL), ("a2", MSR)]


def test_scorer_format_and_native_answers(root):
    row = {"id": "PBL_7", "question": [{"text": "How to?", "image": "images/q.png"}],
           "answer": [{"text": "Step 2", "image": None}, {"text": None, "image": "images/a.png"}],
           "model": "native-x", "gt_answer": [{"text": "Do it.", "image": None}]}
    path = _write(root / "scorer.json", [row, {"id": "MSR_8", "question": [{"text": "2+2?", "image": None}],
                                                "answer": "4", "model": "native-x",
                                                "gt_answer": [{"text": "4", "image": None}]}])
    loaded = load_items(path)
    assert loaded.format == "scorer"
    a, b = loaded.items
    assert a.category == PBL and a.field is None and a.model == "native-x"
    # an entry with both text and image: the text first, then the image
    assert [s.kind for s in a.question] == ["text", "image"]
    assert [s.kind for s in a.answer] == ["text", "image"] and a.answer[1].ref == "images/a.png"
    assert b.category == MSR and b.answer == (Segment.of_text("4"),)
    answers = load_answers(path)
    assert set(answers) == {"PBL_7", "MSR_8"}
    model, segs = answers["PBL_7"]
    assert model == "native-x" and segs == a.answer


def test_load_answers_needs_the_scorer_format_and_an_answer(root):
    with pytest.raises(DataError, match="expected the scorer format"):
        load_answers(_write(root / "data.json", [_released()]))
    row = {"id": "SA_1", "question": [{"text": "q", "image": None}], "model": "m"}
    with pytest.raises(DataError, match=r"row 1 \(id 'SA_1'\), column 'answer'"):
        load_answers(_write(root / "s.json", [row]))


def test_detect_format():
    assert detect_format({"conversations": []}) == "released"
    assert detect_format({"question": []}) == "scorer"
    assert detect_format({"id": 1}) is None and detect_format([1]) is None


def test_category_from_label_and_id():
    assert category_from_label("Situational analysis") == SA
    assert category_from_label("project_based_learning") == PBL
    assert category_from_label("  Multi-Step  Reasoning ") == MSR
    assert category_from_label("MSR") == MSR and category_from_label("riddles") is None
    assert category_from_id("SA_0001") == SA
    assert category_from_id("PBL-12") == PBL
    assert category_from_id("mmie_MSR_3") == MSR
    # the reference tests "SA" in id, then "PBL", then "MSR": substrings, in that order
    assert category_from_id("MSR_SAMPLE_1") == SA
    assert category_from_id("SAMPLE_PBL") == SA
    assert category_from_id("PBL_MSR") == PBL
    assert category_from_id("xMSRx") == MSR
    assert category_from_id("xSAx") == SA
    assert category_from_id("sa_1") is None  # case-sensitive, as the reference
    assert category_from_id("msr_pbl") is None
    assert category_from_id("Q17") is None


@pytest.mark.parametrize("item_id, expected", [
    ("SA", SA), ("PBL", PBL), ("MSR", MSR), ("MSR_SA", SA), ("PBLSA", SA), ("MSRPBL", PBL),
    ("xxSAxx", SA), ("S_A", None), ("", None), ("Msr", None), ("P B L", None),
])
def test_category_from_id_parity(item_id, expected):
    # the reference's get_prompt and averaging, by hand: the first of SA, PBL, MSR found in the id
    assert category_from_id(item_id) == expected


def test_rows_without_field_load(root):
    row = _released()
    del row["field"]
    (item,) = load_items(_write(root / "d.json", [row])).items
    assert item.field is None and item.category == SA
    # nor catagory, when the id holds the code; nor subfield
    del row["catagory"]
    (item,) = load_items(_write(root / "d.json", [row])).items
    assert item.category == SA and item.subfield is None


def test_the_id_wins_over_the_label_as_in_the_reference(root):
    rows = [_released("MSR_SAMPLE_1", catagory="Multi-step reasoning"), _released("MSR_2"), _released("q3")]
    path = _write(root / "d.json", rows)
    # the id's rule: the label is read only where the id holds no code
    assert [i.category for i in load_items(path).items] == [SA, MSR, SA]
    # category_from="label": the row's label first
    assert [i.category for i in load_items(path, category_from="label").items] == [MSR, SA, SA]
    # an unknown label is not read where the id decides, and an error where it is read
    rows = [_released("SA_1", catagory="Riddles")]
    assert load_items(_write(root / "d.json", rows)).items[0].category == SA
    with pytest.raises(DataError, match="column 'catagory': unknown category 'Riddles'"):
        load_items(root / "d.json", category_from="label")


def test_ground_truth_lead_text_is_the_first_entrys(root):
    row = _released("MSR_1")
    row["conversations"][1]["content"] = [{"text": None, "image": "images/q.png"}, {"text": "42", "image": None}]
    (item,) = load_items(_write(root / "d.json", [row])).items
    assert item.gt_lead_text is None and [s.kind for s in item.gt_answer] == ["image", "text"]
    row["conversations"][1]["content"] = [{"text": "x = 4", "image": "images/q.png"}, {"text": "42", "image": None}]
    (item,) = load_items(_write(root / "d.json", [row])).items
    assert item.gt_lead_text == "x = 4"
    del row["conversations"][1]
    (item,) = load_items(_write(root / "d.json", [row])).items
    assert item.gt_lead_text is None and item.gt_answer is None
    scorer = {"id": "MSR_2", "question": "q", "answer": "a", "model": "m", "gt_answer": "a plain string"}
    (item,) = load_items(_write(root / "s.json", [scorer])).items
    assert item.gt_lead_text == "a plain string"


def test_native_answers_need_no_category(root):
    rows = [{"id": "q1", "question": "q", "answer": "a", "model": "m"},
            {"id": "q2", "question": "q", "answer": "b", "model": "m", "catagory": "Riddles"}]
    answers = load_answers(_write(root / "s.json", rows))
    assert {k: [s.text for s in v[1]] for k, v in answers.items()} == {"q1": ["a"], "q2": ["b"]}


def test_category_from_id_when_the_row_has_none(root):
    rows = [_released("MSR_3"), _released("PBL_4")]
    for r in rows:
        del r["catagory"]
    assert [i.category for i in load_items(_write(root / "d.json", rows)).items] == [MSR, PBL]


def test_unknown_category(root):
    r = _released("Q1")
    del r["catagory"]
    with pytest.raises(DataError, match=r"row 1 \(id 'Q1'\), column 'catagory': no category"):
        load_items(_write(root / "d.json", [r]))
    with pytest.raises(DataError, match="column 'catagory': unknown category 'Riddles'"):
        load_items(_write(root / "d.json", [_released("Q1", catagory="Riddles")]))


@pytest.mark.parametrize("ref", ["../x.png", "images/../../x.png", "images\\..\\..\\x.png"])
def test_dotdot_paths_are_rejected(root, ref):
    _png(root.parent / "x.png")
    with pytest.raises(DataError, match=r"escapes the images folder") as e:
        load_items(_write(root / "d.json", [_released(q_image=ref)]))
    assert "column 'conversations[0].content[1].image'" in str(e.value)
    assert "row 1 (id 'SA_1')" in str(e.value)


def test_absolute_paths_are_rejected(root):
    target = str((root / "images" / "q.png").resolve())
    for ref in (target, "C:\\images\\q.png", "\\images\\q.png"):
        with pytest.raises(DataError, match="is absolute"):
            load_items(_write(root / "d.json", [_released(q_image=ref)]))


def test_symlink_pointing_outside_is_rejected(tmp_path):
    outside = _png(tmp_path / "secret" / "x.png")
    data_dir = tmp_path / "data"
    (data_dir / "images").mkdir(parents=True)
    os.symlink(outside, data_dir / "images" / "link.png")
    os.symlink(outside.parent, data_dir / "images" / "dirlink")
    for ref in ("images/link.png", "images/dirlink/x.png"):
        with pytest.raises(DataError, match="resolves outside the images folder"):
            load_items(_write(data_dir / "d.json", [_released(q_image=ref)]))
    # a symlink that stays inside is fine
    _png(data_dir / "images" / "real.png")
    os.symlink(data_dir / "images" / "real.png", data_dir / "images" / "inside.png")
    item = load_items(_write(data_dir / "d.json", [_released(q_image="images/inside.png")])).items[0]
    assert item.question[1].path == (data_dir / "images" / "real.png").resolve()


def test_images_dir_argument(tmp_path):
    _png(tmp_path / "pics" / "q.png")
    (tmp_path / "meta").mkdir()
    path = _write(tmp_path / "meta" / "d.json", [_released(q_image="q.png")])
    assert load_items(path, images_dir=tmp_path / "pics").items[0].question[1].ref == "q.png"
    with pytest.raises(DataError, match="image file not found"):
        load_items(path)
    with pytest.raises(DataError, match="images folder does not exist"):
        load_items(path, images_dir=tmp_path / "nope")


def test_missing_image(root):
    with pytest.raises(DataError, match=r"row 1 \(id 'SA_1'\), column 'conversations\[0\]\.content\[1\]\.image': "
                                        r"image file not found"):
        load_items(_write(root / "d.json", [_released(q_image="images/none.png")]))


def test_unreadable_image_raises_or_is_skipped(root):
    (root / "images" / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    (root / "images" / "text.png").write_bytes(b"hello")
    rows = [_released("SA_1"), _released("SA_2", q_image="images/bad.png"),
            _released("SA_3", q_image="images/text.png"), _released("SA_4")]
    path = _write(root / "d.json", rows)
    with pytest.raises(DataError, match=r"row 2 \(id 'SA_2'\).*does not decode"):
        load_items(path)
    loaded = load_items(path, skip_unreadable=True)
    assert [i.id for i in loaded.items] == ["SA_1", "SA_4"]
    assert [(s.row, s.id) for s in loaded.skipped] == [(2, "SA_2"), (3, "SA_3")]
    assert "is not an image" in loaded.skipped[1].reason


def test_image_changed_after_loading(root):
    item = load_items(_write(root / "d.json", [_released()])).items[0]
    _png(root / "images" / "q.png", "green")
    with pytest.raises(DataError, match="image changed since"):
        item.question[1].image_part()


def test_duplicate_ids(root):
    with pytest.raises(DataError, match=r"row 2 \(id 'SA_1'\), column 'id': duplicate id \(first at row 1\)"):
        load_items(_write(root / "d.json", [_released(), _released()]))


def test_bad_json_names_line_and_row(root):
    path = root / "d.json"
    path.write_text('[\n  {"id": "SA_1",\n   "conversations": [}\n]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad JSON at line 3, column"):
        load_items(path)
    path = root / "d.jsonl"
    path.write_text(json.dumps(_released("SA_1")) + "\n\n" + '{"id": "SA_2", oops}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"row 2 \(line 3\): bad JSON \(JSONL\)"):
        load_items(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty file"):
        load_items(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(DataError, match="no rows"):
        load_items(path)
    with pytest.raises(DataError, match="cannot read"):
        load_items(root / "absent.json")


@pytest.mark.parametrize("mutate, match", [
    (lambda r: r.pop("id"), r"row 1, column 'id': missing field"),
    (lambda r: r.update(id=["x"]), r"column 'id': id must be a string"),
    (lambda r: r.update(field=3), r"column 'field': must be a string"),
    (lambda r: r.update(conversations="hi"), r"column 'conversations': must be a list"),
    (lambda r: r["conversations"][0].update({"from": "user"}), r"column 'conversations\[0\]\.from'"),
    (lambda r: r["conversations"][1].pop("content"), r"column 'conversations\[1\]\.content': missing field"),
    (lambda r: r["conversations"][0]["content"].append({"txt": "x"}),
     r"column 'conversations\[0\]\.content\[2\]': entry has neither"),
    (lambda r: r["conversations"][0]["content"].append({"text": 5}),
     r"column 'conversations\[0\]\.content\[2\]\.text': text must be a string"),
    (lambda r: r["conversations"][0]["content"].append({"image": 5}),
     r"content\[2\]\.image'.*image must be a path string"),
    (lambda r: r["conversations"].pop(0), r"column 'conversations': no 'human' turn"),
    (lambda r: r["conversations"].append(r["conversations"][1]), r"column 'conversations\[2\]': more than one 'gpt'"),
])
def test_malformed_rows(root, mutate, match):
    row = _released()
    mutate(row)
    with pytest.raises(DataError, match=match):
        load_items(_write(root / "d.json", [row]))


def test_mixed_formats_and_unknown_rows(root):
    scorer = {"id": "SA_2", "question": [{"text": "q", "image": None}]}
    with pytest.raises(DataError, match=r"row 2 \(id 'SA_2'\), column 'conversations': missing field"):
        load_items(_write(root / "d.json", [_released(), scorer]))
    with pytest.raises(DataError, match="neither 'conversations'"):
        load_items(_write(root / "d.json", [{"id": "SA_1"}]))
    with pytest.raises(DataError, match="a row must be a JSON object"):
        load_items(_write(root / "d.json", [[1, 2]]))


def test_limit_reads_only_the_first_rows(root):
    rows = [_released("SA_1"), _released("SA_2"), _released("SA_3", q_image="images/none.png")]
    path = _write(root / "d.json", rows)
    assert [i.id for i in load_items(path, limit=2).items] == ["SA_1", "SA_2"]
    with pytest.raises(ValueError):
        load_items(path, limit=-1)
