"""The shared columns (judging.columns): every statistic read from them is the one the record-walking
path gives (a tuple of records takes that path), on records with the awkward cases: records without
a kind, judgments left out (NO_VFS), failures, a mean ensemble's averaged verdicts, repeats, a
failed judge call, a candidate missing from the list, an item with one order only."""

from __future__ import annotations

import random

import numpy as np
import pytest

from judgekit.judging import columns as C
from judgekit.judging.agreement import mean_score
from judgekit.judging.agreement_table import rating_matrix
from judgekit.judging.alpha import grouped_alpha, matrix_grouped_alpha
from judgekit.judging.behaviour_table import judge_behaviour, length_pairs, length_within
from judgekit.judging.bootstrap import _item_groups
from judgekit.judging.control import _battles, _judged
from judgekit.judging.logistic import _unique_rows
from judgekit.judging.honest import _row_items, alpha_repeat_spread, pooled_within_spearman
from judgekit.judging.human_agreement import unit_values
from judgekit.judging.pairwise import (FIGURE_SUMS, NO_VFS, SUM_COLUMNS, ensemble_records, item_sums, record_sums,
                                       summarize)
from judgekit.judging.panel import _rated_item, _value, rated_matrix
from judgekit.judging.repeats import repeat_spread

MODELS = ("m-a", "m-b", "m-c")


def _records(seed: int, judge: str, *, kindless: bool = False) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for rep in range(2):
        for m in MODELS:
            for i in range(9):
                for order in ((0,) if i == 8 else (0, 1)):  # item 8: one order only
                    base = {"model": m, "index": f"i{i}", "task": f"t{i % 3}", "category": f"c{i % 2}",
                            "order": order, "repeat": rep, "judge": judge,
                            "length_diff": None if i == 7 else rng.randint(-300, 300)}
                    score = None if rng.random() < 0.1 else rng.randint(-2, 2)
                    vfs = rng.choice([None, NO_VFS, 3, 6.5, 8, 10])
                    err = "candidate_failed" if rng.random() < 0.03 else None
                    if rep == 0 and order == 0 and (m, i) == ("m-a", 0):  # every judge's VFS left out
                        vfs = NO_VFS
                    if rep == 0 and order == 0 and (m, i) == ("m-b", 1):  # every judge failed, each its own way
                        score, err = None, f"failed-{judge}"
                    if kindless:
                        rec = {**base, "score": score, "vfs": vfs, "vfs_ref": rng.choice([None, 5, 7])}
                        if rng.random() < 0.2:
                            del rec["vfs"]
                        out.append(rec)
                    else:
                        out.append({**base, "kind": "pairwise", "score": score, "error_kind": err})
                        out.append({**base, "kind": "vfs", "vfs": vfs,
                                    "vfs_ref": None if vfs in (None, NO_VFS) else rng.choice([None, 4, 6]),
                                    "error_kind": err})
    out.append({"model": "m-a", "index": "i0", "kind": "other", "judge": judge})  # read by no figure
    return out


@pytest.fixture(scope="module")
def panel():
    judges = {j: _records(k, j) for k, j in enumerate(("j1", "j2", "j3"))}
    everything = [r for rs in judges.values() for r in rs]
    ensemble = ensemble_records(everything, pairwise_rule=mean_score, score_rule=mean_score)
    return judges, everything, ensemble


def test_ensemble_is_the_record_walk(panel):
    _, everything, ensemble = panel
    walked = ensemble_records(tuple(everything), pairwise_rule=mean_score, score_rule=mean_score)
    assert ensemble == walked
    assert [list(r) for r in ensemble] == [list(r) for r in walked]  # the keys in the same order
    assert any(r.get("averaged") for r in ensemble) and any(r["vfs"] == NO_VFS for r in ensemble)
    assert any(r["error_kind"] == "no_valid_judgment" for r in ensemble)


