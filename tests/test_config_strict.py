"""Spec values are strict: a bool is a bool, an int an int, a number a number within its range,
for the spec itself, models (params, limits, local settings) and every benchmark's options, in
the file and through ``--set``.  The error is one line naming the file and the key."""

from __future__ import annotations

import json
import math
import textwrap
import types
import typing
from pathlib import Path

import annotated_types as at
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.benchmarks.base import BENCHMARKS, load_benchmark
from judgekit.config import Limits, LocalSettings, ModelParams, load_spec
from judgekit.errors import SpecError
from judgekit.runner import _benchmark

BASE = """
name = "t"
benchmark = "{bench}"
data = "x"

[models.a]
provider = "openai"
model = "gpt-4o"
drop_unsupported_params = true  # which parameters a family takes is tests/providers/test_model_params.py's

[models.loc]
provider = "local"
model = "org/tiny"
local = {{ task = "chat" }}

[roles]
candidates = ["a"]
judge = "a"
"""

PROPS = settings(max_examples=60, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


def spec_file(tmp_path: Path, bench: str = "creation_mmbench", extra: str = "") -> Path:
    p = tmp_path / f"{bench}.toml"
    if not p.exists() or extra:
        p.write_text(textwrap.dedent(BASE.format(bench=bench)) + extra, encoding="utf-8")
    return p


def load_all(path: Path, overrides: list[str] = ()):
    """The spec and its benchmark's options, validated as `judgekit run` does."""
    spec = load_spec(str(path), list(overrides))
    return spec, _benchmark(spec)[1]


def rejected(path: Path, overrides: list[str], key: str) -> str:
    with pytest.raises(SpecError) as e:
        load_all(path, overrides)
    msg = str(e.value)
    assert "\n" not in msg, msg
    assert str(path) in msg and key in msg, (key, msg)
    return msg


# -- the cases of the issue ------------------------------------------------------------------------
@pytest.mark.parametrize("text, key", [
    ('[options]\ndual = "yes"\n', "options.dual"),
    ("[options]\ndual = 0\n", "options.dual"),
    ("[options]\npairwise = 1\n", "options.pairwise"),
])
def test_loose_options_in_the_file(tmp_path, text, key):
    path = spec_file(tmp_path, extra=text)
    msg = rejected(path, [], key)
    assert "valid boolean" in msg


def test_temperature_out_of_range_in_the_file(tmp_path):
    path = spec_file(tmp_path, extra="")
    path.write_text(path.read_text().replace('model = "gpt-4o"', 'model = "gpt-4o"\nparams = { temperature = 7 }'))
    msg = rejected(path, [], "models.a.params.temperature")
    assert "(got 7)" in msg


@pytest.mark.parametrize("override, key", [
    ("options.dual=yes", "options.dual"),
    ("options.dual=0", "options.dual"),
    ("models.a.params.temperature=7", "models.a.params.temperature"),
    ("models.a.params.top_p=0", "models.a.params.top_p"),
    ("models.a.params.max_tokens=0", "models.a.params.max_tokens"),
    ("models.a.params.max_tokens=100.0", "models.a.params.max_tokens"),
    ("models.a.limits.max_concurrency=true", "models.a.limits.max_concurrency"),
    ("models.a.limits.timeout_s=inf", "models.a.limits.timeout_s"),
    ("models.a.limits.requests_per_minute='600'", "models.a.limits.requests_per_minute"),
    ("max_cost_usd=nan", "max_cost_usd"),
    ("max_cost_usd=-1", "max_cost_usd"),
    ("models.a.price.input_per_mtok='2.5'", "models.a.price.input_per_mtok"),
    ("models.loc.local.trust_remote_code=1", "models.loc.local.trust_remote_code"),
    ("name=5", "name"),
])
def test_set_overrides_are_checked_the_same_way(tmp_path, override, key):
    rejected(spec_file(tmp_path), [override], key)


def test_ints_are_fine_for_floats_and_valid_values_pass(tmp_path):
    spec, options = load_all(spec_file(tmp_path), [
        "models.a.params.temperature=2", "models.a.params.top_p=1", "models.a.limits.timeout_s=30",
        "max_cost_usd=0", "options.dual=false", "models.a.price.input_per_mtok=3"])
    assert spec.models["a"].params.temperature == 2.0 and isinstance(spec.models["a"].params.temperature, float)
    assert spec.models["a"].limits.timeout_s == 30.0 and options.dual is False


# -- every strict field, found from the models themselves -------------------------------------------
def _base_type(annotation):
    """bool / int / float of a field (``X | None`` unwrapped), else None."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else None
    return annotation if annotation in (bool, int, float) else None


def _bounds(field) -> tuple[float | None, bool, float | None, bool]:
    lo = hi = None
    lo_open = hi_open = False
    for m in field.metadata:
        if isinstance(m, at.Ge):
            lo = m.ge
        elif isinstance(m, at.Gt):
            lo, lo_open = m.gt, True
        elif isinstance(m, at.Le):
            hi = m.le
        elif isinstance(m, at.Lt):
            hi, hi_open = m.lt, True
    return lo, lo_open, hi, hi_open


def _fields(model, prefix: str, bench: str = "creation_mmbench"):
    for name, f in model.model_fields.items():
        t = _base_type(f.annotation)
        if t is not None:
            yield bench, prefix + name, t, _bounds(f)


FIELDS = [
    *_fields(ModelParams, "models.a.params."),
    *_fields(Limits, "models.a.limits."),
    *_fields(LocalSettings, "models.loc.local."),
    ("creation_mmbench", "max_cost_usd", float, (0, False, None, False)),
]
for _bench in sorted(BENCHMARKS):
    FIELDS += list(_fields(load_benchmark(_bench).Options, "options.", _bench))


def test_the_field_list_is_not_empty():
    keys = {k for _, k, _, _ in FIELDS}
    assert {"options.dual", "options.sc_samples", "options.sc_temperature", "options.seed",
            "models.a.params.temperature", "models.a.limits.max_concurrency",
            "models.loc.local.trust_remote_code"} <= keys


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    return json.dumps(v)


_TEXT = st.sampled_from(["yes", "no", "true", "1", "0", "0.5", "", "lots"])
WRONG = {
    bool: st.one_of(st.integers(-3, 3), st.floats(allow_nan=True), _TEXT),
    int: st.one_of(st.booleans(), st.floats(allow_nan=True).filter(lambda x: not math.isfinite(x) or x == int(x))
                   | st.floats(0.5, 1e6), _TEXT),
    float: st.one_of(st.booleans(), st.sampled_from([math.inf, -math.inf, math.nan]), _TEXT),
}


@PROPS
@given(case=st.sampled_from(FIELDS), data=st.data())
def test_a_value_of_the_wrong_type_is_named(tmp_path, case, data):
    bench, key, t, _ = case
    value = data.draw(WRONG[t])
    rejected(spec_file(tmp_path, bench), [f"{key}={_toml(value)}"], key)


#: settings a value of the key is only valid with (MMIE's image cap applies when the whole answer is read)
NEEDS = {"options.image_cap": ["options.keep_full_answer=true"]}
#: settings every spec of a benchmark needs (the generic benchmarks' judge prompt)
BENCH_NEEDS = {"pairwise": ["options.judge_prompt='judge.txt'"], "rubric": ["options.judge_prompt='judge.txt'"]}


@PROPS
@given(case=st.sampled_from([c for c in FIELDS if c[3] != (None, False, None, False)]), data=st.data())
def test_a_value_out_of_range_is_named_and_one_inside_passes(tmp_path, case, data):
    bench, key, t, (lo, lo_open, hi, hi_open) = case
    finite = dict(allow_nan=False, allow_infinity=False)
    if t is int:  # outside: below lo (or at it when open), above hi (or at it when open)
        below = lambda: st.integers(max_value=lo if lo_open else lo - 1)  # noqa: E731
        above = lambda: st.integers(min_value=hi if hi_open else hi + 1)  # noqa: E731
        inside = st.integers(min_value=None if lo is None else lo + lo_open,
                             max_value=None if hi is None else hi - hi_open)
    else:
        below = lambda: st.floats(max_value=lo, exclude_max=not lo_open, **finite)  # noqa: E731
        above = lambda: st.floats(min_value=hi, exclude_min=not hi_open, **finite)  # noqa: E731
        inside = st.floats(min_value=lo, max_value=hi, exclude_min=lo_open, exclude_max=hi_open, **finite)
    outside = ([below()] if lo is not None else []) + ([above()] if hi is not None else [])
    bad = data.draw(st.one_of(outside).filter(lambda x: abs(x) < 2**62))
    rejected(spec_file(tmp_path, bench), [f"{key}={_toml(bad)}"], key)

    good = data.draw(inside.filter(lambda x: abs(x) < 2**62))
    spec, options = load_all(spec_file(tmp_path, bench), [f"{key}={_toml(good)}", *NEEDS.get(key, []),
                                                            *BENCH_NEEDS.get(bench, [])])
    record = options if key.startswith("options.") else spec
    for part in key.split(".")[1 if key.startswith("options.") else 0:]:
        record = record[part] if isinstance(record, dict) else getattr(record, part)
    assert record == good
