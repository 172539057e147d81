"""What every shipped runner prints, drawn again from its golden run (``golden_runs``: each runner
run once per session) at any width:

* no figure, header word or name of any results table is cut at any width from 60 columns, no
  line is wider than the terminal, and every part of a split table keeps the columns that tell
  its rows apart (a property over widths and every shipped runner's tables);
* at 80 columns the last 15 lines of the output hold the run's headline figures (the report's
  leaderboard, with their intervals) and the report's path as a ``file://`` link.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden"))
from golden import SHIPPED  # noqa: E402

from judgekit.cli.closing import MAX_LINES, figure_text  # noqa: E402
from judgekit.cli.tables import atoms, fit_tables, name_columns  # noqa: E402
from judgekit.cli.ui import ConsoleUI, result_tables  # noqa: E402

#: an atom worth counting: an interval, or a number of three characters or more
_DISTINCT = re.compile(r"^\[.*\]$|^[-+]?[\d.,]{3,}%?!?$")


def _console(width: int) -> Console:
    return Console(width=width, file=io.StringIO(), force_terminal=True, color_system=None, record=True)


def _plain(renderable) -> str:
    return " ".join(getattr(renderable, "plain", str(renderable)).split())


def _check_table(title, cols, cells, left, width: int) -> None:
    console = _console(width)
    parts = fit_tables(title, cols, cells, width, left)
    for t in parts:
        console.print(t)
    text = console.export_text()
    where = f"{title!r} at {width} columns:\n{text}"
    assert "…" not in text, where
    assert all(len(line) <= width for line in text.splitlines()), where
    for head in cols:  # every header word whole
        for a in (a for line in atoms(head) for a in line):
            assert a in text, (a, where)
    wanted: dict[str, int] = {}
    for row in cells:  # every atom of every cell whole, each interval and longer number as often as the cells have it
        for a in (a for cell in row for line in atoms(cell) for a in line):
            assert a in text, (a, where)
            if _DISTINCT.match(a):
                wanted[a] = wanted.get(a, 0) + 1
    for a, n in wanted.items():
        assert text.count(a) >= n, (a, n, where)
    if len(parts) > 1:  # each part tells its rows apart as the whole table does
        names = name_columns(cols, cells, left)
        lead = [i for i in range(len(cols)) if all(names[: i + 1])]
        distinct = len({tuple(row[i] for i in lead) for row in cells})
        for t in parts:
            keys = [c for c in t.columns if c.justify == "left"]
            assert keys, (t.title, where)
            seen = {tuple(_plain(c._cells[r]) for c in keys) for r in range(len(cells))}
            assert len(seen) == distinct, (t.title, where)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SHIPPED), width=st.integers(60, 200))
@example(name="guessbench", width=80)  # "Paired differences (2/2)": rows that could not be told apart
@example(name="rubric_quickstart", width=60)
@example(name="quickstart", width=60)
def test_no_figure_is_cut_at_any_width(golden_runs, name, width):
    outcome = golden_runs.outcome(name)
    tables = result_tables(outcome)
    assert tables, name
    for title, cols, cells, left in tables:
        _check_table(title, cols, cells, left, width)
    ui = ConsoleUI(_console(width))
    ui.show_results(outcome)
    text = ui.console.export_text()
    link = Path(outcome.report_path).resolve().as_uri()
    assert "…" not in text
    # (the report's link is one line the terminal wraps, so that it stays whole)
    assert all(len(line) <= width for line in text.splitlines() if link not in line), text


def _rows(line: str, width: int) -> int:
    return max(1, -(-len(line) // width))


def _tail(lines: list[str], width: int, rows: int) -> list[str]:
    """The lines that fill the last ``rows`` lines of a terminal ``width`` columns wide."""
    out: list[str] = []
    used = 0
    for line in reversed(lines):
        used += _rows(line, width)
        if used > rows:
            break
        out.insert(0, line)
    return out


@pytest.mark.parametrize("name", SHIPPED)
def test_last_15_lines_at_80_columns_hold_the_headline_and_the_report(golden_runs, name):
    from judgekit.cli.main import _resume_command

    outcome = golden_runs.outcome(name)
    ui = ConsoleUI(_console(80))
    ui.show_results(outcome)
    lines = ui.console.export_text().splitlines()
    if outcome.message:  # what `judgekit run` prints after the results (on stderr)
        lines.append(outcome.message)
    if outcome.exit_code in (1, 130):
        lines.append("resume with: " + _resume_command(name, (), None, None, None, True, outcome))
    tail = "\n".join(_tail(lines, 80, MAX_LINES))
    assert outcome.headline, name
    places = _leaderboard_places(outcome.headline)
    for h in outcome.headline:
        fig = figure_text(h.value, h.low, h.high, places[(h.figure, h.judge)])
        assert fig in tail or all(part in tail for part in fig.replace(" [", "\n[").split("\n")), (fig, tail)
    assert outcome.report_path.resolve().as_uri() in tail, tail
    assert "more candidates" not in tail and "more figures" not in tail, tail


def _leaderboard_places(headline):
    """The decimals of each leaderboard column (figure, judge): its kind's (report.numbers), else
    its values' (what report.html writes)."""
    from judgekit.report import numbers

    cols = {}
    for h in headline:
        cols.setdefault((h.figure, h.judge), (h.unit or "", []))[1].extend((h.value, h.low, h.high))
    return {key: numbers.decimals(numbers.figure_kind(key[0], unit), vals) for key, (unit, vals) in cols.items()}


