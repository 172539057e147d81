"""Behaviour unchanged: every shipped runner, run offline against the simulator, writes the same
``summary.json``, CSVs, ``results.parquet`` and ``report.json`` as the code the goldens were
recorded from (``record.py``; what is masked and how a snapshot is made: ``golden.py``).

A failure names the runner, the file and the key path (or column) that changed.  When a change of
behaviour is meant, record again (``python tests/golden/record.py RUNNER``) and say why in the
commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from golden import SHIPPED, canonical, golden_path, snapshot, snapshot_differences  # noqa: E402


def test_every_shipped_runner_has_a_golden():
    recorded = sorted(p.stem for p in golden_path("x").parent.glob("*.json"))
    assert recorded == SHIPPED, "record the missing goldens: python tests/golden/record.py NAME"


@pytest.mark.parametrize("name", SHIPPED)
def test_runner_writes_what_the_golden_recorded(name, golden_runs):
    golden = json.loads(golden_path(name).read_text(encoding="utf-8"))
    now = json.loads(canonical(snapshot(golden_runs(name))))
    diffs = snapshot_differences(golden, now)
    assert not diffs, f"runner {name!r} now writes otherwise:\n" + "\n".join(diffs[:40])
