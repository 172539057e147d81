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


def test_a_spec_file_that_is_not_utf8_or_a_folder(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(SPEC.encode().replace(b'name = "t"', b'name = "\xff"'))
    assert_user_error(invoke("estimate", bad), str(bad), "not UTF-8")
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    assert_user_error(invoke("estimate", folder), str(folder), "Is a directory")


def test_a_nul_character_anywhere_in_the_spec(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC.replace('dual = "yes"', "dual = true").replace('model = "m"', 'model = "m\\u0000x"'))
    line = assert_user_error(invoke("estimate", path, "--cache", tmp_path / "c.duckdb"), str(path), "models.a.model",
                             "NUL")
    assert "\0" not in line


def test_simulator_settings_are_checked_with_the_spec_not_mid_run(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC.replace('dual = "yes"', "dual = true"))
    for value, named in [("{latency_ms='x'}", "latency_ms"), ("{error_rate=5}", "error_rate"),
                         ("{nosuch=1}", "nosuch: unknown key"), ("{url=3}", "url")]:
        r = invoke("run", path, "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o", "--limit", "1",
                   "--set", f"models.a.sim={value}")
        assert_user_error(r, str(path), "models.a.sim", named)


def test_click_usage_errors_are_one_line_too(tmp_path):
    for args, named in [(["estimate", "quickstart", "--limit", "0"], "--limit"),
                        (["estimate"], "SPEC_OR_NAME"), (["nosuch"], "nosuch"),
                        (["estimate", "quickstart", "--bogus"], "--bogus"),
                        (["cache", "export", "x", "--format", "xml"], "--format")]:
        assert_user_error(invoke(*args), named, "see --help")
