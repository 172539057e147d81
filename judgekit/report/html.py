"""A self-contained HTML page of items side by side: original image | caption | generated image.

Written for MMGenBench (the best and the worst items by SIM-Score per candidate and generator),
but general: a title, ``meta`` (key/value lines such as the encoder's name), summary tables
(lists of row dicts), then sections of items.  Each item row shows the item id, its score, its
labels (e.g. image patterns) and a note (e.g. the seed), then the original image, the caption
(the raw caption, when given, folds out of a ``<details>``) and the generated image.

The page:

* links the images, never inlines them: ``src`` is the image's path relative to the HTML file's
  folder (``os.path.relpath``; a ``file://`` URI where no relative path exists, e.g. another
  drive), percent-encoded;
* HTML-escapes every text it shows (captions come from models and may hold markup);
* shows a placeholder box with the reason where an image is missing (no path, the file is gone,
  or the generation failed: :attr:`ReportItem.error`);
* needs no network and no JavaScript (inline CSS; a Content-Security-Policy forbids scripts and
  any remote load), and reads well at 1280 px wide;
* is written atomically (a temporary file in the same folder, then ``os.replace``).

Usage::

    best, worst = best_and_worst(items, k=5)
    write_html_report(out_dir / "report.html", title="MMGenBench: my-run",
                      meta={"encoder": "openai/clip-vit-large-patch14-336"},
                      summary_tables=[("SIM per pattern", rows), ("FID", fid_rows)],
                      sections=[ReportSection(title="gpt-4o / FLUX.1-dev: best 5", items=best)],
                      score_name="SIM")
"""

from __future__ import annotations

import html
import math
import os
import threading
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ReportItem", "ReportSection", "write_html_report", "render_html_report",
           "best_and_worst", "image_src"]


@dataclass(frozen=True)
class ReportItem:
    """One row of the side-by-side view."""

    item_id: str
    """The item's id in the data set (shown, escaped)."""
    score: float | None
    """The item's score (e.g. SIM); None when it has none (e.g. the generation failed)."""
    caption: str
    """The caption shown (for MMGenBench the cleaned caption-prompt given to the generator)."""
    raw_caption: str | None = None
    """The model's raw reply, folded in a ``<details>`` under the caption; None: not shown."""
    original: Path | None = None
    """The original image file; None: a placeholder box is shown."""
    generated: Path | None = None
    """The generated image file; None: a placeholder box with :attr:`error` (or "no image")."""
    labels: Sequence[str] = ()
    """Short tags shown beside the id (e.g. the item's image patterns)."""
    note: str | None = None
    """A short line under the header (e.g. ``seed 1234``)."""
    error: str | None = None
    """Why the generated image is missing (e.g. the generation's error message)."""


@dataclass(frozen=True)
class ReportSection:
    """A titled list of items (e.g. one candidate x generator, best k or worst k), in order."""

    title: str
    subtitle: str | None = None
    items: Sequence[ReportItem] = ()


def best_and_worst(items: Iterable[ReportItem], k: int) -> tuple[list[ReportItem], list[ReportItem]]:
    """The k items with the highest score (best first) and the k lowest (worst first).

    Items without a finite score are left out.  Ties are broken by item id, so the choice is
    stable.  When there are fewer than 2k scored items the worst list holds only the items not
    already in the best list, so no item is shown twice.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    scored = [it for it in items if it.score is not None and math.isfinite(it.score)]
    ranked = sorted(scored, key=lambda it: (-float(it.score), it.item_id))  # type: ignore[arg-type]
    best = ranked[:k]
    rest = ranked[k:]
    worst = sorted(rest, key=lambda it: (float(it.score), it.item_id))[:k]  # type: ignore[arg-type]
    return best, worst


def image_src(image: Path, html_dir: Path) -> str:
    """The ``src`` for ``image`` in a page in ``html_dir``: a relative, percent-encoded URL, or a
    ``file://`` URI where no relative path exists.  (Not HTML-escaped: the caller escapes.)"""
    target = os.path.abspath(image)
    try:
        rel = os.path.relpath(target, os.path.abspath(html_dir))
    except ValueError:  # e.g. another drive on Windows
        return Path(target).as_uri()
    return urllib.parse.quote(rel.replace(os.sep, "/"), safe="/")


