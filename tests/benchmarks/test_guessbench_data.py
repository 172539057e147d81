"""GuessBench data: the set-folder loader, its errors, and the shipped sample and its generator."""

import io
import json
import shutil
import zlib

import pytest
from PIL import Image, PngImagePlugin

from judgekit.benchmarks.guessbench.data import (
    DEFAULT_SKIP,
    GuessSet,
    load_set,
    load_sets,
    set_folders,
)
from judgekit.benchmarks.guessbench.hints import format_hint, generate_hints, parse_hint
from guessbench_sample import (
    DISTRACTORS,
    EXAMPLE_ANSWER,
    KIND_KEY,
    LABEL_KEY,
    SAMPLE_ANSWERS,
    STAGE_FRACTIONS,
    STAGE_KEY,
    read_png_text,
    retrieval_file_name,
    set_seed_tag,
    stage_cells,
    write_sample,
)
from judgekit.errors import DataError
from judgekit.resources import samples_dir

ROOT = samples_dir() / "guessbench"
SHORT = {"apple", "sword", "pumpkin", "snowman", "house", "fish tank"}
LONG = {"caterpillar", "rocking chair", "lighthouse", "watermelon"}


# --------------------------------------------------------------------------- the shipped sample


def test_sample_loads_ten_sets_in_numeric_order():
    sets = load_sets(ROOT)
    assert [s.set_id for s in sets] == [str(n) for n in range(1, 11)]
    assert {int(s.set_id): s.answer for s in sets} == SAMPLE_ANSWERS
    assert all(isinstance(s, GuessSet) and s.folder == ROOT / s.set_id for s in sets)


def test_sample_hints_are_generate_hints_of_the_set_number():
    for s in load_sets(ROOT):
        assert s.hints == generate_hints(s.answer, seed=int(s.set_id))


def test_sample_images_decode_and_show_the_build_in_three_stages():
    for s in load_sets(ROOT):
        assert len(s.images) == 3
        for stage, img in enumerate(s.images, start=1):
            assert img.mime == "image/png" and (img.width, img.height) == (256, 256)
            with Image.open(io.BytesIO(img.data)) as im:
                im.load()
                assert im.size == (256, 256)
            assert read_png_text(img.data) == {LABEL_KEY: s.answer, STAGE_KEY: str(stage), KIND_KEY: "build"}
        assert len({img.sha256 for img in s.images}) == 3


def test_sample_short_long_split():
    sets = load_sets(ROOT)
    assert {s.answer for s in sets if s.is_short} == SHORT
    assert {s.answer for s in sets if not s.is_short} == LONG
    by_answer = {s.answer: s for s in sets}
    assert by_answer["fish tank"].letters == 8 and by_answer["fish tank"].is_short  # "at most 8"
    assert by_answer["rocking chair"].letters == 12
    assert any(" " in a for a in SHORT) and any(" " in a for a in LONG)


def test_limit_takes_the_first_sets():
    assert [s.set_id for s in load_sets(ROOT, limit=3)] == ["1", "2", "3"]
    assert load_sets(ROOT, limit=0) == []
    with pytest.raises(ValueError):
        load_sets(ROOT, limit=-1)


def test_example_and_retrieval_are_skipped_by_default():
    assert DEFAULT_SKIP == {"example", "retrieval"}
    names = [p.name for p in set_folders(ROOT)]
    assert "example" not in names and "retrieval" not in names
    sets = load_sets(ROOT, skip={"retrieval"})  # the example is a well-formed set of its own
    assert sets[-1].set_id == "example" and len(sets) == 11
    with pytest.raises(DataError, match="set retrieval: missing 1.png"):
        load_sets(ROOT, skip=())


