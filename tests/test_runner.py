"""Creation-MMBench end to end through the runner, against the simulator."""


import duckdb
import pytest

from judgekit.config import load_spec
from judgekit.errors import DataError
from judgekit.runner import RunOptions, estimate_spec, run_spec


def opts(tmp_path, **kw):
    return RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "cache.duckdb", **kw)


def fast(*extra):
    # the quickstart (a panel of two judges) with no simulated latency
    sets = [f"models.{a}.sim.latency_ms=0" for a in ("sim-strong", "sim-weak", "judge", "judge-2")]
    return load_spec("quickstart", [*sets, *extra])


ONE_JUDGE = 'roles.judges=["judge"]'


async def test_quickstart_runs_and_resumes_without_paying_twice(tmp_path):
    spec = fast("options.bootstrap_samples=200")
    first = await run_spec(spec, opts(tmp_path, limit=4))
    assert first.exit_code == 0, first.message
    s = first.summary
    # 4 items x 2 candidates: 8 candidate calls; for each of the two judges 16 pairwise and VFS on
    # the items with VF criteria
    n_vf = 3  # items 0, 1, 3 of the first four have visual-factuality criteria
    assert first.served_by_simulator == 8 + 2 * (16 + 2 * 2 * n_vf)
    _check_panel_summary(s, first.result)
    overall = {r["model"]: r for r in s["results"] if r["level"] == "overall"}
    assert set(overall) == {"sim-strong", "sim-weak"}
    for r in overall.values():
        assert r["n_pairwise"] == 8 and r["fail"] == 0
        assert -100 <= r["reward"] <= 100 and 0 <= r["win_rate"] <= 100
        assert r["vfs"] is not None and 0 <= r["vfs"] <= 10
    assert overall["sim-strong"]["reward"] > overall["sim-weak"]["reward"]
    # the baseline's VFS beside the candidate's (the reference's visual_factuality_ref_score)
    judg = first.result.tables["judgments"]
    for model, r in overall.items():
        refs = [j["vfs_ref"] for j in judg if j["model"] == model and j["kind"] == "vfs" and j["ok"]
                and j["judge"] == "judge"]
        assert r["vfs_ref"] == pytest.approx(sum(refs) / len(refs))
    assert all("VFS ref" in row for row in first.result.display)
    # defaults reproduce the authors' code: only the injection guard is listed
    assert [(d["option"], d["kind"]) for d in s["deviations"]] == [("defuse_answers", "injection guard")]
    for name in ("summary.json", "summary.csv", "judgments.csv", "answers.csv", "comparisons.csv",
                 "judge_behaviour.csv", "agreement.csv"):
        assert (tmp_path / "out" / name).exists()

    again = await run_spec(spec, opts(tmp_path, limit=4))
    assert again.exit_code == 0
    assert again.served_by_simulator == 0
    assert again.summary["results"] == s["results"]
    assert again.summary["cache_hits"] == first.served_by_simulator

    con = duckdb.connect(str(tmp_path / "cache.duckdb"), read_only=True)
    n = con.execute("select count(*) from result_creation_mmbench_judgments").fetchone()[0]
    assert n == 2 * (16 + 4 * n_vf)
    runs = con.execute("select status from runs order by started_at").fetchall()
    assert [r[0] for r in runs] == ["done", "done"]
    con.close()


async def test_estimate_makes_no_call_and_counts_cached(tmp_path):
    spec = fast()
    est = (await estimate_spec(spec, opts(tmp_path, limit=2))).estimate
    stages = {ln.stage for ln in est.lines}
    assert stages == {"candidate", "pairwise", "vfs"}
    # every judge's calls: 2 items x 2 candidates x 2 orders each (items 0 and 1 have VF criteria)
    for stage in ("pairwise", "vfs"):
        per_judge = {ln.alias: ln.calls_total for ln in est.lines if ln.stage == stage}
        assert per_judge == {"judge": 8, "judge-2": 8}, per_judge
    assert est.calls_to_make == sum(ln.calls_total for ln in est.lines)
    assert est.total_max_usd == 0.0  # the simulator is free
    cand = [ln for ln in est.lines if ln.stage == "candidate"]
    assert all(ln.input_tokens > 0 and ln.input_exact is False for ln in cand)  # sim models: no known tokenizer
    await run_spec(spec, opts(tmp_path, limit=1))
    est2 = (await estimate_spec(spec, opts(tmp_path, limit=2))).estimate
    assert est2.calls_to_make < est.calls_to_make
    assert sum(ln.calls_cached for ln in est2.lines) > 0


