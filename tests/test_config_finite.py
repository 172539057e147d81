"""No spec value takes nan, inf or -inf: every float of every spec record (the run spec, its
models, limits, params, prices, local and image settings, the simulator's settings and judge
styles, every benchmark's options), found by walking the records' fields, so a field added later
is covered without a change here."""

from __future__ import annotations

import math
import types
import typing

import pytest
from pydantic import BaseModel, ValidationError

from judgekit.benchmarks.base import BENCHMARKS, load_benchmark
from judgekit.config import RunSpec
from judgekit.sim.config import SimConfig

NON_FINITE = (math.nan, math.inf, -math.inf)


def _unwrap(annotation):
    if typing.get_origin(annotation) is typing.Annotated:
        return typing.get_args(annotation)[0]
    return annotation


def _models(root: type[BaseModel], seen: dict[str, type[BaseModel]]) -> None:
    """Every record reachable from ``root`` through its fields' annotations."""
    key = f"{root.__module__}.{root.__qualname__}"
    if key in seen:
        return
    seen[key] = root

    def visit(annotation):
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _models(annotation, seen)
        for arg in typing.get_args(annotation):
            visit(arg)

    for field in root.model_fields.values():
        visit(field.annotation)


def _bad_values(annotation, bad: float) -> list:
    """Values of this annotation that hold ``bad`` where it takes a float (none: no float in it)."""
    annotation = _unwrap(annotation)
    if annotation is float:
        return [bad]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or origin is typing.Union:
        return [v for a in args for v in _bad_values(a, bad)]
    if origin in (list, tuple, set, frozenset):
        return [[v] for a in args[:1] for v in _bad_values(a, bad)]
    if origin is dict:
        return [{"k": v} for v in _bad_values(args[1], bad)]
    return []


def _records() -> dict[str, type[BaseModel]]:
    seen: dict[str, type[BaseModel]] = {}
    for root in (RunSpec, SimConfig, *(load_benchmark(b).Options for b in sorted(BENCHMARKS))):
        _models(root, seen)
    return seen


CASES = [(name, model, field, value)
         for name, model in sorted(_records().items())
         for field, info in model.model_fields.items()
         for bad in NON_FINITE
         for value in _bad_values(info.annotation, bad)]


def test_the_walk_finds_the_floats_of_every_kind_of_record():
    fields = {(m.__name__, f) for _, m, f, _ in CASES}
    assert {("RunSpec", "max_cost_usd"), ("Limits", "timeout_s"), ("ModelParams", "temperature"),
            ("ModelSpec", "batch_poll_s"), ("PriceOverride", "input_per_mtok"), ("SimConfig", "latency_ms"),
            ("SimConfig", "model_quality"), ("JudgeStyle", "noise"), ("LocalSettings", "guidance")} <= fields
    assert len({m for _, m, _, _ in CASES}) >= 10


@pytest.mark.parametrize("name, model, field, value", CASES,
                         ids=[f"{n.rsplit('.', 1)[-1]}.{f}={v!r}" for n, _, f, v in CASES])
def test_every_float_field_refuses_nan_and_infinities(name, model, field, value):
    with pytest.raises(ValidationError) as e:
        model.model_validate({field: value})
    assert any(err["loc"][:1] == (field,) for err in e.value.errors()), e.value.errors()
