"""perf/intervals.py at a small size: every stage of the statistics pass is timed and printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "perf" / "intervals.py"


def _run(*args: str) -> str:
    # a child process: the script pins itself to one core, which must not pin the test run
    return subprocess.run([sys.executable, str(SCRIPT), "--items", "24", "--candidates", "3", "--judges", "2",
                           "--samples", "50", "--rounds", "1", *args], check=True, capture_output=True, text=True,
                          env={**os.environ}, timeout=120).stdout


def test_every_stage_is_timed():
    figures = json.loads(_run("--json"))
    stages = figures["stages"]
    assert list(stages) == ["ensemble records", "records by judge", "rows (summarize)", "item sums",
                            "intervals (add_intervals)", "repeat spread", "comparisons", "behaviour",
                            "controlled (LC, SC, BT)", "agreement", "honesty (annotate)", "human agreement",
                            "total: build()", "total: build(), wall"]
    assert all(v >= 0 for v in stages.values())
    assert figures["records"] == 24 * 3 * 2 * 2 * 2
    assert "repeats_stages" in figures or figures["repeats"].startswith("skipped")


def test_the_table_is_printed():
    out = _run()
    assert "total: build()" in out and "comparisons" in out and "human agreement" in out
    assert "controlled figures and human agreement included), without repeats:" in out
    assert "against the 3 s target" in out
    assert "target 3 s (CPU, one core, 24 x 3 x 2" in out and "s wall:" in out
