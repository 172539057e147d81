"""Benchmarks from outside judgekit: an installed plugin (entry point), a dotted module path, a .py
file beside the spec, and the one-line errors when a name resolves to nothing usable.

The plugin is the example package in tests/plugin_example (judgekit-criterion), pip-installed into
a temporary folder and run with `judgekit run` in a subprocess against the simulator, as a user
would; the docs' worked example (docs/plugins.md) is the same files (checked at the end)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

import judgekit
from judgekit.benchmarks.base import BENCHMARKS, load_benchmark
from judgekit.benchmarks.plugins import table_prefix
from judgekit.cache.schema import _NAME_RE
from judgekit.errors import SpecError
from judgekit.report.tidy import TIDY_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "plugin_example"
FAST = [f"--set=models.{a}.sim.latency_ms=0" for a in ("strong", "weak", "judge")]


def judgekit_cli(*args, pythonpath: Path | None = None, cwd: Path | None = None):
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-m", "judgekit.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The example package pip-installed (no index, no build isolation) into a folder of its own."""
    tmp = tmp_path_factory.mktemp("plugin")
    src = tmp / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (target / "judgekit_criterion" / "judge.txt").is_file()  # the prompt ships with the package
    return target


def _spec_copy(folder: Path, benchmark: str) -> Path:
    """The example's spec and questions in ``folder``, the spec naming ``benchmark``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE / "example" / "questions.jsonl", folder / "questions.jsonl")
    text = (EXAMPLE / "example" / "criterion.toml").read_text()
    text = re.sub(r'(?m)^benchmark = "criterion"', f'benchmark = "{benchmark}"', text)
    assert f'benchmark = "{benchmark}"' in text
    (folder / "criterion.toml").write_text(text)
    return folder / "criterion.toml"


def _last_verdict(reply: str) -> str | None:
    found = re.findall(r"\b(pass|fail)\b", reply, re.IGNORECASE)
    return found[-1].upper() if found else None


def test_installed_plugin_runs_by_entry_point(site, tmp_path):
    spec = _spec_copy(tmp_path / "spec", "criterion")
    out, cache = tmp_path / "out", tmp_path / "c.duckdb"
    r = judgekit_cli("run", str(spec), "--out", str(out), "--cache", str(cache), *FAST, pythonpath=site)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "done" and summary["benchmark"] == "criterion"
    # the figure comes from the judge's replies: read them again here and compute it independently
    tidy = judgekit.results(out, kind="rows")
    assert len(tidy) == 2 * 6 and all(list(row) == list(TIDY_COLUMNS) for row in tidy)
    for alias in ("strong", "weak"):
        verdicts = [_last_verdict(t["judge_text"]) for t in tidy if t["candidate"] == alias]
        read = [v for v in verdicts if v]
        expected = 100 * read.count("PASS") / len(read) if read else None
        assert summary["pass_rate"][alias] == pytest.approx(expected)
        assert [t["verdict"] for t in tidy if t["candidate"] == alias] == verdicts
    # the plugin's own simulated judge answered (judgekit_criterion/sim.py): a verdict on every line's end
    lines = [t["judge_text"].splitlines() for t in tidy]
    assert all(len(ls) == 2 and ls[0].startswith("The answer ") and ls[1] in ("PASS", "FAIL") for ls in lines)
    assert {ls[1] for ls in lines} == {"PASS", "FAIL"}
    # the report and the cache's result tables (named from the benchmark)
    assert json.loads((out / "report.json").read_text())["headline"][0]["figure"] == "pass rate"
    con = duckdb.connect(str(cache), read_only=True)
    try:
        n = con.execute("select count(*) from result_criterion_judgments").fetchone()[0]
    finally:
        con.close()
    assert n == 12
    listed = judgekit_cli("list", pythonpath=site)
    assert re.search(r"(?m)^  criterion +judgekit_criterion$", listed.stdout), listed.stdout


def test_dotted_module_path_and_py_file(tmp_path):
    # a dotted path on sys.path (a package inside a package; no entry point anywhere)
    pkgs = tmp_path / "pkgs"
    (pkgs / "myorg").mkdir(parents=True)
    (pkgs / "myorg" / "__init__.py").write_text("")
    shutil.copytree(EXAMPLE / "judgekit_criterion", pkgs / "myorg" / "crit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    spec = _spec_copy(tmp_path / "dotted", "myorg.crit")
    cache = tmp_path / "c.duckdb"
    r = judgekit_cli("run", str(spec), "--out", str(tmp_path / "out1"), "--cache", str(cache), "--limit=2", *FAST,
                     pythonpath=pkgs)
    assert r.returncode == 0, r.stderr
    assert set(json.loads((tmp_path / "out1" / "summary.json").read_text())["pass_rate"]) == {"strong", "weak"}
    # a .py file beside the spec, run from another folder
    folder = tmp_path / "file"
    spec = _spec_copy(folder, "my-criterion.py")
    shutil.copy(EXAMPLE / "judgekit_criterion" / "__init__.py", folder / "my-criterion.py")
    shutil.copy(EXAMPLE / "judgekit_criterion" / "judge.txt", folder / "judge.txt")
    shutil.copy(EXAMPLE / "judgekit_criterion" / "sim.py", folder / "sim.py")  # its simulated judge (".sim")
    r = judgekit_cli("run", str(spec), "--out", str(tmp_path / "out2"), "--cache", str(cache), "--limit=2", *FAST,
                     cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out2" / "results.parquet").is_file()
    con = duckdb.connect(str(cache), read_only=True)
    try:
        tables = {t for (t,) in con.execute("select table_name from information_schema.tables").fetchall()}
    finally:
        con.close()
    assert {"result_myorg_crit_judgments", "result_my_criterion_judgments"} <= tables


def _one_error_line(r) -> str:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_unknown_name_lists_builtins_and_plugins(site, tmp_path):
    spec = _spec_copy(tmp_path, "no_such_bench")
    line = _one_error_line(judgekit_cli("run", str(spec), pythonpath=site))
    assert "unknown benchmark 'no_such_bench'" in line and str(spec) in line
    assert all(name in line for name in BENCHMARKS) and "installed plugins: criterion" in line


def test_module_without_run_and_plugin_failing_on_import(tmp_path):
    (tmp_path / "norun.py").write_text(
        "from pydantic import BaseModel\nclass Options(BaseModel):\n    pass\nstages = ['x']\n"
        "def prepare(spec, options, limit=None):\n    return None\nasync def plan(prep, engine):\n    return []\n")
    line = _one_error_line(judgekit_cli("run", str(_spec_copy(tmp_path / "a", "../norun.py"))))
    assert "norun.py is not a judgekit benchmark: it lacks run()" in line
    (tmp_path / "boom.py").write_text("import json\nraise RuntimeError('boom at import\\nsecond line')\n")
    line = _one_error_line(judgekit_cli("run", str(_spec_copy(tmp_path / "b", "../boom.py"))))
    assert "boom.py failed to import: RuntimeError: boom at import" in line and "second line" not in line
    # a dotted module that imports something missing: its failure, not "unknown"
    (tmp_path / "needs_missing.py").write_text("import judgekit_no_such_dependency\n")
    line = _one_error_line(judgekit_cli("run", str(_spec_copy(tmp_path / "c", "needs_missing")),
                                        pythonpath=tmp_path))
    assert "module 'needs_missing' failed to import: ModuleNotFoundError" in line
    # a plugin whose simulated judge is not beside it, run against the simulator: one line, before any call
    folder = tmp_path / "d"
    spec = _spec_copy(folder, "crit.py")
    shutil.copy(EXAMPLE / "judgekit_criterion" / "__init__.py", folder / "crit.py")
    shutil.copy(EXAMPLE / "judgekit_criterion" / "judge.txt", folder / "judge.txt")
    line = _one_error_line(judgekit_cli("run", str(spec)))
    assert "its simulated behaviour '.sim' failed to import" in line and "sim.py" in line


def test_file_path_resolves_relative_to_the_spec(tmp_path):
    (tmp_path / "sub").mkdir()
    shutil.copy(EXAMPLE / "judgekit_criterion" / "__init__.py", tmp_path / "sub" / "crit.py")
    shutil.copy(EXAMPLE / "judgekit_criterion" / "judge.txt", tmp_path / "sub" / "judge.txt")
    bench = load_benchmark("sub/crit.py", tmp_path / "spec.toml")
    assert bench.stages == ["candidate", "judge"] and bench.read_verdict("so: Fail") == "Fail"
    with pytest.raises(SpecError, match="no such file"):
        load_benchmark("crit.py", tmp_path / "spec.toml")
    assert load_benchmark("mmie").__name__ == "judgekit.benchmarks.mmie.pipeline"


def test_prepare_stands_on_the_judging_core(tmp_path):
    """The example reads its questions, checks its roles and fills its prompt with the core's pieces:
    any data file the generic benchmarks read, errors naming the file, row and column."""
    from judgekit.config import load_spec
    from judgekit.errors import DataError

    bench = load_benchmark(str(EXAMPLE / "judgekit_criterion" / "__init__.py"), tmp_path / "spec.toml")
    spec_path = _spec_copy(tmp_path, "criterion")
    (tmp_path / "questions.csv").write_text('id,question\nx1,"Why, though?"\nx2,What is 2+2?\n', encoding="utf-8")
    spec_path.write_text(spec_path.read_text().replace('data = "questions.jsonl"', 'data = "questions.csv"'))
    spec = load_spec(str(spec_path))
    prep = bench.prepare(spec, bench.Options(), limit=None)
    assert [(it.id, it.question) for it in prep.items] == [("x1", "Why, though?"), ("x2", "What is 2+2?")]
    req = bench._judge_request(prep, prep.items[0], "Because {question}.")  # a value is never expanded
    prompt = req.messages[0].text()
    assert prompt.endswith("[Answer]\nBecause {question}.\n") and "[Question]\nWhy, though?\n" in prompt
    shipped = (EXAMPLE / "judgekit_criterion" / "judge.txt").read_bytes()
    assert req.prompt_hash == hashlib.sha256(shipped).hexdigest()[:16]  # the cache key's part, as before
    (tmp_path / "questions.csv").write_text("id,question\nx1,ok\nx1,again\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"questions\.csv, row 2, column 'id': duplicate id 'x1'"):
        bench.prepare(spec, bench.Options(), limit=None)
    (tmp_path / "questions.csv").write_text("id,question\nx1,ok\nx2,\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"questions\.csv, row 2, column 'question': the question is missing"):
        bench.prepare(spec, bench.Options(), limit=None)
    spec_path.write_text(re.sub(r'(?m)^judge = "judge"$', "", spec_path.read_text()))
    with pytest.raises(SpecError, match=r"roles\.judge: name the model that judges"):
        bench.prepare(load_spec(str(spec_path)), bench.Options(), limit=None)


@given(st.text(min_size=1, max_size=80))
def test_table_prefix_is_an_identifier(name):
    prefix = table_prefix(name)
    assert _NAME_RE.match(f"{prefix}_comparisons_by_category")
    if re.fullmatch(r"[a-z]([a-z0-9_]{0,29}[a-z0-9])?", name):  # a built-in's kind of name is kept as it is
        assert prefix == name


# -- the docs' worked example is these files -------------------------------------------------------
_PAGE = ROOT / "docs" / "plugins.md"
_FILES = ["pyproject.toml", "judgekit_criterion/__init__.py", "judgekit_criterion/judge.txt",
          "judgekit_criterion/sim.py", "example/questions.jsonl", "example/criterion.toml"]


def test_readme_example_is_the_package():
    """docs/plugins.md shows the example package's files as they are (a block may carry the docs
    test's note, tests/test_docs.py, on the line before it)."""
    page = _PAGE.read_text(encoding="utf-8")
    blocks = dict(re.findall(r"\*\*`judgekit-criterion/([^`]+)`\*\*\n+(?:<!--[^\n]*-->\n)?```[a-z]*\n(.*?)```", page, re.S))
    assert sorted(blocks) == sorted(_FILES)
    for rel in _FILES:
        assert blocks[rel] == (EXAMPLE / rel).read_text(encoding="utf-8"), rel