def test_the_mean_ensemble_s_filled_columns_are_its_records_read_back(panel):
    _, everything, ensemble = panel
    C.columns(everything).length_diff  # a parent column read before: the ensemble's is its slice
    ensemble = ensemble_records(everything, pairwise_rule=mean_score, score_rule=mean_score)
    filled, read = C.columns(ensemble), C.Columns(list(ensemble))
    names = [k for k in filled.__dict__ if k not in ("records", "n", "first", "last")]
    assert {"model", "index", "score", "vfs", "vfs_ref", "is_vfs", "length_diff", "raw:vfs"} <= set(names)
    for name in names:
        got = filled.__dict__[name]
        want = (read.raw(name[4:]) if name.startswith("raw:") else read.kind_is(name[8:])
                if name.startswith("kind_is:") else getattr(read, name))
        if isinstance(got, tuple):  # (codes, names)
            assert np.array_equal(got[0], want[0]) and got[1] == want[1], name
        elif isinstance(got, np.ndarray):
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), name
        else:
            assert got == want, name


def test_odd_values_read_as_the_record_walk_reads_them():
    recs = [{"index": v, "task": t, "length_diff": d, "kind": "vfs", "vfs": x}
            for v, t, d, x in [(1, "a", 3, NO_VFS), ("1", None, 2.5, 4), (True, 5, None, None), (1.0, "a", True, 7)]]
    recs.append({"index": "x", "vfs": NO_VFS})  # no kind: a vfs key, left out
    recs.append({"index": "y", "vfs": 3})  # no kind: a VFS judgment
    recs.append({"index": "z"})  # no kind, no vfs key
    col = C.Columns(recs)
    want = C.codes([str(r["index"]) for r in recs])  # 1, 1.0 and True: one dict key, three texts
    assert col.index[0].tolist() == want[0].tolist() and col.index[1] == want[1] == ["1", "True", "1.0", "x", "y", "z"]
    assert col.task[1] == ["a", "None", "5", ""]
    assert np.array_equal(col.length_diff, [3.0, 2.5, np.nan, 1.0, np.nan, np.nan, np.nan], equal_nan=True)
    assert col.is_vfs.tolist() == [False, True, True, True, False, True, False]


def test_an_unreadable_score_still_raises_in_the_controlled_inputs():
    recs = _records(5, "j")
    at = next(k for k, r in enumerate(recs) if r.get("kind") == "pairwise" and r["length_diff"] is not None)
    recs[at] = {**recs[at], "score": "much better"}
    for walk in (list, tuple):
        with pytest.raises(ValueError):
            _battles(walk(recs), list(MODELS))
        with pytest.raises(TypeError):
            _judged(walk(recs))


@pytest.mark.parametrize("kindless", [False, True])
def test_rows_sums_and_spread_are_the_record_walk(panel, kindless):
    lists = [_records(7, "j", kindless=True)] if kindless else [*panel[0].values(), panel[2]]
    figures = {f: (SUM_COLUMNS.index(n), SUM_COLUMNS.index(d)) for f, (n, d) in FIGURE_SUMS.items()}
    for recs in lists:
        assert summarize(recs) == summarize(tuple(recs))
        assert item_sums(recs) == item_sums(tuple(recs))
        assert list(item_sums(recs)) == list(item_sums(tuple(recs)))
        assert np.array_equal(record_sums.columnar(recs), np.array([record_sums(r) for r in recs]))
        levels = ("task", "category", "overall")
        assert repeat_spread(recs, record_sums, figures, levels, 2) == repeat_spread(tuple(recs), record_sums, figures,
                                                                                     levels, 2)


def test_a_bad_score_still_raises():
    recs = _records(3, "j")
    recs[0] = {**recs[0], "score": 1.5}  # not averaged: no verdict
    with pytest.raises(ValueError, match="pairwise score"):
        summarize(recs)


def test_controlled_inputs_are_the_record_walk(panel):
    styles = {(m, f"i{i}"): {"candidate": [500 + i, 1, 2, 0], "reference": [400, 0, 1, 1]}
              for m in MODELS for i in range(9) if i != 4}
    for recs in [*panel[0].values(), panel[2]]:
        assert _battles(recs, ["m-c", "m-a"], styles) == _battles(tuple(recs), ["m-c", "m-a"], styles)
        by_index = _judged(tuple(recs))
        for m, (p, d, items) in _judged(recs).items():  # items as codes of the same indexes, in order
            p0, d0, i0 = by_index[m]
            assert (p, d) == (p0, d0)
            assert len(items) == len(i0) and len(set(zip(items, i0))) == len(set(items)) == len(set(i0))


