"""At 80 and 160 columns the estimate and the live view show every figure whole (no '…'), and
the results tables keep one line a row where it fits."""

from __future__ import annotations

import pytest
from rich.console import Console

from judgekit.cli.ui import ConsoleUI
from judgekit.cost.estimate import Estimate, LineEstimate
from judgekit.engine.stats import RunStats


def _estimate(batch: bool = False) -> Estimate:
    def line(stage, alias, model, calls, cached, tin, tout, exp, cmax, cexp, time_s):
        return LineEstimate(stage, alias, "openai", model, calls, cached, calls - cached, tin, stage != "candidate",
                            tout, exp, cmax, cexp, True, calls_expected=float(calls - cached), time_s=time_s,
                            batch=batch, live_cost_max_usd=cmax * 2 if batch else None,
                            live_cost_expected_usd=cexp * 2 if batch else None)

    return Estimate(lines=[
        line("candidate", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", 7_650, 1_234, 12_345_678, 30_720_000,
             9_876_543.0, 1_234.5678, 98.7654, 4_321.0),
        line("pairwise_judge", "judge-long-alias", "claude-3-5-sonnet-20241022", 15_300, 0, 98_765_432,
             15_667_200, None, 12_345.67, 9_876.54, 123_456.0),
    ])


def _figures(est: Estimate) -> list[str]:
    out = []
    for ln in est.lines:
        out += [f"{ln.calls_to_make:,}", f"{ln.input_tokens:,}", f"{ln.output_tokens_max:,}", ln.stage, ln.alias,
                f"${ln.cost_max_usd:,.2f}", f"${ln.cost_expected_usd:,.2f}"]
    return out


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("batch", [False, True])
def test_estimate_every_number_whole(width, batch):
    ui = ConsoleUI(Console(width=width, force_terminal=True, color_system=None, record=True))
    est = _estimate(batch)
    ui.show_estimate(est, "1,234 of 22,950 calls already cached or made once for several uses (free)")
    text = ui.console.export_text()
    assert "…" not in text, text
    assert all(len(line) <= width for line in text.splitlines())
    for fig in _figures(est):
        assert fig in text, (fig, text)
    assert "~: input tokens" in text  # the judge lines use earlier answers


class _Engine:
    def __init__(self) -> None:
        self.stats = RunStats()
        for name, total, done in (("candidate", 7_650, 7_650), ("pairwise_judge", 153_000, 12_345)):
            st = self.stats.stage(name)
            st.total, st.done, st.calls, st.cache_hits = total, done, done, 0
            st.input_tokens, st.output_tokens, st.cost_usd, st.estimate_usd = 123_456_789, 9_876_543, 1234.5, 9876.5
            st.retries, st.rate_limited, st.failures = 1_234, 567, 89
        self.max_cost_usd, self.stop_reason, self.providers = 20_000.0, None, {}

    def bucket_states(self):
        return []


@pytest.mark.parametrize("width", [80, 160])
def test_live_view_every_number_whole(width):
    eng = _Engine()
    eng.stats.sample(0.0)
    st = eng.stats.stages["pairwise_judge"]
    st.done += 1_000
    st.calls += 1_000
    eng.stats.sample(10.0)
    ui = ConsoleUI(Console(width=width, force_terminal=True, color_system=None, record=True))
    ui.console.print(ui.render(eng))
    text = ui.console.export_text()
    assert "…" not in text, text
    for fig in ("7,650/7,650", "13,345/153,000", "20,995/160,650", "$1,234.50", "1,234/567/89" if width < 120
                else "123,456,789/9,876,543", "ETA 23m16s", "100.0 calls/s", "done"):
        assert fig in text, (fig, text)
