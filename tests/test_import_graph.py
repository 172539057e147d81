"""The package's import graph, read from the source (ast over judgekit/**/*.py, imports inside
functions and under TYPE_CHECKING included): no benchmark imports another benchmark's modules, the
judging core (judgekit/judging) imports no benchmark, the simulator's core (judgekit/sim) reaches no
benchmark by any chain of imports, and judgekit/ as a whole has no import cycle.  What every
judge-heavy benchmark shares lives in the judging core, not in one benchmark that the others
import sideways; what two modules share lives in a leaf beneath both, not in one that the other
imports back.

Run as a script, it prints the import cycles left inside judgekit/ (Tarjan's strongly connected
components of the same graph).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import judgekit

ROOT = Path(judgekit.__file__).resolve().parent


def modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Every module of the package by dotted name: (its file, whether it is a package's __init__)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the package's modules it imports (``from a import b`` counts as importing ``a.b``
    when that is a module, else ``a``)."""
    mods = modules(root)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_pkg) in mods.items():
        package = name.split(".") if is_pkg else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [known(a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [known(f"{source}.{a.name}") if f"{source}.{a.name}" in mods else known(source)
                           for a in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t is not None and t != name)
    return graph


def benchmark_of(module: str, root: Path = ROOT) -> str | None:
    """The benchmark package a module belongs to (``judgekit.benchmarks.<name>``), or None for a
    module outside every benchmark (the benchmark contract ``judgekit.benchmarks.base`` and the
    other modules directly in ``judgekit/benchmarks`` included)."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[:2] == [root.name, "benchmarks"] and (root / "benchmarks" / parts[2]).is_dir():
        return parts[2]
    return None


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The graph's cycles: its strongly connected components of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def reachable(graph: Mapping[str, Iterable[str]], starts: Iterable[str]) -> dict[str, str | None]:
    """Every module reachable from ``starts`` (themselves included) -> the module that first led
    to it (None for a start), so that a chain can be printed."""
    via: dict[str, str | None] = {s: None for s in starts}
    todo = list(via)
    while todo:
        m = todo.pop()
        for t in sorted(graph.get(m, ())):
            if t not in via:
                via[t] = m
                todo.append(t)
    return via


def chain(via: Mapping[str, str | None], end: str) -> str:
    """The import chain :func:`reachable` found to ``end``, from its start."""
    links = [end]
    while via[links[-1]] is not None:
        links.append(via[links[-1]])  # type: ignore[arg-type]
    return " -> ".join(reversed(links))


def test_the_graph_sees_the_benchmarks_and_their_imports():
    graph = import_graph()
    names = {benchmark_of(m) for m in graph} - {None}
    assert {"creation_mmbench", "pairwise", "rubric", "mmie", "guessbench", "mmgenbench"} <= names
    # relative, absolute and function-level imports are all read
    assert "judgekit.judging.results" in graph["judgekit.benchmarks.pairwise.results"]
    assert "judgekit.benchmarks.creation_mmbench.data" in graph["judgekit.benchmarks.creation_mmbench.pipeline"]


def test_no_benchmark_imports_another_benchmark():
    graph = import_graph()
    sideways = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets
                      if benchmark_of(m) and benchmark_of(t) and benchmark_of(m) != benchmark_of(t))
    assert sideways == [], "a benchmark imports another benchmark's module (move the shared piece into judgekit/judging):\n" \
                           + "\n".join(sideways)


def test_the_judging_core_imports_no_benchmark():
    graph = import_graph()
    upward = sorted(f"{m} -> {t}" for m, targets in graph.items() if m.startswith("judgekit.judging")
                    for t in targets if benchmark_of(t))
    assert upward == [], "\n".join(upward)


def test_no_import_cycle_in_judgekit():
    """No two modules of judgekit/ import each other, directly or through others (type-only and
    function-level imports count: a lazy import hides a cycle from the interpreter, not from the
    reader).  A benchmark's data flows one way: what it prepares and the records its flow keeps sit
    beneath its flow, results and report; a provider's error mapping beneath its live and batch
    sides; the batch layer's state beneath the layer, its queue and its collection."""
    found = cycles(import_graph())
    assert found == [], "import cycles (move what both sides use into a leaf beneath them):\n" + \
        "\n".join(", ".join(c) for c in found)


#: the modules of judgekit/benchmarks that the simulator's core may import: the plugin loader,
#: which finds each benchmark's simulated behaviours at run time (importlib, by the dotted names of
#: the leaf registry's ``SIMULATED``, or a plugin's ``simulated`` attribute), and that registry
SIM_MAY_IMPORT = frozenset({"judgekit.benchmarks.plugins", "judgekit.benchmarks.registry"})


def test_the_simulators_core_imports_no_benchmark():
    """The simulator's core (judgekit/sim/**) knows no benchmark: the modules it imports, directly
    or through any chain of imports, include no benchmark package's module
    (``judgekit.benchmarks.<name>.*``, the built-ins' ``sim`` modules included).  Of
    judgekit/benchmarks it imports only :data:`SIM_MAY_IMPORT`: ``sim.behaviours`` asks
    ``judgekit.benchmarks.plugins`` for the behaviours, and that loader imports each benchmark's
    ``sim`` module by name when asked, never at import time (so no import edge reaches one)."""
    graph = import_graph()
    sim = [m for m in graph if m == "judgekit.sim" or m.startswith("judgekit.sim.")]
    assert "judgekit.sim.behaviours" in sim and "judgekit.benchmarks.plugins" in graph["judgekit.sim.behaviours"]
    direct = sorted(f"{m} -> {t}" for m in sim for t in graph[m]
                    if t.startswith("judgekit.benchmarks") and t not in SIM_MAY_IMPORT)
    assert direct == [], "the simulator's core imports benchmark modules:\n" + "\n".join(direct)
    via = reachable(graph, sim)
    reached = sorted(chain(via, m) for m in via if benchmark_of(m))
    assert reached == [], "the simulator's core reaches a benchmark through its imports:\n" + "\n".join(reached)


def test_reachable_follows_chains_and_names_them():
    via = reachable({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}}, ["a"])
    assert set(via) == {"a", "b", "c"}
    assert chain(via, "c") == "a -> b -> c"


def test_cycles_finds_a_cycle_and_leaves_a_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


if __name__ == "__main__":
    found = cycles(import_graph())
    print(f"{len(found)} import cycles inside judgekit/")
    for c in found:
        print(f"  {len(c)}: " + ", ".join(c))
