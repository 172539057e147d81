"""Pairwise Reward / Win Rate / VFS metrics, checked against the paper's Table 5."""

from __future__ import annotations

import pytest

from judgekit.judging.pairwise import (
    NO_VFS,
    pairwise_counts,
    pairwise_reward,
    parse_ok_rate,
    summarize,
    vfs_mean,
    win_rate,
)


def _scores(mb: int, b: int, tie: int, w: int, mw: int, fail: int) -> list[int | None]:
    return [2] * mb + [1] * b + [0] * tie + [-1] * w + [-2] * mw + [None] * fail


# Table 5 of the supplementary: counts over 2 x 765 judgments -> Reward, Win Rate
@pytest.mark.parametrize(
    "model, counts, reward, wr",
    [
        ("Gemini-2.0-pro-exp", (9, 400, 898, 163, 59, 1), 4.48, 26.75),
        ("Gemini-1.5-pro-002", (6, 168, 1032, 300, 24, 0), -5.49, 11.37),
        ("Claude-3.5-Sonnet", (4, 188, 843, 321, 174, 0), -15.46, 12.55),
        ("Moonshot-v1-32k-vision", (1, 92, 822, 500, 111, 4), -20.58, 6.09),
        ("LLaVA-OneVision-72B", (0, 26, 448, 842, 194, 20), -39.87, 1.72),
    ],
)
def test_table5(model, counts, reward, wr):
    scores = _scores(*counts)
    assert len(scores) == 1530
    assert round(pairwise_reward(scores), 2) == reward
    assert round(win_rate(scores), 2) == wr


def test_gemini_counts_and_parse_ok():
    scores = _scores(9, 400, 898, 163, 59, 1)
    assert pairwise_counts(scores) == {
        "much_better": 9, "better": 400, "tie": 898, "worse": 163, "much_worse": 59, "fail": 1,
    }
    assert win_rate(scores) == pytest.approx(409 / 1529 * 100)
    assert pairwise_reward(scores) == pytest.approx(6850 / 1529)
    assert parse_ok_rate(scores) == pytest.approx(1529 / 1530)


def test_empty_and_all_failed():
    assert pairwise_reward([]) is None and win_rate([]) is None and parse_ok_rate([]) is None
    assert pairwise_reward([None, None]) is None and win_rate([None]) is None
    assert parse_ok_rate([None, None]) == 0.0
    assert vfs_mean([None]) is None and vfs_mean([]) is None


def test_bad_scores_are_rejected():
    for bad in (3, -3, "2", True, 0.5):
        with pytest.raises(ValueError):
            pairwise_counts([bad])


def test_vfs_mean_skips_failures():
    assert vfs_mean([8, None, 6.5, 10]) == pytest.approx(24.5 / 3)


def _rec(model, task, category, order, score, vfs=NO_VFS, **kw):
    return {"model": model, "task": task, "category": category, "order": order, "score": score, "vfs": vfs, **kw}


def test_summarize_pools_both_orders_not_per_item_average():
    # item 1: forward +2, swapped failed; item 2: 0 and 0
    recs = [
        _rec("m", "t1", "C", 0, 2, vfs=9.0),
        _rec("m", "t1", "C", 1, None, vfs=None),
        _rec("m", "t2", "C", 0, 0, vfs=7.0),
        _rec("m", "t2", "C", 1, 0, vfs=8.0),
    ]
    rows = {(r["level"], r["group"]): r for r in summarize(recs)}
    overall = rows[("overall", "overall")]
    # pooled: valid scores [2, 0, 0] -> 50 * 2/3; averaging per item first would give 50 * (2 + 0)/2 = 50
    assert overall["reward"] == pytest.approx(100 / 3)
    assert overall["reward"] != pytest.approx(50.0)
    assert overall["win_rate"] == pytest.approx(100 / 3)
    assert overall["fail"] == 1 and overall["n_pairwise"] == 4
    assert overall["pairwise_parse_ok"] == pytest.approx(0.75)
    assert overall["vfs"] == pytest.approx(8.0) and overall["vfs_fail"] == 1 and overall["n_vfs"] == 4
    assert overall["vfs_parse_ok"] == pytest.approx(0.75)
    assert rows[("task", "t1")]["reward"] == pytest.approx(100.0)
    assert rows[("category", "C")]["reward"] == overall["reward"]


