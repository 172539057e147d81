"""The rows a panel benchmark's report reads from its summary (judgekit.judging.report):
rows_by_judge, headline_rows and figure_series, whichever benchmark wrote the summary."""

from __future__ import annotations

from judgekit.judging.pairwise import ENSEMBLE_JUDGE
from judgekit.judging.report import figure_series, headline_rows, rows_by_judge


def _rows(tag: str) -> list[dict]:
    return [{"model": "m", "level": "overall", "group": "all", "score": tag}]


def test_one_judge():
    summary = {"judges": ["a"], "results": _rows("a")}
    assert rows_by_judge(summary) == {"a": _rows("a")}
    assert headline_rows(summary) == {"a": _rows("a")}


def test_a_panel_every_judge_then_the_ensemble_and_the_headline_first_and_ensemble():
    summary = {"judges": ["b", "a", "c"], "results": _rows("b"),
               "per_judge": {"a": _rows("a"), "b": _rows("b"), "c": _rows("c")},
               "ensemble": {"results": _rows("e")}}
    by = rows_by_judge(summary)
    assert list(by) == ["b", "a", "c", ENSEMBLE_JUDGE]
    assert by[ENSEMBLE_JUDGE] == _rows("e")
    assert list(headline_rows(summary)) == ["b", ENSEMBLE_JUDGE]


def test_no_judges_no_rows():
    assert rows_by_judge({"judges": []}) == {} and headline_rows({}) == {}


def test_figure_series_with_whiskers_and_missing_rows():
    s = figure_series("m", [{"x": 1.0, "x_ci_low": 0.5, "x_ci_high": 1.5}, None, {"x": 2.0}], "x")
    assert s.name == "m" and s.values == [1.0, None, 2.0]
    assert s.low == [0.5, None, None] and s.high == [1.5, None, None]
