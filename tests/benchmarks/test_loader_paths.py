"""Every loader refuses a symlink out of its data folder (and a symlink loop) with the same
message, from judgekit.datapaths; tables that are not UTF-8, and JSON the parser cannot take, are
DataErrors naming the file (and the line or row)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from judgekit.benchmarks.creation_mmbench.data import load_tsv as load_creation, read_human_rating_table
from judgekit.benchmarks.guessbench.data import load_set, load_sets
from judgekit.benchmarks.mmgenbench.data import load_data as load_mmgen, load_label_index
from judgekit.benchmarks.mmie.data import load_items
from judgekit.errors import DataError, SpecError
from judgekit.metrics.mmie import load_human_scores
from judgekit.resources import samples_dir
from judgekit.retrieval.folder import ImageFolderRetriever
from judgekit.tables import read_rows

OUT = r"resolves outside the (data|images|image) folder .* a symlink may not lead out of it"


def _png(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), "red").save(path)
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return _png(tmp_path / "elsewhere" / "secret.png")


def _one_line(e: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(e.value)
    return str(e.value)


# -- symlinks, loader by loader ------------------------------------------------------------------
def test_mmgenbench_folder(tmp_path, outside):
    d = tmp_path / "mg"
    _png(d / "images" / "0.png")
    os.symlink(outside, d / "images" / "1.png")
    with pytest.raises(DataError, match=OUT) as e:
        load_mmgen(d)
    assert str(d / "images" / "1.png") in _one_line(e)
    (d / "images" / "1.png").unlink()
    os.symlink("2.png", d / "images" / "1.png")
    os.symlink("1.png", d / "images" / "2.png")
    with pytest.raises(DataError, match="'images/[12].png' is a symlink loop"):
        load_mmgen(d)


def test_mmgenbench_images_folder_and_labels(tmp_path, outside):
    d = tmp_path / "mg"
    _png(d / "0.png")
    os.symlink(outside.parent, d / "images")
    with pytest.raises(DataError, match=OUT):
        load_mmgen(d)
    os.unlink(d / "images")
    (outside.parent / "labels.json").write_text(json.dumps({"A": [0]}))
    os.symlink(outside.parent / "labels.json", d / "labels.json")
    with pytest.raises(DataError, match=OUT) as e:
        load_mmgen(d)
    assert "labels.json" in _one_line(e)


def test_mmgenbench_a_link_that_stays_inside_is_fine(tmp_path):
    d = tmp_path / "mg"
    _png(d / "images" / "0.png")
    os.symlink("0.png", d / "images" / "1.png")
    assert [it.item_id for it in load_mmgen(d).items] == ["0", "1"]


def _guess_root(tmp_path: Path) -> Path:
    root = tmp_path / "gb"
    shutil.copytree(samples_dir() / "guessbench" / "1", root / "1")
    shutil.copytree(samples_dir() / "guessbench" / "2", root / "2")
    return root


def test_guessbench_set_file_and_set_folder(tmp_path, outside):
    root = _guess_root(tmp_path)
    (root / "1" / "2.png").unlink()
    os.symlink(outside, root / "1" / "2.png")
    with pytest.raises(DataError, match="set 1: '1/2.png' " + OUT):
        load_sets(root)
    with pytest.raises(DataError, match="set 1: '2.png' " + OUT):  # a set alone: its own folder
        load_set(root / "1")
    shutil.rmtree(root / "1")
    shutil.copytree(samples_dir() / "guessbench" / "1", outside.parent / "1")
    os.symlink(outside.parent / "1", root / "1")
    with pytest.raises(DataError, match="set 1: '1' " + OUT):
        load_sets(root)


def test_guessbench_loops_and_links_inside(tmp_path):
    root = _guess_root(tmp_path)
    (root / "1" / "1.png").unlink()
    os.symlink("../2/1.png", root / "1" / "1.png")  # inside the data folder: fine
    assert [s.set_id for s in load_sets(root)] == ["1", "2"]
    os.symlink("9", root / "9")
    with pytest.raises(DataError, match="set 9: '9' is a symlink loop"):
        load_sets(root)


def test_mmie_images(tmp_path, outside):
    tmp_path = tmp_path / "data"  # (outside is beside it)
    _png(tmp_path / "images" / "q.png")
    os.symlink(outside, tmp_path / "images" / "o.png")
    row = {"id": "SA_1", "catagory": "Situational analysis", "field": "literature", "conversations": [
        {"from": "human", "content": [{"text": "Q", "image": "images/o.png"}]},
        {"from": "gpt", "content": [{"text": "A", "image": None}]}]}
    (tmp_path / "d.json").write_text(json.dumps([row]))
    with pytest.raises(DataError, match="image path 'images/o.png' " + OUT):
        load_items(tmp_path / "d.json")


def test_retrieval_image_folder(tmp_path, outside):
    d = tmp_path / "lib"
    _png(d / "cat.png")
    os.symlink(outside, d / "dog.png")
    with pytest.raises(SpecError, match="'dog.png' " + OUT):
        asyncio.run(ImageFolderRetriever(d).start())
    (d / "dog.png").unlink()
    os.symlink("dog.png", d / "dog.png")
    with pytest.raises(SpecError, match="'dog.png' is a symlink loop"):
        asyncio.run(ImageFolderRetriever(d).start())


# -- text that is not UTF-8, JSON the parser cannot take -----------------------------------------
def test_tables_not_utf8_name_the_line_and_byte(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"id,score\nq1,3\nq\xe92,4\n")
    with pytest.raises(DataError, match=r"t\.csv: not UTF-8: line 3, byte 15 \(0xe9\)"):
        read_rows(p)
    with pytest.raises(DataError, match="line 3, byte 15"):
        load_human_scores(p)


def test_creation_tsv_and_human_ratings_not_utf8(tmp_path):
    tsv = tmp_path / "c.tsv"
    raw = (samples_dir() / "creation_mmbench" / "sample.tsv").read_bytes()
    cut = raw.index(b"\n", 2000)
    tsv.write_bytes(raw[:cut] + b"\xff" + raw[cut:])
    line = raw[:cut].count(b"\n") + 1
    with pytest.raises(DataError, match=rf"c\.tsv: not UTF-8: line {line}, byte {cut}"):
        load_creation(tsv)
    csv = tmp_path / "h.csv"
    csv.write_bytes(b"index,human_1\n1,\x80\n")
    with pytest.raises(DataError, match=r"h\.csv: not UTF-8: line 2"):
        read_human_rating_table(csv)
    with pytest.raises(DataError, match="cannot"):
        read_human_rating_table(tmp_path)  # a folder given as the file


@pytest.mark.parametrize("text, why", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"A": [' + "9" * 5000 + "]}", "4300 digits"),
    ('{"A": [0}', "bad JSON at line 1"),
])
def test_json_the_parser_cannot_take(tmp_path, text, why):
    p = tmp_path / "labels.json"
    p.write_text(text)
    with pytest.raises(DataError, match=why) as e:
        load_label_index(p)
    assert len(_one_line(e)) < 400


def test_mmie_jsonl_the_parser_cannot_take(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"id": "SA_1", "n": ' + "9" * 5000 + "}\n")
    with pytest.raises(DataError, match=r"row 1 \(line 1\): bad JSON \(JSONL\): Exceeds the limit"):
        load_items(p)


def test_mmgenbench_image_gone_after_loading_is_a_data_error(tmp_path):
    d = tmp_path / "mg"
    _png(d / "images" / "0.png")
    item = load_mmgen(d).items[0]
    (d / "images" / "0.png").unlink()
    with pytest.raises(DataError, match=r"0\.png: cannot read the image"):
        item.image()
