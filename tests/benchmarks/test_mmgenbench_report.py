"""MMGenBench's report document (judgekit.benchmarks.mmgenbench.report) from a made-up run of five
images, two candidates and two generators, with every kind of failure: a failed caption call, an
empty caption, a failed drawing, a failed encoding of a drawn image, a caption the clean-up
changed, a caption holding markup.  No model runs: the outcomes, vectors and images are written
here, and build_result scores them as after a run.  (The shipped runner's report, rendered in
Chromium from a copied run folder, is checked in test_mmgenbench_run.py on the module's run.)"""

import io
import json
import shutil
from html.parser import HTMLParser
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image as PILImage

from judgekit.benchmarks.mmgenbench.data import LoadedSet, MMGenItem
from judgekit.benchmarks.mmgenbench.pipeline import CaptionRecord, GenerationRecord, ItemOutcome, Options
from judgekit.benchmarks.mmgenbench.report import BIN_LABELS, build_doc, sim_bins
from judgekit.benchmarks.mmgenbench.results import build_result
from judgekit.blobs import BlobStore
from judgekit.parsers.mmgenbench import reference_caption
from judgekit.report.doc import ReportDoc
from judgekit.report.run_report import write_run_report

CANDS, GENS = ["cand-a", "cand-b"], ["gen-x", "gen-y"]
SCRIPT = 'A red square.<script>document.title="pwned"</script> ]]> & more'
OOM = "CUDA out of memory <oom>"


def _png(color) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (16, 16), color).save(buf, "PNG")
    return buf.getvalue()


def _vec(blobs: BlobStore, seed: int) -> str:
    v = np.random.default_rng(seed).normal(size=8).astype("<f4")
    return blobs.put(v.tobytes(), "application/octet-stream")


def fake_run(tmp_path, captions=None):
    """(prep, engine, outcomes) of a finished run; ``captions``: (item, cand) -> raw reply."""
    blobs = BlobStore(tmp_path / "cache.duckdb.blobs")
    ids = ["1", "2", "3", "4", "10"]
    pats = {"1": ("Color", "Count"), "2": ("Count",), "3": ("Text",), "4": (), "10": ("Color",)}
    items = [MMGenItem(i, int(i), f"test.tsv, row {k}", pats[i], data=_png((40 * k, 0, 0)))
             for k, i in enumerate(ids)]
    items.reverse()  # the outcomes come in any order; the report sorts by id
    raw = {(i, c): f"A picture {i} by {c}." for i in ids for c in CANDS}
    raw[("1", "cand-a")] = "A picture 1 by cand-a.</s>"  # cleaned: the raw reply shown beside it
    raw[("1", "cand-b")] = SCRIPT
    raw[("2", "cand-b")] = None  # the call failed
    raw[("3", "cand-b")] = '""'  # empty after clean-up
    raw.update(captions or {})
    outcomes = []
    for n, it in enumerate(items):
        o = ItemOutcome(it, image_sha256="0" * 64, vector=_vec(blobs, n), encoder_name="enc")
        for c in CANDS:
            r = raw[(it.item_id, c)]
            if r is None:
                o.captions[c] = CaptionRecord(error="rate limited (429)")
                for g in GENS:
                    o.generations[(c, g)] = GenerationRecord(it.index, error="no caption", stage="caption")
                continue
            cap = reference_caption(r, 70)
            o.captions[c] = CaptionRecord(raw=r, caption=cap, error=None if cap.text else "the caption is empty after "
                                                                                          "clean-up")
            for g in GENS:
                if not cap.text:
                    o.generations[(c, g)] = GenerationRecord(it.index, error="empty caption", stage="caption")
                elif (it.item_id, c, g) == ("10", "cand-a", "gen-x"):
                    o.generations[(c, g)] = GenerationRecord(it.index, error=OOM, stage="generate")
                else:
                    sha = blobs.put(_png((0, 40 * n, 100 * CANDS.index(c) + 50 * GENS.index(g))), "image/png")
                    rec = GenerationRecord(it.index, image={"sha256": sha, "mime": "image/png", "width": 16,
                                                            "height": 16}, record={"revised_prompt": cap.text})
                    if (it.item_id, c, g) == ("4", "cand-b", "gen-y"):
                        rec.error, rec.stage = "encoder crashed", "encode/generated"
                    else:
                        rec.vector = _vec(blobs, 100 + n * 10 + 2 * CANDS.index(c) + GENS.index(g))
                    o.generations[(c, g)] = rec
        outcomes.append(o)
    data = LoadedSet(items=sorted(items, key=lambda x: x.index), source="test.tsv", labels="labels.json")
    prep = SimpleNamespace(spec=SimpleNamespace(name="made-up"), options=Options(bootstrap_samples=200), data=data,
                           candidates=CANDS, generators=GENS, encoder="encoder", prompt=None)
    return prep, SimpleNamespace(blobs=blobs), outcomes


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    prep, engine, outcomes = fake_run(tmp_path_factory.mktemp("mmgen-report"))
    result = build_result(prep, engine, outcomes)
    return SimpleNamespace(result=result, doc=result.report(), blobs=engine.blobs)