_CSS = """
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif;color:#1d2330;background:#f6f7f9}
h1{font-size:24px;margin:0 0 8px}
h2{font-size:19px;margin:32px 0 2px;padding-top:8px;border-top:2px solid #c9ced8}
h3{font-size:15px;margin:18px 0 6px}
.sub{color:#5a6272;margin:0 0 10px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0 16px}
dl.meta dt{font-weight:600;color:#3b4456}dl.meta dd{margin:0;overflow-wrap:anywhere}
nav ul{margin:4px 0 0;padding-left:20px;columns:2}
table.summary{border-collapse:collapse;margin:4px 0 12px;background:#fff;font-size:14px}
table.summary th,table.summary td{border:1px solid #d5d9e1;padding:4px 10px;text-align:left}
table.summary th{background:#eceef3}
table.summary td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;max-width:100%}
.item{background:#fff;border:1px solid #d5d9e1;border-radius:6px;margin:12px 0;padding:10px 12px}
.head{display:flex;flex-wrap:wrap;align-items:baseline;gap:6px 12px;margin-bottom:8px}
.rank{color:#5a6272}.iid{font-weight:600;overflow-wrap:anywhere}
.score{font-variant-numeric:tabular-nums;font-weight:600;color:#1d4f91}
.label{font-size:12px;background:#e7ebf3;color:#334;border-radius:9px;padding:1px 8px}
.note{font-size:13px;color:#5a6272}
.grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.15fr) minmax(0,1fr);gap:14px;
align-items:start}
.cell-title{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#5a6272;
margin-bottom:3px}
figure{margin:0}
figure img{display:block;width:100%;aspect-ratio:1/1;object-fit:contain;background:#eef0f4;
border:1px solid #d5d9e1}
.missing{display:flex;align-items:center;justify-content:center;text-align:center;width:100%;
aspect-ratio:1/1;border:2px dashed #9aa3b5;background:#f0f1f4;color:#4a5263;padding:12px;
font-size:14px;overflow-wrap:anywhere}
.caption{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
details{margin-top:8px;font-size:13px}summary{cursor:pointer;color:#3b4456}
details pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f4f7;padding:6px 8px;
margin:4px 0 0;font-size:12.5px}
.empty{color:#5a6272;font-style:italic}
"""

_CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _fmt(value: Any, float_format: str) -> tuple[str, bool]:
    """(escaped cell text, is numeric)."""
    if value is None:
        return "&mdash;", False
    if isinstance(value, bool):
        return _e(value), False
    if isinstance(value, float):
        if not math.isfinite(value):
            return _e(value), True
        return _e(float_format.format(value)), True
    if isinstance(value, int):
        return _e(value), True
    return _e(value), False


