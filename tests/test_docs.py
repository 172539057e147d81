"""The docs: README.md and the MkDocs site in docs/.

- The README is short (at most 200 lines), keeps exactly two setup commands (install and quickstart;
  the tests), the second being the one CI runs, and links the own-evaluation tutorial from its first
  screen; its relative links lead to files that exist.
- ``mkdocs build --strict`` passes (broken links and anchors, pages left out of the nav: errors).
- Every command (```bash, ```console) and spec (```toml) shown in README.md or docs/ runs in a test,
  or says why not. An HTML comment on the line before the block says which:

  ``<!-- run -->``                  its ``judgekit ...`` lines run here, in a scratch folder per page;
  ``<!-- file: NAME -->``           the block is written to NAME in that folder (any language; a
                                    spec written so must be used by a later ``run`` block);
  ``<!-- check -->``                a whole spec: loaded and validated as ``judgekit run`` does
                                    (keys, types, ranges, models, the benchmark's options);
  ``<!-- check: into RUNNER -->``   a spec fragment: merged into the shipped runner's spec, then
                                    validated the same way;
  ``<!-- tested: tests/F.py::test_x -->``  another test runs it (the test must exist);
  ``<!-- not run: REASON -->``      it cannot run here (a real API key, a GPU, a cluster, minutes).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
SHOWN = {"bash", "console", "toml"}  # the languages of commands and specs
_NOTE = re.compile(r"<!--\s*(run|file|check|tested|not run)\s*(?::\s*(.*?))?\s*-->")
_FENCE = re.compile(r"^(\s*)```\s*([\w-]*)\s*$")


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    body: str
    kind: str | None  # the note's kind, None when there is none
    arg: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order, each with the note on the line before it."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:j])
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        note = _NOTE.fullmatch(lines[k].strip()) if k >= 0 else None
        found.append(Block(page, i + 1, lang, body + "\n", note.group(1) if note else None,
                           (note.group(2) or "") if note else ""))
        i = j + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]


# -- the README ------------------------------------------------------------------------------------

def test_readme_is_short_and_links_the_tutorial_on_its_first_screen():
    lines = README.read_text(encoding="utf-8").split("\n")
    assert len(lines) <= 200 + 1, len(lines)  # (+1: the empty string after the last newline)
    first_screen = "\n".join(lines[:25])
    assert re.search(r"\]\(docs/tutorial\.md#your-own-pairwise-benchmark[^)]*\)", first_screen)


def _section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_has_two_setup_commands_and_the_second_is_what_ci_runs():
    section = _section(README.read_text(encoding="utf-8"), "Two commands")
    commands = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(commands) == 2 and all(c.count("\n") == 1 for c in commands), commands
    install, tests = (c.strip() for c in commands)
    assert install.endswith("judgekit run quickstart")
    assert "docs" in re.search(r'-e "\.\[([a-z,]+)\]"', tests).group(1).split(",")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests.replace("pip install ", "pip install -q ", 1) in ci  # CI runs the README's command
    assert "mkdocs build --strict" in ci


def test_readme_links_lead_to_files():
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert str(page.relative_to(ROOT / "docs")) in nav, page


# -- the site --------------------------------------------------------------------------------------

def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    for option in ("--max-cost", "--grace", "--batch-turnaround-s", "--older-than-days"):  # the generated reference
        assert option in cli, option
    # the run-spec reference, generated from the models that validate a spec (docs/_hooks/spec_reference.py)
    from judgekit.config import Limits, ModelSpec, RunSpec
    from judgekit.model_settings import LocalSettings

    spec = (tmp_path / "site" / "spec" / "index.html").read_text(encoding="utf-8")
    assert "<!-- spec-reference -->" not in spec
    for model in (RunSpec, ModelSpec, Limits, LocalSettings):
        for name in model.model_fields:
            if name != "source_path":
                assert f"<code>{name}</code>" in spec, (model.__name__, name)


# -- every command and spec shown ------------------------------------------------------------------

def test_every_command_and_spec_says_how_it_is_tested():
    bare = [b.where for b in ALL if b.lang in SHOWN and b.kind is None]
    assert not bare, f"blocks with no <!-- run / check / tested / not run --> note: {bare}"
    wrong = [b.where for b in ALL if b.kind in ("run",) and b.lang not in ("bash", "console")]
    wrong += [b.where for b in ALL if b.kind == "check" and b.lang != "toml"]
    assert not wrong, f"run is for bash/console blocks, check for toml: {wrong}"


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "not run"], ids=lambda b: b.where)
def test_not_run_says_why(block):
    assert len(block.arg.split()) >= 3, f"{block.where}: say why it is not run"


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "tested"], ids=lambda b: b.where)
def test_named_test_exists(block):
    for name in block.arg.split():
        path, _, test = name.partition("::")
        source = ROOT / path
        assert source.is_file(), f"{block.where}: no file {path}"
        assert re.search(rf"^\s*(async )?def {re.escape(test)}\(", source.read_text(encoding="utf-8"), re.M), \
            f"{block.where}: no test {test} in {path}"


def _merge(into: dict, fragment: dict) -> dict:
    for key, value in fragment.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def _toml_text(data: dict) -> str:
    """A dict back to TOML (the shapes specs use: tables, arrays, strings, numbers, bools)."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f'"{k}" = {value(x)}' for k, x in v.items()) + " }"
        return repr(v)
    return "\n".join(f'"{k}" = {value(v)}' for k, v in data.items()) + "\n"


