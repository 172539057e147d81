"""The docs' table of differences from the authors' code (docs/authors-code.md) names every option declared as a
departure (``deviations.ours``) of the four benchmarks, under its benchmark."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from judgekit.benchmarks.deviations import _KEY

PAGE = Path(__file__).resolve().parents[2] / "docs" / "authors-code.md"
BENCHMARKS = {"Creation-MMBench": "creation_mmbench.pipeline", "MMIE": "mmie.options",
              "GuessBench": "guessbench.pipeline", "MMGenBench": "mmgenbench.pipeline"}


def _table() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith("# The authors' code, and where judgekit differs")
    section = text.split("\n## ", 1)[0]  # the table, before any later section
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in BENCHMARKS:
            rows[cells[0]] = rows.get(cells[0], "") + " " + cells[3]
    return rows


@pytest.mark.parametrize("benchmark", sorted(BENCHMARKS))
def test_every_departure_option_is_in_the_table(benchmark):
    options = importlib.import_module(f"judgekit.benchmarks.{BENCHMARKS[benchmark]}").Options
    declared = [name for name, info in options.model_fields.items()
                if isinstance(info.json_schema_extra, dict) and _KEY in info.json_schema_extra]
    named = set(re.findall(r"`([a-z_]+)", _table().get(benchmark, "")))
    assert declared and not set(declared) - named, set(declared) - named