def _table(title: str, rows: Sequence[Mapping[str, Any]], float_format: str) -> str:
    out = [f"<h3>{_e(title)}</h3>"]
    if not rows:
        out.append('<p class="empty">(no rows)</p>')
        return "\n".join(out)
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    out.append('<div class="scroll"><table class="summary"><thead><tr>')
    out.append("".join(f"<th>{_e(c)}</th>" for c in cols))
    out.append("</tr></thead><tbody>")
    for r in rows:
        cells = []
        for c in cols:
            text, num = _fmt(r.get(c), float_format)
            cells.append(f'<td class="num">{text}</td>' if num else f"<td>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _image(path: Path | None, html_dir: Path, what: str, item_id: str, reason: str | None) -> str:
    if path is None:
        why = reason or "no image"
        return f'<div class="missing">{_e(f"{what} image missing: {why}")}</div>'
    if not Path(path).is_file():
        return f'<div class="missing">{_e(f"{what} image missing: file not found: {path}")}</div>'
    src = image_src(Path(path), html_dir)
    return f'<img src="{_e(src)}" alt="{_e(f"{what} image of item {item_id}")}">'


def _item(item: ReportItem, rank: int, html_dir: Path, score_name: str, float_format: str) -> str:
    if item.score is None:
        score = f"{_e(score_name)} &mdash;"
    else:
        score = f"{_e(score_name)} {_fmt(float(item.score), float_format)[0]}"
    head = [f'<span class="rank">#{rank}</span>', f'<span class="iid">{_e(item.item_id)}</span>',
            f'<span class="score">{score}</span>']
    head += [f'<span class="label">{_e(lab)}</span>' for lab in item.labels]
    parts = ['<article class="item">', '<div class="head">' + "".join(head) + "</div>"]
    if item.note:
        parts.append(f'<div class="note">{_e(item.note)}</div>')
    caption = [f'<p class="caption">{_e(item.caption)}</p>' if item.caption
               else '<p class="caption empty">(empty caption)</p>']
    if item.raw_caption is not None:
        caption.append(f"<details><summary>raw caption</summary><pre>{_e(item.raw_caption)}</pre>"
                       "</details>")
    parts.append('<div class="grid">')
    parts.append('<figure><div class="cell-title">original</div>'
                 + _image(item.original, html_dir, "original", item.item_id, None) + "</figure>")
    parts.append('<div><div class="cell-title">caption</div>' + "".join(caption) + "</div>")
    parts.append('<figure><div class="cell-title">generated</div>'
                 + _image(item.generated, html_dir, "generated", item.item_id, item.error)
                 + "</figure>")
    parts.append("</div></article>")
    return "\n".join(parts)


def render_html_report(html_dir: Path, *, title: str,
                       summary_tables: Sequence[tuple[str, Sequence[Mapping[str, Any]]]] = (),
                       sections: Sequence[ReportSection] = (),
                       meta: Mapping[str, str] | None = None,
                       score_name: str = "score", float_format: str = "{:.3f}") -> str:
    """The page's HTML, with image links relative to ``html_dir`` (see :func:`write_html_report`)."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{_e(title)}</title>", f"<style>{_CSS}</style>", "</head><body>",
           f"<h1>{_e(title)}</h1>"]
    if meta:
        out.append('<dl class="meta">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>"
                                                for k, v in meta.items()) + "</dl>")
    for t_title, rows in summary_tables:
        out.append(_table(t_title, rows, float_format))
    if len(sections) > 1:
        out.append("<nav><h3>Sections</h3><ul>" + "".join(
            f'<li><a href="#s{i}">{_e(s.title)}</a></li>' for i, s in enumerate(sections, 1))
            + "</ul></nav>")
    for i, sec in enumerate(sections, 1):
        out.append(f'<section id="s{i}"><h2>{_e(sec.title)}</h2>')
        if sec.subtitle:
            out.append(f'<p class="sub">{_e(sec.subtitle)}</p>')
        if not sec.items:
            out.append('<p class="empty">(no items)</p>')
        for rank, item in enumerate(sec.items, 1):
            out.append(_item(item, rank, html_dir, score_name, float_format))
        out.append("</section>")
    out.append("</body></html>\n")
    return "\n".join(out)


def write_html_report(path: Path, *, title: str,
                      summary_tables: Sequence[tuple[str, Sequence[Mapping[str, Any]]]] = (),
                      sections: Sequence[ReportSection] = (),
                      meta: Mapping[str, str] | None = None,
                      score_name: str = "score", float_format: str = "{:.3f}") -> Path:
    """Write the report to ``path`` atomically (creating its folder) and return ``path``.

    ``summary_tables``: ``(title, rows)`` pairs; a table's columns are the rows' keys in
    first-seen order; floats are shown with ``float_format``, None as a dash.  ``meta``: lines
    shown under the title (e.g. ``{"encoder": ..., "run": ...}``).  ``sections``: the items, in
    order; each item's images are linked relative to ``path``'s folder, so keep the page next to
    the store it points into (or move both together).  ``score_name`` labels the items' scores.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render_html_report(path.parent, title=title, summary_tables=summary_tables,
                              sections=sections, meta=meta, score_name=score_name,
                              float_format=float_format)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path
