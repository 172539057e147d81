"""USD prices of calls: a spec's override, or pydantic's ``genai-prices`` database, offline.

Where a price comes from, first match wins:

1. the model's :class:`PriceOverride` in the run spec;
2. providers in :data:`FREE_PROVIDERS` (the simulator, local servers) cost nothing;
3. ``genai-prices``, searched under the provider ids in :data:`GENAI_PROVIDER_IDS` (Azure falls
   back to OpenAI), first by the model's name as written (less any ``provider/`` prefix), then
   by its base model (for a fine-tune), then without its date suffix;
4. otherwise the price is unknown (None), and the caller must say so.

**No network.**  ``genai-prices`` fetches newer prices only while an ``UpdatePrices`` instance is
started; judgekit never starts one.  More than that, lookups do not go through the library's
global snapshot (which a started ``UpdatePrices`` anywhere in the process would replace): they
use a private ``DataSnapshot`` built from the data bundled in the installed wheel, so estimates
are offline and reproducible for a given ``genai-prices`` version.

**As billed.**  ``input_tokens`` include any cached input tokens (OpenAI's
``prompt_tokens_details.cached_tokens``, Gemini's ``cached_content_token_count``, Anthropic's
``cache_read_input_tokens``), which are priced at the model's cache-read rate (``cache_read_mtok``
in genai-prices; the input rate where the model has none), and any tokens written to the prompt
cache (Anthropic's ``cache_creation_input_tokens``), priced at its cache-write rate
(``cache_write_mtok``: 1.25x input for Claude's 5-minute cache; ``cache_write_1h_mtok``, 2x, for
the part written with a 1-hour lifetime; the input rate where the model has none);
``output_tokens`` are everything billed as output, reasoning and thinking tokens included (the
providers count them in: :class:`judgekit.types.Usage`).  :func:`usage_usd` prices a reply's
:class:`~judgekit.types.Usage` that way.

**Overrides.**  A spec's :class:`PriceOverride` prices cache reads and writes too: its
``cached_input_per_mtok``, ``cache_write_per_mtok`` (5-minute writes) and
``cache_write_1h_per_mtok``, each, when unset, the input price times the model's own ratio in
genai-prices (its ``cache_read_mtok`` / ``cache_write_mtok`` / ``cache_write_1h_mtok`` over its
``input_mtok``) where genai-prices knows the model and has that price, else the provider's
documented multiplier (:data:`CACHE_MULTIPLIERS`: Anthropic reads 0.1x, writes 1.25x for 5
minutes and 2x for 1 hour; OpenAI and Azure read 0.5x, the least discount any OpenAI model has
had; Gemini reads 0.25x, its implicit caching's discount for 2.0 / 2.5 models; OpenAI and Gemini
bill no writes).  Another provider's reads and writes cost the input price.

**Batch rates.**  ``batch=True`` prices a call made through a provider's batch API: the
model's batch prices in ``genai-prices`` (its ``processing = batch`` price variant, where the
provider it was found under has one in force: OpenAI's halve input and output; Anthropic's
batch discount stacks with its cache rates, Gemini's leaves context caching at the standard
rate), else the standard price less the providers' documented :data:`BATCH_DISCOUNT` (50 % on
everything for OpenAI, Azure, Anthropic and Gemini).  A spec's price override takes off its own
``batch_discount`` (0.5 by default).

**Hot path.**  The first lookup of a (provider, model) resolves the model and its current price
table (about 0.5 ms) and memoises a rate; later calls cost about a microsecond.  A price table
made of per-token input/output rates, with or without genai-prices' threshold tiers, is
evaluated directly; the result is checked against ``genai-prices``' own calculation at
memoisation time, and any table it cannot reproduce (per-request fees, per-character prices)
is priced by the library on every call instead (about 70 us).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..types import Usage
from ._names import base_name, undated, unprefixed

__all__ = ["PriceOverride", "price_usd", "usage_usd", "has_price", "context_window", "FREE_PROVIDERS",
           "GENAI_PROVIDER_IDS", "BATCH_DISCOUNT", "CACHE_MULTIPLIERS"]

#: what a batch call costs of a live one where genai-prices has no batch price for the model (the
#: documented batch discount of OpenAI, Azure, Anthropic and Gemini: half price)
BATCH_DISCOUNT = 0.5
#: genai-prices' price context of a batch call
_BATCH_CONTEXT = {"processing": "batch"}

#: providers whose calls cost nothing
FREE_PROVIDERS = frozenset({"sim", "local", "sim_image_search", "image_folder", "sim_image"})
#: judgekit provider -> genai-prices provider ids to search, in order (others are used as-is)
GENAI_PROVIDER_IDS: dict[str, tuple[str, ...]] = {
    "openai": ("openai",),
    "openai_image": ("openai",),
    "azure": ("azure", "openai"),
    "gemini": ("google",),
    "google": ("google",),
}
#: (cache read, 5-minute cache write, 1-hour cache write) as multiples of the input price, by
#: provider: what a :class:`PriceOverride` that sets no cache rate charges for a model genai-prices
#: does not price (Anthropic's prompt-caching price list; OpenAI's prompt caching launched at half
#: price for cached input, which later models discount more; Gemini's implicit caching, 75 % off
#: on 2.0 / 2.5 models, later 90 %; neither OpenAI nor Gemini bills a write).  Others: 1.0 each.
CACHE_MULTIPLIERS: dict[str, tuple[float, float, float]] = {
    "anthropic": (0.1, 1.25, 2.0),
    "openai": (0.5, 1.0, 1.0),
    "azure": (0.5, 1.0, 1.0),
    "gemini": (0.25, 1.0, 1.0),
    "google": (0.25, 1.0, 1.0),
}


class PriceOverride(BaseModel):
    """A model's price, set in the run spec; it wins over the price database."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)  # as config.STRICT_CONFIG

    input_per_mtok: float = Field(0.0, ge=0, description="USD per million input tokens")
    output_per_mtok: float = Field(0.0, ge=0, description="USD per million output tokens")
    per_request_usd: float = Field(0.0, ge=0, description="USD per request (search APIs price per query)")
    cached_input_per_mtok: float | None = Field(
        None, ge=0, description="USD per million input tokens read from the prompt cache; unset: the input price "
        "times the model's cache-read ratio (genai-prices), else the provider's (Anthropic 0.1, OpenAI/Azure 0.5, "
        "Gemini 0.25)")
    cache_write_per_mtok: float | None = Field(
        None, ge=0, description="USD per million input tokens written to the prompt cache with a 5-minute "
        "lifetime; unset: the input price times the model's write ratio, else the provider's (Anthropic 1.25, "
        "others 1)")
    cache_write_1h_per_mtok: float | None = Field(
        None, ge=0, description="USD per million input tokens written to the prompt cache with a 1-hour "
        "lifetime; unset: the input price times the model's 1-hour write ratio, else the provider's "
        "(Anthropic 2, others 1)")
    batch_discount: float = Field(
        0.5, ge=0, le=1, description="share taken off the whole price of a call made through a provider's batch API "
        "(0.5: half price, as OpenAI, Anthropic and Gemini sell batches)")


