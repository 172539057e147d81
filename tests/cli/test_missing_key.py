"""A missing API-key env var: `run` says which alias needs which variable (one line, exit 2);
`estimate` makes no call, so it needs no key at all."""

from __future__ import annotations

from pathlib import Path

from oneline import assert_user_error, invoke

SPEC = """
name = "keys"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"

[models.cand]
provider = "openai"
model = "gpt-4o-mini-2024-07-18"
api_key_env = "JK_TEST_CANDIDATE_KEY"

[models.judge]
provider = "openai"
model = "gpt-4o-2024-08-06"
api_key_env = "JK_TEST_JUDGE_KEY"

[roles]
candidates = ["cand"]
judge = "judge"
"""

NO_KEYS = {"JK_TEST_CANDIDATE_KEY": None, "JK_TEST_JUDGE_KEY": None, "OPENAI_API_KEY": None}


def _spec(tmp_path: Path) -> Path:
    p = tmp_path / "keys.toml"
    p.write_text(SPEC, encoding="utf-8")
    return p


def test_run_without_the_key_is_one_line_naming_alias_and_variable(tmp_path):
    r = invoke("run", _spec(tmp_path), "--limit", "1", "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o",
               env=NO_KEYS)
    line = assert_user_error(r, "'cand'", "JK_TEST_CANDIDATE_KEY", "not set")
    assert "authentication failed" not in line  # nothing was sent: the key is missing, not wrong
    assert r.stdout == ""


def test_run_names_the_second_alias_when_only_its_key_is_missing(tmp_path):
    r = invoke("run", _spec(tmp_path), "--limit", "1", "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o",
               env={**NO_KEYS, "JK_TEST_CANDIDATE_KEY": "sk-test"})
    assert_user_error(r, "'judge'", "JK_TEST_JUDGE_KEY")


def test_estimate_needs_no_key(tmp_path):
    r = invoke("estimate", _spec(tmp_path), "--limit", "2", "--cache", tmp_path / "c.duckdb", env=NO_KEYS)
    assert r.exit_code == 0, (r.output, repr(r.exception))
    assert "Traceback" not in r.output
    assert "pairwise" in r.stdout and "vfs" in r.stdout  # the stages are estimated all the same


def test_estimate_of_a_shipped_runner_with_simulator_and_local_models_needs_no_key(tmp_path):
    # (made, not started: neither a simulator process nor a local worker is launched)
    r = invoke("estimate", "mmgenbench", "--limit", "1", "--cache", tmp_path / "c.duckdb", env=NO_KEYS)
    assert r.exit_code == 0, (r.output, repr(r.exception))
