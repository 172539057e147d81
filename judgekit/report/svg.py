"""Charts as inline SVG, drawn in Python so a report shows them without JavaScript.

Two kinds, both from a chart's JSON (:meth:`judgekit.report.doc.Chart.to_json`):

- :func:`bars`: grouped vertical bars, one per series in each group, a whisker (with caps) from
  ``low`` to ``high`` where given; a value axis with 4-6 round ticks and gridlines, and a zero
  line (negative values go below it: Reward runs from -100 to 100).
- :func:`stacked`: one horizontal bar per group, split into the series' shares.

Every label is escaped; a ``None`` value draws no bar and says "n/a"; a bar too short to see (0, or
next to it) is drawn as a dark hairline on the zero line with its value written above it, so 0 never
looks missing.  Values in tooltips and labels have the decimals of the chart's kind of figure
(:mod:`judgekit.report.numbers`, from its title and unit), the same as the tables'.  An SVG carries
its natural size (``width``/``height``) and a ``viewBox``; the page lets it shrink to
:data:`MIN_SCALE` of that size and scrolls it beyond (:mod:`judgekit.report.render`).  Colours are the Okabe-Ito
palette (safe for the common colour blindnesses); a chart with ``palette: "diverging"`` (its series an
ordered scale, best first) goes from blue through grey to orange (:func:`diverging`).
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from . import numbers

__all__ = ["PALETTE", "MIN_SCALE", "diverging", "chart_svg", "bars", "stacked", "nice_ticks", "fmt", "chart_places"]

#: Okabe & Ito (2008), black last
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

#: a diverging scale's ends and middle: blue (best), grey, orange (worst); PuOr-like, safe for
#: the common colour blindnesses (blue against orange, told apart by lightness too)
_BEST, _MID, _WORST = (0x21, 0x66, 0xAC), (0xB8, 0xB8, 0xB8), (0xC4, 0x5A, 0x00)

#: the smallest a chart is drawn, as a share of its natural width (11 px labels at 9 px); below
#: that it scrolls sideways instead, with a hint
MIN_SCALE = 0.8

_CHAR_W = 6.6  # px per character of 11 px sans-serif, roughly
_MAX_LABEL = 28  # characters of a group label drawn; the whole label is in its <title>


def _e(s: Any) -> str:
    return escape(str(s), quote=True).replace("\0", "\ufffd")


def fmt(v: float | None) -> str:
    """A number as shown: 4 significant digits at most; None as "n/a"."""
    if v is None:
        return "n/a"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return f"{float(v):.4g}"


def chart_places(chart: dict[str, Any]) -> int:
    """The decimals of a chart's values: its figure's kind (from its title and unit), else its
    values'; 0 where every value is a whole number."""
    vals = [v for s in chart.get("series", []) for k in ("values", "low", "high") for v in (s.get(k) or [])]
    nums = [v for v in vals if numbers.is_number(v)]
    if nums and all(isinstance(v, int) for v in nums):
        return 0
    return numbers.decimals(numbers.figure_kind(chart.get("title", ""), chart.get("unit", "")), nums)


def _size_style(width: float) -> str:
    return f'style="width:100%;max-width:{width:.0f}px;min-width:{MIN_SCALE * width:.0f}px;height:auto"'


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def nice_ticks(lo: float, hi: float) -> list[float]:
    """4 to 6 round ticks (steps of 1, 2, 2.5 or 5 times a power of ten) covering [lo, hi]."""
    if hi < lo:
        lo, hi = hi, lo
    if hi - lo <= 0:
        lo, hi = (lo - 1, hi + 1) if lo != 0 else (0.0, 1.0)
    span = hi - lo
    power = 10.0 ** math.floor(math.log10(span / 5))
    for mult in (1, 2, 2.5, 5, 10, 20, 25, 50, 100):
        step = mult * power
        a, b = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        if b - a <= 5:
            break
    ticks = [round((a + i) * step, 12) for i in range(b - a + 1)]
    while len(ticks) < 4:  # a span that fits a step too neatly: one more tick away from zero
        if ticks[0] >= 0 or ticks[-1] > 0:
            ticks.append(round(ticks[-1] + step, 12))
        else:
            ticks.insert(0, round(ticks[0] - step, 12))
    return ticks


