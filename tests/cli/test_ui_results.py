"""Results tables whose cells carry intervals ("29.2 [6.2, 54.2]"): one line a row at 160 columns,
and at 80 every figure whole (the interval under its estimate, or the columns shared among parts)."""

from __future__ import annotations

import pytest
from rich.console import Console

from judgekit.cli.ui import _fit_tables

COLS = ["model", "category", "Reward", "Win Rate %", "VFS", "VFS ref", "+2/+1/0/-1/-2", "fail", "parse ok % (pair/VFS)"]
CATS = ["Common Functional Writing", "Creative Multimodal Understanding", "Literary Writing", "Overall"]


def _cells() -> list[list[str]]:
    rows = []
    for m, model in enumerate(["sim-strong", "sim-weak"]):
        for c, cat in enumerate(CATS):
            rows.append([model, cat, f"{-58.3 + c:.1f} [{-100.0 + m:.1f}, {-25.0 - c:.1f}]",
                         f"{83.3 - c:.1f} [50.0, 100.0]", f"{5.18 + m:.2f} [5.00, 5.50]", f"{3.67 + c:.2f}",
                         "5/10/5/2/2", "0", "100.0/100.0"])
    return rows


def _render(width: int) -> str:
    console = Console(width=width, force_terminal=True, color_system=None, record=True)
    for t in _fit_tables("Results", COLS, _cells(), width, left={"model", "category"}):
        console.print(t)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 160])
def test_every_figure_whole(width):
    text = _render(width)
    assert "…" not in text, text
    assert all(len(line) <= width for line in text.splitlines()), text
    for row in _cells():
        for cell in row[2:]:
            for part in cell.replace(" [", "\n[").split("\n"):  # an interval may sit under its estimate
                assert part in text, (part, text)
    for col in ("Reward", "Win Rate %", "+2/+1/0/-1/-2"):
        assert col in text


def test_one_line_a_row_when_it_fits():
    text = _render(160)
    body = [line for line in text.splitlines() if "sim-strong" in line or "sim-weak" in line]
    assert len(body) == len(_cells()), text  # every row on one line, names whole
    for row in _cells():
        assert any(all(cell in line for cell in row) for line in body), (row, text)
    assert "Results (1/" not in text  # one table


def test_80_columns_intervals_go_under_the_estimate():
    text = _render(80)
    assert "[-100.0, -25.0]" in text and "-58.3 [-100.0" not in text, text


@pytest.mark.parametrize("by_provider, served, want", [
    ({"sim": 116}, 130, "calls made 116 (simulator, free), cache hits 92"),
    ({"sim": 24, "openai": 92}, 24, "calls made 116 (92 paid; 24 free: sim 24), cache hits 92"),
    ({"openai": 116}, None, "paid calls 116, cache hits 92"),
    (None, 116, "calls made 116 (simulator served 116, free), cache hits 92"),  # no count by provider
    ({}, 0, "calls made 0, cache hits 92"),  # every call from the cache
])
def test_summary_line_tells_free_calls_from_paid(by_provider, served, want):
    from types import SimpleNamespace

    from judgekit.cli.ui import ConsoleUI
    from judgekit.engine.stats import RunStats

    stats = RunStats()
    st = stats.stage("pairwise")
    st.calls, st.cache_hits = (116 if by_provider != {} else 0), 92
    summary = None if by_provider is None else {"calls_by_provider": by_provider}
    outcome = SimpleNamespace(result=None, stats=stats, served_by_simulator=served, max_cost_usd=None,
                              summary=summary, failed_items=[], out_dir=None)
    ui = ConsoleUI(Console(width=80, force_terminal=False, record=True))
    ui.show_results(outcome)
    text = " ".join(ui.console.export_text().split())
    assert "cost spent $0.0000; " + want in text and "failures none" in text, text  # the closing summary


def test_the_closing_lines_name_the_local_workers_faults():
    from types import SimpleNamespace

    from judgekit.cli.ui import ConsoleUI
    from judgekit.engine.stats import RunStats

    workers = {"gen": {"backend": "ray", "actors_asked": 2, "actors": 2, "live": 1, "starts": 3, "crashes": 1,
                       "restarts": 1, "lost_nodes": ["h2 node 1a2b3c4d"], "refused_nodes": [], "notes": [],
                       "items_resent": 4, "items_unavailable": 0, "shared_by": ["gen"]},
               "clip": {"backend": "subprocess", "starts": 1, "crashes": 0, "restarts": 0, "items_resent": 0,
                        "items_unavailable": 0, "shared_by": ["clip"]}}
    outcome = SimpleNamespace(result=None, stats=RunStats(), served_by_simulator=None, max_cost_usd=None,
                              summary={"local_workers": workers}, failed_items=[], out_dir=None)
    ui = ConsoleUI(Console(width=200, force_terminal=False, record=True))
    ui.show_results(outcome)
    text = ui.console.export_text()
    assert ("local workers of gen (ray): 2 actors, 1 crash, 1 restart, 4 items sent again, lost node h2 node "
            "1a2b3c4d") in text, text
    assert "local workers of clip" not in text  # nothing went wrong there


@pytest.mark.parametrize("remade", [0, 3])
def test_the_closing_lines_count_replies_made_again_for_a_missing_file(remade):
    from types import SimpleNamespace

    from judgekit.cli.ui import ConsoleUI
    from judgekit.engine.stats import RunStats

    stats = RunStats()
    stats.stage("generate").remade, stats.stage("encode/generated").remade = remade, 0
    outcome = SimpleNamespace(result=None, stats=stats, served_by_simulator=None, max_cost_usd=None,
                              summary={}, failed_items=[], out_dir=None)
    ui = ConsoleUI(Console(width=200, force_terminal=False, record=True))
    ui.show_results(outcome)
    text = ui.console.export_text()
    line = "cached replies named an image or vector missing from the image store: their calls were made again"
    assert (f"{remade} {line}" in text) == bool(remade) and (line in text) == bool(remade), text
