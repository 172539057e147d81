"""GuessBench's report document (judgekit/benchmarks/guessbench/report.py, report_items.py).

The flows run for real (judgekit.benchmarks.guessbench.flow) on 2 of the shipped sets, against a
scripted caller instead of the simulator (milliseconds, no server): a panel of two extractors,
four approaches (CoT, self-consistency, self-refine, image retrieval), a guess call that fails,
an extractor call that fails, 'No Answering' and unparsed readings, a search that finds nothing,
and a candidate reply that carries markup.  build_result then makes the real summary and the
document.  The shipped runner's own report (4 sets, every approach) is checked in
test_guessbench_run.py, on the run its module fixture makes.
"""

import asyncio
import hashlib
import io
import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image as PILImage

from judgekit.blobs import BlobStore
from judgekit.config import load_spec
from judgekit.engine import CallResult
from judgekit.report.run_report import write_run_report
from judgekit.retrieval.base import Retrieved
from judgekit.types import ChatResponse, ImagePart
from judgekit.benchmarks.guessbench import pipeline
from judgekit.benchmarks.guessbench.flow import run_set
from judgekit.benchmarks.guessbench.report_items import find_last
from judgekit.benchmarks.guessbench.results import build_result

MARKUP = '<script>document.title="pwned"</script> ]]> \x00 </script> \ud800'
_GUESS = re.compile(r"I guess: ([^.\n]+)\.")


def _png(color) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (16, 16), color).save(buf, format="PNG")
    return buf.getvalue()


class Scripted:
    """A caller that answers every call from a script: deterministic replies (right about a third
    of the time), with the failures and odd readings the module docstring lists."""

    def __init__(self, answers: dict[str, str], photo: ImagePart) -> None:
        self.answers, self.photo = answers, photo
        self.counts: dict[str, int] = {}
        self.inexact = False

    def _h(self, req, salt: str = "") -> int:
        text = "".join(m.text() for m in req.messages)
        key = f"{req.model}|{req.stage}|{req.item_id}|{req.sample_index}|{req.attempt_tag}|{text}|{salt}"
        return int(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8], 16)

    async def call(self, req, *, steers: bool = True) -> CallResult:
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        kind = req.stage.rsplit("/", 1)[1] if "/" in req.stage else "guess"
        gold = self.answers[req.item_id]
        if kind == "retrieve":
            query = req.messages[-1].text()
            if req.item_id == "2":
                r = Retrieved(status="no_result", query=query, source="scripted")
            else:
                r = Retrieved(status="ok", query=query, sha256=self.photo.sha256, mime="image/png",
                              title="a photo", source="scripted")
            return CallResult(req, ChatResponse(r.to_json()))
        if kind == "extract":
            said = _GUESS.findall(req.messages[-1].text())
            if req.model == "extractor-b" and req.item_id == "1" and req.stage == "cot/extract":
                return CallResult(req, None, error_kind="server", error="HTTP 500: scripted failure")
            if req.model == "extractor-b" and self._h(req) % 4 == 0:
                return CallResult(req, ChatResponse("I cannot tell."))  # unparsed
            if not said or said[-1] == "nothing":
                return CallResult(req, ChatResponse("No Answering"))
            return CallResult(req, ChatResponse(f"The response says so.\nAnswer: {said[-1].title()}"))
        # the candidates
        if req.model == "sim-weak" and req.stage == "cot" and req.item_id == "2" and len(req.messages) == 2:
            return CallResult(req, None, error_kind="server", error="HTTP 503: scripted failure")
        if req.attempt_tag and self._h(req) % 3 == 0:
            return CallResult(req, ChatResponse("$Well done!$"))
        n = self._h(req) % 6
        word = gold.lower() if n < 2 else ("nothing" if n == 2 else f"thing{n}")
        extra = f" {MARKUP}" if req.model == "sim-strong" and req.stage == "cot" else ""
        return CallResult(req, ChatResponse(f"The build looks like something.{extra}\nI guess: {word}."))

    def image(self, retrieved) -> ImagePart | None:
        return self.photo if retrieved.sha256 == self.photo.sha256 else None

    def decide(self, kind: str, stopped: bool) -> None:
        pass

    def loop_done(self) -> None:
        pass


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("guessbench-report")
    spec = load_spec("guessbench", ["roles.judges=['extractor','extractor-b']",
                                    "options.approaches=['cot','self_consistency','self_refine','image_retrieval']",
                                    "options.bootstrap_samples=200"])
    prep = pipeline.prepare(spec, pipeline.Options.model_validate(spec.options), limit=2)
    blobs = BlobStore(root / "cache.duckdb.blobs")
    data = _png((200, 30, 30))
    blobs.put(data, "image/png")
    photo = ImagePart(data, "image/png")
    cfg = pipeline._config(prep)
    answers = {gs.set_id: gs.answer for gs in prep.sets}

    async def all_flows():
        out = {}
        for alias, approach, task in prep.flows:
            for gs in prep.sets:
                out[(alias, approach, task, gs.set_id)] = await run_set(cfg, alias, approach, task, gs,
                                                                        Scripted(answers, photo))
        return out

    outcomes = asyncio.run(all_flows())
    result = build_result(prep, outcomes, 0, blobs=blobs)
    return root, prep, outcomes, result, result.report(), blobs


