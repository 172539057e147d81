"""A judge panel in the spec: roles.judges (roles.judge is then its first), and the one-line errors
for a panel that cannot be (a judge named twice, an unknown alias, a judge outside the panel),
in a file, through --set and through the CLI."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.config import load_spec
from judgekit.errors import SpecError

BASE = """
name = "t"
benchmark = "creation_mmbench"
data = "x.tsv"
[models.a]
provider = "sim"
model = "m"
[models.j1]
provider = "sim"
model = "judge-1"
[models.j2]
provider = "sim"
model = "judge-2"
[models.j3]
provider = "sim"
model = "judge-3"
[roles]
candidates = ["a"]
"""


def _spec(tmp_path, roles: str, overrides=()):
    p = tmp_path / "spec.toml"
    p.write_text(textwrap.dedent(BASE) + roles)
    return load_spec(str(p), list(overrides))


def _error(tmp_path, roles: str, overrides=()) -> str:
    with pytest.raises(SpecError) as e:
        _spec(tmp_path, roles, overrides)
    text = str(e.value)
    assert "\n" not in text and str(tmp_path / "spec.toml") in text
    return text


def test_a_panel_sets_the_judge_to_its_first(tmp_path):
    roles = _spec(tmp_path, 'judges = ["j2", "j1", "j3"]\n').roles
    assert roles.judge == "j2" and roles.judges == ["j2", "j1", "j3"] and roles.panel == ["j2", "j1", "j3"]
    # naming the judge as well is fine when it is in the panel; the panel's first is still the judge
    roles = _spec(tmp_path, 'judge = "j3"\njudges = ["j1", "j3"]\n').roles
    assert roles.judge == "j1" and roles.panel == ["j1", "j3"]


def test_one_judge_and_none(tmp_path):
    roles = _spec(tmp_path, 'judge = "j1"\n').roles
    assert (roles.judge, roles.judges, roles.panel) == ("j1", [], ["j1"])
    roles = _spec(tmp_path, 'judge = "j1"\njudges = []\n').roles
    assert roles.panel == ["j1"]
    roles = _spec(tmp_path, 'judges = ["j2"]\n').roles
    assert (roles.judge, roles.panel) == ("j2", ["j2"])
    assert _spec(tmp_path, "").roles.panel == []


def test_a_judge_named_twice(tmp_path):
    line = _error(tmp_path, 'judges = ["j1", "j2", "j1"]\n')
    assert "roles.judges: 'j1' is named twice" in line


def test_an_unknown_alias_in_the_panel(tmp_path):
    line = _error(tmp_path, 'judges = ["j1", "nope"]\n')
    assert "roles.judges: 'nope' is not a model alias" in line and "a, j1, j2, j3" in line


def test_a_judge_outside_the_panel(tmp_path):
    line = _error(tmp_path, 'judge = "j3"\njudges = ["j1", "j2"]\n')
    assert "roles.judge ('j3') is not in roles.judges ('j1', 'j2')" in line


def test_wrong_types(tmp_path):
    assert "roles.judges" in _error(tmp_path, 'judges = "j1"\n')
    assert "roles.judges.1" in _error(tmp_path, 'judges = ["j1", 2]\n')


def test_set_a_panel_on_a_spec_that_names_a_judge(tmp_path):
    roles = _spec(tmp_path, 'judge = "j1"\n', ['roles.judges=["j1", "j2"]']).roles
    assert roles.judge == "j1" and roles.panel == ["j1", "j2"]
    roles = _spec(tmp_path, 'judge = "j1"\n', ['roles.judges=["j3", "j1"]']).roles
    assert roles.judge == "j3" and roles.panel == ["j3", "j1"]
    # the shipped quickstart, given a second judge
    spec = load_spec("quickstart", ['roles.judges=["judge", "sim-strong"]'])
    assert spec.roles.judge == "judge" and spec.roles.panel == ["judge", "sim-strong"]
    # a panel without the spec's judge is refused (which one was meant?), naming both keys
    line = _error(tmp_path, 'judge = "j1"\n', ['roles.judges=["j2", "j3"]'])
    assert "roles.judge ('j1') is not in roles.judges ('j2', 'j3')" in line


@pytest.mark.parametrize("panel, named", [
    ('["nope"]', "roles.judges"),
    ('["judge", "nope"]', "'nope' is not a model alias"),
    ('["judge", "judge"]', "'judge' is named twice"),
    ('"judge"', "roles.judges"),
])
def test_the_cli_says_it_in_one_line(tmp_path, panel, named):
    r = CliRunner().invoke(cli, ["run", "quickstart", "--set", f"roles.judges={panel}", "--out", str(tmp_path / "o"),
                                 "--cache", str(tmp_path / "c.duckdb")])
    assert r.exit_code == 2, (r.exit_code, r.output, repr(r.exception))
    assert "Traceback" not in r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "quickstart.toml" in lines[0] and "roles.judges" in lines[0] and named in lines[0], lines[0]
    assert not (tmp_path / "o").exists()
