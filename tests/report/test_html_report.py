"""The HTML report (judgekit.report.html): escaping, links, placeholders, and a render in headless
Chromium that proves the relative image links load."""

import hashlib
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from judgekit.report import html as report
from judgekit.report.html import (ReportItem, ReportSection, best_and_worst, image_src,
                                  render_html_report, write_html_report)

SCRIPT_CAPTION = 'A red square.<script>document.title="pwned"</script> & more'
ONERROR_CAPTION = 'Blue tile"><img src=x onerror="document.title=1"> <b>bold?</b>'
GEN_ERROR = "generation failed: CUDA out of memory <oom>"

# saturated colours that the page's own CSS never uses
RED, GREEN, BLUE, MAGENTA, ORANGE = (255, 0, 0), (0, 200, 0), (0, 0, 255), (255, 0, 255), (255, 150, 0)


class _Dom(HTMLParser):
    """Elements (tag, attrs) and the text of a page, as a browser's parser would see them."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.chunks: list[str] = []
        self.title = ""
        self._in_title = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        self.chunks.append(data)
        if self._in_title:
            self.title += data

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == name]


def _assert_no_injection(dom: _Dom) -> None:
    assert dom.tags("script") == []
    for tag, attrs in dom.elements:
        assert not [k for k in attrs if k.lower().startswith("on")], (tag, attrs)
    assert [a for a in dom.tags("img") if a.get("src") == "x"] == []


def _png(store: Path, color: tuple[int, int, int], name: str | None = None) -> Path:
    """A small solid PNG in a content-addressed-store-like folder: <store>/ab/<sha>.png."""
    img = Image.new("RGB", (48, 48), color)
    sha = hashlib.sha256(bytes(color)).hexdigest()
    path = store / "ab" / (name or f"{sha}.png")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
    return path


def _report(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    store = tmp_path / "cache.duckdb.blobs"
    imgs = {
        "red": _png(store, RED),
        "green": _png(store, GREEN),
        "blue": _png(store, BLUE),
        "magenta": _png(store, MAGENTA, name="gen image #2 (50%).png"),  # needs percent-encoding
        "orange": _png(store, ORANGE),
    }
    items = [
        ReportItem(item_id="101", score=0.8123, caption=SCRIPT_CAPTION, raw_caption="</s>" + SCRIPT_CAPTION,
                   original=imgs["red"], generated=imgs["green"], labels=["Color", "Surreal"],
                   note="seed 1234"),
        ReportItem(item_id="7<i>", score=0.5, caption=ONERROR_CAPTION, raw_caption=None,
                   original=imgs["blue"], generated=imgs["magenta"], labels=["Text"]),
        ReportItem(item_id="55", score=None, caption="an orange square", original=imgs["orange"],
                   generated=None, labels=[], error=GEN_ERROR),
    ]
    out = write_html_report(
        tmp_path / "out" / "report.html", title="MMGenBench <run>",
        summary_tables=[("SIM per pattern", [{"candidate": "gpt-4o", "all": 0.5661, "Color": None}]),
                        ("FID", [{"candidate": "gpt-4o", "generator": "flux", "FID": 1.2345}])],
        sections=[ReportSection(title="gpt-4o / flux: best", subtitle="by SIM", items=items[:2]),
                  ReportSection(title="gpt-4o / flux: failed", items=items[2:])],
        meta={"encoder": "openai/clip-vit-large-patch14-336", "spec": 'x"><script>'},
        score_name="SIM")
    return out, imgs


def test_texts_are_escaped_and_images_linked_relative(tmp_path):
    out, imgs = _report(tmp_path)
    assert out == tmp_path / "out" / "report.html"
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text
    assert "&lt;script&gt;" in text
    dom = _Dom(text)
    _assert_no_injection(dom)
    assert SCRIPT_CAPTION in dom.text
    assert ONERROR_CAPTION in dom.text
    assert "</s>" + SCRIPT_CAPTION in dom.text  # the raw caption, in a <details>
    assert len(dom.tags("details")) == 1
    assert "7<i>" in dom.text and dom.tags("i") == []
    assert 'x"><script>' in dom.text
    assert dom.title == "MMGenBench <run>"
    srcs = [a["src"] for a in dom.tags("img")]
    assert len(srcs) == 5
    for src in srcs:
        assert src.startswith("../cache.duckdb.blobs/ab/"), src
    assert "../cache.duckdb.blobs/ab/gen%20image%20%232%20%2850%25%29.png" in srcs
    assert f"generated image missing: {GEN_ERROR}" in dom.text
    assert "SIM 0.812" in dom.text and "SIM 0.500" in dom.text and "0.566" in dom.text
    assert "1.234" in dom.text
    assert "openai/clip-vit-large-patch14-336" in dom.text
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # no temporary file left


def test_missing_file_and_missing_path_show_placeholders(tmp_path):
    gone = tmp_path / "store" / "ab" / "deadbeef.png"
    item = ReportItem(item_id="1", score=0.1, caption="c", original=gone, generated=None)
    page = render_html_report(tmp_path / "out", title="t", sections=[ReportSection(title="s", items=[item])])
    dom = _Dom(page)
    assert dom.tags("img") == []
    assert f"original image missing: file not found: {gone}" in dom.text
    assert "generated image missing: no image" in dom.text


def test_image_src_quotes_and_falls_back_to_a_file_uri(tmp_path, monkeypatch):
    img = tmp_path / "a b" / "x#?.png"
    assert image_src(img, tmp_path / "out") == "../a%20b/x%23%3F.png"
    assert image_src(img, tmp_path / "a b") == "x%23%3F.png"

    def no_relpath(*_a, **_k):
        raise ValueError("path is on mount 'C:', start on mount 'D:'")

    monkeypatch.setattr(report.os.path, "relpath", no_relpath)
    assert image_src(img, tmp_path / "out") == img.as_uri()
    assert img.as_uri().startswith("file:///") and "a%20b/x%23%3F.png" in img.as_uri()


def test_write_replaces_an_existing_report(tmp_path):
    path = tmp_path / "report.html"
    path.write_text("old", encoding="utf-8")
    write_html_report(path, title="new one")
    assert "new one" in path.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_best_and_worst():
    def it(i, s):
        return ReportItem(item_id=i, score=s, caption="")

    items = [it("a", 0.5), it("b", 0.9), it("c", None), it("d", 0.1), it("e", 0.5), it("f", float("nan")),
             it("g", 0.3)]
    best, worst = best_and_worst(items, 2)
    assert [x.item_id for x in best] == ["b", "a"]  # tie 0.5: by id
    assert [x.item_id for x in worst] == ["d", "g"]
    best, worst = best_and_worst(items, 3)
    assert [x.item_id for x in best] == ["b", "a", "e"]
    assert [x.item_id for x in worst] == ["d", "g"]  # fewer than 2k scored: nothing twice
    assert best_and_worst(items, 0) == ([], [])
    with pytest.raises(ValueError):
        best_and_worst(items, -1)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def _run_chromium(exe: str, tmp_path: Path, tag: str, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{tag}"
    profile.mkdir()
    env = dict(os.environ, HOME=str(profile))
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,2000", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}: {proc.stderr[-3000:]}"
    return proc


def _count(img: Image.Image, color: tuple[int, int, int], tol: int = 10) -> int:
    """Pixels within ``tol`` of ``color`` in every channel."""
    px = np.asarray(img.convert("RGB"), dtype=np.int16)
    return int((np.abs(px - np.array(color, dtype=np.int16)) <= tol).all(axis=-1).sum())


def test_renders_in_headless_chromium(tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
    out, _ = _report(tmp_path)
    url = out.resolve().as_uri()

    shot = tmp_path / "shot.png"
    _run_chromium(exe, tmp_path, "shot", f"--screenshot={shot}", url)
    assert shot.is_file() and shot.stat().st_size > 0
    with Image.open(shot) as im:
        rgb = im.convert("RGB")
    assert rgb.width == 1280
    # every linked image is drawn (at about 370 x 370 px): the relative links, and the
    # percent-encoded file name, load
    for name, color in [("red", RED), ("green", GREEN), ("blue", BLUE), ("magenta", MAGENTA),
                        ("orange", ORANGE)]:
        n = _count(rgb, color)
        assert n > 40_000, f"{name} image not rendered ({n} pixels of {color})"

    proc = _run_chromium(exe, tmp_path, "dom", "--dump-dom", url)
    dom = _Dom(proc.stdout)
    _assert_no_injection(dom)
    assert len(dom.tags("img")) == 5
    assert SCRIPT_CAPTION in dom.text
    assert ONERROR_CAPTION in dom.text
    assert f"generated image missing: {GEN_ERROR}" in dom.text
    assert dom.title == "MMGenBench <run>"  # no script of a caption ran (it would set the title)
