"""`judgekit report A B ...`: item-level differences between runs of one benchmark.

Two runs of each of the pairwise and the rubric quickstarts, offline: the golden session's run
(``golden_runs``, copied) and one whose judge has another simulator seed.  The differences the
command reports are checked against the runs' results.parquet read here directly: every item
it lists changed, every item it leaves out did not, and the before/after figures are the item's
Reward part (pairwise) or mean score (rubric).  Also: a glob with the cache file and stray files,
--baseline, a run compared with a copy of itself, and the pure matching rules.
"""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from oneline import assert_user_error, invoke

from judgekit.judging.run_diff import run_differences
from judgekit.report.tidy import results


def _run_with_judge_seed(name: str, seed: int, out: Path) -> Path:
    from golden import _unthrottled, offline_spec

    from judgekit.config import RunSpec
    from judgekit.runner import RunOptions, run_spec

    data = _unthrottled(offline_spec(name)[0]).model_dump(exclude_none=True)
    data["models"]["judge"]["sim"]["seed"] = seed  # the first judge only: a rubric panel's judge-2 stays
    for model in data["models"].values():  # no simulated latency: it changes no answer, only the time
        model["sim"].update(latency_ms=0, latency_jitter_ms=0)
    spec = RunSpec.model_validate(data)
    outcome = asyncio.run(run_spec(spec, RunOptions(out_dir=out, cache_path=out.parent / f"{out.name}.duckdb",
                                                    yes=True)))
    assert outcome.exit_code == 0, outcome.message
    return out


@pytest.fixture(scope="module")
def runs(golden_runs, tmp_path_factory):
    """{name: (before, after)} run folders of both quickstarts, under one folder with a cache file
    and stray files beside them, as ``judgekit-out/`` holds them."""
    root = tmp_path_factory.mktemp("compare") / "judgekit-out"
    root.mkdir()
    out = {}
    for name, short, seed in (("pairwise_quickstart", "pq", 8), ("rubric_quickstart", "rq", 9)):
        before = root / f"{short}-a"
        shutil.copytree(golden_runs(name), before)
        after = _run_with_judge_seed(name, seed, root / f"{short}-b")
        out[name] = (before, after)
    return out


def _items(run: Path) -> dict[tuple[str, str, str], dict[str, dict]]:
    """(candidate, judge, item) -> order -> the row, from results.parquet."""
    by = defaultdict(dict)
    for r in results(run, kind="rows"):
        by[(r["candidate"], r["judge"], r["item"])][r["order"]] = r
    return by


def _figure(rows: dict, pairwise: bool) -> float | None:
    vals = [r["value"] for r in rows.values() if r["ok"] and r["value"] is not None]
    if not vals:
        return None
    return (50.0 if pairwise else 1.0) * sum(vals) / len(vals)


def _changed(a: dict, b: dict) -> bool:
    return any((a[o]["ok"], a[o]["value"], a[o]["verdict"] if a[o]["value"] is None else None)
               != (b[o]["ok"], b[o]["value"], b[o]["verdict"] if b[o]["value"] is None else None) for o in a if o in b)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", ["pairwise_quickstart", "rubric_quickstart"])
