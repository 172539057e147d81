"""The tidy export: rows -> results.parquet (DuckDB, no pyarrow) -> judgekit.results, both ways."""

from __future__ import annotations

import json
import math
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgekit
from judgekit.errors import DataError
from judgekit.report.tidy import TIDY_COLUMNS, TIDY_FILE, tidy_row, write_tidy

ODD = [
    {"item": 7, "category": None, "candidate": "mödel-α", "judge": "judge", "order": 1, "kind": "pairwise",
     "value": -2, "verdict": "[[A>>B]]", "ok": True, "error_kind": None, "reasked": True,
     "judge_text": "línea 1\nline 2 'quoted' \"double\" ✓ 🙂", "extra": {"span": [3, 11], "x": float("nan")}},
    {"item": "q-2", "value": float("nan"), "ok": False, "error_kind": "parse_failure", "judge_text": "z" * 100_000,
     "length_diff": 12},  # not a column: goes into extra
    {"item": "q-3", "run_id": "another-run", "value": 0.5, "extra": '{"given": "as JSON text"}', "more": 1},
    {"item": "q-4", "extra": "plain text"},
]


def test_round_trip_with_odd_values(tmp_path):
    path = write_tidy(tmp_path, ODD, "run-1", "pairwise")
    assert path == tmp_path / TIDY_FILE and not list(tmp_path.glob("*.tmp"))
    rows = judgekit.results(tmp_path, kind="rows")
    assert [list(r) for r in rows] == [list(TIDY_COLUMNS)] * 4
    a, b, c, d = rows
    assert a["item"] == "7" and a["order"] == 1 and a["value"] == -2.0 and a["reasked"] is True
    assert a["candidate"] == "mödel-α" and a["judge_text"] == ODD[0]["judge_text"] and a["category"] is None
    assert json.loads(a["extra"]) == {"span": [3, 11], "x": None}  # NaN in extra: null, valid JSON
    assert b["value"] is None and b["ok"] is False and len(b["judge_text"]) == 100_000
    assert json.loads(b["extra"]) == {"length_diff": 12} and b["order"] is None and b["reasked"] is None
    assert (a["run_id"], a["benchmark"], c["run_id"]) == ("run-1", "pairwise", "another-run")
    assert json.loads(c["extra"]) == {"given": "as JSON text", "more": 1}
    assert json.loads(d["extra"]) == {"extra": "plain text"}
    df = judgekit.results(tmp_path / TIDY_FILE)  # the file's own path works too
    assert list(df.columns) == list(TIDY_COLUMNS) and len(df) == 4
    assert df["judge_text"].iloc[1] == "z" * 100_000 and df["order"].isna().tolist() == [False, True, True, True]
    rel = judgekit.results(tmp_path, kind="duckdb")
    assert rel.aggregate("count(*)").fetchall() == [(4,)]
    assert dict(zip(rel.columns, rel.types))["order"] == "INTEGER"


def test_no_rows_still_has_the_columns(tmp_path):
    write_tidy(tmp_path, [], "r", "mmie")
    df = judgekit.results(tmp_path)
    assert list(df.columns) == list(TIDY_COLUMNS) and len(df) == 0


def test_errors(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="results.parquet: no such file"):
        judgekit.results(tmp_path)
    write_tidy(tmp_path, [{"item": "1"}], "r", "b")
    with pytest.raises(ValueError, match="kind='table'"):
        judgekit.results(tmp_path, kind="table")
    monkeypatch.setitem(sys.modules, "pandas", None)  # pandas not installed
    with pytest.raises(ImportError, match="pip install pandas"):
        judgekit.results(tmp_path)
    assert judgekit.results(tmp_path, kind="rows")[0]["item"] == "1"  # rows need no pandas
    with pytest.raises(ValueError, match="tidy row 2, column 'value': 'high' is not a DOUBLE"):
        write_tidy(tmp_path, [{"value": 1}, {"value": "high"}], "r", "b")


_text = st.one_of(st.none(), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
_row = st.fixed_dictionaries({}, optional={
    "item": st.one_of(st.integers(-10**6, 10**6), st.text(min_size=1, max_size=10)),
    "category": _text, "candidate": _text, "judge": _text, "verdict": _text, "error_kind": _text,
    "judge_text": _text, "kind": _text,
    "order": st.one_of(st.none(), st.integers(0, 3)),
    "value": st.one_of(st.none(), st.floats(allow_infinity=False, width=64)),
    "ok": st.one_of(st.none(), st.booleans()), "reasked": st.one_of(st.none(), st.booleans()),
    "extra": st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5),
                                                  max_size=3)),
})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, max_size=6))
def test_rows_come_back_as_written(tmp_path, rows):
    """Any rows come back in order, every column as written (ids as text, NaN as null, extra as JSON)."""
    write_tidy(tmp_path, rows, "run", "bench")
    back = judgekit.results(tmp_path, kind="rows")
    assert len(back) == len(rows)
    for want, got in zip(rows, back):
        full = tidy_row(**want)
        for col in TIDY_COLUMNS:
            v = full[col]
            if col in ("run_id", "benchmark"):
                assert got[col] == ("run" if col == "run_id" else "bench")
            elif col == "item":
                assert got[col] == (None if v is None else str(v))
            elif col == "value" and v is not None and math.isnan(v):
                assert got[col] is None
            elif col == "extra":
                assert (json.loads(got[col]) if got[col] else None) == (v or None)
            else:
                assert got[col] == v, col
