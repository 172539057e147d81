"""The closing summary: the last lines a run prints, at most :data:`MAX_LINES` terminal lines at
80 columns, so the result is on screen when the run ends, whatever scrolled by before it.

::

    ── quickstart · creation_mmbench · done
    judge     figure                  sim-strong                 sim-weak
    judge     Reward         29.17 [6.25, 54.17]  -52.08 [-72.92, -29.17]
              Win Rate (%)   62.5 [41.67, 83.33]             12.5 [0, 25]
              VFS             5.332 [5.03, 5.67]       2.155 [1.94, 2.38]
    ensemble  Reward        28.12 [11.46, 45.83]  -51.04 [-64.58, -35.42]
              ...
    cost     spent $0.0000; calls made 208 (simulator, free), cache hits 0
    failures none
    report   file:///home/me/judgekit-out/quickstart/report.html

The figures are the report's headline (its leaderboard: :class:`judgekit.report.doc.Headline`),
each with its interval, written as the page writes them (the best of a figure in bold, as the
page marks it).  Candidates, figures and judges are arranged as the table that takes the fewest
lines at the width with one line a row (a row per candidate, the page's way, is preferred at equal
lines); else with each interval under its estimate; else a candidate's figures as wrapped text.
Where even that is more than the lines left, the first candidates (then figures) are shown and a
line says how many more the report has.  The report's path is a ``file://`` link (a terminal that
knows links makes it clickable), printed as one line the terminal wraps, so it copies whole.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from ..report.numbers import finite as _finite
from .tables import wrap_atoms

__all__ = ["MAX_LINES", "closing_summary", "figure_text"]

#: the most terminal lines the closing summary takes at 80 columns
MAX_LINES = 15
_GAP = 2  # spaces between columns


def _get(h: Any, key: str, default: Any = None) -> Any:
    return h.get(key, default) if isinstance(h, dict) else getattr(h, key, default)


def figure_text(value: Any, low: Any = None, high: Any = None, places: int | None = None) -> str:
    """A headline figure as the report's leaderboard writes it: ``29.2 [6.2, 54.2]`` with
    ``places`` decimals (the leaderboard's for its column: report.numbers), ``-`` where there is
    none."""
    from ..report import numbers

    v = _finite(value)
    if v is None:
        return "-"
    lo, hi = _finite(low), _finite(high)
    if places is None:
        places = numbers.column_decimals([v, lo, hi])
    return numbers.interval(v, lo, hi, places)


def _split(text: str) -> str:
    """An interval under its estimate (``29.17`` over ``[6.25, 54.17]``)."""
    return text.replace(" [", "\n[", 1)


def _width(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _grid_table(head: list[str], rows: list[list[Text]], widths: list[int], right: list[bool]) -> Table:
    t = Table(box=None, show_header=True, header_style="bold", padding=(0, _GAP, 0, 0), pad_edge=False,
              show_edge=False)
    for h, w, r in zip(head, widths, right):
        t.add_column(Text("\n".join(wrap_atoms(h, w))), width=w, no_wrap=True, overflow="fold",
                     justify="right" if r else "left")
    for row in rows:
        t.add_row(*row)
    return t


class _Grid:
    """The headline as cells: ``text[(candidate, figure, judge)]`` as the page writes it, the
    candidates, figures and judges in the headline's order, each figure's label (with its unit,
    as the page heads its column) and the cells the page marks best (a figure's top value among
    several candidates)."""

    def __init__(self, headline: Sequence[Any]) -> None:
        self.text: dict[tuple[str, str, Any], str] = {}
        self.labels: dict[str, str] = {}
        cands: dict[str, None] = {}
        figs: dict[str, None] = {}
        judges: dict[Any, None] = {}
        by: dict[tuple[str, Any], list[tuple[str, float, bool]]] = {}
        from ..report import numbers

        # one number of decimals a column (figure, judge), as the report's leaderboard writes it
        units: dict[str, str] = {}
        column: dict[tuple[str, Any], list[Any]] = {}
        for h in headline:
            f = str(_get(h, "figure", ""))
            if _get(h, "unit"):
                units.setdefault(f, str(_get(h, "unit")))
            column.setdefault((f, _get(h, "judge")), []).extend(_get(h, k) for k in ("value", "low", "high"))
        places = {key: numbers.decimals(numbers.figure_kind(key[0], units.get(key[0], "")), vals)
                  for key, vals in column.items()}
        for h in headline:
            c, f, j = str(_get(h, "candidate", "")), str(_get(h, "figure", "")), _get(h, "judge")
            cands.setdefault(c, None)
            figs.setdefault(f, None)
            judges.setdefault(j, None)
            unit = _get(h, "unit") or ""
            self.labels.setdefault(f, f"{f} ({unit})" if unit else f)
            self.text[(c, f, j)] = figure_text(_get(h, "value"), _get(h, "low"), _get(h, "high"), places[(f, j)])
            v = _finite(_get(h, "value"))
            if v is not None:
                by.setdefault((f, j), []).append((c, v, _get(h, "higher_is_better", True) is not False))
        self.cands, self.figs, self.judges = list(cands), list(figs), list(judges)
        self.best: set[tuple[str, str, Any]] = set()
        for (f, j), vals in by.items():
            if len(vals) > 1:
                top = (max if vals[0][2] else min)(v for _, v, _ in vals)
                self.best |= {(c, f, j) for c, v, _ in vals if v == top}

    def name(self, dim: str, value: Any) -> str:
        return self.labels[value] if dim == "f" else str(value)


#: the arrangements tried: (row dimensions, the outer first; column dimensions), of c(andidate),
#: f(igure) and j(udge); the first is the page's own (a row per candidate)
_ARRANGEMENTS = ((("c",), ("f", "j")), (("j", "f"), ("c",)), (("c", "f"), ("j",)), (("c", "j"), ("f",)),
                 (("f", "c"), ("j",)), (("j", "c"), ("f",)))
_DIM_NAMES = {"c": "candidate", "f": "figure", "j": "judge"}


def _arranged(grid: _Grid, values: dict[str, list], rows_by: tuple[str, ...], cols_by: tuple[str, ...],
              width: int, two: bool) -> tuple[int, RenderableType] | None:
    """The headline as a table with a row per combination of ``rows_by`` and a column per one of
    ``cols_by`` (the outer row dimension written on its group's first row only); None when it is
    wider than ``width``.  ``two``: each interval under its estimate."""
    import itertools

    def key(a: dict[str, Any]) -> tuple[str, str, Any]:
        return a["c"], a["f"], a["j"] if "j" in a else values["j"][0]

    def cell(a: dict[str, Any]) -> str | None:
        t = grid.text.get(key(a))
        return None if t is None else (_split(t) if two else t)

    columns = [dict(zip(cols_by, combo)) for combo in itertools.product(*(values[d] for d in cols_by))]
    rows = [dict(zip(rows_by, combo)) for combo in itertools.product(*(values[d] for d in rows_by))]
    rows = [r for r in rows if any(cell({**r, **c}) is not None for c in columns)]
    columns = [c for c in columns if any(cell({**r, **c}) is not None for r in rows)]
    if not rows or not columns:
        return None
    k = len(rows_by)
    heads = [_DIM_NAMES[d] for d in rows_by] + [" · ".join(grid.name(d, c[d]) for d in cols_by) for c in columns]
    body = []
    for n, r in enumerate(rows):
        first = n == 0 or r[rows_by[0]] != rows[n - 1][rows_by[0]]
        body.append([grid.name(d, r[d]) if (i > 0 or first) else "" for i, d in enumerate(rows_by)]
                    + [cell({**r, **c}) or "-" for c in columns])
    widths = [max(max(_width(row[i]) for row in body),
                  len(heads[i]) if i < k else max((len(a) for a in heads[i].split()), default=0))
              for i in range(len(heads))]
    if sum(widths) + _GAP * (len(widths) - 1) > width:
        return None
    lines = (max(len(wrap_atoms(h, w)) for h, w in zip(heads, widths))
             + sum(max(t.count("\n") + 1 for t in row) for row in body))
    cells = [[Text(t) for t in row[:k]]
             + [Text(t, style="bold" if key({**r, **c}) in grid.best else "") for c, t in zip(columns, row[k:])]
             for r, row in zip(rows, body)]
    return lines, _grid_table(heads, cells, widths, [False] * k + [True] * len(columns))


def _layouts(grid: _Grid, cands: list[str], figs: list[str], width: int) -> list[list[tuple[int, RenderableType]]]:
    """The ways to draw the headline (of ``cands`` and ``figs``) that fit ``width``, each with its
    number of lines, in tiers preferred in order: tables with a line a row; tables with each
    interval under its estimate; a candidate's figures as wrapped text (which fits any width)."""
    values = {"c": cands, "f": figs, "j": grid.judges}
    multi = len(grid.judges) > 1
    tiers: list[list[tuple[int, RenderableType]]] = []
    for two in (False, True):
        tier, seen = [], set()
        for rows_by, cols_by in _ARRANGEMENTS:
            if not multi:  # one judge (or none): named in the title, not a dimension
                rows_by, cols_by = tuple(d for d in rows_by if d != "j"), tuple(d for d in cols_by if d != "j")
            if not rows_by or not cols_by or (rows_by, cols_by) in seen:
                continue
            seen.add((rows_by, cols_by))
            got = _arranged(grid, values, rows_by, cols_by, width, two)
            if got is not None:
                tier.append(got)
        tiers.append(tier)
    text_lines: list[Text] = []
    for c in cands:
        parts = [f"{grid.labels[f]}{f' · {j}' if multi and j else ''} {grid.text[(c, f, j)]}"
                 for j in grid.judges for f in figs if (c, f, j) in grid.text]
        text_lines += [Text(line) for line in wrap_atoms(f"{c}: " + "; ".join(parts), width)]
    tiers.append([(len(text_lines), Text("\n").join(text_lines))])
    return tiers


def _headline_block(headline: Sequence[Any], width: int, budget: int) -> list[RenderableType]:
    """The headline in at most ``budget`` lines (a note line included where some are left out)."""
    grid = _Grid(headline)
    if not grid.cands:
        return []
    for n_figs in range(len(grid.figs), 0, -1):
        for n_cands in range(len(grid.cands), 0, -1):
            more = (len(grid.cands) - n_cands, len(grid.figs) - n_figs)
            room = budget - (1 if any(more) else 0)
            for tier in _layouts(grid, grid.cands[:n_cands], grid.figs[:n_figs], width):
                fits = [(n, r) for n, r in tier if n <= room]
                if fits:
                    block: list[RenderableType] = [min(fits, key=lambda x: x[0])[1]]  # (the first at equal lines)
                    if any(more):
                        said = [f"{m} more {w}" for m, w in zip(more, ("candidates", "figures")) if m]
                        block.append(Text(f"({', '.join(said)} in the report)", style="dim"))
                    return block
    return []


_STATUS = {"failed_items": "done, with failed calls"}


def _title(outcome) -> Text:
    summary = getattr(outcome, "summary", None) or {}
    bits = list(dict.fromkeys(str(summary[k]) for k in ("spec", "benchmark") if summary.get(k)))
    if summary.get("status"):
        bits.append(_STATUS.get(summary["status"], str(summary["status"])))
    items = summary.get("items")
    if isinstance(items, int) and not isinstance(items, bool):
        # n beside the figures; "!" as the tables mark rows with too few items for their interval
        few = any(f.get("kind") == "too few items" for f in summary.get("flags") or [] if isinstance(f, dict))
        bits.append(f"n {items:,}" + ("!" if few else ""))
    judges = list(dict.fromkeys(_get(h, "judge") for h in getattr(outcome, "headline", None) or []))
    if len(judges) == 1 and judges[0]:
        bits.append(f"judge: {judges[0]}")
    return Text("── ", style="dim") + Text(" · ".join(bits) or "summary", style="bold")


def _labelled(label: str, value: str | Text) -> Table:
    g = Table.grid(padding=(0, 1, 0, 0))
    g.add_column(width=8, no_wrap=True)
    g.add_column(overflow="fold")
    g.add_row(Text(label, style="bold"), value if isinstance(value, Text) else Text(value))
    return g


def _lines(renderable: RenderableType, width: int) -> int:
    console = Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False)
    return len(console.render_lines(renderable, console.options.update(width=width), pad=False))


def closing_summary(outcome, width: int, cost: str | None) -> tuple[list[RenderableType], Text | None]:
    """The closing summary of ``outcome`` at ``width`` columns: the renderables to print, then the
    report's link line (None without a report), to be printed with ``soft_wrap=True`` so the
    terminal wraps it and it stays one link.  ``cost`` is the line of spend and calls.  Where the
    run ends with a message (failed calls remain, it was stopped), the lines the command prints
    after the summary (the message and the command that resumes) are kept free of the budget."""
    failed = len(getattr(outcome, "failed_items", None) or [])
    stats = getattr(outcome, "stats", None)
    calls_failed = getattr(stats, "failures", 0) if stats is not None else 0
    result = getattr(outcome, "result", None)
    not_run = (getattr(result, "not_run", 0) or 0) if getattr(outcome, "exit_code", 0) else 0
    said = ([f"{calls_failed:,} calls failed after their retries"] if calls_failed else []) + (
        [f"{failed:,} left failed (listed above; re-run the same command to retry them)"] if failed else []) + (
        [f"{not_run:,} calls not made"] if not_run else [])
    fail = "; ".join(said) or "none"
    tail: list[RenderableType] = []
    if cost:
        tail.append(_labelled("cost", cost))
    tail.append(_labelled("failures", fail))
    link = None
    report = getattr(outcome, "report_path", None)
    if report is not None:
        from pathlib import Path

        url = Path(report).resolve().as_uri()
        link = Text("report", style="bold") + Text(" " * 3) + Text(url, style=Style(link=url))
    title = _title(outcome)
    used = _lines(title, width) + sum(_lines(r, width) for r in tail)
    message = getattr(outcome, "message", "") or ""
    if message:  # the command line says it after the summary (and, for a run to resume, how)
        used += _lines(Text(message), width) + (2 if getattr(outcome, "exit_code", 0) in (1, 130) else 0)
    if link is not None:
        used += max(1, -(-len(link.plain) // width))
    block = _headline_block(getattr(outcome, "headline", None) or [], width, max(1, MAX_LINES - used))
    return [title, *block, *tail], link
