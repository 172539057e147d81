"""A judge panel's ensemble rules and agreement (judgekit.judging.agreement): Krippendorff's alpha
on Krippendorff's own worked example and against a plain-Python coincidence-matrix computation,
when it is undefined, the majority's tie rule, mean_score and full_agreement."""

from __future__ import annotations

import math
import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging.agreement import (
    ENSEMBLE_RULES,
    agreement,
    full_agreement,
    krippendorff_alpha,
    majority,
    mean_score,
)

PROPS = settings(max_examples=60, deadline=None, derandomize=True, database=None)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers,
# 12 units, values 1-5, missing values ("." = not rated; unit 12 has one value and is not pairable).
_ROWS = {
    "A": "1 2 3 3 2 1 4 1 2 . . .",
    "B": "1 2 3 3 2 2 4 1 2 5 . 3",
    "C": ". 3 3 3 2 3 4 2 2 5 1 .",
    "D": "1 2 3 3 2 4 4 1 2 5 1 .",
}
JUDGES = list(_ROWS)
# item -> judge -> value; a missing rating is a missing key (A, C) or None (B, D)
EXAMPLE: dict[str, dict[str, int | None]] = {}
for _judge, _row in _ROWS.items():
    for _u, _v in enumerate(_row.split(), start=1):
        if _v != ".":
            EXAMPLE.setdefault(f"u{_u}", {})[_judge] = int(_v)
        elif _judge in ("B", "D"):
            EXAMPLE.setdefault(f"u{_u}", {})[_judge] = None


def _reference_alpha(ratings, judges, delta) -> float:
    """Krippendorff's alpha from the coincidence matrix, in plain Python:
    alpha = 1 - (n - 1) * sum o_ck d(c, k) / sum n_c n_k d(c, k), over pairable units."""
    o: Counter = Counter()
    for per in ratings.values():
        vs = [per.get(j) for j in judges if per.get(j) is not None]
        m = len(vs)
        if m < 2:
            continue
        for i, c in enumerate(vs):
            for j, k in enumerate(vs):
                if i != j:
                    o[(c, k)] += 1 / (m - 1)
    values = sorted({c for c, _ in o})
    n_c = {c: sum(o[(c, k)] for k in values) for c in values}
    n = sum(n_c.values())
    observed = sum(o[(c, k)] * delta(c, k) for c in values for k in values)
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values)
    return 1 - (n - 1) * observed / expected


def _nominal(c, k):
    return float(c != k)


def _interval(c, k):
    return float(c - k) ** 2


def test_krippendorffs_worked_example():
    # published values: nominal .743 (as the R krippendorff package's test of this example has it),
    # ordinal .815 and ratio .797 (as the Python krippendorff package documents this example)
    assert round(krippendorff_alpha(EXAMPLE, JUDGES, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(EXAMPLE, JUDGES, "ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(EXAMPLE, JUDGES, "ratio"), 3) == 0.797
    assert round(krippendorff_alpha(EXAMPLE, JUDGES, "interval"), 3) == 0.849
    # and the coincidence-matrix formula in plain Python gives the same
    assert krippendorff_alpha(EXAMPLE, JUDGES, "nominal") == pytest.approx(_reference_alpha(EXAMPLE, JUDGES, _nominal))
    assert krippendorff_alpha(EXAMPLE, JUDGES, "interval") == pytest.approx(
        _reference_alpha(EXAMPLE, JUDGES, _interval))


def test_the_agreement_record():
    rec = agreement(EXAMPLE, JUDGES, "nominal")
    assert rec == {"judges": JUDGES, "krippendorff_alpha": krippendorff_alpha(EXAMPLE, JUDGES, "nominal"),
                   "level": "nominal", "full_agreement": 8 / 11, "items": 11}
    # units 1, 3, 4, 5, 7, 9, 10, 11 are unanimous among those who rated them; 11 units are pairable
    assert full_agreement(EXAMPLE, JUDGES) == 8 / 11


def test_alpha_undefined_is_none():
    assert krippendorff_alpha(EXAMPLE, ["A"], "nominal") is None  # one judge
    assert krippendorff_alpha({}, ["A", "B"], "interval") is None  # no items
    one_each = {"x": {"A": 1, "B": None}, "y": {"B": 2}, "z": {"A": 3}}
    assert krippendorff_alpha(one_each, ["A", "B"], "interval") is None  # nothing pairable
    assert agreement(one_each, ["A", "B"], "interval") == {
        "judges": ["A", "B"], "krippendorff_alpha": None, "level": "interval", "full_agreement": None, "items": 0}
    same = {"x": {"A": 2, "B": 2}, "y": {"A": 2, "B": 2, "C": 2}, "z": {"A": 5}}  # z's 5 is not pairable
    assert krippendorff_alpha(same, ["A", "B", "C"], "ordinal") is None  # no variation
    assert full_agreement(same, ["A", "B", "C"]) == 1.0


def test_alpha_of_right_wrong_judges():
    ratings = {f"i{k}": {"g": k % 2 == 0, "c": (k % 2 == 0) if k < 8 else (k % 2 == 1)} for k in range(10)}
    expected = _reference_alpha({i: {j: int(v) for j, v in per.items()} for i, per in ratings.items()}, ["g", "c"],
                                _nominal)
    assert krippendorff_alpha(ratings, ["g", "c"], "nominal") == pytest.approx(expected)
    assert full_agreement(ratings, ["g", "c"]) == 0.8


_values = st.integers(-2, 2)
_ratings = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3),
                           st.lists(st.one_of(st.none(), _values), min_size=1, max_size=3), min_size=1, max_size=25)


@PROPS
@given(st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), st.one_of(st.none(), _values), max_size=25),
       st.integers(2, 4), st.sampled_from(["nominal", "ordinal", "interval"]))
