"""The report page (judgekit.report.render): any text in any field stays text (property-based),
the data element gives the document back, the script runs only by its hash, and the leaderboard
and tables are drawn in Python."""

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.report.assets import SCRIPT
from judgekit.report.doc import Block, Chart, Headline, Item, ReportDoc, Series, Table, image, text
from judgekit.report.render import CSP, INTERN_MIN, clean_text, intern_texts, render_html

DATA_RE = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


class _Dom(HTMLParser):
    """Elements, script contents and the title, as a browser's parser sees them."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self.title = ""
        self._in: str | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in = tag

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "title" and not any(t == "body" for t, _ in self.elements):
            self.title += data  # the page's; an SVG's <title> is a tooltip


NASTY = ["</script>", "<script>alert(1)</script>", '<img src=x onerror="document.title=1">', "]]>", "<!--",
         "\u2028", "\u2029", "\0", "\ud800", "\udfff", "\ud83d\ude00", '"', "'", "&amp;", "&#x3c;", "\\u003c",
         "</ScRiPt >", "<svg onload=alert(1)>", "javascript:alert(1)", "\r\n", "<style>*{}</style>"]
_surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=2)
TEXT = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(NASTY), _surrogates), max_size=4).map("".join)


@st.composite
def docs(draw):
    pool = draw(st.lists(TEXT, min_size=9, max_size=9))  # ~60 fields from 9 texts: fast to draw
    step = draw(st.sampled_from([1, 2, 4, 5, 7, 8]))
    at = iter(range(0, 10_000, step))
    t = lambda: pool[next(at) % 9]  # noqa: E731
    long = "".join(pool) + t() + "x" * INTERN_MIN
    blocks = [Block(kind, t(), [text(t()), image(missing=t() or "x", caption=t())], group=t() or None,
                    role=t(), verdict=t(), highlight=t(), meta={t(): t()})
              for kind in ("question", "judgment", "turn")]
    return ReportDoc(
        title=t(), benchmark=t(), meta={t(): t(), "fixed": t()},
        headline=[Headline(t(), t(), 0.5, 0.1, 0.9, judge=t()), Headline(t(), t(), None)],
        charts=[Chart(t(), [t(), t()], [Series(t(), [1.0, -2.0], [0.0, -3.0], [2.0, -1.0])], unit=t(), note=t()),
                Chart(t(), [t()], [Series(t(), [1.0]), Series(t(), [2.0])], kind="stacked")],
        tables=[Table(t(), [{t(): t(), "n": 1.23456789}, {"n": None}], note=t())],
        items=[Item(t(), t(), blocks, tags={t(): t()}, flags=[t()], score=t()),
               # a long text twice (a prompt across candidates): interned in the page's data
               Item(t(), t(), [Block("question", t(), [text(long, mono=True)]), Block("answer", t(), [text(long)])],
                    tags={t(): [t(), t()]})],
        items_note=t(), links=[(t(), "../other/report.html")])


def _clean(v):
    if isinstance(v, str):
        return clean_text(v)
    if isinstance(v, dict):
        return {_clean(k): _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


STRUCTURE = {"version", "title", "benchmark", "meta", "headline", "charts", "tables", "items", "items_note",
             "links", "candidate", "figure", "value", "low", "high", "judge", "higher_is_better", "kind", "groups",
             "series", "unit", "note", "range", "name", "values", "rows", "id", "blocks", "tags", "flags", "score",
             "label", "parts", "group", "role", "verdict", "highlight", "status", "text", "image", "src", "missing",
             "caption", "width", "height"}


def _shape(v, names):
    """The same document with every text replaced by a plain one (distinct texts stay distinct,
    empty ones empty; the document's own keys and kinds kept): the page of this has the elements
    the page of ``v`` must have."""
    if isinstance(v, str):
        return names.setdefault(v, f"s{len(names)}") if v else ""
    if isinstance(v, dict):
        return {(k if k in STRUCTURE else _shape(k, names)): (x if k in ("kind", "status") else _shape(x, names))
                for k, x in v.items()}
    if isinstance(v, list):
        return [_shape(x, names) for x in v]
    return v


def _resolve(data, strings):
    """The page's data with each ``{"ref": i}`` part's text put back (what the page's script does)."""
    for it in data.get("items", []):
        for b in it["blocks"]:
            b["parts"] = [{"text": strings[p.pop("ref")], **p} if "ref" in p else p for p in b["parts"]]
    return data


def _tags(page: str) -> list[str]:
    return [t for t, _ in _Dom(page).elements]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs())
def test_any_text_stays_text(doc):
    doc_json = doc.to_json()
    doc_json["links"] = [[lab, href] for lab, href in doc_json["links"]]
    page = render_html(doc_json)
    page.encode("utf-8")  # lone surrogates replaced: the page is valid UTF-8
    dom = _Dom(page)
    # only the page's own elements: the same as for the document with plain strings
    assert [t for t, _ in dom.elements] == _tags(render_html(_shape(doc_json, {})))
    for tag, attrs in dom.elements:
        assert not [k for k in attrs if k.lower().startswith("on")], (tag, attrs)
    # two scripts: the data, and the page's own, unchanged
    assert [a.get("type") for t, a in dom.elements if t == "script"] == ["application/json", None]
    assert dom.scripts[-1] == SCRIPT
    # the data gives the document back, and nothing in it can end its element
    m = DATA_RE.search(page)
    raw = m.group(1)
    assert not set(raw) & {"<", ">", "&", "\u2028", "\u2029"}
    data = json.loads(raw)
    assert len(data.pop("strings")) == 1  # the long text, once
    assert _resolve(data, json.loads(raw)["strings"]) == _clean(doc_json)
    assert dom.title == clean_text(doc.title).replace("\0", "\ufffd")


def test_only_the_pages_script_may_run():
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in CSP
    assert "default-src 'none'" in CSP and "unsafe-inline" not in CSP.split("script-src")[1]
    page = render_html(ReportDoc("t", "b").to_json())
    assert f'content="{CSP}"' in page
    assert "innerHTML" not in SCRIPT and "insertAdjacentHTML" not in SCRIPT and "eval(" not in SCRIPT
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page


def _cells(page: str, table_class: str) -> list[list[str]]:
    """The text of each row of the first table with the class, bold cells as **x**."""
    start = page.index(f'<table class="{table_class}">')
    body = page[start:page.index("</table>", start)]
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)
        rows.append([re.sub(r"<b>(.*)</b>", r"**\1**", re.sub(r"<(?!/?b>)[^>]+>", "", c)) for c in cells])
    return rows


