"""What one call of the engine comes to, beneath the engine and its batch side alike:
:class:`CallResult` (a response, or a failure as a value), :class:`RunStopped` (the run cannot go
on), :data:`NOT_RUN` (a call never made because the run was stopping), and which model a
provider's calls are billed as (:func:`billed_model`, :func:`image_output`).

A leaf: :mod:`judgekit.engine.engine` (which re-exports these names), the batch layer
(:mod:`judgekit.engine.batching`) and its queue and collection import it, and it imports none of
them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..providers.base import Provider
from ..types import ChatRequest, ChatResponse

__all__ = ["CallResult", "RunStopped", "NOT_RUN", "billed_model", "image_output"]

#: ``CallResult.error_kind`` of a call that was never made because the run was stopping
NOT_RUN = "not_run"


class RunStopped(Exception):
    """The run cannot go on (bad key, unknown model).  ``str()`` is the message for the user."""


@dataclass(slots=True)
class CallResult:
    request: ChatRequest
    response: ChatResponse | None = None
    error_kind: str | None = None
    error: str | None = None
    key: str = ""

    @property
    def ok(self) -> bool:
        return self.response is not None

    @property
    def text(self) -> str:
        return self.response.text if self.response is not None else ""


def billed_model(prov: Provider) -> str:
    """The model whose prices and token rules apply: the one an Azure deployment or an alias
    serves (``ModelSpec.base_model``), else the model named."""
    return getattr(prov.spec, "base_model", None) or prov.model


def image_output(prov: Provider) -> int | None:
    """An image generator's output tokens per image (its own figure), or None."""
    fn = getattr(prov, "expected_output_tokens", None)
    n = fn() if callable(fn) else None
    return None if n is None else int(n)
