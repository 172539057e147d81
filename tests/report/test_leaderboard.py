"""The leaderboard across run folders (judgekit.report.leaderboard): rows per (run, candidate),
sorting by the first figure with unknown values last, one table per benchmark, links relative to
the page that resolve to each run's report.html, and model text kept as text."""

from __future__ import annotations

import json
import math
import os
import re
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.errors import UsageError
from judgekit.report.doc import Headline, ReportDoc
from judgekit.report.leaderboard import (Run, leaderboard_doc, leaderboard_rows, load_run, wants_leaderboard,
                                         write_leaderboard)
from judgekit.report.write import write_report


def _run_dir(path: Path, benchmark: str, heads: list[Headline], spec: str = "s") -> Path:
    write_report(path, ReportDoc(title=f"{benchmark}: {path.name}", benchmark=benchmark, headline=heads))
    (path / "summary.json").write_text(json.dumps({"spec": spec, "run_id": f"id-{path.name}", "status": "done"}))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """Three run folders under runs/: two Creation-MMBench runs sharing a candidate, one MMGenBench
    run (lower-is-better first figure, one value unknown: write_report refuses NaN)."""
    root = tmp_path_factory.mktemp("lb") / "runs"
    _run_dir(root / "creation a", "creation_mmbench", [
        Headline("gpt-4o", "reward", 10.0, 5.0, 15.0, judge="ensemble"),
        Headline("gpt-4o", "vfs", 6.1, 5.9, 6.3, judge="ensemble"),
        Headline("qwen", "reward", 30.0, 20.0, 40.0, judge="ensemble"),
        Headline("qwen", "vfs", 5.0, judge="ensemble")], spec="quickstart")
    _run_dir(root / "creation b", "creation_mmbench", [
        Headline("gpt-4o", "reward", -20.0, -30.0, -10.0, judge="ensemble"),
        Headline("llava", "reward", None, judge="ensemble")])
    _run_dir(root / "gen", "mmgenbench", [
        Headline("cap-a", "FID", 12.0, higher_is_better=False),
        Headline("cap-b", "FID", 8.0, higher_is_better=False),
        Headline("cap-c", "FID", None, higher_is_better=False)])
    return root


def _load(root: Path, *names: str) -> list[Run]:
    return [load_run(root / n) for n in names]


def test_rows_sorted_by_first_figure_per_benchmark(runs):
    loaded = _load(runs, "creation a", "creation b", "gen")
    doc = leaderboard_doc(loaded, runs.parent / "leaderboard.html")
    by = leaderboard_rows(loaded)
    assert list(by) == ["creation_mmbench", "mmgenbench"]  # never mixed
    cols, rows = by["creation_mmbench"]
    assert cols == [("reward", "ensemble"), ("vfs", "ensemble")]
    assert [(r.run, r.candidate) for r in rows] == [("creation a", "qwen"), ("creation a", "gpt-4o"),
                                                    ("creation b", "gpt-4o"), ("creation b", "llava")]
    _, gen = by["mmgenbench"]
    assert [r.candidate for r in gen] == ["cap-b", "cap-a", "cap-c"]  # lower is better; unknown last

    tables = {t.title: t for t in doc.tables}
    assert list(tables) == ["creation_mmbench", "mmgenbench", "Runs"]
    assert tables["creation_mmbench"].rows[0] == {"run": "creation a", "candidate": "qwen", "reward": "30.0 [20.0, 40.0]",
                                                  "vfs": "5.00"}
    assert tables["creation_mmbench"].rows[3]["reward"] == "–" and tables["creation_mmbench"].rows[3]["vfs"] == "–"
    assert tables["creation_mmbench"].rows[2]["vfs"] == "–"  # this run gave no vfs
    assert "lowest first" in tables["mmgenbench"].note and "judge" not in tables["mmgenbench"].note
    assert tables["creation_mmbench"].note.endswith("; judge: ensemble")
    assert [c.title for c in doc.charts] == ["creation_mmbench: reward", "creation_mmbench: vfs", "mmgenbench: FID"]
    reward = doc.charts[0]
    assert reward.groups == ["qwen (creation a)", "gpt-4o (creation a)", "gpt-4o (creation b)", "llava (creation b)"]
    assert reward.series[0].values == [30.0, 10.0, -20.0, None] and reward.series[0].low == [20.0, 5.0, -30.0, None]
    assert doc.charts[2].groups == ["cap-b", "cap-a", "cap-c"] and doc.charts[2].series[0].values == [8.0, 12.0, None]
    assert [(r["spec"], r["run id"], r["candidates"]) for r in tables["Runs"].rows] == [
        ("quickstart", "id-creation a", 2), ("s", "id-creation b", 2), ("s", "id-gen", 3)]
    assert doc.charts[0].note and doc.charts[2].note is None  # no whiskers where no interval is known


