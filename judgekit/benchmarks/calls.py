"""What multi-stage benchmark flows share: one caller that either makes the calls (a run) or follows
the cache and records them (the estimate), so the same flow code plans and runs.

:class:`FlowCaller` in a run makes each call through the engine (a call the stopping engine did
not make raises :class:`Aborted`, leaving the item for the next run); when planning it looks each
call up, records it as a :class:`~judgekit.benchmarks.base.PlannedCall`, and answers with the
cached response or, when there is none, an empty stand-in flagged as not real, so the flow goes on
with its own stand-in values (a caption of typical length, the original image) and marks what
follows inexact.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from ..engine import NOT_RUN, CallResult, Engine
from ..types import ChatRequest, ChatResponse
from .base import PlannedCall

__all__ = ["Aborted", "FlowCaller", "generation_tokens", "each_item", "REASK_CHANCE", "planned_reask"]

T = TypeVar("T")
R = TypeVar("R")


class Aborted(Exception):
    """A call was not made because the run is stopping; the item is left for the next run."""


class FlowCaller:
    """Makes calls (``planning=False``) or follows the cache and records them (``planning=True``)."""

    def __init__(self, engine: Engine, planning: bool) -> None:
        self.engine, self.planning = engine, planning
        self.planned: list[PlannedCall] = []

    async def call(self, req: ChatRequest, *, exact: bool = True, expected: float | None = None,
                   max_out: int | None = None, more_at_most: int = 0) -> tuple[CallResult, bool]:
        """The result, and whether it is real (False: the plan's stand-in for a call not made yet).

        ``exact``: False when the request was built from stand-ins; ``expected`` / ``max_out``: the
        output tokens the estimate assumes / at most; ``more_at_most``: calls like this one the
        run may make beyond the plan's (see :class:`PlannedCall`)."""
        if not self.planning:
            r = await self.engine.call(req)
            if r.error_kind == NOT_RUN:
                raise Aborted(r.error or "not run")
            return r, True
        key, hit = await self.engine.lookup(req)
        self.planned.append(PlannedCall(req.stage, req, exact, expected, max_out, more_at_most=more_at_most))
        if hit is not None and exact:  # a stand-in request may match another call's reply: not its own
            return CallResult(req, hit, key=key), True
        return CallResult(req, ChatResponse(""), key=key), False


def generation_tokens(engine: Engine, alias: str) -> float | None:
    """Expected output tokens of one image generation by ``alias``: an images API's image tokens
    (None when unknown), 0 for a local pipeline."""
    fn = getattr(engine.providers.get(alias), "expected_output_tokens", None)
    return 0.0 if fn is None else fn()


async def each_item(items: Iterable[T], fn: Callable[[T], Awaitable[R]], window: int) -> list[R]:
    """``fn`` over every item, at most ``window`` at once, results in order."""
    sem = asyncio.Semaphore(window)

    async def one(item: T) -> R:
        async with sem:
            return await fn(item)

    return await asyncio.gather(*(one(it) for it in items))


#: the chance a judge reply not cached yet does not parse, so a re-ask on parse failure follows
#: (the estimate's expected figure; its bound counts a re-ask for every such judgment)
REASK_CHANCE = 0.05


async def planned_reask(req: ChatRequest, *, stage: str, exact: bool,
                        cached: Callable[[ChatRequest], Awaitable[str | None]], parses: Callable[[str], bool],
                        reask: Callable[[ChatRequest, str], ChatRequest], standin: str) -> list[PlannedCall]:
    """The estimate's re-ask of judge request ``req`` (a benchmark asking again after an unreadable
    reply): none when its cached reply ``parses``; one for sure when the cached reply does not; and
    when there is no reply yet (or ``req`` is itself inexact), an inexact one built on ``standin``
    with the chance :data:`REASK_CHANCE`."""
    reply = await cached(req) if exact else None
    if reply is None:
        return [PlannedCall(stage, reask(req, standin), exact=False, chance=REASK_CHANCE)]
    return [] if parses(reply) else [PlannedCall(stage, reask(req, reply))]
