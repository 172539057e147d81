"""What a provider offers for batch mode: submit many requests as one job, poll it, read its results.

A provider that sells a batch API (OpenAI and Azure files + batches, Anthropic Message Batches,
Gemini batch mode) implements :class:`BatchAPI` next to its live ``generate``.  The engine's batch
layer (``judgekit.engine.batching``) collects the calls of batch-mode aliases that missed the
cache, splits them to respect :class:`BatchLimits`, records each batch durably in the cache
*before* it waits on it (the batch id, the provider, and each request's ``custom_id`` -> cache key),
polls, and writes every result into the cache as an ordinary response, so a killed run that
starts again reattaches to its live batches and submits nothing twice.

Conventions every implementation keeps:

- ``custom_id`` is the call's cache key (64 hex characters: valid for all three providers'
  request ids); results are joined on it, never on their order.
- The request body of one batch line is the same body the live call would send (build it with
  the provider's own request-building function), so a batch answer and a live answer of the same
  request are interchangeable in the cache.
- :meth:`BatchAPI.batch_results` reads a finished (terminal) batch: every request of the batch
  comes back exactly once, as a response or as the ProviderError that a live call would have
  raised for it (a per-request expiry or cancellation is a :class:`BatchRequestNotRun`, which the
  batch layer retries); requests the provider does not report at all are ``BatchRequestNotRun``.
  A provider that cannot list a batch's requests after the fact (Gemini: its uploaded input file
  cannot be read back) returns what the batch reports, and the batch layer, which holds every
  batch's ``custom_id``s in the cache, counts the others ``BatchRequestNotRun``.
- Costs: a response's ``cost_usd`` is priced at the provider's batch rates (the batch discount
  stacks with prompt-cache rates where the provider says so).
- Errors of the batch calls themselves (create, poll, fetch) raise the same ProviderError classes
  as live calls, so the engine's retry and stop rules apply to them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import functools
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from ..errors import ProviderError
from ..types import ChatRequest, ChatResponse

__all__ = ["BatchItem", "BatchLimits", "BatchState", "BatchStatus", "BatchOutcome", "BatchAPI",
           "BatchRequestNotRun", "TERMINAL_STATES", "classified_by", "BatchSideBase", "WaveIntent", "wave_tag",
           "LOOK_BACK_S", "refused"]

#: judgekit's states of a batch, whatever the provider calls them (its own word is kept in
#: ``BatchStatus.provider_status``)
BatchState = Literal["submitted", "in_progress", "finalizing", "ended", "failed", "expired", "cancelling",
                     "cancelled"]
#: states after which a batch changes no more and its results can be read
TERMINAL_STATES = frozenset({"ended", "failed", "expired", "cancelled"})


class BatchRequestNotRun(ProviderError):
    """A request of a finished batch that got no answer (expired, cancelled, or not reported):
    not the request's fault, so it is asked again (in a new batch, or live)."""

    kind = "batch_not_run"
    retryable = True


@dataclass(frozen=True)
class BatchItem:
    custom_id: str  # the call's cache key
    request: ChatRequest


@dataclass(frozen=True)
class BatchLimits:
    """What one batch may hold; the batch layer splits a wave to fit."""

    max_requests: int
    max_bytes: int  # of the uploaded file / request body


@dataclass
class BatchStatus:
    batch_id: str
    state: BatchState
    provider_status: str  # the provider's own word ("in_progress", "JOB_STATE_RUNNING", "ended", ...)
    total: int = 0
    succeeded: int = 0
    failed: int = 0
    #: seconds since the provider created the batch, when it says
    age_s: float | None = None
    #: anything the provider says about a failed batch as a whole
    message: str = ""
    #: found by :meth:`BatchAPI.find_batches` on a guess the API lets no client confirm yet (a
    #: running Anthropic batch of the intent's size): never cancelled on that guess
    guessed: bool = False

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


@dataclass
class BatchOutcome:
    custom_id: str
    response: ChatResponse | None = None
    error: ProviderError | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class WaveIntent:
    """A batch judgekit meant to create, as the cache recorded it before the create call: the
    wave's id (which the provider keeps where it can: OpenAI's ``metadata``, the upload's file name,
    Gemini's display name), its requests' ``custom_id``s and when the intent was written (POSIX
    seconds).  :meth:`BatchAPI.find_batches` looks for the batch a killed run may have created."""

    wave: str
    custom_ids: tuple[str, ...]
    recorded_at: float


