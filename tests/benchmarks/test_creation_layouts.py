"""Creation-MMBench in its released layouts: the Hugging Face parquet loads to the same items as the
VLMEvalKit TSV; the reference's loading rules (rows without images, pointers, image_path); the fast
image decoding reads what the old path read."""

from __future__ import annotations

import ast
import base64
import csv
import io
import json
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from judgekit.benchmarks.creation_mmbench.data import load_data, load_tsv, tsv_to_parquet
from judgekit.image_cells import _b64decode, jpeg_size, split_image_list
from judgekit.benchmarks.creation_mmbench.parquet import HF_COLUMNS
from judgekit.cli.main import cli
from judgekit.errors import DataError
from judgekit.resources import samples_dir

SAMPLE_DIR = samples_dir() / "creation_mmbench"
SAMPLE_TSV = SAMPLE_DIR / "sample.tsv"
SAMPLE_PARQUET = SAMPLE_DIR / "data" / "test-00000-of-00001.parquet"
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _jpeg(w: int = 12, h: int = 9, colour: str = "red", **save) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), colour).save(buf, format="JPEG", **save)
    return buf.getvalue()


def _png(w: int = 8, h: int = 6) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), "blue").save(buf, format="PNG")
    return buf.getvalue()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


CRITERIA = repr({"General Subjective Criteria": 'be "good"\n\tand kind', "Visual Factuality Criteria": "see red"})


def _row(index: str, **over: str) -> dict[str, str]:
    row = {c: "" for c in HF_COLUMNS}
    row.update(index=index, question=f"Question {index}?", task_name="story_continue", source="test",
               criteria=CRITERIA, image_path=f"{index}.jpg", reference_answer_by_gpt4o="An answer.",
               image=_b64(_jpeg(10 + int(index), 7)))
    row.update(over)
    return row


