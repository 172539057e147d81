"""The report's SVG charts (judgekit.report.svg): bars and whiskers where the values say, None as
"n/a", labels escaped, round ticks, and the big cases (30 groups, 8 series) still drawn."""

import xml.etree.ElementTree as ET

import pytest

from judgekit.report.doc import Chart, Series
from judgekit.report.svg import PALETTE, bars, chart_svg, diverging, nice_ticks, stacked

NS = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed XML: every label escaped


def _scale(root: ET.Element):
    """value -> y, from the gridlines (each carries its tick value)."""
    grid = [(float(g.get("data-v")), float(g.get("y1"))) for g in root.iter(f"{NS}line") if g.get("class") == "grid"]
    (v0, y0), (v1, y1) = grid[0], grid[-1]
    return lambda v: y0 + (v - v0) * (y1 - y0) / (v1 - v0)


def _bars(root):
    return [r for r in root.iter(f"{NS}rect") if r.get("class") in ("bar", "bar flat")]


def _whiskers(root):
    out = []
    for g in root.iter(f"{NS}g"):
        if g.get("class") == "whisker":
            stem, cap_a, cap_b = list(g)
            out.append((float(stem.get("y1")), float(stem.get("y2")), float(cap_a.get("y1")), float(cap_b.get("y1"))))
    return out


def test_bars_and_whiskers_sit_at_their_values_on_a_signed_axis():
    chart = Chart("Reward", ["a", "b"], [Series("gpt-4o", [40.0, -25.0], [30.0, -45.0], [52.5, -5.0])],
                  range=(-100, 100))
    root = _parse(bars(chart.to_json()))
    y = _scale(root)
    ticks = [float(g.get("data-v")) for g in root.iter(f"{NS}line") if g.get("class") == "grid"]
    assert ticks == [-100, -50, 0, 50, 100]
    zero = [float(z.get("y1")) for z in root.iter(f"{NS}line") if z.get("class") == "zero"][0]
    assert zero == pytest.approx(y(0), abs=0.01)
    (pos, neg) = _bars(root)
    # the positive bar runs from 40 down to zero; the negative one from zero down to -25
    assert float(pos.get("y")) == pytest.approx(y(40), abs=0.01)
    assert float(pos.get("y")) + float(pos.get("height")) == pytest.approx(y(0), abs=0.01)
    assert float(neg.get("y")) == pytest.approx(y(0), abs=0.01)
    assert float(neg.get("y")) + float(neg.get("height")) == pytest.approx(y(-25), abs=0.01)
    (w1, w2) = _whiskers(root)
    assert w1 == pytest.approx((y(30), y(52.5), y(30), y(52.5)), abs=0.01)
    assert w2 == pytest.approx((y(-45), y(-5), y(-45), y(-5)), abs=0.01)
    titles = [t.text for r in _bars(root) for t in r]
    assert titles == ["gpt-4o / a: 40.0 [30.0, 52.5]", "gpt-4o / b: -25.0 [-45.0, -5.0]"]  # Reward: 1 decimal


def test_none_values_draw_no_bar_and_say_na():
    chart = Chart("SIM", ["only"], [Series("x", [None], [None], [None]), Series("y", [0.5])])
    root = _parse(bars(chart.to_json()))
    assert len(_bars(root)) == 1
    na = [t for t in root.iter(f"{NS}text") if t.get("class") == "na"]
    assert len(na) == 1 and na[0].text == "n/a"
    assert _whiskers(root) == []
    # no values at all: an axis from 0, no bar, no error
    root = _parse(bars(Chart("empty", ["g"], [Series("s", [None])]).to_json()))
    assert _bars(root) == []


def test_labels_are_escaped():
    evil = '<script>alert(1)</script> & "quoted" </svg>'
    chart = Chart(evil, [evil, "b"], [Series(evil, [1.0, 2.0], [0.5, 1.5], [1.5, 2.5])])
    for svg in (bars(chart.to_json()), stacked(chart.to_json())):
        assert "<script" not in svg and "</svg>" not in svg[:-6]
        root = _parse(svg)
        texts = "".join(root.itertext())
        assert "<script>alert(1)</script>" in texts
        assert not [e for e in root.iter() if e.tag.endswith("script")]


