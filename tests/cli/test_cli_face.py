"""The CLI's help as a new user meets it: help on every option, and `estimate --max-cost` worded
for an estimate (and saying what `run` would do).  `sim serve`'s line: tests/cli/test_cli_cache.py;
`cache stats` as a table and the cache a command uses: tests/cli/test_cli_cache_reading.py."""

from __future__ import annotations

from types import SimpleNamespace

import click

from judgekit.cli.main import _cap_check, cli


def _leaf_commands(group, prefix=()):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _leaf_commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def test_every_option_has_help():
    missing = [f"{' '.join(path)} {p.opts[0]}" for path, cmd in _leaf_commands(cli)
               for p in cmd.params if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert missing == []


def test_max_cost_is_worded_for_each_command():
    def max_cost_help(name):
        return next(p.help for p in cli.commands[name].params if p.name == "max_cost")

    assert "the run spends" in max_cost_help("run")
    est = max_cost_help("estimate")
    assert "the run spends" not in est and "Later runs" not in est and "estimate" in est


def test_estimate_max_cost_says_what_run_would_do():
    assert _cap_check(SimpleNamespace(total_max_usd=0.5), 0.25) == (
        "--max-cost $0.25: the estimate's bound ($0.50) is above it; `judgekit run` would ask before starting "
        "(or refuse without a terminal; --yes runs up to the cap)")
    assert _cap_check(SimpleNamespace(total_max_usd=0.25), 0.25) == (
        "--max-cost $0.25: the estimate's bound ($0.25) is within it")
