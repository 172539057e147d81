"""Why a batch left a request unanswered: one error class per cause, and the cause's short label.

A provider's :meth:`~judgekit.providers.batch.BatchAPI.batch_results` gives a request that got no
answer one of these (all :class:`~judgekit.providers.batch.BatchRequestNotRun`: not the request's
fault, so the batch layer asks it again), or the error a live call would have raised (a request
the provider *errored*: Anthropic's ``errored`` results, a line of OpenAI's error file, a Gemini
line's ``error``), carrying the provider's own error type in ``provider_type``:

- :class:`BatchExpired`: the batch's window ended before the request ran;
- :class:`BatchCancelled`: the batch was cancelled before the request ran;
- :class:`BatchFailed`: the batch failed as a whole (the provider's message: a failed Gemini
  batch operation's ``error``, an OpenAI batch's ``errors``), no request run;
- :class:`BatchQueueFull`: a :class:`BatchFailed` whose cause is the organisation's enqueued-token
  limit (OpenAI's ``token_limit_exceeded``): the batch layer waits for the run's earlier batches
  and sends smaller batches (:mod:`judgekit.engine.batch_queue`);
- a plain :class:`~judgekit.providers.batch.BatchRequestNotRun`: the results did not report it.

:func:`cause_of` names a failure for people and for ``summary.json`` (``batch.unanswered``):
``expired``, ``cancelled``, ``batch failed``, ``queue full``, ``not reported``, ``validation
error`` (OpenAI refused the request's line of the input file), ``errored (api_error)`` with the
provider's error type, else the error's kind.
"""

from __future__ import annotations

from ..errors import ProviderError
from .batch import BatchRequestNotRun

__all__ = ["BatchExpired", "BatchCancelled", "BatchFailed", "BatchQueueFull", "cause_of", "with_type"]


class BatchExpired(BatchRequestNotRun):
    """The batch expired (its completion window ended) before it ran this request."""

    kind = "batch_expired"


class BatchCancelled(BatchRequestNotRun):
    """The batch was cancelled before it ran this request."""

    kind = "batch_cancelled"


class BatchFailed(BatchRequestNotRun):
    """The batch failed as a whole and ran none of its requests; the message is the provider's."""

    kind = "batch_failed"


class BatchQueueFull(BatchFailed):
    """The provider refused the batch: the organisation's enqueued-token limit (the tokens of
    every batch of the model not ended yet) would be passed."""

    kind = "batch_queue_full"


def with_type(err: ProviderError, provider_type: str | None, *, validation: bool = False) -> ProviderError:
    """``err`` marked with the provider's own error type (``api_error``, ``server_error``,
    ``INTERNAL``...), and as a refused line of the input file when ``validation``."""
    if provider_type:
        err.provider_type = provider_type  # type: ignore[attr-defined]
    if validation:
        err.batch_validation = True  # type: ignore[attr-defined]
    return err


_LABELS = ((BatchQueueFull, "queue full"), (BatchFailed, "batch failed"), (BatchExpired, "expired"),
           (BatchCancelled, "cancelled"), (BatchRequestNotRun, "not reported"))


def cause_of(err: BaseException) -> str:
    """A short label of why a batch request got no answer (see the module docstring)."""
    for cls, label in _LABELS:
        if isinstance(err, cls):
            return label
    if getattr(err, "batch_validation", False):
        return "validation error"
    ptype = getattr(err, "provider_type", None)
    if isinstance(ptype, str) and ptype:
        return f"errored ({ptype})"
    return str(getattr(err, "kind", type(err).__name__))