def test_item_differences_match_the_runs_records(runs, name, tmp_path):
    before, after = runs[name]
    page = tmp_path / "cmp" / "leaderboard.html"
    r = invoke("report", before, after, "--out", page, "--top", "3")
    assert r.exit_code == 0, r.output
    diffs = _read_csv(page.parent / "diffs.csv")
    data = json.loads((page.parent / "diffs.json").read_text(encoding="utf-8"))
    pairwise = name == "pairwise_quickstart"
    a, b = _items(before), _items(after)
    shared = [k for k in a if k in b]
    expected = {k for k in shared if _changed(a[k], b[k])}
    listed = {(d["candidate"], d["judge"], d["item"]) for d in diffs}
    assert expected, "the judge's other seed changed no verdict: the test compares nothing"
    assert listed == expected
    for d in diffs:
        k = (d["candidate"], d["judge"], d["item"])
        fa, fb = _figure(a[k], pairwise), _figure(b[k], pairwise)
        assert float(d["before_value"]) == pytest.approx(fa) and float(d["after_value"]) == pytest.approx(fb)
        assert float(d["delta"]) == pytest.approx(fb - fa)
        assert (d["before_run"], d["after_run"]) == (before.name, after.name)
        for link, run in ((d["before_link"], before), (d["after_link"], after)):
            target, _, anchor = link.partition("#")
            assert (page.parent / target).resolve() == (run / "report.html").resolve()
            assert anchor == f"item={d['item']}"  # the run's report lists the item: its anchor opens it
        if pairwise:  # every order's verdict is shown, then the combined outcome
            assert all(row["verdict"] in d["before"] for row in a[k].values() if row["ok"])
            assert d["before_outcome"] in ("win", "tie", "loss") and f"({d['after_outcome']})" in d["after"]
    # the paired statistics: one row per candidate and judge, on the shared items
    stats = {(s["candidate"], s["judge"]): s for s in data["stats"]}
    assert set(stats) == {(c, j) for c, j, _ in shared}
    for (c, j), s in stats.items():
        keys = [k for k in shared if k[:2] == (c, j)]
        assert s["shared"] == len(keys)
        assert s["changed"] == sum(1 for k in keys if k in expected)
        pooled = lambda side: _figure({(k, o): r for k in keys for o, r in side[k].items()}, pairwise)  # noqa: E731
        assert s["difference"] == pytest.approx(pooled(b) - pooled(a))
        assert s["ci_low"] <= s["difference"] <= s["ci_high"]
        assert s["p_holm"] is not None and s["p_holm"] >= s["p_value"]
        if s["changed"] == 0:
            assert s["difference"] == 0 and s["ci_low"] == s["ci_high"] == 0
    if not pairwise:  # only the first judge's seed moved: the second judge changed nothing
        assert all(s["changed"] == 0 for (c, j), s in stats.items() if j == "judge-2")
    # the terminal: the statistics and the top changed items, largest first
    out = r.stdout
    assert f"{before.name} -> {after.name}: paired differences" in out
    assert f"changed items ({min(3, len(diffs))} of " in out
    top = max(diffs, key=lambda d: abs(float(d["delta"])))
    assert top["item"] in out
    # the page: the statistics table and the changed items in its browser, each linking both runs
    doc = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    assert any("item differences" in t["title"] for t in doc["tables"])
    assert len(doc["items"]) == len(diffs)
    links = [link for it in doc["items"] for blk in it["blocks"] for link in blk.get("links", [])]
    assert {href for _, href in links} == {d["before_link"] for d in diffs} | {d["after_link"] for d in diffs}
    html = page.read_text(encoding="utf-8")
    assert '<div id="browser">' in html and "blink" in html


def test_a_run_against_a_copy_of_itself_changes_nothing(runs, tmp_path):
    before, _ = runs["rubric_quickstart"]
    twin = tmp_path / "twin"
    shutil.copytree(before, twin)
    r = invoke("report", before, twin, "--out", tmp_path / "lb.html")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "diffs.json").read_text(encoding="utf-8"))
    assert data["changes"] == [] and data["stats"]
    assert all(s["changed"] == 0 and s["difference"] == 0 for s in data["stats"])
    assert "no item changed" in r.stdout
    assert _read_csv(tmp_path / "diffs.csv") == []


