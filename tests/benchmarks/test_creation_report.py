"""Creation-MMBench's report document (judgekit/benchmarks/creation_mmbench/report.py) and the page
the runner writes from it.

One run serves the module: the quickstart (a panel of two judges) on 4 items of a copy of the
shipped sample whose first baseline answer holds markup, with a candidate that sometimes refuses
(a failed call), a first judge that sometimes refuses, a second judge whose replies sometimes do
not parse, and re-asks on: every kind of block the report shows.
"""

import asyncio
import csv
import json
import re
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.benchmarks.creation_mmbench.data import load_data
from judgekit.judging.report import charts, headline
from judgekit.benchmarks.creation_mmbench.pipeline import _judgment
from judgekit.benchmarks.creation_mmbench.report_items import build_items, judgment_blocks, verdict_line, vfs_lines
from judgekit.config import load_spec
from judgekit.parsers.creation import parse_verdict, parse_vfs
from judgekit.report.doc import ReportDoc
from judgekit.runner import RunOptions, run_spec

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "creation_mmbench" / "sample.tsv"
ITEMS = 4
MARKUP = '<script>document.title="pwned"</script></script><img src=x onerror="document.title=1">]]>'


def _sample_with_markup(path: Path) -> None:
    """The shipped sample, the first baseline answer (GPT-4o's, model output) holding markup."""
    csv.field_size_limit(sys.maxsize)
    with SAMPLE.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    col = rows[0].index("reference_answer_by_gpt4o")
    rows[1][col] = MARKUP + "\n" + rows[1][col]
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(rows)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("creation-report")
    data = root / "sample.tsv"
    _sample_with_markup(data)
    sets = [f"models.{a}.sim.latency_ms=0" for a in ("sim-strong", "sim-weak", "judge", "judge-2")]
    sets += [f"data={data}", "options.bootstrap_samples=200", "options.reask_on_parse_failure=true",
             "models.judge-2.sim.garbage_rate=0.3", "models.sim-weak.sim.reply_faults.refusal=0.3",
             "models.judge.sim.reply_faults.refusal=0.1"]
    spec = load_spec("quickstart", sets)
    out = asyncio.run(run_spec(spec, RunOptions(out_dir=root / "out", cache_path=root / "cache.duckdb",
                                                limit=ITEMS)))
    doc = out.result.report()
    items = load_data(data).items[:ITEMS]
    return SimpleNamespace(root=root, out=out, doc=doc, items=items, data=data)


def _text(block) -> str:
    return "".join(p.text for p in block.parts if p.text is not None)


def test_every_item_with_its_images_answers_and_judgments(run):
    doc, out, items = run.doc, run.out, run.items
    tables = out.result.tables
    assert [it.id for it in doc.items] == [it.index for it in items]
    assert doc.title == "Creation-MMBench: quickstart" and doc.meta["items"] == str(ITEMS)
    # every image of every question, as bytes the writer can thumbnail
    assert sum(1 for _ in doc.images()) == sum(len(it.images) for it in items) > 0
    for it, data in zip(doc.items, items, strict=True):
        assert it.tags == {"category": data.category, "task": data.task_name}
        q = it.blocks[0]
        assert q.kind == "question" and [im.data for im in q.images()] == [im.data for im in data.images]
        assert _text(q) == data.question
        base = next(b for b in it.blocks if b.kind == "baseline")
        assert _text(base) == data.reference_answer  # in full, markup and all
    assert MARKUP in _text(next(b for b in doc.items[0].blocks if b.kind == "baseline"))

    # each candidate's answer in full, or its failure
    answers = {(a["model"], a["index"]): a for a in tables["answers"]}
    for it in doc.items:
        for b in (b for b in it.blocks if b.kind == "answer"):
            a = answers[(b.label, it.id)]
            if a["ok"]:
                assert b.status == "ok" and _text(b) == a["answer"]
            else:
                assert b.status == "failed" and a["error"] in _text(b)
                assert {"failed", "no answer"} <= set(it.flags)
    assert any(not a["ok"] for a in tables["answers"])  # the run has a failed candidate call

    # one block per judgment record (a re-asked one: its first reply too), in the candidate's box
    judgments = tables["judgments"]
    shown = [b for it in doc.items for b in it.blocks if b.kind == "judgment" and b.status != "reasked"]
    assert len(shown) == len(judgments)
    firsts = [b for it in doc.items for b in it.blocks if b.status == "reasked"]
    assert len(firsts) == sum(1 for j in judgments if j["reasked"]) > 0
    for it in doc.items:
        for k, b in enumerate(it.blocks):
            if b.status == "reasked":  # the reply that did not parse, then the re-ask's reply
                after = it.blocks[k + 1]
                parse = parse_verdict if " · pairwise · " in b.label else parse_vfs
                assert parse(_text(b)) is None
                assert after.status == ("failed" if parse(_text(after)) is None else "ok")
                assert after.label == b.label + " · re-ask" and after.group == b.group
                assert "reasked" in it.flags
    failed = [j for j in judgments if j["error"]]
    assert failed  # a judge call that failed
    for j in failed:
        it = next(i for i in doc.items if i.id == j["index"])
        assert "failed" in it.flags
        assert any(b.status == "failed" and j["error"] in _text(b) and b.label.startswith(j["judge"])
                   for b in it.blocks)


