"""Bad rubric specs and data through the CLI: exit 2, one line naming the file (row, field), no
traceback, no call made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from generic_helpers import RUBRIC_MODELS
from generic_helpers import user_error as one_line_error

PROMPT = ("Grade the answer on a scale of 1 to 10: \"Rating: [[5]]\".\n[Rubric]\n{rubric}\n[Question]\n{question}\n"
          "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]\n")
ROWS = [{"id": "a", "question": "Q one?", "criteria": "C1"}, {"id": "b", "question": "Q two?", "criteria": "C2"}]


def setup(d: Path, *, rows=ROWS, prompt=PROMPT, options: str = 'rubric = "be fair"', answers=None) -> Path:
    (d / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "judge.txt").write_text(prompt)
    if answers is not None:
        (d / "ans.jsonl").write_text("".join(json.dumps(r) + "\n" for r in answers))
    spec = d / "spec.toml"
    spec.write_text(f'''name = "bad"
benchmark = "rubric"
data = "q.jsonl"
[options]
judge_prompt = "judge.txt"
{options}
''' + RUBRIC_MODELS)
    return spec


def user_error(d: Path, spec: Path, *names: str) -> str:
    return one_line_error(["estimate", str(spec), "--cache", str(d / "c.duckdb")], *names)


def test_missing_question(tmp_path):
    spec = setup(tmp_path, rows=[ROWS[0], {"id": "b", "question": "  "}])
    user_error(tmp_path, spec, "q.jsonl", "row 2", "'question'")


def test_unknown_placeholder_names_the_prompt_file_and_line(tmp_path):
    spec = setup(tmp_path, prompt=PROMPT.replace("{answer}", "{answr}"))
    user_error(tmp_path, spec, "judge.txt", "line 7", "{answr}")


def test_rubric_placeholder_without_criteria_or_global_rubric(tmp_path):
    spec = setup(tmp_path, rows=[ROWS[0], {"id": "b", "question": "Q two?"}], options="")
    user_error(tmp_path, spec, "q.jsonl", "row 2", "'criteria'", "options.rubric")


def test_imported_answer_for_no_item(tmp_path):
    spec = setup(tmp_path, options='rubric = "x"\nanswers = { "imp" = "ans.jsonl" }',
                 answers=[{"id": "a", "answer": "yes"}, {"id": "zz", "answer": "no"}])
    user_error(tmp_path, spec, "ans.jsonl", "row 2", "'zz'")


@pytest.mark.parametrize("options, names", [
    ('score = "regex"', ("score = 'regex'", "options.regex")),
    ('score = "regex"\nregex = "(\\\\d+"', ("options.regex",)),
    ('score = "regex"\nregex = "Rating: (\\\\d+)"', ("options.regex", "score")),
    ("regex = '(?P<score>\\d+)'", ("options.regex", "score = 'regex'")),
    ("scale = [10, 1]", ("options.scale", "low end")),
    ('rubric = "rubrics/missing.txt"', ("options.rubric", "missing.txt")),
    ('score = "median"', ("score",)),
])
def test_bad_options(tmp_path, options, names):
    user_error(tmp_path, setup(tmp_path, options=options), *names)


def test_no_candidate_at_all(tmp_path):
    spec = setup(tmp_path)
    spec.write_text(spec.read_text().replace('candidates = ["c"]', "candidates = []"))
    user_error(tmp_path, spec, "roles.candidates", "options.answers")
