"""judge_behaviour (one pass, NumPy masks) gives behaviour_row's figures exactly, per candidate and pooled."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging.behaviour_table import judge_behaviour
from judgekit.judging.pairwise import NO_VFS
from judgekit.judging.panel import ALL, behaviour_row, behaviour_rows

_record = st.fixed_dictionaries({
    "model": st.sampled_from(["m1", "m2", "m3"]),
    "index": st.sampled_from(["1", "2", "3", "4"]),
    "order": st.sampled_from([0, 1]),
    "repeat": st.sampled_from([0, 1]),
    "kind": st.sampled_from(["pairwise", "vfs", "other"]),
    "score": st.one_of(st.none(), st.integers(-2, 2), st.sampled_from([-1.5, -0.5, 0.0, 0.5, 1.0, 4 / 3])),
    "vfs": st.one_of(st.none(), st.integers(0, 10), st.just(NO_VFS)),
    "length_diff": st.one_of(st.none(), st.integers(-300, 300)),
    "error_kind": st.sampled_from([None, None, "parse_failure", "candidate_failed"]),
})


def _same(a, b) -> bool:
    return a.keys() == b.keys() and all(type(a[k]) is type(b[k]) and a[k] == b[k] for k in a)


@settings(max_examples=300, deadline=None)
@given(st.lists(_record, max_size=60))
def test_the_same_figures_as_behaviour_row(records):
    models = ["m1", "m2", "m3", "absent"]
    got = judge_behaviour(records, [*models, None])
    want = [behaviour_row([r for r in records if r["model"] == m]) for m in models] + [behaviour_row(records)]
    for g, w in zip(got, want):
        assert _same(g, w), (g, w)


def test_rows_per_judge_and_pooled():
    records = [{"model": m, "index": str(i), "order": o, "kind": "pairwise", "score": (i + o) % 5 - 2,
                "length_diff": 10 * i - 25} for m in ("a", "b") for i in range(6) for o in (0, 1)]
    rows = behaviour_rows({"j": records}, ["a", "b"])
    assert [r["model"] for r in rows] == ["a", "b", ALL]
    assert _same({k: v for k, v in rows[2].items() if k not in ("judge", "model")}, behaviour_row(records))
    assert rows[0]["items_both_orders"] == 6 and rows[0]["judgments"] == 12
