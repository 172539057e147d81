"""The progress view's frames, driven directly: the plan's totals from the first frame, a reason
beside every total that moves mid-run, and a line for the phase after the last call (live and
plain) until the results print."""

from __future__ import annotations

import asyncio
import io
import re
import time

from rich.console import Console

from judgekit.cli.ui import AFTER_CALLS, ConsoleUI
from judgekit.engine.stats import RunStats


class _Engine:
    def __init__(self):
        self.stats = RunStats()
        self.max_cost_usd, self.stop_reason, self.providers = None, None, {}
        self.in_flight = 0

    def bucket_states(self):
        return []


def _terminal(width: int = 120) -> ConsoleUI:
    return ConsoleUI(Console(width=width, file=io.StringIO(), force_terminal=True, color_system=None),
                     interval=0.02)


def _text(ui: ConsoleUI, renderable) -> str:
    c = Console(width=ui.console.width, file=io.StringIO(), color_system=None, record=True)
    c.print(renderable)
    return c.export_text()


def test_the_first_frame_shows_the_plans_totals():
    """The flow announces its plan before its first call; the first frame already shows it (it
    showed 0/0 before)."""
    eng, ui = _Engine(), _terminal()
    frames: list[tuple[int, str]] = []
    render = ui.render
    ui.render = lambda e: frames.append((e.stats.total, _text(ui, render(e)))) or render(e)

    async def flow():
        eng.stats.plan("candidate", 12)
        eng.stats.plan("judge", 48)
        await asyncio.sleep(0.05)
        for name in ("candidate", "judge"):
            s = eng.stats.stage(name)
            s.done = s.calls = s.total

    async def main():
        task = asyncio.ensure_future(flow())
        async with ui.progress(eng):
            await task

    asyncio.run(main())
    ui._end_status()
    total, text = frames[0]
    assert total == 60 and "0/12" in text and "0/48" in text and "0/60 (0%)" in text, text


def test_a_total_that_changes_says_why_in_both_views():
    eng, ui = _Engine(), _terminal(80)
    eng.stats.plan("answer", 20)
    eng.stats.plan("score", 40)
    eng.stats.sample(0.0)
    assert "total" not in _text(ui, ui.render(eng)).split("ETA")[-1]  # nothing moved: nothing said
    eng.stats.drop("score", 2, "answers failed: their scores are not asked")
    eng.stats.drop("score", 2, "answers failed: their scores are not asked")
    eng.stats.plan("generate", 7, "images the answers asked for")
    text = _text(ui, ui.render(eng))
    assert "0/36" in text and "0/7" in text, text
    assert "score total -4: answers failed: their scores are not asked" in text, text
    assert "generate total +7: images the answers asked for" in text, text
    line = ui.plain_line(eng)
    assert "totals: score total -4: answers failed: their scores are not asked; generate total +7" in line, line


def test_plain_lines_carry_each_stages_eta():
    eng = _Engine()
    ui = ConsoleUI(Console(width=160, file=io.StringIO()), interval=5.0)
    s = eng.stats.stage("judge")
    s.total = 100
    eng.stats.sample(0.0)
    s.first_call = 0.0
    s.done = s.calls = 20
    eng.stats.sample(10.0)
    assert "judge 20/100 ETA 0m40s" in ui.plain_line(eng)


def _run_with_a_slow_ending(ui: ConsoleUI, eng: _Engine, hold_s: float) -> None:
    """Calls end, then the flow computes for ``hold_s`` holding the event loop (as a bootstrap
    does), then the results would print."""

    async def flow():
        eng.stats.plan("judge", 10)
        await asyncio.sleep(0.05)
        s = eng.stats.stage("judge")
        s.done = s.calls = 10
        await asyncio.sleep(0)
        time.sleep(hold_s)  # the loop is held: no tick of the progress runs meanwhile

    async def main():
        task = asyncio.ensure_future(flow())
        async with ui.progress(eng):
            await task

    asyncio.run(main())


def test_live_view_shows_the_phase_after_the_last_call_until_the_results():
    eng, ui = _Engine(), _terminal()
    _run_with_a_slow_ending(ui, eng, 0.6)
    out = ui.console.file.getvalue()
    # drawn by rich's thread while the loop was held, with the seconds going on
    seconds = [float(x) for x in re.findall(re.escape(AFTER_CALLS) + r" \((\d+\.\d)s\)", out)]
    assert seconds and max(seconds) >= 0.3, out[-2000:]
    # after the live view closes, the line stays until the results print (show_results ends it)
    assert ui._status is not None and ui._status_line.message == AFTER_CALLS
    ui._end_status()
    assert ui._status is None


def test_plain_mode_prints_the_phase_after_the_last_call(capsys):
    eng = _Engine()
    ui = ConsoleUI(Console(width=160, file=io.StringIO()), interval=0.2)
    assert not ui.live
    _run_with_a_slow_ending(ui, eng, 0.3)  # the results computed inside the flow
    time.sleep(0.7)  # then the files and the report written, after the progress closed
    ui._end_status()  # what show_results does first
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "intervals and the report" in ln]
    assert lines[0].endswith(AFTER_CALLS), lines
    assert any(ln.endswith("s)") and AFTER_CALLS in ln for ln in lines[1:-1]), lines  # the seconds, again and again
    whole = re.search(r"intervals and the report computed in (\d+\.\d)s$", lines[-1])
    assert whole and float(whole.group(1)) >= 0.8, lines  # 0.3 + 0.7 s held (seen within a poll of 0.1 s)


def test_a_stopped_run_shows_no_phase_line(capsys):
    eng = _Engine()
    ui = ConsoleUI(Console(width=160, file=io.StringIO()), interval=0.05)

    async def main():
        async with ui.progress(eng):
            eng.stats.plan("judge", 3)
            await asyncio.sleep(0.1)
            raise RuntimeError("stopped")

    try:
        asyncio.run(main())
    except RuntimeError:
        pass
    ui._end_status()
    assert "intervals and the report" not in capsys.readouterr().out