Rate = Callable[..., float]  # (input, output, cached input, cache writes, 1-hour cache writes) tokens -> USD

_rates: dict[tuple[str, ...], Rate | None] = {}  # (provider, model) live, (provider, model, "batch") batch


def price_usd(
    provider: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    override: PriceOverride | None = None,
    cached_input_tokens: int = 0,
    cache_write_tokens: int = 0,
    *,
    batch: bool = False,
    cache_write_1h_tokens: int = 0,
) -> float | None:
    """USD for one call of ``model`` with these token counts; None when the price is unknown.
    ``cached_input_tokens`` (read from the prompt cache) and ``cache_write_tokens`` (written to it,
    ``cache_write_1h_tokens`` of them with a 1-hour lifetime) are parts of ``input_tokens`` (clamped
    to it, reads first), priced at the cache-read and cache-write rates (see the module docstring).
    ``batch``: a call made through the provider's batch API, priced at the batch rates
    (:func:`_batch_rate`; an override takes off its ``batch_discount``)."""
    cached = min(max(0, cached_input_tokens), max(0, input_tokens))
    written = min(max(0, cache_write_tokens), max(0, input_tokens) - cached)
    hour = min(max(0, cache_write_1h_tokens), written)
    if override is not None:
        total = _override_rate(provider, model, override)(input_tokens, output_tokens, cached, written, hour)
        return total * (1.0 - override.batch_discount) if batch else total
    key: tuple[str, ...] = (provider, model, "batch") if batch else (provider, model)
    try:
        rate = _rates[key]
    except KeyError:
        rate = _rates[key] = _lookup(provider, model, batch)
    if rate is None:
        return None
    if hour:
        return rate(input_tokens, output_tokens, cached, written, hour)
    return rate(input_tokens, output_tokens, cached, written) if written else rate(input_tokens, output_tokens, cached)


