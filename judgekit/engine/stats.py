"""Counters the engine keeps per stage and model, read by the live display and the report."""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field

__all__ = ["Pace", "StageStats", "RunStats", "TotalChange"]


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

    #: why the total changed mid-run: reason -> items added (negative: taken off), in order
    changes: dict[str, int] = field(default_factory=dict)

    _window: _Window = field(default_factory=lambda: _Window(), repr=False, compare=False)
    _pace: Pace = field(default_factory=lambda: Pace(), repr=False, compare=False)

    def sample(self, now: float) -> None:
        """Note the counters at ``now`` (the display does, at each refresh)."""
        self._window.add(now, self.calls, self.done - self.cache_hits)
        self._pace.observe(now, self.done - self.cache_hits, started=self.first_call)

    def expect(self, per_s: float) -> None:
        """The estimate's pace (items a second), the ETA's until the stage's first completions."""
        self._pace.seed(per_s)

    def change_total(self, delta: int, reason: str) -> None:
        """Add ``delta`` items to the total (negative: take them off), saying why; the display
        shows each reason's sum beside the stage."""
        if delta:
            self.total += delta
            self.changes[reason] = self.changes.get(reason, 0) + delta

    def calls_per_s(self) -> float | None:
        """Calls a second over the last :data:`RATE_WINDOW_S` seconds (so it falls to 0 when the
        stage ends or stalls, rather than decaying slowly as an average since the start would);
        None before the samples span a second.  The samples are the display's (:meth:`sample`)."""
        rates = self._window.rates()
        return None if rates is None else rates[0]

    def eta_s(self, now: float | None = None) -> float | None:
        """Seconds left at the stage's own smoothed pace (:class:`Pace`) of items that needed a
        call: 0 when every item is done; the estimate's pace until the first completions; None
        only when neither is known."""
        return self._pace.eta(now, self.total - self.done)


#: the time constant of the smoothed pace, in seconds (longer for completions further apart)
PACE_TAU_S = 20.0
#: the estimate's pace counts as this many seconds of observed pace once completions come
SEED_WEIGHT_S = 5.0


class Pace:
    """Items a second, smoothed over time, and the ETA it gives.

    The pace is items over seconds, both summed over the completions seen (the items finished
    between two samples, and the time since the completion before), each sum decaying with time
    constant ``tau`` (or four usual gaps between completions, when longer).  A local model's
    batch finishing 32 items at once after 8 s of nothing adds 32 items and 8 s, not a spike
    then a silence; a frame that happens to see two batches adds two batches' items over two
    batches' time.  The first completion's gap holds the stage's start-up (a model loading, a
    queue): it counts at most twice as long as the second completion's pace implies; before the
    second, the estimate's pace stands in (:meth:`seed`, then worth :data:`SEED_WEIGHT_S`
    seconds of observation), or the first completion's pace.

    Between completions the ETA counts down from the last one; once the next completion is
    overdue (more than its usual size at the current pace), the wait so far is counted as though
    that completion came now, so a stall lengthens the ETA smoothly rather than freezing it.
    For a steady pace the ETA falls by the seconds that pass, whatever the shape of the
    completions; after the first completion there is always a pace (never '-')."""

    __slots__ = ("tau", "rate", "items", "secs", "step", "gap", "first", "t", "n", "k", "seen")

    def __init__(self, tau_s: float = PACE_TAU_S) -> None:
        self.tau = tau_s
        self.rate: float | None = None  # items a second
        self.items = self.secs = 0.0  # the decaying sums the pace is the ratio of
        self.step: float | None = None  # items a completion brings (smoothed)
        self.gap: float | None = None  # seconds between completions (smoothed, from the second on)
        self.first: tuple[int, float] = (0, 0.0)  # the first completion's items and gap
        self.t: float | None = None  # the last completion (or the first sample)
        self.n = 0  # items done at that time
        self.k = 0  # completions seen
        self.seen: float | None = None  # the latest sample

    @property
    def measured(self) -> bool:
        return self.k > 0

    def seed(self, rate: float) -> None:
        """The pace to go by until the completions give one (the estimate's)."""
        if not self.measured and rate > 0:
            self.rate = rate
            self.items, self.secs = rate * SEED_WEIGHT_S, SEED_WEIGHT_S

    def observe(self, now: float, n: int, started: float | None = None) -> None:
        """``n`` items done at ``now``; ``started``: when the stage's first call went out (its
        first gap runs from then, not from the run's start, for a stage that waits on another)."""
        self.seen = now
        if self.t is None or n < self.n:
            self.t, self.n = now, n
            return
        dn = n - self.n
        if dn == 0:
            return
        since = self.t if self.measured or started is None else max(self.t, started)
        gap = max(now - since, 0.25)
        self.k += 1
        if self.k == 1:  # start-up: a pace only where there is none
            self.first = (dn, gap)
            if self.rate is None:
                self.rate = dn / gap
        else:
            keep = math.exp(-gap / self._tau())
            if self.k == 2 and self.first[1] <= 2.0 * gap * self.first[0] / dn:
                # the first gap was no longer than the pace since implies (twice over): no
                # start-up in it, so it counts as the completions after it do
                self.items, self.secs = self.items + self.first[0], self.secs + self.first[1]
            self.items = self.items * keep + dn
            self.secs = self.secs * keep + gap
            self.rate = self.items / self.secs
            self.gap = gap if self.gap is None else self.gap + 0.3 * (gap - self.gap)
        self.step = float(dn) if self.step is None else self.step + 0.3 * (dn - self.step)
        self.t, self.n = now, n

    def _tau(self) -> float:
        """The time constant: ``tau``, or four usual gaps between completions when longer (a
        batch every 20 s is smoothed over 80 s, so one early or late batch moves it little)."""
        return self.tau if self.gap is None else max(self.tau, 4.0 * self.gap)

    def eta(self, now: float | None, left: int) -> float | None:
        """Seconds until ``left`` more items are done, as of ``now`` (default: the latest
        sample); 0 when none is left, None with no pace."""
        if left <= 0:
            return 0.0
        if self.rate is None or self.rate <= 0:
            return None
        if not self.measured or self.t is None:
            return max(left / self.rate, 1.0)
        step = min(self.step or 1.0, float(left))
        since = max(0.0, (self.seen if now is None else now) - self.t)
        due = step / self.rate  # when the next completion is expected
        if since <= due:
            eta = left / self.rate - since
        else:  # overdue: as if ``step`` items came now, after this long a wait
            keep = math.exp(-since / self._tau())
            rate = (self.items * keep + step) / (self.secs * keep + since) if self.k > 1 else step / since
            eta = (left - step) / min(rate, self.rate)
        return max(eta, 1.0)


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


