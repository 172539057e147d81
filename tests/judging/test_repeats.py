"""Judge repeats: the requests (repeat 0 is today's request and cache key; each repeat its own key
and seed) and the judge-induced spread, against an independent computation (each repeat's figure
from :func:`summarize` on that repeat's records, then ``statistics.stdev``)."""

from __future__ import annotations

import random
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.cache.keys import cache_key
from judgekit.judging.pairwise import FIGURE_SUMS, SUM_COLUMNS, record_sums, summarize
from judgekit.judging.repeats import RepeatOptions, add_spread, repeat_spread, repeated
from judgekit.types import ChatRequest, GenParams, Message

FIGS = {f: (SUM_COLUMNS.index(n), SUM_COLUMNS.index(d)) for f, (n, d) in FIGURE_SUMS.items()}
LEVELS = ("category", "overall")


def _key(req: ChatRequest) -> str:
    return cache_key(provider="openai", model="m", base_url="http://x", messages=req.messages, params=req.params,
                     sample_index=req.sample_index, prompt_hash=req.prompt_hash, attempt_tag=req.attempt_tag)


def test_repeat_zero_is_the_request_and_others_differ():
    req = ChatRequest("judge", (Message.user("judge this"),), GenParams(temperature=0.0), stage="pairwise",
                      prompt_hash="h")
    assert repeated(req, 1) == [req]
    reqs = repeated(req, 3)
    assert reqs[0] is req and _key(reqs[0]) == _key(req)
    assert [r.sample_index for r in reqs] == [0, 1, 2]
    assert [r.params.seed for r in reqs] == [None, 1, 2]  # the judge's seed (none: 0) + r
    assert len({_key(r) for r in reqs}) == 3
    seeded = ChatRequest("judge", (Message.user("x"),), GenParams(seed=40))
    assert [r.params.seed for r in repeated(seeded, 3)] == [40, 41, 42]
    assert RepeatOptions().judge_repeats == 1
    with pytest.raises(ValueError):
        RepeatOptions(judge_repeats=0)


def _records(rng: random.Random, k: int, items: int, fail: float = 0.1, models=("a", "b")):
    out = []
    for m in models:
        for i in range(items):
            for order in (0, 1):
                for rep in range(k):
                    s = None if rng.random() < fail else rng.choice((-2, -1, 0, 1, 2))
                    out.append({"model": m, "index": str(i), "category": f"c{i % 3}", "task": "t",
                                "kind": "pairwise", "order": order, "repeat": rep, "score": s})
                    v = None if rng.random() < fail else rng.uniform(0, 10)
                    out.append({"model": m, "index": str(i), "category": f"c{i % 3}", "task": "t", "kind": "vfs",
                                "order": order, "repeat": rep, "vfs": v, "vfs_ref": None if v is None else 5.0})
    return out


def _independent(records, k):
    """(model, level, group) -> figure -> [figure of each repeat], from summarize per repeat."""
    out: dict = {}
    for rep in range(k):
        for row in summarize([r for r in records if r["repeat"] == rep], levels=LEVELS):
            for f in FIGS:
                if row[f] is not None:
                    out.setdefault((row["model"], row["level"], row["group"]), {}).setdefault(f, []).append(row[f])
    return out


@pytest.mark.parametrize("k, seed", [(2, 0), (3, 1), (5, 2)])
def test_spread_against_summarize_per_repeat(k, seed):
    recs = _records(random.Random(seed), k, items=12)
    got = repeat_spread(recs, record_sums, FIGS, LEVELS, k)
    want = _independent(recs, k)
    assert set(got) == set(want)
    for key, per in want.items():
        for f, vals in per.items():
            assert got[key][f"{f}_repeat_sd"] == pytest.approx(statistics.stdev(vals), abs=1e-9), (key, f)
            assert got[key][f"{f}_repeat_range"] == pytest.approx(max(vals) - min(vals), abs=1e-9)


def test_add_spread_fills_rows_and_nothing_without_repeats():
    recs = _records(random.Random(3), 3, items=6)
    rows = {"j": summarize(recs, levels=LEVELS)}
    add_spread(rows, {"j": recs}, record_sums, FIGS, 3)
    assert all("reward_repeat_sd" in r and "vfs_repeat_range" in r for r in rows["j"])
    plain = {"j": summarize(recs, levels=LEVELS)}
    add_spread(plain, {"j": recs}, record_sums, FIGS, 1)
    assert not any("reward_repeat_sd" in r for r in plain["j"])


def test_identical_repeats_have_no_spread_and_one_valid_repeat_none():
    recs = _records(random.Random(4), 1, items=5, fail=0.0)
    same = [dict(r, repeat=rep) for r in recs for rep in range(3)]
    got = repeat_spread(same, record_sums, FIGS, ("overall",), 3)
    assert all(v == 0.0 for row in got.values() for v in row.values())
    # repeat 1 all failures: only repeat 0 defines the figure -> no spread (None), not NaN
    one = [dict(r, repeat=rep, score=None if rep else r.get("score"), vfs=None if rep else r.get("vfs"))
           for r in recs for rep in range(2)]
    got = repeat_spread(one, record_sums, FIGS, ("overall",), 2)
    assert all(v is None for row in got.values() for v in row.values())
    assert repeat_spread([], record_sums, FIGS, LEVELS, 3) == {}


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 4), st.integers(1, 6), st.floats(0.0, 0.6), st.integers(0, 10_000))
def test_spread_properties(k, items, fail, seed):
    recs = _records(random.Random(seed), k, items=items, fail=fail, models=("a",))
    got = repeat_spread(recs, record_sums, FIGS, LEVELS, k)
    want = _independent(recs, k)
    for key, row in got.items():
        for f in FIGS:
            sd, rng = row[f"{f}_repeat_sd"], row[f"{f}_repeat_range"]
            vals = want.get(key, {}).get(f, [])
            if len(vals) < 2:
                assert sd is None and rng is None
            else:
                assert np.isfinite(sd) and 0 <= sd <= rng + 1e-12
                assert sd == pytest.approx(statistics.stdev(vals), abs=1e-9)