async def test_unparseable_judge_replies_are_counted_and_reasked(tmp_path):
    sets = ["models.judge.sim.garbage_rate=0.5", ONE_JUDGE]
    spec = fast(*sets)
    out = await run_spec(spec, opts(tmp_path, limit=3))
    fails = [r for r in out.summary["results"] if r["level"] == "overall"]
    assert sum(r["fail"] for r in fails) > 0  # counted, never dropped or scored as a loss
    judg = out.result.tables["judgments"]
    bad = [j for j in judg if not j["ok"]]
    assert bad and all(j["error_kind"] == "parse_failure" and j["judge_text"] for j in bad)
    assert all(j["score"] is None and j["vfs"] is None for j in bad)

    spec2 = fast(*sets, "options.reask_on_parse_failure=true")
    out2 = await run_spec(spec2, opts(tmp_path, limit=3))
    judg2 = out2.result.tables["judgments"]
    assert any(j["reasked"] for j in judg2)
    assert sum(not j["ok"] for j in judg2) < len(bad)


async def test_a_failed_candidate_call_is_judged_as_the_reference_does_or_counted(tmp_path):
    refuse = 'models.sim-weak.sim.reply_fault_models.sim-vlm-weak="refusal"'  # every weak answer refused
    out = await run_spec(fast(refuse, ONE_JUDGE), opts(tmp_path, limit=2))
    assert out.exit_code == 1 and len(out.failed_items) == 2  # reported, and a rerun asks again
    weak = [j for j in out.result.tables["judgments"] if j["model"] == "sim-weak"]
    # the reference judges its API wrapper's failure message as the answer: 2 items x 2 orders
    # pairwise for each model, and VFS on the items with criteria
    assert len(weak) == 2 * 2 + 2 * 2 and all(j["ok"] for j in weak)
    assert out.stats.stage("pairwise").calls == 2 * 2 * 2

    counted = await run_spec(fast(refuse, ONE_JUDGE, "options.failed_answer_counts_as_failure=true"),
                             opts(tmp_path, limit=2))
    weak = [j for j in counted.result.tables["judgments"] if j["model"] == "sim-weak"]
    assert len(weak) == 8 and all(not j["ok"] and j["error_kind"] == "candidate_failed" for j in weak)
    row = next(r for r in counted.summary["results"] if r["model"] == "sim-weak" and r["level"] == "overall")
    assert row["fail"] == 4 and row["vfs_fail"] == 4 and row["reward"] is None
    assert [d["option"] for d in counted.summary["deviations"]] == ["failed_answer_counts_as_failure",
                                                                     "defuse_answers"]
    assert counted.stats.stage("pairwise").calls == 0  # the strong model's judgments are cached


async def test_text_only_variant_describes_images_first(tmp_path):
    spec = fast("roles.describer=\"judge\"", "options.text_only=true", ONE_JUDGE)
    out = await run_spec(spec, opts(tmp_path, limit=2))
    assert out.exit_code == 0, out.message
    assert out.stats.stage("describe").calls == 2  # once per item, shared by both candidates
    assert out.stats.stage("candidate").calls == 4


async def test_text_only_needs_a_describer(tmp_path):
    from judgekit.errors import SpecError

    with pytest.raises(SpecError, match="describer"):
        await run_spec(fast("options.text_only=true"), opts(tmp_path, limit=1))


async def test_unknown_option_is_named(tmp_path):
    from judgekit.errors import SpecError

    with pytest.raises(SpecError, match="options.dual_eval: unknown key"):
        await run_spec(fast("options.dual_eval=true"), opts(tmp_path, limit=1))


async def test_human_alignment(tmp_path):
    human = tmp_path / "human.csv"
    human.write_text("index,model,human_1,human_2\n0,sim-strong,2,1\n1,sim-strong,-1,-1\n0,sim-weak,0,0\n")
    spec = fast(f"options.human_ratings=\"{human}\"", ONE_JUDGE)
    out = await run_spec(spec, opts(tmp_path, limit=2))
    rows = {r["model"]: r for r in out.summary["human_alignment"] if r["judge"] == "judge"}
    assert rows["sim-strong"]["items"] == 2 and rows["sim-weak"]["items"] == 1
    assert {r["judge"] for r in out.summary["human_alignment"]} == {"judge"}
    assert rows["overall"]["items"] == 3  # pooled over the candidates
    judg = [j for j in out.result.tables["judgments"] if j["kind"] == "pairwise" and j["model"] == "sim-weak"
            and j["index"] == "0" and j["judge"] == "judge"]
    j = sum(x["score"] for x in judg) / len(judg)
    assert rows["sim-weak"]["mae"] == pytest.approx(abs(j - 0))
    assert rows["sim-weak"]["consistency"] == (100.0 if abs(j) <= 1 else 0.0)


