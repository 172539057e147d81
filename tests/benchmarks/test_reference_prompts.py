"""judgekit's prompt files are the authors' strings, byte for byte.

The fixtures under ``tests/fixtures/reference_prompts/`` are the strings read from the authors'
repositories (``read_file`` at the commits ``manifest.json`` names, with the path and the
variable), as Python evaluates the literals.  Each judgekit prompt file, its placeholders renamed
to the reference's (``rename``: our ``{name}`` -> what the reference has there), must equal its
fixture.  Every other prompt file is listed under ``not_in_the_authors_code`` with the reason
(the paper's, judgekit's own, or another benchmark's)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from judgekit.resources import load_prompt, prompts_dir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reference_prompts"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
COMPARED, OTHERS = MANIFEST["compared"], MANIFEST["not_in_the_authors_code"]


def _as_reference(entry: dict) -> str:
    text = load_prompt(entry["prompt_file"]).text
    for ours, theirs in entry.get("rename", {}).items():
        assert ours in text, f"{entry['prompt_file']} has no {ours}"
        text = text.replace(ours, theirs)
    return text


@pytest.mark.parametrize("fixture", sorted(COMPARED))
def test_prompt_file_is_the_reference_string(fixture):
    entry = COMPARED[fixture]
    expected = (FIXTURES / fixture).read_bytes().decode("utf-8")
    assert _as_reference(entry) == expected, (
        f"{entry['prompt_file']} differs from {entry['repo']}@{entry['commit']}:{entry['path']} ({entry['strings']})")


def test_every_prompt_file_is_compared_or_says_why_not():
    files = {p.relative_to(prompts_dir()).as_posix() for p in prompts_dir().rglob("*.txt")}
    compared = {e["prompt_file"] for e in COMPARED.values()}
    assert not compared & set(OTHERS)
    assert files == compared | set(OTHERS), (files - compared - set(OTHERS), (compared | set(OTHERS)) - files)
    fixtures = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.txt")}
    assert fixtures == set(COMPARED)


def test_mmie_multi_step_reasoning_is_eb0fd6e():
    # the first version of prompts.py said "five key aspects" and "c\u00b7\u00b7lear"; eb0fd6e says "six" and "clear"
    text = (FIXTURES / "mmie" / "multi_step_reasoning.txt").read_text(encoding="utf-8")
    assert "focus on six key aspects: \n" in text and "provide a clear, step-by-step" in text
    assert "\u00b7" not in text and "five key aspects" not in text


def test_creation_fixtures_are_the_strings_hashed_in_the_parity_test():
    # an independent check of the transcription: test_creation_parity.py's REFERENCE_SHA256
    from test_creation_parity import REFERENCE_SHA256

    for key, sha in REFERENCE_SHA256.items():
        assert hashlib.sha256((FIXTURES / "creation_mmbench" / f"{key}.txt").read_bytes()).hexdigest() == sha
