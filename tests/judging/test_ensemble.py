"""A panel's ensemble: the judges' mean verdict (default) against a hand example, the majority
option, and the mean's Reward against the judges' own (Reward is linear in the verdicts)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from judgekit.judging.agreement import mean_score
from judgekit.judging.ensemble import EnsembleOptions, ensemble_summary, pairwise_rule
from judgekit.judging.pairwise import ENSEMBLE_JUDGE, ensemble_records, item_sums, summarize


def _rec(judge, index, order, score, repeat=None):
    r = {"model": "m", "judge": judge, "index": index, "task": "t", "category": "c", "kind": "pairwise",
         "order": order, "score": score, "error_kind": None if score is not None else "parse_failure"}
    if repeat is not None:
        r["repeat"] = repeat
    return r


# (index, order): judge A's verdict, judge B's verdict
HAND = {("1", 0): (2, 1), ("1", 1): (1, -1), ("2", 0): (-1, -2), ("2", 1): (None, 1)}


def _hand_records():
    return [_rec(j, i, o, v[k]) for (i, o), v in HAND.items() for k, j in enumerate("AB")]


def _overall(rows):
    return next(r for r in rows if r["level"] == "overall")


def test_mean_ensemble_by_hand():
    ens = ensemble_records(_hand_records(), pairwise_rule=pairwise_rule("mean"), score_rule=mean_score)
    assert [r["score"] for r in ens] == [1.5, 0.0, -1.5, 1.0]
    assert all(r["judge"] == ENSEMBLE_JUDGE and r["averaged"] for r in ens)
    row = _overall(summarize(ens))
    # Reward = 50 x mean(1.5, 0, -1.5, 1) = 12.5; wins: 1.5 and 1.0 of 4
    assert row["reward"] == pytest.approx(12.5)
    assert row["win_rate"] == pytest.approx(50.0)
    assert (row["much_better"], row["better"], row["tie"], row["worse"], row["much_worse"], row["fail"]) == \
        (1, 1, 1, 0, 1, 0)
    sums = item_sums(ens)
    assert sums[("m", "1")][:3] == [0.0 + 75.0, 100.0, 2.0]  # 50 x (1.5 + 0), one win, two valid


def test_majority_option_by_hand():
    ens = ensemble_records(_hand_records(), pairwise_rule=pairwise_rule("majority"), score_rule=mean_score)
    # two judges disagree: the median rounded toward 0; one valid verdict: itself
    assert [r["score"] for r in ens] == [1, 0, -1, 1]
    assert not any(r.get("averaged") for r in ens)
    row = _overall(summarize(ens))
    assert row["reward"] == pytest.approx(12.5)
    assert row["tie"] == 1 and row["win_rate"] == pytest.approx(50.0)


def test_two_judges_mean_ties_only_where_they_cancel():
    # the case: two judges who differ by one step; majority makes ties, the mean does not
    recs = [_rec("A", str(i), 0, 1) for i in range(8)] + [_rec("B", str(i), 0, 2 if i % 2 else 0) for i in range(8)]
    maj = _overall(summarize(ensemble_records(recs, pairwise_rule=pairwise_rule("majority"), score_rule=mean_score)))
    mean = _overall(summarize(ensemble_records(recs, pairwise_rule=pairwise_rule("mean"), score_rule=mean_score)))
    # majority: (1, 2) -> 1, (1, 0) -> the median 0.5 rounded toward 0: a tie neither judge gave
    assert maj["tie"] == 4 and maj["win_rate"] == 50.0
    assert mean["tie"] == 0 and mean["win_rate"] == 100.0
    assert mean["reward"] == pytest.approx(50.0 * (4 * 1.5 + 4 * 0.5) / 8)


def test_repeats_are_ensembled_apart():
    recs = [_rec("A", "1", 0, 2, repeat=0), _rec("B", "1", 0, 0, repeat=0),
            _rec("A", "1", 0, -2, repeat=1), _rec("B", "1", 0, 0, repeat=1)]
    ens = ensemble_records(recs, pairwise_rule=pairwise_rule("mean"), score_rule=mean_score)
    assert [(r["repeat"], r["score"]) for r in ens] == [(0, 1.0), (1, -1.0)]


def test_options_and_summary():
    assert EnsembleOptions().ensemble == "mean"
    assert EnsembleOptions(ensemble="majority").ensemble == "majority"
    with pytest.raises(ValidationError):
        EnsembleOptions(ensemble="median")
    with pytest.raises(ValueError):
        pairwise_rule("median")
    s = ensemble_summary("mean", [], vfs=True)
    assert s["rule"] == "mean/mean" and s["rules"] == {"pairwise verdict": "mean", "vfs": "mean"}
    assert "> 0" in s["description"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from((-2, -1, 0, 1, 2)), st.sampled_from((-2, -1, 0, 1, 2)),
                          st.sampled_from((-2, -1, 0, 1, 2))), min_size=1, max_size=30))
def test_mean_reward_is_the_judges_mean_reward(verdicts):
    """With every judgment valid, the mean ensemble's Reward is the mean of the judges' Rewards,
    and its win rate counts the items whose verdicts sum above 0 (an independent count)."""
    recs = [_rec(j, str(i), 0, v[k]) for i, v in enumerate(verdicts) for k, j in enumerate("ABC")]
    ens = _overall(summarize(ensemble_records(recs, pairwise_rule=pairwise_rule("mean"), score_rule=mean_score)))
    per_judge = [_overall(summarize([r for r in recs if r["judge"] == j]))["reward"] for j in "ABC"]
    assert ens["reward"] == pytest.approx(sum(per_judge) / 3)
    assert ens["win_rate"] == pytest.approx(100.0 * sum(sum(v) > 0 for v in verdicts) / len(verdicts))
    assert ens["tie"] == sum(sum(v) == 0 for v in verdicts)
    counts = [ens[k] for k in ("much_better", "better", "tie", "worse", "much_worse")]
    assert sum(counts) == len(verdicts) and ens["much_better"] == sum(sum(v) >= 4.5 for v in verdicts)
