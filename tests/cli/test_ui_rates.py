"""The live rates go by the last seconds and the ETAs by each stage's own smoothed pace (a fake
clock drives them): calls/s falls to 0 when a stage ends instead of decaying, and a stage with no
pace and no estimate shows no ETA rather than a wrong one."""

from __future__ import annotations

import io

from pytest import approx

from rich.console import Console

from judgekit.cli.ui import ConsoleUI
from judgekit.engine.stats import RATE_WINDOW_S, RunStats


def _run(stats: RunStats, stage: str, t0: float, seconds: int, per_s: int) -> float:
    st = stats.stage(stage)
    for t in range(seconds):
        st.calls += per_s
        st.done += per_s
        stats.sample(t0 + t + 1)
    return t0 + seconds


def test_recent_rate_and_eta_on_a_fake_clock():
    stats = RunStats()
    a, b = stats.stage("a"), stats.stage("b")
    a.total, b.total = 200, 100
    stats.sample(0.0)
    assert a.calls_per_s() is None and a.eta_s() is None and stats.eta_s() is None  # no pace yet
    assert stats.elapsed_s(0.5) == 0.5
    now = _run(stats, "a", 0.0, 20, 5)  # 20 s at 5 calls/s
    assert a.calls_per_s() == 5.0 and a.eta_s() == approx((200 - 100) / 5.0)
    assert b.calls_per_s() == 0.0 and b.eta_s() is None  # b has not started: no ETA, not a wrong one
    assert stats.calls_per_s() == 5.0 and stats.eta_s() == approx((300 - 100) / 5.0)
    now = _run(stats, "a", now, 20, 5)  # a ends at 40 s
    assert a.eta_s() == 0.0
    b.first_call = now  # as the engine notes it: b's pace runs from its first call, not the run's start
    now = _run(stats, "b", now, 4, 10)  # b at 10/s for 4 s: the window holds 6 s of a and 4 of b
    assert a.calls_per_s() == 30 / RATE_WINDOW_S and b.calls_per_s() == 40 / RATE_WINDOW_S
    assert b.eta_s() == approx((100 - 40) / 10.0)  # b's own pace, not the window's mix of a and b
    now = _run(stats, "b", now, 6, 10)
    assert a.calls_per_s() == 0.0  # an average since the start would still say 200/50 = 4
    assert b.calls_per_s() == 10.0 and b.eta_s() == 0.0
    assert stats.done == 300 and stats.eta_s() == 0.0
    assert stats.elapsed_s(now) == now


def test_overall_line_and_plain_line():
    class _Engine:
        def __init__(self):
            self.stats = RunStats()
            self.max_cost_usd, self.stop_reason, self.providers = None, None, {}

        def bucket_states(self):
            return []

    eng = _Engine()
    st = eng.stats.stage("pairwise_judge")
    st.total = 1200
    eng.stats.sample(100.0)
    st.done = st.calls = 300
    eng.stats.sample(110.0)
    ui = ConsoleUI(Console(width=80, file=io.StringIO(), force_terminal=True, color_system=None, record=True))
    ui.console.print(ui.render(eng))
    text = ui.console.export_text()
    assert "300/1,200 (25%)" in text and "ETA 0m30s" in text and "30.0 calls/s" in text, text
    assert "0m30s" in text.split("pairwise_judge")[1], text  # the stage's own ETA
    assert "ETA 0m30s" in ui.plain_line(eng)