def test_a_glob_with_the_cache_and_stray_files(runs, tmp_path, monkeypatch):
    root = runs["pairwise_quickstart"][0].parent  # the run folders and pq-b.duckdb, rq-b.duckdb
    (root / "cache.duckdb").write_bytes(b"DUCK")
    (root / "notes.txt").write_text("x")
    (root / "empty").mkdir(exist_ok=True)
    (root / "old").mkdir(exist_ok=True)
    (root / "old" / "summary.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    paths = sorted(root.iterdir())
    r = invoke("report", *paths)
    assert r.exit_code == 0, r.output
    skipped = [ln for ln in r.stderr.splitlines() if ln.startswith("skipped ")]
    runs_ = {p for p in paths if (p / "report.json").is_file()}
    assert len(skipped) == len(paths) - len(runs_) >= 5
    assert f"skipped {root / 'cache.duckdb'}: not a run folder (a file)" in skipped
    assert any(str(root / "old") in ln and "older version" in ln for ln in skipped)
    # runs of two benchmarks: each compared only with its own
    data = json.loads((tmp_path / "diffs.json").read_text(encoding="utf-8"))
    assert {(p["benchmark"], p["before"], p["after"]) for p in data["pairs"]} == {("pairwise", "pq-a", "pq-b"),
                                                                                ("rubric", "rq-a", "rq-b")}
    # no run among several paths, or one bad path: exit 2, one line
    assert_user_error(invoke("report", root / "cache.duckdb", root / "notes.txt", root / "empty"),
                      "none of the 3 paths is a run folder")
    assert_user_error(invoke("report", root / "cache.duckdb"), "not a folder")


def test_baseline_picks_the_before_run(runs, tmp_path):
    before, after = runs["pairwise_quickstart"]
    r = invoke("report", before, after, "--baseline", after, "--out", tmp_path / "lb.html", "--top", "0")
    assert r.exit_code == 0, r.output
    rows = _read_csv(tmp_path / "diffs.csv")
    assert rows and all((d["before_run"], d["after_run"]) == (after.name, before.name) for d in rows)
    assert "largest change first" not in r.stdout and f"{len(rows)} changed items (see diffs.csv)" in r.stdout
    assert_user_error(invoke("report", before, after, "--baseline", tmp_path), "--baseline", "not one of the run folders")


def _row(item, value, verdict=None, *, order=None, ok=True, judge="j", kind="rubric", cand="c"):
    return {"item": item, "candidate": cand, "judge": judge, "order": order, "kind": kind, "value": value,
            "verdict": verdict, "ok": ok, "error_kind": None if ok else "parse"}


def test_matching_rules():
    # a judge swap: each run has one judge, under another name
    d = run_differences([_row("1", 5.0), _row("2", 3.0)], [_row("1", 5.0, judge="k"), _row("2", 4.0, judge="k")])
    assert [(s["judge"], s["shared"], s["changed"]) for s in d["stats"]] == [("j -> k", 2, 1)]
    assert d["changes"][0].item == "2" and d["changes"][0].delta == 1.0
    # a failure on one side, a recovery on the other; an item only one run has is not shared
    d = run_differences([_row("1", 5.0), _row("2", None, ok=False), _row("3", 1.0)],
                        [_row("1", None, ok=False), _row("2", 4.0)])
    assert {c.item: c.change for c in d["changes"]} == {"1": "failed", "2": "recovered"}
    assert d["stats"][0]["shared"] == 2
    # pairwise: one order's verdict moves within a win -> a verdict change; a same-score rewording is none
    a = [_row("1", 2.0, "[[B>>A]]", order=0, kind="pairwise"), _row("1", 1.0, "[[A>B]]", order=1, kind="pairwise")]
    b = [_row("1", 2.0, "[[B>>A]]", order=0, kind="pairwise"), _row("1", 2.0, "[[A>>B]]", order=1, kind="pairwise")]
    c = [_row("1", 2.0, "[[B >> A]]", order=0, kind="pairwise"), _row("1", 1.0, "[[A > B]]", order=1, kind="pairwise")]
    d = run_differences(a, b)
    (ch,) = d["changes"]
    assert ch.change == "verdict" and ch.delta == pytest.approx(25.0)
    assert ch.before.text("pairwise") == "[[B>>A]] +2 | [[A>B]] +1 = +75 (win)"
    assert run_differences(a, c)["changes"] == []
    # MMIE's shape: one score per item, no order; a row both runs skipped is no change
    a = [_row("1", 4.0, "4", kind="score"), _row("2", None, ok=False, kind="score"), _row("3", 6.0, "6", kind="score")]
    b = [_row("1", 3.0, "3", kind="score"), _row("2", None, ok=False, kind="score"), _row("3", 6.0, "6", kind="score")]
    d = run_differences(a, b)
    assert [(c.item, c.change, c.before.text("score"), c.after.text("score")) for c in d["changes"]] == \
        [("1", "score", "4", "3")]
    assert d["stats"][0]["metric"] == "mean score" and d["stats"][0]["difference"] == pytest.approx(-0.5)


def test_the_page_links_each_changed_item_in_both_reports(runs, tmp_path, chromium):
    """Drawn in Chromium: every changed item's two blocks carry a link to the item in each run's
    report.html (the page's script makes them from the blocks' links)."""
    import re

    before, after = runs["rubric_quickstart"]
    page = tmp_path / "leaderboard.html"
    assert invoke("report", before, after, "--out", page, "--top", "0").exit_code == 0
    rows = _read_csv(tmp_path / "diffs.csv")
    dom = chromium.dom(page.as_uri() + "#check")
    assert f'data-items="{len(rows)}"' in dom
    hrefs = re.findall(r'<a class="blink" href="([^"]+)">open in ', dom)
    assert sorted(hrefs) == sorted([d["before_link"] for d in rows] + [d["after_link"] for d in rows])