def test_unique_rows_is_numpys():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 3, size=(200, 4)).astype(float)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    got_first, got_inverse = _unique_rows(keys)
    assert np.array_equal(first, got_first) and np.array_equal(inverse.ravel(), got_inverse)


def test_panel_and_honesty_inputs_are_the_record_walk(panel):
    judges, _, ensemble = panel
    for kind, field in (("pairwise", "score"), ("vfs", "vfs")):
        m, units = rated_matrix(judges, kind, field)
        m0, units0 = rating_matrix({j: tuple(r) for j, r in judges.items()}, kind, _rated_item, _value, field)
        assert units == units0 and np.array_equal(m, m0, equal_nan=True)
    for recs in [*judges.values(), ensemble]:
        assert judge_behaviour(recs, [*MODELS, "nobody", None]) == judge_behaviour(tuple(recs),
                                                                                   [*MODELS, "nobody", None])
        assert _row_items(recs) == _row_items(tuple(recs))
        assert length_pairs(recs) == length_pairs(tuple(recs))
        assert length_within(recs) == length_within(tuple(recs)) == pooled_within_spearman(length_pairs(recs))
        for by_order in (False, True):
            got, walked = unit_values(recs, by_order), unit_values(tuple(recs), by_order)
            assert got == walked and list(got) == list(walked)
    assert _item_groups(judges) == _item_groups({j: tuple(r) for j, r in judges.items()})


@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
def test_alpha_of_the_matrix_is_alpha_of_the_dict(panel, level):
    judges = panel[0]
    m, units = rated_matrix(judges, "pairwise", "score")
    ratings = {u: {j: (None if np.isnan(m[k, c]) else float(m[k, c])) for k, j in enumerate(judges)}
               for c, u in enumerate(units)}
    got = grouped_alpha(ratings, list(judges), level, group=lambda u: u[0], cluster=lambda u: u[1], samples=50,
                        interval_level=0.9, seed=1, key="k", groups=["m-b", "m-a", "absent"])
    gidx = {"m-b": 0, "m-a": 1, "absent": 2}
    clusters: dict = {}
    direct = matrix_grouped_alpha(m.T, np.array([gidx.get(u[0], -1) for u in units]),
                                  np.array([clusters.setdefault(u[1], len(clusters)) for u in units]),
                                  ["m-b", "m-a", "absent"], len(clusters), level, samples=50, interval_level=0.9,
                                  seed=1, key="k")
    assert got == direct and got["groups"]["m-a"][0] is not None and got["groups"]["absent"] == (None, None, None)
    spread = alpha_repeat_spread(ratings, list(judges), level, ["m-a", "m-b"])
    assert spread["m-a"]["alpha_repeat_sd"] is not None


def test_columns_are_kept_per_list_and_read_again_when_it_changes():
    recs = _records(5, "j")
    first = C.columns(recs)
    assert C.columns(recs) is first
    recs.append(dict(recs[0]))
    again = C.columns(recs)
    assert again is not first and again.n == len(recs)
    sub = C.subset(recs, np.array([2, 0]))
    assert sub == [recs[2], recs[0]] and C.columns(sub).n == 2
    assert C.columns(sub).model[1][C.columns(sub).model[0][0]] == recs[2]["model"]


def _first_order_by_unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """first_order as np.unique (or a lexsort of the rows) numbers the keys, renumbered by first position."""
    if key.ndim == 1:
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    renumber = np.empty(by_first.size, dtype=np.intp)
    renumber[by_first] = np.arange(by_first.size)
    return renumber[inverse.ravel()], first[by_first]


