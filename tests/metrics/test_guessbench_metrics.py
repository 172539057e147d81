"""GuessBench accuracy tables and AutoBencher metrics, checked by hand and against the paper."""

from __future__ import annotations

from fractions import Fraction

import pytest

from judgekit.errors import DataError
from judgekit.metrics.guessbench import (
    ACCURACY_COLUMNS,
    accuracy_rows,
    autobencher,
    carry_forward,
    difficulty,
    least_squares_fit,
    novelty,
    read_earlier_accuracies,
    separability,
    spearman,
)

# paper Table 2, static "All", the five models of section 5.1
MODELS = ["GPT-4o", "Gemini-2.0-Flash", "InternVL2.5-78B-MPO", "Qwen2.5VL-72B", "MiniCPM-V2.6"]
STATIC_ALL = [57.8, 45.8, 22.2, 12.0, 9.4]
# paper Table 8 (appendix C.6): AI2D, MMBench V1.1 Test (EN), MathVista, HallusionBench per model
EARLIER_NAMES = ["AI2D", "MMBench", "MathVista", "HallusionBench"]
EARLIER = [
    [84.9, 84.8, 60.0, 71.4],
    [83.1, 70.4, 70.4, 72.0],
    [89.2, 87.9, 76.6, 73.3],
    [88.5, 88.3, 74.2, 71.9],
    [82.1, 79.0, 60.8, 65.0],
]

# --------------------------------------------------------------------------- carry forward


@pytest.mark.parametrize(
    "vec, expected",
    [
        ([False, False, False], [False, False, False]),
        ([True, False, False], [True, True, True]),
        ([False, True, False], [False, True, True]),
        ([False, False, True], [False, False, True]),
        ([True, None, None], [True, True, True]),  # later turns not asked
        ([False, True, None], [False, True, True]),
        ([None, None, None], [None, None, None]),
        ([False, None, None], [False, None, None]),  # failed at turn 2: stops there
        ([False, None, True], [False, None, None]),
        ([None, True, True], [None, None, None]),
        ([], []),
    ],
)
def test_carry_forward(vec, expected):
    assert carry_forward(vec) == expected


# --------------------------------------------------------------------------- accuracy rows


def _static(model, set_id, short, correct, approach="base"):
    return {"model": model, "approach": approach, "task": "static", "set_id": set_id, "short": short, "correct": correct}


def _dynamic(model, set_id, short, correct, approach="base"):
    return {"model": model, "approach": approach, "task": "dynamic", "set_id": set_id, "short": short, "correct": correct}


def test_accuracy_rows_by_hand():
    recs = [
        # static: short 2/3 right, long 1/2 right, one failed (long) set
        _static("m", 1, True, True),
        _static("m", 2, True, False),
        _static("m", 3, True, True),
        _static("m", 4, False, True),
        _static("m", 5, False, False),
        _static("m", 6, False, None),
        # dynamic, not yet carried forward
        _dynamic("m", 1, True, [False, True, False]),  # -> F T T
        _dynamic("m", 2, True, [True, None, None]),  # -> T T T
        _dynamic("m", 3, True, [False, False, False]),
        _dynamic("m", 4, False, [False, False, True]),
        _dynamic("m", 5, False, [False, None, None]),  # failed at 2: counts for attempt 1 only
        _dynamic("m", 6, False, None),  # failed wholly
    ]
    [row] = accuracy_rows(recs)
    assert row["model"] == "m" and row["approach"] == "base"
    assert row["static_short"] == 66.7  # 2/3
    assert row["static_long"] == 50.0  # 1/2
    assert row["static_all"] == 60.0  # 3/5
    assert (row["n_static"], row["failed_static"]) == (5, 1)
    # attempt 1: short 1/3 (set 2), long 0/2 (sets 4, 5)
    assert (row["dynamic_1_short"], row["dynamic_1_long"], row["dynamic_1_all"]) == (33.3, 0.0, 20.0)
    # attempt 2: short 2/3, long 0/1 (set 4 only)
    assert (row["dynamic_2_short"], row["dynamic_2_long"], row["dynamic_2_all"]) == (66.7, 0.0, 50.0)
    # attempt 3: short 2/3, long 1/1
    assert (row["dynamic_3_short"], row["dynamic_3_long"], row["dynamic_3_all"]) == (66.7, 100.0, 75.0)
    assert (row["n_dynamic"], row["failed_dynamic"]) == (4, 2)
    assert list(row) == ["model", "approach", *ACCURACY_COLUMNS, "n_static", "n_dynamic", "failed_static", "failed_dynamic"]


