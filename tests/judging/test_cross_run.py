"""Bradley-Terry ratings across runs (judgekit.judging.cross_run) and their table on the
leaderboard page (judgekit.report.leaderboard.cross_run_tables).

With every battle against the one reference, the Bradley-Terry fit has a closed form: each
candidate's log-odds is the logit of its weighted win share (a much-better verdict three battles,
a tie half a win); the tests compute that here, over the items all runs judged, and check the
intervals by their defining property (an item drawn brings every run's judgments of it)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from judgekit.judging.cross_run import cross_run_ratings
from judgekit.judging.uncertainty import IntervalOptions
from judgekit.report.doc import Headline, ReportDoc
from judgekit.report.leaderboard import cross_run_tables, load_run, write_leaderboard
from judgekit.report.tidy import write_tidy
from judgekit.report.write import write_report


def _judgments(cands, items, seed, judge="judge", fail=()):
    rng = np.random.default_rng(seed)
    out = []
    for k, c in enumerate(cands):
        for i in items:
            for order in (0, 1):
                v = int(np.clip(np.round(rng.normal(0.5 * k - 0.2, 1.1)), -2, 2))
                ok = (c, i, order) not in fail
                out.append({"candidate": c, "judge": judge, "item": str(i), "order": order, "kind": "pairwise",
                            "value": float(v) if ok else None, "ok": ok})
    return out


def _closed_form(judgments, shared):
    """Weighted win share -> Elo, over the shared items, pairs with a failed order left out."""
    failed = {(j["candidate"], j["item"]) for j in judgments if not j["ok"]}
    wins = total = 0.0
    for j in judgments:
        if j["item"] in shared and (j["candidate"], j["item"]) not in failed:
            v = j["value"]
            w = 3.0 if abs(v) == 2 else 1.0
            wins += w * (1.0 if v > 0 else 0.5 if v == 0 else 0.0)
            total += w
    share = wins / total
    return 1000.0 + 400.0 / math.log(10.0) * math.log(share / (1.0 - share))


def test_one_fit_over_runs_matches_the_closed_form_on_shared_items():
    a = _judgments(["m1", "m2"], range(0, 30), 1, fail={("m1", 4, 1)})
    b = _judgments(["m3"], range(10, 40), 2)  # items 10..29 are shared
    (fit,) = cross_run_ratings([("run a", "bench", a), ("run b", "bench", b)], IntervalOptions(bootstrap_samples=200))
    assert fit["items"] == 20 and fit["runs"] == ["run a", "run b"] and fit["judge"] == "judge"
    shared = {str(i) for i in range(10, 30)}
    by = {(r["run"], r["candidate"]): r for r in fit["rows"]}
    for (run, cand), js in ((("run a", "m1"), a), (("run a", "m2"), a), (("run b", "m3"), b)):
        mine = [j for j in js if j["candidate"] == cand]
        row = by[(run, cand)]
        assert row["bt_rating"] == pytest.approx(_closed_form(mine, shared), abs=1e-9)
        assert row["bt_rating_ci_low"] <= row["bt_rating"] <= row["bt_rating_ci_high"]
        assert row["battles"] == sum(1 for j in mine if j["item"] in shared and (j["candidate"], j["item"]) != ("m1", "4"))
    ratings = [r["bt_rating"] for r in fit["rows"]]
    assert ratings == sorted(ratings, reverse=True)
    assert [r["rank"] for r in fit["rows"]] == [1, 2, 3]


def test_the_same_candidate_in_two_runs_is_two_entries_that_move_together():
    a = _judgments(["m"], range(20), 5)
    (fit,) = cross_run_ratings([("x", "bench", a), ("y", "bench", [dict(j) for j in a])],
                               IntervalOptions(bootstrap_samples=300))
    r0, r1 = fit["rows"]
    assert {r0["run"], r1["run"]} == {"x", "y"} and r0["candidate"] == r1["candidate"] == "m"
    # the same judgments, resampled by the same items: the same rating and the same interval
    assert (r0["bt_rating"], r0["bt_rating_ci_low"], r0["bt_rating_ci_high"]) == \
        (r1["bt_rating"], r1["bt_rating_ci_low"], r1["bt_rating_ci_high"])
    assert r0["rank"] == r1["rank"] == 1 and r0["rank_ci_high"] == 1


def test_no_fit_for_one_run_other_benchmarks_other_judges_or_no_shared_items():
    a = _judgments(["m1"], range(5), 1)
    assert cross_run_ratings([("a", "bench", a)]) == []
    assert cross_run_ratings([("a", "bench", a), ("b", "other", _judgments(["m2"], range(5), 2))]) == []
    assert cross_run_ratings([("a", "bench", a), ("b", "bench", _judgments(["m2"], range(5), 2, judge="j2"))]) == []
    assert cross_run_ratings([("a", "bench", a), ("b", "bench", _judgments(["m2"], range(5, 9), 2))]) == []


def test_intervals_off_and_all_ties():
    a = _judgments(["m1"], range(6), 1)
    b = _judgments(["m2"], range(6), 2)
    for j in a + b:
        j["value"] = 0.0
    (fit,) = cross_run_ratings([("a", "bench", a), ("b", "bench", b)], IntervalOptions(bootstrap_samples=0))
    for r in fit["rows"]:
        assert r["bt_rating"] == pytest.approx(1000.0) and r["bt_rating_ci_low"] is None and r["rank"] == 1


def _run(path, cands, items, seed):
    write_report(path, ReportDoc(title=f"creation_mmbench: {path.name}", benchmark="creation_mmbench",
                                 headline=[Headline(c, "reward", 1.0) for c in cands]))
    (path / "summary.json").write_text(json.dumps({"spec": "s", "run_id": path.name, "status": "done"}))
    write_tidy(path, _judgments(cands, items, seed), path.name, "creation_mmbench")
    return path


def test_leaderboard_page_and_its_json_carry_the_ratings_across_runs(tmp_path):
    a = _run(tmp_path / "run-a", ["m1", "m2"], range(12), 1)
    b = _run(tmp_path / "run-b", ["m3"], range(12), 2)
    (tmp_path / "run-c").mkdir()
    runs = [load_run(a), load_run(b)]
    for r in runs:
        r.label = r.path.name
    (table,) = cross_run_tables(runs)
    assert "across runs" in table.title and "12 items" in table.note
    assert {(r["run"], r["candidate"]) for r in table.rows} == {("run-a", "m1"), ("run-a", "m2"), ("run-b", "m3")}
    assert all(" [" in r["BT rating"] and r["rank"].count("[") == 1 for r in table.rows)
    page = write_leaderboard([load_run(a), load_run(b)], tmp_path / "out" / "leaderboard.html")
    data = json.loads(page.with_suffix(".json").read_text())
    titles = [t["title"] for t in data["tables"]]
    assert "creation_mmbench: Bradley-Terry ratings across runs (judge)" in titles
    assert "Bradley-Terry ratings across runs" in page.read_text()
    # a run folder without results.parquet takes no part (and the page is still drawn)
    (a / "results.parquet").unlink()
    assert cross_run_tables([load_run(a), load_run(b)]) == []