def _validate(path: Path) -> None:
    from judgekit.config import load_spec
    from judgekit.runner import _benchmark  # what run and estimate check before anything starts

    _benchmark(load_spec(str(path)))


@pytest.mark.parametrize("block", [b for b in ALL if b.kind == "check"], ids=lambda b: b.where)
def test_spec_is_valid(block, tmp_path, monkeypatch):
    fragment = tomllib.loads(block.body)
    monkeypatch.chdir(tmp_path)
    runner = block.arg.removeprefix("into").strip()
    if runner:
        from judgekit.config import resolve_spec_path

        source = resolve_spec_path(runner)
        data = _merge(tomllib.loads(source.read_text(encoding="utf-8")), fragment)
        spec = tmp_path / source.name
        spec.write_text(_toml_text(data), encoding="utf-8")
        _validate(spec)
    else:
        assert "benchmark" in fragment, f"{block.where}: a fragment needs <!-- check: into RUNNER -->"
        spec = tmp_path / "spec.toml"
        spec.write_text(block.body, encoding="utf-8")
        _validate(spec)


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, JUDGEKIT_CACHE=str(tmp_path / "cache.duckdb"), COLUMNS="100", NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "local"), env.get("PYTHONPATH", "")])
    return env


def _commands(body: str) -> list[str]:
    joined = body.replace("\\\n", " ")
    return [ln.split(" #", 1)[0].strip() for ln in joined.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]


def _pages_with_runs() -> list[Path]:
    return [p for p in PAGES if any(b.kind == "run" for b in ALL if b.page == p)]


@pytest.mark.parametrize("page", _pages_with_runs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_run_blocks_run(page, tmp_path):
    """A page's ``file`` blocks are written and its ``run`` blocks run, in the page's order, in one
    scratch folder with its own cache; each command must exit 0."""
    judgekit = Path(sys.executable).with_name("judgekit")
    written: dict[str, Block] = {}
    used: set[str] = set()
    for block in (b for b in ALL if b.page == page):
        if block.kind == "file":
            (tmp_path / block.arg).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / block.arg).write_text(block.body, encoding="utf-8")
            written[block.arg] = block
        elif block.kind == "run":
            for command in _commands(block.body):
                argv = shlex.split(command)
                assert argv[0] == "judgekit", f"{block.where}: only judgekit commands run here: {command}"
                used |= {a for a in argv if a in written}
                r = subprocess.run([str(judgekit), *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                                   env=_env(tmp_path), timeout=300, stdin=subprocess.DEVNULL)
                assert r.returncode == 0, f"{block.where}: {command} exited {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    unused = [b.where for name, b in written.items() if b.lang == "toml" and name not in used]
    assert not unused, f"specs written but never run: {unused}"