def test_links_are_relative_to_the_page_and_resolve(runs, tmp_path):
    loaded = _load(runs, "creation a", "gen")
    for page in (runs.parent / "leaderboard.html", tmp_path / "deep" / "er" / "board.html"):
        out = write_leaderboard(loaded, page)
        assert out == page and page.is_file()
        doc = leaderboard_doc(loaded, page)
        assert [label for label, _ in doc.links] == ["creation a", "gen"]
        for (label, href), run in zip(doc.links, loaded):
            assert not href.startswith(("/", "file:")), href
            target = (page.parent / urllib.parse.unquote(href)).resolve()
            assert target == (run.path / "report.html").resolve() and target.is_file()
            assert f'href="{href}"' in page.read_text(encoding="utf-8")
    assert doc.links[0][1] == os.path.relpath(runs / "creation a" / "report.html", page.parent).replace(
        os.sep, "/").replace(" ", "%20")


def test_same_folder_names_are_labelled_by_path_and_one_run_of_one_candidate(tmp_path):
    a = _run_dir(tmp_path / "x" / "run", "mmie", [Headline("m", "avg", 1.0)])
    b = _run_dir(tmp_path / "y" / "run", "mmie", [Headline("m", "avg", 2.0)])
    doc = leaderboard_doc([load_run(a), load_run(b)], tmp_path / "lb.html")
    assert [r["run"] for r in doc.tables[0].rows] == [str(b), str(a)]
    assert not wants_leaderboard([load_run(a)])
    # no summary.json: the Runs table takes the spec from the report's meta; a column empty for every run goes
    write_report(a, ReportDoc(title="t", benchmark="mmie", meta={"spec": "from-meta"}, headline=[Headline("m", "avg", 1.0)]))
    (a / "summary.json").unlink()
    runs_table = leaderboard_doc([load_run(a)], tmp_path / "lb.html").tables[-1]
    assert runs_table.rows == [{"run": "run", "benchmark": "mmie", "spec": "from-meta", "candidates": 1,
                                "report": "x/run/report.html"}]
    assert wants_leaderboard([load_run(a), load_run(b)])
    several = _run_dir(tmp_path / "z" / "run", "mmie", [Headline("m", "avg", 1.0), Headline("n", "avg", 2.0)])
    assert not wants_leaderboard([load_run(several)])  # its own page ranks its candidates


