"""Simulated behaviours (judgekit/sim/behaviours.py): the simulator's core imports no benchmark (read
off the import graph), the built-in behaviours come from the benchmark registry in the old dispatch
order, and a plugin benchmark's ``simulated`` behaviour is added when ``SimConfig.benchmarks`` names
it, without taking a built-in benchmark's request."""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from judgekit.benchmarks.base import BENCHMARKS, SIMULATED
from judgekit.benchmarks.plugins import simulated
from judgekit.errors import SpecError
from judgekit.sim import SimConfig, SimProcess
from judgekit.sim.__main__ import parse_args
from judgekit.sim.behaviours import Behaviour, load
from judgekit.sim.replies import classify, make_reply

SIM = Path(__file__).resolve().parents[2] / "judgekit" / "sim"

#: the one way the core reaches a benchmark: the registry, imported lazily inside a function
ALLOWED = {("behaviours.py", "judgekit.benchmarks.plugins")}


def _module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def benchmark_imports(root: Path) -> list[tuple[str, str, bool]]:
    """(file, module imported, at module level) for every import of ``judgekit.benchmarks`` under
    ``root`` (a copy of judgekit/sim), relative imports resolved."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = _module_of(path, root)
        if path.name != "__init__.py":
            package = package.rpartition(".")[0]
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            for name in names:
                if name == "judgekit.benchmarks" or name.startswith("judgekit.benchmarks."):
                    found.append((str(path.relative_to(root)), name, id(node) in top))
                    break
    return found


def test_the_simulators_core_imports_no_benchmark():
    found = benchmark_imports(SIM)
    assert [(f, m) for f, m, _ in found if (f, m) not in ALLOWED] == []
    assert not any(top for _, _, top in found), "the registry is imported lazily, inside a function"


def test_the_import_check_sees_a_benchmark_import(tmp_path):
    """The check reads absolute and relative imports (so it can fail)."""
    pkg = tmp_path / "judgekit" / "sim"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text("from judgekit.benchmarks.guessbench.hints import parse_hint\n")
    (pkg / "b.py").write_text("def f():\n    from ..benchmarks import mmie\n")
    (pkg / "c.py").write_text("from judgekit.sim import replies\n")
    assert benchmark_imports(pkg) == [("a.py", "judgekit.benchmarks.guessbench.hints", True),
                                      ("b.py", "judgekit.benchmarks", False)]


def test_builtin_behaviours_in_the_old_dispatch_order():
    names = [b.name for b in load()]
    assert names == ["creation_mmbench", "judge_formats", "mmie", "mmgenbench", "guessbench"]
    assert set(SIMULATED) <= set(BENCHMARKS)
    kinds = [k for b in load() for k in b.kinds]
    assert len(kinds) == len(set(kinds)) and "answer" not in kinds
    assert simulated("pairwise") == [] and [b.name for b in simulated("mmie")] == ["mmie"]


PLUGIN = '''
import random
from judgekit.sim.behaviours import Behaviour

stages = ["judge"]


def _classify(text, last_user):
    return "yes_no" if "Answer YES or NO" in text or "ANY" in text else None


def _reply(kind, req, rng):
    return ("YES" if rng.random() < req.quality else "NO"), False


simulated = Behaviour("yes_no", ("yes_no",), _classify, _reply, order=100)
'''


def _digest(i: int) -> bytes:
    return hashlib.sha256(f"behaviour-{i}".encode()).digest()


def test_a_plugins_behaviour_answers_when_named(tmp_path):
    broken = tmp_path / "no_options.py"
    broken.write_text(PLUGIN + "Options = None\nprepare = plan = run = print\n")
    with pytest.raises(SpecError, match="not a judgekit benchmark"):  # the registry checks the interface
        simulated(str(broken))
    path = tmp_path / "yes_no_bench.py"
    path.write_text(PLUGIN + "from pydantic import BaseModel\nclass Options(BaseModel): pass\n"
                    "def prepare(*a): pass\ndef plan(*a): pass\ndef run(*a): pass\n")
    config = SimConfig(benchmarks=[str(path)])
    behaviours = config.behaviours()
    assert [b.name for b in behaviours][-1] == "yes_no"
    prompt = "Is the sky blue? Answer YES or NO."
    assert classify(prompt) == "answer"  # not named: a free-text answer
    replies = {make_reply(prompt, _digest(i), behaviours=behaviours).text for i in range(20)}
    assert replies == {"YES", "NO"}
    # a built-in benchmark's request stays the built-in's, though the plugin would claim it ("ANY")
    creation = ("[ASSISTANT A]\nANY answer\n[END ASSISTANT A]\n[ASSISTANT B]\nother\n[END ASSISTANT B]\n"
                "Give your Final Verdict.")
    assert classify(creation, behaviours=behaviours) == "pairwise"
    assert make_reply(creation, _digest(1), behaviours=behaviours) == make_reply(creation, _digest(1))


def test_a_simulated_attribute_that_is_no_behaviour_is_refused(tmp_path):
    path = tmp_path / "bad_sim.py"
    path.write_text("from pydantic import BaseModel\nclass Options(BaseModel): pass\nstages = []\n"
                    "def prepare(*a): pass\ndef plan(*a): pass\ndef run(*a): pass\nsimulated = 3\n")
    with pytest.raises(SpecError, match="not a judgekit.sim.behaviours.Behaviour"):
        SimConfig(benchmarks=[str(path)]).behaviours()


def test_a_simulator_process_answers_with_a_named_plugin(tmp_path):
    """python -m judgekit.sim (what SimProcess runs) loads the plugin named in its config, and answers
    its requests over HTTP; a plugin it cannot load stops the start with one line."""
    path = tmp_path / "yes_no_served.py"
    path.write_text(PLUGIN + "from pydantic import BaseModel\nclass Options(BaseModel): pass\n"
                    "def prepare(*a): pass\ndef plan(*a): pass\ndef run(*a): pass\n")
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Rain today? Answer YES or NO."}]})
    with SimProcess(SimConfig(benchmarks=[str(path)], model_quality={"m": 1.0})) as sim:
        req = urllib.request.Request(sim.base_url + "/chat/completions", body.encode(),
                                     {"Content-Type": "application/json", "Authorization": "Bearer k"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert json.load(r)["choices"][0]["message"]["content"] == "YES"
    r = subprocess.run([sys.executable, "-m", "judgekit.sim", "--benchmark", "no_such_benchmark_x"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown benchmark 'no_such_benchmark_x'" in r.stderr
    assert "Traceback" not in r.stderr


def test_standalone_server_takes_plugin_benchmarks():
    config, _, _ = parse_args(["--benchmark", "criterion", "--benchmark", "my.bench"])
    assert config.benchmarks == ["criterion", "my.bench"]
    assert parse_args([])[0].benchmarks == []


def test_behaviour_is_a_plain_record():
    b = Behaviour("x", ("k",), lambda t, u: None, lambda k, r, g: ("", False))
    assert b.order == 100 and load([]) == load()
