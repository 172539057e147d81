"""The public API of judgekit.cost."""

from __future__ import annotations

import importlib

import pytest

EXPECTED = {
    "judgekit.cost.tokens": {
        "Encoding", "TokenCount", "RequestTokens", "tokenizer_for", "count_text", "image_tokens",
        "count_request", "FALLBACK_ENCODING", "CHAT_TOKENS_PER_MESSAGE", "CHAT_REPLY_PRIMER_TOKENS",
        "UNKNOWN_IMAGE_SIZE",
    },
    "judgekit.cost.images": {"image_tokens", "GEMINI_PROVIDERS", "generation_output_tokens",
                             "GENERATION_OUTPUT_TOKENS"},
    "judgekit.cost.prices": {"PriceOverride", "price_usd", "usage_usd", "has_price", "context_window",
                             "FREE_PROVIDERS", "GENAI_PROVIDER_IDS", "BATCH_DISCOUNT", "CACHE_MULTIPLIERS"},
    "judgekit.cost.reasoning": {"is_openai_reasoning", "gemini_thinking_cap", "thinking_budget_of",
                                "thinking_allowance", "max_billed_output", "reasons", "GEMINI_MAX_OUTPUT"},
    "judgekit.cost.estimate": {
        "DEFAULT_MAX_OUTPUT_TOKENS", "OutputBasis", "PriceLookup", "LineEstimate", "Estimate",
        "EstimateBuilder", "price_lookup_for", "line_time_s",
    },
    "judgekit.cost": {
        "DEFAULT_MAX_OUTPUT_TOKENS", "Estimate", "EstimateBuilder", "LineEstimate", "PriceLookup",
        "PriceOverride", "RequestTokens", "TokenCount", "count_request", "count_text", "has_price",
        "image_tokens", "price_lookup_for", "price_usd", "tokenizer_for",
    },
}


@pytest.mark.parametrize("module", sorted(EXPECTED))
def test_all(module: str) -> None:
    mod = importlib.import_module(module)
    assert set(mod.__all__) == EXPECTED[module]
    for name in mod.__all__:
        assert hasattr(mod, name), name


def test_import_loads_neither_tokenizer_nor_price_data() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys, judgekit.cost; print('bpe_openai' in sys.modules, 'genai_prices' in sys.modules)"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root).stdout
    assert out.split() == ["False", "False"]
