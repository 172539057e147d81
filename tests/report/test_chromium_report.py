"""The report page in headless Chromium, from a folder moved after it was written: the item
browser's check mode (every matching item open, every image waited for) loads the thumbnails by
their relative paths under the Content-Security-Policy, shows a model's markup as text, marks a
verdict's source; the address's search narrows the items and its item opens.  Three Chromium runs."""

import os
import re
import shutil
from html.parser import HTMLParser

import numpy as np
import pytest
from PIL import Image as PIL

from judgekit.report.doc import Block, Chart, Headline, Item, ReportDoc, Series, image, text
from judgekit.report.write import write_report

EVIL = '<script>document.title="pwned"</script><img src=x onerror="document.title=1">'
LONG = "\n".join(f"roses are red, line {i}" for i in range(60))
REPLY = "Both are fine. Not [[A>>B]] here.\nFinal verdict: [[A>>B]]\nthanks"


class _Dom(HTMLParser):
    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.marks: list[str] = []
        self.texts: list[str] = []
        self._stack: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in ("img", "input", "br", "meta", "rect", "line"):
            self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data):
        if self._stack and self._stack[-1] == "mark":
            self.marks.append(data)
        if "script" not in self._stack and "style" not in self._stack:
            self.texts.append(data)

    def body(self) -> dict:
        return next(a for t, a in self.elements if t == "body")


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory):
    root = tmp_path_factory.mktemp("chromium_report")
    src = root / "blobs"
    src.mkdir()
    grad = np.linspace(0, 255, 200 * 300, dtype=np.uint8).reshape(200, 300)
    PIL.fromarray(np.stack([grad, 255 - grad, np.full_like(grad, 90)], -1)).save(src / "photo.png")
    PIL.new("RGBA", (500, 500), (0, 158, 115, 255)).save(src / "green.png")
    PIL.new("RGB", (120, 80), (213, 94, 0)).save(src / "orange.jpg")
    items = [
        Item("q1", "A poem", [Block("question", "prompt", [text("Write a poem."), image(src / "photo.png", caption="input")]),
                              Block("answer", "gpt-4o", [text(EVIL)], group="answers"),
                              Block("baseline", "baseline", [text(LONG)], group="answers"),
                              Block("judgment", "judge · A/B", [text(REPLY)], verdict="A>>B", highlight="[[A>>B]]",
                                    tone="good")],
             tags={"category": "literary"}, score="Reward +100"),
        Item("g1", "Guess the animal", [Block("turn", "round 1", [text("What is it?"), text("_ _ _ _\nF R O G", mono=True),
                                                                   image(src / "green.png")], role="user"),
                                        Block("turn", "gpt-4o", [text("a frog")], role="assistant"),
                                        Block("turn", "extractor", [text("frog")], role="extractor")],
             tags={"category": "guess"}, flags=["reasked"]),
        Item("m1", "Generated image", [Block("answer", "flux", [image(src / "orange.jpg", caption="seed 1"),
                                                                 image(src / "gone.png", caption="seed 2")])],
             tags={"category": ["generation", "guess"]}, flags=["failed"], score="SIM 0.71"),
    ] + [Item(f"x{i}", f"filler {i}", [Block("note", "n", [text(f"plain item {i}")], status="skipped")],
              tags={"category": "literary"}) for i in range(3)]
    doc = ReportDoc("Report <check>", "demo", meta={"judge": "gpt-4o"},
                    headline=[Headline("gpt-4o", "Reward", 40.0, 20.0, 60.0, judge="gpt-4o"),
                              Headline("claude", "Reward", -10.0, -30.0, 5.0, judge="gpt-4o")],
                    charts=[Chart("Reward per category", ["literary", "guess"],
                                  [Series("gpt-4o", [40.0, 20.0], [20.0, 5.0], [60.0, 35.0]),
                                   Series("claude", [-10.0, None], [-30.0, None], [5.0, None])], range=(-100, 100))],
                    items=items)
    write_report(root / "written" / "run", doc)
    moved = root / "moved" / "run"
    shutil.move(root / "written" / "run", moved)
    return chromium, moved / "report.html", root


