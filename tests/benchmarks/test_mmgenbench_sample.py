"""The shipped MMGenBench sample is what the generator writes, labelled and readable."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from judgekit.benchmarks.mmgenbench.data import load_data
from mmgenbench_sample import (
    DOMAIN_ROWS,
    DOMAIN_TSV,
    N_IMAGES,
    TEST_LABELS,
    TEST_TSV,
    TSV_ROWS,
    domain_scene,
    main,
    sample_scene,
    write_sample,
)
from judgekit.pngtext import read_png_text
from judgekit.resources import samples_dir
from judgekit.sim.scenes import PATTERNS, scene_from_png, scene_patterns

ROOT = Path(__file__).resolve().parents[2] / "data" / "mmgenbench"


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The sample as its command writes it (``main``), once for the module."""
    out = tmp_path_factory.mktemp("mmgenbench-sample") / "out"
    assert main([str(out)]) == 0
    return out


def test_regenerating_gives_the_shipped_sample(tmp_path, written):
    # the command's copy and another one: the same bytes, and the shipped files
    a, b = written, write_sample(tmp_path / "b")
    files = _files(a)
    assert files == _files(b) == _files(ROOT)
    assert len([f for f in files if f.suffix == ".png"]) == N_IMAGES
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
        if (a / rel).read_bytes() != (ROOT / rel).read_bytes():
            # byte-identical here; another zlib may encode the same pixels differently
            assert rel.suffix in (".png", ".tsv"), rel
            if rel.suffix == ".png":
                with Image.open(a / rel) as x, Image.open(ROOT / rel) as y:
                    assert x.tobytes() == y.tobytes(), rel
                assert read_png_text((a / rel).read_bytes()) == read_png_text((ROOT / rel).read_bytes())


def test_labels_are_the_real_format_with_three_images_per_pattern():
    labels = json.loads((ROOT / "labels.json").read_text())
    assert list(labels) == list(PATTERNS)
    for pattern, indices in labels.items():
        assert len(indices) >= 3, pattern
        assert indices == sorted(set(indices)) and all(0 <= i < N_IMAGES for i in indices)
    assert sum(len(v) for v in labels.values()) > N_IMAGES  # multi-label
    for i in range(N_IMAGES):
        scene = scene_from_png((ROOT / "images" / f"{i}.png").read_bytes())
        assert scene == sample_scene(i)
        assert {p for p, idx in labels.items() if i in idx} == set(scene_patterns(scene))
        with Image.open(ROOT / "images" / f"{i}.png") as im:
            assert im.size == (256, 256)


def test_released_layout_holds_the_first_images_and_their_label_index():
    lines = (ROOT / TEST_TSV).read_text().splitlines()
    assert lines[0].split("\t") == ["index", "image"]
    assert len(lines) == TSV_ROWS + 1
    for line in lines[1:]:
        index, image = line.split("\t")
        png = base64.b64decode(image)
        assert scene_from_png(png) == sample_scene(int(index))
        with Image.open(io.BytesIO(png)) as x, Image.open(ROOT / "images" / f"{index}.png") as y:
            assert x.tobytes() == y.tobytes()
    labels = json.loads((ROOT / "labels.json").read_text())
    released = json.loads((ROOT / TEST_LABELS).read_text())
    assert list(released) == list(PATTERNS)
    assert released == {p: [i for i in idx if i < TSV_ROWS] for p, idx in labels.items()}
    # loaded as released: the label index beside the TSV is found and read
    s = load_data(ROOT / TEST_TSV)
    assert s.labels == str(ROOT / TEST_LABELS) and len(s.items) == TSV_ROWS
    assert {it.item_id: set(it.patterns) for it in s.items} == {
        str(i): {p for p, idx in labels.items() if i in idx} for i in range(TSV_ROWS)}


def test_domain_tsv_is_the_released_layout_without_labels():
    lines = (ROOT / DOMAIN_TSV).read_text().splitlines()
    assert lines[0].split("\t") == ["index", "image"] and len(lines) == DOMAIN_ROWS + 1
    s = load_data(ROOT / DOMAIN_TSV)
    assert s.labels is None and s.patterns == {}
    assert [it.item_id for it in s.items] == [str(i) for i in range(DOMAIN_ROWS)]
    for it in s.items:
        assert scene_from_png(it.data) == domain_scene(it.index) != sample_scene(it.index)


def test_sample_is_reached_as_a_shipped_sample_and_the_cli_writes(written):
    assert (samples_dir() / "mmgenbench" / "labels.json").is_file()
    assert "synthetic" in (ROOT / "README.md").read_text()
    assert len(list((written / "images").glob("*.png"))) == N_IMAGES
