"""MMIE metrics on vectors computed by hand."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.errors import DataError
from judgekit.metrics.mmie import (
    alignment,
    category_table,
    field_table,
    load_human_scores,
    score_distribution,
)

SA, PBL, MSR = "situational_analysis", "project_based_learning", "multi_step_reasoning"


def _recs():
    return [
        {"model": "m1", "category": SA, "field": "literature", "score": 6},
        {"model": "m1", "category": SA, "field": "literature", "score": 3},
        {"model": "m1", "category": PBL, "field": "health", "score": 4},
        {"model": "m1", "category": PBL, "field": "art", "score": None},
        {"model": "m1", "category": PBL, "field": "health", "score": 2},
        {"model": "m1", "category": "MSR", "field": "mathematics", "score": 0},
        {"model": "m2", "category": SA, "field": "literature", "score": 5},
        {"model": "m2", "category": "SA", "field": "literature", "score": None},
    ]


def test_category_table_avg_is_over_all_items():
    m1, m2 = category_table(_recs())
    # SA (6+3)/2 = 4.5 -> 75 %; PBL (4+2)/2 = 3 -> 50 %; MSR 0 -> 0 %
    assert (m1["model"], m1["sa"], m1["pbl"], m1["msr"]) == ("m1", 75.0, 50.0, 0.0)
    # Avg over the 5 scored items: 15 / 5 = 3 -> 50 %, not the mean of 75, 50, 0 (41.67)
    assert m1["avg"] == 50.0 and m1["mean_of_categories"] == 41.67
    assert (m1["n"], m1["failed"]) == (5, 1)
    assert (m1["n_sa"], m1["n_pbl"], m1["n_msr"]) == (2, 2, 1)
    assert (m1["failed_sa"], m1["failed_pbl"], m1["failed_msr"]) == (0, 1, 0)
    assert (m2["sa"], m2["pbl"], m2["msr"], m2["avg"]) == (83.33, None, None, 83.33)
    assert (m2["n"], m2["failed"], m2["failed_sa"]) == (1, 1, 1)


def test_category_table_reproduces_the_papers_weighting():
    # Anole, Table 3: 48.95 / 59.05 / 51.72 with the category sizes of Table 1 gives Avg 55.22
    # (checked here with scores whose category means are those percentages over 6)
    recs = []
    for cat, pct, n in ((SA, 48.95, 5005), (PBL, 59.05, 11482), (MSR, 51.72, 3616)):
        total = round(pct / 100 * 6 * n)
        for k in range(n):  # n scores summing to `total`, all in 0..6
            recs.append({"model": "anole", "category": cat, "score": total // n + (k < total % n)})
    (row,) = category_table(recs)
    assert (row["sa"], row["pbl"], row["msr"]) == (48.95, 59.05, 51.72)
    assert row["avg"] == pytest.approx(55.22, abs=0.01)


def test_category_table_rejects_bad_records():
    with pytest.raises(ValueError, match="unknown category"):
        category_table([{"model": "m", "category": "riddles", "score": 1}])
    for bad in (7, -1, 2.5, "3", True):
        with pytest.raises(ValueError, match="score must be"):
            category_table([{"model": "m", "category": SA, "score": bad}])
    assert category_table([]) == []


def test_field_table():
    rows = field_table(_recs())
    assert [(r["model"], r["field"], r["percent"], r["n"], r["failed"]) for r in rows] == [
        ("m1", "literature", 75.0, 2, 0),
        ("m1", "health", 50.0, 2, 0),
        ("m1", "art", None, 0, 1),
        ("m1", "mathematics", 0.0, 1, 0),
        ("m2", "literature", 83.33, 1, 1),
    ]
    assert rows[1]["category"] == PBL and rows[3]["category"] == MSR


def test_score_distribution():
    m1, m2 = score_distribution(_recs())
    assert m1 == {"model": "m1", "0": 1, "1": 0, "2": 1, "3": 1, "4": 1, "5": 0, "6": 1, "failed": 1}
    assert m2 == {"model": "m2", "0": 0, "1": 0, "2": 0, "3": 0, "4": 0, "5": 1, "6": 0, "failed": 1}


def test_alignment_by_hand():
    a = alignment([1, 2, 3, None, 5], [2, 2, 4, 3, None])
    # pairs (1,2) (2,2) (3,4)
    assert a["n"] == 3
    assert a["cosine"] == pytest.approx(18 / math.sqrt(14 * 24))
    assert a["mse"] == pytest.approx(2 / 3)
    assert a["mae"] == pytest.approx(2 / 3)
    assert a["pearson"] == pytest.approx(math.sqrt(3) / 2)


def test_alignment_degenerate_cases():
    const = alignment([3, 3, 3], [1, 4, 6])
    assert const["pearson"] is None and const["mae"] == pytest.approx(2.0)
    assert const["mse"] == pytest.approx((4 + 1 + 9) / 3)
    zeros = alignment([0, 0], [1, 2])
    assert zeros["cosine"] is None and zeros["pearson"] is None
    one = alignment([2], [4])
    assert one["n"] == 1 and one["pearson"] is None and one["cosine"] == pytest.approx(1.0)
    assert alignment([None], [1]) == {"n": 0, "cosine": None, "mse": None, "mae": None, "pearson": None}
    perfect = alignment([0, 3, 6], [0, 3, 6])
    assert perfect["pearson"] == pytest.approx(1.0) and perfect["mse"] == 0.0
    anti = alignment([0, 3, 6], [6, 3, 0])
    assert anti["pearson"] == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        alignment([1, 2], [1])


def test_load_human_scores_csv(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("id,score,rater\nSA_1,5,x\nPBL_2, 3.5 ,y\n\n", encoding="utf-8")
    assert load_human_scores(p) == {"SA_1": 5.0, "PBL_2": 3.5}


@pytest.mark.parametrize("body, match", [
    ("id,points\nSA_1,5\n", r"row 0, column 'score': missing column"),
    ("id,score\nSA_1,five\n", r"row 1, column 'score': score 'five' is not a number"),
    ("id,score\nSA_1,5\nSA_2,7\n", r"row 2, column 'score': score '7' is outside 0..6"),
    ("id,score\nSA_1,5\nSA_1,4\n", r"row 2, column 'id': duplicate id 'SA_1' \(first at row 1\)"),
    ("id,score\n ,4\n", r"row 1, column 'id'"),
    ("id,score\nSA_1\n", r"row 1: 1 fields"),
])
def test_load_human_scores_csv_errors(tmp_path, body, match):
    p = tmp_path / "h.csv"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(DataError, match=match) as e:
        load_human_scores(p)
    assert str(p) in str(e.value)


def test_load_human_scores_json(tmp_path):
    p = tmp_path / "h.json"
    p.write_text(json.dumps([{"id": "SA_1", "score": 4}, {"id": "MSR_2", "score": 0}]), encoding="utf-8")
    assert load_human_scores(p) == {"SA_1": 4.0, "MSR_2": 0.0}
    p.write_text(json.dumps({"SA_1": 6, "PBL_1": 2.5}), encoding="utf-8")
    assert load_human_scores(p) == {"SA_1": 6.0, "PBL_1": 2.5}
    for value, match in (([{"id": "SA_1"}], r"row 1, column 'score': missing field"),
                         ([{"id": "SA_1", "score": None}], r"row 1, column 'score': score must be a number"),
                         ({"SA_1": 9}, r"row 1, column 'score': score 9 is outside"),
                         ([3], r"row 1: expected an object"),
                         ("x", "expected a JSON list")):
        p.write_text(json.dumps(value), encoding="utf-8")
        with pytest.raises(DataError, match=match):
            load_human_scores(p)
    p.write_text("[{", encoding="utf-8")
    with pytest.raises(DataError, match="bad JSON at line 1"):
        load_human_scores(p)
    with pytest.raises(DataError, match="cannot"):
        load_human_scores(tmp_path / "absent.json")
    with pytest.raises(DataError, match="cannot open"):
        load_human_scores(tmp_path / "absent.csv")


def test_reference_mean_scores_are_printed_as_main_py_prints_them():
    # main.py: round(np.mean(scores), 3) over every valid score, and per category
    m1, m2 = category_table(_recs())
    assert (m1["score_sa"], m1["score_pbl"], m1["score_msr"], m1["score_avg"]) == (4.5, 3.0, 0.0, 3.0)
    assert (m2["score_sa"], m2["score_pbl"], m2["score_avg"]) == (5.0, None, 5.0)
    (row,) = category_table([{"model": "m", "category": SA, "score": s} for s in (1, 1, 2)])
    assert row["score_sa"] == 1.333 and row["score_avg"] == 1.333


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=60))
def test_reference_mean_parity_with_numpy(scores):
    np = pytest.importorskip("numpy")
    (row,) = category_table([{"model": "m", "category": PBL, "score": s} for s in scores])
    want = float(round(np.mean(np.array(scores)), 3))
    assert row["score_avg"] == want and row["score_pbl"] == want
    assert row["avg"] == round(100.0 * sum(scores) / (6 * len(scores)), 2)
