"""The pre-run cost estimate: per (stage, model alias) lines, summed from planned calls.

The planner enumerates every call a run could make and feeds each to
:meth:`EstimateBuilder.add_call`, saying whether the cache already answers it and how likely the
run is to make it; :meth:`~EstimateBuilder.finish` prices the calls still to make.  Two figures per
line, for calls and for dollars:

* **bound** (``calls_to_make``, ``cost_max_usd``): every planned call is made (every dynamic
  turn, every refine round, every re-ask: the longest path an adaptive flow can take), each
  writing its full ``max_tokens`` (:data:`DEFAULT_MAX_OUTPUT_TOKENS` when unset).  No stage of a
  run pays more calls than its bound; a budget check (``--max-cost``) compares with this figure;
* **expected** (``calls_expected``, ``cost_expected_usd``): each call weighted by its ``chance``
  (1 for a call every run makes; less for a turn or round an early stop may skip, as the planner
  assumes), with output per call the mean output of the line's cached calls when there are any
  (basis ``"cached"``), else the planner's per-call guess (``"guess"``), else the max (``"max"``);
  never more than a call's ``max_tokens``.

Each call is priced on its own token counts, so threshold-tiered prices (more per token above
200k input tokens) apply only to the calls that cross them.

Prompt caching that costs extra (Claude's ``cache_control`` marks: a write costs 1.25x input): a
call's ``cache_prefix_tokens`` are the tokens of its longest marked prefix that reaches the
model's minimum (:func:`judgekit.providers.anthropic_wire.prompt_cache_min_tokens`; a shorter one
is never cached, so it costs nothing more).  The bound prices them as a write in every call; the
expected figure as a write in the first call of an alias to carry that prefix and a read (0.1x) in
the later ones.  Caches that bill no write (OpenAI's, Gemini's) are not planned: their reads only
lower the cost.  A line whose price is unknown has
``None`` costs and is named in :attr:`Estimate.unknown_prices`; totals sum the known lines, so
check :attr:`Estimate.complete` before trusting a total.

Batch mode: a line of an alias that runs through its provider's batch API (``batch_aliases`` of
:meth:`EstimateBuilder.finish`) is priced at the batch rates (its ``cost_*`` are what the run
pays), and the same calls at live prices are kept beside them (``live_cost_*``), so the two show
side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .prices import PriceOverride, price_usd
from .tokens import RequestTokens

__all__ = [
    "line_time_s",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "OutputBasis",
    "PriceLookup",
    "LineEstimate",
    "Estimate",
    "EstimateBuilder",
    "price_lookup_for",
]

#: the output bound of a call whose ``max_tokens`` is unset (the API's own cap may be higher)
DEFAULT_MAX_OUTPUT_TOKENS = 4096

OutputBasis = Literal["cached", "guess", "max"]

#: ``(alias, provider, model, input_tokens, output_tokens) -> USD or None`` for one call
#: (alias, provider, model, input tokens, output tokens, *, cached_input_tokens=0,
#: cache_write_tokens=0) -> USD or None; the keywords are passed only when not 0
PriceLookup = Callable[..., float | None]


def price_lookup_for(overrides: Mapping[str, PriceOverride | None] | None = None,
                     billed_models: Mapping[str, str] | None = None, *, batch: bool = False) -> PriceLookup:
    """A :data:`PriceLookup` over :func:`~judgekit.cost.prices.price_usd` with the spec's
    per-alias price overrides (``{alias: ModelSpec.price}``); ``billed_models`` names the model
    an alias is priced as (``{alias: ModelSpec.base_model}``: an Azure deployment's ``serves``);
    ``batch``: at the batch rates."""
    table = dict(overrides or {})
    billed = dict(billed_models or {})

    def lookup(alias: str, provider: str, model: str, input_tokens: int, output_tokens: int, *,
               cached_input_tokens: int = 0, cache_write_tokens: int = 0) -> float | None:
        return price_usd(provider, billed.get(alias, model), input_tokens, output_tokens, table.get(alias),
                         cached_input_tokens, cache_write_tokens, batch=batch)

    return lookup


@dataclass(slots=True)
class LineEstimate:
    """The estimate for one (stage, model alias).  Token and cost figures cover the calls to
    make only; cached calls cost nothing."""

    stage: str
    alias: str
    provider: str
    model: str
    #: every call the run can make on this line (cached ones included): the bound
    calls_total: int
    calls_cached: int
    #: the most calls still to make (every adaptive turn and round made): no run pays more
    calls_to_make: int
    input_tokens: int
    input_exact: bool
    output_tokens_max: int
    #: expected output tokens of the calls to make (each call weighted by its chance); None when
    #: neither cached calls nor guesses give an expectation (then the expected cost uses the max)
    output_tokens_expected: float | None
    #: None when the price is unknown (0.0 when there is nothing to make)
    cost_max_usd: float | None
    cost_expected_usd: float | None
    price_known: bool
    output_basis: OutputBasis = "max"
    #: calls still to make, each weighted by its chance (at most ``calls_to_make``; equal to it
    #: when no call on the line may be skipped by an early stop)
    calls_expected: float = 0.0
    #: wall time the calls to make take at this model's limits, in seconds (see
    #: :func:`line_time_s`); None when neither a measured latency nor a requests/min limit bounds it
    time_s: float | None = None
    #: the calls go through the provider's batch API: ``cost_*`` are at the batch rates
    batch: bool = False
    #: batch lines: the same calls at live prices (None for live lines, or an unknown price)
    live_cost_max_usd: float | None = None
    live_cost_expected_usd: float | None = None


@dataclass(slots=True)
class Estimate:
    """A priced estimate: lines in stage order (first appearance), then alias."""

    lines: list[LineEstimate] = field(default_factory=list)

    @property
    def total_max_usd(self) -> float:
        """Sum of the lines' max cost, known prices only (see :attr:`unknown_prices`)."""
        return sum(line.cost_max_usd or 0.0 for line in self.lines)

    @property
    def total_expected_usd(self) -> float:
        """Sum of the lines' expected cost, known prices only."""
        return sum(line.cost_expected_usd or 0.0 for line in self.lines)

    @property
    def batch(self) -> bool:
        """True when some line runs in batch mode."""
        return any(line.batch for line in self.lines)

    @property
    def total_live_max_usd(self) -> float:
        """:attr:`total_max_usd` with the batch lines at live prices."""
        return sum((line.live_cost_max_usd if line.batch else line.cost_max_usd) or 0.0 for line in self.lines)

    @property
    def total_live_expected_usd(self) -> float:
        """:attr:`total_expected_usd` with the batch lines at live prices."""
        return sum((line.live_cost_expected_usd if line.batch else line.cost_expected_usd) or 0.0
                   for line in self.lines)

    @property
    def calls_to_make(self) -> int:
        """The most calls still to make (the bound)."""
        return sum(line.calls_to_make for line in self.lines)

    @property
    def calls_expected(self) -> float:
        """Calls still to make, weighted by their chance."""
        return sum(line.calls_expected for line in self.lines)

    @property
    def adaptive(self) -> bool:
        """True when some call may be skipped (expected below the bound)."""
        return any(line.calls_expected < line.calls_to_make for line in self.lines)

    @property
    def total_time_s(self) -> float | None:
        """Wall time of the whole run: stages overlap, so it is the busiest model's share (the sum
        of its lines' times); None when no line has a time."""
        per: dict[str, float] = {}
        for line in self.lines:
            if line.time_s is not None:
                per[line.alias] = per.get(line.alias, 0.0) + line.time_s
        return max(per.values()) if per else None

    @property
    def untimed(self) -> list[str]:
        """Aliases with calls to make and no time estimate (no measured latency, no RPM limit; batch
        lines take as long as the provider's batches)."""
        return list(dict.fromkeys(line.alias for line in self.lines
                                  if line.calls_to_make and line.time_s is None and not line.batch))

    @property
    def unknown_prices(self) -> list[str]:
        """``"alias (provider model)"`` for each model with calls to make and no known price."""
        seen = {
            f"{line.alias} ({line.provider} {line.model})": None
            for line in self.lines
            if line.cost_max_usd is None
        }
        return list(seen)

    @property
    def complete(self) -> bool:
        """True when every call to make has a price, so the totals are the whole cost."""
        return all(line.cost_max_usd is not None for line in self.lines)

    def as_rows(self, *, total: bool = True) -> list[dict[str, Any]]:
        """One dict per line (the :class:`LineEstimate` fields), plus a ``stage="total"`` row."""
        rows = [asdict(line) for line in self.lines]
        if total:
            expected = [line.output_tokens_expected for line in self.lines]
            rows.append(
                {
                    "stage": "total",
                    "alias": "",
                    "provider": "",
                    "model": "",
                    "calls_total": sum(line.calls_total for line in self.lines),
                    "calls_cached": sum(line.calls_cached for line in self.lines),
                    "calls_to_make": self.calls_to_make,
                    "input_tokens": sum(line.input_tokens for line in self.lines),
                    "input_exact": all(line.input_exact for line in self.lines),
                    "output_tokens_max": sum(line.output_tokens_max for line in self.lines),
                    "output_tokens_expected": None if None in expected else sum(expected),  # type: ignore[arg-type]
                    "cost_max_usd": self.total_max_usd,
                    "cost_expected_usd": self.total_expected_usd,
                    "price_known": self.complete,
                    "output_basis": "",
                    "calls_expected": self.calls_expected,
                    "time_s": self.total_time_s,
                    "batch": self.batch,
                    "live_cost_max_usd": self.total_live_max_usd,
                    "live_cost_expected_usd": self.total_live_expected_usd,
                }
            )
        return rows


class _Line:
    """What :class:`EstimateBuilder` accumulates for one (stage, alias)."""

    __slots__ = ("provider", "model", "total", "cached", "cached_out_sum", "cached_out_n", "calls", "exact")

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.total = 0
        self.cached = 0
        self.cached_out_sum = 0.0
        self.cached_out_n = 0
        # calls to make, grouped: (input tokens, max output tokens, guessed output or None, cache
        # prefix tokens, whether the call writes that prefix in the expected figure) ->
        # [n, sum of the calls' chances]
        self.calls: dict[tuple[int, int, float | None, int, bool], list[float]] = {}
        self.exact = True


class EstimateBuilder:
    """Accumulates planned calls; :meth:`finish` turns them into an :class:`Estimate`."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, str], _Line] = {}
        self._stages: dict[str, int] = {}  # stage -> order of first appearance
        self._prefixes: set[tuple[str, Hashable]] = set()  # (alias, cache prefix) a planned call writes

    def add_call(
        self,
        stage: str,
        alias: str,
        provider: str,
        model: str,
        request_tokens: RequestTokens,
        max_tokens: int | None,
        cached: bool,
        expected_output_tokens: float | None,
        chance: float = 1.0,
        copies: int = 1,
        cache_prefix_tokens: int = 0,
        cache_prefix: Hashable | None = None,
    ) -> None:
        """Count one planned call.

        For a ``cached`` call, ``expected_output_tokens`` is the output tokens its cached answer
        used (None if not recorded); for a call to make it is the planner's guess (None: none).
        ``chance``: how likely the run is to make the call (in [0, 1]; 1: every run makes it).  The
        bound counts the call whatever its chance.  ``copies``: count that many such calls.
        ``cache_prefix_tokens``: its input tokens a provider's prompt cache writes at a higher
        price (0: none), ``cache_prefix`` what identifies that prefix (see the module docstring).
        """
        if not 0.0 <= chance <= 1.0:
            raise ValueError(f"chance of a call must be in [0, 1], not {chance!r}")
        if copies < 0:
            raise ValueError(f"copies must be at least 0, not {copies!r}")
        if copies == 0:
            return
        key = (stage, alias)
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Line(provider, model)
            self._stages.setdefault(stage, len(self._stages))
        elif (line.provider, line.model) != (provider, model):
            raise ValueError(
                f"alias '{alias}' in stage '{stage}' was {line.provider} {line.model}, now {provider} {model}"
            )
        line.total += copies
        if cached:
            line.cached += copies
            if expected_output_tokens is not None:
                line.cached_out_sum += copies * expected_output_tokens
                line.cached_out_n += copies
            return
        bound = DEFAULT_MAX_OUTPUT_TOKENS if max_tokens is None else max_tokens
        prefix = min(max(0, cache_prefix_tokens), request_tokens.input)
        first = bool(prefix)
        if prefix and cache_prefix is not None:
            first = (alias, cache_prefix) not in self._prefixes
            self._prefixes.add((alias, cache_prefix))
        if first and copies > 1:  # the first copy writes, the others read
            self._group(line, (request_tokens.input, bound, expected_output_tokens, prefix, True), 1, chance)
            copies, first = copies - 1, False
        self._group(line, (request_tokens.input, bound, expected_output_tokens, prefix, first), copies, chance)
        if not request_tokens.exact:
            line.exact = False

    @staticmethod
    def _group(line: _Line, key: tuple[int, int, float | None, int, bool], copies: int, chance: float) -> None:
        group = line.calls.setdefault(key, [0, 0.0])
        group[0] += copies
        group[1] += copies * chance

    def finish(self, price_lookup: PriceLookup | None = None, *, batch_lookup: PriceLookup | None = None,
               batch_aliases: Iterable[str] = ()) -> Estimate:
        """Price the calls to make (by default with :func:`price_lookup_for` and no overrides); the
        lines of ``batch_aliases`` at ``batch_lookup``'s prices, with their live cost beside."""
        lookup = price_lookup or price_lookup_for()
        batched = set(batch_aliases)
        keys = sorted(self._lines, key=lambda k: (self._stages[k[0]], k[1]))
        lines = []
        for stage, alias in keys:
            line = _price_line(stage, alias, self._lines[(stage, alias)], lookup)
            if alias in batched:
                live = line
                line = _price_line(stage, alias, self._lines[(stage, alias)], batch_lookup or lookup)
                line.batch = True
                line.live_cost_max_usd, line.live_cost_expected_usd = live.cost_max_usd, live.cost_expected_usd
            lines.append(line)
        return Estimate(lines)


def _price_line(stage: str, alias: str, line: _Line, lookup: PriceLookup) -> LineEstimate:
    provider, model = line.provider, line.model
    basis: OutputBasis
    if line.cached_out_n:
        basis, mean = "cached", line.cached_out_sum / line.cached_out_n
    elif any(guess is not None for _, _, guess, _, _ in line.calls):
        basis, mean = "guess", None
    else:
        basis, mean = "max", None

    to_make = input_tokens = out_max = 0
    out_expected = calls_expected = 0.0
    cost_max: float | None = 0.0
    cost_expected: float | None = 0.0
    for (n_in, bound, guess, prefix, first), (count, weight) in line.calls.items():
        n = int(count)
        per_call = mean if basis == "cached" else guess
        expected = bound if per_call is None else min(float(per_call), float(bound))
        to_make += n
        calls_expected += weight
        input_tokens += n * n_in
        out_max += n * bound
        out_expected += weight * expected
        if cost_max is None or cost_expected is None:
            continue
        if prefix:  # bound: every call writes its prefix; expected: the first writes, the others read
            c_max = lookup(alias, provider, model, n_in, bound, cache_write_tokens=prefix)
            c_exp = lookup(alias, provider, model, n_in, round(expected),
                           **({"cache_write_tokens": prefix} if first else {"cached_input_tokens": prefix}))
        else:
            c_max = lookup(alias, provider, model, n_in, bound)
            c_exp = lookup(alias, provider, model, n_in, round(expected))
        if c_max is None or c_exp is None:
            cost_max = cost_expected = None
        else:
            cost_max += n * c_max
            cost_expected += weight * c_exp

    price_known = cost_max is not None if to_make else lookup(alias, provider, model, 0, 0) is not None
    return LineEstimate(
        stage=stage,
        alias=alias,
        provider=provider,
        model=model,
        calls_total=line.total,
        calls_cached=line.cached,
        calls_to_make=to_make,
        input_tokens=input_tokens,
        input_exact=line.exact,
        output_tokens_max=out_max,
        output_tokens_expected=None if basis == "max" else out_expected,
        cost_max_usd=cost_max,
        cost_expected_usd=cost_expected,
        price_known=price_known,
        output_basis=basis,
        calls_expected=min(calls_expected, float(to_make)),
    )


def line_time_s(calls: int, latency_s: float | None, max_concurrency: int,
                requests_per_minute: float | None) -> float | None:
    """Seconds ``calls`` take on one model: ``calls x latency / concurrency`` with the latency of
    earlier calls of the same stage and model (from the cache), and at least ``calls /
    requests_per_minute``; None when neither is known.  (A local model's latency is per item as
    the batcher delivered it, so its concurrency is the batches' width.)"""
    if calls <= 0:
        return 0.0
    bounds = []
    if latency_s is not None:
        bounds.append(calls * latency_s / max(1, max_concurrency))
    if requests_per_minute:
        bounds.append(calls / requests_per_minute * 60.0)
    return max(bounds) if bounds else None
