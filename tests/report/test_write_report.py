"""The report on disk (judgekit.report.write): thumbnails of every kind of image, placeholders for
the unreadable ones, one file per distinct image, stale thumbnails dropped, and a page rebuilt
from report.json alone after the folder moved."""

import hashlib
import io
import json
import shutil

import pytest
from PIL import Image as PIL

from judgekit.errors import DataError
from judgekit.report.doc import Block, Item, ReportDoc, image, text
from judgekit.report.write import FILES_DIR, rebuild_report, write_report


def _png_rgba(path):
    PIL.new("RGBA", (600, 300), (255, 0, 0, 128)).save(path)  # half-transparent red
    return path


def _png_palette(path):
    im = PIL.new("P", (64, 64), 0)
    im.putpalette([0, 0, 0, 0, 200, 0] + [0] * 762)
    im.paste(1, (0, 0, 32, 64))  # left half green, right half index 0: transparent
    im.save(path, transparency=0)
    return path


def _jpeg(path):
    PIL.new("RGB", (2000, 1000), (0, 0, 255)).save(path, quality=90)
    return path


def _doc(parts):
    return ReportDoc("t", "b", items=[Item("1", "one", [Block("answer", "m", [text("hi"), *parts])])])


def _imgs(doc):
    return list(doc.images())


def _thumb(out, img):
    assert img.src.startswith(f"{FILES_DIR}/") and img.missing is None
    with PIL.open(out / img.src) as im:
        assert im.format == "JPEG"
        return im.convert("RGB").copy()


def test_thumbnails_of_each_kind_and_placeholders_for_the_rest(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    rgba, pal, jpg = _png_rgba(src / "a.png"), _png_palette(src / "p.png"), _jpeg(src / "big.jpg")
    (src / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n this is not the rest of a png")
    trunc = src / "trunc.jpg"
    trunc.write_bytes(jpg.read_bytes()[:400])
    doc = _doc([image(rgba), image(pal), image(jpg, caption="c"), image(src / "gone.png"), image(src / "bad.png"),
                image(trunc), image(data=b"\x00\x01garbage"), image(missing="generation failed")])
    out = tmp_path / "run"
    page = write_report(out, doc)
    assert page == out / "report.html" and page.is_file()
    a, p, j, gone, bad, tr, garbage, failed = _imgs(doc)

    t = _thumb(out, a)
    assert t.size == (384, 192) and (a.width, a.height) == (600, 300)
    r, g, b = t.getpixel((100, 100))
    assert r > 245 and 118 < g < 138 and 118 < b < 138  # composited on white: pink, not dark red
    t = _thumb(out, p)
    assert t.size == (64, 64)
    assert t.getpixel((8, 32))[1] > 180 and min(t.getpixel((56, 32))) > 240  # transparent -> white
    t = _thumb(out, j)
    assert t.size == (384, 192) and (j.width, j.height) == (2000, 1000) and j.caption == "c"

    assert gone.src is None and gone.missing == "gone.png: file not found"
    assert bad.src is None and bad.missing.startswith("bad.png: ")
    assert tr.src is None and tr.missing.startswith("trunc.jpg: cannot decode")
    assert garbage.src is None and garbage.missing == "image data: not an image Pillow can read"
    assert failed.missing == "generation failed" and failed.src is None

    names = sorted(x.name for x in (out / FILES_DIR).iterdir())
    assert names == sorted({a.src.split("/")[1], p.src.split("/")[1], j.src.split("/")[1]})
    assert a.src == f"{FILES_DIR}/{hashlib.sha256(rgba.read_bytes()).hexdigest()[:20]}.jpg"
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    saved_parts = saved["items"][0]["blocks"][0]["parts"]
    assert saved_parts[1] == {"image": {"src": a.src, "width": 600, "height": 300}}
    assert saved_parts[4] == {"image": {"missing": "gone.png: file not found"}}


def test_one_file_per_distinct_image_and_stale_thumbnails_dropped(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    a = _png_rgba(src / "a.png")
    shutil.copy(a, src / "copy.png")
    buf = io.BytesIO()
    PIL.new("RGB", (10, 10), (1, 2, 3)).save(buf, "PNG")
    out = tmp_path / "run"
    files = out / FILES_DIR
    files.mkdir(parents=True)
    stale = files / ("0" * 20 + ".jpg")
    stale.write_bytes(b"old")
    keep = files / "notes.txt"  # not a thumbnail's name: not ours to remove
    keep.write_text("x")
    doc = _doc([image(a), image(a), image(src / "copy.png"), image(data=buf.getvalue()),
                image(data=buf.getvalue())])
    write_report(out, doc)
    srcs = [i.src for i in _imgs(doc)]
    assert srcs[0] == srcs[1] == srcs[2] and srcs[3] == srcs[4] and srcs[0] != srcs[3]
    assert sorted(p.name for p in files.iterdir()) == sorted([srcs[0].split("/")[1], srcs[3].split("/")[1],
                                                              "notes.txt"])
    # the next report shows only the data image: the other thumbnail goes, the shared one stays
    before = (out / srcs[3]).stat().st_mtime_ns
    doc2 = _doc([image(data=buf.getvalue())])
    write_report(out, doc2)
    assert sorted(p.name for p in files.iterdir()) == sorted([srcs[3].split("/")[1], "notes.txt"])
    assert (out / srcs[3]).stat().st_mtime_ns == before  # written once, not again
    assert not [p for p in out.rglob("*.tmp")]


def test_rebuild_after_moving_the_folder_gives_the_same_page(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    doc = _doc([image(_png_rgba(src / "a.png")), image(src / "gone.png")])
    doc.title = 'Run </script><script>alert(1)</script> \u2028'
    page = write_report(tmp_path / "run", doc).read_text(encoding="utf-8")
    shutil.rmtree(src)  # the sources (a cache's blobs) are gone too
    moved = tmp_path / "elsewhere" / "run"
    shutil.move(tmp_path / "run", moved)
    (moved / "report.html").unlink()
    assert rebuild_report(moved) == moved / "report.html"
    assert (moved / "report.html").read_text(encoding="utf-8") == page
    assert rebuild_report(moved).read_text(encoding="utf-8") == page


def test_a_missing_or_invalid_report_json_is_a_data_error_naming_it(tmp_path):
    with pytest.raises(DataError, match=r"report\.json: no report\.json here"):
        rebuild_report(tmp_path)
    (tmp_path / "report.json").write_text('{"title": "t",\n "items": [\n  {"id": 1,}\n]}', encoding="utf-8")
    with pytest.raises(DataError) as e:
        rebuild_report(tmp_path)
    assert str(tmp_path / "report.json") in str(e.value) and "invalid JSON at line 3" in str(e.value)
    (tmp_path / "report.json").write_text('[1, 2]', encoding="utf-8")
    with pytest.raises(DataError, match="not a report document"):
        rebuild_report(tmp_path)
    (tmp_path / "report.json").write_text('{"title": "t", "items": [{"title": "no id"}]}', encoding="utf-8")
    with pytest.raises(DataError, match="not a report document"):
        rebuild_report(tmp_path)
    (tmp_path / "report.json").write_bytes(b'{"title": "\xff"}')
    with pytest.raises(DataError, match="cannot read it"):
        rebuild_report(tmp_path)
    assert not (tmp_path / "report.html").exists()
