"""judgekit's prompt files are the authors' strings, byte for byte.

The fixtures under ``tests/fixtures/reference_prompts/`` are the strings read from the authors'
repositories at the commits ``/work/shared/reference`` names (``manifest.json`` says, for each,
the repository, commit, path and the judgekit prompt file it must equal)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.resources import load_prompt

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reference_prompts"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("fixture", sorted(MANIFEST))
def test_prompt_file_is_the_reference_string(fixture):
    entry = MANIFEST[fixture]
    expected = (FIXTURES / fixture).read_bytes().decode("utf-8")
    assert load_prompt(entry["prompt_file"]).text == expected, (
        f"{entry['prompt_file']} differs from {entry['repo']}@{entry['commit']}:{entry['path']} ({entry['strings']})")


def test_mmie_multi_step_reasoning_is_eb0fd6e():
    # the first version of prompts.py said "five key aspects" and "c\u00b7\u00b7lear"; eb0fd6e says "six" and "clear"
    text = (FIXTURES / "mmie" / "multi_step_reasoning.txt").read_text(encoding="utf-8")
    assert "focus on six key aspects: \n" in text and "provide a clear, step-by-step" in text
    assert "\u00b7" not in text and "five key aspects" not in text


def test_every_fixture_is_listed():
    files = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.txt")}
    assert files == set(MANIFEST)
