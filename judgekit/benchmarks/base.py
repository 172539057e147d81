"""What a benchmark provides to the runner, and the registry of benchmarks by name.

A benchmark module exposes:

- ``Options``: a pydantic model of its ``[options]`` table (unknown keys are errors);
- ``prepare(spec, options, limit) -> Prepared``: load and check the data (DataError on bad rows);
- ``plan(prepared, engine) -> list[PlannedCall]``: every call the run can make, for the estimate:
  adaptive flows (turns that stop at the first right guess, review rounds that stop early,
  re-asks) are planned along their longest path, so no stage of a run makes more calls than
  planned, each call with the ``chance`` that the run makes it;
- ``async run(prepared, engine) -> BenchmarkResult``: make the calls and score them;
- ``stages``: the stage names, in order, for progress and estimates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..types import ChatRequest
from .registry import BENCHMARKS, SIMULATED  # re-exported: the built-ins by name (a leaf module)

__all__ = ["PlannedCall", "BenchmarkResult", "BENCHMARKS", "SIMULATED", "load_benchmark", "require_candidates"]

@dataclass
class PlannedCall:
    """A call the run will make.  ``exact`` is False when the request depends on an answer that
    does not exist yet and ``request`` was built with a stand-in of the expected length."""

    stage: str
    request: ChatRequest
    exact: bool = True
    expected_output_tokens: float | None = None
    #: the most output tokens the call can take when ``request.params.max_tokens`` does not say
    #: (an image generation's image tokens); None: ``max_tokens``, else the estimate's default
    max_output_tokens: int | None = None
    #: how likely the run is to make this call (1: every run does; less for a call an early
    #: stop may skip).  The estimate's bound counts the call whatever its chance; its expected
    #: figure weights it by the chance
    chance: float = 1.0
    #: up to this many more calls like this one may be made, beyond what the plan could follow
    #: (an answer not written yet may ask for more images than its stand-in): counted in the
    #: bound, not in the expected figure
    more_at_most: int = 0


@dataclass
class BenchmarkResult:
    """What a benchmark hands to the report."""

    summary: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failed_items: list[str] = field(default_factory=list)
    not_run: int = 0
    display: list[dict[str, Any]] = field(default_factory=list)  # rows of the printed table
    #: more printed tables after ``display``: (title, rows)
    more_displays: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    #: lines printed after the tables
    notes: list[str] = field(default_factory=list)
    #: extra files of the run (an HTML report): each is called with the output folder once the
    #: tables are written, and returns the path it wrote
    writers: list[Callable[[Path], Path]] = field(default_factory=list)
    #: builds the run's report document (judgekit.report.doc.ReportDoc), called once the tables
    #: are written; the runner adds the figures every benchmark shares (panel, agreement,
    #: comparisons, cost) and writes report.json, report_files/ and report.html
    report: Callable[[], Any] | None = None
    #: the tidy export: one row per item x candidate x judge x order (judgekit.report.tidy's
    #: columns); the runner writes it to results.parquet
    tidy: list[dict[str, Any]] = field(default_factory=list)


def load_benchmark(name: str, source_path: str | Path | None = None):
    """The benchmark module a spec's ``benchmark`` names: a built-in (``BENCHMARKS``), an installed
    plugin (entry point group ``judgekit.benchmarks``), a dotted module path on ``sys.path``, or a
    ``.py`` file relative to ``source_path`` (the spec file).  SpecError (one line) when it is
    unknown, fails to import or lacks part of the interface (see :mod:`.plugins`)."""
    from .plugins import resolve

    return resolve(name, BENCHMARKS, source_path)


def require_candidates(spec) -> list[str]:
    """``roles.candidates``, or a SpecError when it is empty."""
    if not spec.roles.candidates:
        from ..errors import SpecError

        raise SpecError(f"{spec.source_path}: roles.candidates: list at least one model to evaluate")
    return list(spec.roles.candidates)
