"""Every shipped runner's report.html in headless Chromium at 360, 400, 1400 and 1600 px: no chart,
table or leaderboard is wider than its box without its "scroll sideways" hint showing, and nothing
runs off the page.  The pages are the golden test's runs (``golden_runs``: each runner run once per
session).

Headless Chromium's window is 500 px wide at the least, so the pages are framed: one Chromium start
per width loads a page of ``<iframe>``s, one per runner, each that wide, each report opened with
``#layoutcheck`` (its script writes ``data-layout`` on its ``<body>``: the window's width, the page's,
and per scroll box whether its content overflows and whether its hint shows); the framing page reads
them at its load (``--allow-file-access-from-files``) and writes them on its own ``<body>``."""

import html
import json
import re

import pytest

from golden import SHIPPED

WIDTHS = (360, 400, 1400, 1600)

_FRAMER = """<!DOCTYPE html><html><body>{frames}<script>
window.addEventListener("load", function () {{
  var got = {{}};
  document.querySelectorAll("iframe").forEach(function (f) {{
    var b = f.contentDocument && f.contentDocument.body;
    got[f.dataset.name] = b ? b.getAttribute("data-layout") : null;
  }});
  document.body.setAttribute("data-got", JSON.stringify(got));
}});
</script></body></html>"""


@pytest.fixture(scope="module")
def layouts(chromium, golden_runs, tmp_path_factory):
    """{width: {runner: the page's data-layout}}."""
    pages = {name: golden_runs(name) / "report.html" for name in SHIPPED}
    root = tmp_path_factory.mktemp("layout")
    out = {}
    for w in WIDTHS:
        frames = "".join(f'<iframe data-name="{n}" src="{p.as_uri()}#layoutcheck" width="{w}" height="900"></iframe>'
                         for n, p in pages.items())
        framer = root / f"frames-{w}.html"
        framer.write_text(_FRAMER.format(frames=frames), encoding="utf-8")
        dom = chromium.run(framer.as_uri(), "--allow-file-access-from-files", "--dump-dom",
                           "--virtual-time-budget=5000", window=f"{max(w, 500) + 100},900")
        got = json.loads(html.unescape(re.search(r'data-got="([^"]*)"', dom).group(1)))
        out[w] = {n: json.loads(v) if v else None for n, v in got.items()}
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_no_box_overflows_without_its_hint_and_nothing_runs_off_the_page(layouts, width):
    seen = layouts[width]
    assert sorted(seen) == sorted(SHIPPED) and all(seen.values()), "a report did not lay out"
    for name, lay in seen.items():
        assert lay["window"] == width
        assert lay["page"] <= lay["view"] + 1, f"{name} at {width} px: the page runs {lay['page'] - lay['view']} px off"
        assert lay["boxes"], name
        cut = [b["name"] for b in lay["boxes"] if b["overflow"] and not b["hint"]]
        assert not cut, f"{name} at {width} px: cut without a scroll hint: {cut}"
        hinted = [b["name"] for b in lay["boxes"] if b["hint"] and not b["overflow"]]
        assert not hinted, f"{name} at {width} px: a hint where nothing scrolls: {hinted}"


def test_narrow_windows_scroll_and_wide_ones_fit(layouts):
    """The check sees real overflow: at 360 px every report has charts that scroll (with their
    hint); at 1400 px every chart and leaderboard of every report fits its box."""
    for name in SHIPPED:
        assert any(b["overflow"] and b["kind"] == "chart" for b in layouts[360][name]["boxes"]), name
        wide = [b["name"] for b in layouts[1400][name]["boxes"] if b["overflow"] and b["kind"] != "table"]
        assert not wide, f"{name} at 1400 px: {wide}"