def _write_tsv(path: Path, rows: list[dict[str, str]], quoting: int = csv.QUOTE_MINIMAL) -> Path:
    """As VLMEvalKit writes a TSV: pandas to_csv(sep='\\t', index=False), minimal or full quoting."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=quoting, lineterminator="\n")
        w.writerow(HF_COLUMNS)
        for r in rows:
            w.writerow([r[c] for c in HF_COLUMNS])
    return path


# --------------------------------------------------------------------------- the shipped sample


def test_shipped_parquet_is_the_hugging_face_layout_and_loads_the_tsv_items():
    tsv, parquet, folder = load_data(SAMPLE_TSV), load_data(SAMPLE_PARQUET), load_data(SAMPLE_DIR)
    assert len(tsv) == 12 and tsv.items == parquet.items == folder.items
    assert tsv.warnings == parquet.warnings == []
    con = duckdb.connect()
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))",
                             [str(SAMPLE_PARQUET)]).fetchall())
    assert list(types) == list(HF_COLUMNS)
    assert types.pop("image") == "STRUCT(bytes BLOB, path VARCHAR)[]"
    assert set(types.values()) == {"VARCHAR"}
    (meta,) = con.execute("SELECT value FROM parquet_kv_metadata(?) WHERE key = 'huggingface'",
                          [str(SAMPLE_PARQUET)]).fetchone()
    features = json.loads(meta)["info"]["features"]
    assert features["image"] == {"feature": {"_type": "Image"}, "_type": "Sequence"}
    # the pointer row holds the images it points to, named by its own image_path
    images = dict(con.execute("SELECT index, image FROM read_parquet(?)", [str(SAMPLE_PARQUET)]).fetchall())
    assert [im["bytes"] for im in images["3"]] == [im["bytes"] for im in images["0"]]


# --------------------------------------------------------------------------- TSV = parquet


@pytest.mark.parametrize("quoting", [csv.QUOTE_MINIMAL, csv.QUOTE_ALL])
def test_tsv_and_parquet_of_the_same_rows_load_identical_items(tmp_path, quoting):
    rows = [
        _row("1", question='Line one\n\tline "two"\r\nthree', ground_truth="nan", role=" spaced "),
        _row("2", image="1", image_path="2.jpg", ground_truth='a "truth"'),
        _row("3", image=repr([_b64(_jpeg(5, 5)), _b64(_png())]), image_path="['3_0.jpg', '3_1.png']"),
        _row("4", image="", criteria="plain text criteria, subjective only"),  # no image: left out
        _row("5", image="2"),  # a pointer to an earlier pointer
        _row("6", image=json.dumps([_b64(_jpeg(3, 4)), _b64(_jpeg(4, 3)), _b64(_jpeg(6, 6))]),
             image_path="['a.jpg', 'b.jpg']"),  # three images, two names: the third is never sent
        _row("7", image="None"),  # pandas reads None as NA: left out
        _row("8", reference_answer_by_gpt4o="日本語 ✓ — café\n\n**bold**"),
    ]
    tsv = _write_tsv(tmp_path / "c.tsv", rows, quoting)
    parquet = tsv_to_parquet(tsv, tmp_path / "data" / "test-00000-of-00001.parquet")
    a, b, c = load_data(tsv), load_data(parquet), load_data(tmp_path)
    assert a.items == b.items == c.items
    assert [it.index for it in a] == ["1", "2", "3", "5", "6", "8"]
    assert a.warnings == b.warnings
    assert [w.split(":")[0] for w in a.warnings] == ["row 4 (index 4)", "row 7 (index 7)", "row 6 (index 6)",
                                                      "1 ground_truth cell spelled like a pandas missing value "
                                                      "(NA, N/A, NULL, None, nan, ...)"]  # row 1's "nan"
    by = a.by_index()
    assert by["1"].question == 'Line one\n\tline "two"\r\nthree' and by["1"].role == " spaced "
    assert by["1"].ground_truth == "" and by["2"].ground_truth == 'a "truth"'
    assert by["5"].images == by["2"].images == by["1"].images
    assert [im.mime for im in by["3"].images] == ["image/jpeg", "image/png"]
    assert [(im.width, im.height) for im in by["6"].images] == [(3, 4), (4, 3)]
    assert by["8"].reference_answer == "日本語 ✓ — café\n\n**bold**"


def _parquet(path: Path, image_type: str, images: list, extra: str = "") -> Path:
    con = duckdb.connect()
    cols = ", ".join(f'"{c}" VARCHAR' for c in HF_COLUMNS if c != "image")
    con.execute(f'CREATE TABLE t ({cols}, "image" {image_type}{extra})')
    for k, image in enumerate(images):
        r = _row(str(k))
        con.execute(f"INSERT INTO t VALUES ({', '.join('?' for _ in HF_COLUMNS)})",
                    [r[c] for c in HF_COLUMNS if c != "image"] + [image])
    con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    return path


def test_parquet_image_forms(tmp_path):
    j, p = _jpeg(9, 4), _png()
    one = {"bytes": j, "path": None}
    forms = {
        "STRUCT(bytes BLOB, path VARCHAR)[]": [[one, {"bytes": p, "path": "x.png"}]],
        "STRUCT(path VARCHAR, bytes BLOB)": [{"path": "a.jpg", "bytes": j}],
        "BLOB[]": [[j, p]],
        "BLOB": [j],
        "VARCHAR": [_b64(j)],  # base64 text, as the TSV cell
    }
    for k, (typ, images) in enumerate(forms.items()):
        data = load_data(_parquet(tmp_path / f"{k}.parquet", typ, images))
        (item,) = data.items
        expected = [im["bytes"] if isinstance(im, dict) else im for im in (images[0] if isinstance(images[0], list)
                                                                          else [images[0]])]
        if typ == "VARCHAR":
            expected = [j]
        assert [im.data for im in item.images] == expected, typ
    # an index column of integers is read as text, as pandas' str(x)
    con = duckdb.connect()
    con.execute(f"COPY (SELECT 7 AS index, * EXCLUDE (index) FROM read_parquet('{tmp_path / '0.parquet'}')) "
                f"TO '{tmp_path / 'int.parquet'}' (FORMAT parquet)")
    assert [it.index for it in load_data(tmp_path / "int.parquet")] == ["7"]


def test_parquet_errors_name_the_file_row_and_column(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match=r"bad\.parquet: not a readable parquet file"):
        load_data(bad)
    with pytest.raises(DataError, match="column 'image'.*INTEGER, not a sequence of images"):
        load_data(_parquet(tmp_path / "int.parquet", "INTEGER", [3]))
    with pytest.raises(DataError, match=r"row 1 \(index 0\), column 'image': image 2 of 2 has no bytes "
                                        r"\(only a path, 'far/away.jpg'\)"):
        load_data(_parquet(tmp_path / "nobytes.parquet", "STRUCT(bytes BLOB, path VARCHAR)[]",
                           [[{"bytes": _jpeg(), "path": None}, {"bytes": None, "path": "far/away.jpg"}]]))
    with pytest.raises(DataError, match="image 1 of 2: bytes are not a decodable image"):
        load_data(_parquet(tmp_path / "junk.parquet", "BLOB[]", [[b"junk", _jpeg()]]))
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * EXCLUDE (criteria) FROM read_parquet('{tmp_path / 'junk.parquet'}')) "
                f"TO '{tmp_path / 'nocrit.parquet'}' (FORMAT parquet)")
    with pytest.raises(DataError, match="missing required column 'criteria'"):
        load_data(tmp_path / "nocrit.parquet")
    con.execute(f"COPY (SELECT ['x'] AS criteria, * EXCLUDE (criteria) FROM read_parquet('{tmp_path / 'junk.parquet'}'))"
                f" TO '{tmp_path / 'listcrit.parquet'}' (FORMAT parquet)")
    with pytest.raises(DataError, match=r"column 'criteria'.*VARCHAR\[\], not text"):
        load_data(tmp_path / "listcrit.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="without the dataset's parquet files"):
        load_data(tmp_path / "empty")


# --------------------------------------------------------------------------- the reference's loading rules


def test_rows_without_images_are_left_out_and_a_pointer_to_one_is_an_error(tmp_path):
    rows = [_row("1"), _row("2", image=""), _row("3", image="nan"), _row("4", image="1")]
    data = load_tsv(_write_tsv(tmp_path / "a.tsv", rows))
    assert [it.index for it in data] == ["1", "4"]
    assert data.warnings == [f"row {n} (index {n}): no image; left out, as the reference leaves out rows without one"
                             for n in (2, 3)]
    rows[3] = _row("4", image="2")
    with pytest.raises(DataError, match=r"row 4 \(index 4\), column 'image': image pointer to index '2', "
                                        "which has no image"):
        load_tsv(_write_tsv(tmp_path / "b.tsv", rows))


def test_images_beyond_the_file_names_are_never_sent(tmp_path):
    three = repr([_b64(_jpeg(3, 3)), _b64(_jpeg(4, 4)), _b64(_jpeg(5, 5))])
    rows = [_row("1", image=three, image_path="['a.jpg', 'b.jpg']"),
            _row("2", image=three, image_path="['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg']"),
            _row("3", image=three, image_path="")]
    data = load_tsv(_write_tsv(tmp_path / "a.tsv", rows))
    assert [len(it.images) for it in data] == [2, 3, 3]
    assert data.items[0].image_paths == ("a.jpg", "b.jpg")
    assert len(data.warnings) == 2 and "the last 1 is left out" in data.warnings[0]


def test_not_utf8_deep_in_a_row_through_the_cli_is_one_line(tmp_path):
    raw = SAMPLE_TSV.read_bytes()
    cut = raw.index(b"Mia Chen") if b"Mia Chen" in raw else raw.index(b"\n", len(raw) // 2)
    bad = tmp_path / "c.tsv"
    bad.write_bytes(raw[:cut] + b"\xe9" + raw[cut + 1:])
    line = raw[:cut].count(b"\n") + 1
    r = CliRunner().invoke(cli, ["estimate", "quickstart", "--set", f"data={bad}", "--cache", str(tmp_path / "c.db")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    (msg,) = r.stderr.splitlines()
    assert re.match(rf"error: {re.escape(str(bad))}: not UTF-8: line {line}, byte {cut} \(0xe9\) \(data row \d+\)",
                    msg), msg


def test_the_cli_estimates_the_parquet_as_the_tsv(tmp_path):
    outs = []
    for data in (SAMPLE_TSV, SAMPLE_PARQUET):
        # one cache path for both (an estimate makes no cache file), since the output names it
        r = CliRunner().invoke(cli, ["estimate", "quickstart", "--set", f"data={data}", "--cache",
                                     str(tmp_path / "cache.db")])
        assert r.exit_code == 0, r.output
        outs.append(r.output)
    assert outs[0] == outs[1]


# --------------------------------------------------------------------------- fast image decoding


_ORIENTED = Image.Exif()
_ORIENTED[0x0112] = 6


@pytest.mark.parametrize("mode, save", [
    ("RGB", {}), ("RGB", {"progressive": True}), ("RGB", {"subsampling": 0, "quality": 95}),
    ("L", {}), ("CMYK", {}), ("RGB", {"exif": _ORIENTED.tobytes(), "comment": b"hi"}),  # rotated: size as stored
    ("RGB", {"icc_profile": b"\x00" * 300, "dpi": (300, 300)}),
])
def test_jpeg_size_is_pillows(mode, save):
    for w, h in ((1, 1), (17, 3), (1000, 700), (4096, 31)):
        buf = io.BytesIO()
        Image.new(mode, (w, h)).save(buf, format="JPEG", **save)
        data = buf.getvalue()
        with Image.open(io.BytesIO(data)) as im:
            assert jpeg_size(data) == im.size == (w, h)


def test_jpeg_size_leaves_the_unusual_to_pillow():
    j = _jpeg(5, 4)
    assert jpeg_size(j[:2] + b"junk" + j[2:]) is None
    assert jpeg_size(j[:20]) is None  # no frame header before the end
    assert jpeg_size(b"\x89PNG") is None


B64_CHARS = "ABCxyz019+/="


@PROPS
@given(items=st.lists(st.text(alphabet=B64_CHARS, max_size=12), min_size=0, max_size=4),
       form=st.sampled_from(["repr", "json", "tight", "spaced"]))
def test_image_list_split_is_literal_eval(items, form):
    cell = {"repr": repr(items), "json": json.dumps(items), "tight": "[" + ",".join(map(repr, items)) + "]",
            "spaced": "[ " + " , ".join(map(repr, items)) + " ]"}[form]
    try:
        expected = ast.literal_eval(cell)
        ok = bool(expected)
    except (ValueError, SyntaxError):
        ok = False
    if ok:
        assert split_image_list(cell) == expected
    else:
        with pytest.raises(ValueError):
            split_image_list(cell)


@PROPS
@given(text=st.text(alphabet="QUJD=+/ \n\t\r!é", max_size=24))
def test_b64decode_reads_what_the_old_path_read(text):
    def old(t: str):
        try:
            return base64.b64decode(re.sub(r"\s+", "", t), validate=True)
        except (ValueError, base64.binascii.Error) as e:
            return type(e)

    def new(t: str):
        try:
            return _b64decode(t)
        except (ValueError, base64.binascii.Error) as e:
            return type(e)

    assert new(text) == old(text)
    assert new(_b64(text.encode())) == old(_b64(text.encode()))


_PIECES = [_b64(_jpeg(4, 3)), _b64(_png()), _b64(_jpeg(4, 3))[:40] + " \n" + _b64(_jpeg(4, 3))[40:], "",
           "!!", _b64(b"not an image, just text"), "QUJD'", 'QU"JD', "QUJD=QUJD", "QUJD, 'QUJD"]


@PROPS
@given(pieces=st.lists(st.sampled_from(_PIECES), min_size=0, max_size=3),
       form=st.sampled_from(["repr", "json", "tight", "spaced"]))
def test_image_list_cells_decode_as_the_old_path(pieces, form):
    from judgekit.image_cells import decode_image_cell

    cell = {"repr": repr(pieces), "json": json.dumps(pieces), "tight": "[" + ",".join(map(repr, pieces)) + "]",
            "spaced": "[ " + " , ".join(map(repr, pieces)) + " ]"}[form]

    def old():  # literal_eval, then each string without white space through b64decode(validate=True)
        try:
            value = ast.literal_eval(cell)
        except (ValueError, SyntaxError):
            return "unparseable"
        if not value:
            return "empty"
        out = []
        for piece in value:
            try:
                data = base64.b64decode(re.sub(r"\s+", "", piece), validate=True)
            except ValueError:
                return "bad base64"
            if not (data.startswith(b"\xff\xd8") or data.startswith(b"\x89PNG")):
                return "not an image"
            out.append(data)
        return out

    try:
        got = [im.data for im in decode_image_cell(cell, path="p", where=1)]
    except DataError as e:
        kinds = {"unparseable list": "unparseable", "non-empty list": "empty", "bad base64": "bad base64",
                 "not a decodable image": "not an image"}
        got = next(kind for fragment, kind in kinds.items() if fragment in str(e))
    assert got == old()


# ------------------------------------------------------------------------- the fast base64 decoder

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _strict(text: str):
    import binascii

    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError) as e:
        return type(e)


@settings(max_examples=600)
@given(st.one_of(st.text(alphabet="ABab01+/=", max_size=16), st.text(alphabet="ABab01+/=\n -_.", max_size=12),
                 st.binary(max_size=40).map(lambda b: __import__("base64").b64encode(b).decode()),
                 st.text(max_size=12)))
def test_the_fast_decoder_reads_exactly_what_the_strict_decoder_reads(text):
    """pybase64 first, the strict decoder for what it refuses: the same bytes or the same error
    as binascii's strict decoder alone, on any text."""
    import binascii

    from judgekit.image_cells import strict_b64decode

    try:
        got = strict_b64decode(text)
    except (binascii.Error, ValueError) as e:
        got = type(e)
    want = _strict(text)
    assert got == want or (isinstance(got, type) and isinstance(want, type)), (text, got, want)