def test_identical_judges_agree_fully(one_judge, copies, level):
    # a panel of copies of one judge (the same ratings, the same failures)
    judges = [f"j{k}" for k in range(copies)]
    ratings = {item: {j: v for j in judges} for item, v in one_judge.items()}
    alpha = krippendorff_alpha(ratings, judges, level)
    if len({v for v in one_judge.values() if v is not None}) < 2:
        assert alpha is None  # nothing varies: undefined
    else:
        assert alpha == pytest.approx(1.0)
    assert full_agreement(ratings, judges) in (None, 1.0)


@PROPS
@given(_ratings)
def test_alpha_is_at_most_one_and_judge_order_does_not_matter(items):
    ratings = {i: {f"j{k}": v for k, v in enumerate(vs)} for i, vs in items.items()}
    a = krippendorff_alpha(ratings, ["j0", "j1", "j2"], "interval")
    b = krippendorff_alpha(ratings, ["j2", "j0", "j1"], "interval")
    assert (a is None) == (b is None)
    if a is not None:
        assert a <= 1.0 + 1e-12 and a == pytest.approx(b)
        assert a == pytest.approx(_reference_alpha(ratings, ["j0", "j1", "j2"], _interval))


# --- ensembles ----------------------------------------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    ([1, 1, -1], 1),
    ([2, 0, 0, 1], 0),
    ([1, -1], 0),  # better against worse: a tie
    ([1, 2], 1),  # median 1.5 toward 0
    ([-1, -2], -1),
    ([2, -2], 0),
    ([2, 2, -2, -2, 1], 1),  # 2 and -2 tie; the median of all five is 1
    ([-2, -1, 1, 2], 0),
    ([True, False], 0),  # right against wrong is wrong
    ([True, True, False], 1),
    ([None, 2, None], 2),
    ([None, None], None),
    ([], None),
])
def test_majority_by_hand(values, expected):
    assert majority(values) == expected


@PROPS
@given(st.lists(st.one_of(st.none(), _values), max_size=9), st.randoms(use_true_random=False))
def test_majority_rules(values, rnd):
    valid = [v for v in values if v is not None]
    result = majority(values)
    if not valid:
        assert result is None
        return
    counts = Counter(valid)
    top = max(counts.values())
    modes = [v for v, c in counts.items() if c == top]
    if len(modes) == 1:
        assert result == modes[0]  # a strict plurality wins
    else:
        assert result == math.trunc(statistics.median(valid))
    assert result in valid or result == math.trunc(statistics.median(valid))
    shuffled = list(values)
    rnd.shuffle(shuffled)
    assert majority(shuffled) == result  # the judges' order does not matter
    assert majority(valid + [None]) == result  # failures take no part
    assert majority([valid[0]] * len(valid)) == valid[0]  # unanimous