def test_check_mode_loads_every_thumbnail_and_keeps_model_text_as_text(page):
    chromium, html, root = page
    dom = _Dom(chromium.dom(html.as_uri() + "#check"))
    body = dom.body()
    assert body.get("data-ready") == "1"
    assert (body["data-items"], body["data-images-ok"], body["data-images-broken"]) == ("6", "3", "0")
    imgs = [a for t, a in dom.elements if t == "img"]
    assert len(imgs) == 3 and all(re.fullmatch(r"report_files/[0-9a-f]{20}\.jpg", a["src"]) for a in imgs)
    # the model's markup is text: no element of it, no handler, the title untouched
    assert [a.get("type") for t, a in dom.elements if t == "script"] == ["application/json", None]
    assert not [a for t, a in dom.elements if t == "img" and a.get("src") == "x"]
    assert not [(t, a) for t, a in dom.elements if any(k.startswith("on") for k in a)]
    assert EVIL in "".join(dom.texts)
    assert next(a for t, a in dom.elements if t == "title") is not None and "pwned" not in "".join(dom.texts[:3])
    # the LAST occurrence of the verdict's source is marked
    assert dom.marks == ["[[A>>B]]"]
    joined = "".join(dom.texts)
    assert "Final verdict: [[A>>B]]\nthanks" in joined
    assert "image missing: gone.png: file not found" in joined
    assert "6 of 6 items" in joined
    assert LONG in joined and "show all (60 lines)" in joined  # folded, not cut
    assert [a["class"] for t, a in dom.elements if t == "div" and "text" in (a.get("class") or "").split()
            and "folded" in a["class"]] == ["text folded"]
    assert [a["class"] for t, a in dom.elements if t == "span" and "verdict" in (a.get("class") or "")] == [
        "verdict tone-good"]
    assert [a["class"] for t, a in dom.elements if t == "div" and "mono" in (a.get("class") or "")] == ["text mono"]
    assert "category: generation" in dom.texts and "category: guess" in dom.texts  # a chip per value
    for word in ("failed", "reasked", "skipped"):
        assert any(t == "span" and word in (a.get("class") or "") for t, a in dom.elements)


def test_search_and_item_in_the_address(page):
    chromium, html, root = page
    dom = _Dom(chromium.dom(html.as_uri() + "#q=FROG&item=g1", budget_ms=5000))
    assert "1 of 6 items" in "".join(dom.texts)  # the search (any case) narrows the items
    items = [a for t, a in dom.elements if t == "div" and "item" in (a.get("class") or "").split()]
    assert [(a["data-id"], a["class"]) for a in items] == [("g1", "item open")]  # the linked item is open
    assert [(a.get("loading"), a["src"].startswith("report_files/")) for t, a in dom.elements if t == "img"] == [
        ("lazy", True)]
    assert "data-ready" not in dom.body()  # only #check reports


def test_screenshot_is_drawn(page):
    chromium, html, root = page
    shot = root / "shot.png"
    chromium.screenshot(html.as_uri(), shot)
    with PIL.open(shot) as im:
        px = np.asarray(im.convert("RGB"), dtype=np.int16)
    assert px.shape[:2] == (900, 1280)
    assert (px.min(axis=-1) < 200).mean() > 0.01  # text, bars, boxes (about 2%): not a blank page
    # the chart's bars, both series (the palette's blue #0072B2 and orange #E69F00), are drawn
    assert (np.abs(px - np.array([0, 114, 178])).max(axis=-1) <= 12).sum() > 800
    assert (np.abs(px - np.array([230, 159, 0])).max(axis=-1) <= 12).sum() > 150
    if os.environ.get("JUDGEKIT_KEEP_SHOT"):
        shutil.copy(shot, os.environ["JUDGEKIT_KEEP_SHOT"])


def test_screenshot_of_a_linked_item_shows_it(page):
    chromium, html, root = page
    shot = root / "shot-item.png"
    chromium.screenshot(html.as_uri() + "#item=q1", shot)
    with PIL.open(shot) as im:
        px = np.asarray(im.convert("RGB"), dtype=np.int16)
    if os.environ.get("JUDGEKIT_KEEP_SHOT"):
        shutil.copy(shot, os.environ["JUDGEKIT_KEEP_SHOT"] + ".item.png")
    # the item opened and scrolled to the top (a scrolled window came out blank): the top of its
    # question's gradient photo (green, G 255 - row, R = row, B 90), shown only inside the open item
    green = (px[..., 1] > 200) & (px[..., 0] < 60) & (np.abs(px[..., 2] - 90) <= 12)
    assert green.sum() > 3000