def test_accuracy_rows_carried_input_gives_the_same():
    raw = [_dynamic("m", i, True, v) for i, v in enumerate([[False, True, False], [True, False, None]])]
    carried = [_dynamic("m", i, True, carry_forward(v)) for i, v in enumerate([[False, True, False], [True, False, None]])]
    assert accuracy_rows(raw) == accuracy_rows(carried)
    assert accuracy_rows(raw)[0]["dynamic_3_all"] == 100.0


def test_accuracy_rows_order_and_missing_data():
    recs = [
        _static("b", 1, True, True, approach="self_refine"),
        _static("a", 1, True, False),
        _dynamic("b", 1, True, [True, True, True], approach="self_refine"),
        _static("b", 1, True, False),  # same model, other approach
        _static("a", 2, False, None),
    ]
    rows = accuracy_rows(recs)
    assert [(r["model"], r["approach"]) for r in rows] == [("b", "self_refine"), ("a", "base"), ("b", "base")]
    sr = rows[0]
    assert sr["static_short"] == 100.0 and sr["static_long"] is None and sr["dynamic_1_long"] is None
    assert sr["dynamic_3_short"] == 100.0
    a = rows[1]
    assert a["static_short"] == 0.0 and a["static_long"] is None  # the only long set failed
    assert a["dynamic_1_all"] is None and a["n_dynamic"] == 0 and a["failed_static"] == 1
    assert accuracy_rows([]) == []


def test_accuracy_rows_rejects_bad_records():
    with pytest.raises(ValueError, match="duplicate"):
        accuracy_rows([_static("m", 1, True, True), _static("m", 1, True, False)])
    with pytest.raises(ValueError, match="task"):
        accuracy_rows([{**_static("m", 1, True, True), "task": "dynamic_1"}])
    with pytest.raises(ValueError):
        accuracy_rows([_dynamic("m", 1, True, [True, False])])
    with pytest.raises(ValueError):
        accuracy_rows([_static("m", 1, True, [True])])


# --------------------------------------------------------------------------- AutoBencher


def test_difficulty_matches_the_paper():
    assert difficulty(STATIC_ALL) == pytest.approx(0.422)  # percent, divided by 100
    assert difficulty([x / 100 for x in STATIC_ALL]) == pytest.approx(0.422)
    assert difficulty([1.0, 0.5]) == 0.0
    with pytest.raises(ValueError):
        difficulty([])


def test_separability_by_hand():
    # mean 29.44; |deviations| 28.36, 16.36, 7.24, 17.44, 20.04 -> 89.44 / 5
    assert separability(STATIC_ALL) == pytest.approx(17.888)
    assert separability([x / 100 for x in STATIC_ALL]) == pytest.approx(0.17888)
    # (the paper prints 0.183 for GuessBench; its Table 2 accuracies give 0.179)
    assert separability([0.5, 0.5, 0.5]) == 0.0
    assert separability([0.0, 1.0]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "a, b, rho",
    [
        ([1, 2, 3, 4], [10, 20, 30, 40], 1.0),
        ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
        ([1, 2, 3], [1, 4, 9], 1.0),  # monotone, not linear
    ],
)
def test_spearman_simple(a, b, rho):
    assert spearman(a, b) == pytest.approx(rho)


def test_spearman_ties_average_ranks():
    # b = 5, 6, 7, 8, 7 ranks 1, 2, 3.5, 5, 3.5 (the two 7s share 3.5); a ranks 1..5
    # centred: a (-2, -1, 0, 1, 2), b (-2, -1, .5, 2, .5)
    # cov = 4 + 1 + 0 + 2 + 1 = 8; sa = 10; sb = 4 + 1 + .25 + 4 + .25 = 9.5
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / (10 * 9.5) ** 0.5)


def test_spearman_ties_on_both_sides():
    # a ranks 1.5, 1.5, 3, 4; b ranks 1, 2.5, 2.5, 4 -> centred (-1, -1, .5, 1.5), (-1.5, 0, 0, 1.5)
    # cov = 1.5 + 0 + 0 + 2.25 = 3.75; sa = 1 + 1 + .25 + 2.25 = 4.5; sb = 2.25 + 2.25 = 4.5
    assert spearman([1, 1, 2, 3], [0, 5, 5, 9]) == pytest.approx(3.75 / 4.5)


def test_spearman_undefined():
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    assert spearman([1, 2, 3], [2, 2, 2]) is None
    assert spearman([1], [2]) is None
    assert spearman([], []) is None
    with pytest.raises(ValueError):
        spearman([1, 2], [1, 2, 3])


def _det3(m):
    return (
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    )