@dataclass(frozen=True)
class TotalChange:
    """Items a stage's total gained (negative: lost) mid-run, and why."""

    stage: str
    delta: int
    reason: str


@dataclass
class RunStats:
    """All stages of a run, plus run-wide totals."""

    stages: dict[str, StageStats] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    calls_started: float | None = None
    _window: _Window = field(default_factory=lambda: _Window(), repr=False, compare=False)
    _pace: Pace = field(default_factory=lambda: Pace(), repr=False, compare=False)

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
        needed = sum(s.done - s.cache_hits for s in self.stages.values())
        self._window.add(now, self.paid_calls, needed)
        self._pace.observe(now, needed)

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

    def eta_s(self, now: float | None = None) -> float | None:
        """Seconds until every planned item is done: the run's own smoothed pace (:class:`Pace`;
        the estimate's until the first completions), and never less than a stage's ETA (a fast
        first stage must not make the run look nearly done); None when nothing is known."""
        known = [e for e in [self._pace.eta(now, self.total - self.done),
                             *(s.eta_s(now) for s in list(self.stages.values()))] if e is not None]
        return max(known) if known else None

    def expect(self, per_s: float) -> None:
        """The estimate's pace for the whole run (see :meth:`StageStats.expect`)."""
        self._pace.seed(per_s)

    def plan(self, name: str, n: int, reason: str | None = None) -> None:
        """Announce ``n`` more items in a stage: before the calls, the plan (the first frame
        shows it); mid-run, with the ``reason`` the display gives (a stage whose size is known
        only as earlier stages finish grows as they go)."""
        if reason is None:
            self.stage(name).total += n
        else:
            self.stage(name).change_total(n, reason)

    def drop(self, name: str, n: int, reason: str) -> None:
        """Take ``n`` planned items off a stage mid-run (calls found not needed), saying why."""
        if n > 0:
            self.stage(name).change_total(-n, reason)

    def total_changes(self) -> list[TotalChange]:
        """Every stage's total changes, by reason, in the order they first happened."""
        return [TotalChange(s.name, n, why) for s in list(self.stages.values()) for why, n in list(s.changes.items())
                if n]

    def calls_ended(self, in_flight: int = 0) -> bool:
        """Every planned item done and no call out: what follows is the results' computing.
        Safe to ask from another thread (the display's), as it only reads counters."""
        stages = list(self.stages.values())
        total = sum(s.total for s in stages)
        return total > 0 and in_flight <= 0 and sum(s.done for s in stages) >= total

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
