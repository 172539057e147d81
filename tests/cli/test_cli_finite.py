"""Every number option of every command refuses nan, inf and -inf in one line naming the option,
exit 2 (``--max-cost nan`` was a traceback, ``--max-cost inf`` was taken); the options are found
by walking the command tree, so a new one is covered.  A non-finite spec value given with --set
to the simulator's settings is refused the same way."""

from __future__ import annotations

import click
import pytest
from oneline import assert_user_error, invoke

from judgekit.cli.main import FiniteFloat, cli

SPEC = """
name = "t"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"
[models.a]
provider = "sim"
model = "m"
[roles]
candidates = ["a"]
judge = "a"
"""


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


NUMBER_OPTIONS = [(path, p.opts[0]) for path, command in _commands(cli) for p in command.params
                  if isinstance(p, click.Option) and isinstance(p.type, (click.types.FloatParamType, FiniteFloat))]


def test_every_float_option_is_finite():
    assert (("run",), "--max-cost") in NUMBER_OPTIONS and (("sim", "serve"), "--latency-ms") in NUMBER_OPTIONS
    for path, option in NUMBER_OPTIONS:
        command = dict(_commands(cli))[path]
        p = next(p for p in command.params if option in p.opts)
        assert isinstance(p.type, FiniteFloat), (path, option)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "Infinity", "1e999"])
@pytest.mark.parametrize("path, option", NUMBER_OPTIONS, ids=[" ".join(p) + " " + o for p, o in NUMBER_OPTIONS])
def test_a_number_option_refuses_non_finite_values(tmp_path, path, option, value):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    needs_spec = any(p.name == "spec_or_name" for p in dict(_commands(cli))[path].params)
    args = [*path, *([spec] if needs_spec else []), f"{option}={value}", "--cache", tmp_path / "c.duckdb"]
    if path == ("sim", "serve"):
        args = args[:-2]
    assert_user_error(invoke(*args), option, "finite")


def test_a_finite_number_still_passes(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    r = invoke("estimate", spec, "--max-cost", "1.5", "--cache", tmp_path / "c.duckdb", "--limit", "1")
    assert r.exit_code == 0, r.output
    assert "--max-cost $1.50" in r.output


@pytest.mark.parametrize("override, key", [("models.a.sim.latency_ms=inf", "models.a.sim.latency_ms"),
                                           ("models.a.sim.model_quality={m=nan}", "models.a.sim.model_quality"),
                                           ("models.a.sim.error_rate=nan", "models.a.sim.error_rate")])
def test_simulator_settings_refuse_non_finite_values(tmp_path, override, key):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    assert_user_error(invoke("estimate", spec, "--set", override, "--cache", tmp_path / "c.duckdb"), str(spec), key)


@pytest.mark.parametrize("override, key", [
    ('models.g={provider="sim_image",model="gpt-image-1",image={extra={background=nan}}}',
     "models.g.image.extra.background"),  # request fields passed on as written: each images call failed
    ("models.g={provider=\"sim_image\",model=\"m\",image={extra={n=[{w=-inf}]}}}", "models.g.image.extra.n[0].w"),
    ("options.weights=[1.0, nan]", "options.weights[1]")])
def test_a_non_finite_value_anywhere_in_the_spec_is_refused(tmp_path, override, key):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    r = invoke("estimate", spec, "--set", override, "--cache", tmp_path / "c.duckdb")
    assert_user_error(r, str(spec), key)
    assert "finite" in r.output