def blocks(item, group=None, label=None):
    return [b for b in item.blocks if (group is None or b.group == group) and (label is None or b.label == label)]


def test_headline_charts_and_tables_follow_the_summary(run):
    doc, summary = run.doc, run.result.summary
    assert doc.title == "MMGenBench: made-up" and doc.benchmark == "mmgenbench"
    assert doc.meta["data"] == "test.tsv" and doc.meta["images"] == "5" and doc.meta["encoder"] == "enc"
    heads = {(h.candidate, h.figure): h for h in doc.headline}
    assert len(heads) == 2 * 2 * 2
    for r in summary["results"]:
        sim, fid = heads[(r["model"], f"SIM · {r['generator']}")], heads[(r["model"], f"FID · {r['generator']}")]
        assert (sim.value, sim.low, sim.high) == (r["sim_mean"], r["sim_mean_ci_low"], r["sim_mean_ci_high"])
        assert sim.low <= sim.value <= sim.high and sim.higher_is_better and sim.judge is None
        assert (fid.value, fid.low, fid.high, fid.higher_is_better) == (r["fid"], None, None, False)
    charts = {c.title: c for c in doc.charts}
    per_pattern = charts["SIM per pattern · gen-x"]
    assert per_pattern.groups == ["Color", "Text", "Count"]  # the paper's order, not the data's
    a = per_pattern.series[0]
    row = next(p for p in summary["patterns"] if (p["model"], p["generator"], p["pattern"]) == ("cand-a", "gen-x",
                                                                                              "Count"))
    assert (a.name, a.values[2], a.low[2], a.high[2]) == ("cand-a", row["mean"], row["mean_ci_low"],
                                                           row["mean_ci_high"])
    overall = charts["SIM per candidate and generator"]
    assert overall.groups == CANDS and [s.name for s in overall.series] == GENS
    # the distribution counts every scored image once: cand-a / gen-x lost image 10 (its drawing failed)
    dist = charts["SIM distribution · gen-x"]
    counts = {s.name: sum(s.values) for s in dist.series}
    assert counts == {c: next(r["n"] for r in summary["results"] if (r["model"], r["generator"]) == (c, "gen-x"))
                      for c in CANDS} == {"cand-a": 4, "cand-b": 3}
    tables = {t.title: t for t in doc.tables}
    fid_rows = tables["FID per candidate and generator"].rows
    assert [(r["candidate"], r["generator"]) for r in fid_rows] == [(c, g) for c in CANDS for g in GENS]
    assert tables["SIM per pattern (Table 2)"].rows[-1]["pattern"] == "All"
    assert json.loads(json.dumps(doc.to_json())) == ReportDoc.from_json(doc.to_json()).to_json()


