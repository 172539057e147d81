"""Prices as billed: thinking and reasoning tokens as output, cached input at the cached rate, and
the most output a reasoning or thinking model's call may be billed for."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from judgekit.cost import prices
from judgekit.cost.prices import PriceOverride, price_usd, usage_usd
from judgekit.cost.reasoning import (
    GEMINI_MAX_OUTPUT,
    gemini_thinking_cap,
    is_openai_reasoning,
    max_billed_output,
    reasons,
    thinking_allowance,
    thinking_budget_of,
)
from judgekit.engine.budget import CallPricing, sane_usage
from judgekit.types import GenParams, Usage


def test_gemini_thoughts_are_billed_as_output():
    """The issue's figure: 200 prompt tokens, 130 answer tokens and 1,500 thought tokens on
    gemini-2.5-pro ($1.25 / $10 per Mtok) cost $0.01655, not the $0.00155 of the answer alone."""
    answer_only = price_usd("gemini", "gemini-2.5-pro", 200, 130)
    assert answer_only == pytest.approx(0.00155)
    billed = usage_usd("gemini", "gemini-2.5-pro", Usage(200, 130 + 1500, reasoning_tokens=1500))
    assert billed == pytest.approx(0.01655)


def test_openai_reasoning_is_inside_completion_tokens_not_added_again():
    # o3 ($2 / $8): 300 completion tokens of which 120 reasoning cost 300 output tokens, not 420
    u = Usage(1000, 300, reasoning_tokens=120)
    assert usage_usd("openai", "o3", u) == pytest.approx((1000 * 2 + 300 * 8) / 1e6)


@pytest.mark.parametrize("provider, model, cached_rate, input_rate", [
    ("openai", "gpt-4o", 1.25, 2.5),
    ("openai", "o3", 0.5, 2.0),
    ("azure", "gpt-4o-mini", 0.075, 0.15),
    ("gemini", "gemini-2.5-flash", 0.03, 0.3),
])
def test_cached_input_at_the_cached_rate(provider, model, cached_rate, input_rate):
    full = price_usd(provider, model, 1_000_000, 0)
    assert full == pytest.approx(input_rate)
    assert price_usd(provider, model, 1_000_000, 0, cached_input_tokens=400_000) == pytest.approx(
        0.6 * input_rate + 0.4 * cached_rate)
    u = Usage(1_000_000, 0, cached_input_tokens=1_000_000)
    assert usage_usd(provider, model, u) == pytest.approx(cached_rate)


def test_cached_tier_above_200k_on_gemini_2_5_pro():
    # above 200k input tokens every rate moves to its upper tier, the cached one included (0.25)
    got = price_usd("gemini", "gemini-2.5-pro", 300_000, 0, cached_input_tokens=100_000)
    assert got == pytest.approx((200_000 * 2.5 + 100_000 * 0.25) / 1e6)


def test_no_cached_price_means_the_input_price():
    assert price_usd("gemini", "gemini-1.5-pro", 1000, 0, cached_input_tokens=1000) == price_usd(
        "gemini", "gemini-1.5-pro", 1000, 0)


def test_override_cached_rate():
    o = PriceOverride(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5)
    assert price_usd("azure", "my-deployment", 1_000_000, 1_000_000, o, cached_input_tokens=500_000) == pytest.approx(
        1.0 + 0.25 + 8.0)
    plain = PriceOverride(input_per_mtok=2.0, output_per_mtok=8.0)  # no cached rate: Azure's 0.5x
    assert price_usd("azure", "x", 1_000_000, 0, plain, cached_input_tokens=500_000) == pytest.approx(1.5)


def test_fast_rates_match_the_library_with_cached_tokens_for_every_openai_and_google_model():
    from genai_prices import Usage as PricesUsage
    from genai_prices import calc_price
    from genai_prices import data

    usages = [(1234, 567, 1000), (300_000, 8000, 250_000), (150_000, 10, 1)]
    checked = 0
    for provider in data.providers:
        if provider.id not in ("openai", "google"):
            continue
        ours = "gemini" if provider.id == "google" else "openai"
        for model in provider.models:
            try:
                want = [float(calc_price(PricesUsage(input_tokens=i, output_tokens=o, cache_read_tokens=c), model.id,
                                         provider_id=provider.id).total_price) for i, o, c in usages]
            except Exception:  # a model the library cannot price on tokens alone
                continue
            got = [price_usd(ours, model.id, i, o, cached_input_tokens=c) for i, o, c in usages]
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), model.id
            assert isinstance(prices._rates[(ours, model.id)], prices._TokenRate), model.id
            checked += 1
    assert checked > 100


@settings(max_examples=200, deadline=None, derandomize=True)
@given(i=hs.integers(0, 3_000_000), o=hs.integers(0, 100_000), c=hs.integers(-10, 3_000_000),
       model=hs.sampled_from(["gpt-4o", "o3", "gpt-5-mini", "gemini-2.5-pro", "gemini-2.0-flash"]))
def test_cached_tokens_never_cost_more_and_never_exceed_the_input(i, o, c, model):
    provider = "gemini" if model.startswith("gemini") else "openai"
    full = price_usd(provider, model, i, o)
    cheaper = price_usd(provider, model, i, o, cached_input_tokens=c)
    assert 0 <= cheaper <= full + 1e-12
    # more cached tokens than input are the whole input cached, no more
    assert price_usd(provider, model, i, o, cached_input_tokens=i + 5) == pytest.approx(
        price_usd(provider, model, i, o, cached_input_tokens=i), abs=1e-15)


# ------------------------------------------------------------------------------- the most output


@pytest.mark.parametrize("model, reasoning", [
    ("o1", True), ("o3-mini", True), ("o4-mini-2025-04-16", True), ("gpt-5", True), ("gpt-5-nano", True),
    ("gpt-4o", False), ("gpt-4.1", False), ("omni-moderation", False), ("o2-model", False),
])
def test_openai_reasoning_families(model, reasoning):
    assert is_openai_reasoning(model) is reasoning
    assert thinking_allowance("openai", model) == 0  # inside max_completion_tokens
    assert max_billed_output("openai", model, 2048) == 2048


@pytest.mark.parametrize("model, cap", [
    ("gemini-2.5-pro", 32_768), ("gemini-2.5-flash", 24_576), ("gemini-2.5-flash-lite", 24_576),
    ("models/gemini-2.5-flash-preview-05-20", 24_576), ("gemini-3-pro-preview", GEMINI_MAX_OUTPUT),
    ("gemini-2.0-flash-thinking-exp", GEMINI_MAX_OUTPUT),
    ("gemini-2.0-flash", 0), ("gemini-1.5-pro", 0),
])
def test_gemini_thinking_caps(model, cap):
    assert gemini_thinking_cap("gemini", model) == cap
    assert reasons("gemini", model) is (cap > 0)
    assert max_billed_output("gemini", model, 1000) == 1000 + cap
    # a budget the request sets bounds the thoughts (never above the model's cap); 0 is none
    assert max_billed_output("gemini", model, 1000, GenParams(extra=(("thinking_budget", 512),))) == 1000 + min(512, cap)
    assert max_billed_output("gemini", model, 1000, GenParams(extra=(("thinking_budget", 0),))) == 1000
    assert max_billed_output("gemini", model, 1000, GenParams(extra=(("thinking_budget", -1),))) == 1000 + cap
    assert max_billed_output("gemini", model, None) is None


def test_reservation_of_a_gemini_thinking_call_counts_its_thoughts():
    pricing = CallPricing.of("gemini", "gemini-2.5-pro", None)
    assert pricing.output_bound(500, 1000) == 1000 + 32_768
    assert pricing.output_bound(500, 1000, GenParams(max_tokens=1000, extra=(("thinking_budget", 2000),))) == 3000
    # o3's reasoning is inside max_completion_tokens: the bound is max_tokens
    assert CallPricing.of("openai", "o3", None).output_bound(500, 1000) == 1000
    # the worst case of the call: 200 in, 130 out + 1,500 thoughts fits in it
    worst = pricing.cost(200, pricing.output_bound(200, 1000))
    assert worst >= usage_usd("gemini", "gemini-2.5-pro", Usage(200, 1630, reasoning_tokens=1500))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(budget=hs.one_of(hs.none(), hs.integers(-5, 10**6), hs.booleans(), hs.text(max_size=4), hs.floats()),
       model=hs.sampled_from(["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-flash", "gemini-2.0-flash", "o3"]),
       max_tokens=hs.integers(1, 100_000))
def test_thinking_budget_guard(budget, model, max_tokens):
    """Whatever a spec puts under thinking_budget, the allowance is between 0 and the model's cap,
    and the most billed output is never below max_tokens."""
    params = GenParams(max_tokens=max_tokens, extra=(("thinking_budget", budget),))
    b = thinking_budget_of(params)
    assert b is None or (isinstance(b, int) and b >= 0)
    provider = "openai" if model == "o3" else "gemini"
    allowance = thinking_allowance(provider, model, params)
    assert 0 <= allowance <= gemini_thinking_cap(provider, model)
    assert max_billed_output(provider, model, max_tokens, params) >= max_tokens


@settings(max_examples=200, deadline=None, derandomize=True)
@given(i=hs.integers(-100, 10**6), o=hs.integers(-100, 10**6), c=hs.integers(-100, 10**6), r=hs.integers(-100, 10**6))
def test_sane_usage_keeps_parts_within_their_whole(i, o, c, r):
    u, broken = sane_usage(Usage(i, o, cached_input_tokens=c, reasoning_tokens=r))
    assert 0 <= u.cached_input_tokens <= u.input_tokens and 0 <= u.reasoning_tokens <= u.output_tokens
    assert broken == (min(i, o, c, r) < 0)
    if not broken and c <= i and r <= o:
        assert u == Usage(i, o, cached_input_tokens=c, reasoning_tokens=r)