def test_verdicts_are_highlighted_where_the_parser_read_them(run):
    blocks = [b for it in run.doc.items for b in it.blocks if b.kind == "judgment" and b.status == "ok"]
    assert blocks
    for b in blocks:
        reply = _text(b)
        assert b.highlight and b.highlight in reply
        if " · pairwise · " in b.label:
            assert b.verdict.startswith("[[") and parse_verdict(b.highlight) is not None
            score = parse_verdict(reply)
            assert b.verdict.endswith("0 (tie)" if score == 0 else "for the candidate")
        else:
            assert "Visual Factuality Score" in b.highlight and b.verdict.startswith("candidate ")
            assert b.tone == "neutral"


def test_a_verdict_is_toned_for_the_candidate_in_either_order(run):
    """Good when the candidate wins, bad when it loses, neutral for a tie: in the swapped order
    (order 1) Assistant A is the candidate, so [[A>>B]] is a win there and a loss in order 0."""
    item = SimpleNamespace(index="1", task_name="t", category="c")
    cases = (("[[A>>B]]", 0, "bad"), ("[[A>>B]]", 1, "good"), ("[[B>A]]", 0, "good"), ("[[B>A]]", 1, "bad"),
             ("[[A=B]]", 0, "neutral"), ("[[A=B]]", 1, "neutral"))
    for token, order, tone in cases:
        result = SimpleNamespace(ok=True, text=f"Fine.\nFinal verdict is: {token}", error_kind=None, error=None)
        b = judgment_blocks(_judgment("pairwise", order, result, "cand", item, judge="j"), "cand")[-1]
        assert (token, order, b.tone) == (token, order, tone)
    unread = SimpleNamespace(ok=True, text="no verdict here", error_kind=None, error=None)
    assert judgment_blocks(_judgment("pairwise", 0, unread, "cand", item, judge="j"), "cand")[-1].tone is None
    # the run: every parsed pairwise verdict's tone follows the record's score, for the candidate
    records = {(j["judge"], j["model"], j["index"], j["order"]): j for j in run.out.result.tables["judgments"]
               if j["kind"] == "pairwise"}
    tones = set()
    for it in run.doc.items:
        for b in it.blocks:
            if b.kind == "judgment" and " · pairwise · " in b.label and b.status == "ok":
                order = 0 if "baseline first" in b.label else 1
                score = records[(b.label.split(" · ")[0], b.group, it.id, order)]["score"]
                assert b.tone == ("good" if score > 0 else "bad" if score < 0 else "neutral")
                tones.add(b.tone)
            elif b.status in ("failed", "reasked", "skipped"):
                assert b.tone is None
    assert {"good", "bad"} <= tones


def test_headline_charts_and_tables_match_the_summary(run):
    doc = run.doc
    summary = json.loads((run.out.out_dir / "summary.json").read_text())
    rows = {"judge": summary["results"], "ensemble": summary["ensemble"]["results"]}
    assert {h.judge for h in doc.headline} == {"judge", "ensemble"}
    assert len(doc.headline) == 2 * 2 * 3  # judges x candidates x (Reward, Win Rate, VFS)
    keys = {"Reward": "reward", "Win Rate": "win_rate", "VFS": "vfs"}
    for h in doc.headline:
        r = next(r for r in rows[h.judge] if r["model"] == h.candidate and r["level"] == "overall")
        k = keys[h.figure]
        assert (h.value, h.low, h.high) == (r[k], r[f"{k}_ci_low"], r[f"{k}_ci_high"])
        assert h.low is not None and h.low <= h.value <= h.high

    charts = {c.title: c for c in doc.charts}
    reward = charts["Reward per category"]
    assert reward.groups[0] == "Overall"
    for s in reward.series:
        for g, v, lo, hi in zip(reward.groups, s.values, s.low, s.high, strict=True):
            r = next(r for r in summary["results"] if r["model"] == s.name
                     and (r["level"], r["group"]) in (("overall", "overall"), ("category", g)))
            assert (v, lo, hi) == (r["reward"], r["reward_ci_low"], r["reward_ci_high"])
    shares = charts["Verdicts per candidate"]
    assert shares.kind == "stacked" and len(shares.groups) == 2 * 3  # candidates x (2 judges, ensemble)
    # an ordered scale, best first, tie its middle (grey on an odd count); fail (no verdict) is no step of
    # it: the shares are of the judgments with a verdict, the fails in the note
    assert shares.palette == "diverging"
    assert [s.name for s in shares.series] == ["much better (+2)", "better (+1)", "tie (0)", "worse (-1)",
                                               "much worse (-2)"]
    first = next(r for r in summary["results"] if r["model"] == "sim-weak" and r["level"] == "overall")
    k = shares.groups.index("sim-weak · judge")
    assert shares.series[4].values[k] == pytest.approx(100 * first["much_worse"] / (first["n_pairwise"] - first["fail"]))
    fails = [(g, r["fail"] / r["n_pairwise"]) for g, r in [(f"{r['model']} · judge", r) for r in summary["results"]
                                                          if r["level"] == "overall"] if r["fail"]]
    for g, share in fails:
        assert f"{g} {100 * share:.0f}%" in shares.note
    assert shares.note.endswith("none") == (not fails)
    assert {h.figure: h.unit for h in doc.headline} == {"Reward": "", "Win Rate": "%", "VFS": ""}
    for k in range(len(shares.groups)):
        assert sum(s.values[k] for s in shares.series) == pytest.approx(100.0)
    per_judge = charts["Overall Reward per judge"]
    assert [s.name for s in per_judge.series] == ["judge", "judge-2", "ensemble"]
    assert charts["Judge behaviour"].groups == ["judge", "judge-2", "ensemble"]
    assert {"Results per category, judged by judge", "Judge behaviour"} <= {t.title for t in doc.tables}
    results = next(t for t in doc.tables if t.title.startswith("Results")).rows
    assert list(dict.fromkeys(r["model"] for r in results)) == ["sim-strong", "sim-weak"]
    assert [r["category"] for r in results if r["model"] == "sim-weak"][0] == "Overall"
    assert ReportDoc.from_json(json.loads(json.dumps(doc.to_json()))).to_json() == doc.to_json()