def test_every_image_is_an_item_with_its_images_and_failures(run):
    doc = run.doc
    assert [it.id for it in doc.items] == ["1", "2", "3", "4", "10"]  # by id, naturally
    images = list(doc.images())
    # the original, and per candidate a drawing (or its placeholder) per generator
    assert len(images) == 5 * (1 + 2 * 2)
    drawn = [im for im in images if im.path is not None or im.data is not None]
    missing = [im for im in images if im.missing]
    assert len(drawn) + len(missing) == len(images)
    # 1 failed drawing, 2 images of a failed caption, 2 of an empty one
    assert len(missing) == 5 and all(p.is_file() for p in (im.path for im in drawn if im.path))
    by = {it.id: it for it in doc.items}

    one = by["1"]
    assert one.tags == {"pattern": ["Color", "Count"]} and one.flags == []
    assert type(one).from_json(one.to_json()).tags == one.tags  # an image in two patterns: both, through report.json
    (cap,) = blocks(one, "cand-a", "caption")
    assert cap.parts[0].text == "A picture 1 by cand-a." and cap.status == "ok" and cap.meta["chat-template "
                                                                                              "leftovers"] == "removed"
    (raw,) = blocks(one, "cand-a", "raw reply (before clean-up)")
    assert raw.kind == "note" and raw.parts[0].text == "A picture 1 by cand-a.</s>"
    (cap_b,) = blocks(one, "cand-b", "caption")
    assert cap_b.parts[0].text == SCRIPT.strip('"')  # markup stays a text part, whole
    best = max(v for k, per in run.result.summary["reference_format"].items() for g, r in per.items()
               for i, v in r["sim"].items() if i == "1")
    assert one.score == f"best SIM {best:.4f}"
    gen = blocks(one, "cand-a", "drawn by gen-y")[0]
    sim = run.result.summary["reference_format"]["cand-a"]["gen-y"]["sim"]["1"]
    assert (gen.status, gen.meta["seed"], gen.meta["SIM"], gen.meta["size"]) == ("ok", "1", f"{sim:.4f}", "16×16")

    two = by["2"]  # cand-b's caption call failed: its error, and nothing drawn
    assert two.flags == ["failed"]
    (cap,) = blocks(two, "cand-b", "caption")
    assert cap.status == "failed" and "rate limited (429)" in cap.parts[0].text
    assert [b.status for b in blocks(two, "cand-b")][1:] == ["skipped", "skipped"]
    assert blocks(two, "cand-b", "drawn by gen-x")[0].parts[0].image.missing == "not drawn: no caption"

    three = by["3"]  # empty after clean-up: flagged, not a failed call
    assert three.flags == ["empty caption"] and blocks(three, "cand-b", "caption")[0].status == "skipped"

    four = by["4"]  # drawn, then its encoding failed: the image shows, the block says why
    assert four.flags == ["failed"] and four.tags == {}
    enc = blocks(four, "cand-b", "drawn by gen-y")[0]
    assert enc.status == "failed" and enc.meta["failed at"] == "encode/generated"
    assert enc.parts[0].image.path is not None and "SIM" not in enc.meta

    ten = by["10"]  # the drawing failed: the placeholder gives the reason
    assert ten.flags == ["failed"]
    g = blocks(ten, "cand-a", "drawn by gen-x")[0]
    assert g.status == "failed" and g.parts[0].image.missing == f"generate failed: {OOM}"
    assert g.meta["error"] == OOM


def test_the_original_of_a_folder_item_is_its_file(tmp_path):
    prep, engine, outcomes = fake_run(tmp_path)
    f = tmp_path / "7.png"
    f.write_bytes(_png((1, 2, 3)))
    outcomes[0].item.path, outcomes[0].item.data = f, None
    doc = build_result(prep, engine, outcomes).report()
    originals = [it.blocks[0].parts[0].image for it in doc.items]
    assert [im.path for im in originals].count(f) == 1
    assert sum(im.data is not None for im in originals) == 4


