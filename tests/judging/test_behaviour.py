"""How a pairwise judge behaves (judgekit.judging.behaviour): swap consistency, first-slot
preference, ties, length correlation and parse failures on hand-made judgments, a judge that
always prefers slot A, a position-blind judge, and properties over any judgments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging.behaviour import pairwise_behaviour

PROPS = settings(max_examples=50, deadline=None, derandomize=True, database=None)


def _j(item, order, score, length_diff=None):
    return {"item": item, "order": order, "score": score, "length_diff": length_diff}


# (item, order, candidate's verdict after the swap is undone, candidate minus baseline length)
HAND = [
    _j("a", 0, 1, 100), _j("a", 1, 2, 100),  # same direction, not the same verdict
    _j("b", 0, -1, -50), _j("b", 1, 1, -50),  # flips with the swap
    _j("c", 0, 0, 0), _j("c", 1, 0, 0),  # a tie both ways
    _j("d", 0, 2, 300), _j("d", 1, None, 300),  # the swapped order failed to parse
    _j("e", 0, -2, -200),  # judged in one order only
]


def _ranks(xs):
    """Average ranks (1-based), ties sharing their mean rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _spearman(xs, ys):
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5


def test_hand_made_judgments():
    b = pairwise_behaviour(HAND)
    # first slot: a1 (candidate first, +2), b0 (baseline first, -1), b1 (+1), e0 (-2) won by the first
    # slot; a0 (+1) and d0 (+2) by the second; c's two ties decide nothing
    valid = [r for r in HAND if r["score"] is not None]
    expected_rho = _spearman([r["length_diff"] for r in valid], [r["score"] for r in valid])
    assert b == {
        "judgments": 9, "parse_failures": 1, "parse_failure_rate": 1 / 9,
        "items_both_orders": 3, "swap_consistency": 2 / 3, "swap_exact": 1 / 3,
        "first_slot_preference": 4 / 6, "first_slot_wins": 4, "second_slot_wins": 2,
        "tie_rate": 2 / 8, "length_correlation": pytest.approx(expected_rho), "length_pairs": 8,
    }
    assert expected_rho > 0.8  # the longer answer wins here


def test_a_judge_that_always_prefers_slot_a():
    records = []
    for i in range(12):
        strength = 1 + i % 2
        records.append(_j(i, 0, -strength, 10 * i))  # the baseline sits in slot A and wins
        records.append(_j(i, 1, strength, 10 * i))  # the candidate sits in slot A and wins
    b = pairwise_behaviour(records)
    assert b["first_slot_preference"] == 1.0 and b["second_slot_wins"] == 0
    assert b["swap_consistency"] == 0.0 and b["swap_exact"] == 0.0
    assert b["tie_rate"] == 0.0 and b["parse_failure_rate"] == 0.0
    assert b["items_both_orders"] == 12
    # the verdict follows the slot, not the length
    assert b["length_correlation"] == pytest.approx(0.0, abs=1e-12)


def test_a_position_blind_judge():
    verdicts = [2, 1, -1, -2, 1, -1]  # the same in both orders
    records = [_j(i, o, v, 5 * v) for i, v in enumerate(verdicts) for o in (0, 1)]
    b = pairwise_behaviour(records)
    assert b["swap_consistency"] == b["swap_exact"] == 1.0
    assert b["first_slot_preference"] == 0.5
    assert b["length_correlation"] == pytest.approx(1.0)


def test_undefined_figures_are_none():
    empty = pairwise_behaviour([])
    assert empty["judgments"] == 0
    for name in ("parse_failure_rate", "swap_consistency", "swap_exact", "first_slot_preference", "tie_rate",
                 "length_correlation"):
        assert empty[name] is None, name
    failed = pairwise_behaviour([_j("a", 0, None), _j("a", 1, None)])
    assert failed["parse_failure_rate"] == 1.0 and failed["items_both_orders"] == 0
    assert failed["tie_rate"] is None and failed["first_slot_preference"] is None
    ties = pairwise_behaviour([_j("a", 0, 0, 3), _j("a", 1, 0, -3), _j("b", 0, 0, 1)])
    assert ties["tie_rate"] == 1.0 and ties["first_slot_preference"] is None and ties["swap_consistency"] == 1.0
    assert ties["length_correlation"] is None  # the verdict never varies
    # no length given, or too few pairs: no correlation
    assert pairwise_behaviour([_j("a", 0, 1), _j("b", 0, -1), _j("c", 0, 2)])["length_correlation"] is None
    assert pairwise_behaviour([_j("a", 0, 1, 1), _j("b", 0, -1, 2)])["length_correlation"] is None


def test_order_defaults_to_the_baseline_first():
    assert pairwise_behaviour([{"item": "a", "score": -1}]) == pairwise_behaviour([_j("a", 0, -1)])


_verdict = st.one_of(st.none(), st.integers(-2, 2))
_records = st.dictionaries(st.tuples(st.integers(0, 15), st.integers(0, 1)),
                           st.tuples(_verdict, st.one_of(st.none(), st.integers(-500, 500))), max_size=30)


def _as_records(d):
    return [_j(item, order, s, ld) for (item, order), (s, ld) in d.items()]


@PROPS
@given(_records, st.randoms(use_true_random=False))
def test_figures_are_shares_and_order_free(d, rnd):
    records = _as_records(d)
    b = pairwise_behaviour(records)
    for name in ("parse_failure_rate", "swap_consistency", "swap_exact", "first_slot_preference", "tie_rate"):
        assert b[name] is None or 0.0 <= b[name] <= 1.0, (name, b[name])
    assert b["length_correlation"] is None or -1.0 - 1e-12 <= b["length_correlation"] <= 1.0 + 1e-12
    assert b["swap_exact"] is None or b["swap_exact"] <= b["swap_consistency"]
    valid = [r for r in records if r["score"] is not None]
    ties = sum(r["score"] == 0 for r in valid)
    assert b["first_slot_wins"] + b["second_slot_wins"] + ties + b["parse_failures"] == b["judgments"] == len(records)
    both = {r["item"] for r in valid if r["order"] == 0} & {r["item"] for r in valid if r["order"] == 1}
    assert b["items_both_orders"] == len(both)
    shuffled = list(records)
    rnd.shuffle(shuffled)
    again = pairwise_behaviour(shuffled)
    rho, rho2 = b.pop("length_correlation"), again.pop("length_correlation")
    assert again == b
    assert (rho is None) == (rho2 is None) and (rho is None or rho == pytest.approx(rho2, abs=1e-12))


@PROPS
@given(_records)
def test_mirroring_the_slots_keeps_the_figures(d):
    # the same judge seen from the other side: every verdict negated and the orders exchanged
    # (the candidate becomes the baseline) keeps which slot won, so every share is the same
    records = _as_records(d)
    mirrored = [_j(r["item"], 1 - r["order"], None if r["score"] is None else -r["score"],
                   None if r["length_diff"] is None else -r["length_diff"]) for r in records]
    a, b = pairwise_behaviour(records), pairwise_behaviour(mirrored)
    rho, rho2 = a.pop("length_correlation"), b.pop("length_correlation")
    assert a == b
    assert (rho is None) == (rho2 is None) and (rho is None or rho == pytest.approx(rho2, abs=1e-9))
