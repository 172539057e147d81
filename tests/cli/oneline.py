"""Running the CLI in-process (click's CliRunner) and checking the user-error contract: exit 2,
exactly one line on stderr, no traceback, and the line names what is wrong."""

from __future__ import annotations

from click.testing import CliRunner, Result

from judgekit.cli.main import cli


def invoke(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def assert_user_error(result: Result, *names: str) -> str:
    """The one stderr line of a user error; every string of ``names`` is in it."""
    assert result.exit_code == 2, (result.exit_code, result.output, repr(result.exception))
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]