def test_leaderboard_marks_the_best_of_each_column():
    doc = ReportDoc("t", "b", headline=[
        Headline("gpt-4o", "Reward", 12.345678, 5.0, 20.0, judge="gpt-4o"),
        Headline("claude", "Reward", -3.0, -10.0, 4.0, judge="gpt-4o"),
        Headline("gpt-4o", "FID", 30.0, higher_is_better=False),
        Headline("claude", "FID", 25.5, higher_is_better=False),
        Headline("gemini", "FID", None, higher_is_better=False),
    ])
    rows = _cells(render_html(doc.to_json()), "lb")
    assert rows[0] == ["candidate", "Rewardjudge: gpt-4ohigher is better", "FIDlower is better"]
    # one format a column, the terminal's for that kind of figure: Reward 1 decimal, FID 2
    assert rows[1:] == [["gpt-4o", "**12.3 [5.0, 20.0]**", "30.00"],
                        ["claude", "-3.0 [-10.0, 4.0]", "**25.50**"],
                        ["gemini", "-", "-"]]


def test_tables_round_floats_and_show_none_as_a_dash():
    doc = ReportDoc("t", "b", tables=[Table("Agreement", [{"judge": "a<b", "kappa": 0.7123456, "n": 50},
                                                          {"judge": "c", "kappa": None, "extra": float("nan")}])])
    page = render_html(doc.to_json())
    start = page.index('<section class="table">')
    rows = re.findall(r"<tr>(.*?)</tr>", page[start:], re.S)[:3]
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r) for r in rows]
    assert cells == [["judge", "kappa", "n", "extra"], ["a&lt;b", "0.712", "50", "-"], ["c", "-", "-", "nan"]]
    assert json.loads(DATA_RE.search(page).group(1))["tables"][0]["rows"][1]["extra"] is None  # NaN: null