def test_mean_score():
    assert mean_score([8, None, 5]) == 6.5
    assert mean_score([True, False, True, True]) == 0.75
    assert mean_score([None]) is None and mean_score([]) is None


def test_full_agreement():
    ratings = {"a": {"x": 1, "y": 1}, "b": {"x": 1, "y": 2}, "c": {"x": 3}, "d": {"x": 0, "y": 0, "z": None}}
    assert full_agreement(ratings, ["x", "y", "z"]) == 2 / 3
    assert full_agreement(ratings, ["x"]) is None


def test_ensemble_rules_are_named():
    assert set(ENSEMBLE_RULES) == {"majority", "mean"}
    assert all(isinstance(d, str) and d for d in ENSEMBLE_RULES.values())


# --- from records to ratings, agreement rows and a score ensemble -----------------------------

from judgekit.judging.agreement import (  # noqa: E402
    POOLED,
    agreement_rows,
    by_item,
    ensemble_summary,
    panel_mean,
    ratings,
)

_RECORDS = [
    {"judge": "a", "model": "m1", "index": "1", "score": 3, "error_kind": None},
    {"judge": "b", "model": "m1", "index": "1", "score": 4, "error_kind": None},
    {"judge": "a", "model": "m2", "index": "1", "score": None, "error_kind": "parse_failure"},
    {"judge": "b", "model": "m2", "index": "1", "score": 2, "error_kind": None},
    {"judge": "a", "model": "m1", "index": "2", "score": 5, "error_kind": "no_answer"},
]


def _item(r):
    return r["model"], r["index"]


def test_ratings_from_judge_record_pairs():
    rated = ratings(((r["judge"], r) for r in _RECORDS), _item)
    assert list(rated) == [("m1", "1"), ("m2", "1"), ("m1", "2")]  # the order first seen
    assert rated[("m1", "1")] == {"a": 3, "b": 4}
    assert rated[("m2", "1")] == {"a": None, "b": 2}
    kept = ratings(((r["judge"], r) for r in _RECORDS), _item, keep=lambda r: r["error_kind"] != "no_answer",
                   value=lambda r: None if r["score"] is None else 2 * r["score"])
    assert list(kept) == [("m1", "1"), ("m2", "1")]
    assert kept[("m1", "1")] == {"a": 6, "b": 8}


def test_agreement_rows_group_by_the_items_first_key_then_pool():
    rated = {("m1", i): {"a": i, "b": i} for i in range(4)} | {("m2", i): {"a": i, "b": 3 - i} for i in range(4)}
    rows = agreement_rows(rated, ["a", "b"], "interval", quantity="q", groups=["m1", "m2", "m3"])
    assert [(r["quantity"], r["model"]) for r in rows] == [("q", "m1"), ("q", "m2"), ("q", POOLED)]
    assert rows[0]["krippendorff_alpha"] == pytest.approx(1.0)
    assert rows[1]["krippendorff_alpha"] < 0
    assert rows[2] == {"quantity": "q", "model": POOLED, **agreement(rated, ["a", "b"], "interval")}
    kept = agreement_rows(rated, ["a", "b"], "interval", quantity="q", groups=["m3"], name="system", keep_empty=True)
    assert [r["system"] for r in kept] == ["m3", POOLED] and kept[0]["items"] == 0


def test_panel_mean_in_record_or_panel_order():
    groups = by_item(_RECORDS, _item)
    assert [len(v) for v in groups.values()] == [2, 2, 1]
    assert panel_mean(groups[("m1", "1")]) == 3.5
    assert panel_mean(groups[("m2", "1")]) == 2  # a failed score takes no part
    assert panel_mean(groups[("m2", "1")], ["a"]) is None  # the panel's judges only
    assert panel_mean(groups[("m1", "1")], ["b", "c"]) == 4


def test_ensemble_summary_keys_in_order():
    assert list(ensemble_summary("mean", [])) == ["rule", "description", "results"]
    s = ensemble_summary("majority", [{"x": 1}], rules={"v": "majority"}, description="d")
    assert list(s) == ["rule", "rules", "description", "results"]
    assert s["description"] == "d" and s["results"] == [{"x": 1}]
    assert ensemble_summary("mean", [])["description"] == ENSEMBLE_RULES["mean"]
