"""The estimate accumulator: cached calls subtracted, max and expected output, unknown prices."""

from __future__ import annotations

import pytest

from judgekit.cost.estimate import DEFAULT_MAX_OUTPUT_TOKENS, EstimateBuilder, price_lookup_for
from judgekit.cost.prices import PriceOverride, price_usd
from judgekit.cost.tokens import RequestTokens

# $1 per million input tokens, $2 per million output tokens: easy arithmetic
LOOKUP = price_lookup_for({"judge": PriceOverride(input_per_mtok=1.0, output_per_mtok=2.0)})


def _judge_builder() -> EstimateBuilder:
    b = EstimateBuilder()
    b.add_call("candidate", "vlm", "sim", "sim-vlm", RequestTokens(300, True), 800, False, None)
    # one cached judge call (it wrote 100 tokens), three to make
    b.add_call("pairwise", "judge", "openai", "gpt-4o", RequestTokens(999, True), 500, True, 100)
    for _ in range(3):
        b.add_call("pairwise", "judge", "openai", "gpt-4o", RequestTokens(1000, True), 500, False, None)
    return b


def test_cached_calls_subtracted_and_priced() -> None:
    est = _judge_builder().finish(LOOKUP)
    judge = next(line for line in est.lines if line.alias == "judge")
    assert (judge.calls_total, judge.calls_cached, judge.calls_to_make) == (4, 1, 3)
    assert judge.input_tokens == 3000  # the cached call's 999 are not counted
    assert judge.input_exact
    assert judge.output_tokens_max == 1500
    assert judge.output_basis == "cached"
    assert judge.output_tokens_expected == pytest.approx(300)  # cached mean 100 x 3 calls
    assert judge.cost_max_usd == pytest.approx(3 * (1000 * 1 + 500 * 2) / 1e6)
    assert judge.cost_expected_usd == pytest.approx(3 * (1000 * 1 + 100 * 2) / 1e6)
    assert judge.price_known
    assert est.calls_to_make == 4
    assert est.total_max_usd == pytest.approx(0.006)  # the sim line is free
    assert est.total_expected_usd == pytest.approx(0.0036)
    assert est.unknown_prices == [] and est.complete


def test_line_order_is_stage_first_appearance_then_alias() -> None:
    b = EstimateBuilder()
    for stage, alias in [("pairwise", "judge-b"), ("candidate", "vlm"), ("pairwise", "judge-a"), ("candidate", "avlm")]:
        b.add_call(stage, alias, "sim", "m", RequestTokens(1, True), 1, False, None)
    order = [(line.stage, line.alias) for line in b.finish().lines]
    assert order == [("pairwise", "judge-a"), ("pairwise", "judge-b"), ("candidate", "avlm"), ("candidate", "vlm")]


def test_missing_max_tokens_uses_default_bound() -> None:
    b = EstimateBuilder()
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(10, True), None, False, None)
    line = b.finish(LOOKUP).lines[0]
    assert line.output_tokens_max == DEFAULT_MAX_OUTPUT_TOKENS == 4096
    # no cached data and no guess: expected tokens unknown, expected cost = the bound
    assert line.output_basis == "max" and line.output_tokens_expected is None
    assert line.cost_expected_usd == line.cost_max_usd == pytest.approx((10 + 2 * 4096) / 1e6)


def test_guess_used_without_cached_data_and_capped_by_max_tokens() -> None:
    b = EstimateBuilder()
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(0, True), 500, False, 200)
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(0, True), 500, False, 900)  # capped at 500
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(0, True), 500, False, None)  # no guess: 500
    line = b.finish(LOOKUP).lines[0]
    assert line.output_basis == "guess"
    assert line.output_tokens_expected == pytest.approx(1200)
    assert line.cost_expected_usd == pytest.approx(1200 * 2 / 1e6)