# a judge reply: lines of free text, verdict lines and VFS lines, spelled in the ways the parsers meet
_LINE = st.one_of(
    st.text(max_size=30),
    st.builds(lambda pre, v, post: f"{pre}Final Verdict is: [[{v}]]{post}", st.sampled_from(["", "3. ", "**"]),
              st.sampled_from(["A>>B", "B>A", "A = B", "VERDICT", "b<<a", "A>B"]), st.sampled_from(["", " ok", "**"])),
    st.builds(lambda who, s: f"Response {who} Visual Factuality Score: {s}", st.sampled_from("AB"),
              st.sampled_from(["8/10", "7.5 / 10", "x/10", "11", "3", ""])),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, max_size=8).map("\n".join))
def test_the_highlight_is_the_line_each_parser_reads(reply):
    found = verdict_line(reply)
    assert (found is None) == (parse_verdict(reply) is None)
    if found is not None:
        line, _ = found
        assert line in reply and parse_verdict(line) == parse_verdict(reply)
    lines = vfs_lines(reply)
    parsed = parse_vfs(reply)
    if lines is None:
        assert not isinstance(parsed, tuple)
    else:
        assert all(ln in reply for ln in lines)
        assert parse_vfs(f"{lines[0]}\n{lines[1]}") == parsed  # (None for scores outside 0..10)


def test_the_page_survives_the_cache_and_keeps_model_text_as_text(run, tmp_path, chromium):
    folder = tmp_path / "copied"
    shutil.copytree(run.out.out_dir, folder)
    (run.root / "cache.duckdb").unlink()  # the page needs nothing outside its folder
    page = folder / "report.html"
    assert page.is_file()
    dom = chromium.dom(page.resolve().as_uri() + "#check", budget_ms=5000, window="1280,2000")
    n_images = sum(1 for _ in run.doc.images())
    assert 'data-images-broken="0"' in dom
    assert f'data-images-ok="{n_images}"' in dom
    title = re.search(r"<title>(.*?)</title>", dom, re.DOTALL)
    assert title and "pwned" not in title.group(1) and title.group(1) != "1"  # no script of the answer ran
    assert "&lt;script&gt;document.title" in dom  # it is shown, as text


def test_a_text_only_run_shows_the_description_and_a_run_without_vfs_has_no_vfs_figure(run):
    tables = run.out.result.tables
    said = SimpleNamespace(ok=True, text="<b>a red kite</b> in a tree", error=None)
    failed = SimpleNamespace(ok=False, text=None, error="refused: no")
    items = build_items(run.items[:2], tables["answers"], tables["judgments"], candidates=["sim-strong", "sim-weak"],
                        judges=["judge", "judge-2"], descriptions={run.items[0].index: said,
                                                                   run.items[1].index: failed}, describer="d")
    first, second = (it.blocks[1] for it in items)
    assert first.kind == second.kind == "note" and first.label.startswith("description by d")
    assert _text(first) == said.text and first.status == "ok"
    assert second.status == "failed" and "refused: no" in _text(second) and "failed" in items[1].flags

    summary = run.out.summary
    no_vfs = dict(summary, results=[dict(r, n_vfs=0, vfs=None) for r in summary["results"]], ensemble=None,
                  per_judge=None)
    assert {h.figure for h in headline(no_vfs, ["sim-strong", "sim-weak"])} == {"Reward", "Win Rate"}
    assert "VFS per category" not in {c.title for c in charts(no_vfs, ["sim-strong", "sim-weak"])}