def test_many_groups_and_series_rotate_long_labels_and_cycle_the_palette():
    groups = [f"a long category name {i}" for i in range(30)]
    series = [Series(f"model-{s}", [float(s + g) for g in range(30)]) for s in range(8)]
    root = _parse(bars(Chart("wide", groups, series).to_json()))
    assert len(_bars(root)) == 240
    assert {r.get("fill") for r in _bars(root)} == set(PALETTE)
    labels = [t for t in root.iter(f"{NS}text") if t.get("class") == "gl"]
    assert len(labels) == 30 and all("rotate(-35)" in t.get("transform", "") for t in labels)
    short = _parse(bars(Chart("short", ["a", "b"], [Series("s", [1.0, 2.0])]).to_json()))
    assert all(t.get("transform") is None for t in short.iter(f"{NS}text") if t.get("class") == "gl")


def test_stacked_shares():
    chart = Chart("verdicts", ["gpt-4o", "none"], [Series("win", [3, 0]), Series("tie", [1, None]),
                                                   Series("loss", [0, 0])], kind="stacked")
    root = _parse(chart_svg(chart.to_json()))
    segs = [r for r in root.iter(f"{NS}rect") if r.get("class") == "seg"]
    assert len(segs) == 2
    assert float(segs[0].get("width")) == pytest.approx(3 * float(segs[1].get("width")))
    assert [t.text for s in segs for t in s] == ["win / gpt-4o: 3 (75.0%)", "tie / gpt-4o: 1 (25.0%)"]
    assert [t.text for t in root.iter(f"{NS}text") if t.get("class") == "na"] == ["n/a"]


@pytest.mark.parametrize("lo,hi", [(0, 1), (0, 0.57), (-100, 100), (0, 0), (-3, 0), (0.5, 0.52), (0, 7),
                                   (12, 12), (-0.2, 4e6), (0, 1e-5)])
def test_ticks_are_round_and_cover_the_range(lo, hi):
    ticks = nice_ticks(lo, hi)
    assert 4 <= len(ticks) <= 6
    assert ticks[0] <= lo and ticks[-1] >= hi
    steps = {round(b - a, 12) for a, b in zip(ticks, ticks[1:])}
    assert len({round(s / max(steps), 6) for s in steps}) == 1
    step = max(steps)
    mant = step / 10 ** __import__("math").floor(__import__("math").log10(step))
    assert round(mant, 6) in (1, 2, 2.5, 5)


def test_diverging_palette_runs_blue_through_grey_to_orange():
    names = ["much better", "better", "tie", "worse", "much worse"]
    for kind in ("stacked", "bars"):
        chart = Chart("Verdicts", ["gpt-4o"], [Series(n, [1.0]) for n in names], kind=kind, palette="diverging")
        root = _parse(chart_svg(chart.to_json()))
        fills = [r.get("fill") for r in root.iter(f"{NS}rect") if r.get("class") in ("bar", "seg")]
        legend = [r.get("fill") for g in root.iter(f"{NS}g") if g.get("class") == "legend" for r in g.iter(f"{NS}rect")]
        assert fills == legend == diverging(5)
    cols = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in diverging(5)]
    assert cols[2] == (0xB8, 0xB8, 0xB8)  # the middle of an odd scale: grey
    assert all(b > r for r, g, b in cols[:2]) and all(r > b for r, g, b in cols[3:])  # blue best, orange worst
    assert cols[0][2] > cols[1][2] - 30 and abs(cols[1][0] - cols[1][2]) < abs(cols[0][0] - cols[0][2])  # fading
    assert len(set(diverging(4))) == 4 and "#B8B8B8" not in diverging(4)  # even: no grey
    categorical = stacked(Chart("c", ["g"], [Series(n, [1.0]) for n in names], kind="stacked").to_json())
    assert [r.get("fill") for r in _parse(categorical).iter(f"{NS}rect") if r.get("class") == "seg"] == list(PALETTE[:5])