def test_load_run_errors_name_the_path(tmp_path):
    with pytest.raises(UsageError, match="no such folder"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"empty/report.json: no report.json \(written by judgekit run since "):
        load_run(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    for text, why in (("{", "invalid JSON at line 1"), ("[1]", "a JSON object with a title"),
                      ('{"title": "t", "headline": [{"candidate": "a", "figure": "f", "value": NaN}]}', "NaN"),
                      ('{"title": "t", "items": [{"id": 1, "blocks": [{"kind": "poem"}]}]}', "block kind")):
        (bad / "report.json").write_text(text)
        with pytest.raises(UsageError, match=re.escape(why)):
            load_run(bad)


class _Text(HTMLParser):
    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.scripts, self.chunks, self._in = 0, [], False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self._in = tag == "script"
        self.scripts += tag == "script"

    def handle_endtag(self, tag):
        self._in = False

    def handle_data(self, data):
        if not self._in:
            self.chunks.append(data)


_values = st.one_of(st.none(), st.just(float("nan")), st.just(float("inf")), st.floats(-1e6, 1e6),
                    st.integers(-1000, 1000))
_names = st.lists(st.text(max_size=4) | st.sampled_from(["<script>", "</script>", "]]>", "\0", "&amp;", "\ud800"]),
                  max_size=4).map("".join)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(heads=st.lists(st.tuples(_names, st.sampled_from(["reward", "vfs"]), _values, _values, _values,
                                st.booleans()), max_size=8))
def test_any_headline_values_never_crash_and_unknown_sort_last(heads):
    from judgekit.report.render import clean_text, render_html

    doc = ReportDoc(title="t", benchmark="b",
                    headline=[Headline(c, f, v, lo, hi, higher_is_better=hb) for c, f, v, lo, hi, hb in heads])
    run = Run(path=Path("r"), doc=doc, label="r")
    (cols, rows), = leaderboard_rows([run]).values() if heads else [([], [])]
    if cols:
        vals = [r.cells.get(cols[0]) for r in rows]
        known = [h.value for h in vals if h is not None and isinstance(h.value, (int, float)) and math.isfinite(h.value)]
        assert len(known) == sum(1 for h in vals[:len(known)] if h is not None and h.value is not None
                                 and math.isfinite(h.value))  # every known value before every unknown one
        hb = next(h for _, f, *_, h in heads if f == cols[0][0])  # the figure's first headline says which way
        assert known == sorted(known, reverse=hb)
    page = render_html(leaderboard_doc([run], Path("lb.html")).to_json())  # JSON with no NaN, escaped text
    parsed = _Text(page)
    assert parsed.scripts == 2  # the data and the page's own script; no name opened another
    text = "".join(parsed.chunks)
    for c, *_ in heads:
        assert clean_text(c).replace("\0", "\ufffd") in text  # shown as written, never read as markup


# -- the page in headless Chromium ---------------------------------------------------------------

class _Tables(HTMLParser):
    """The dumped DOM's tables (by their h3 title: rows of cell texts) and the header's links."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self.links: list[tuple[str, str]] = []
        self._title: str | None = None
        self._h3 = self._nav = self._cell = False
        self._row: list[str] | None = None
        self._a: tuple[str, list[str]] | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h3":
            self._h3, self._title = True, ""
        elif tag == "nav" and "links" in (a.get("class") or ""):
            self._nav = True
        elif tag == "a" and self._nav:
            self._a = (a.get("href") or "", [])
        elif tag == "tr" and self._title is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = True
            self._row.append("")

    def handle_endtag(self, tag):
        if tag == "h3":
            self._h3 = False
            self.tables[self._title or ""] = []
        elif tag == "nav":
            self._nav = False
        elif tag == "a" and self._a is not None:
            self.links.append((self._a[0], "".join(self._a[1])))
            self._a = None
        elif tag in ("td", "th"):
            self._cell = False
        elif tag == "tr" and self._row is not None:
            self.tables[self._title or ""].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._h3:
            self._title = (self._title or "") + data
        elif self._cell and self._row is not None:
            self._row[-1] += data
        if self._a is not None:
            self._a[1].append(data)


def test_the_leaderboard_page_in_chromium(tmp_path, chromium):
    """`judgekit report A B --out X/leaderboard.html` on two run folders: in the page Chromium
    draws, the rows are in the board's order and each run's link resolves to its report.html."""
    a = _run_dir(tmp_path / "runs" / "run a", "creation_mmbench", [
        Headline("gpt-4o", "Reward", 10.0, 5.0, 15.0, judge="judge"),
        Headline("<b>qwen</b>", "Reward", 30.0, 20.0, 40.0, judge="judge")])
    b = _run_dir(tmp_path / "runs" / "run b", "creation_mmbench", [
        Headline("gpt-4o", "Reward", -20.0, -30.0, -10.0, judge="judge")])
    page = tmp_path / "boards" / "x" / "leaderboard.html"
    result = CliRunner().invoke(cli, ["report", str(a), str(b), "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"leaderboard: {page}"
    dom = _Tables(chromium.dom(page.as_uri(), budget_ms=3000))
    board = dom.tables["creation_mmbench"]
    assert board[0] == ["run", "candidate", "Reward"]
    assert [row[:3] for row in board[1:]] == [["run a", "<b>qwen</b>", "30.0 [20.0, 40.0]"],  # best first
                                              ["run a", "gpt-4o", "10.0 [5.0, 15.0]"],
                                              ["run b", "gpt-4o", "-20.0 [-30.0, -10.0]"]]
    assert [label for _, label in dom.links] == ["run a", "run b"]
    for (href, _), run in zip(dom.links, (a, b)):
        assert href.startswith("../../runs/run%20a" if run == a else "../../runs/run%20b"), href
        target = (page.parent / urllib.parse.unquote(href)).resolve()
        assert target == (run / "report.html").resolve() and target.is_file()
    runs = dom.tables["Runs"]
    assert [r[0] for r in runs[1:]] == ["run a", "run b"] and runs[1][-1] == dom.links[0][0]