def usage_usd(provider: str, model: str, usage: Usage, override: PriceOverride | None = None, *,
              batch: bool = False) -> float | None:
    """USD a reply's usage is billed: input with its cached part at the cached rate and its
    cache writes at the cache-write rate, and every output token (reasoning and thinking
    included: they are in ``usage.output_tokens``); at the batch rates when ``batch``."""
    return price_usd(provider, model, usage.input_tokens, usage.output_tokens, override, usage.cached_input_tokens,
                     usage.cache_write_tokens, batch=batch, cache_write_1h_tokens=usage.cache_write_1h_tokens)


def has_price(provider: str, model: str, override: PriceOverride | None = None) -> bool:
    """Whether :func:`price_usd` knows a price for ``model``."""
    return price_usd(provider, model, 0, 0, override) is not None


def context_window(provider: str, model: str) -> int | None:
    """The model's context window in tokens (input and output together) from ``genai-prices``,
    or None when the database does not know the model or its window.  The cost cap uses it to
    bound the output of a call that sets no ``max_tokens``."""
    found = _find(provider.strip().lower(), model)
    window = getattr(found[1], "context_window", None) if found is not None else None
    return int(window) if isinstance(window, int) and window > 0 else None


def _free(input_tokens: int, output_tokens: int, cached_input_tokens: int = 0, cache_write_tokens: int = 0,
          cache_write_1h_tokens: int = 0) -> float:
    return 0.0


@dataclass(frozen=True, slots=True)
class _OverrideRate:
    """A :class:`PriceOverride`'s per-token prices (USD per million) with its cache rates
    resolved (:func:`_override_rate`), and its per-request fee."""

    input_mtok: float
    output_mtok: float
    read_mtok: float
    write_mtok: float
    write_1h_mtok: float
    per_request: float

    def __call__(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
                 cache_write_tokens: int = 0, cache_write_1h_tokens: int = 0) -> float:
        fresh = input_tokens - cached_input_tokens - cache_write_tokens
        return ((fresh * self.input_mtok + cached_input_tokens * self.read_mtok
                 + (cache_write_tokens - cache_write_1h_tokens) * self.write_mtok
                 + cache_write_1h_tokens * self.write_1h_mtok + output_tokens * self.output_mtok) / 1e6
                + self.per_request)


#: (provider, model, id of the override) -> (the override, its rate): keyed by identity, since
#: hashing the override costs more than the rest of a price; the override is kept, so its id is
#: not reused while the entry lives
_override_rates: dict[tuple[str, str, int], tuple[PriceOverride, _OverrideRate]] = {}


def _override_rate(provider: str, model: str, override: PriceOverride) -> _OverrideRate:
    """An override's rate for ``model`` of ``provider``, memoised (see the module docstring)."""
    key = (provider, model, id(override))
    found = _override_rates.get(key)
    if found is not None and found[0] is override:
        return found[1]
    kind = provider.strip().lower()
    ratios = list(CACHE_MULTIPLIERS.get(kind, (1.0, 1.0, 1.0)))
    found = _find(kind, model) if kind not in FREE_PROVIDERS else None
    if found is not None:  # the model's own ratios, where genai-prices has them
        table = found[1].get_prices(datetime.now(tz=timezone.utc), None)
        base = _split(table.input_mtok)[0]
        for i, name in enumerate(("cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok")):
            price = getattr(table, name, None)
            if price is not None and base > 0:
                ratios[i] = _split(price)[0] / base
    given = (override.cached_input_per_mtok, override.cache_write_per_mtok, override.cache_write_1h_per_mtok)
    read, write, hour = (g if g is not None else override.input_per_mtok * r for g, r in zip(given, ratios))
    rate = _OverrideRate(override.input_per_mtok, override.output_per_mtok, read, write, hour,
                         override.per_request_usd)
    if len(_override_rates) > 4096:  # overrides made on the fly (tests, notebooks): keep it small
        _override_rates.clear()
    _override_rates[key] = (override, rate)
    return rate