def _outcome(headline, *, failed=(), message="", exit_code=0):
    from types import SimpleNamespace

    from judgekit.engine.stats import RunStats

    return SimpleNamespace(result=None, stats=RunStats(), served_by_simulator=None, max_cost_usd=None,
                           summary={"spec": "mine", "benchmark": "pairwise", "status": "done"},
                           failed_items=list(failed), out_dir=None, headline=headline,
                           report_path=Path("/tmp/a run/report.html"), message=message, exit_code=exit_code)


def test_many_candidates_keep_to_15_lines_and_say_how_many_more():
    from judgekit.report.doc import Headline

    headline = [Headline(f"candidate-{c:02d}", fig, 10.0 * c + k, 10.0 * c, 10.0 * c + 5, judge=j)
                for j in ("judge", "ensemble") for c in range(30) for k, fig in enumerate(("Reward", "Win Rate"))]
    ui = ConsoleUI(_console(80))
    ui.show_results(_outcome(headline, failed=["item 3: timeout"]))
    lines = ui.console.export_text().splitlines()
    summary = lines[next(i for i, line in enumerate(lines) if line.startswith("── mine")):]
    assert sum(_rows(line, 80) for line in summary) <= MAX_LINES, "\n".join(summary)
    text = "\n".join(summary)
    assert "candidate-00" in text and "more candidates in the report)" in text, text
    assert "1 left failed (listed above" in " ".join(text.split()), text
    assert "file:///tmp/a%20run/report.html" in text, text  # a path as a file:// URL (quoted)


def test_the_best_figure_is_bold_and_the_link_is_a_link():
    from judgekit.report.doc import Headline

    headline = [Headline("a", "Reward", 12.5, 1.0, 20.0, judge="judge"),
                Headline("b", "Reward", -3.0, -9.0, 2.0, judge="judge")]
    console = Console(width=80, file=io.StringIO(), force_terminal=True, color_system="standard", record=True)
    ui = ConsoleUI(console)
    ui.show_results(_outcome(headline))
    out = console.export_text(styles=True)
    assert "\x1b[1m12.5 [1.0, 20.0]" in out, out  # bold: the best Reward, as the page marks it (Reward: 1 decimal)
    assert "\x1b]8;" in console.file.getvalue()  # an OSC 8 hyperlink to the report