#: how far before an intent's record the provider's batch list is read (clocks differ)
LOOK_BACK_S = 600.0


def wave_tag(wave: str) -> str:
    """The text that names a wave at the provider (in a display name, a file name, metadata)."""
    return f"jkwave-{wave}"


def refused(err: BaseException) -> bool:
    """Whether a create call's error says the provider made nothing: an HTTP 4xx answer (a bad
    request, a key refused, a rate limit) other than 408.  A timeout, a 5xx or a lost connection
    may hide a batch the provider created all the same."""
    status = getattr(err, "status", None)
    return isinstance(status, int) and 400 <= status < 500 and status != 408


@runtime_checkable
class BatchAPI(Protocol):
    """The batch side of a provider (implemented by the provider class itself)."""

    #: the most one batch of this provider may hold
    batch_limits: BatchLimits

    def batch_line_bytes(self, item: BatchItem) -> int:
        """The size of ``item`` in the batch's upload (for splitting by ``max_bytes``)."""
        ...

    async def submit_batch(self, items: list[BatchItem], *, wave: str | None = None) -> BatchStatus:
        """Create one batch of ``items`` (all for this provider's model) and return its status;
        ``wave`` (an intent recorded before the call) is put where :meth:`find_batches` sees it."""
        ...

    async def find_batches(self, intents: Sequence[WaveIntent], *, known: frozenset[str] = frozenset()
                           ) -> dict[str, BatchStatus]:
        """The batches at the provider created for ``intents`` (by wave id), read from its list of
        recent batches; an intent with no batch there is left out (nothing was created).
        ``known``: batch ids already recorded in the cache (never another wave's)."""
        ...

    async def poll_batch(self, batch_id: str) -> BatchStatus:
        ...

    async def batch_results(self, batch_id: str, custom_ids: Sequence[str] | None = None) -> list[BatchOutcome]:
        """Every request of a terminal batch, answered or not (see the module's conventions).

        ``custom_ids``: the batch's requests as the caller recorded them (the engine's cache does),
        for a provider that cannot list them (Anthropic); the others may ignore it."""
        ...

    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        ...


def classified_by(classify: Callable[[Exception], ProviderError], *,
                  passed: tuple[type[BaseException], ...] = (ValueError, TypeError)):
    """A decorator for a provider's batch methods: their failures become the live call's
    ProviderErrors (``classify`` maps an SDK exception: the provider's error leaf, such as
    :func:`~judgekit.providers.openai_errors.classify_openai_error`, which imports its SDK when
    first called), keys redacted.  ``passed``: the caller's own mistakes, raised as they are
    (nothing was sent)."""

    def decorate(method):
        @functools.wraps(method)
        async def wrapper(self, *args, **kwargs):
            try:
                return await method(self, *args, **kwargs)
            except ProviderError as err:
                self.redact_error(err)
                raise
            except passed:
                raise
            except Exception as err:
                raise self.redact_error(classify(err)) from err

        return wrapper

    return decorate


#: uploads and downloads are given at least this long, and a second per this many bytes
_TRANSFER_FLOOR_S = 600.0
_MIN_TRANSFER_BPS = 1024 * 1024


class BatchSideBase:
    """What every provider's batch side shares: pricing at batch rates under the model the spec
    names as billed (``serves`` when set), and the timeout of a batch transfer of ``nbytes``.
    Needs the provider's ``spec`` and ``kind``."""

    def _price(self, resp: ChatResponse) -> float:
        from ..cost.prices import usage_usd

        spec = self.spec  # type: ignore[attr-defined]
        billed = getattr(spec, "base_model", None) or spec.model
        return usage_usd(self.kind, billed, resp.usage, spec.price, batch=True) or 0.0  # type: ignore[attr-defined]

    def _timeout(self, nbytes: int = 0) -> float:
        base = self.spec.limits.timeout_for(None)  # type: ignore[attr-defined]
        return max(base, _TRANSFER_FLOOR_S, 60.0 + nbytes / _MIN_TRANSFER_BPS)