@pytest.mark.parametrize("high", [2, 700, 70_000, 2 ** 40, 2 ** 62])
@pytest.mark.parametrize("width", [0, 1, 3, 5])
def test_first_order_numbers_keys_as_unique_does(high, width):
    rng = np.random.default_rng(high + width)
    for n in (1, 2, 50, 3000):
        key = rng.integers(0, high, size=(n, width) if width else n)
        if width:
            key[:, 0] -= high // 2  # negative codes too
        got, want = C.first_order(key), _first_order_by_unique(key)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    key = rng.integers(0, 2 ** 63, size=200, dtype=np.uint64)  # a key the folding cannot hold
    got, want = C.first_order(key), _first_order_by_unique(key)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("pos", [list(range(40, 90)), [*range(0, 30), *range(60, 100), *range(120, 150)],
                                 [5, 3, 4, 90, 91, 92], list(range(150, 0, -3))])
def test_a_subset_s_columns_are_its_records_read(pos):
    recs = _records(11, "j")
    parent = C.columns(recs)
    for name in ("model", "index", "score", "raw_score", "vfs", "order", "repeat", "error_kind"):
        getattr(parent, name)
    parent.raw("vfs_ref")
    sub = C.subset(recs, np.array(pos))
    assert sub == [recs[i] for i in pos]
    filled, read = C.columns(sub), C.Columns(list(sub))
    for name in ("model", "index", "score", "raw_score", "vfs", "order", "repeat", "error_kind", "raw:vfs_ref"):
        got = filled.__dict__[name]
        want = read.raw(name[4:]) if name.startswith("raw:") else getattr(read, name)
        if isinstance(got, tuple):  # (codes, names): the parent's names, each code naming the same one
            assert [got[1][k] for k in got[0]] == [want[1][k] for k in want[0]], name
        elif isinstance(got, np.ndarray):
            assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), name
        else:
            assert got == want, name


def test_odd_scores_vfs_and_orders_read_as_before():
    recs = [{"kind": "pairwise", "score": s, "order": o, "repeat": rp, "vfs": v, "vfs_ref": ref}
            for s, o, rp, v, ref in [(2, 1.0, 0, None, None), (None, True, 1, NO_VFS, 3), (True, 0, 2, 4, None),
                                     (-2, "1", 0, 5.5, 2)]]
    recs += [{"kind": "vfs", "vfs": v, "vfs_ref": ref, "score": 9} for v, ref in
             [(3, None), (True, 2), (NO_VFS, 1), (None, 4), (7.5, 2.5), (np.int64(6), np.float64(1.5))]]
    col = C.Columns(recs)
    assert col.order.tolist() == [int(r.get("order", 0)) for r in recs]
    assert col.repeat.tolist() == [r.get("repeat", 0) for r in recs]
    with pytest.raises(ValueError, match="pairwise score"):
        col.score  # a bool is no verdict
    assert np.array_equal(col.float_score, [2.0, np.nan, 1.0, -2.0, *[np.nan] * 6], equal_nan=True)
    assert col.is_vfs.tolist() == [False] * 4 + [True, True, False, True, True, True]
    assert np.array_equal(col.vfs, [np.nan] * 4 + [3.0, 1.0, np.nan, np.nan, 7.5, 6.0], equal_nan=True)
    assert np.array_equal(col.vfs_ref, [np.nan] * 4 + [np.nan, 2.0, np.nan, np.nan, 2.5, 1.5], equal_nan=True)
    recs[0] = {**recs[0], "score": 3}
    with pytest.raises(ValueError, match="pairwise score"):
        C.Columns(recs).score  # an int outside -2..2


