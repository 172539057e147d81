"""GuessBench end to end through the runner and the CLI, against the simulator over real HTTP.
One run of the shipped runner on 4 sets serves the module: the first test checks it, the kill test
compares its resumed run with it."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import duckdb
import pytest

import judgekit
from judgekit.cache.store import CacheStore
from judgekit.config import load_spec
from judgekit.report.tidy import TIDY_COLUMNS
from judgekit.runner import RunOptions, estimate_spec, run_spec
from judgekit.sim import SimConfig, SimProcess

ALIASES = ("sim-strong", "sim-weak", "extractor", "extractor-b", "search")


def opts(tmp_path, **kw):
    return RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "cache.duckdb", **kw)


def fast(*extra):
    return load_spec("guessbench", [*(f"models.{a}.sim.latency_ms=0" for a in ALIASES), *extra])


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The shipped runner (latency 0) on 4 sets, once for the module, in its own folder and cache."""
    root = tmp_path_factory.mktemp("guessbench-4")
    spec = fast()
    first = asyncio.run(run_spec(spec, opts(root, limit=4)))
    return SimpleNamespace(root=root, spec=spec, first=first)


async def test_every_approach_runs_scores_and_resumes(sample):
    spec, first, root = sample.spec, sample.first, sample.root
    assert first.exit_code == 0, (first.message, first.failed_items)
    rows = first.summary["results"]
    assert len(rows) == 2 * 8
    assert {r["approach"] for r in rows} == {"cot", "no_cot", "one_shot", "self_consistency", "self_refine",
                                             "image_retrieval", "image_only", "hint_only"}
    for r in rows:
        assert r["n_static"] == 4 and r["n_dynamic"] == 4
        for k in ("static_all", "dynamic_1_all", "dynamic_2_all", "dynamic_3_all"):
            assert 0 <= r[k] <= 100
        # carried forward: attempt accuracies never go down
        assert r["dynamic_1_all"] <= r["dynamic_2_all"] <= r["dynamic_3_all"]
    # progress totals end equal to what was done (early stops take their calls off the total)
    for st in first.stats.stages.values():
        assert st.done == st.total, st
    assert first.summary["retrieval_outcomes"]
    # the shipped runner keeps the authors' rules but one: a seed per self-consistency sample (the
    # simulator's reply is a function of the request); GuessBench has no injection guard to list
    assert [(d["option"], d["kind"]) for d in first.summary["deviations"]] == [("sc_seed", "option")]
    assert len(first.result.display) == 16 and "Static All" in first.result.display[0]
    # one extractor: no panel keys; every accuracy has its interval, printed for the all-set columns
    assert first.summary["judges"] == ["extractor"] and "per_judge" not in first.summary
    for r in rows:
        for k in ("static_all", "dynamic_3_all", "static_short"):
            assert r[f"{k}_ci_low"] <= r[k] <= r[f"{k}_ci_high"]
    title, shown_rows = first.result.more_displays[0]
    assert "intervals" in title and shown_rows[0]["Static"].startswith(f"{rows[0]['static_all']:.1f} [")
    assert first.summary["intervals"]["samples"] == 1000
    assert {(c["a"], c["b"]) for c in first.summary["comparisons"]} == {("sim-strong", "sim-weak")}
    for name in ("summary.json", "turns.csv", "sets.csv", "retrievals.csv"):
        assert (root / "out" / name).exists()
    # the tidy export: a row per turns.csv row (turn x extractor), the guess's correctness as value
    tidy = judgekit.results(root / "out", kind="rows")
    turns_rows = first.result.tables["turns"]
    assert len(tidy) == len(turns_rows) > 0 and list(tidy[0]) == list(TIDY_COLUMNS)
    assert [t["value"] for t in tidy] == [None if r["correct"] is None else float(r["correct"]) for r in turns_rows]
    assert all(t["judge_text"] for t in tidy if t["ok"]) and any(t["ok"] for t in tidy)

    again = await run_spec(spec, opts(root, limit=4))
    assert again.exit_code == 0
    assert again.served_by_simulator == 0
    assert again.summary["results"] == rows

    con = duckdb.connect(str(root / "cache.duckdb"), read_only=True)
    turns = con.execute("select count(*), count(distinct set_id) from result_guessbench_turns").fetchone()
    assert turns[1] == 4
    stored = con.execute("select count(*) from result_guessbench_retrievals where status = 'ok'").fetchone()[0]
    con.close()
    assert stored > 0