def _lookup(provider: str, model: str, batch: bool = False) -> Rate | None:
    """Resolve a (provider, model) to a rate (its batch rate when ``batch``), or None; the slow,
    once-per-model part."""
    provider = provider.strip().lower()
    if provider in FREE_PROVIDERS:
        return _free
    found = _find(provider, model)
    if found is None:
        return None
    return _batch_rate(*found) if batch else _rate_for(*found)



def _batch_rate(provider: Any, model: Any) -> Rate:
    """The batch rate of a model: genai-prices' batch variant of its prices where the provider it
    was found under has one in force now (OpenAI, Azure and Gemini models: half input and output;
    Anthropic: half of everything, cache reads and writes included), else its standard rate less
    :data:`BATCH_DISCOUNT` (genai-prices skips retired models' batch prices: Claude 3.5 Sonnet)."""
    at = datetime.now(tz=timezone.utc)
    own = any(model is m for m in getattr(provider, "models", ()))  # the library ignores the context otherwise
    has_batch = own and any(
        v.when.get("processing") == "batch" and (v.constraint is None or v.constraint.active(at))
        for v in (getattr(model, "price_variants", None) or ()))
    if not has_batch:
        return _Scaled(_rate_for(provider, model), 1.0 - BATCH_DISCOUNT)
    return _rate_for(provider, model, _BATCH_CONTEXT)


@dataclass(frozen=True, slots=True)
class _Scaled:
    """A rate times a factor."""

    rate: Rate
    factor: float

    def __call__(self, *counts: int) -> float:
        return self.rate(*counts) * self.factor


@lru_cache(maxsize=256)
def _find(provider: str, model: str) -> tuple[Any, Any] | None:
    """``genai-prices``' (provider, model) records for a lower-cased judgekit provider id and a
    model name, or None."""
    snapshot = _snapshot()
    # as written (a fine-tune has its own price), then its base model, then undated
    names = dict.fromkeys((unprefixed(model), base_name(model), undated(model)))
    for provider_id in GENAI_PROVIDER_IDS.get(provider, (provider,)):
        for name in names:
            try:
                return snapshot.find_provider_model(name, None, provider_id, None)
            except LookupError:
                continue
    return None


@lru_cache(maxsize=1)
def _snapshot() -> Any:
    """A price snapshot of the data bundled with genai-prices, private to judgekit (see the
    module docstring: never the library's auto-updated global one)."""
    from genai_prices import data
    from genai_prices.data_snapshot import DataSnapshot

    return DataSnapshot(providers=data.providers, from_auto_update=False)


# ---------------------------------------------------------------------------------------------
# Rates


Tiers = tuple[tuple[int, float], ...]  # (start, USD per Mtok), highest start first


@dataclass(frozen=True, slots=True)
class _TokenRate:
    """Per-token input, cached-input, cache-write (5-minute and 1-hour) and output prices with
    genai-prices' threshold ("cliff") tiers: once a call's input tokens (cached and written ones
    included) exceed a tier's start, that tier's price applies to all its tokens, output included.
    No cached or cache-write price: the input price; no 1-hour write price: the write price."""

    input_mtok: float
    output_mtok: float
    input_tiers: Tiers = ()
    output_tiers: Tiers = ()
    cached_mtok: float | None = None
    cached_tiers: Tiers = ()
    write_mtok: float | None = None
    write_tiers: Tiers = ()
    write_1h_mtok: float | None = None
    write_1h_tiers: Tiers = ()

    @staticmethod
    def _tiered(base: float, tiers: Tiers, input_tokens: int) -> float:
        for start, price in tiers:
            if input_tokens > start:
                return price
        return base

    def __call__(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
                 cache_write_tokens: int = 0, cache_write_1h_tokens: int = 0) -> float:
        rate_in = self._tiered(self.input_mtok, self.input_tiers, input_tokens)
        rate_out = self._tiered(self.output_mtok, self.output_tiers, input_tokens)
        if not cached_input_tokens and not cache_write_tokens:
            return (input_tokens * rate_in + output_tokens * rate_out) / 1e6
        rate_cached = rate_in if self.cached_mtok is None else self._tiered(self.cached_mtok, self.cached_tiers,
                                                                            input_tokens)
        rate_write = rate_in if self.write_mtok is None else self._tiered(self.write_mtok, self.write_tiers,
                                                                          input_tokens)
        rate_hour = rate_write if self.write_1h_mtok is None else self._tiered(self.write_1h_mtok,
                                                                               self.write_1h_tiers, input_tokens)
        fresh = input_tokens - cached_input_tokens - cache_write_tokens
        return (fresh * rate_in + cached_input_tokens * rate_cached
                + (cache_write_tokens - cache_write_1h_tokens) * rate_write + cache_write_1h_tokens * rate_hour
                + output_tokens * rate_out) / 1e6