def _ols_two_columns_exact(v, x1, x2):
    """The fit of v on (1, x1, x2) from the normal equations, solved in exact fractions by Cramer's rule."""
    v = [Fraction(str(t)) for t in v]
    cols = [[Fraction(1)] * len(v), [Fraction(str(t)) for t in x1], [Fraction(str(t)) for t in x2]]
    ata = [[sum(a * b for a, b in zip(ci, cj)) for cj in cols] for ci in cols]
    atv = [sum(a * b for a, b in zip(ci, v)) for ci in cols]
    d = _det3(ata)
    beta = []
    for k in range(3):
        m = [row[:] for row in ata]
        for r in range(3):
            m[r][k] = atv[r]
        beta.append(_det3(m) / d)
    return [float(beta[0] + beta[1] * a + beta[2] * b) for a, b in zip(cols[1], cols[2])]


def test_least_squares_more_models_than_columns_against_exact_solution():
    # the paper's own novelty setting: MMBench and AI2D as the earlier benchmarks (5 models, 3 parameters)
    x_ai2d = [r[0] for r in EARLIER]
    x_mmb = [r[1] for r in EARLIER]
    expected = _ols_two_columns_exact(STATIC_ALL, x_mmb, x_ai2d)
    fit = least_squares_fit(STATIC_ALL, [[b, a] for a, b in zip(x_ai2d, x_mmb)])
    assert fit == pytest.approx(expected, abs=1e-9)
    # not an exact fit, and the residual sums to zero (the intercept)
    assert max(abs(f - v) for f, v in zip(fit, STATIC_ALL)) > 1.0
    assert sum(f - v for f, v in zip(fit, STATIC_ALL)) == pytest.approx(0.0, abs=1e-9)


def test_novelty_paper_setting_by_hand():
    x = [[r[1], r[0]] for r in EARLIER]  # MMBench, AI2D
    fit = _ols_two_columns_exact(STATIC_ALL, [r[0] for r in x], [r[1] for r in x])
    # fit ~ 26.78, 40.14, 24.44, 23.97, 31.87: ranks 3, 5, 2, 1, 4; accuracy ranks 5, 4, 3, 2, 1
    rank_fit = [sorted(fit).index(f) + 1 for f in fit]
    assert rank_fit == [3, 5, 2, 1, 4]
    d2 = sum((a - b) ** 2 for a, b in zip(rank_fit, [5, 4, 3, 2, 1]))  # 4 + 1 + 1 + 1 + 9 = 16
    rho = 1 - 6 * d2 / (5 * (5**2 - 1))  # no ties: the classical formula, 0.2
    assert novelty(STATIC_ALL, x) == pytest.approx(1 - rho) == pytest.approx(0.8)
    # scale-free: fractions and mixed column scales give the same
    assert novelty([v / 100 for v in STATIC_ALL], [[a / 100, b] for a, b in x]) == pytest.approx(0.8)


def test_novelty_table8_fit_is_exact():
    # 5 models, 4 benchmarks + intercept: as many parameters as models, so v_hat = v
    fit = least_squares_fit(STATIC_ALL, EARLIER)
    assert fit == pytest.approx(STATIC_ALL, abs=1e-8)
    assert novelty(STATIC_ALL, EARLIER) == pytest.approx(0.0)


def test_least_squares_exact_line_and_rank_deficiency():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    v = [3 + 2 * t for t in x]
    assert least_squares_fit(v, [[t] for t in x]) == pytest.approx(v)
    # a noisy line: slope and intercept by hand, Sxy / Sxx with mean x 3.5
    v = [5.0, 7.5, 8.5, 11.0, 13.5, 15.0]
    mx, mv = 3.5, sum(v) / 6
    slope = sum((a - mx) * (b - mv) for a, b in zip(x, v)) / sum((a - mx) ** 2 for a in x)
    expected = [mv + slope * (a - mx) for a in x]
    assert least_squares_fit(v, [[t] for t in x]) == pytest.approx(expected)
    # a repeated column, a multiple of it, and a constant column add nothing
    assert least_squares_fit(v, [[t, 2 * t, 7.0, t] for t in x]) == pytest.approx(expected)
    # no earlier benchmark: the intercept alone, i.e. the mean, so novelty is undefined
    assert least_squares_fit(v, [[] for _ in x]) == pytest.approx([mv] * 6)
    assert novelty(v, [[] for _ in x]) is None
    with pytest.raises(ValueError):
        least_squares_fit(v, [[t] for t in x[:5]])
    with pytest.raises(ValueError):
        least_squares_fit(v, [[t] for t in x[:5]] + [[1.0, 2.0]])