def test_the_run_writes_its_report(sample):
    """The runner's report.html of the module's run: every set with every flow on it, the headline
    from summary.json, every image a thumbnail in the run folder (retrieved ones included)."""
    import json

    out = sample.root / "out"
    summary = json.loads((out / "summary.json").read_text())
    doc = json.loads((out / "report.json").read_text())
    assert (out / "report.html").stat().st_size > 0
    assert doc["title"] == "GuessBench: guessbench" and len(doc["items"]) == summary["sets"] == 4
    for it in doc["items"]:
        groups = {b["group"] for b in it["blocks"] if b.get("group")}
        assert len(groups) == 2 * 8 * 2  # candidates x approaches x tasks
    cot = {(r["model"], "Static · CoT"): (r["static_all"], r["static_all_ci_low"], r["static_all_ci_high"])
           for r in summary["results"] if r["approach"] == "cot"}
    got = {(h["candidate"], h["figure"]): (h["value"], h["low"], h["high"]) for h in doc["headline"]
           if h["figure"] == "Static · CoT"}
    assert got == cot and {h["judge"] for h in doc["headline"]} == {"extractor"}
    images = [p["image"] for it in doc["items"] for b in it["blocks"] for p in b["parts"] if "image" in p]
    assert images and all("missing" not in im and (out / im["src"]).is_file() for im in images)
    assert any("retrieved for" in (im.get("caption") or "") for im in images)


async def test_estimate_is_an_upper_bound_then_exact_from_the_cache(tmp_path):
    # with a panel of two extractors: the second's calls are planned too
    spec = fast("options.approaches=['cot','self_refine','self_consistency','image_retrieval']",
                "roles.judges=['extractor','extractor-b']", "options.bootstrap_samples=200")
    before = await estimate_spec(spec, opts(tmp_path, limit=3))
    to_make = sum(line.calls_to_make for line in before.estimate.lines)
    done = await run_spec(spec, opts(tmp_path, limit=3))
    assert done.exit_code == 0
    # the longest path: every dynamic turn and refine round (calls shared by approaches once)
    assert done.served_by_simulator <= to_make
    after = await estimate_spec(spec, opts(tmp_path, limit=3))
    # after the run the plan follows the cached replies exactly: nothing left to pay
    assert sum(line.calls_to_make for line in after.estimate.lines) == 0
    assert all(line.input_exact for line in after.estimate.lines)
    # the cot, self-refine and retrieval approaches share their first guess: one paid call
    assert done.stats.cache_hits > 0

    # the panel's results: the first extractor's as results, each extractor's, the ensemble, agreement
    sm = done.summary
    assert sm["judges"] == ["extractor", "extractor-b"] and sm["judge"] == "extractor"
    assert sm["results"] == sm["per_judge"]["extractor"] and len(sm["per_judge"]["extractor-b"]) == 8
    assert sm["ensemble"]["rule"] == "majority" and len(sm["ensemble"]["results"]) == 8
    assert [a["model"] for a in sm["agreement"]] == ["sim-strong", "sim-weak", "all"]
    pooled = sm["agreement"][-1]
    assert pooled["items"] > 0 and pooled["level"] == "nominal" and -1 <= pooled["krippendorff_alpha"] <= 1
    rates = {r["judge"]: r for r in sm["extraction"]}
    assert rates["extractor"]["calls"] == rates["extractor-b"]["calls"] > 0  # every scored reply read twice
    assert rates["extractor-b"]["unparsed"] > rates["extractor"]["unparsed"] == 0  # its 15 % garbage
    assert {c["judge"] for c in sm["comparisons"]} == {"extractor", "ensemble"}
    for st in done.stats.stages.values():  # progress totals count every extractor's calls
        assert st.done == st.total, st
    assert any("steers" in n for n in done.result.notes)
    tables = done.result.tables
    assert {r["judge"] for r in tables["sets"]} == {"extractor", "extractor-b", "ensemble"}
    assert {r["judge"] for r in tables["turns"]} == {"extractor", "extractor-b"}
    assert len(tables["summary"]) == 3 * 8 and "static_all_ci_low" in tables["summary"][0]
    # the first extractor's figures are the ones a run without the panel gives (the same cache)
    alone = await run_spec(fast("options.approaches=['cot','self_refine','self_consistency','image_retrieval']",
                                "options.bootstrap_samples=200"), opts(tmp_path, limit=3))
    assert alone.served_by_simulator == 0 and alone.summary["results"] == sm["results"]


async def test_missing_retriever_and_judge_are_spec_errors(tmp_path):
    from judgekit.errors import SpecError

    spec = fast("roles.retriever=''")
    with pytest.raises(SpecError, match="roles.retriever"):
        await run_spec(spec, opts(tmp_path, limit=1))
    # an image retriever cannot extract answers
    spec = fast("roles.judges=['extractor','search']")
    with pytest.raises(SpecError, match="roles.judges: 'search' cannot extract answers"):
        await run_spec(spec, opts(tmp_path, limit=1))


def served(sim):
    st = sim.stats()
    return st["served"] + st.get("searches_served", 0)