@pytest.mark.parametrize("values", ["any", "plain", "plain, a verdict out of range"])
def test_the_mean_ensemble_of_lists_without_repeats_or_with_some_is_the_record_walk(panel, values):
    _, everything, _ = panel
    if values != "any":  # integers, None and NO_VFS only: the ensemble takes the checked columns
        everything = [{**r, "vfs": 6} if r.get("vfs") == 6.5 else r for r in everything]
        assert {type(r.get(k)) for r in everything for k in ("score", "vfs", "vfs_ref")} == {int, str, type(None)}
    if values.endswith("range"):  # the mean takes a 3, the check refuses it
        at = next(k for k, r in enumerate(everything) if r.get("kind") == "pairwise" and r["score"] is not None)
        everything = [*everything[:at], {**everything[at], "score": 3}, *everything[at + 1:]]
    for drop in ("all", "some"):
        recs = [{k: v for k, v in r.items() if k != "repeat" or (drop == "some" and i % 3)}
                for i, r in enumerate(everything)]
        recs[4] = {k: v for k, v in recs[4].items() if k not in ("task", "length_diff")}  # a first record without them
        got = ensemble_records(recs, pairwise_rule=mean_score, score_rule=mean_score)
        walked = ensemble_records(tuple(recs), pairwise_rule=mean_score, score_rule=mean_score)
        assert got == walked and [list(r) for r in got] == [list(r) for r in walked]
        filled, read = C.columns(got), C.Columns(list(got))
        for name in ("task", "category", "length_diff", "repeat", "score", "vfs", "vfs_ref", "is_vfs", "kind_code"):
            try:
                b = getattr(read, name)
            except ValueError:  # a mean above 2: no verdict, left to the check, which refuses it
                assert name == "score" and name not in filled.__dict__
                continue
            a = filled.__dict__[name]
            if isinstance(a, tuple):
                assert np.array_equal(a[0], b[0]) and a[1] == b[1], name
            else:
                assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name


def _lazy_ensemble(everything):
    got = ensemble_records(everything, pairwise_rule=mean_score, score_rule=mean_score)
    assert not got.built  # the dicts are not built until something reads them as records
    return got


def test_the_lazy_ensemble_builds_the_walk_s_dicts_whatever_reads_it(panel):
    import copy
    import json
    import pickle

    _, everything, _ = panel
    walked = ensemble_records(tuple(everything), pairwise_rule=mean_score, score_rule=mean_score)
    keys = [list(r) for r in walked]
    n = len(walked)
    figures = {f: (SUM_COLUMNS.index(a), SUM_COLUMNS.index(b)) for f, (a, b) in FIGURE_SUMS.items()}
    lazy = _lazy_ensemble(everything)
    assert len(lazy) == n and lazy and not lazy.built
    rows, sums = summarize(lazy), item_sums(lazy)  # the statistics read its columns, not its records
    spread = repeat_spread(lazy, record_sums, figures, ("task", "category", "overall"), 2)
    assert not lazy.built
    assert rows == summarize(walked) and sums == item_sums(walked)
    assert spread == repeat_spread(walked, record_sums, figures, ("task", "category", "overall"), 2)
    sub = C.subset(lazy, np.arange(0, n, 3))
    assert not lazy.built and not sub.built and sub == walked[::3]
    reads = {
        "iterate": lambda x: [r for r in x], "index": lambda x: [x[i] for i in range(n)], "slice": lambda x: x[:],
        "reversed": lambda x: list(reversed(x))[::-1], "tuple": tuple, "copy": lambda x: x.copy(),
        "copy.copy": copy.copy, "deepcopy": copy.deepcopy, "pickle": lambda x: pickle.loads(pickle.dumps(x)),
        "json": lambda x: json.loads(json.dumps(x)), "plain + lazy": lambda x: [] + x, "lazy + plain": lambda x: x + [],
        "lazy + lazy": lambda x: x + _lazy_ensemble(everything)[:0], "extend": lambda x: [*x],
        "object array": lambda x: list(np.array(x + [None], dtype=object)[:-1]),
        "sorted": lambda x: sorted(x, key=walked.index),
    }
    for name, read_as in reads.items():
        got = list(read_as(_lazy_ensemble(everything)))
        assert got == list(walked) and [list(r) for r in got] == keys, name
    lazy = _lazy_ensemble(everything)
    assert lazy == walked and walked == _lazy_ensemble(everything) and _lazy_ensemble(everything) == lazy
    assert walked[5] in _lazy_ensemble(everything) and _lazy_ensemble(everything).index(walked[5]) == 5
    changed = _lazy_ensemble(everything)
    C.columns(changed).model  # noqa: B018 (columns read before the list changes)
    changed.append(dict(walked[0]))  # built, then changed: its columns are read again
    assert changed.built and len(changed) == n + 1 and C.columns(changed).n == n + 1
    assert summarize(changed) == summarize(tuple(changed))
