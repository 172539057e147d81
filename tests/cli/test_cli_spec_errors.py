"""A spec with loose or out-of-range values, in the file or through --set: one line naming the
file and every bad key, exit 2, for `run` and `estimate` alike."""

from __future__ import annotations

from oneline import assert_user_error, invoke

SPEC = """
name = "t"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"
[options]
dual = "yes"
[models.a]
provider = "sim"
model = "m"
[roles]
candidates = ["a"]
judge = "a"
"""


def test_options_in_the_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC)
    for command in ("estimate", "run"):
        line = assert_user_error(invoke(command, path, "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o")
                                 if command == "run" else invoke(command, path, "--cache", tmp_path / "c.duckdb"),
                                 str(path), "options.dual", "(got 'yes')")
        assert "creation_mmbench" in line


def test_several_bad_overrides_are_all_named_on_one_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC.replace('dual = "yes"', "dual = true"))
    r = invoke("run", path, "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o",
               "--set", "models.a.params.temperature=7", "--set", "models.a.limits.max_attempts=0",
               "--set", "models.a.params.top_p=1.5")
    assert_user_error(r, str(path), "models.a.params.temperature", "(got 7)", "models.a.limits.max_attempts",
                      "models.a.params.top_p")
