"""What batching and prompt caching saved in a run, call by call, for the summary and the results.

- **batching**: for every answer that came from a batch, its cost at the batch rates and what the
  same usage costs live; saved = live equivalent - batch cost.
- **prompt caching**: for every paid answer (live or batch) whose provider reported cached input
  tokens (OpenAI ``cached_tokens``, Gemini ``cached_content_token_count``, Anthropic cache reads)
  or cache writes (Anthropic), its cost with every input token at the full input rate minus its
  cost as billed.  Anthropic's cache writes cost more than plain input (1.25x), so a run that
  wrote its cache and seldom read it saved a negative amount: shown as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..cost.prices import price_usd, usage_usd
from ..types import Usage

__all__ = ["Savings"]


@dataclass(slots=True)
class Savings:
    """Running totals (see the module docstring)."""

    batch_calls: int = 0
    batch_cost_usd: float = 0.0
    batch_live_equivalent_usd: float = 0.0
    #: requests a finished batch left unanswered (expired, cancelled) that were asked again
    batch_retried: int = 0
    #: batch answers collected for calls no one in this run had asked for yet (an earlier run's)
    batch_collected_unasked: int = 0
    #: batch requests that ended unanswered, by cause (:func:`~judgekit.providers.batch_errors.cause_of`)
    batch_unanswered: dict[str, int] = field(default_factory=dict)
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    prompt_cache_calls: int = 0
    prompt_cache_saved_usd: float = 0.0

    def note(self, provider: str, model: str, override, usage: Usage, cost: float, *, batch: bool = False) -> None:
        """Count one paid answer of ``cost`` USD (as billed; ``model``: the one priced)."""
        if batch:
            live = usage_usd(provider, model, usage, override) or 0.0
            self.batch_calls += 1
            self.batch_cost_usd += cost
            self.batch_live_equivalent_usd += live
        cached, written = usage.cached_input_tokens, usage.cache_write_tokens
        if cached or written:
            plain = price_usd(provider, model, usage.input_tokens, usage.output_tokens, override, batch=batch) or 0.0
            self.cached_input_tokens += cached
            self.cache_write_tokens += written
            self.prompt_cache_calls += 1
            self.prompt_cache_saved_usd += plain - cost

    def unanswered(self, cause: str) -> None:
        """Count a batch request that ended unanswered for ``cause``."""
        self.batch_unanswered[cause] = self.batch_unanswered.get(cause, 0) + 1

    @property
    def batch_saved_usd(self) -> float:
        return self.batch_live_equivalent_usd - self.batch_cost_usd

    def as_dict(self) -> dict:
        """For ``summary.json``: ``batch`` and ``prompt_cache`` (USD rounded to 6 decimals)."""
        return {
            "batch": {"calls": self.batch_calls, "cost_usd": round(self.batch_cost_usd, 6),
                      "live_equivalent_usd": round(self.batch_live_equivalent_usd, 6),
                      "saved_usd": round(self.batch_saved_usd, 6), "retried": self.batch_retried,
                      "collected_for_later": self.batch_collected_unasked,
                      "unanswered": dict(sorted(self.batch_unanswered.items()))},
            "prompt_cache": {"calls": self.prompt_cache_calls, "cached_input_tokens": self.cached_input_tokens,
                             "cache_write_tokens": self.cache_write_tokens,
                             "saved_usd": round(self.prompt_cache_saved_usd, 6)},
        }