def test_novelty_fit_ties_by_rounding_are_ties():
    # v is exactly the earlier column, whose first two values differ only by rounding error:
    # the fit ties them as v does, so novelty is 0, not a spurious rank difference
    x = [[0.1 + 0.2], [0.3], [0.5], [0.1]]
    assert x[0][0] != x[1][0]
    v = [0.3, 0.3, 0.5, 0.1]
    fit = least_squares_fit(v, x)
    assert spearman(fit, v) != pytest.approx(1.0)  # the raw fit breaks the tie
    assert novelty(v, x) == pytest.approx(0.0)


# --------------------------------------------------------------------------- CSV and autobencher


def _write_table8(path, models=MODELS, rows=EARLIER):
    lines = ["model," + ",".join(EARLIER_NAMES)]
    lines += [m + "," + ",".join(str(x) for x in r) for m, r in zip(models, rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_read_earlier_accuracies(tmp_path):
    p = _write_table8(tmp_path / "earlier.csv")
    names, rows = read_earlier_accuracies(p, list(reversed(MODELS)))
    assert names == EARLIER_NAMES
    assert rows == list(reversed(EARLIER))
    names, rows = read_earlier_accuracies(p, ["Qwen2.5VL-72B"])  # other rows are ignored
    assert rows == [EARLIER[3]]


def test_read_earlier_accuracies_errors(tmp_path):
    with pytest.raises(DataError, match="cannot open") as ei:
        read_earlier_accuracies(tmp_path / "nope.csv", MODELS)
    assert ei.value.path.endswith("nope.csv")

    p = _write_table8(tmp_path / "e.csv")
    with pytest.raises(DataError) as ei:
        read_earlier_accuracies(p, [*MODELS, "GPT-5"])
    assert ei.value.column == "model" and "GPT-5" in str(ei.value)

    rows = [r[:] for r in EARLIER]
    rows[2][2] = "n/a"
    p = _write_table8(tmp_path / "bad.csv", rows=rows)
    with pytest.raises(DataError) as ei:
        read_earlier_accuracies(p, MODELS)
    assert ei.value.column == "MathVista"
    assert ei.value.row == "3 (model InternVL2.5-78B-MPO)"
    assert "bad.csv, row 3 (model InternVL2.5-78B-MPO), column 'MathVista'" in str(ei.value)

    p = tmp_path / "short.csv"
    p.write_text("model,AI2D,MMBench\nGPT-4o,84.9\n", encoding="utf-8")
    with pytest.raises(DataError) as ei:
        read_earlier_accuracies(p, ["GPT-4o"])
    assert ei.value.row == 1

    p = tmp_path / "dup.csv"
    p.write_text("model,AI2D\nGPT-4o,84.9\nGPT-4o,80\n", encoding="utf-8")
    with pytest.raises(DataError, match="repeated model"):
        read_earlier_accuracies(p, ["GPT-4o"])

    p = tmp_path / "head.csv"
    p.write_text("name,AI2D\nGPT-4o,84.9\n", encoding="utf-8")
    with pytest.raises(DataError, match="'model'"):
        read_earlier_accuracies(p, ["GPT-4o"])

    p = tmp_path / "empty.csv"
    p.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty"):
        read_earlier_accuracies(p, ["GPT-4o"])

    p = tmp_path / "inf.csv"
    p.write_text("model,AI2D\nGPT-4o,inf\n", encoding="utf-8")
    with pytest.raises(DataError, match="not a number"):
        read_earlier_accuracies(p, ["GPT-4o"])


def test_autobencher(tmp_path):
    acc = dict(zip(MODELS, STATIC_ALL))
    out = autobencher(acc, None)
    assert out["models"] == MODELS
    assert out["difficulty"] == pytest.approx(0.422)
    assert out["separability"] == pytest.approx(0.17888)  # on fractions
    assert out["novelty"] is None and out["benchmarks"] == []

    p = tmp_path / "e.csv"
    p.write_text(
        "\ufeffmodel,MMBench,AI2D\n" + "".join(f"{m},{r[1]},{r[0]}\n" for m, r in zip(MODELS, EARLIER)),
        encoding="utf-8",
    )
    out = autobencher(acc, p)
    assert out["benchmarks"] == ["MMBench", "AI2D"]
    assert out["novelty"] == pytest.approx(0.8)
    frac = autobencher({m: a / 100 for m, a in acc.items()}, p)
    for k in ("difficulty", "separability", "novelty"):
        assert frac[k] == pytest.approx(out[k])

    out = autobencher(acc, _write_table8(tmp_path / "t8.csv"))
    assert out["benchmarks"] == EARLIER_NAMES and out["novelty"] == pytest.approx(0.0)
