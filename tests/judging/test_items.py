"""Generic benchmarks' items: the file readers, the columns, the image cells, imported answers."""

from __future__ import annotations

import base64
import csv
import io
import json
import string
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from judgekit.judging.items import (
    Columns,
    cell_text,
    load_answers,
    load_items,
    read_rows,
)
from judgekit.config import load_spec
from judgekit.errors import DataError


def png(color: str = "red", size: tuple[int, int] = (4, 3)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def jpeg(size: tuple[int, int] = (5, 7)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, "blue").save(buf, format="JPEG")
    return buf.getvalue()


def spec_for(tmp: Path, data: str):
    path = tmp / "spec.toml"
    path.write_text(f'name = "t"\nbenchmark = "pairwise"\ndata = {json.dumps(data)}\n'
                    '[models.j]\nprovider = "sim"\nmodel = "sim-judge"\n[roles]\njudge = "j"\n', encoding="utf-8")
    return load_spec(str(path))


def write_jsonl(path: Path, rows: list[dict], blank_lines: bool = False) -> Path:
    sep = "\n\n" if blank_lines else "\n"
    path.write_text(sep.join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict], delimiter: str = ",", bom: bool = False) -> Path:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=delimiter)
        w.writeheader()
        w.writerows(rows)
    return path


def write_parquet(path: Path, select: str) -> Path:
    con = duckdb.connect(":memory:")
    con.execute(f"COPY ({select}) TO '{path}' (FORMAT parquet)")
    con.close()
    return path


def load(tmp: Path, name: str, rows: list[dict] | None = None, columns: Columns | None = None, **kw):
    if rows is not None:
        write_jsonl(tmp / name, rows)
    return load_items(spec_for(tmp, name), columns or Columns(), **kw)


# --------------------------------------------------------------------------- readers


text_values = st.text(alphabet=string.ascii_letters + string.digits + " ,;\"'\t\n{}é[]", max_size=12)
table = st.lists(st.fixed_dictionaries({"id": st.integers(0, 10**6).map(str), "question": text_values,
                                        "note": text_values}), min_size=1, max_size=5)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=table)
def test_every_format_reads_back_what_was_written(tmp_path, rows):
    # CSV/TSV fields are text; a row of empty cells is a blank line the readers skip
    rows = [{k: r[k] for k in ("id", "question", "note")} for r in rows if any(v.strip() for v in r.values())] \
        or [{"id": "1", "question": "q", "note": ""}]
    write_jsonl(tmp_path / "d.jsonl", rows, blank_lines=True)
    (tmp_path / "d.json").write_text(json.dumps(rows), encoding="utf-8")
    write_csv(tmp_path / "d.csv", rows, bom=True)
    write_csv(tmp_path / "d.tsv", rows, delimiter="\t")
    values = ", ".join("(" + ", ".join("'" + v.replace("'", "''") + "'" for v in r.values()) + ")" for r in rows)
    write_parquet(tmp_path / "d.parquet", f"SELECT * FROM (VALUES {values}) t(id, question, note)")
    for suffix in ("jsonl", "json", "csv", "tsv", "parquet"):
        assert read_rows(tmp_path / f"d.{suffix}") == rows, suffix


def test_jsonl_line_that_is_not_an_object_is_named(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"question": "a"}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"d\.jsonl, row 3: line 3 is a JSON list, not an object"):
        read_rows(tmp_path / "d.jsonl")
    (tmp_path / "d.jsonl").write_text('{"question": "a"}\n{"question": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"row 2: bad JSON"):
        read_rows(tmp_path / "d.jsonl")


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path):
    rows = [{"question": "one\u2028two\x85three\x1cfour", "note": "\r"}, {"question": "b"}]
    (tmp_path / "d.jsonl").write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    assert read_rows(tmp_path / "d.jsonl") == rows


def test_json_must_be_a_list_of_objects(tmp_path):
    (tmp_path / "d.json").write_text('{"question": "a"}', encoding="utf-8")
    with pytest.raises(DataError, match="list of objects"):
        read_rows(tmp_path / "d.json")
    (tmp_path / "d.json").write_text('[{"question": "a"}, 3]', encoding="utf-8")
    with pytest.raises(DataError, match="row 2: item 2 of the list is int"):
        read_rows(tmp_path / "d.json")


