"""The panel's agreement rows from one matrix per quantity are agreement_rows' rows over ratings(), exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.judging.agreement import agreement_rows, ratings
from judgekit.judging.pairwise import NO_VFS
from judgekit.judging.panel import QUANTITIES, _rated_item, _value, agreement_records

_record = st.fixed_dictionaries({
    "model": st.sampled_from(["m1", "m2", "m3"]),
    "index": st.sampled_from(["1", "2", "3", "4", "5"]),
    "order": st.sampled_from([0, 1]),
    "repeat": st.sampled_from([0, 0, 1]),
    "kind": st.sampled_from(["pairwise", "vfs", "other"]),
    "score": st.one_of(st.none(), st.integers(-2, 2), st.sampled_from([0.5, -4 / 3])),
    "vfs": st.one_of(st.none(), st.integers(0, 10), st.just(NO_VFS), st.just(7.5)),
})


def _by_hand(records_by_judge, candidates):
    """What panel.agreement_records computed before: a ratings dict per quantity, then agreement_rows."""
    judges = list(records_by_judge)
    judged = [(j, r) for j, records in records_by_judge.items() for r in records]
    out = []
    for quantity, kind, field, level in QUANTITIES:
        rated = ratings(judged, _rated_item, value=lambda r, field=field: _value(r.get(field)),
                        keep=lambda r, kind=kind: r.get("kind") == kind)
        if rated:
            out += agreement_rows(rated, judges, level, quantity=quantity, groups=candidates)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_record, max_size=40), min_size=1, max_size=3))
def test_the_same_rows_as_the_ratings_dicts(per_judge):
    records_by_judge = {f"j{k}": recs for k, recs in enumerate(per_judge)}
    candidates = ["m1", "m2", "absent", "m3"]
    got, want = agreement_records(records_by_judge, candidates), _by_hand(records_by_judge, candidates)
    # alpha from one pass over every group's coincidences: the package's to the last few bits
    for g, w in zip(got, want):
        a, b = g["krippendorff_alpha"], w["krippendorff_alpha"]
        assert (a is None) == (b is None) and (a is None or abs(a - b) <= 1e-12 * max(1.0, abs(b))), (g, w)
    strip = [{k: v for k, v in r.items() if k != "krippendorff_alpha"} for r in got]
    assert strip == [{k: v for k, v in r.items() if k != "krippendorff_alpha"} for r in want]
    for g, w in zip(got, want):
        assert all(type(g[k]) is type(w[k]) for k in g)


def test_every_group_s_alpha_at_once_is_the_package_s():
    import numpy as np

    from judgekit.judging.agreement import matrix_alpha
    from judgekit.judging.agreement_table import group_alphas

    rng = np.random.default_rng(7)
    for trial in range(120):
        judges, units, groups = int(rng.integers(2, 5)), int(rng.integers(1, 50)), int(rng.integers(1, 5))
        level = ("nominal", "interval", "ordinal", "ratio")[trial % 4]
        m = rng.integers(0, int(rng.integers(1, 6)), size=(judges, units)) / (2.0 if trial % 3 == 0 else 1.0)
        m[rng.random(m.shape) < 0.3] = np.nan
        group = rng.integers(-1, groups, size=units)  # -1: in no group
        got = group_alphas(m, group, groups, level)
        for g in range(groups):
            want = matrix_alpha(m[:, group == g], level) if (group == g).any() else None
            assert (got[g] is None) == (want is None)
            if want is not None:
                assert abs(got[g] - want) <= 1e-12 * max(1.0, abs(want))
