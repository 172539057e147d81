"""Prices: overrides, free providers, genai-prices lookups (offline), the memoised hot path."""

from __future__ import annotations

import socket
import time
from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from judgekit.cost import prices
from judgekit.cost.prices import PriceOverride, has_price, price_usd

M = 1_000_000


def _library_price(provider_id: str, model: str, input_tokens: int, output_tokens: int) -> float:
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return float(calc_price(usage, model, provider_id=provider_id).total_price)


def test_gpt4o_per_mtok() -> None:
    # genai-prices (bundled data): gpt-4o is $2.50 in / $10 out per million tokens
    assert price_usd("openai", "gpt-4o", M, 0) == pytest.approx(2.5)
    assert price_usd("openai", "gpt-4o", 0, M) == pytest.approx(10.0)
    assert price_usd("openai", "gpt-4o", 1234, 567) == pytest.approx(_library_price("openai", "gpt-4o", 1234, 567))


def test_model_names_resolve() -> None:
    gpt4o = price_usd("openai", "gpt-4o", M, M)
    assert price_usd("openai", "gpt-4o-2024-08-06", M, M) == gpt4o
    assert price_usd("openai", "openai/gpt-4o", M, M) == gpt4o
    # an unlisted date falls back to the undated model
    assert price_usd("openai", "gpt-4o-2099-01-01", M, M) == gpt4o
    # but a listed dated model keeps its own (higher) price
    assert price_usd("openai", "gpt-4o-2024-05-13", M, M) == pytest.approx(5.0 + 15.0)
    # a fine-tune has its own price, not its base model's
    fine_tune = "ft:gpt-4o-mini-2024-07-18:acme::abc123"
    assert price_usd("openai", fine_tune, M, M) == pytest.approx(_library_price("openai", fine_tune, M, M))
    assert price_usd("openai", fine_tune, M, M) > price_usd("openai", "gpt-4o-mini", M, M)  # type: ignore[operator]


def test_provider_ids() -> None:
    assert price_usd("gemini", "gemini-2.0-flash", M, M) == pytest.approx(_library_price("google", "gemini-2.0-flash", M, M))
    assert price_usd("gemini", "models/gemini-2.0-flash", M, M) == price_usd("gemini", "gemini-2.0-flash", M, M)
    assert price_usd("azure", "gpt-4o", M, M) == pytest.approx(12.5)
    assert price_usd("azure", "gpt-4o-mini", M, M) == pytest.approx(_library_price("openai", "gpt-4o-mini", M, M))


def test_tiers_apply_per_call_by_input_tokens() -> None:
    below = price_usd("gemini", "gemini-2.5-pro", 200_000, 1000)
    above = price_usd("gemini", "gemini-2.5-pro", 200_001, 1000)
    assert below == pytest.approx(_library_price("google", "gemini-2.5-pro", 200_000, 1000))
    assert above == pytest.approx(_library_price("google", "gemini-2.5-pro", 200_001, 1000))
    assert above / 200_001 > below / 200_000 * 1.5  # the tier applies to all the call's tokens
    # and the tiers are evaluated by the fast rate, not by falling back to the library
    assert isinstance(prices._rates[("gemini", "gemini-2.5-pro")], prices._TokenRate)


def test_fast_rates_match_the_library_for_every_openai_and_google_model() -> None:
    from genai_prices import data

    usages = [(0, 0), (1, 1), (1234, 567), (150_000, 8000), (300_000, 8000), (1_500_000, 50_000)]
    checked = 0
    for provider in data.providers:
        if provider.id not in ("openai", "google"):
            continue
        judgekit_provider = "gemini" if provider.id == "google" else "openai"
        for model in provider.models:
            try:
                want = [_library_price(provider.id, model.id, i, o) for i, o in usages]
            except Exception:  # a model the library itself cannot price on tokens alone
                continue
            got = [price_usd(judgekit_provider, model.id, i, o) for i, o in usages]
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12), model.id
            # every OpenAI and Google price table is plain per-token rates: the fast path
            assert isinstance(prices._rates[(judgekit_provider, model.id)], prices._TokenRate), model.id
            checked += 1
    assert checked > 100


def test_price_tables_the_fast_path_cannot_express_use_the_library() -> None:
    # perplexity sonar adds a per-request fee
    assert price_usd("perplexity", "sonar", 1000, 0) == pytest.approx(_library_price("perplexity", "sonar", 1000, 0))
    assert isinstance(prices._rates[("perplexity", "sonar")], prices._LibraryRate)


def test_override_wins() -> None:
    override = PriceOverride(input_per_mtok=1.0, output_per_mtok=3.0)
    assert price_usd("openai", "gpt-4o", M, M, override) == pytest.approx(4.0)
    assert price_usd("sim", "anything", 2 * M, 0, override) == pytest.approx(2.0)
    assert price_usd("openai", "my-own-model", 0, M, override) == pytest.approx(3.0)
    assert has_price("openai", "my-own-model", override)


def test_sim_and_local_are_free() -> None:
    assert price_usd("sim", "judge-sim", M, M) == 0.0
    assert price_usd("local", "Qwen/Qwen2.5-VL-7B-Instruct", M, M) == 0.0
    assert has_price("sim", "x", None)


def test_unknown_is_none() -> None:
    assert price_usd("openai", "Qwen/Qwen2.5-VL-7B-Instruct", M, M) is None
    assert price_usd("azure", "my-deployment", M, M) is None
    assert price_usd("no-such-provider", "gpt-4o", M, M) is None
    assert not has_price("openai", "no-such-model", None)


def test_override_validation() -> None:
    with pytest.raises(ValidationError):
        PriceOverride(input_per_mtok=1.0, output_per_mtok=1.0, currency="EUR")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        PriceOverride(input_per_mtok=-1.0, output_per_mtok=1.0)


def test_offline_and_independent_of_the_library_global_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lookups neither touch the network nor follow a snapshot an UpdatePrices would install."""
    from genai_prices import data_snapshot

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(prices, "_rates", {})
    prices._snapshot.cache_clear()
    empty = data_snapshot.DataSnapshot(providers=[], from_auto_update=True, timestamp=datetime.now(timezone.utc))
    data_snapshot.set_custom_snapshot(empty)
    try:
        assert price_usd("openai", "gpt-4o", M, 0) == pytest.approx(2.5)
    finally:
        data_snapshot.set_custom_snapshot(None)


def test_memoised_lookup_is_microseconds() -> None:
    price_usd("openai", "gpt-4o", 1, 1)
    n = 20_000
    start = time.perf_counter()
    for _ in range(n):
        price_usd("openai", "gpt-4o", 1234, 567)
    per_call = (time.perf_counter() - start) / n
    assert per_call < 20e-6  # measured ~0.3 us; generous for loaded CI machines
