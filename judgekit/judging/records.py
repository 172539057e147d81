"""How a judgment record names its failure: one rule for every judge-heavy benchmark.

A judgment record (a dict; the statistics of the judging core read its ``judge``, ``model``,
``index``, ``kind``, ``order``, ``score``, ``ok``, ``error_kind``) is either a reading (``ok``) or
a failure with its kind, which :func:`failure` sets the same way for Creation-MMBench and the
generic pairwise and rubric benchmarks:

* the judge's call failed: the engine's kind (``timeout``, ``rate_limit`` ...) and its message;
* the reply came back but held no reading: :data:`PARSE_FAILURE`, or the benchmark's own kind
  for a reply it reads as "nothing to judge" (Creation-MMBench's ``no_objective``); no message;
* no judge call was made: why (:data:`NO_CALL`), with the benchmark's message.  Such a record
  says nothing about the judge.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["PARSE_FAILURE", "NO_CALL", "failure"]

#: a reply that holds no verdict or score the parser can read
PARSE_FAILURE = "parse_failure"
#: the kinds of a judgment made without a judge call: the candidate's or the baseline's call
#: failed, or an imported answer is missing
NO_CALL = ("candidate_failed", "baseline_failed", "no_answer")


class _Called(Protocol):
    @property
    def ok(self) -> bool: ...

    error_kind: str | None
    error: str | None


def failure(result: _Called | None, ok: bool, *, error_kind: str | None = None,
            error: str | None = None) -> tuple[str | None, str | None]:
    """``(error_kind, error)`` of a judgment: ``(None, None)`` when ``ok``; the failed call's kind
    (:data:`PARSE_FAILURE` when it has none) and message; for a reply read as nothing,
    ``error_kind`` or :data:`PARSE_FAILURE`, no message; with no call (``result`` None), the
    ``error_kind`` and ``error`` given."""
    if ok:
        return None, None
    if result is None:
        return error_kind, error
    if not result.ok:
        return result.error_kind or PARSE_FAILURE, result.error
    return error_kind or PARSE_FAILURE, None
