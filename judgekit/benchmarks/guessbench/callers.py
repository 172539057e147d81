"""How GuessBench's flows make their calls: through the engine (a run) or past the cache with
stand-in replies (the estimate).

The same flow code plans and runs (:mod:`judgekit.benchmarks.guessbench.flow`).  It talks to a
*caller*: when running, :class:`RunCaller` makes each call through the engine; when estimating,
:class:`PlanCaller` answers from the cache where it can and otherwise records the call and hands
back a stand-in reply that is never "$Well done!$" and always retrieves an image, and sets
``inexact``, which the flow reads as "not right", so the plan follows the longest path from there
(every dynamic turn, every review round) and marks those calls inexact.  Each stand-in reply is a
different text, as real replies are, so every reply the run would extract is extracted in the
plan too.  The longest path is the estimate's bound; its expected figure weights each call past
an early-stop point by the chance of going on (:class:`StopTally`).
"""

from __future__ import annotations

from typing import Protocol

from ...engine import NOT_RUN, CallResult, Engine
from ...retrieval.base import Retrieved
from ...types import ChatRequest, ChatResponse, ImagePart
from ..base import PlannedCall

__all__ = ["Aborted", "Caller", "RunCaller", "PlanCaller", "StopTally", "PRIOR_STOP"]


class Aborted(Exception):
    """A call was not made because the run is stopping; the set is left for the next run."""


class Caller(Protocol):
    counts: dict[str, int]
    #: whether a reply so far was a stand-in (planning only): what follows is not a real outcome
    inexact: bool

    async def call(self, req: ChatRequest, *, steers: bool = True) -> CallResult:
        """Make ``req``.  ``steers=False``: nothing in the flow depends on the reply (another
        extractor of a panel reading a reply), so a stand-in for it leaves the flow exact."""
        ...

    def image(self, retrieved: Retrieved) -> ImagePart | None: ...

    def decide(self, kind: str, stopped: bool) -> None:
        """The flow passed an early-stop point of ``kind`` (``"turn"``: a dynamic turn's guess was
        judged; ``"round"``: a review round replied) and stopped there or went on."""

    def loop_done(self) -> None:
        """The review loop of a turn ended: what follows does not depend on its stop points."""


class RunCaller:
    """Makes the calls through the engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.counts: dict[str, int] = {}
        self.inexact = False

    async def call(self, req: ChatRequest, *, steers: bool = True) -> CallResult:
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        r = await self.engine.call(req)
        if r.error_kind == NOT_RUN:
            raise Aborted(r.error or "not run")
        return r

    def image(self, retrieved: Retrieved) -> ImagePart | None:
        return _stored_image(self.engine, retrieved)

    def decide(self, kind: str, stopped: bool) -> None:
        pass

    def loop_done(self) -> None:
        pass


#: the chance that a flow stops at an early-stop point, assumed where the cache has no real replies
#: to count (:class:`StopTally`): a dynamic turn's guess is right ("turn": GuessBench is hard; the
#: paper's best static accuracy is 57.8 %, most models are far lower), a review round says
#: "$Well done!$" ("round")
PRIOR_STOP = {"turn": 0.3, "round": 0.5}
#: how many observations the prior counts as (the tally's rate moves from the prior to the
#: observed rate as real stop decisions accumulate)
_PRIOR_WEIGHT = 4.0


class StopTally:
    """How often real (cached) replies stopped flows at each early-stop point, per (model,
    approach, kind), shared by the plan's flows; :meth:`rate` is the chance of a stop that the
    expected figure assumes where the reply deciding it is a stand-in."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], list[int]] = {}

    def add(self, alias: str, approach: str, kind: str, stopped: bool) -> None:
        c = self.counts.setdefault((alias, approach, kind), [0, 0])
        c[0] += int(stopped)
        c[1] += 1

    def rate(self, alias: str, approach: str, kind: str) -> float:
        stops, n = self.counts.get((alias, approach, kind), (0, 0))
        return (stops + PRIOR_STOP[kind] * _PRIOR_WEIGHT) / (n + _PRIOR_WEIGHT)