def _blocks(doc):
    return [(it, b) for it in doc.items for b in it.blocks]


def test_every_set_every_flow_every_image(made):
    _, prep, outcomes, result, doc, _ = made
    assert doc.title == "GuessBench: guessbench" and doc.benchmark == "guessbench"
    assert [it.id for it in doc.items] == [gs.set_id for gs in prep.sets]
    for it, gs in zip(doc.items, prep.sets):
        assert it.tags == {"length": "short" if gs.is_short else "long", "answer": gs.answer}
        groups = list(dict.fromkeys(b.group for b in it.blocks if b.group))
        assert len(groups) == len(prep.flows) == 2 * 4 * 2  # every (candidate, approach, task)
        q = it.blocks[0]
        assert q.kind == "question" and [p.image.data for p in q.parts if p.image] == [i.data for i in gs.images]
        assert it.blocks[1].kind == "reference" and it.blocks[1].parts[0].text == gs.answer
        # the hints in a fixed-width font, whole: the letter line over the blanks
        assert [p.text for p in q.parts if p.mono] == list(gs.hints)
        for b in it.blocks:
            if b.role == "user" and b.label.endswith(" · user"):
                attempt = 3 if b.label.startswith("static") else int(b.label.split()[1])
                assert [p.text for p in b.parts if p.mono] == [gs.hints[attempt - 1]], b.label
    images = list(doc.images())
    assert images and all((im.data or (im.path and im.path.is_file())) and not im.missing for im in images)
    # the retrieved photo comes from the image store, inside its round's user message
    photos = [b for _, b in _blocks(doc) if any(p.image and p.image.path for p in b.parts)]
    assert photos and all(b.role == "user" and "round" in b.label for b in photos)
    # the set whose search found nothing: a note, no image
    assert any(b.kind == "note" and "no_result" in b.parts[0].text for it, b in _blocks(doc) if it.id == "2")


def test_failures_readings_and_highlights(made):
    _, prep, outcomes, result, doc, _ = made
    items = {it.id: it for it in doc.items}
    # the failed guess: its turn's message, then a failed note; the item flagged
    failed = [b for b in items["2"].blocks if b.group == "sim-weak · CoT · static" and b.status == "failed"]
    assert len(failed) == 1 and "HTTP 503" in failed[0].parts[0].text and "failed" in items["2"].flags
    # the failed extractor call (extractor-b) is a failed reading, not a failed set
    bad = [b for b in items["1"].blocks if b.role == "extractor" and b.status == "failed"]
    assert bad and all("HTTP 500" in b.parts[0].text for b in bad) and "failed" in items["1"].flags
    for it in doc.items:
        for b in it.blocks:
            if b.highlight is not None:  # a highlight is text of the reply it marks
                assert b.highlight in "".join(p.text or "" for p in b.parts), (b.label, b.highlight)
    verdicts = [b for _, b in _blocks(doc) if b.role == "extractor" and b.verdict]
    assert {"right", "wrong"} <= {b.verdict.split(" · ")[0] for b in verdicts}
    assert any("No Answering" in b.verdict for b in verdicts) and any("unparsed" in b.verdict for b in verdicts)
    for b in verdicts:  # a reading's verdict: right good, wrong bad; a sample's reading, a query: no tone
        word = b.verdict.split(" · ")[0]
        assert b.tone == {"right": "good", "wrong": "bad"}.get(word), (b.label, b.verdict, b.tone)
    assert {"good", "bad"} <= {b.tone for b in verdicts}
    flags = {f for it in doc.items for f in it.flags}
    assert {"no answer", "unparsed"} <= flags
    # self-consistency: every sample, each extractor's reading of each, and its vote
    sc = [b for b in items["1"].blocks if b.group == "sim-strong · Self-Consistency · static"]
    assert [b.label for b in sc if b.role == "assistant"] == ["static · sample 1", "static · sample 2", "static · sample 3"]
    assert sum(1 for b in sc if "vote" in b.label) == 2
    # a model reply with markup is kept whole, as text
    assert any(MARKUP in (p.text or "") for _, b in _blocks(doc) for p in b.parts)