def test_summarize_groups_models_tasks_categories_and_skips_no_vfs():
    recs = [
        _rec("a", "t1", "LW", 0, 1),  # no VFS judgment for this item
        _rec("a", "t2", "CMU", 0, -2, vfs=4.0, vfs_ref=8.0),
        _rec("b", "t1", "LW", 0, 0, vfs=5.0),
    ]
    rows = summarize(recs)
    keys = [(r["model"], r["level"], r["group"]) for r in rows]
    assert keys == [
        ("a", "task", "t1"), ("a", "task", "t2"),
        ("a", "category", "CMU"), ("a", "category", "LW"),
        ("a", "overall", "overall"),
        ("b", "task", "t1"), ("b", "category", "LW"), ("b", "overall", "overall"),
    ]
    a_t1 = rows[0]
    assert a_t1["n_vfs"] == 0 and a_t1["vfs"] is None and a_t1["vfs_parse_ok"] is None
    a_all = rows[4]
    assert a_all["reward"] == pytest.approx(-25.0) and a_all["vfs"] == 4.0 and a_all["vfs_ref"] == 8.0


def test_summarize_kind_records():
    # one record per judge call, as a pipeline writes them
    recs = [
        {"model": "m", "task": "t", "category": "C", "order": 0, "kind": "pairwise", "score": 1, "vfs": None},
        {"model": "m", "task": "t", "category": "C", "order": 1, "kind": "pairwise", "score": -1, "vfs": None},
        {"model": "m", "task": "t", "category": "C", "order": 0, "kind": "vfs", "score": None, "vfs": 6.0},
        {"model": "m", "task": "t", "category": "C", "order": 1, "kind": "vfs", "score": None, "vfs": None},
    ]
    overall = summarize(recs, levels=("overall",))[0]
    assert overall["n_pairwise"] == 2 and overall["fail"] == 0 and overall["reward"] == 0.0
    assert overall["n_vfs"] == 2 and overall["vfs_fail"] == 1 and overall["vfs"] == 6.0


# --------------------------------------------------------------------------- per-item sums, ensemble

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from judgekit.judging.agreement import majority, mean_score  # noqa: E402
from judgekit.judging.pairwise import ENSEMBLE_JUDGE, FIGURE_SUMS, SUM_COLUMNS, ensemble_records, item_sums  # noqa: E402

_SCORE = st.sampled_from([2, 1, 0, -1, -2, None])
_VFS = st.one_of(st.none(), st.just(NO_VFS), st.integers(0, 20).map(lambda v: v / 2))


@st.composite
def _kind_records(draw):
    out = []
    for model in draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True)):
        for index in range(draw(st.integers(1, 5))):
            task, category = f"t{index % 3}", f"C{index % 2}"
            for order in (0, 1):
                out.append({"model": model, "index": str(index), "task": task, "category": category, "order": order,
                            "kind": "pairwise", "score": draw(_SCORE)})
                if index % 3:
                    v = draw(_VFS)
                    ref = draw(st.integers(0, 20).map(lambda x: x / 2)) if isinstance(v, float) else None
                    out.append({"model": model, "index": str(index), "task": task, "category": category,
                                "order": order, "kind": "vfs", "score": None, "vfs": v, "vfs_ref": ref})
    return out


@settings(max_examples=60, deadline=None)
@given(_kind_records())
def test_item_sums_add_up_to_the_summarized_figures(records):
    sums = item_sums(records)
    col = {c: i for i, c in enumerate(SUM_COLUMNS)}
    for row in summarize(records):
        items = [s for (m, idx), s in sums.items() if m == row["model"]
                 and (row["level"] == "overall" or any(r["index"] == idx and r["model"] == m
                                                       and r[row["level"]] == row["group"] for r in records))]
        for figure, (num, den) in FIGURE_SUMS.items():
            n, d = sum(s[col[num]] for s in items), sum(s[col[den]] for s in items)
            if row[figure] is None:
                assert d == 0
            else:
                assert n / d == pytest.approx(row[figure], abs=1e-12)