def test_unknown_suffix_missing_file_and_bad_parquet(tmp_path):
    (tmp_path / "d.xlsx").write_bytes(b"x")
    with pytest.raises(DataError, match=r"unknown data file type '\.xlsx'"):
        read_rows(tmp_path / "d.xlsx")
    with pytest.raises(DataError, match="file not found"):
        read_rows(tmp_path / "none.parquet")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(DataError, match="cannot read as parquet"):
        read_rows(tmp_path / "bad.parquet")
    with pytest.raises(DataError, match="cannot open"):
        read_rows(tmp_path / "none.csv")


def test_csv_header_naming_a_column_twice(tmp_path):
    (tmp_path / "d.csv").write_text("id,question,id\n1,a,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="column 'id' twice"):
        read_rows(tmp_path / "d.csv")


# --------------------------------------------------------------------------- items


def test_items_from_jsonl_with_every_column(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(png())
    b64 = base64.b64encode(jpeg()).decode()
    rows = [
        {"id": "q1", "question": "What is shown?", "images": ["img/a.png", b64], "reference": "a square",
         "criteria": "be brief", "category": "vision", "difficulty": 3, "tags": ["x", "y"], "ok": True},
        {"id": 7, "question": "Say hi", "images": None, "category": "", "difficulty": None},
        {"id": "q3", "question": "One image", "images": "img/a.png", "reference": 4.5},
    ]
    items = load(tmp_path, "d.jsonl", rows)
    a, b, c = items
    assert [i.id for i in items] == ["q1", "7", "q3"]
    assert [i.row for i in items] == [1, 2, 3]
    assert [p.mime for p in a.images] == ["image/png", "image/jpeg"]
    assert (a.images[0].width, a.images[0].height, a.images[1].width) == (4, 3, 5)
    assert a.images[0].data == png()
    assert (a.reference, a.criteria, a.category) == ("a square", "be brief", "vision")
    assert a.fields["difficulty"] == "3" and a.fields["tags"] == '["x", "y"]' and a.fields["ok"] == "true"
    assert b.images == [] and (b.reference, b.criteria, b.category) == (None, None, None)
    # every column of every row, "" where the row lacks it
    assert set(b.fields) == set(a.fields) and b.fields["tags"] == "" and b.fields["difficulty"] == ""
    assert c.images == a.images[:1] and c.reference == "4.5"


def test_csv_columns_renamed_and_image_list_as_json_text(tmp_path):
    (tmp_path / "p.png").write_bytes(png("green"))
    data_url = "data:image/png;base64," + base64.b64encode(png("red")).decode()
    write_csv(tmp_path / "d.csv", [
        {"qid": "a", "prompt": "first", "pics": json.dumps(["p.png", data_url]), "gold": "G"},
        {"qid": "b", "prompt": "second", "pics": "", "gold": ""},
    ])
    cols = Columns(id="qid", question="prompt", images="pics", reference="gold")
    a, b = load_items(spec_for(tmp_path, "d.csv"), cols)
    assert (a.id, a.question, a.reference, b.reference, b.images) == ("a", "first", "G", None, [])
    assert [p.data for p in a.images] == [png("green"), png("red")]


def test_parquet_hub_image_structs_keep_their_bytes(tmp_path):
    blob = png("yellow", (6, 2)).hex()
    write_parquet(tmp_path / "d.parquet",
                  f"SELECT 'x' AS id, 'Q?' AS question, {{'bytes': from_hex('{blob}'), 'path': 'y.png'}} AS image, "
                  f"[1, 2] AS nums")
    (item,) = load_items(spec_for(tmp_path, "d.parquet"), Columns(images="image"))
    assert item.images[0].data == png("yellow", (6, 2)) and item.images[0].width == 6
    assert item.fields["nums"] == "[1, 2]" and item.fields["image"].startswith('{"bytes": "<')


def test_ids_default_to_row_numbers_and_limit(tmp_path):
    rows = [{"question": f"q{k}"} for k in range(5)]
    items = load(tmp_path, "d.jsonl", rows, limit=2)
    assert [(i.id, i.question) for i in items] == [("1", "q0"), ("2", "q1")]
    assert items.all_ids == {"1", "2", "3", "4", "5"}


@pytest.mark.parametrize("rows, pattern", [
    ([{"id": "a", "question": "x"}, {"id": "a", "question": "y"}], r"row 2, column 'id': duplicate id 'a' \(row 1"),
    ([{"id": "a", "question": "x"}, {"id": "b"}], r"row 2, column 'question': the question is missing"),
    ([{"id": "a", "question": "x"}, {"id": "b", "question": "  "}], r"row 2, column 'question': .*missing or empty"),
    ([{"id": "a", "question": ["x"]}], r"row 1, column 'question': the question must be text, not list"),
    ([{"id": "a", "question": "x"}, {"question": "y"}], r"row 2, column 'id': the id is missing"),
    ([{"prompt": "x"}], r"no column 'question' \(the question column.*has: prompt"),
    ([{"question": "x", "images": 3}], r"row 1, column 'images': an image must be a path"),
    ([{"question": "x", "images": "[not, json]"}], r"row 1, column 'images': .*JSON list of images"),
    ([{"question": "x", "images": ["missing.png"]}], r"row 1, column 'images': image file not found: 'missing\.png' in the data file's folder"),
    ([{"question": "x", "images": "../up.png"}], r"row 1, column 'images': image path '\.\./up\.png'"),
    ([{"question": "x", "images": "data:image/png;base64,@@"}], r"column 'images': bad base64 in a data: URL"),
    ([{"question": "x", "images": "QUJDREVGR0hJSktMTU5PUA=="}],
     r"image file not found: 'QUJD.*; as base64 it is 16 bytes that are not an image"),
    ([{"question": "x", "images": "https://example.com/a.png"}],
     r"column 'images': 'https://example\.com/a\.png': image URLs are not fetched"),
    ([{"question": "x", "images": {"path": None}}], r"column 'images': an image object needs 'bytes' or 'path'"),
])
def test_bad_rows_name_file_row_and_column(tmp_path, rows, pattern):
    with pytest.raises(DataError, match=pattern) as e:
        load(tmp_path, "d.jsonl", rows)
    assert str(e.value).startswith(str(tmp_path / "d.jsonl"))


def test_bytes_that_are_no_image(tmp_path):
    (tmp_path / "fake.png").write_bytes(b"not an image at all")
    (tmp_path / "cut.png").write_bytes(png()[:12])
    with pytest.raises(DataError, match=r"row 2, column 'images': 'fake\.png': not an image"):
        load(tmp_path, "d.jsonl", [{"question": "x"}, {"question": "y", "images": "fake.png"}])
    with pytest.raises(DataError, match=r"image 2 of 2: 'cut\.png': a image/png that cannot be decoded"):
        load(tmp_path, "d.jsonl", [{"question": "x", "images": [base64.b64encode(png()).decode(), "cut.png"]}])


def test_explicit_column_that_no_row_has_is_an_error(tmp_path):
    rows = [{"question": "x", "ref": "r"}]
    assert load(tmp_path, "d.jsonl", rows)[0].reference is None  # the default name is optional
    with pytest.raises(DataError, match=r"no column 'gold' \(the reference column, options\.columns\.reference\)"):
        load(tmp_path, "d.jsonl", rows, columns=Columns(reference="gold"))


def test_empty_data_and_folder(tmp_path):
    (tmp_path / "d.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="no rows"):
        load(tmp_path, "d.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(DataError, match="is a folder"):
        load(tmp_path, "dir.jsonl")


def test_an_image_file_named_twice_is_one_part(tmp_path):
    (tmp_path / "a.png").write_bytes(png())
    a, b = load(tmp_path, "d.jsonl", [{"question": "x", "images": "a.png"}, {"question": "y", "images": ["a.png"]}])
    assert a.images[0] is b.images[0]


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                 st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)))
def test_cell_text_is_text_and_json_for_structures(value):
    text = cell_text(value)
    assert isinstance(text, str)
    if isinstance(value, (list, dict)):
        assert json.loads(text) == value
    elif isinstance(value, str):
        assert text == value
    elif value is None:
        assert text == ""


# --------------------------------------------------------------------------- imported answers


def test_answers_by_id(tmp_path):
    items = load(tmp_path, "d.jsonl", [{"id": k, "question": "q"} for k in ("a", "b", "c")])
    write_jsonl(tmp_path / "ans.jsonl", [{"id": "a", "answer": "A!"}, {"id": "c", "answer": None},
                                         {"id": "b", "answer": "{question} B"}])
    assert load_answers(tmp_path / "ans.jsonl", items) == {"a": "A!", "b": "{question} B"}
    write_csv(tmp_path / "ans.csv", [{"qid": "c", "out": "C"}])
    assert load_answers(tmp_path / "ans.csv", items, id_column="qid", answer_column="out") == {"c": "C"}


@pytest.mark.parametrize("rows, pattern", [
    ([{"id": "a", "answer": "x"}, {"id": "zz", "answer": "y"}], r"row 2, column 'id': id 'zz' is not an item"),
    ([{"id": "a", "answer": "x"}, {"id": "a", "answer": "y"}], r"row 2, column 'id': duplicate id 'a'"),
    ([{"id": "a", "answer": "x"}, {"id": "b"}], r"row 2, column 'answer': the row has no answer"),
    ([{"id": "a", "answer": 3}], r"row 1, column 'answer': the answer must be text, not int"),
    ([{"id": "a", "text": "x"}], r"no column 'answer'"),
])
def test_bad_answers_name_file_row_and_column(tmp_path, rows, pattern):
    items = load(tmp_path, "d.jsonl", [{"id": k, "question": "q"} for k in ("a", "b")])
    write_jsonl(tmp_path / "ans.jsonl", rows)
    with pytest.raises(DataError, match=pattern):
        load_answers(tmp_path / "ans.jsonl", items)


def test_answers_for_items_cut_off_by_limit_are_skipped(tmp_path):
    items = load(tmp_path, "d.jsonl", [{"id": k, "question": "q"} for k in ("a", "b", "c")], limit=1)
    write_jsonl(tmp_path / "ans.jsonl", [{"id": "a", "answer": "x"}, {"id": "c", "answer": "y"}])
    assert load_answers(tmp_path / "ans.jsonl", items) == {"a": "x"}
    write_jsonl(tmp_path / "ans.jsonl", [{"id": "d", "answer": "x"}])
    with pytest.raises(DataError, match="'d' is not an item"):
        load_answers(tmp_path / "ans.jsonl", items)


# --------------------------------------------------------------------------- image cells

PICTURES = {"red": png("red"), "jpeg": jpeg(), "wide": png("green", (9, 1))}


def _encode(form: str, name: str) -> object:
    data = PICTURES[name]
    return {
        "path": f"pics/{name}.img",
        "base64": base64.b64encode(data).decode(),
        "base64_wrapped": "\n".join(base64.encodebytes(data).decode().splitlines()),
        "data_url": "data:application/octet-stream;base64," + base64.b64encode(data).decode(),
        "bytes": data,
        "hub": {"bytes": data, "path": "ignored.png"},
        "hub_path": {"bytes": None, "path": f"pics/{name}.img"},
    }[form]


forms = st.sampled_from(["path", "base64", "base64_wrapped", "data_url", "bytes", "hub", "hub_path"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cell=st.lists(st.tuples(forms, st.sampled_from(sorted(PICTURES))), max_size=4), as_text=st.booleans())
def test_any_mix_of_image_forms_reads_back_the_same_pictures_in_order(tmp_path, cell, as_text):
    from judgekit.judging.item_images import ImageReader

    (tmp_path / "pics").mkdir(exist_ok=True)
    for name, data in PICTURES.items():
        (tmp_path / "pics" / f"{name}.img").write_bytes(data)
    values = [_encode(form, name) for form, name in cell]
    if as_text:  # a CSV cell: the list as JSON text (bytes cannot be written there)
        values = json.dumps([v for v in values if isinstance(v, str)])
        expected = [PICTURES[n] for (f, n) in cell if f in ("path", "base64", "base64_wrapped", "data_url")]
    else:
        expected = [PICTURES[n] for _, n in cell]
    parts = ImageReader("d.csv", tmp_path).cell(values, row=1, column="images")
    assert [p.data for p in parts] == expected
    assert all(p.mime == ("image/jpeg" if p.data == PICTURES["jpeg"] else "image/png") for p in parts)


def test_hub_rows_have_no_folder_for_paths():
    from judgekit.judging.item_images import ImageReader

    reader = ImageReader("hf:org/name", None)
    assert reader.cell({"bytes": png(), "path": "x.png"}, row=3, column="image")[0].data == png()
    with pytest.raises(DataError, match=r"hf:org/name, row 3, column 'image': 'x\.png' is neither base64 nor a "
                                        r"data: URL, and rows from the hub have no folder"):
        reader.cell({"bytes": None, "path": "x.png"}, row=3, column="image")


def test_float_ids_of_a_column_with_nulls_match_integer_ids(tmp_path):
    write_parquet(tmp_path / "d.parquet", "SELECT * FROM (VALUES (1.0::DOUBLE, 'a'), (2.0::DECIMAL(4, 1), 'b')) t(id, question)")
    items = load_items(spec_for(tmp_path, "d.parquet"), Columns())
    assert [i.id for i in items] == ["1", "2"]
    write_jsonl(tmp_path / "ans.jsonl", [{"id": 2, "answer": "B"}])
    assert load_answers(tmp_path / "ans.jsonl", items) == {"2": "B"}
