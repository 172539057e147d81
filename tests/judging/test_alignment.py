"""Judge-human alignment (MAE, Consistency) and reading the human ratings file."""

from __future__ import annotations

import pytest

from judgekit.benchmarks.creation_mmbench.data import read_human_rating_table, read_human_ratings
from judgekit.errors import DataError
from judgekit.judging.alignment import consistency, mae


def test_known_vectors():
    judge = [2, 1, 0, -1, -2]
    human = [1.0, 1.0, 1.5, 1.0, -0.5]
    # |J-P| = 1, 0, 1.5, 2, 1.5
    assert mae(judge, human) == pytest.approx(6 / 5)
    assert consistency(judge, human) == pytest.approx(40.0)  # 1 and 0 are within 1
    assert consistency(judge, human, tol=1.5) == pytest.approx(80.0)


def test_none_pairs_are_skipped():
    judge = [2, None, 0, 1]
    human = [2.0, 1.0, None, -1.0]
    assert mae(judge, human) == pytest.approx(1.0)  # pairs (2,2) and (1,-1)
    assert consistency(judge, human) == pytest.approx(50.0)


def test_boundary_with_float_means():
    # a P that should be 1 but is computed a hair below it still counts as "within 1" of J = 2
    p = 1.0 - 2.0**-52  # one rounding step below 1
    assert abs(2 - p) > 1.0
    assert consistency([2], [p]) == 100.0
    assert consistency([2], [1 / 3]) == 0.0


def test_empty_and_mismatched():
    assert mae([], []) is None and consistency([None], [1.0]) is None
    with pytest.raises(ValueError):
        mae([1, 2], [1.0])


def test_read_human_ratings(tmp_path):
    path = tmp_path / "human.csv"
    path.write_text(
        "model,index,human_1,human_2,human_3,human_4,notes\n"
        "gemini,12,1,2,,1,ok\n"
        "gemini,13,-2,-1,-1,-2,\n"
        "qwen,12,0,,,,\n"
        "qwen,14,,,,,no ratings\n",
        encoding="utf-8",
    )
    p = read_human_ratings(path)
    assert p == {
        ("gemini", "12"): pytest.approx(4 / 3),
        ("gemini", "13"): pytest.approx(-1.5),
        ("qwen", "12"): 0.0,
    }
    table = read_human_rating_table(path)
    assert table[("gemini", "12")] == {"human_1": 1.0, "human_2": 2.0, "human_4": 1.0}
    assert table[("qwen", "14")] == {}


def test_read_human_ratings_without_model_column(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("index,H1,H2\n1,2,1\n", encoding="utf-8")
    assert read_human_ratings(path) == {("", "1"): 1.5}


@pytest.mark.parametrize(
    "body, column, row",
    [
        ("index,human_1\n1,3\n", "human_1", "1 (index 1)"),  # outside -2..2
        ("index,human_1\n1,1\n2,better\n", "human_1", "2 (index 2)"),  # not a number
        ("index,human_1\n1,1\n1,0\n", "index", "2 (index 1)"),  # duplicate
        ("idx,human_1\n1,1\n", "index", None),  # missing index column
    ],
)
def test_bad_ratings_name_row_and_column(tmp_path, body, column, row):
    path = tmp_path / "bad.csv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(DataError) as ei:
        read_human_ratings(path)
    assert ei.value.column == column and ei.value.row == row
    assert str(path) in str(ei.value)


def test_no_rating_columns(tmp_path):
    path = tmp_path / "none.csv"
    path.write_text("index,score\n1,1\n", encoding="utf-8")
    with pytest.raises(DataError, match="no rating columns"):
        read_human_ratings(path)
    assert read_human_ratings(path, rating_columns=("score",)) == {("", "1"): 1.0}
