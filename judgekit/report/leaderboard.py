"""A leaderboard across run folders: ``judgekit report RUN_DIR RUN_DIR ...``.

Each run folder's ``report.json`` (written by ``judgekit run``) carries its headline, one figure
per candidate (and judge) with its interval; its ``summary.json``, where present, says the spec,
run id and status.  The leaderboard page has, per benchmark, one table with a row per (run,
candidate) and a column per headline figure ("value [lo, hi]"), sorted by the first figure (best
first; a candidate without it last), a bar chart per figure with interval whiskers, and links to
each run's ``report.html`` relative to the page.  Runs of different benchmarks are never mixed in
one table; the same candidate in two runs is two rows, told apart by the run.  Where two or more
runs of a benchmark share a judge, a further table rates all their candidates in one
Bradley-Terry fit on the items they all judged (:func:`cross_run_tables`).  The page's document
is also written as JSON beside it (``leaderboard.json`` for ``leaderboard.html``).

The page is a :class:`~judgekit.report.doc.ReportDoc` with no items, rendered by
:func:`judgekit.report.render.render_html` like every run's page.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..plural import plural
from .compare import page_href as _href
from .doc import Chart, Headline, ReportDoc, Series, Table
from .run_report import interval_text

__all__ = ["Run", "Row", "load_run", "load_runs", "not_a_run_folder", "run_label", "leaderboard_rows", "leaderboard_doc", "write_leaderboard",
           "wants_leaderboard", "cross_run_tables", "REPORT_JSON"]

REPORT_JSON = "report.json"
#: (figure, judge): one column of a benchmark's table
Column = tuple[str, "str | None"]


@dataclass
class Run:
    """A run folder as the leaderboard reads it."""

    path: Path
    doc: ReportDoc
    summary: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    """How its rows and link name it (the folder's name; its path where two names are alike)."""


@dataclass
class Row:
    """One leaderboard row: a candidate of a run, its headline figures by column."""

    run: str
    candidate: str
    cells: dict[Column, Headline]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("judgekit")
    except PackageNotFoundError:
        return "0.1.0"


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON has (the page could not be drawn)")


def load_run(run_dir: Path) -> Run:
    """Read a run folder's ``report.json`` (and ``summary.json`` when there is one).  A folder that
    does not exist, has no report.json or an invalid one is a :class:`UsageError` naming the path."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise UsageError(f"{run_dir}: no such folder")
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a folder (give the run's results folder, e.g. judgekit-out/quickstart)")
    p = run_dir / REPORT_JSON
    if not p.is_file():
        raise UsageError(f"{p}: no report.json (written by judgekit run since {_version()}); run the spec again "
                         "to write it: a finished run re-runs from the cache for free")
    try:
        data = json.loads(p.read_text(encoding="utf-8"), parse_constant=_no_constant)
        if not isinstance(data, dict) or "title" not in data:
            raise ValueError("not a JSON object with a title")
        doc = ReportDoc.from_json(data)
    except json.JSONDecodeError as e:
        raise UsageError(f"{p}: not a valid report (invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}); "
                         "run the spec again to write it") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else f"{type(e).__name__}: {e}"
        raise UsageError(f"{p}: not a valid report ({why}); run the spec again to write it") from None
    summary: dict[str, Any] = {}
    try:
        s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        summary = s if isinstance(s, dict) else {}
    except (OSError, UnicodeDecodeError, ValueError):
        pass  # the leaderboard needs only the headline; the summary adds the spec and run id
    return Run(path=run_dir, doc=doc, summary=summary)


def not_a_run_folder(path: Path) -> str | None:
    """Why an existing ``path`` is no run folder (a file, a folder without report.json), or None:
    a run folder, or a path that does not exist (a typo, which :func:`load_run` reports)."""
    if not path.exists():
        return None
    if not path.is_dir():
        return "a file"
    if not (path / REPORT_JSON).is_file():
        return "no report.json" + (" (a run folder from an older version: run the spec again to write it)"
                                   if (path / "summary.json").is_file() else "")
    return None


def load_runs(paths: list[Path], skipped: list[str]) -> list[Run]:
    """The run folders among ``paths`` (as a shell glob such as ``judgekit-out/*`` gives them).
    One path is read by :func:`load_run` as it is.  Of several, what exists but is no run folder
    (the cache file beside the runs, its image store) is left out, with one line in ``skipped``
    per path; a path that does not exist or a run folder whose report.json is invalid is still a
    UsageError, and so are several paths of which none is a run folder.  Every folder is read
    before anything is written."""
    paths = list(dict.fromkeys(Path(p) for p in paths))
    if len(paths) == 1:
        return [load_run(paths[0])]
    runs = []
    for p in paths:
        why = not_a_run_folder(p)
        if why is None:
            runs.append(load_run(p))
        else:
            skipped.append(f"skipped {p}: not a run folder ({why})")
    if not runs:
        raise UsageError(f"none of the {len(paths)} paths is a run folder (a folder with report.json): "
                         + ", ".join(str(p) for p in paths[:5]) + (", ..." if len(paths) > 5 else ""))
    return runs


def run_label(runs: list[Run]) -> None:
    """Label each run by its folder's name, or by its path where two folders share a name."""
    names = [r.path.resolve().name or str(r.path) for r in runs]
    for r, n in zip(runs, names):
        r.label = n if names.count(n) == 1 else str(r.path)


def wants_leaderboard(runs: list[Run]) -> bool:
    """Several runs.  One run's page already ranks its candidates (its own leaderboard table), so a
    rebuild of one run writes no leaderboard page unless ``--out`` asks for one."""
    return len(runs) > 1


def _value(h: Headline | None) -> float | None:
    v = h.value if h is not None else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def leaderboard_rows(runs: list[Run]) -> dict[str, tuple[list[Column], list[Row]]]:
    """Per benchmark (first-seen order): its columns (figure, judge) in first-seen order and its
    rows sorted by the first column, best first (``higher_is_better`` of the column's first
    headline read); a row without a finite value there (None, NaN, infinite) comes last, in the
    order read.  A candidate's second headline for the same column is ignored."""
    out: dict[str, tuple[list[Column], list[Row]]] = {}
    for run in runs:
        cols, rows = out.setdefault(run.doc.benchmark or "(no benchmark)", ([], []))
        by_cand: dict[str, Row] = {}
        for h in run.doc.headline:
            col = (str(h.figure), None if h.judge is None else str(h.judge))
            if col not in cols:
                cols.append(col)
            row = by_cand.get(str(h.candidate))
            if row is None:
                row = by_cand[str(h.candidate)] = Row(run=run.label or run.path.name, candidate=str(h.candidate), cells={})
                rows.append(row)
            row.cells.setdefault(col, h)
    for cols, rows in out.values():
        if not cols:
            continue
        first = cols[0]
        higher = next((r.cells[first].higher_is_better is not False for r in rows if first in r.cells), True)
        known = [r for r in rows if _value(r.cells.get(first)) is not None]
        unknown = [r for r in rows if _value(r.cells.get(first)) is None]
        known.sort(key=lambda r: _value(r.cells[first]), reverse=higher)  # stable: ties keep their order
        rows[:] = known + unknown
    return out


def _column_names(cols: list[Column]) -> dict[Column, str]:
    """'reward' where one judge (or none) gives the figure; 'reward · judge' where several do."""
    judges: dict[str, set[str | None]] = {}
    for fig, j in cols:
        judges.setdefault(fig, set()).add(j)
    return {(fig, j): fig if len(judges[fig]) == 1 else f"{fig} · {j if j is not None else '-'}"
            for fig, j in cols}


def leaderboard_doc(runs: list[Run], out: Path, comparison: Any = None) -> ReportDoc:
    """The leaderboard's document for a page written at ``out`` (links are relative to its folder);
    with ``comparison`` (:func:`judgekit.report.compare.compare_runs`) also its item differences: a
    table per pair of runs and the changed items in the item browser."""
    if not all(r.label for r in runs):
        run_label(runs)
    by_bench = leaderboard_rows(runs)
    tables, charts = [], []
    multi_run = {b: len({r.run for r in rows}) > 1 for b, (_, rows) in by_bench.items()}
    for bench, (cols, rows) in by_bench.items():
        names = _column_names(cols)
        out_rows = []
        for r in rows:
            row: dict[str, Any] = {"run": r.run, "candidate": r.candidate}
            for c in cols:
                h = r.cells.get(c)
                row[names[c]] = interval_text(h.value, h.low, h.high, name=c[0]) if h is not None else "–"
            out_rows.append(row)
        if cols:
            hb = next((r.cells[cols[0]].higher_is_better for r in rows if cols[0] in r.cells), True)
            judges = list(dict.fromkeys(j for _, j in cols if j is not None))
            note = (f"sorted by {names[cols[0]]}, {'highest' if hb is not False else 'lowest'} first; [low, high]: "
                    "the interval" + (f"; judge: {', '.join(judges)}" if judges else ""))
        else:
            note = "these runs' reports have no headline figures"
        tables.append(Table(title=f"{bench}", rows=out_rows, note=note))
        for fig in dict.fromkeys(f for f, _ in cols):
            fcols = [c for c in cols if c[0] == fig]
            groups = [f"{r.candidate} ({r.run})" if multi_run[bench] else r.candidate for r in rows]
            series = []
            for c in fcols:
                hs = [r.cells.get(c) for r in rows]
                series.append(Series(name=c[1] if len(fcols) > 1 and c[1] is not None else fig,
                                     values=[_value(h) for h in hs], low=[_num(h, "low") for h in hs],
                                     high=[_num(h, "high") for h in hs]))
            whiskers = any(v is not None for x in series for v in (x.low or []) + (x.high or []))
            charts.append(Chart(title=f"{bench}: {fig}", groups=groups, series=series,
                                note="whiskers: the interval" if whiskers else None))
    tables.extend(cross_run_tables(runs))
    page_dir = Path(out).parent
    links, run_rows = [], []
    for run in runs:
        href = _href(run.path / "report.html", page_dir)
        links.append((run.label, href))
        row: dict[str, Any] = {"run": run.label, "benchmark": run.doc.benchmark}
        for key, label in (("spec", "spec"), ("run_id", "run id"), ("status", "status")):
            # summary.json's word, else the report's meta line (write_run_report copies it there)
            row[label] = str(run.summary.get(key) or run.doc.meta.get(label) or "")
        row.update(candidates=len({h.candidate for h in run.doc.headline}), report=href)
        run_rows.append(row)
    empty = {k for k in run_rows[0] if all(r[k] == "" for r in run_rows)} if run_rows else set()
    tables.append(Table(title="Runs", rows=[{k: v for k, v in r.items() if k not in empty} for r in run_rows]))
    benches = list(by_bench)
    items, items_note = [], None
    if comparison is not None and comparison.pairs:
        from .compare import comparison_items, comparison_tables

        at = len(tables) - 1  # before the runs table
        tables[at:at] = comparison_tables(comparison)
        items = comparison_items(comparison, page_dir)
        items_note = (f"the items whose verdict or score changed between two runs ({len(items)}), by pair of runs, "
                      "kind, candidate and judge, the largest change first within each; each links to the item in "
                      "both runs' reports")
    return ReportDoc(title="judgekit leaderboard", benchmark=", ".join(benches),
                     meta={"runs": str(len(runs)), "benchmarks": ", ".join(benches)},
                     charts=charts, tables=tables, links=links, items=items, items_note=items_note)


def _judgments(run: Run) -> list[dict[str, Any]]:
    """A run's pairwise judgments from its results.parquet (none where the file is missing or
    cannot be read: that run then takes no part in the ratings across runs)."""
    from .tidy import results

    try:
        rows = results(run.path, kind="rows")
    except Exception:  # noqa: BLE001  (a missing or unreadable file leaves the run out, never the page)
        return []
    return [r for r in rows if r.get("kind") == "pairwise"]


def cross_run_tables(runs: list[Run]) -> list[Table]:
    """Per (benchmark, judge) two or more runs share: one Bradley-Terry fit over their candidates
    on the items they all judged (:func:`judgekit.judging.cross_run.cross_run_ratings`), as a
    table: run, candidate, BT rating and rank with their intervals, battles."""
    from ..judging.control import ELO_BASE, rating_text
    from ..judging.cross_run import cross_run_ratings

    benches: dict[str, list[Run]] = {}
    for run in runs:
        benches.setdefault(run.doc.benchmark or "", []).append(run)
    pooled = [(r.label or r.path.name, bench, _judgments(r)) for bench, rs in benches.items() if len(rs) > 1
              for r in rs]
    tables = []
    for fit in cross_run_ratings(pooled):
        rows = []
        for r in fit["rows"]:
            rank = "–" if r["rank"] is None else str(r["rank"])
            if r["rank"] is not None and r["rank_ci_low"] is not None:
                rank += f" [{int(r['rank_ci_low'])}, {int(r['rank_ci_high'])}]"
            rating = rating_text(r["bt_rating"], r["bt_rating_ci_low"], r["bt_rating_ci_high"])
            rows.append({"run": r["run"], "candidate": r["candidate"], "BT rating": rating, "rank": rank,
                         "battles": r["battles"]})
        note = (f"one Bradley-Terry fit over the candidates of {plural(len(fit['runs']), 'run')} on the "
                f"{plural(fit['items'], 'item')} "
                f"they all judged, judge {fit['judge']}; Elo scale, the reference at {ELO_BASE:.0f} (400 points = "
                "odds of 10:1), a much-better verdict counts 3 battles, a tie half; [a, b]: the item-bootstrap "
                "interval, an item drawn with every run's judgments of it")
        tables.append(Table(title=f"{fit['benchmark']}: Bradley-Terry ratings across runs ({fit['judge']})",
                            rows=rows, note=note))
    return tables


def _num(h: Headline | None, key: str) -> float | None:
    v = getattr(h, key) if h is not None else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def write_leaderboard(runs: list[Run], out: Path, comparison: Any = None) -> Path:
    """Write the leaderboard page at ``out`` (atomically); return its path.  A place where no file
    can be written is a :class:`UsageError`.  With ``comparison``, its item differences are on the
    page and in ``diffs.csv`` / ``diffs.json`` beside it."""
    from .render import render_html

    out = Path(out)
    data = leaderboard_doc(runs, out, comparison).to_json()
    page = render_html(data)
    tmp = out.with_name(out.name + ".tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out)
        # the page's document as JSON beside it (the ratings across runs among its tables)
        tmp.write_text(json.dumps(data, indent=1, allow_nan=False), encoding="utf-8")
        os.replace(tmp, out.with_suffix(".json"))
    except OSError as e:
        raise UsageError(f"--out {out}: cannot write the leaderboard there ({e.strerror or e})") from None
    if comparison is not None and comparison.pairs:
        from .compare import write_diffs

        write_diffs(comparison, out)
    return out
