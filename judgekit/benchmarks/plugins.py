"""Finding a benchmark by the name a spec gives it: built-in, installed plugin, module or file.

``benchmark = NAME`` is resolved in this order:

1. judgekit's own benchmarks (:data:`judgekit.benchmarks.registry.BENCHMARKS`);
2. an entry point named NAME in the group ``judgekit.benchmarks`` (a package's
   ``[project.entry-points."judgekit.benchmarks"]``; its value is ``"module"`` or ``"module:attr"``);
3. a dotted module path importable on ``sys.path`` (``mypkg.mybench``);
4. a ``.py`` file, relative to the spec file (``benchmark = "mybench.py"``).

Whatever is found must provide the interface of :mod:`judgekit.benchmarks.base` (``Options``,
``prepare``, ``plan``, ``run``, ``stages``); anything wrong (not found, part of the interface
missing, the module failing on import) is one SpecError line, never a traceback.

A benchmark's simulated behaviour (what the simulator's guesser, judge or scorer answers, see
:mod:`judgekit.sim.behaviours`) is found the same way: a built-in's from
:data:`judgekit.benchmarks.registry.SIMULATED` (:func:`simulated_builtins`), a plugin's from its module's
``simulated`` attribute (:func:`simulated`): a behaviour, a list of them, or the name of a module
whose ``behaviours`` lists them (dotted, or relative to the benchmark's module: ``".sim"``).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import SpecError
from .registry import BENCHMARKS, SIMULATED

__all__ = ["ENTRY_POINT_GROUP", "resolve", "installed_plugins", "check_interface", "table_prefix", "simulated",
           "simulated_builtins"]

ENTRY_POINT_GROUP = "judgekit.benchmarks"

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def installed_plugins() -> dict[str, str]:
    """Benchmarks registered by installed packages: entry-point name -> its value."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def resolve(name: str, builtin: dict[str, str], source_path: str | Path | None = None) -> Any:
    """The benchmark module (or object) ``name`` refers to, its interface checked."""
    where = f"{source_path}: " if source_path else ""
    if name in builtin:
        return importlib.import_module(builtin[name])
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            what = f"plugin {name!r} (entry point {ep.value})"
            return check_interface(_guarded(ep.load, what, where), what, where)
    if name.endswith(".py"):
        path = _file_path(name, source_path)
        if path.is_file():
            what = f"plugin file {path}"
            return check_interface(_guarded(lambda: _load_file(path), what, where), what, where)
        raise SpecError(f"{where}benchmark: {name!r}: no such file {path}")
    if _DOTTED.match(name):
        module = _import_dotted(name, where)
        if module is not None:
            return check_interface(module, f"module {name!r}", where)
    raise SpecError(f"{where}benchmark: unknown benchmark {name!r} ({_known(builtin)})")


def _known(builtin: dict[str, str]) -> str:
    plugins = sorted(installed_plugins())
    return (f"built-in: {', '.join(sorted(builtin))}; installed plugins: {', '.join(plugins) or 'none'}; "
            "or a dotted module path importable on sys.path, or a .py file relative to the spec")


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _guarded(load, what: str, where: str) -> Any:
    try:
        return load()
    except SpecError:
        raise
    except Exception as e:  # a plugin's own failure, said in one line
        raise SpecError(f"{where}benchmark: {what} failed to import: {_one_line(e)}") from None