def test_links_keep_relative_targets_and_drop_script_urls():
    doc = ReportDoc("t", "b", links=[("run a", "runs/a/report.html"), ("evil", "JavaScript:alert(1)")])
    dom = _Dom(render_html(doc.to_json()))
    assert [a.get("href") for t, a in dom.elements if t == "a"] == ["runs/a/report.html"]


def test_repeated_long_texts_are_stored_once():
    long, other = "prompt " * 40, "y" * 300
    items = [Item(str(i), "t", [Block("question", "q", [text(long), text(other if i == 0 else "short")]),
                                 Block("answer", "a", [text(long, mono=True)])]) for i in range(3)]
    doc_json = ReportDoc("t", "b", items=items).to_json()
    data = intern_texts(doc_json)
    assert data["strings"] == [long]  # 6 times: once; the 300 characters seen once stay in place
    assert data["items"][1]["blocks"][1]["parts"] == [{"mono": True, "ref": 0}]
    assert data["items"][0]["blocks"][0]["parts"][1] == {"text": other}
    assert doc_json["items"][0]["blocks"][0]["parts"][0] == {"text": long}  # the document is untouched
    assert _resolve(json.loads(json.dumps(data)), data["strings"]) | {"strings": None} == doc_json | {"strings": None}
    once = ReportDoc("t", "b", items=[Item("1", "t", [Block("note", "n", [text(long), text("short")] * 2)])]).to_json()
    assert intern_texts(once)["strings"] == [long] and intern_texts(once, min_len=10_000) is once
    page = render_html(doc_json)
    assert page.count(long) == 1 and len(page) < len(render_html(ReportDoc("t", "b").to_json())) + 2500


def test_leaderboard_page_and_contents():
    headline = [Headline("a", "Accuracy", 50.0, unit="%"), Headline("b", "Accuracy", 40.0, unit="%"),
                Headline("a", "FID", 3.0, higher_is_better=False)]
    charts, tables = [Chart("c", ["g"], [Series("s", [1.0])])], [Table("t1", [{"x": 1}]), Table("t2", [{"x": 2}])]
    board = render_html(ReportDoc("t", "b", headline=headline, charts=charts, tables=tables).to_json())
    assert _cells(board, "lb")[0][1:] == ["Accuracy (%)higher is better", "FIDlower is better"]
    assert board.index('id="tables"') < board.index('id="charts"')  # no items: the tables first
    toc = re.search(r'<nav class="toc">(.*?)</nav>', board).group(1)
    assert re.findall(r'href="#(\w+)">(\w+)</a> <small>\((\d+)\)', toc) == [
        ("headline", "Leaderboard", "2"), ("tables", "Tables", "2"), ("charts", "Charts", "1")]
    run = render_html(ReportDoc("t", "b", headline=headline, charts=charts, tables=tables,
                                items=[Item("1", "i")]).to_json())
    assert run.index('id="headline"') < run.index('id="charts"') < run.index('id="tables"') < run.index('id="items"')
    assert re.findall(r'href="#(\w+)"', run) == ["headline", "charts", "tables", "items"]
    assert "nav class=\"toc\"" not in render_html(ReportDoc("t", "b", tables=tables).to_json())  # one section