def test_sim_bins():
    assert sim_bins([0.0, 0.05, 0.1, 0.95, 1.0, 0.55]) == (BIN_LABELS, [2, 1, 0, 0, 0, 1, 0, 0, 0, 2])
    labels, counts = sim_bins([-0.2, 0.3])
    assert labels[0] == "< 0.0" and counts[:5] == [1, 0, 0, 0, 1]
    assert sim_bins([]) == (BIN_LABELS, [0] * 10)


_reply = st.lists(st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["<script>", "</script>", "]]>", "\x00", "<|im_end|>", "</s>", '"', " ", "\n", "\ud800"]), max_size=8).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reply=_reply)
def test_any_reply_is_kept_whole_as_text(tmp_path_factory, reply):
    """Whatever a candidate replies (markup, NUL, a lone surrogate), the raw reply and its cleaned
    caption reach the document as text parts, unchanged, and survive report.json."""
    prep, engine, outcomes = fake_run(tmp_path_factory.mktemp("any"), {("1", "cand-a"): reply})
    doc = build_doc(prep, engine, outcomes, {(c, g): {} for c in CANDS for g in GENS},
                    [{"model": c, "generator": g, "sim_mean": None, "fid": None, "n": 0, "images": 5,
                      "caption_failures": 0, "generation_failures": 0, "encode_failures": 0, "empty_captions": 0,
                      "fid_note": None} for c in CANDS for g in GENS], [], {}, "enc")
    again = ReportDoc.from_json(json.loads(json.dumps(doc.to_json())))
    item = next(it for it in again.items if it.id == "1")
    cleaned = reference_caption(reply, 70).text
    assert blocks(item, "cand-a", "caption")[0].parts[0].text == cleaned
    notes = blocks(item, "cand-a", "raw reply (before clean-up)")
    assert [b.parts[0].text for b in notes] == ([] if reply == cleaned else [reply])


class _Dom(HTMLParser):
    """The elements (tag, attrs) and the shown text of a page (not the text of its scripts and
    style), as a browser's parser sees them."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.chunks: list[str] = []
        self._hidden = 0
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._hidden += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._hidden -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._hidden:
            self.chunks.append(data)


def test_the_page_in_chromium_from_a_copied_run_folder_without_the_cache(tmp_path, chromium):
    """The report written as the runner writes it, the run folder copied elsewhere and the cache's
    image store deleted: every image still loads (thumbnails in the folder), the failed drawing
    shows its reason, and a caption holding <script> is shown as text (no script of it runs)."""
    prep, engine, outcomes = fake_run(tmp_path / "run")
    result = build_result(prep, engine, outcomes)
    write_run_report(tmp_path / "run" / "out", result.report(), result.summary)
    shutil.copytree(tmp_path / "run" / "out", tmp_path / "moved")
    shutil.rmtree(tmp_path / "run")  # the cache and its image store with it
    written = _Dom((tmp_path / "moved" / "report.html").read_text(encoding="utf-8"))
    dom = _Dom(chromium.dom((tmp_path / "moved" / "report.html").as_uri() + "#check", window="1280,2000"))
    (body,) = [a for t, a in dom.elements if t == "body"]
    # 5 originals + 20 drawings; the 5 not drawn (a failed caption, an empty one, a failed drawing) are placeholders
    assert (body.get("data-ready"), body.get("data-items"), body.get("data-images-ok"),
            body.get("data-images-broken")) == ("1", "5", "20", "0")
    assert len([a for t, a in dom.elements if t == "img"]) == 20
    text = "".join(dom.chunks)
    assert SCRIPT in text and f"image missing: generate failed: {OOM}" in text
    # no element came from a caption: the page's own scripts only, no event handler attributes
    assert [t for t, _ in dom.elements].count("script") == [t for t, _ in written.elements].count("script")
    assert not [k for _, a in dom.elements for k in a if k.startswith("on")]
