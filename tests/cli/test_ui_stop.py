"""The live view after a stop says how many calls in flight are still landing."""

import io
from types import SimpleNamespace

from rich.console import Console

from judgekit.cli.ui import ConsoleUI
from judgekit.engine.stats import RunStats


def test_the_live_view_says_how_many_calls_in_flight_are_landing_after_a_stop():
    engine = SimpleNamespace(stats=RunStats(), max_cost_usd=None, stop_reason="interrupted", providers={},
                             in_flight=256, bucket_states=lambda: [])
    engine.stats.stage("candidate").total = 600
    ui = ConsoleUI(Console(width=120, file=io.StringIO(), force_terminal=True, color_system=None, record=True))
    ui.console.print(ui.render(engine))
    assert "stopping: interrupted; 256 calls in flight landing (a second Ctrl-C abandons them)" in ui.console.export_text()