@dataclass(frozen=True, slots=True)
class _LibraryRate:
    """Prices a call with genai-prices itself, for tables :class:`_TokenRate` cannot express."""

    provider: Any
    model: Any
    at: datetime
    context: Any = None  # genai-prices' price context (a batch call's)

    def __call__(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
                 cache_write_tokens: int = 0, cache_write_1h_tokens: int = 0) -> float:
        from genai_prices import Usage as PricesUsage

        usage = PricesUsage(input_tokens=input_tokens, output_tokens=output_tokens,
                            cache_read_tokens=cached_input_tokens, cache_write_tokens=cache_write_tokens,
                            cache_write_1h_tokens=cache_write_1h_tokens or None)
        return float(self.model.calc_price(usage, self.provider, genai_request_timestamp=self.at,
                                           price_context=self.context).total_price)


def _split(price: Any) -> tuple[float, Tiers]:
    """A genai-prices price field (None, Decimal or TieredPrices) as (base, tiers)."""
    if price is None:
        return 0.0, ()
    tiers = getattr(price, "tiers", None)
    if tiers is None:
        return float(price), ()
    ordered = sorted(((t.start, float(t.price)) for t in tiers), reverse=True)
    return float(price.base), tuple(ordered)


def _rate_for(provider: Any, model: Any, context: Any = None) -> Rate:
    """A fast :class:`_TokenRate` when it reproduces genai-prices on probe calls (the tier
    boundaries, cached input and cache writes included), else a :class:`_LibraryRate`.  Prices
    are those in force now (in genai-prices' price ``context``, e.g. a batch call's)."""
    at = datetime.now(tz=timezone.utc)
    table = model.get_prices(at, context)
    in_base, in_tiers = _split(table.input_mtok)
    out_base, out_tiers = _split(table.output_mtok)
    cache_read = getattr(table, "cache_read_mtok", None)
    cached_base, cached_tiers = _split(cache_read)
    cache_write = getattr(table, "cache_write_mtok", None)
    write_base, write_tiers = _split(cache_write)
    cache_hour = getattr(table, "cache_write_1h_mtok", None)
    hour_base, hour_tiers = _split(cache_hour)
    fast = _TokenRate(in_base, out_base, in_tiers, out_tiers,
                      None if cache_read is None else cached_base, cached_tiers,
                      None if cache_write is None else write_base, write_tiers,
                      None if cache_hour is None else hour_base, hour_tiers)
    library = _LibraryRate(provider, model, at, context)
    starts = {s for s, _ in in_tiers + out_tiers + cached_tiers + write_tiers + hour_tiers}
    probes = [(0, 0, 0, 0, 0), (1, 0, 0, 0, 0), (0, 1, 0, 0, 0), (1234, 567, 0, 0, 0), (1234, 567, 1000, 0, 0),
              (1234, 567, 0, 1000, 0), (1234, 567, 500, 600, 0), (1234, 567, 500, 600, 250), (1234, 567, 0, 600, 600),
              (2_000_000, 30_000, 0, 0, 0), (2_000_000, 30_000, 1_500_000, 0, 0),
              (2_000_000, 30_000, 500_000, 1_000_000, 0), (2_000_000, 30_000, 500_000, 1_000_000, 400_000),
              (10, 0, 10, 0, 0), (10, 0, 0, 10, 0), (10, 0, 0, 10, 10)]
    probes += [(s + d, 1000, c, w, h) for s in starts for d in (0, 1) for c in (0, s // 2) for w in (0, s // 3)
               for h in {0, w // 2}]
    for i, o, c, w, h in probes:
        expected = library(i, o, c, w, h)
        if abs(fast(i, o, c, w, h) - expected) > 1e-9 * max(1.0, abs(expected)):
            return library
    return fast
