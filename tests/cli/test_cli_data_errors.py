"""Bad data met through the CLI: one line naming the file (row, field), exit 2, no traceback.
The MMIE image paths of issue 11 (a symlink loop, a 5,000-character name, a NUL byte, a symlink
out of the folder) and tables that are not UTF-8."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from oneline import assert_user_error, invoke

from judgekit.resources import samples_dir

# the MMIE sample's scoring extras are left out so only data.json and its images are read
MMIE = ["--limit", "1", "--set", "options.native_answers=[]", "--set", "options.human_scores=''"]
FIELD = "column 'conversations[0].content[2].image'"


@pytest.fixture
def mmie(tmp_path: Path) -> tuple[Path, list]:
    d = tmp_path / "mmie"
    shutil.copytree(samples_dir() / "mmie" / "images", d / "images")
    rows = json.loads((samples_dir() / "mmie" / "data.json").read_text())
    assert rows[0]["conversations"][0]["content"][2]["image"]  # the slot the cases below replace
    return d, rows


def _mmie_with_image(d: Path, rows: list, ref: str) -> Path:
    rows[0]["conversations"][0]["content"][2]["image"] = ref
    p = d / "data.json"
    p.write_text(json.dumps(rows))
    return p


@pytest.mark.parametrize("case", ["loop", "long", "nul", "outside"])
def test_mmie_image_paths(mmie, tmp_path, case):
    d, rows = mmie
    if case == "loop":
        os.symlink("b.png", d / "images" / "a.png")
        os.symlink("a.png", d / "images" / "b.png")
        ref, why = "images/a.png", "is a symlink loop"
    elif case == "long":
        ref, why = "images/" + "x" * 5000 + ".png", "(5011 characters) has a name of 5004 characters"
    elif case == "nul":
        ref, why = "images/a\0b.png", "contains a NUL byte"
    else:
        (tmp_path / "secret.png").write_bytes((d / "images" / "SA_0001_q1.png").read_bytes())
        os.symlink(tmp_path / "secret.png", d / "images" / "o.png")
        ref, why = "images/o.png", "resolves outside the images folder"
    data = _mmie_with_image(d, rows, ref)
    for command in ("estimate", "run"):
        r = invoke(command, "mmie", *MMIE, "--set", f"data={data}", "--cache", tmp_path / "c.duckdb",
                   "--out", tmp_path / "o") if command == "run" else \
            invoke(command, "mmie", *MMIE, "--set", f"data={data}", "--cache", tmp_path / "c.duckdb")
        line = assert_user_error(r, str(data), "row 1 (id 'SA_0001')", FIELD, why)
        assert len(line) < 600


def test_mmie_data_not_utf8(mmie, tmp_path):
    d, rows = mmie
    p = d / "data.json"
    p.write_bytes(json.dumps(rows).encode().replace(b"windy", b"wi\xffndy", 1))
    assert_user_error(invoke("estimate", "mmie", *MMIE, "--set", f"data={p}", "--cache", tmp_path / "c.duckdb"),
                      str(p), "not UTF-8: line 1, byte")


def test_creation_tsv_not_utf8(tmp_path):
    p = tmp_path / "c.tsv"
    raw = (samples_dir() / "creation_mmbench" / "sample.tsv").read_bytes()
    p.write_bytes(raw.replace(b"\t", b"\t\xfe", 1))
    assert_user_error(invoke("estimate", "quickstart", "--set", f"data={p}", "--cache", tmp_path / "c.duckdb"),
                      str(p), "not UTF-8: line 1")


def test_guessbench_hint_not_utf8_and_set_linked_out(tmp_path):
    root = tmp_path / "gb"
    shutil.copytree(samples_dir() / "guessbench" / "1", root / "1")
    (root / "1" / "Hint_2.txt").write_bytes(b"a _ \xff\n")
    args = ("estimate", "guessbench", "--set", f"data={root}", "--cache", tmp_path / "c.duckdb")
    assert_user_error(invoke(*args), str(root / "1" / "Hint_2.txt"), "not UTF-8")
    shutil.rmtree(root / "1")
    os.symlink(samples_dir() / "guessbench" / "1", root / "1")
    assert_user_error(invoke(*args), str(root / "1"), "resolves outside the data folder")


def test_mmgenbench_image_linked_out(tmp_path):
    d = tmp_path / "mg"
    shutil.copytree(samples_dir() / "mmgenbench", d)
    os.symlink(samples_dir() / "guessbench" / "1" / "1.png", d / "images" / "999.png")
    assert_user_error(invoke("estimate", "mmgenbench", "--limit", "1", "--set", f"data={d}",
                             "--cache", tmp_path / "c.duckdb"),
                      str(d / "images" / "999.png"), "resolves outside the data folder")


def test_guessbench_earlier_benchmarks_is_read_before_any_call(tmp_path):
    bad = tmp_path / "earlier.csv"
    bad.write_bytes(b"model,mmlu\nsim-strong,0.7\nsim-weak,\xff\n")
    assert_user_error(invoke("estimate", "guessbench", "--set", f"options.earlier_benchmarks={bad}",
                             "--cache", tmp_path / "c.duckdb"), str(bad), "not UTF-8: line 3")


def test_retrieval_image_folder_linked_out(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(samples_dir() / "guessbench" / "1" / "1.png", lib / "cat.png")
    os.symlink(samples_dir() / "guessbench" / "2" / "1.png", lib / "dog.png")
    r = invoke("estimate", "guessbench", "--limit", "1", "--cache", tmp_path / "c.duckdb",
               "--set", "models.search.provider=image_folder", "--set", f"models.search.path={lib}",
               "--set", "models.search.sim={}", "--set", "options.approaches=['image_retrieval']")
    assert_user_error(r, str(lib), "'dog.png'", "resolves outside the image folder")