def test_cached_mean_wins_over_guesses_and_is_capped() -> None:
    b = EstimateBuilder()
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(5, True), 4000, True, 1000)
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(5, True), 4000, True, None)  # no record
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(5, True), 300, False, 50)
    line = b.finish(LOOKUP).lines[0]
    assert line.output_basis == "cached"
    assert line.output_tokens_expected == pytest.approx(300)  # mean 1000, capped at this call's 300


def test_unknown_price_is_reported_not_summed() -> None:
    b = _judge_builder()
    b.add_call("pairwise", "mystery", "openai", "no-such-model", RequestTokens(50, False), 100, False, None)
    est = b.finish(LOOKUP)
    mystery = next(line for line in est.lines if line.alias == "mystery")
    assert mystery.cost_max_usd is None and mystery.cost_expected_usd is None
    assert not mystery.price_known and not mystery.input_exact
    assert est.unknown_prices == ["mystery (openai no-such-model)"]
    assert not est.complete
    assert est.total_max_usd == pytest.approx(0.006)


def test_fully_cached_line_costs_nothing() -> None:
    b = EstimateBuilder()
    b.add_call("s", "x", "openai", "no-such-model", RequestTokens(50, True), 100, True, 10)
    est = b.finish(LOOKUP)
    line = est.lines[0]
    assert (line.calls_to_make, line.input_tokens, line.output_tokens_max) == (0, 0, 0)
    assert line.cost_max_usd == 0.0 and not line.price_known
    assert est.unknown_prices == [] and est.complete  # nothing to pay for


def test_each_call_priced_on_its_own_tokens() -> None:
    """Two 150k-token calls stay under gemini-2.5-pro's 200k tier though their sum crosses it."""
    b = EstimateBuilder()
    for _ in range(2):
        b.add_call("s", "g", "gemini", "gemini-2.5-pro", RequestTokens(150_000, False), 1000, False, None)
    line = b.finish().lines[0]
    one = price_usd("gemini", "gemini-2.5-pro", 150_000, 1000)
    assert one is not None
    assert line.cost_max_usd == pytest.approx(2 * one)
    assert line.cost_max_usd < price_usd("gemini", "gemini-2.5-pro", 300_000, 2000)  # type: ignore[operator]


def test_alias_must_keep_its_model() -> None:
    b = EstimateBuilder()
    b.add_call("s", "judge", "openai", "gpt-4o", RequestTokens(1, True), 1, False, None)
    with pytest.raises(ValueError, match="judge"):
        b.add_call("s", "judge", "openai", "gpt-4.1", RequestTokens(1, True), 1, False, None)


def test_as_rows() -> None:
    rows = _judge_builder().finish(LOOKUP).as_rows()
    assert [r["stage"] for r in rows] == ["candidate", "pairwise", "total"]
    assert set(rows[0]) == set(rows[-1])
    total = rows[-1]
    assert (total["calls_total"], total["calls_cached"], total["calls_to_make"]) == (5, 1, 4)
    assert total["input_tokens"] == 3300
    assert total["cost_max_usd"] == pytest.approx(0.006)
    assert total["output_tokens_expected"] is None  # the sim line has no expectation
    assert len(_judge_builder().finish(LOOKUP).as_rows(total=False)) == 2


def test_line_time_from_latency_and_rpm() -> None:
    from judgekit.cost.estimate import line_time_s

    assert line_time_s(0, None, 8, None) == 0.0
    assert line_time_s(100, None, 8, None) is None
    assert line_time_s(100, 2.0, 8, None) == pytest.approx(25.0)  # 100 x 2 s over 8 at once
    assert line_time_s(100, 2.0, 8, 60) == pytest.approx(100.0)  # but 60/min is the bound
    assert line_time_s(100, None, 8, 600) == pytest.approx(10.0)


def test_total_time_is_the_busiest_models_share() -> None:
    est = _judge_builder().finish(LOOKUP)
    assert est.total_time_s is None and est.untimed
    for line, t in zip(est.lines, (30.0, 50.0)):
        line.time_s = t
    # each line is another alias here, so stages overlap: the longest one
    assert est.total_time_s == (80.0 if est.lines[0].alias == est.lines[1].alias else 50.0)
