"""Counters the engine keeps per stage and model, read by the live display and the report."""

from __future__ import annotations

import time
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
    estimate_usd: float | None = None
    started: float = field(default_factory=time.monotonic)
    first_call: float | None = None

    def calls_per_s(self) -> float:
        if self.first_call is None or self.calls == 0:
            return 0.0
        return self.calls / max(1e-6, time.monotonic() - self.first_call)

    def eta_s(self) -> float | None:
        rate = (self.done - self.cache_hits) / max(1e-6, time.monotonic() - self.first_call) if self.first_call else 0
        left = self.total - self.done
        if left <= 0:
            return 0.0
        return left / rate if rate > 0 else None


@dataclass
class RunStats:
    """All stages of a run, plus run-wide totals."""

    stages: dict[str, StageStats] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def stage(self, name: str) -> StageStats:
        s = self.stages.get(name)
        if s is None:
            s = self.stages[name] = StageStats(name)
        return s

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
