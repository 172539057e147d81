"""The bootstrap streams of the results rows (judgekit.judging.bootstrap.add_intervals): keyed by
(level, group), not by candidate, so candidates are resampled on the same items and a row's
interval does not depend on which other candidates are in the run."""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.judging import bootstrap as B
from judgekit.judging.intervals import ratio_interval
from judgekit.judging.pairwise import NO_VFS, SUM_COLUMNS, item_sums, summarize
from judgekit.judging.uncertainty import IntervalOptions

JUDGES = ("j1", "j2")
OPTIONS = IntervalOptions(bootstrap_samples=150, bootstrap_seed=7)
CI = [f"{f}_ci_{side}" for f in B.FIGURES for side in ("low", "high")]


def _records(judge: str, model: str, seed: int, items: range = range(24), missing: tuple[int, ...] = ()) -> list[dict]:
    """One judge's pairwise and VFS judgments of one candidate, both orders, some scores and VFS
    missing; the task and category of an item do not depend on the candidate."""
    rng = np.random.default_rng(seed)
    out = []
    for i in items:
        if i in missing:
            continue
        for order in (0, 1):
            base = {"model": model, "index": f"i{i}", "task": f"t{i % 3}", "category": f"c{i % 2}",
                    "order": order, "judge": judge, "length_diff": int(rng.integers(-200, 200))}
            score = None if rng.random() < 0.1 else int(rng.integers(-2, 3))
            vfs = [None, NO_VFS, 3.0, 6.5, 7.25][int(rng.integers(0, 5))]
            out.append({**base, "kind": "pairwise", "score": score})
            out.append({**base, "kind": "vfs", "vfs": vfs, "vfs_ref": None if vfs in (None, NO_VFS) else 4.5})
    return out


def _run(candidates: dict[str, int], missing: dict[str, tuple[int, ...]] | None = None, walk: bool = False):
    """Every judge's rows with intervals: ``candidates`` maps a name to the seed of its judgments."""
    missing = missing or {}
    everyone = {j: [r for m, seed in candidates.items()
                    for r in _records(j, m, seed * 10 + k, missing=missing.get(m, ()))]
                for k, j in enumerate(JUDGES)}
    rows = {j: summarize(r) for j, r in everyone.items()}
    B.add_intervals(rows, {j: tuple(r) for j, r in everyone.items()} if walk else everyone, OPTIONS)
    return rows, everyone


def _by_row(rows) -> dict[tuple[str, str, str, str], dict]:
    return {(j, r["model"], r["level"], r["group"]): r for j, rs in rows.items() for r in rs}


@pytest.mark.parametrize("walk", [False, True])
def test_a_row_s_interval_does_not_depend_on_the_other_candidates(walk):
    everyone, _ = _run({"m1": 1, "m2": 2, "m3": 3, "m4": 4}, walk=walk)
    fewer, _ = _run({"m1": 1, "m2": 2, "m4": 4}, walk=walk)
    full, part = _by_row(everyone), _by_row(fewer)
    assert part and all(full[k] == row for k, row in part.items())  # every column, intervals included
    assert sum(row["reward_ci_low"] is not None for row in part.values()) >= 3 * 2 * 6
    # the raw resampled bounds too, before rounding: one candidate alone, or side by side with others
    sums = item_sums(_records("j1", "m1", 10))
    m1 = np.array([sums[("m1", f"i{i}")] for i in range(24)])
    other = m1[::-1] * 1.5
    alone = B._all_intervals([(m1, B.row_key("m1", "overall", "overall"), "same")], OPTIONS)
    together = B._all_intervals([(other, B.row_key("m0", "overall", "overall"), "same"),
                                 (m1, B.row_key("m1", "overall", "overall"), "same")], OPTIONS)
    assert together[1] == alone[0]


def test_candidates_with_the_same_item_sums_get_the_same_intervals():
    rows, _ = _run({"m1": 1, "twin": 1, "m3": 3})  # "twin" is judged exactly as m1
    got = _by_row(rows)
    pairs = [(row, got[(j, "twin", level, group)]) for (j, m, level, group), row in got.items() if m == "m1"]
    assert len(pairs) == len(JUDGES) * 6  # overall, three tasks, two categories
    assert all([a[c] for c in CI] == [b[c] for c in CI] for a, b in pairs)
    # a different candidate on the same items is resampled on the same items, not identically
    m3 = [(row, got[(j, "m3", level, group)]) for (j, m, level, group), row in got.items() if m == "m1"]
    assert any([a[c] for c in CI] != [b[c] for c in CI] for a, b in m3)


@pytest.mark.parametrize("walk", [False, True])
def test_a_candidate_missing_items_draws_from_the_row_s_stream_on_its_own_items(walk):
    missing = (2, 5, 11, 17)
    rows, everyone = _run({"m1": 1, "short": 2, "m3": 3}, missing={"short": missing}, walk=walk)
    got = _by_row(rows)
    figures = {f: (SUM_COLUMNS.index(num), SUM_COLUMNS.index(den)) for f, (num, den) in B.FIGURE_SUMS.items()}
    checked = 0
    for j in JUDGES:
        sums = item_sums(everyone[j])
        for model in ("short", "m1"):
            mine = [i for i in range(24) if model != "short" or i not in missing]
            groups = {("overall", "overall"): mine}
            for i in mine:
                groups.setdefault(("task", f"t{i % 3}"), []).append(i)
                groups.setdefault(("category", f"c{i % 2}"), []).append(i)
            for (level, group), items in groups.items():
                row = got[(j, model, level, group)]
                s = [sums[(model, f"i{i}")] for i in items]
                for figure, (num, den) in figures.items():
                    # a plain bootstrap of the row's own items from the stream keyed by its level and group
                    iv = ratio_interval([x[num] for x in s], [x[den] for x in s], samples=OPTIONS.bootstrap_samples,
                                        seed=OPTIONS.bootstrap_seed, key=f"rows:{level}:{group}")
                    want = (None, None) if iv.low is None else (round(iv.low, 2), round(iv.high, 2))
                    assert (row[f"{figure}_ci_low"], row[f"{figure}_ci_high"]) == want
                    checked += want[0] is not None
    assert checked >= 2 * 2 * 6 * 3