def test_headline_and_charts_match_the_summary(made):
    _, prep, _, result, doc, _ = made
    sm = result.summary
    want = {}
    for judge, rows in (("extractor", sm["results"]), ("ensemble", sm["ensemble"]["results"])):
        for r in rows:
            if r["approach"] == "cot":
                for col, name in (("static_all", "Static"), ("dynamic_1_all", "Dynamic #1"),
                                  ("dynamic_2_all", "Dynamic #2"), ("dynamic_3_all", "Dynamic #3")):
                    want[(r["model"], f"{name} · CoT", judge)] = (r[col], r[f"{col}_ci_low"], r[f"{col}_ci_high"])
    got = {(h.candidate, h.figure, h.judge): (h.value, h.low, h.high) for h in doc.headline}
    assert {h.unit for h in doc.headline} == {"%"}  # accuracies in percent
    assert got == want
    titles = [c.title for c in doc.charts]
    assert any(t.startswith("Static accuracy per approach") for t in titles)
    assert any("by extractor" in t for t in titles) and any("Self-consistency" in t for t in titles)
    assert any("review loops" in t for t in titles)
    ext = next(c for c in doc.charts if c.title.startswith("Extractions by outcome"))
    for i in range(len(ext.groups)):  # each extractor's outcomes add up to all its calls
        assert sum(s.values[i] for s in ext.series) == pytest.approx(100.0)


def test_the_stop_signal_is_shown_as_words(made):
    """A review loop that stopped on the signal reads 'Well done!' in the chart's legend and the
    item's note, not the raw $Well done!$ (its $ delimiters are the prompt's, not words)."""
    _, _, _, _, doc, _ = made
    stops = next(c for c in doc.charts if "review loops" in c.title)
    names = [s.name for s in stops.series]
    assert any(n.startswith("'Well done!' at round") for n in names), names
    assert not any("$" in n for n in names)
    texts = [str(b) for it in doc.items for b in it.blocks]  # the replies keep what the model said
    assert any("said 'Well done!': the reply under review stands" in t for t in texts)
    assert not any("said $Well done!$" in t for t in texts)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(min_size=1), st.text(), st.booleans())
def test_a_highlight_is_text_of_the_reply(before, guess, after, upper):
    """The extracted guess is lower-cased; the mark is the reply's own spelling of it, or none."""
    reply = before + (guess.upper() if upper else guess) + after
    got = find_last(guess, reply)
    if not upper:
        assert got is not None
    assert got is None or (got in reply and re.fullmatch(re.escape(guess), got, re.IGNORECASE))
    alone = find_last(guess, before)
    assert alone is None or alone in before


def test_page_survives_the_cache_and_keeps_markup_as_text(made, tmp_path, chromium):
    root, _, _, result, doc, blobs = made
    out = root / "out"
    write_run_report(out, doc, result.summary)
    moved = tmp_path / "elsewhere"
    shutil.copytree(out, moved)
    away = tmp_path / "store-away"
    blobs.root.rename(away)  # the cache's image store is gone while the page loads (put back after)
    try:
        dom = chromium.dom((moved / "report.html").resolve().as_uri() + "#check", budget_ms=20000)
    finally:
        away.rename(blobs.root)
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body))
    assert attrs.get("data-ready") == "1", body
    assert attrs["data-images-broken"] == "0"
    assert int(attrs["data-images-ok"]) == sum(1 for im in doc.images() if not im.missing)
    assert attrs["data-items"] == str(len(doc.items))
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert "&lt;script&gt;document.title" in dom  # shown as text


def test_an_interrupted_run_marks_the_flows_it_did_not_run(made, tmp_path):
    _, prep, outcomes, _, _, blobs = made
    cut = dict(list(outcomes.items())[: len(outcomes) // 2])
    doc = build_result(prep, cut, len(outcomes) - len(cut), blobs=blobs).report()
    skipped = [b for it in doc.items for b in it.blocks if b.status == "skipped"]
    assert len(skipped) == len(outcomes) - len(cut) and all("not run" in it.flags for it in doc.items)
    # nothing run at all: still a page (no figures, every flow marked)
    empty = build_result(prep, {}, len(outcomes), blobs=blobs)
    out = write_run_report(tmp_path / "out", empty.report(), empty.summary)
    assert out.is_file() and all(len(it.blocks) == 3 + len(prep.flows) for it in empty.report().items)
