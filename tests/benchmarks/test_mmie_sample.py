"""The shipped MMIE sample: reproducible, readable by both loaders, matching its own tables."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from judgekit.benchmarks.mmie.data import CATEGORIES, load_answers, load_items
from mmie_sample import IMAGES, NATIVE_MODEL, SAMPLE_ROWS, main, write_sample
from judgekit.metrics.mmie import load_human_scores
from judgekit.pngtext import LABEL_KEY, read_png_text
from judgekit.resources import samples_dir

ROOT = samples_dir() / "mmie"


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def test_regenerating_gives_the_same_bytes_and_the_shipped_files(tmp_path):
    a, b = write_sample(tmp_path / "a"), write_sample(tmp_path / "b")
    files = _files(a)
    assert files == _files(b) == _files(ROOT)
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
        if rel.suffix == ".png":  # the shipped PNGs may come from another zlib: compare pixels and text
            with Image.open(a / rel) as x, Image.open(ROOT / rel) as y:
                assert x.size == y.size and x.tobytes() == y.tobytes(), rel
            assert read_png_text((a / rel).read_bytes()) == read_png_text((ROOT / rel).read_bytes())
        else:
            assert (a / rel).read_bytes() == (ROOT / rel).read_bytes(), rel


def test_cli_writes_into_the_given_folder(tmp_path, capsys):
    assert main([str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "data.json").is_file()
    assert "wrote the MMIE sample" in capsys.readouterr().out


def test_both_files_load_and_agree():
    released = load_items(ROOT / "data.json")
    scorer = load_items(ROOT / "scorer_format.json")
    assert released.format == "released" and scorer.format == "scorer"
    assert [i.id for i in released] == [i.id for i in scorer] == [r["id"] for r in SAMPLE_ROWS]
    for r, s in zip(released.items, scorer.items):
        assert r.category == s.category
        assert r.question == s.question and r.gt_answer == s.gt_answer
        assert s.model == NATIVE_MODEL and s.answer
    by_cat = {c: sum(i.category == c for i in released) for c in CATEGORIES}
    assert by_cat == {c: 4 for c in CATEGORIES}
    assert len({i.field for i in released}) >= 4
    assert sum(len(i.question_images) >= 2 for i in released) >= 3
    # ground truths that interleave text and images where the task calls for it
    assert all(any(s.is_image for s in i.gt_answer) for i in released if i.code in ("SA", "PBL"))
    answers = load_answers(ROOT / "scorer_format.json")
    assert any(any(s.is_image for s in segs) for _, segs in answers.values())


def test_images_are_small_and_labelled():
    names = sorted(p.name for p in (ROOT / "images").iterdir())
    assert names == sorted(IMAGES)
    for name in names:
        data = (ROOT / "images" / name).read_bytes()
        assert read_png_text(data)[LABEL_KEY] == IMAGES[name][0]
        with Image.open(ROOT / "images" / name) as im:
            assert all(256 <= v <= 384 for v in im.size), name


def test_human_scores_cover_every_item():
    scores = load_human_scores(ROOT / "human_scores.csv")
    assert list(scores) == [r["id"] for r in SAMPLE_ROWS]
    assert all(0 <= v <= 6 for v in scores.values()) and len(set(scores.values())) > 3
