"""Columns.prefetch: every field read in one pass gives the same columns as reading each alone."""

import numpy as np

from judgekit.judging.columns import Columns, subset
from judgekit.judging.results import PASS_FIELDS


def _records(n=40, drop=None):
    out = []
    for i in range(n):
        r = {"judge": f"j{i % 2}", "model": ["a", "b", 3][i % 3], "index": i // 4, "kind": ["pairwise", "vfs"][i % 2],
             "order": i % 2, "repeat": (i // 2) % 2, "score": [None, -2, 1, 2, 0][i % 5], "vfs": [None, 7, "n/a", 3.5][i % 4],
             "vfs_ref": [6, None][i % 2], "task": f"t{i % 3}", "category": i % 2, "length_diff": [None, 12, -3.5][i % 3],
             "error_kind": [None, "parse"][i % 7 == 0]}
        if drop is not None and i == drop:
            del r["task"]
        out.append(r)
    return out


FIELDS = ("kind_code", "is_pairwise", "model", "index", "task", "category", "judge", "repeat", "order", "raw_score",
          "score", "is_vfs", "vfs", "vfs_ref", "length_diff", "error_kind", "sums")


def _same(a, b):
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b)) and len(a) == len(b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


def test_prefetched_columns_are_the_fields_read_one_by_one():
    recs = _records()
    plain, pre = Columns(recs), Columns(recs)
    pre.prefetch(PASS_FIELDS)
    assert "pre:task" in pre.__dict__
    for name in FIELDS:
        assert _same(getattr(plain, name), getattr(pre, name)), name
    assert not any(k.startswith("pre:") for k in pre.__dict__)  # each handed over once


def test_a_record_without_a_field_leaves_every_field_to_be_read_alone():
    for drop in (0, 17, 39):
        recs = _records(drop=drop)
        col = Columns(recs)
        col.prefetch(PASS_FIELDS)
        assert not any(k.startswith("pre:") for k in col.__dict__)
        assert col.task[1][col.task[0][drop]] == ""  # read with its default, as without prefetch


def test_a_subset_takes_the_prefetched_fields_sliced():
    recs = _records()
    parent = Columns(recs)
    parent.prefetch(PASS_FIELDS)
    from judgekit.judging import columns as module
    module._register(recs, parent)
    pos = np.array([1, 2, 3, 10, 11, 30])
    sub = subset(recs, pos)
    expected = Columns([recs[i] for i in pos.tolist()])
    got = module.columns(sub)
    for name in FIELDS:
        assert _same(getattr(expected, name), getattr(got, name)), name
