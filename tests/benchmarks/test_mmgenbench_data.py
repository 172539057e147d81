"""MMGenBench loaders: image folders with a label-index JSON, TSVs with base64 images."""

import base64
import io
import json

import pytest
from PIL import Image

from judgekit.benchmarks.mmgenbench.data import load_data, load_folder, load_label_index, load_tsv
from judgekit.errors import DataError


def png(color=(200, 10, 10), size=(16, 12)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def jpeg(color=(10, 200, 10)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buf, format="JPEG")
    return buf.getvalue()


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "set"
    (d / "images").mkdir(parents=True)
    for i in (0, 1, 2, 10):
        (d / "images" / f"{i}.png").write_bytes(png((20 * i, 0, 0)))
    (d / "labels.json").write_text(json.dumps({"Color": [0, 2], "Count": [2, 10], "Text": []}))
    return d


def test_folder_with_labels(folder):
    s = load_data(folder)
    assert [it.item_id for it in s.items] == ["0", "1", "2", "10"]  # numeric order, not name order
    assert [it.index for it in s.items] == [0, 1, 2, 10]
    assert [it.patterns for it in s.items] == [("Color",), (), ("Color", "Count"), ("Count",)]
    assert s.patterns == {"Color": ["0", "2"], "Count": ["2", "10"]}
    assert s.labels.endswith("labels.json")
    img = s.items[0].image()
    assert img.mime == "image/png" and img.width == 16 and img.height == 12


def test_plain_folder_without_numeric_names_indexes_by_position(tmp_path):
    for name in ("b.jpg", "a.png", "c.webp"):
        data = jpeg() if name.endswith("jpg") else png()
        if name.endswith("webp"):
            buf = io.BytesIO()
            Image.new("RGB", (8, 8), (1, 2, 3)).save(buf, format="WEBP")
            data = buf.getvalue()
        (tmp_path / name).write_bytes(data)
    (tmp_path / "notes.txt").write_text("not an image")
    s = load_folder(tmp_path)
    assert [(it.item_id, it.index) for it in s.items] == [("a", 0), ("b", 1), ("c", 2)]
    assert s.items[1].mime == "image/jpeg" and s.labels is None


def test_limit_keeps_labels_checked_against_the_whole_folder(folder):
    s = load_data(folder, limit=2)
    assert [it.item_id for it in s.items] == ["0", "1"]


def test_label_index_naming_no_image_is_an_error(folder):
    (folder / "labels.json").write_text(json.dumps({"Count": [3]}))
    with pytest.raises(DataError, match=r"labels.json.*'Count'.*index 3 names no image"):
        load_data(folder)


@pytest.mark.parametrize("bad, msg", [("[1, 2]", "expected an object"), ('{"A": 3}', "expected a list"),
                                      ('{"A": ["x"]}', "not an image index"), ("{", "bad JSON at line 1")])
def test_bad_label_files(tmp_path, bad, msg):
    p = tmp_path / "labels.json"
    p.write_text(bad)
    with pytest.raises(DataError, match=msg):
        load_label_index(p)


def test_unreadable_image_is_named_or_skipped(folder):
    (folder / "images" / "11.png").write_bytes(png()[:40])  # truncated
    (folder / "images" / "12.jpg").write_bytes(b"not an image at all")
    with pytest.raises(DataError, match=r"11\.png: unreadable image.*skip_unreadable"):
        load_data(folder)
    s = load_data(folder, skip_unreadable=True)
    assert [it.item_id for it in s.items] == ["0", "1", "2", "10"]
    assert [w.rsplit("/", 1)[1] for w, _ in s.skipped] == ["11.png", "12.jpg"]
    assert "unknown format" in s.skipped[1][1]


def test_truncated_jpeg_is_unreadable(tmp_path):
    (tmp_path / "0.jpg").write_bytes(jpeg()[:300])
    with pytest.raises(DataError, match=r"0\.jpg: unreadable"):
        load_folder(tmp_path)


def test_empty_folder(tmp_path):
    with pytest.raises(DataError, match="no images"):
        load_folder(tmp_path)


def write_tsv(path, rows, header=("index", "image", "patterns")):
    lines = ["\t".join(header)] + ["\t".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_tsv_with_patterns_and_pointer(tmp_path):
    p = write_tsv(tmp_path / "x.tsv", [("0", b64(png()), "Color, Count"), ("1", "0", "Text"),
                                       ("5", b64(jpeg()), "")])
    s = load_tsv(p)
    assert [(it.item_id, it.index, it.patterns) for it in s.items] == [
        ("0", 0, ("Color", "Count")), ("1", 1, ("Text",)), ("5", 5, ())]
    assert s.items[1].data == s.items[0].data  # a pointer row shares the image
    assert s.items[2].mime == "image/jpeg"
    assert s.items[0].source.endswith("x.tsv, row 1")


def test_tsv_errors_name_row_and_column(tmp_path):
    with pytest.raises(DataError, match=r"row 2, column 'image': bad base64"):
        load_tsv(write_tsv(tmp_path / "a.tsv", [("0", b64(png()), ""), ("1", "!!!notbase64!!!", "")]))
    with pytest.raises(DataError, match=r"row 1, column 'image': not an image"):
        load_tsv(write_tsv(tmp_path / "b.tsv", [("0", b64(b"hello world, not a picture"), "")]))
    with pytest.raises(DataError, match=r"row 2, column 'index': index 0 appears twice"):
        load_tsv(write_tsv(tmp_path / "c.tsv", [("0", b64(png()), ""), ("0", b64(png()), "")]))
    with pytest.raises(DataError, match=r"no column 'image'"):
        load_tsv(write_tsv(tmp_path / "d.tsv", [("0", "x")], header=("index", "picture")))
    with pytest.raises(DataError, match=r"row 1, column 'index': index 'a'"):
        load_tsv(write_tsv(tmp_path / "e.tsv", [("a", b64(png()), "")]))
    s = load_tsv(write_tsv(tmp_path / "f.tsv", [("0", b64(png()[:30]), ""), ("1", b64(png()), "")]),
                 skip_unreadable=True)
    assert [it.item_id for it in s.items] == ["1"] and "row 1" in s.skipped[0][0]


def test_load_data_dispatch_errors(tmp_path):
    with pytest.raises(DataError, match="no such file or folder"):
        load_data(tmp_path / "missing")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DataError, match="expected a folder of images or a .tsv"):
        load_data(tmp_path / "x.csv")


def test_two_names_for_one_index_is_an_error(tmp_path):
    (tmp_path / "1.png").write_bytes(png())
    (tmp_path / "01.png").write_bytes(png((0, 0, 200)))
    with pytest.raises(DataError, match=r"index 1 again"):
        load_folder(tmp_path)


# -- the released layout: MMGenBench-Test.tsv + MMGenBench-Test-label-index.json, MMGenBench-Domain.tsv --
@pytest.fixture
def released(tmp_path):
    d = tmp_path / "MMGenBench-data"
    d.mkdir()
    write_tsv(d / "MMGenBench-Test.tsv", [(str(i), b64(png((40 * i, 0, 0)))) for i in range(4)],
              header=("index", "image"))
    (d / "MMGenBench-Test-label-index.json").write_text(json.dumps({"Artistic": [0, 3], "Count": ["1", 3],
                                                                    "Text": []}))
    (d / "MMGenBench-Test-label-count.json").write_text(json.dumps({"Artistic": 2, "Count": 2, "Text": 0}))
    write_tsv(d / "MMGenBench-Domain.tsv", [(str(i), b64(jpeg())) for i in range(3)], header=("index", "image"))
    return d


def test_released_test_tsv_reads_the_label_index_beside_it(released):
    s = load_data(released / "MMGenBench-Test.tsv")
    assert s.labels == str(released / "MMGenBench-Test-label-index.json")
    assert [(it.item_id, it.index, it.patterns) for it in s.items] == [
        ("0", 0, ("Artistic",)), ("1", 1, ("Count",)), ("2", 2, ()), ("3", 3, ("Artistic", "Count"))]
    assert s.patterns == {"Artistic": ["0", "3"], "Count": ["1", "3"]}
    assert s.items[0].source.endswith("MMGenBench-Test.tsv, row 1")
    # a limit loads fewer rows; the label index is still checked against all of them
    assert [it.item_id for it in load_data(released / "MMGenBench-Test.tsv", limit=2).items] == ["0", "1"]


def test_released_domain_tsv_has_no_labels(released):
    s = load_data(released / "MMGenBench-Domain.tsv")
    assert s.labels is None and [it.item_id for it in s.items] == ["0", "1", "2"]
    assert s.patterns == {} and s.items[0].mime == "image/jpeg"


def test_a_label_index_given_for_a_tsv_wins_over_its_column_and_the_one_beside_it(released, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"Motion": [2]}))
    s = load_data(released / "MMGenBench-Test.tsv", labels=other)
    assert s.patterns == {"Motion": ["2"]} and s.labels == str(other)
    p = write_tsv(tmp_path / "with_column.tsv", [("0", b64(png()), "Color"), ("1", b64(png()), "Text")])
    assert load_data(p).patterns == {"Color": ["0"], "Text": ["1"]}  # no label index: the column
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"Motion": [1]}))
    assert load_data(p, labels=one).patterns == {"Motion": ["1"]}  # a label index: the column is not read