def test_example_is_the_papers_one_shot_glass_of_milk():
    ex = load_set(ROOT / "example")
    assert ex.answer == EXAMPLE_ANSWER == "Glass of Milk"
    assert ex.letters == 11 and not ex.is_short
    r1, r2, r3 = (parse_hint(h).revealed for h in ex.hints)
    assert r1 == {}
    assert r3 == {(0, 1): "l", (0, 4): "s", (2, 3): "k"}
    assert len(r2) == 2 and r2.items() <= r3.items()
    assert ex.hints[2] == format_hint("Glass of Milk", {(0, 1), (0, 4), (2, 3)})
    assert [read_png_text(i.data)[LABEL_KEY] for i in ex.images] == ["Glass of Milk"] * 3


def test_retrieval_folder_has_a_labelled_photo_per_answer_and_distractor():
    folder = ROOT / "retrieval"
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    assert set(labels.values()) == set(SAMPLE_ANSWERS.values()) | set(DISTRACTORS)
    assert len(DISTRACTORS) >= 10 and not set(DISTRACTORS) & set(SAMPLE_ANSWERS.values())
    assert labels["rocking_chair.png"] == "rocking chair" and retrieval_file_name("ice cream") == "ice_cream.png"
    assert sorted(p.name for p in folder.glob("*.png")) == sorted(labels)
    for name, label in labels.items():
        data = (folder / name).read_bytes()
        assert read_png_text(data) == {LABEL_KEY: label, KIND_KEY: "photo"}
        with Image.open(io.BytesIO(data)) as im:
            im.load()


def test_sample_is_small():
    total = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
    assert total < 1_500_000


