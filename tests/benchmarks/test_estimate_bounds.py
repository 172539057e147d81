"""No stage of a run makes more calls than the estimate made before it said it could (issue 11.8).

Every shipped runner (``runners/*.toml``) runs offline (:mod:`offline_runners`: paid API models
become the simulator, local models run in the protocol's stand-in worker, which needs no torch, so
this stays fast), with its own benchmark options, on a small ``--limit``: first the estimate, then
the run on the same cache with the same options; for every stage the engine's count of calls made
(paid, answered from the cache, failed) is at most the estimate's bound for that stage, and the
run's own pre-run estimate is the one shown before.  Also: GuessBench's extractions (the
under-count the issue found), Creation-MMBench re-asks, MMIE's images per answer, and the
estimate's arithmetic under property tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from offline_runners import SHIPPED, offline_spec  # noqa: E402

from judgekit.benchmarks.guessbench.flow import PRIOR_STOP, StopTally
from judgekit.config import RunSpec, apply_override
from judgekit.cost.estimate import EstimateBuilder
from judgekit.cost.tokens import RequestTokens
from judgekit.providers import local as local_provider
from judgekit.runner import RunOptions, estimate_spec, run_spec

FAKE_WORKER = Path(__file__).resolve().parents[1] / "local_core" / "fake_worker.py"

#: runs whose options differ from a shipped runner's to reach an adaptive path it leaves off
VARIANTS = {
    # the judge answers 40 % of judgments without a verdict, and each is asked again
    "quickstart+reask": ("quickstart", ["options.reask_on_parse_failure=true", "models.judge.sim.garbage_rate=0.4"]),
}


@pytest.fixture(autouse=True)
def stand_in_worker(monkeypatch, tmp_path):
    monkeypatch.setenv(local_provider.WORKER_ENV, f"{sys.executable} {FAKE_WORKER}")


def _spec(name: str):
    base, extra = VARIANTS.get(name, (name, []))
    return _spec_with(base, *extra)


def _by_stage(est) -> tuple[dict[str, int], dict[str, float]]:
    bound: dict[str, int] = {}
    expected: dict[str, float] = {}
    for line in est.lines:
        bound[line.stage] = bound.get(line.stage, 0) + line.calls_total
        expected[line.stage] = expected.get(line.stage, 0.0) + line.calls_cached + line.calls_expected
    return bound, expected


def _made(stats) -> dict[str, int]:
    return {s.name: s.calls + s.cache_hits + s.failures for s in stats.stages.values()}


@pytest.mark.parametrize("name", [*SHIPPED, *VARIANTS])
async def test_no_stage_makes_more_calls_than_the_estimate_bound(name, tmp_path):
    spec = _spec(name)
    opts = RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "cache.duckdb", limit=2, yes=True)
    before = (await estimate_spec(spec, opts)).estimate
    bound, expected = _by_stage(before)
    out = await run_spec(spec, opts)
    assert out.stats is not None and out.estimate is not None, out.message
    # the run's own estimate (made before its first call, same spec and options) is the one shown
    assert _by_stage(out.estimate)[0] == bound
    made = _made(out.stats)
    assert made, "the run made no call"
    over = {stage: (n, bound.get(stage, 0)) for stage, n in made.items() if n > bound.get(stage, 0)}
    assert not over, f"{name}: stages that made more calls than their bound (made, bound): {over}"
    for stage, n in bound.items():
        assert expected[stage] <= n + 1e-9


def _spec_with(name: str, *assignments: str):
    """Runner ``name`` offline, with ``--set``-style assignments applied."""
    spec, _ = offline_spec(name)
    data = spec.model_dump(exclude_none=False)
    for a in assignments:
        apply_override(data, a)
    return RunSpec.model_validate(data)


async def test_guessbench_plans_an_extraction_for_every_reply(tmp_path):
    """The issue's case: every turn's (and sample's) reply is extracted, not one per flow."""
    spec = _spec_with("guessbench", "options.approaches=['cot', 'self_consistency', 'image_retrieval']",
                      "options.tasks=['dynamic']")
    est = (await estimate_spec(spec, RunOptions(cache_path=tmp_path / "c.duckdb", limit=2))).estimate
    bound, _ = _by_stage(est)
    cands, sets, turns, samples, rounds = 2, 2, 3, 3, 3
    assert bound["cot/extract"] == cands * sets * turns
    assert bound["self_consistency/extract"] == cands * sets * turns * samples
    assert bound["image_retrieval/extract"] == cands * sets * turns * (1 + rounds)
    assert bound["image_retrieval/retrieve"] == cands * sets * turns * rounds
    # later turns may be skipped: expected below the bound, above the turns every run makes
    line = next(ln for ln in est.lines if ln.stage == "cot/extract")
    assert cands * sets < line.calls_expected < line.calls_to_make


async def test_guessbench_expected_follows_the_cached_flows_stops(tmp_path):
    """Once some flows are cached, their real stops set the chance of the others' later turns."""
    spec = _spec_with("guessbench", "options.approaches=['cot']", "options.tasks=['dynamic']")
    cache = tmp_path / "c.duckdb"
    prior = (await estimate_spec(spec, RunOptions(cache_path=cache, limit=6))).estimate
    await run_spec(spec, RunOptions(out_dir=tmp_path / "o", cache_path=cache, limit=3, yes=True))
    after = (await estimate_spec(spec, RunOptions(cache_path=cache, limit=6))).estimate
    line = next(ln for ln in after.lines if ln.stage == "cot" and ln.alias == "sim-weak")
    line0 = next(ln for ln in prior.lines if ln.stage == "cot" and ln.alias == "sim-weak")
    # 3 sets left to make, each 1..3 turns; the weak model is rarely right, so the observed rate
    # (below the prior's 0.3) makes more later turns expected than the prior did, per set
    assert line.calls_to_make == 3 * 3
    assert line.calls_expected / 3 > line0.calls_expected / 6


async def test_mmie_bounds_images_by_what_an_answer_can_hold(tmp_path):
    """An answer not written yet may ask for more images than its stand-in shows (the simulator
    writes 1 to 3; a real LVLM any number): the bound counts what max_tokens allows."""
    spec = _spec_with("mmie", "models.sim-lvlm.params.max_tokens=30")
    est = (await estimate_spec(spec, RunOptions(cache_path=tmp_path / "c.duckdb", limit=2))).estimate
    gen = [ln for ln in est.lines if ln.stage == "generate"]
    assert sum(ln.calls_total for ln in gen) == 2 * 10  # 30 tokens: at most 10 three-token images
    assert sum(ln.calls_expected for ln in gen) == pytest.approx(2 * 2)  # the stand-in's two


def test_stop_tally_moves_from_the_prior_to_what_it_saw():
    t = StopTally()
    assert t.rate("m", "cot", "turn") == pytest.approx(PRIOR_STOP["turn"])
    for _ in range(96):
        t.add("m", "cot", "turn", stopped=False)
    assert t.rate("m", "cot", "turn") == pytest.approx(PRIOR_STOP["turn"] * 4 / 100)
    assert t.rate("other", "cot", "turn") == pytest.approx(PRIOR_STOP["turn"])


_calls = st.lists(
    st.tuples(st.integers(0, 5000), st.sampled_from([None, 1, 100, 4096]), st.booleans(),
              st.one_of(st.none(), st.floats(0, 5000)), st.floats(0, 1), st.integers(0, 4)),
    max_size=30)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_calls, st.lists(st.booleans(), min_size=4, max_size=4))
