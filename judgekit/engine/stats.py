"""Counters the engine keeps per stage and model, read by the live display and the report."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

__all__ = ["StageStats", "RunStats"]


@dataclass
class StageStats:
    """One stage (candidate, pairwise judge, VFS judge, ...)."""

    name: str
    total: int = 0
    done: int = 0
    cache_hits: int = 0
    calls: int = 0  # paid calls that succeeded
    retries: int = 0
    rate_limited: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    #: replies whose usage was impossible: negative counts, or more output than the request allowed
    usage_anomalies: int = 0
    #: replies that cost more than the worst case reserved for them under the cost cap
    over_reservation: int = 0
    #: cached replies not served because a file they name (a drawn image, an encoding, a retrieved
    #: image) was missing from the image store: their calls were made again
    remade: int = 0
    estimate_usd: float | None = None
    started: float = field(default_factory=time.monotonic)
    first_call: float | None = None

    _window: _Window = field(default_factory=lambda: _Window(), repr=False, compare=False)

    def sample(self, now: float) -> None:
        """Note the counters at ``now`` (the display does, at each refresh)."""
        self._window.add(now, self.calls, self.done - self.cache_hits)

    def calls_per_s(self) -> float | None:
        """Calls a second over the last :data:`RATE_WINDOW_S` seconds (so it falls to 0 when the
        stage ends or stalls, rather than decaying slowly as an average since the start would);
        None before the samples span a second.  The samples are the display's (:meth:`sample`)."""
        rates = self._window.rates()
        return None if rates is None else rates[0]

    def eta_s(self) -> float | None:
        """Seconds left at the recent pace of items that needed a call: 0 when every item is done,
        None when there is no pace to go by (nothing finished in the window), never a guess."""
        left = self.total - self.done
        if left <= 0:
            return 0.0
        rates = self._window.rates()
        return left / rates[1] if rates and rates[1] > 0 else None


#: the span the live rates are measured over, in seconds
RATE_WINDOW_S = 10.0


class _Window:
    """Samples of two counters over the last :data:`RATE_WINDOW_S` seconds (plus the one just
    before, the base of the differences)."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, int, int]] = deque()

    def add(self, now: float, a: int, b: int) -> None:
        self.samples.append((now, a, b))
        while len(self.samples) > 2 and self.samples[1][0] <= now - RATE_WINDOW_S:
            self.samples.popleft()

    def rates(self) -> tuple[float, float] | None:
        """Per-second rates of the two counters from the oldest sample to the newest; None when
        they span less than a second."""
        if len(self.samples) < 2:
            return None
        t0, a0, b0 = self.samples[0]
        t1, a1, b1 = self.samples[-1]
        span = t1 - t0
        if span < 1.0:
            return None
        return (a1 - a0) / span, (b1 - b0) / span


@dataclass
class RunStats:
    """All stages of a run, plus run-wide totals."""

    stages: dict[str, StageStats] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    calls_started: float | None = None
    _window: _Window = field(default_factory=lambda: _Window(), repr=False, compare=False)

    def stage(self, name: str) -> StageStats:
        s = self.stages.get(name)
        if s is None:
            s = self.stages[name] = StageStats(name)
        return s

    def sample(self, now: float | None = None) -> None:
        """Note every stage's counters and the run's at ``now`` (the live display does, at each
        refresh; the first sample starts the elapsed time)."""
        now = time.monotonic() if now is None else now
        if self.calls_started is None:
            self.calls_started = now
        for s in self.stages.values():
            s.sample(now)
        self._window.add(now, self.paid_calls, sum(s.done - s.cache_hits for s in self.stages.values()))

    def elapsed_s(self, now: float | None = None) -> float:
        """Seconds since the display first sampled the run (the calls' start, not the estimate's)."""
        if self.calls_started is None:
            return 0.0
        return (time.monotonic() if now is None else now) - self.calls_started

    @property
    def total(self) -> int:
        return sum(s.total for s in self.stages.values())

    @property
    def done(self) -> int:
        return sum(s.done for s in self.stages.values())

    def calls_per_s(self) -> float | None:
        """The run's calls a second over the last :data:`RATE_WINDOW_S` seconds (None: not known yet)."""
        rates = self._window.rates()
        return None if rates is None else rates[0]

    def eta_s(self) -> float | None:
        """Seconds until every planned item is done at the run's recent pace (stages that grow as
        earlier ones finish add to it as they grow); None when there is no pace to go by."""
        left = self.total - self.done
        if left <= 0:
            return 0.0
        rates = self._window.rates()
        return left / rates[1] if rates and rates[1] > 0 else None

    def plan(self, name: str, n: int) -> None:
        """Announce ``n`` more items in a stage (stages whose size is known only as earlier
        stages finish grow as they go)."""
        self.stage(name).total += n

    @property
    def spent_usd(self) -> float:
        return sum(s.cost_usd for s in self.stages.values())

    @property
    def paid_calls(self) -> int:
        return sum(s.calls for s in self.stages.values())

    @property
    def cache_hits(self) -> int:
        return sum(s.cache_hits for s in self.stages.values())

    @property
    def failures(self) -> int:
        return sum(s.failures for s in self.stages.values())

    @property
    def usage_anomalies(self) -> int:
        return sum(s.usage_anomalies for s in self.stages.values())

    @property
    def over_reservation(self) -> int:
        return sum(s.over_reservation for s in self.stages.values())

    @property
    def remade(self) -> int:
        return sum(s.remade for s in self.stages.values())