def test_released_label_index_errors_name_the_file_and_pattern(released):
    labels = released / "MMGenBench-Test-label-index.json"
    labels.write_text(json.dumps({"Artistic": [0], "Count": [7]}))
    with pytest.raises(DataError, match=r"MMGenBench-Test-label-index.json.*'Count'.*index 7 names no image of "
                                        r"MMGenBench-Test.tsv"):
        load_data(released / "MMGenBench-Test.tsv", limit=1)
    labels.write_text('{"Artistic": [0, "x"]}')
    with pytest.raises(DataError, match=r"label-index.json.*'Artistic'.*'x' is not an image index"):
        load_data(released / "MMGenBench-Test.tsv")


def test_released_tsv_bad_rows_name_file_row_and_field(released):
    p = released / "MMGenBench-Test.tsv"
    good = p.read_text().splitlines()
    p.write_text("\n".join(good[:3] + ["3"] + good[4:]) + "\n")
    with pytest.raises(DataError, match=r"MMGenBench-Test.tsv.*row 3.*1 fields, header has 2"):
        load_data(p)
    p.write_text("\n".join(good[:2] + ["1\t" + b64(b"GIF89a but not really")] + good[3:]) + "\n")
    with pytest.raises(DataError, match=r"MMGenBench-Test.tsv.*row 2, column 'image': unreadable image"):
        load_data(p)
    p.write_text("\n".join(good[:2] + ["007\t" + good[1].split("\t")[1], "7\t" + good[1].split("\t")[1]]) + "\n")
    with pytest.raises(DataError, match=r"row 3, column 'index': index 7 appears twice \(first on row 2\)"):
        load_tsv(p)


def test_the_release_folder_itself_points_at_its_tsvs(released):
    with pytest.raises(DataError, match=r"no images .* it holds MMGenBench-Domain.tsv, MMGenBench-Test.tsv: set "
                                        r"data to one of them"):
        load_data(released)


def test_a_label_index_beside_a_tsv_that_links_out_is_refused(released, tmp_path):
    import os

    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps({"A": [0]}))
    labels = released / "MMGenBench-Test-label-index.json"
    labels.unlink()
    os.symlink(outside, labels)
    with pytest.raises(DataError, match="MMGenBench-Test-label-index.json"):
        load_data(released / "MMGenBench-Test.tsv")