async def test_malformed_tsv_names_row_and_column(tmp_path):
    import csv
    import sys

    csv.field_size_limit(sys.maxsize)
    src = load_spec("quickstart").data_path()
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    col = rows[0].index("criteria")
    # the third data row: a dict without subjective criteria, which stops the reference too (a
    # text that is no literal is subjective criteria for it, so no longer an error)
    rows[3][col] = "{'visual factuality': 'only'}"
    p = tmp_path / "bad.tsv"
    with open(p, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter="\t").writerows(rows)
    spec = fast(f"data=\"{p}\"")
    with pytest.raises(DataError) as e:
        await run_spec(spec, opts(tmp_path))
    msg = str(e.value)
    assert str(p) in msg and "row 3" in msg and "'criteria'" in msg


async def test_text_only_estimate_counts_descriptions_once_per_item(tmp_path):
    spec = fast("roles.describer=\"judge\"", "options.text_only=true", "options.description=\"query_specific\"",
                ONE_JUDGE)
    est = (await estimate_spec(spec, opts(tmp_path, limit=3))).estimate
    describe = [ln for ln in est.lines if ln.stage == "describe"]
    assert sum(ln.calls_total for ln in describe) == 3 * 2  # few-shot + description, once per item
    assert not any(ln.input_exact for ln in est.lines if ln.stage != "describe")  # nothing cached yet
    await run_spec(spec, opts(tmp_path, limit=3))
    est2 = (await estimate_spec(spec, opts(tmp_path, limit=3))).estimate
    assert est2.calls_to_make == 0
    assert sum(ln.calls_total for ln in est2.lines) == sum(ln.calls_total for ln in est.lines)


def _check_panel_summary(s, result):
    """What a two-judge run reports beyond one judge's results: per judge, the ensemble, agreement,
    behaviour, intervals (that hold their estimates) and comparisons."""
    assert s["judges"] == ["judge", "judge-2"] and s["judge"] == "judge"
    assert s["per_judge"]["judge"] == s["results"] and set(s["per_judge"]) == {"judge", "judge-2"}
    assert s["ensemble"]["rule"] and s["ensemble"]["results"]
    assert s["intervals"]["method"] == "percentile bootstrap over items" and s["intervals"]["samples"] == 200
    for rows in (*s["per_judge"].values(), s["ensemble"]["results"]):
        for r in rows:
            for figure in ("reward", "win_rate", "vfs", "vfs_ref"):
                low, high = r[f"{figure}_ci_low"], r[f"{figure}_ci_high"]
                if r[figure] is None:
                    assert low is None and high is None
                else:  # the bounds are rounded to 2 decimals
                    assert low - 0.005 <= r[figure] <= high + 0.005, (r["model"], r["group"], figure)
    assert {(a["quantity"], a["model"]) for a in s["agreement"]} == {
        (q, m) for q in ("pairwise verdict", "vfs") for m in ("sim-strong", "sim-weak", "all")}
    assert all(a["items"] > 0 and a["krippendorff_alpha"] is not None for a in s["agreement"])
    behaviour = {(b["judge"], b["model"]): b for b in s["judge_behaviour"]}
    assert set(behaviour) == {(j, m) for j in ("judge", "judge-2", "ensemble") for m in ("sim-strong", "sim-weak", "all")}
    for b in behaviour.values():
        assert 0 <= b["swap_consistency"] <= 1 and 0 <= b["first_slot_preference"] <= 1
        assert b["length_correlation"] is not None and b["parse_failure_rate"] == 0.0
    assert {(c["judge"], c["metric"]) for c in s["comparisons"]} == {
        (j, m) for j in ("judge", "ensemble") for m in ("reward", "win_rate", "vfs")}
    judges = {r["judge"] for r in result.tables["summary"]}
    assert judges == {"judge", "judge-2", "ensemble"}
    assert {j["judge"] for j in result.tables["judgments"]} == {"judge", "judge-2"}
    assert all(j["length_diff"] is not None for j in result.tables["judgments"])
    printed = [title for title, _ in result.more_displays]
    assert "Judge behaviour" in printed and "Judge agreement (Krippendorff's alpha)" in printed
    assert all(row["Reward"].count("[") == 1 for row in result.display)


async def test_a_judge_that_cannot_judge_is_named(tmp_path):
    from judgekit.errors import SpecError

    spec = fast('models.painter.provider="sim_image"', 'models.painter.model="sim-painter"',
                'roles.judges=["judge", "painter"]')
    with pytest.raises(SpecError, match=r"roles.judges: 'painter' cannot judge \(provider 'sim_image'\)"):
        await run_spec(spec, opts(tmp_path, limit=1))
