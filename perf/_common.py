"""Shared bits of the perf scripts: a simulator in its own process, model specs, loop-lag probe."""

from __future__ import annotations

import asyncio
import time

from judgekit.config import ModelSpec
from judgekit.sim import SimConfig, SimProcess
from judgekit.types import ChatRequest, GenParams, Message


def start_sim(**config) -> SimProcess:
    sim = SimProcess(SimConfig(**config))
    sim.start()
    return sim


def spec_for(sim: SimProcess, *, concurrency: int = 64, rpm: float | None = None, model: str = "perf-model",
             max_attempts: int = 6) -> ModelSpec:
    return ModelSpec(provider="openai", model=model, base_url=sim.base_url,
                     limits={"max_concurrency": concurrency, "requests_per_minute": rpm,
                             "max_attempts": max_attempts})


def requests(n: int, *, alias: str = "m", stage: str = "candidate", offset: int = 0) -> list[ChatRequest]:
    return [ChatRequest(alias, (Message.user(f"Describe item {i + offset} in one sentence."),),
                        GenParams(temperature=0, max_tokens=32), stage=stage, item_id=str(i + offset))
            for i in range(n)]


async def run_window(engine, reqs, window: int = 1024):
    """Run calls with at most ``window`` in progress, by ``window`` workers pulling from the
    list: thousands of tasks started in one loop iteration would themselves be a stall."""
    results: list = [None] * len(reqs)
    it = iter(enumerate(reqs))

    async def worker() -> None:
        for i, r in it:
            results[i] = await engine.call(r)

    await asyncio.gather(*(worker() for _ in range(min(window, len(reqs)))))
    return results


class LoopLag:
    """Measures how late a 5 ms ticker wakes up: the longest event-loop stall."""

    def __init__(self, period: float = 0.005) -> None:
        self.period = period
        self.max_lag = 0.0
        self.lags: list[float] = []
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(self.period)
            lag = time.perf_counter() - t - self.period
            self.lags.append(lag)
            self.max_lag = max(self.max_lag, lag)

    @property
    def p99(self) -> float:
        s = sorted(self.lags)
        return s[int(0.99 * (len(s) - 1))] if s else 0.0

    def __enter__(self) -> "LoopLag":
        self._task = asyncio.ensure_future(self._run())
        return self

    def __exit__(self, *exc) -> None:
        if self._task is not None:
            self._task.cancel()


class StallTrace:
    """Debug aid: prints the stack of the event-loop thread when a stall is longer than ``ms``."""

    def __init__(self, ms: float = 50.0) -> None:
        import threading

        self.ms = ms
        self._beat = time.perf_counter()
        self._stop = threading.Event()
        self._main = threading.get_ident()

    async def beat(self) -> None:
        while True:
            self._beat = time.perf_counter()
            await asyncio.sleep(0.005)

    def watch(self) -> None:
        import sys
        import traceback

        while not self._stop.wait(0.01):
            if (time.perf_counter() - self._beat) * 1000 > self.ms:
                frame = sys._current_frames().get(self._main)
                if frame is not None:
                    print("".join(traceback.format_stack(frame)[-12:]), file=sys.stderr)
                self._beat = time.perf_counter()
