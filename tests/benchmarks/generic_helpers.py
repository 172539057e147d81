"""What the generic benchmarks' (pairwise, rubric) tests share (imported by name: pytest puts this
folder on sys.path): a rubric spec's models and roles as a user writes them, and the CLI check that
bad input is one line on stderr, exit 2, no traceback."""

from __future__ import annotations

from click.testing import CliRunner

from judgekit.cli.main import cli

#: a live candidate and a judge, both simulated, and their roles (the end of a rubric spec)
RUBRIC_MODELS = '''[models.c]
provider = "sim"
model = "sim-vlm-strong"
[models.judge]
provider = "sim"
model = "sim-judge"
[roles]
candidates = ["c"]
judge = "judge"
'''


def user_error(args: list[str], *names: str) -> str:
    """The CLI run with ``args`` refuses the input: exit 2, one line ``error: ...`` on stderr that
    names each of ``names``, no traceback.  Returns the line."""
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, (r.exit_code, r.output, repr(r.exception))
    assert "Traceback" not in r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]