def _j(judge, model, index, kind, order, **kw):
    return {"judge": judge, "model": model, "index": index, "task": "t", "category": "C", "kind": kind,
            "order": order, "score": None, "vfs": None, "vfs_ref": None, "error_kind": None, "length_diff": 5, **kw}


def test_ensemble_records_by_hand():
    recs = [
        # pairwise, order 0: +2, +1, +1 -> majority +1; order 1: +1, -1, failure -> a tie between two: median 0
        _j("a", "m", "1", "pairwise", 0, score=2), _j("b", "m", "1", "pairwise", 0, score=1),
        _j("c", "m", "1", "pairwise", 0, score=1),
        _j("a", "m", "1", "pairwise", 1, score=1), _j("b", "m", "1", "pairwise", 1, score=-1),
        _j("c", "m", "1", "pairwise", 1, error_kind="parse_failure"),
        # vfs: 6 and 8 (refs 4 and 5) and a failure -> 7 (ref 4.5)
        _j("a", "m", "1", "vfs", 0, vfs=6.0, vfs_ref=4.0), _j("b", "m", "1", "vfs", 0, vfs=8.0, vfs_ref=5.0),
        _j("c", "m", "1", "vfs", 0, error_kind="parse_failure"),
        # vfs left out by every judge -> left out; left out and failed -> a failure
        _j("a", "m", "1", "vfs", 1, vfs=NO_VFS, error_kind="no_objective"),
        _j("b", "m", "1", "vfs", 1, vfs=NO_VFS, error_kind="no_objective"),
        _j("a", "m", "2", "vfs", 0, vfs=NO_VFS, error_kind="no_objective"),
        _j("b", "m", "2", "vfs", 0, error_kind="parse_failure"),
        # every judge failed the same way / differently
        _j("a", "m", "2", "pairwise", 0, error_kind="candidate_failed"),
        _j("b", "m", "2", "pairwise", 0, error_kind="candidate_failed"),
        _j("a", "m", "2", "pairwise", 1, error_kind="parse_failure"), _j("b", "m", "2", "pairwise", 1, error_kind="http"),
    ]
    got = {(r["index"], r["kind"], r["order"]): r for r in
           ensemble_records(recs, pairwise_rule=majority, score_rule=mean_score)}
    assert all(r["judge"] == ENSEMBLE_JUDGE and r["model"] == "m" and r["length_diff"] == 5 for r in got.values())
    assert got[("1", "pairwise", 0)]["score"] == 1 and got[("1", "pairwise", 0)]["ok"]
    assert got[("1", "pairwise", 1)]["score"] == 0 and got[("1", "pairwise", 1)]["judges"] == 3
    v = got[("1", "vfs", 0)]
    assert (v["vfs"], v["vfs_ref"], v["ok"], v["error_kind"]) == (7.0, 4.5, True, None)
    assert got[("1", "vfs", 1)]["vfs"] == NO_VFS and got[("1", "vfs", 1)]["error_kind"] == "no_objective"
    assert got[("2", "vfs", 0)]["vfs"] is None and got[("2", "vfs", 0)]["error_kind"] == "no_valid_judgment"
    assert got[("2", "pairwise", 0)]["error_kind"] == "candidate_failed" and not got[("2", "pairwise", 0)]["ok"]
    assert got[("2", "pairwise", 1)]["error_kind"] == "no_valid_judgment"
    overall = summarize(list(got.values()), levels=("overall",))[0]
    # verdicts +1, 0 valid (2 failed); VFS 7 valid, one failure, one left out
    assert (overall["reward"], overall["fail"], overall["vfs"], overall["vfs_fail"], overall["n_vfs"]) == (25.0, 2, 7.0, 1, 2)