def test_stages_are_nested_and_about_40_70_100_percent():
    for n, answer in SAMPLE_ANSWERS.items():
        s1, s2, s3 = stage_cells(answer, set_seed_tag(str(n)))
        assert s1 < s2 < s3
        for cells, frac in zip((s1, s2), STAGE_FRACTIONS):
            assert abs(len(cells) / len(s3) - frac) < 0.02


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The sample as its command writes it (``main``), once for the module."""
    from guessbench_sample import main

    out = tmp_path_factory.mktemp("guessbench-sample") / "out"
    assert main([str(out)]) == 0
    return out


def test_generator_is_deterministic_and_reproduces_the_shipped_sample(tmp_path, written):
    # the command's copy and another one: the same bytes, and the shipped files
    a, b = written, write_sample(tmp_path / "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(ROOT) for p in ROOT.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
        if rel.suffix == ".png":  # the shipped PNGs may come from another zlib: compare pixels and text
            with Image.open(a / rel) as x, Image.open(ROOT / rel) as y:
                assert x.size == y.size and x.tobytes() == y.tobytes(), rel
            assert read_png_text((a / rel).read_bytes()) == read_png_text((ROOT / rel).read_bytes())
        else:
            assert (a / rel).read_bytes() == (ROOT / rel).read_bytes(), rel


def test_generator_cli_writes_into_the_given_folder(written):
    assert len(load_sets(written)) == 10


# --------------------------------------------------------------------------- read_png_text


def _chunk(ctype: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + ctype + body + zlib.crc32(ctype + body).to_bytes(4, "big")


def _png(chunks_before=(), ztxt=(), after_idat=()) -> bytes:
    """A small PNG with text chunks (Pillow writes iTXt for text that is not Latin-1); the
    ``after_idat`` ones are put between the pixels and IEND by hand."""
    info = PngImagePlugin.PngInfo()
    for k, v in chunks_before:
        info.add_text(k, v)
    for k, v in ztxt:
        info.add_text(k, v, zip=True)
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(buf, format="PNG", pnginfo=info)
    data = buf.getvalue()
    assert data.endswith(_chunk(b"IEND", b""))
    late = b"".join(_chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("latin-1")) for k, v in after_idat)
    return data[:-12] + late + data[-12:]


def test_read_png_text_reads_text_ztxt_and_itxt_before_idat():
    data = _png(chunks_before=[("a", "1"), ("label", "café"), ("greek", "λόγος")], ztxt=[("z", "zipped")],
                after_idat=[("late", "ignored")])
    assert read_png_text(data) == {"a": "1", "label": "café", "greek": "λόγος", "z": "zipped"}


def test_read_png_text_on_other_bytes_and_truncated_pngs():
    assert read_png_text(b"") == {}
    assert read_png_text(b"\xff\xd8\xff\xe0 not a png") == {}
    data = _png(chunks_before=[("a", "1"), ("b", "2")])
    cut = data.index(b"tEXtb") + 5  # inside the second chunk's data
    assert read_png_text(data[:cut]) == {"a": "1"}
    assert read_png_text(data[:20]) == {}
    # a damaged zTXt is skipped, the rest is read
    bad = _png(chunks_before=[("a", "1")], ztxt=[("z", "zipped")])
    start = bad.index(b"zTXtz\0\0") + 7
    bad = bad[:start] + b"\x00\x00" + bad[start + 2:]
    assert read_png_text(bad) == {"a": "1"}


def test_read_png_text_stops_at_idat():
    data = _png(chunks_before=[("a", "1")], after_idat=[("hidden", "yes")])
    assert b"tEXthidden" in data
    assert read_png_text(data) == {"a": "1"}
    with Image.open(io.BytesIO(data)) as im:  # the test PNG itself is well-formed
        im.load()
        assert im.text.get("hidden") == "yes"


# --------------------------------------------------------------------------- errors and edge cases


@pytest.fixture
def root(tmp_path):
    """A root with three copies of sample sets, as 17, 2 and 5."""
    r = tmp_path / "data"
    for src, dst in (("1", "17"), ("2", "2"), ("4", "5")):
        shutil.copytree(ROOT / src, r / dst)
    return r


def test_missing_root_empty_root_and_root_that_is_a_file(tmp_path):
    with pytest.raises(DataError, match="no such folder"):
        load_sets(tmp_path / "nope")
    (tmp_path / "empty" / "example").mkdir(parents=True)
    (tmp_path / "empty" / ".git").mkdir()
    (tmp_path / "empty" / "README.md").write_text("hi")
    with pytest.raises(DataError, match="no build sets"):
        load_sets(tmp_path / "empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="not a folder"):
        load_sets(tmp_path / "file")


@pytest.mark.parametrize("name", ["1.png", "3.png", "Hint_2.txt", "Answer.txt"])
def test_missing_file_names_set_and_file(root, name):
    (root / "17" / name).unlink()
    with pytest.raises(DataError) as e:
        load_sets(root)
    assert f"set 17: missing {name}" in str(e.value)
    assert e.value.path == str(root / "17" / name)


def test_truncated_image_names_set_and_file(root):
    path = root / "17" / "2.png"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"set 17: 2.png does not decode") as e:
        load_sets(root)
    assert e.value.path == str(path)


def test_damaged_image_is_caught_by_its_crc(root):
    path = root / "5" / "3.png"
    data = bytearray(path.read_bytes())
    i = data.index(b"IDAT") + 40
    data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"set 5: 3.png does not decode"):
        load_set(root / "5")


@pytest.mark.parametrize("content,what", [(b"", "is empty"), (b"GIF? no, text", "is not an image")])
def test_non_image_names_set_and_file(root, content, what):
    (root / "2" / "1.png").write_bytes(content)
    with pytest.raises(DataError, match=f"set 2: 1.png {what}"):
        load_set(root / "2")


def test_truncated_jpeg_is_caught(root):
    buf = io.BytesIO()
    Image.effect_noise((64, 64), 40).convert("RGB").save(buf, format="JPEG")
    (root / "2" / "1.png").write_bytes(buf.getvalue()[:300])
    with pytest.raises(DataError, match="set 2: 1.png does not decode"):
        load_set(root / "2")


def test_jpeg_under_a_png_name_is_read_as_jpeg(root):
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(buf, format="JPEG")
    (root / "2" / "1.png").write_bytes(buf.getvalue())
    gs = load_set(root / "2")
    assert gs.images[0].mime == "image/jpeg" and (gs.images[0].width, gs.images[0].height) == (40, 30)


@pytest.mark.parametrize("content", [b"", b"  \n\t\n", b"\xef\xbb\xbf\n"])
def test_empty_answer_names_set_and_file(root, content):
    (root / "17" / "Answer.txt").write_bytes(content)
    with pytest.raises(DataError, match="set 17: Answer.txt is empty") as e:
        load_sets(root)
    assert e.value.path == str(root / "17" / "Answer.txt")


def test_empty_hint_names_set_and_file(root):
    (root / "5" / "Hint_3.txt").write_bytes(b"\n")
    with pytest.raises(DataError, match="set 5: Hint_3.txt is empty"):
        load_sets(root)


def test_non_utf8_text_names_set_and_file(root):
    (root / "17" / "Answer.txt").write_bytes(b"caf\xe9")
    with pytest.raises(DataError, match="set 17: Answer.txt is not UTF-8"):
        load_sets(root)


def test_text_bom_crlf_and_whitespace(root):
    (root / "17" / "Answer.txt").write_bytes("\ufeff  Rocking Chair \r\n".encode("utf-8"))
    hint = "The answer format is as follows:\n  l     s  \n_ _ _ _ _\nThis means ...  two spaces."
    (root / "17" / "Hint_1.txt").write_bytes(("\ufeff" + hint.replace("\n", "\r\n") + "\r\n").encode("utf-8"))
    (root / "17" / "Hint_2.txt").write_bytes((hint + "\n\n").encode("utf-8"))
    (root / "17" / "Hint_3.txt").write_bytes(hint.encode("utf-8"))
    gs = load_set(root / "17")
    # exactly as the authors' code reads them (Python's text mode): BOM and line breaks kept, \r\n as \n
    assert gs.answer == "\ufeff  Rocking Chair \n" and gs.letters == 12
    assert gs.hints == ("\ufeff" + hint + "\n", hint + "\n\n", hint)
    # judgekit's options (issue 25): drop the BOM, strip the answer
    gs = load_set(root / "17", drop_bom=True, strip_answer=True)
    assert gs.answer == "Rocking Chair" and gs.letters == 12
    assert gs.hints == (hint + "\n", hint + "\n\n", hint)
    (root / "17" / "Hint_3.txt").write_bytes(hint.replace("\n", "\r").encode("utf-8"))  # old Mac line breaks
    assert load_set(root / "17").hints[2] == hint


@pytest.mark.parametrize("text", [".", " \u3002\n", "..."])
def test_an_answer_without_a_letter_is_refused(root, text):
    # the reference would strip one period and count the empty rest as found in every reply
    (root / "17" / "Answer.txt").write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=r"17/Answer.txt: set 17: Answer.txt has no letter or digit"):
        load_set(root / "17")


def test_numeric_sort_then_names_and_ignored_entries(root):
    for name in ("10", "03", "b", "a"):
        shutil.copytree(ROOT / "3", root / name)
    for name in (".hidden", "example", "retrieval"):
        (root / name).mkdir()
    (root / "notes.txt").write_text("not a set")
    (root / "99.png").write_bytes(b"not a set either")
    assert [p.name for p in set_folders(root)] == ["2", "03", "5", "10", "17", "a", "b"]
    assert [s.set_id for s in load_sets(root)] == ["2", "03", "5", "10", "17", "a", "b"]
    assert [s.set_id for s in load_sets(root, limit=2)] == ["2", "03"]
    assert [s.set_id for s in load_sets(root, skip={"a", "example", "retrieval"})][-2:] == ["17", "b"]


def test_a_broken_set_after_the_limit_is_not_read(root):
    (root / "17" / "Answer.txt").unlink()
    assert [s.set_id for s in load_sets(root, limit=2)] == ["2", "5"]


def test_load_set_of_a_missing_folder(tmp_path):
    with pytest.raises(DataError, match="set 9: no such folder"):
        load_set(tmp_path / "9")
