"""The live progress says why a model waits, and stays readable in an 80-column terminal."""

from __future__ import annotations

import io
import re

from rich.console import Console

from judgekit.cli.ui import ConsoleUI
from judgekit.engine.limits import Bucket
from judgekit.engine.stats import RunStats


class _Engine:
    """What the display reads of an engine."""

    def __init__(self) -> None:
        self.stats = RunStats()
        st = self.stats.stage("pairwise_judge")
        st.total, st.done, st.retries, st.rate_limited = 1200, 340, 12, 9
        self.stats.stage("candidate").total = 600
        judge = Bucket(name="judge (openai gpt-4o-2024-08-06)", max_concurrency=16)
        judge.on_rate_limited(42, "429 rate limit (requests/min)")
        judge.backing_off, judge.backoff_reason = 3, "429 rate limit (requests/min)"
        cand = Bucket(name="cand (gemini gemini-2.5-pro)", max_concurrency=8)
        cand.backing_off, cand.backoff_reason = 1, "HTTP 503"
        self.buckets = [judge, cand, Bucket(name="x (azure my-deploy)", max_concurrency=8)]
        self.max_cost_usd, self.stop_reason, self.providers = 5.0, None, {}

    def bucket_states(self):
        return [b.state() for b in self.buckets]


def _screen(width: int) -> list[str]:
    ui = ConsoleUI(Console(width=width, force_terminal=True, color_system=None, record=True))
    ui.console.print(ui.render(_Engine()))
    return ui.console.export_text().splitlines()


def test_80_columns_one_line_a_row_and_every_reason_whole():
    lines = _screen(80)
    assert all(len(line) <= 80 for line in lines)
    text = "\n".join(lines)
    # every reason on a line of its own, never cut into a narrow column
    assert any(re.fullmatch(r"paused \d+ s: 429 rate limit \(requests/min\); 3 calls in backoff", line.strip())
               for line in lines), text
    assert any(line.strip() == "1 call in backoff after HTTP 503" for line in lines), text
    assert any(line.strip().startswith("pairwise_judge") and "340/1,200" in line and "12/9/0" in line
               for line in lines), text
    assert "judge (openai gpt-4o-2024-08-06): 0 in flight (limit 13 of max 16), 3 waiting" in text


def test_wide_terminal_has_every_column_and_the_reason():
    text = "\n".join(_screen(160))
    for col in ("cache hits", "tokens in/out", "estimate", "why (paused"):
        assert col in text
    assert "1 call in backoff after HTTP 503" in text


def test_plain_line_names_the_wait():
    ui = ConsoleUI(Console(width=160, file=io.StringIO()))
    line = ui.plain_line(_Engine())
    assert re.search(r"judge \(openai gpt-4o-2024-08-06\): paused \d+ s: 429 rate limit \(requests/min\)", line)
    assert "cand (gemini gemini-2.5-pro): 1 call in backoff after HTTP 503" in line
