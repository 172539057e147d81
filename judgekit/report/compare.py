"""Item-level differences between runs of one benchmark: ``judgekit report A B ...``.

Which runs are compared: per benchmark, every pair of its runs in the order given (the earlier
one "before"), or with a baseline each other run of the baseline's benchmark against it.  Each
pair's differences come from the two runs' ``results.parquet`` through the judging core
(:func:`judgekit.judging.run_diff.run_differences`: changed items, and per (kind, candidate,
judge) the paired difference after - before with its item-bootstrap interval on the shared
items); Holm's adjustment runs over every comparison of the call.

What is written beside the comparison page (``leaderboard.html``): ``diffs.csv`` (a row per
changed item, with a link to the item in each run's report.html) and ``diffs.json`` (the
statistics rows and the changed items).  The page gets a table of the statistics per pair and
the changed items in its item browser (search, filters by candidate, judge, change and pair).
"""

from __future__ import annotations

import csv
import io
import json
import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from . import numbers
from .doc import Block, Item, Table

__all__ = ["Pair", "Comparison", "compare_runs", "pick_baseline", "diff_rows", "stats_rows", "write_diffs",
           "comparison_tables", "comparison_items", "page_href", "difference_text", "number_text", "DIFFS_CSV",
           "DIFFS_JSON"]

DIFFS_CSV = "diffs.csv"
DIFFS_JSON = "diffs.json"


@dataclass
class Pair:
    """Two runs of one benchmark compared: ``before`` -> ``after``."""

    benchmark: str
    before: Any  # leaderboard.Run
    after: Any
    stats: list[dict[str, Any]] = field(default_factory=list)
    changes: list[Any] = field(default_factory=list)  # judging.run_diff.ItemChange


@dataclass
class Comparison:
    pairs: list[Pair] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Lines saying which pairs could not be compared item by item, and why."""
    holm: dict[str, Any] = field(default_factory=dict)


def pick_baseline(runs: list[Any], baseline: Path | None) -> Any | None:
    """The run whose folder is ``baseline`` (None: none asked); a folder that is none of the
    runs is a :class:`UsageError`."""
    if baseline is None:
        return None
    want = Path(baseline).resolve()
    for r in runs:
        if Path(r.path).resolve() == want:
            return r
    raise UsageError(f"--baseline {baseline}: not one of the run folders given")


def _rows(run: Any) -> list[dict[str, Any]] | str:
    """A run's tidy rows, or why they cannot be read."""
    from .tidy import TIDY_FILE, results

    if not (Path(run.path) / TIDY_FILE).is_file():
        return f"no {TIDY_FILE}"
    try:
        return results(run.path, kind="rows")
    except Exception as e:  # noqa: BLE001  (an unreadable file leaves the pair out, never the page)
        return f"{TIDY_FILE} cannot be read ({type(e).__name__})"


def compare_runs(runs: list[Any], baseline: Any | None = None, options: Any | None = None) -> Comparison:
    """The pairs of ``runs`` (labelled, :func:`.leaderboard.run_label`) to compare, each with its
    item-level differences; runs of different benchmarks are never compared."""
    from ..judging.run_diff import adjust, run_differences
    from ..judging.uncertainty import IntervalOptions

    options = options or IntervalOptions()
    benches: dict[str, list[Any]] = {}
    for run in runs:
        benches.setdefault(run.doc.benchmark or "", []).append(run)
    out = Comparison()
    cache: dict[int, list[dict[str, Any]] | str] = {}
    for bench, rs in benches.items():
        if len(rs) < 2:
            continue
        if baseline is not None:
            if baseline not in rs:
                continue
            pairs = [(baseline, r) for r in rs if r is not baseline]
        else:
            pairs = [(a, b) for i, a in enumerate(rs) for b in rs[i + 1:]]
        for a, b in pairs:
            ra = cache.setdefault(id(a), _rows(a))
            rb = cache.setdefault(id(b), _rows(b))
            if isinstance(ra, str) or isinstance(rb, str):
                why = ra if isinstance(ra, str) else rb
                bad = a if isinstance(ra, str) else b
                out.skipped.append(f"no item differences for {a.label} -> {b.label}: {bad.label} has {why}"
                                   if why.startswith("no ") else
                                   f"no item differences for {a.label} -> {b.label}: {bad.label}'s {why}")
                continue
            d = run_differences(ra, rb, options, key=f"{bench}:{a.label}:{b.label}")
            out.pairs.append(Pair(bench, a, b, d["stats"], d["changes"]))
    out.holm = adjust([s for p in out.pairs for s in p.stats], options)
    return out


def page_href(target: Path, page_dir: Path) -> str:
    """``target`` relative to the page's folder, percent-encoded (a file:// URI where no relative
    path exists)."""
    try:
        rel = os.path.relpath(os.path.abspath(target), os.path.abspath(page_dir))
    except ValueError:  # another drive
        return Path(os.path.abspath(target)).as_uri()
    return urllib.parse.quote(rel.replace(os.sep, "/"), safe="/")


def _item_link(run: Any, item: str, page_dir: Path) -> str:
    """The item in ``run``'s report.html relative to ``page_dir``: ``#item=ID`` where the report
    lists the item, else ``#q=ID`` (a search for it)."""
    ids = {str(it.id) for it in run.doc.items}
    how = "item" if item in ids else "q"
    return f"{page_href(Path(run.path) / 'report.html', page_dir)}#{how}={urllib.parse.quote(item, safe='')}"


