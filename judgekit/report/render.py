"""One self-contained HTML page from a report document's JSON.

What works without JavaScript is drawn here, in Python: the title, links and facts, the headline
as a leaderboard (candidate rows by figure columns, the best of each column bold), the charts
(:mod:`judgekit.report.svg`) and the tables, every text escaped.  The items are browsed by the
page's one script (:data:`SCRIPT`, in :mod:`judgekit.report.assets`), which reads the document from
``<script type="application/json" id="report-data">`` and builds the current page of items with
``textContent`` only.

Two walls keep a model's text from running as code: it is escaped wherever it is written (and in
the JSON ``<``, ``>``, ``&``, U+2028 and U+2029 are ``\\uXXXX``, so no ``</script>`` closes the
data), and the Content-Security-Policy lets only the page's own script run (by its sha256), loads
nothing from the network, and images only from the page's folder or ``data:``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from html import escape
from typing import Any
from urllib.parse import urlsplit

from .assets import CSS, SCRIPT
from . import numbers
from .svg import chart_svg, fmt

__all__ = ["render_html", "SCRIPT", "CSP", "data_json", "dumps", "clean_text", "intern_texts", "INTERN_MIN"]

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = (f"default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; "
       f"script-src 'sha256-{_SCRIPT_HASH}'; base-uri 'none'; form-action 'none'")

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def clean_text(s: str) -> str:
    """``s`` encodable as UTF-8: lone surrogates become U+FFFD (a pair written as two code
    points becomes its character)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _e(s: Any) -> str:
    return escape(str(s), quote=True).replace("\0", "\ufffd")


def finite(v: Any) -> Any:
    """``v`` with NaN and infinities (not JSON; ``JSON.parse`` refuses them) as None."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return v


def dumps(doc_json: dict[str, Any]) -> str:
    """Compact JSON of a document: NaN and infinities as null, other types as ``str``."""
    try:
        return json.dumps(doc_json, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    except ValueError:
        return json.dumps(finite(doc_json), ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                          default=str)


#: a part's text at least this long, seen more than once, is stored once in the page's string table
#: (a reference costs about 10 characters; on the shipped GuessBench run 64 saves 7 % more than 200)
INTERN_MIN = 64


def intern_texts(doc_json: dict[str, Any], min_len: int = INTERN_MIN) -> dict[str, Any]:
    """The document for the page's data: every part text of ``min_len`` characters or more that
    occurs more than once (a prompt repeated across candidates and approaches) goes into
    ``strings`` once, its parts ``{"ref": i}`` (plus ``mono``) instead of ``{"text": ...}``; the
    page's script puts the texts back.  ``doc_json`` is not changed."""
    items = doc_json.get("items") or []
    seen: dict[str, int] = {}
    for it in items:
        for b in it.get("blocks") or []:
            for p in b.get("parts") or []:
                t = p.get("text")
                if isinstance(t, str) and len(t) >= min_len:
                    seen[t] = seen.get(t, 0) + 1
    index: dict[str, int] = {}
    for t, n in seen.items():
        if n > 1:
            index[t] = len(index)
    if not index:
        return doc_json

    def part(p: dict[str, Any]) -> dict[str, Any]:
        t = p.get("text")
        if isinstance(t, str) and t in index:
            return {**{k: v for k, v in p.items() if k != "text"}, "ref": index[t]}
        return p

    out = dict(doc_json)
    out["items"] = [{**it, "blocks": [{**b, "parts": [part(p) for p in b.get("parts") or []]}
                                      for b in it.get("blocks") or []]} for it in items]
    out["strings"] = list(index)
    return out


def data_json(doc_json: dict[str, Any]) -> str:
    """The document as JSON safe inside a ``<script>`` element (no ``<``, ``>``, ``&``, U+2028,
    U+2029 outside ``\\uXXXX`` escapes); ``json.loads`` gives the document back."""
    s = dumps(doc_json)
    for ch, rep in _JSON_ESCAPES.items():
        if ch in s:
            s = s.replace(ch, rep)
    return s


