"""Something is on screen at once: the run says what it does (loading the benchmark, loading
data, opening the cache, estimating) before the data is loaded, and takes the line away after."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from judgekit import runner
from judgekit.cli.ui import ConsoleUI
from judgekit.config import load_spec
from judgekit.runner import RunOptions, estimate_spec


class _RecordingUI:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def status(self, message):
        self.events.append(f"status {message}")

    def show_estimate(self, estimate, cached_note):
        self.events.append("estimate shown")

    def note(self, message):
        self.events.append("note")


def test_status_lines_come_before_the_data_is_loaded(tmp_path, monkeypatch):
    events: list[str] = []
    real = runner._benchmark

    def benchmark(spec):
        events.append("benchmark loaded")
        bench, options = real(spec)

        class _Bench:  # the real benchmark, its data loading recorded
            def prepare(self, *a):
                events.append("data loaded")
                return bench.prepare(*a)

            def __getattr__(self, name):
                return getattr(bench, name)

        return _Bench(), options

    monkeypatch.setattr(runner, "_benchmark", benchmark)
    spec = load_spec("quickstart", [])
    asyncio.run(estimate_spec(spec, RunOptions(cache_path=tmp_path / "c.duckdb"), _RecordingUI(events)))
    events = [e for e in events if e != "note"]  # notes (which cache) may come between the steps
    assert events == ["status loading creation_mmbench", "benchmark loaded", "status loading data", "data loaded",
                      "status opening the cache", "status estimating", "estimate shown", "status None"]


def test_status_line_is_transient_and_only_on_a_terminal():
    out = io.StringIO()
    ui = ConsoleUI(Console(file=out, width=80, force_terminal=True, color_system=None))
    ui.status("loading data")
    ui.status("starting the simulator")
    assert ui._status is not None
    ui.note("the estimate")
    ui.status(None)
    assert ui._status is None
    assert "the estimate" in out.getvalue()
    plain = io.StringIO()
    ui = ConsoleUI(Console(file=plain, width=80, force_terminal=False))
    ui.status("loading data")
    ui.status(None)
    assert plain.getvalue() == ""  # logs and pipes: nothing but what they had before
