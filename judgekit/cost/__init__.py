"""Cost before a run: offline token counts, prices, and the per-stage estimate.

``tokens`` counts a request's input tokens (exact for OpenAI tokenizers, approximate otherwise,
images by the providers' rules); ``prices`` turns tokens into USD from a spec override or the
bundled ``genai-prices`` database, never the network; ``estimate`` sums planned calls into
per (stage, alias) lines with a max and an expected cost.  Nothing heavy loads on import: the
tokenizers and the price database load on first use.
"""

from .estimate import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    Estimate,
    EstimateBuilder,
    LineEstimate,
    PriceLookup,
    price_lookup_for,
)
from .prices import PriceOverride, has_price, price_usd
from .tokens import RequestTokens, TokenCount, count_request, count_text, image_tokens, tokenizer_for

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "Estimate",
    "EstimateBuilder",
    "LineEstimate",
    "PriceLookup",
    "PriceOverride",
    "RequestTokens",
    "TokenCount",
    "count_request",
    "count_text",
    "has_price",
    "image_tokens",
    "price_lookup_for",
    "price_usd",
    "tokenizer_for",
]
