"""How a judgment record names its failure (judgekit.judging.records.failure): one rule for
Creation-MMBench and the generic pairwise and rubric benchmarks."""

from __future__ import annotations

from types import SimpleNamespace

from judgekit.judging.records import NO_CALL, PARSE_FAILURE, failure


def _result(ok: bool, error_kind: str | None = None, error: str | None = None):
    return SimpleNamespace(ok=ok, error_kind=error_kind, error=error)


def test_a_reading_has_no_failure():
    assert failure(_result(True), True) == (None, None)
    assert failure(None, True, error_kind="no_answer", error="x") == (None, None)


def test_a_failed_call_keeps_the_engines_kind_and_message():
    assert failure(_result(False, "timeout", "took too long"), False) == ("timeout", "took too long")
    assert failure(_result(False, None, "?"), False, error_kind="no_objective") == (PARSE_FAILURE, "?")


def test_a_reply_read_as_nothing():
    assert failure(_result(True), False) == (PARSE_FAILURE, None)
    assert failure(_result(True), False, error_kind="no_objective", error="ignored") == ("no_objective", None)


def test_no_judge_call_keeps_the_reason_given():
    for kind in NO_CALL:
        assert failure(None, False, error_kind=kind, error="why") == (kind, "why")