def _spec_with_url(tmp_path, url):
    """The shipped runner with every alias pointed at one running simulator."""
    text = (load_spec("guessbench").source_path and open(load_spec("guessbench").source_path).read())
    text = text.replace('data = "samples:guessbench"', f'data = "{load_spec("guessbench").data_path()}"')
    text = text.replace('one_shot_example = "samples:guessbench/example"',
                        f'one_shot_example = "{load_spec("guessbench").resolve_path("samples:guessbench/example")}"')
    text = text.replace("sim = { seed = 7, latency_ms = 30, latency_jitter_ms = 20, rpm = 3000,",
                        f'sim = {{ url = "{url}", seed = 7,')
    p = tmp_path / "guessbench.toml"
    p.write_text(text)
    return p


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
async def test_kill_mid_run_then_rerun_pays_no_finished_call_twice(sample, tmp_path):
    sim = SimProcess(SimConfig(seed=7, latency_ms=25, latency_jitter_ms=20,
                               model_quality={"sim-vlm-strong": 0.75, "sim-vlm-weak": 0.3})).start()
    try:
        spec_path = _spec_with_url(tmp_path, sim.base_url)
        cache = tmp_path / "cache.duckdb"
        cmd = [sys.executable, "-m", "judgekit.cli.main", "run", str(spec_path), "--cache", str(cache),
               "--out", str(tmp_path / "out"), "--limit", "4"]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 120
        while served(sim) < 400 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(0.3)  # calls in flight at the kill finish on the server side
        served_first = served(sim)

        store = await CacheStore.open(str(cache), run_id="count")  # replays the write-ahead log
        kept = await store.count_responses()
        await store.close()
        assert 0 < kept <= served_first
        assert served_first - kept <= 64  # only calls in flight at the kill were lost

        spec = load_spec(str(spec_path))
        again = await run_spec(spec, RunOptions(out_dir=tmp_path / "out", cache_path=cache, limit=4))
        assert again.exit_code == 0, again.failed_items
        served_second = served(sim) - served_first

        store = await CacheStore.open(str(cache), run_id="count2")
        total = await store.count_responses()
        await store.close()
        # every call the rerun paid for was one the first run had not finished
        print(f"first run killed after {served_first} served, {kept} kept; rerun paid {served_second} "
              f"of {total} calls")
        assert served_second == total - kept
        # and the result is the one an uninterrupted run gives (the module's, on a simulator of the
        # same seed and qualities: latency is no part of a reply), which made exactly these calls
        assert sample.first.summary["results"] == again.summary["results"]
        assert sample.first.served_by_simulator == total
    finally:
        sim.stop()


async def test_image_folder_retriever_in_a_run(tmp_path):
    spec = fast("options.approaches=['image_retrieval']", 'models.search.provider="image_folder"',
                'models.search.path="samples:guessbench/retrieval"')
    out = await run_spec(spec, opts(tmp_path, limit=3))
    assert out.exit_code == 0, out.failed_items
    rows = out.result.tables["retrievals"]
    assert rows and all(r["source"] for r in rows)
    assert {r["status"] for r in rows} <= {"ok", "no_result"}
    assert any(r["status"] == "ok" and r["url"].endswith(".png") for r in rows)


async def test_search_http_errors_are_recorded_outcomes_not_crashes(tmp_path):
    spec = fast("options.approaches=['image_retrieval']", "options.tasks=['static']",
                "models.search.sim.search_error_rate=1.0", "models.search.limits.max_attempts=2")
    out = await run_spec(spec, opts(tmp_path, limit=2))
    assert out.exit_code == 1  # failed retrievals are listed; re-running retries them
    rows = out.result.tables["retrievals"]
    assert rows and {r["status"] for r in rows} == {"error"}
    assert all("retrieval" in f for f in out.failed_items)
    turns = out.result.tables["turns"]
    assert all(t["stop"] == "retrieval_error" and t["guess"] for t in turns)  # scored with the guess it had
    assert out.summary["results"][0]["n_static"] == 2


async def test_no_result_is_a_recorded_outcome(tmp_path):
    spec = fast("options.approaches=['image_retrieval']", "options.tasks=['static']",
                "models.search.sim.search_no_result_rate=1.0")
    out = await run_spec(spec, opts(tmp_path, limit=2))
    assert out.exit_code == 0
    assert {r["status"] for r in out.result.tables["retrievals"]} == {"no_result"}
    assert all(t["stop"] == "retrieval_no_result" for t in out.result.tables["turns"])


def test_hints_command_writes_a_set_folder(tmp_path):
    from click.testing import CliRunner

    from judgekit.benchmarks.guessbench.hints import generate_hints
    from judgekit.cli.main import cli

    res = CliRunner().invoke(cli, ["guessbench", "hints", "Glass of Milk", "--seed", "3", "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "--- Hint_3.txt" in res.output
    h = generate_hints("Glass of Milk", 3)
    for i in range(3):
        assert (tmp_path / "s" / f"Hint_{i + 1}.txt").read_text() == h[i] + "\n"
    assert (tmp_path / "s" / "Answer.txt").read_text() == "Glass of Milk\n"
    assert CliRunner().invoke(cli, ["guessbench", "hints", "  "]).exit_code == 2
