"""A spec's price override prices prompt-cache reads and writes (5-minute and 1-hour): its own
rates where it gives them, else the model's ratios in genai-prices, else the provider's documented
multipliers; the batch discount stacks on them; the cost cap's reservation covers a call whose
input is all cache writes; and genai-prices' own 1-hour write rate is used without an override."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.cost import prices
from judgekit.cost.prices import CACHE_MULTIPLIERS, PriceOverride, price_usd, usage_usd
from judgekit.engine.budget import CallPricing
from judgekit.engine.savings import Savings
from judgekit.types import Usage

M = 1_000_000
ONLY = PriceOverride(input_per_mtok=3.0, output_per_mtok=15.0)  # input and output prices only


def by_hand(counts, read, write, write_1h, *, i=3.0, o=15.0):
    """USD of ``counts`` (Mtok: fresh input, read, written for 5 minutes, written for an hour,
    output) at the input price ``i``, these cache rates and the output price ``o``."""
    f, r, w, h, n = counts
    return f * i + r * read + w * write + h * write_1h + n * o


@pytest.mark.parametrize("provider, model, read, write, hour", [
    # the provider's documented multipliers, for a model genai-prices does not know
    ("anthropic", "my-claude", 0.3, 3.75, 6.0),
    ("openai", "my-gpt", 1.5, 3.0, 3.0),
    ("azure", "my-deployment", 1.5, 3.0, 3.0),
    ("gemini", "my-gemini", 0.75, 3.0, 3.0),
    ("openrouter", "someone/else", 3.0, 3.0, 3.0),  # no documented discount: the input price
    # the model's own ratios in genai-prices (gpt-4.1 reads at 0.25x, Gemini 2.5 Flash at 0.1x,
    # Claude Haiku 4.5 at 0.1x, writes 1.25x / 2x)
    ("openai", "gpt-4.1", 0.75, 3.0, 3.0),
    ("azure", "gpt-4o", 1.5, 3.0, 3.0),
    ("gemini", "gemini-2.5-flash", 0.3, 3.0, 3.0),
    ("anthropic", "claude-haiku-4-5", 0.3, 3.75, 6.0),
])
def test_an_override_with_input_and_output_only_takes_the_providers_cache_rates(provider, model, read, write, hour):
    # 10 Mtok in: 1 fresh, 6 read, 2 written for 5 minutes, 1 for an hour; 1 Mtok out
    got = price_usd(provider, model, 10 * M, M, ONLY, 6 * M, 3 * M, cache_write_1h_tokens=M)
    assert got == pytest.approx(by_hand((1, 6, 2, 1, 1), read, write, hour))
    usage = Usage(10 * M, M, cached_input_tokens=6 * M, cache_write_tokens=3 * M, cache_write_1h_tokens=M)
    assert usage_usd(provider, model, usage, ONLY) == pytest.approx(got)
    # the batch discount stacks on every rate
    assert usage_usd(provider, model, usage, ONLY, batch=True) == pytest.approx(got / 2)
    assert usage_usd(provider, model, usage, ONLY.model_copy(update={"batch_discount": 0.25}),
                     batch=True) == pytest.approx(got * 0.75)


def test_the_overrides_own_cache_rates_win():
    own = PriceOverride(input_per_mtok=3.0, output_per_mtok=15.0, cached_input_per_mtok=0.9,
                        cache_write_per_mtok=4.0, cache_write_1h_per_mtok=7.0)
    for provider, model in (("anthropic", "claude-haiku-4-5"), ("openai", "my-gpt"), ("gemini", "gemini-2.5-flash")):
        got = price_usd(provider, model, 10 * M, M, own, 6 * M, 3 * M, cache_write_1h_tokens=M)
        assert got == pytest.approx(by_hand((1, 6, 2, 1, 1), 0.9, 4.0, 7.0))
    one = PriceOverride(input_per_mtok=3.0, output_per_mtok=15.0, cache_write_per_mtok=5.0)  # the others: Claude's
    assert price_usd("anthropic", "my-claude", 10 * M, M, one, 6 * M, 3 * M,
                     cache_write_1h_tokens=M) == pytest.approx(by_hand((1, 6, 2, 1, 1), 0.3, 5.0, 6.0))


def test_the_multipliers_are_the_documented_ones():
    assert CACHE_MULTIPLIERS["anthropic"] == (0.1, 1.25, 2.0)
    assert CACHE_MULTIPLIERS["openai"] == CACHE_MULTIPLIERS["azure"] == (0.5, 1.0, 1.0)
    assert CACHE_MULTIPLIERS["gemini"] == (0.25, 1.0, 1.0)


def test_counts_are_clamped_reads_first_then_writes_then_the_hour():
    # more read than input, more written than is left, more 1-hour than written
    assert price_usd("anthropic", "my-claude", 2 * M, 0, ONLY, 5 * M, 5 * M, cache_write_1h_tokens=9 * M) \
        == pytest.approx(2 * 0.3)
    assert price_usd("anthropic", "my-claude", 2 * M, 0, ONLY, M, 5 * M, cache_write_1h_tokens=9 * M) \
        == pytest.approx(0.3 + 6.0)


def test_the_saved_line_is_not_zero_under_an_override():
    """Issue 24 point 6: 'prompt cache saved $0.0000' under a price override."""
    usage = Usage(10_000, 100, cached_input_tokens=6_000, cache_write_tokens=2_500, cache_write_1h_tokens=500)
    for provider, model in (("anthropic", "claude-3-5-sonnet-20241022"), ("openai", "my-gpt"), ("azure", "dep"),
                            ("gemini", "my-gemini")):
        s = Savings()
        cost = usage_usd(provider, model, usage, ONLY)
        s.note(provider, model, ONLY, usage, cost)
        plain = (10_000 * 3.0 + 100 * 15.0) / M
        assert s.prompt_cache_saved_usd == pytest.approx(plain - cost) and plain - cost > 0.001
        assert s.as_dict()["prompt_cache"]["saved_usd"] > 0


def test_genai_prices_own_one_hour_write_rate():
    from datetime import datetime, timezone

    from genai_prices import Usage as PricesUsage

    checked = 0
    for model in ("claude-3-5-sonnet-20241022", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5",
                  "claude-3-haiku-20240307"):
        provider, found = prices._find("anthropic", model)
        for counts in ((10_000, 100, 6_000, 2_500, 500), (300_000, 100, 100_000, 150_000, 50_000)):
            i, o, c, w, h = counts
            expected = float(found.calc_price(PricesUsage(input_tokens=i, output_tokens=o, cache_read_tokens=c,
                                                          cache_write_tokens=w, cache_write_1h_tokens=h),
                                              provider, genai_request_timestamp=datetime.now(tz=timezone.utc)
                                              ).total_price)
            assert price_usd("anthropic", model, i, o, None, c, w, cache_write_1h_tokens=h) == pytest.approx(expected)
            checked += 1
        assert isinstance(prices._rates[("anthropic", model)], prices._TokenRate)  # still the fast path
    assert checked == 10
    # the 1-hour writes cost 2x input on Claude 3.5 Sonnet, the 5-minute ones 1.25x
    assert price_usd("anthropic", "claude-3-5-sonnet-20241022", M, 0, None, 0, M, cache_write_1h_tokens=M) \
        == pytest.approx(6.0)
    assert price_usd("anthropic", "claude-3-5-sonnet-20241022", M, 0, None, 0, M) == pytest.approx(3.75)


_providers = st.sampled_from([("anthropic", "my-claude"), ("anthropic", "claude-3-5-sonnet-20241022"),
                              ("openai", "my-gpt"), ("openai", "gpt-4o"), ("azure", "dep"),
                              ("gemini", "gemini-2.5-pro"), ("gemini", "my-gemini")])
_rate = st.one_of(st.none(), st.floats(0, 50, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(_providers, st.booleans(), st.integers(0, 400_000), st.integers(0, 5_000), st.data())
def test_the_cap_reservation_covers_any_cache_use(pm, use_override, inp, out, data):
    """Whatever part of the input is read or written (5 minutes or an hour), the call costs no
    more than the cap reserved for its input and output; and at most that much more than it
    would cost with every input token plain, where writes cost more than input."""
    provider, model = pm
    override = None
    if use_override:
        override = PriceOverride(input_per_mtok=data.draw(st.floats(0, 20, allow_nan=False)),
                                 output_per_mtok=data.draw(st.floats(0, 80, allow_nan=False)),
                                 cached_input_per_mtok=data.draw(st.one_of(st.none(), st.floats(0, 1)))) \
            if data.draw(st.booleans()) else ONLY
    elif model.startswith(("my-", "dep")):
        return  # no price without an override
    if override is not None and data.draw(st.booleans()) and provider == "anthropic":
        override = override.model_copy(update={"cache_write_per_mtok": None})
    read = data.draw(st.integers(0, inp))
    written = data.draw(st.integers(0, inp - read))
    hour = data.draw(st.integers(0, written)) if provider == "anthropic" else 0
    # judgekit marks its prefixes for 5 minutes: the reservation covers 5-minute writes
    cost = price_usd(provider, model, inp, out, override, read, written - hour)
    for batch in (False, True):
        pricing = CallPricing.of(provider, model, override, batch=batch)
        reserved = pricing.cost(inp, out)
        got = price_usd(provider, model, inp, out, override, read, written - hour, batch=batch)
        assert got <= reserved + 1e-12
    assert cost >= 0
    if provider == "anthropic" and (override is None or (override.input_per_mtok >= 0.01
                                                          and override.cached_input_per_mtok is None)):
        assert CallPricing.of(provider, model, override).dearest_input == "write"