def diverging(n: int) -> list[str]:
    """``n`` colours from best (blue) through grey to worst (orange); the middle one grey when
    ``n`` is odd."""
    if n <= 1:
        return ["#%02X%02X%02X" % _MID] * max(n, 0)
    out = []
    for i in range(n):
        t = 2 * i / (n - 1) - 1  # -1 best .. 0 middle .. 1 worst
        end = _BEST if t < 0 else _WORST
        a = abs(t) ** 0.8  # a step off the middle is already visibly blue or orange
        out.append("#%02X%02X%02X" % tuple(round(m + (e - m) * a) for m, e in zip(_MID, end)))
    return out


def _colours(chart: dict[str, Any], n: int) -> list[str]:
    if chart.get("palette") == "diverging":
        return diverging(n)
    return [PALETTE[i % len(PALETTE)] for i in range(n)]


def _dark_text(colour: str) -> bool:
    """Whether text on ``colour`` should be dark (the fill is light)."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b > 155


def _legend(names: list[str], width: float, y: float, colours: list[str] | None = None) -> tuple[str, float]:
    """Swatches in rows from the left; returns the SVG and the height used."""
    out, x, row_h = [], 0.0, 18
    rows = 1
    for i, name in enumerate(names):
        label = name if len(name) <= 40 else name[:39] + "…"
        w = 18 + len(label) * _CHAR_W + 14
        if x > 0 and x + w > width:
            x, rows = 0.0, rows + 1
        yy = y + (rows - 1) * row_h
        out.append(f'<rect x="{x:.1f}" y="{yy:.1f}" width="12" height="12" fill="{(colours or PALETTE)[i % len(colours or PALETTE)]}"/>'
                   f'<text x="{x + 17:.1f}" y="{yy + 10:.1f}" class="lg">{_e(label)}<title>{_e(name)}</title></text>')
        x += w
    return "".join(out), rows * row_h


def chart_svg(chart: dict[str, Any]) -> str:
    """The SVG of a chart's JSON, by its ``kind``."""
    return stacked(chart) if chart.get("kind") == "stacked" else bars(chart)