def diff_rows(comp: Comparison, page_dir: Path) -> list[dict[str, Any]]:
    """One row per changed item, every pair, with the links to it in each run's report."""
    rows = []
    for p in comp.pairs:
        for c in p.changes:
            row = {"benchmark": p.benchmark, "before_run": p.before.label, "after_run": p.after.label, **c.row()}
            row["before_link"] = _item_link(p.before, c.item, page_dir)
            row["after_link"] = _item_link(p.after, c.item, page_dir)
            rows.append(row)
    return rows


def stats_rows(comp: Comparison) -> list[dict[str, Any]]:
    return [{"benchmark": p.benchmark, "before_run": p.before.label, "after_run": p.after.label, **s}
            for p in comp.pairs for s in p.stats]


def write_diffs(comp: Comparison, page: Path) -> tuple[Path, Path]:
    """``diffs.csv`` and ``diffs.json`` in the page's folder (each atomically)."""
    folder = Path(page).parent
    rows = diff_rows(comp, folder)
    data = {"pairs": [{"benchmark": p.benchmark, "before": p.before.label, "after": p.after.label,
                       "before_path": str(p.before.path), "after_path": str(p.after.path)} for p in comp.pairs],
            "multiple_comparisons": comp.holm, "stats": stats_rows(comp), "changes": rows}
    cols = ["benchmark", "before_run", "after_run", "kind", "candidate", "judge", "item", "category", "change",
            "before", "after", "before_value", "after_value", "delta", "before_outcome", "after_outcome",
            "before_link", "after_link"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    out_csv, out_json = folder / DIFFS_CSV, folder / DIFFS_JSON
    for path, text in ((out_csv, buf.getvalue()), (out_json, json.dumps(data, indent=1, allow_nan=False))):
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as e:
            raise UsageError(f"{path}: cannot write the item differences there ({e.strerror or e})") from None
    return out_csv, out_json


def number_text(v: Any, signed: bool = False, metric: Any = "") -> str:
    """``v`` in the decimals of ``metric``'s kind of figure (report.numbers: Reward 1, VFS 2...),
    the same as the runs' own tables; ``+`` before a positive difference."""
    if v is None:
        return "–"
    text = numbers.number(v, numbers.decimals(numbers.figure_kind(metric), [v]))
    return "+" + text if signed and float(text) > 0 else text


def difference_text(s: dict[str, Any]) -> str:
    """``+21.4 [-7.1, +67.9]`` (the interval where there is one), in the figure's decimals."""
    m = s.get("metric", "")
    text = number_text(s.get("difference"), signed=True, metric=m)
    if s.get("ci_low") is not None and s.get("ci_high") is not None:
        text += f" [{number_text(s['ci_low'], True, m)}, {number_text(s['ci_high'], True, m)}]"
    return text


def comparison_tables(comp: Comparison) -> list[Table]:
    """A table per pair: per (kind, candidate, judge) the figure before and after on the shared
    items, the difference with its interval, Holm's word, the shared and changed items."""
    tables = []
    for p in comp.pairs:
        rows = []
        for s in p.stats:
            excl = s.get("excludes_zero")
            holm = s.get("excludes_zero_holm")
            rows.append({"candidate": s["candidate"], "judge": s["judge"], "figure": numbers.label(s["metric"]),
                         "before": number_text(s.get("before"), metric=s["metric"]),
                         "after": number_text(s.get("after"), metric=s["metric"]),
                         "difference [interval]": difference_text(s),
                         "excludes 0 (raw/Holm)": "–" if excl is None else
                         f"{'yes' if excl else 'no'}/{'yes' if holm else 'no' if holm is not None else '–'}",
                         "shared items": s["shared"], "changed items": s["changed"]})
        level = next((s.get("level") for s in p.stats if s.get("level")), None)
        note = ("after - before on the items both runs judged; [a, b]: the "
                + (f"{level:.0%} " if level else "") + "paired item-bootstrap interval; Holm: over every comparison "
                "of this page; a changed item: a verdict, score or failure that differs")
        tables.append(Table(title=f"{p.benchmark}: item differences, {p.before.label} -> {p.after.label}",
                            rows=rows, note=note))
    return tables


def comparison_items(comp: Comparison, page_dir: Path) -> list[Item]:
    """The changed items, one browser item per (pair, kind, candidate, judge, item)."""
    items = []
    several = len(comp.pairs) > 1
    benches = len({p.benchmark for p in comp.pairs}) > 1
    for p in comp.pairs:
        pair = f"{p.before.label} -> {p.after.label}"
        kinds = len({c.kind for c in p.changes}) > 1  # an id names one change (Creation-MMBench: pairwise and vfs)
        for c in p.changes:
            d = c.delta
            ident = (f"{c.item} · {c.candidate} · {c.judge}" + (f" · {c.kind}" if kinds else "")
                     + (f" · {pair}" if several else ""))
            tags: dict[str, Any] = {"candidate": c.candidate, "judge": c.judge, "change": c.change, "kind": c.kind}
            if several:
                tags["runs"] = pair
            if benches:
                tags["benchmark"] = p.benchmark
            if c.category:
                tags["category"] = c.category
            blocks = [Block(kind="judgment", label=f"before: {p.before.label}", verdict=c.before.text(c.kind),
                            links=[(f"open in {p.before.label}", _item_link(p.before, c.item, page_dir))]),
                      Block(kind="judgment", label=f"after: {p.after.label}", verdict=c.after.text(c.kind),
                            tone=None if d is None or d == 0 else "good" if d > 0 else "bad",
                            links=[(f"open in {p.after.label}", _item_link(p.after, c.item, page_dir))])]
            items.append(Item(id=ident, title=f"{c.kind}: {c.before.text(c.kind)}  ->  {c.after.text(c.kind)}",
                              blocks=blocks, tags=tags, flags=[c.change] if c.change in ("failed", "recovered") else [],
                              score=None if d is None else f"Δ {number_text(d, True, c.kind)}"))
    return items