def _import_dotted(name: str, where: str) -> ModuleType | None:
    """The module, or None when no such module is on sys.path (an error inside it is a SpecError)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        # the module itself (or a parent package) is absent: not found; a module it imports: its failure
        missing = e.name or ""
        if missing == name or name.startswith(missing + "."):
            return None
        raise SpecError(f"{where}benchmark: module {name!r} failed to import: {_one_line(e)}") from None
    except Exception as e:
        raise SpecError(f"{where}benchmark: module {name!r} failed to import: {_one_line(e)}") from None


def _file_path(name: str, source_path: str | Path | None) -> Path:
    p = Path(name).expanduser()
    if not p.is_absolute() and source_path:
        p = Path(source_path).parent / p
    return p.resolve()


def _load_file(path: Path) -> ModuleType:
    """Import a benchmark from a .py file; it is registered in ``sys.modules`` (as
    ``judgekit_plugin_<stem>``) so its dataclasses and pickling work as in any module."""
    mod_name = "judgekit_plugin_" + re.sub(r"\W", "_", path.stem)
    loaded = sys.modules.get(mod_name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def check_interface(module: Any, what: str, where: str = "") -> Any:
    """``module`` when it has the benchmark interface, else a SpecError naming what it lacks."""
    from pydantic import BaseModel

    missing = []
    options = getattr(module, "Options", None)
    if not (isinstance(options, type) and issubclass(options, BaseModel)):
        missing.append("Options (a pydantic model of [options])")
    for fn in ("prepare", "plan", "run"):
        if not callable(getattr(module, fn, None)):
            missing.append(f"{fn}()")
    stages = getattr(module, "stages", None)
    if not (isinstance(stages, (list, tuple)) and all(isinstance(s, str) for s in stages)):
        missing.append("stages (a list of stage names)")
    if missing:
        raise SpecError(f"{where}benchmark: {what} is not a judgekit benchmark: it lacks {', '.join(missing)}")
    return module


def table_prefix(name: str) -> str:
    """The benchmark's name as an identifier, for the cache's result tables
    (``result_<prefix>_<table>``): a file's stem, dots and other marks as ``_``."""
    base = Path(name).stem if name.endswith(".py") else name
    ident = re.sub(r"[^A-Za-z0-9_]+", "_", base).strip("_") or "plugin"
    if not re.match(r"[A-Za-z_]", ident):
        ident = "b_" + ident
    return ident[:40]


def _sim_module(name: str, owner: Any, what: str) -> Any:
    """The module ``name`` names; a relative name (``".sim"``) is read beside ``owner`` (the benchmark's
    module: in its package, or for a one-file plugin a file beside it)."""
    try:
        if not name.startswith("."):
            return importlib.import_module(name)
        if hasattr(owner, "__path__"):
            return importlib.import_module(name, owner.__name__)
        if getattr(owner, "__package__", None):
            return importlib.import_module(name, owner.__package__)
        path = Path(owner.__file__).parent / (name.lstrip(".").replace(".", "/") + ".py")
        if not path.is_file():
            raise ModuleNotFoundError(f"no file {path}")
        return _load_file(path)
    except SpecError:
        raise
    except Exception as e:
        raise SpecError(f"benchmark: {what}: its simulated behaviour {name!r} failed to import: {_one_line(e)}") from None


def _behaviours(value: Any, what: str, owner: Any = None) -> list[Any]:
    """The behaviours ``value`` stands for: a module name (its ``behaviours``), a list, or one."""
    if isinstance(value, str):
        value = getattr(_sim_module(value, owner, what), "behaviours", None)
        if value is None:
            raise SpecError(f"benchmark: {what}: its simulated module has no 'behaviours' list")
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for b in items:
        if not (callable(getattr(b, "classify", None)) and callable(getattr(b, "reply", None))):
            raise SpecError(f"benchmark: {what}: simulated holds {b!r}, not a judgekit.sim.behaviours.Behaviour")
    return items


def simulated_builtins() -> list[Any]:
    """Every built-in benchmark's simulated behaviours (:data:`judgekit.benchmarks.registry.SIMULATED`)."""
    return [b for name, module in SIMULATED.items() for b in _behaviours(module, name)]


def simulated(name: str, source_path: str | Path | None = None) -> list[Any]:
    """The simulated behaviours of the benchmark ``name`` (resolved as :func:`resolve` does): a
    built-in's from ``SIMULATED`` (none for one without), a plugin's from its ``simulated``
    attribute (none when it has none)."""
    if name in BENCHMARKS:
        return _behaviours(SIMULATED[name], name) if name in SIMULATED else []
    module = resolve(name, BENCHMARKS, source_path)
    value = getattr(module, "simulated", None)
    return [] if value is None else _behaviours(value, f"plugin {name!r}", module)