def bars(chart: dict[str, Any]) -> str:
    groups = [str(g) for g in chart.get("groups", [])]
    series = list(chart.get("series", []))
    unit = str(chart.get("unit") or "")
    ng, ns = max(len(groups), 1), max(len(series), 1)

    def col(s: dict[str, Any], key: str) -> list[float | None]:
        vals = s.get(key) or []
        return [_num(vals[i]) if i < len(vals) else None for i in range(len(groups))]

    places = chart_places(chart)

    def show(v: float | None) -> str:
        return numbers.number(v, places) if v is not None else "n/a"

    vals = [col(s, "values") for s in series]
    lows = [col(s, "low") for s in series]
    highs = [col(s, "high") for s in series]
    seen = [v for vs in (vals + lows + highs) for v in vs if v is not None]
    rng = chart.get("range")
    if rng and len(rng) == 2 and _num(rng[0]) is not None and _num(rng[1]) is not None:
        lo, hi = sorted((float(rng[0]), float(rng[1])))
        ticks = [t for t in nice_ticks(lo, hi) if lo - 1e-9 <= t <= hi + 1e-9]
    else:
        lo, hi = min(seen + [0.0]), max(seen + [0.0])
        ticks = nice_ticks(lo, hi)
        lo, hi = min(ticks[0], lo), max(ticks[-1], hi)
    if hi <= lo:
        hi = lo + 1

    bar_w = max(5.0, min(28.0, 160.0 / ns, 1100.0 / (ng * ns)))  # a wide chart scrolls past ~1200 px
    group_w = max(ns * bar_w + 14, 64.0)
    plot_w = max(300.0, ng * group_w)
    group_w = plot_w / ng
    longest = max((min(len(g), _MAX_LABEL) for g in groups), default=0)
    rotate = longest * _CHAR_W > group_w - 6
    label_h = (longest * _CHAR_W * 0.6 + 12) if rotate else 18
    tick_labels = [fmt(t) for t in ticks]
    left = 14 + max(len(t) for t in tick_labels) * _CHAR_W
    if rotate and groups:  # the first label, slanted to the left, stays inside
        left = max(left, 0.82 * min(len(groups[0]), _MAX_LABEL) * _CHAR_W - group_w / 2 + 4)
    width = left + plot_w + 12
    colours = _colours(chart, len(series))
    legend_svg, legend_h = (_legend([str(s.get("name", "")) for s in series], width - 10, 4, colours) if series
                            else ("", 0))
    top = legend_h + 14
    plot_h = 220.0
    height = top + plot_h + label_h + 8

    def y(v: float) -> float:
        v = min(max(v, lo), hi)
        return top + plot_h * (hi - v) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart bars" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'width="{width:.0f}" height="{height:.0f}" {_size_style(width)} role="img" '
           f'aria-label="{_e(chart.get("title", ""))}">',
           f'<g class="legend" transform="translate(4,0)">{legend_svg}</g>']
    for t, label in zip(ticks, tick_labels):
        yy = y(t)
        out.append(f'<line class="grid" x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{yy:.2f}" y2="{yy:.2f}" '
                   f'data-v="{t!r}"/><text class="tick" x="{left - 5:.1f}" y="{yy + 4:.2f}">{_e(label)}</text>')
    zero = y(0.0) if lo <= 0 <= hi else y(lo)
    for gi, g in enumerate(groups):
        gx = left + gi * group_w + (group_w - ns * bar_w) / 2
        for si, s in enumerate(series):
            x = gx + si * bar_w
            v, a, b = vals[si][gi], lows[si][gi], highs[si][gi]
            name = str(s.get("name", ""))
            tip = f"{name} / {g}: {show(v)}{unit if v is not None else ''}"
            if a is not None and b is not None:
                tip += f" [{show(a)}, {show(b)}]"
            if v is None:
                out.append(f'<text class="na" x="{x + bar_w / 2:.1f}" y="{zero - 3:.1f}">n/a<title>{_e(tip)}</title>'
                           f'</text>')
                continue
            y0, y1 = sorted((y(v), zero))
            if y1 - y0 < 2:  # 0 (or next to it): a dark hairline on the zero line and the value above
                out.append(f'<rect class="bar flat" x="{x + 0.5:.1f}" y="{zero - 1.5:.2f}" width="{bar_w - 1:.1f}" '
                           f'height="3" fill="{colours[si]}"><title>{_e(tip)}</title></rect>'
                           f'<text class="vl" x="{x + bar_w / 2:.1f}" y="{zero - 4:.1f}">{_e(show(v))}'
                           f'<title>{_e(tip)}</title></text>')
            else:
                out.append(f'<rect class="bar" x="{x + 0.5:.1f}" y="{y0:.2f}" width="{bar_w - 1:.1f}" '
                           f'height="{y1 - y0:.2f}" fill="{colours[si]}">'
                           f'<title>{_e(tip)}</title></rect>')
            if a is not None and b is not None:
                cx, cap = x + bar_w / 2, max(2.0, bar_w / 4)
                ya, yb = y(a), y(b)
                out.append(f'<g class="whisker"><line x1="{cx:.1f}" x2="{cx:.1f}" y1="{ya:.2f}" y2="{yb:.2f}"/>'
                           f'<line x1="{cx - cap:.1f}" x2="{cx + cap:.1f}" y1="{ya:.2f}" y2="{ya:.2f}"/>'
                           f'<line x1="{cx - cap:.1f}" x2="{cx + cap:.1f}" y1="{yb:.2f}" y2="{yb:.2f}"/></g>')
        label = g if len(g) <= _MAX_LABEL else g[:_MAX_LABEL - 1] + "…"
        cx = left + (gi + 0.5) * group_w
        ly = top + plot_h + 14
        if rotate:
            out.append(f'<text class="gl" transform="translate({cx:.1f},{ly - 4:.1f}) rotate(-35)" '
                       f'text-anchor="end">{_e(label)}<title>{_e(g)}</title></text>')
        else:
            out.append(f'<text class="gl" x="{cx:.1f}" y="{ly:.1f}" text-anchor="middle">{_e(label)}'
                       f'<title>{_e(g)}</title></text>')
    out.append(f'<line class="zero" x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{zero:.2f}" y2="{zero:.2f}"/>')
    out.append("</svg>")
    return "".join(out)