#: stand-in replies for calls not made yet (the estimate); sized like typical replies
_STANDIN_GUESS = (
    "The build shows a compact structure of coloured blocks on a grass floor, with a rounded top and "
    "a darker base. Its proportions and the hint's letter pattern suggest an everyday object, and the "
    "colours fit it well. Answer: The build represents a stand-in guess."
)
_STANDIN_EXTRACT = "Answer: stand-in guess"


class PlanCaller:
    """Follows the cache; records each call not cached and answers it with a stand-in.

    Every call of the longest path is planned (the bound).  Past an early-stop point decided by a
    stand-in reply, the flow goes on as if it did not stop, and the calls from there are tagged
    with the stop points passed; :meth:`weigh` then sets each call's chance from ``tally``'s
    rates.  A stop point decided by real (cached) replies is certain and is counted in ``tally``.
    """

    def __init__(self, engine: Engine, placeholder: ImagePart, *, alias: str = "", approach: str = "",
                 tally: StopTally | None = None) -> None:
        self.engine = engine
        self.placeholder = placeholder
        self.alias, self.approach = alias, approach
        self.tally = tally if tally is not None else StopTally()
        self.counts: dict[str, int] = {}
        self.planned: list[PlannedCall] = []
        self.inexact = False
        self._passed: list[str] = []  # stand-in-decided stop points passed so far
        self._passed_at: list[tuple[str, ...]] = []  # per planned call

    async def call(self, req: ChatRequest, *, steers: bool = True) -> CallResult:
        self.counts[req.stage] = self.counts.get(req.stage, 0) + 1
        key, hit = await self.engine.lookup(req)
        kind = _kind_of(req.stage)
        self.planned.append(PlannedCall(req.stage, req, exact=not self.inexact,
                                        expected_output_tokens={"extract": 12.0, "retrieve": 0.0}.get(kind)))
        self._passed_at.append(tuple(self._passed))
        if hit is not None:
            return CallResult(req, hit, key=key)
        if steers:
            self.inexact = True  # everything after this depends on a reply we do not have
        n = len(self.planned)  # each stand-in differs, as real replies do (so each is extracted)
        if kind == "retrieve":
            text = Retrieved(status="ok", query=req.messages[-1].text(), sha256=self.placeholder.sha256,
                             mime=self.placeholder.mime, url=None, page_url=None, title=None,
                             source="estimate", error=None).to_json()
        elif kind == "extract":
            text = _STANDIN_EXTRACT
        else:
            text = f"{_STANDIN_GUESS} ({n})"
        return CallResult(req, ChatResponse(text), key=key)

    def decide(self, kind: str, stopped: bool) -> None:
        if self.inexact:  # decided by a stand-in, which never stops: the run may stop here
            self._passed.append(kind)
        else:
            self.tally.add(self.alias, self.approach, kind, stopped)

    def loop_done(self) -> None:
        # the turn's final extraction and later turns are made whether the loop stopped early
        self._passed = [k for k in self._passed if k != "round"]

    def weigh(self) -> list[PlannedCall]:
        """The planned calls, each with its chance: the product over the stop points it lies
        past of the chance of going on (call after every flow of the plan has been followed, so
        the tally holds every real decision)."""
        for pc, passed in zip(self.planned, self._passed_at):
            chance = 1.0
            for kind in passed:
                chance *= 1.0 - self.tally.rate(self.alias, self.approach, kind)
            pc.chance = chance
        return self.planned

    def image(self, retrieved: Retrieved) -> ImagePart | None:
        if retrieved.source != "estimate":  # a cached retrieval: its real image, as the run sends it
            found = _stored_image(self.engine, retrieved)
            if found is not None:
                return found
        return self.placeholder


def _stored_image(engine: Engine, retrieved: Retrieved) -> ImagePart | None:
    blobs = engine.blobs
    if blobs is None or not retrieved.sha256:
        return None
    try:
        data = blobs.get(retrieved.sha256)
    except KeyError:
        return None
    return ImagePart(data, retrieved.mime or "image/png", sha256=retrieved.sha256)


def _kind_of(stage: str) -> str:
    return stage.rsplit("/", 1)[1] if "/" in stage else "guess"
