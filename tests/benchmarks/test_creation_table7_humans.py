"""Creation-MMBench Table 7's human-human rows: each rater against the mean of the other raters,
with Table 4's statistics (MAE, Consistency), from the ratings file; the Table 4 runner prints and
writes them.  Issue 25, point 6."""

from __future__ import annotations

import pytest

from judgekit.benchmarks.creation_mmbench.data import read_human_rating_table
from judgekit.benchmarks.creation_mmbench.human import OVERALL, table7_human_rows
from judgekit.benchmarks.creation_mmbench.results import build
from judgekit.judging.uncertainty import IntervalOptions
from judgekit.resources import samples_dir

CSV = "index,model,H1,H2,H3\n1,m1,2,1,0\n2,m1,-1,,-1\n3,m2,0,2,\n4,m2,1,,\n5,,2,2,2\n"


def _table(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text(CSV, encoding="utf-8")
    return read_human_rating_table(path)


def test_rows_by_hand(tmp_path):
    rows = {(r["judge"], r["model"]): r for r in table7_human_rows(_table(tmp_path), ["m2", "m1"])}
    assert list(rows) == [(h, m) for h in ("H1", "H2", "H3") for m in ("m2", "m1", OVERALL)]
    h1m1 = rows[("H1", "m1")]
    # item 1: 2 vs mean(1, 0) = 0.5 -> 1.5; item 2: -1 vs -1 -> 0
    assert (h1m1["items"], h1m1["single_mae"], h1m1["single_consistency"]) == (2, pytest.approx(0.75), 50.0)
    # m2: item 3: 0 vs 2 -> 2 (item 4: no other rater, left out)
    assert (rows[("H1", "m2")]["items"], rows[("H1", "m2")]["single_mae"]) == (1, 2.0)
    # overall adds item 5 (no model): 2 vs 2 -> 0
    ov = rows[("H1", OVERALL)]
    assert (ov["items"], ov["mae"], ov["consistency"]) == (4, pytest.approx(3.5 / 4), 50.0)
    h2 = rows[("H2", OVERALL)]  # items 1 (1 vs 1 -> 0), 3 (2 vs 0 -> 2), 5 (0)
    assert (h2["items"], h2["mae"], h2["consistency"]) == (3, pytest.approx(2 / 3), pytest.approx(200 / 3))
    assert all(r["dual_mae"] is None and r["dual_consistency"] is None for r in rows.values())


def test_sample_rows_match_a_restatement_of_the_definition():
    table = read_human_rating_table(samples_dir() / "creation_mmbench" / "human_ratings.csv")
    rows = table7_human_rows(table)
    raters = ["human_1", "human_2", "human_3", "human_4"]
    assert [r["judge"] for r in rows if r["model"] == OVERALL] == raters
    for rater in raters:
        diffs = []
        for ratings in table.values():
            others = [v for k, v in ratings.items() if k != rater]
            if rater in ratings and others:
                diffs.append(abs(ratings[rater] - sum(others) / len(others)))
        row = next(r for r in rows if r["judge"] == rater and r["model"] == OVERALL)
        assert row["items"] == len(diffs) > 0
        assert row["mae"] == pytest.approx(sum(diffs) / len(diffs))
        assert row["consistency"] == pytest.approx(100 * sum(d <= 1 + 1e-9 for d in diffs) / len(diffs))


def test_build_prints_and_writes_them(tmp_path):
    table = _table(tmp_path)
    built = build([], judges=["judge"], candidates=["m1", "m2"], options=IntervalOptions(bootstrap_samples=0),
                  human={}, raters=table)
    assert built.summary["human_human"] == built.tables["human_human"] == table7_human_rows(table, ["m1", "m2"])
    title, shown = built.more_displays[-1]
    assert title.startswith("Human-human alignment (Table 7)")
    assert shown[0] == {"rater": "H1", "model": "m1", "MAE": "0.75", "consistency %": "50.00", "items": 2}
    assert "human_human" not in build([], judges=["judge"], candidates=["m1"],
                                      options=IntervalOptions(bootstrap_samples=0)).summary


def test_the_report_page_has_the_table(tmp_path):
    from judgekit.benchmarks.creation_mmbench.report import tables

    table = _table(tmp_path)
    built = build([], judges=["judge"], candidates=["m1", "m2"], options=IntervalOptions(bootstrap_samples=0),
                  human={}, raters=table)
    (page,) = [t for t in tables(built.summary) if t.title == "Human-human alignment (Table 7)"]
    assert page.rows[0] == {"rater": "H1", "model": "m1", "items": 2, "MAE": 0.75, "consistency %": 50.0}