def stacked(chart: dict[str, Any]) -> str:
    groups = [str(g) for g in chart.get("groups", [])]
    series = list(chart.get("series", []))
    unit = str(chart.get("unit") or "")
    longest = max((min(len(g), _MAX_LABEL) for g in groups), default=0)
    left = 10 + longest * _CHAR_W + 8
    plot_w, bar_h, gap = 520.0, 20.0, 8.0
    width = left + plot_w + 60
    colours = _colours(chart, len(series))
    legend_svg, legend_h = (_legend([str(s.get("name", "")) for s in series], width - 10, 4, colours) if series
                            else ("", 0))
    top = legend_h + 12
    height = top + len(groups) * (bar_h + gap) + 6
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart stacked" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'width="{width:.0f}" height="{height:.0f}" {_size_style(width)} role="img" '
           f'aria-label="{_e(chart.get("title", ""))}">',
           f'<g class="legend" transform="translate(4,0)">{legend_svg}</g>']
    places = chart_places(chart)
    for gi, g in enumerate(groups):
        yy = top + gi * (bar_h + gap)
        label = g if len(g) <= _MAX_LABEL else g[:_MAX_LABEL - 1] + "…"
        out.append(f'<text class="gl" x="{left - 6:.1f}" y="{yy + bar_h * 0.7:.1f}" text-anchor="end">{_e(label)}'
                   f'<title>{_e(g)}</title></text>')
        vals = []
        for s in series:
            vs = s.get("values") or []
            v = _num(vs[gi]) if gi < len(vs) else None
            vals.append(v if v is None or v > 0 else (None if v < 0 else 0.0))
        total = sum(v for v in vals if v is not None)
        if total <= 0:
            out.append(f'<text class="na" x="{left + 4:.1f}" y="{yy + bar_h * 0.7:.1f}">n/a</text>')
            continue
        x = left
        for si, (s, v) in enumerate(zip(series, vals)):
            if not v:
                continue
            w = plot_w * v / total
            share = 100 * v / total
            tip = f"{s.get('name', '')} / {g}: {numbers.number(v, places)}{unit} ({share:.1f}%)"
            out.append(f'<rect class="seg" x="{x:.2f}" y="{yy:.1f}" width="{w:.2f}" height="{bar_h:.1f}" '
                       f'fill="{colours[si]}"><title>{_e(tip)}</title></rect>')
            if w > 34:
                dark = _dark_text(colours[si])
                out.append(f'<text class="pct{" dk" if dark else ""}" x="{x + w / 2:.1f}" y="{yy + bar_h * 0.7:.1f}" '
                           f'text-anchor="middle">{share:.0f}%</text>')
            x += w
        out.append(f'<text class="tot" x="{left + plot_w + 6:.1f}" y="{yy + bar_h * 0.7:.1f}">{_e(numbers.number(total, places))}'
                   f'{_e(unit)}</text>')
    out.append("</svg>")
    return "".join(out)