def cell(v: Any) -> str:
    """A table value as text: floats to 4 significant digits at most, None as "-"."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return fmt(v) if math.isfinite(v) else str(v)
    if isinstance(v, (list, dict)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return str(v)


def _href(h: str) -> str | None:
    """A link's target if it is relative or http(s)/file; None for any other scheme."""
    scheme = urlsplit(h).scheme.lower()
    return h if scheme in ("", "http", "https", "file") else None


#: a wide chart or table scrolls sideways in its own box; the hint under it ("scroll →") shows while
#: its content is wider than the box (the page's script sets ``data-overflow``; without the script
#: the box's right edge is shaded by CSS alone, and the hint stays hidden)
_SCROLL_CLOSE = '</div><p class="scroll-hint" aria-hidden="true">scroll sideways for more →</p></div>'


def _scroll_open() -> str:
    return '<div class="scrollbox"><div class="scroll" tabindex="0">'


def _headline(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    cols: dict[tuple[str, str | None], bool] = {}
    cands: dict[str, None] = {}
    cells: dict[tuple[str, tuple[str, str | None]], dict[str, Any]] = {}
    for h in rows:
        key = (str(h.get("figure", "")), h.get("judge"))
        cols.setdefault(key, h.get("higher_is_better", True) is not False)
        cands.setdefault(str(h.get("candidate", "")), None)
        cells[(str(h.get("candidate", "")), key)] = h
    best: dict[tuple[str, str | None], float] = {}
    for key, higher in cols.items():
        vals = [c["value"] for (cand, k), c in cells.items() if k == key and isinstance(c.get("value"), (int, float))
                and not isinstance(c.get("value"), bool) and math.isfinite(c["value"])]
        if len(vals) > 1:
            best[key] = max(vals) if higher else min(vals)
    units: dict[str, str] = {}
    for h in rows:
        if h.get("unit"):
            units.setdefault(str(h.get("figure", "")), str(h["unit"]))
    head = "".join(f'<th>{_e(fig)}{f" <span class=unit>({_e(units[fig])})</span>" if units.get(fig) else ""}'
                   f'{f"<br><small>judge: {_e(j)}</small>" if j else ""}'
                   f'<small class="dir">{"higher is better" if hb else "lower is better"}</small></th>'
                   for (fig, j), hb in cols.items())
    # one number of decimals a column: its figure's kind (the terminal's), else its values'
    places = {key: numbers.decimals(numbers.figure_kind(key[0], units.get(key[0], "")),
                                    [c.get(x) for (_, k), c in cells.items() if k == key for x in ("value", "low", "high")])
              for key in cols}
    body = []
    for cand in cands:
        tds = []
        for key in cols:
            h = cells.get((cand, key))
            if h is None or h.get("value") is None:
                tds.append('<td class="num">-</td>')
                continue
            v = h["value"]
            text = _e(numbers.number(v, places[key]))
            if numbers.is_number(h.get("low")) and numbers.is_number(h.get("high")):
                text += (f' <span class="ci">[{_e(numbers.number(h["low"], places[key]))}, '
                         f'{_e(numbers.number(h["high"], places[key]))}]</span>')
            strong = key in best and v == best[key]
            tds.append(f'<td class="num">{"<b>" + text + "</b>" if strong else text}</td>')
        body.append(f"<tr><th scope=row>{_e(cand)}</th>{''.join(tds)}</tr>")
    return (f'<section id="headline"><h2>Leaderboard</h2>{_scroll_open()}<table class="lb"><thead><tr>'
            f'<th>candidate</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{_SCROLL_CLOSE}</section>')


def _table(t: dict[str, Any]) -> str:
    rows = [r for r in t.get("rows", []) if isinstance(r, dict)]
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(str(k), None)
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    by_col = {c: [r.get(c) for r in ({str(k): v for k, v in r.items()} for r in rows)] for c in cols}
    # a column of numbers has one number of decimals: its figure's kind by its head, else its values'
    kinds = {c: numbers.figure_kind(c) for c in cols}
    places = {c: numbers.decimals(kinds[c] if kinds[c] != "count" else None, vs) for c, vs in by_col.items()
              if any(isinstance(v, float) for v in vs)}
    body = []
    for r in rows:
        rr = {str(k): v for k, v in r.items()}
        tds = []
        for c in cols:
            v = rr.get(c)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            text = numbers.number(v, places[c]) if num and c in places and numbers.is_number(v) else cell(v)
            tds.append(f'<td{" class=num" if num else ""}>{_e(text)}</td>')
        body.append(f"<tr>{''.join(tds)}</tr>")
    note = f'<p class="note">{_e(t["note"])}</p>' if t.get("note") else ""
    return (f'<section class="table"><h3>{_e(t.get("title", ""))}</h3>{note}{_scroll_open()}<table>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{_SCROLL_CLOSE}</section>')


def _chart(c: dict[str, Any]) -> str:
    note = f'<p class="note">{_e(c["note"])}</p>' if c.get("note") else ""
    unit = f' <small>({_e(c["unit"])})</small>' if c.get("unit") else ""
    svg = chart_svg(c)
    natural = re.search(r' width="(\d+)"', svg)
    size = f' style="width:{int(natural.group(1)) + 26}px"' if natural else ""  # its box: the chart and padding
    return (f'<figure class="chart"{size}><figcaption>{_e(c.get("title", ""))}{unit}</figcaption>'
            f'{_scroll_open()}{svg}{_SCROLL_CLOSE}{note}</figure>')


def render_html(doc_json: dict[str, Any]) -> str:
    """The page for a document's JSON (:meth:`judgekit.report.doc.ReportDoc.to_json`)."""
    title = str(doc_json.get("title", "report"))
    links = []
    for pair in doc_json.get("links", []) or []:
        label, href = str(pair[0]), _href(str(pair[1]))
        links.append(f'<a href="{_e(href)}">{_e(label)}</a>' if href is not None else
                     f'<span>{_e(label)} ({_e(pair[1])})</span>')
    meta = doc_json.get("meta", {}) or {}
    meta_html = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in meta.items())
    charts = "".join(_chart(c) for c in doc_json.get("charts", []) or [])
    tables = "".join(_table(t) for t in doc_json.get("tables", []) or [])
    items = doc_json.get("items", []) or []
    items_note = doc_json.get("items_note")
    headline = doc_json.get("headline", []) or []
    n_charts, n_tables = len(doc_json.get("charts", []) or []), len(doc_json.get("tables", []) or [])
    toc = [(a, label, n) for a, label, n, show in (
        ("headline", "Leaderboard", len({str(h.get("candidate", "")) for h in headline}), bool(headline)),
        ("charts", "Charts", n_charts, bool(charts)), ("tables", "Tables", n_tables, bool(tables)),
        ("items", "Items", len(items), bool(items))) if show]
    if not items:  # a leaderboard's page: its table first
        toc = sorted(toc, key=lambda x: x[0] != "headline" and x[0] != "tables")
    toc_html = " · ".join(f'<a href="#{a}">{label}</a> <small>({n})</small>' for a, label, n in toc)
    charts_html = (f'<section id="charts"><h2>Charts</h2><div class="charts">{charts}</div></section>'
                   if charts else "")
    tables_html = f'<section id="tables"><h2>Tables</h2>{tables}</section>' if tables else ""
    parts = [
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>",
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name=viewport content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f'<header><h1>{_e(title)}</h1>',
        f'<p class="bench">{_e(doc_json.get("benchmark", ""))}</p>' if doc_json.get("benchmark") else "",
        f'<nav class="links">{" · ".join(links)}</nav>' if links else "",
        f'<dl class="meta">{meta_html}</dl>' if meta_html else "",
        f'<nav class="toc">{toc_html}</nav>' if len(toc) > 1 else "",
        "</header><main>",
        _headline(headline),
        *((charts_html, tables_html) if items else (tables_html, charts_html)),
    ]
    if items:
        parts.append(f'<section id="items"><h2>Items <small>({len(items)})</small></h2>'
                     + (f'<p class="note">{_e(items_note)}</p>' if items_note else "")
                     + '<noscript><p class="note">The item browser needs JavaScript; every item is in '
                       'report.json beside this page.</p></noscript><div id="browser"></div></section>')
    parts.append("</main>")
    parts.append(f'<script type="application/json" id="report-data">{data_json(intern_texts(doc_json))}</script>')
    parts.append(f"<script>{SCRIPT}</script></body></html>\n")
    return clean_text("".join(parts))