def test_expected_never_exceeds_the_bound(calls, flags):
    """Whatever the chances, copies, caching and guesses: expected calls, tokens and dollars are at
    most the bound's, and the bound counts every call given."""
    b = EstimateBuilder()
    lookup_price = (lambda a, p, m, i, o: (i + 2 * o) / 1e6)
    for (n_in, max_tok, cached, guess, chance, copies), flag in zip(calls, flags * 8):
        b.add_call("s" if flag else "t", "judge", "openai", "gpt-4o", RequestTokens(n_in, True), max_tok, cached,
                   guess, chance, copies)
    est = b.finish(lookup_price)
    assert sum(ln.calls_total for ln in est.lines) == sum(c[5] for c in calls)
    for ln in est.lines:
        assert 0 <= ln.calls_expected <= ln.calls_to_make
        assert ln.calls_to_make + ln.calls_cached == ln.calls_total
        assert ln.cost_expected_usd <= ln.cost_max_usd + 1e-12
        if ln.output_tokens_expected is not None:
            assert ln.output_tokens_expected <= ln.output_tokens_max + 1e-9
    assert est.total_expected_usd <= est.total_max_usd + 1e-12


def test_a_chance_outside_zero_to_one_is_refused():
    b = EstimateBuilder()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError):
            b.add_call("s", "a", "sim", "m", RequestTokens(1, True), 1, False, None, bad)
