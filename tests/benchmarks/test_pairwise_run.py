"""The generic pairwise benchmark end to end, as a new user runs it: a ~20-line spec, a prompt
file and a JSONL of questions written here, against the simulator over real HTTP; Reward, Win
Rate and their intervals in summary.json agree with the judgment records; the report, the tidy
export, a resume from the cache, a panel, imported answers with a baseline column, re-asks."""

import asyncio
import json
from types import SimpleNamespace

import pytest
from pairwise_helpers import QUESTIONS, answers_file, run, write_case
from run_helpers import read_csv, stage_rows

import judgekit
from judgekit.config import load_spec
from judgekit.runner import RunOptions, estimate_spec, run_spec

N = len(QUESTIONS)


def _overall(summary, model, key="results"):
    rows = summary[key] if key == "results" else summary["ensemble"]["results"]
    return next(r for r in rows if r["model"] == model and r["level"] == "overall")


def _estimate(spec_path) -> dict[str, int]:
    spec = load_spec(str(spec_path))
    root = spec_path.parent
    est = asyncio.run(estimate_spec(spec, RunOptions(out_dir=root / "est", cache_path=root / "cache.duckdb")))
    by_stage: dict[str, int] = {}
    for line in est.estimate.lines:
        by_stage[line.stage] = by_stage.get(line.stage, 0) + line.calls_to_make
    return by_stage


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    spec = write_case(tmp_path_factory.mktemp("pairwise"))
    before = _estimate(spec)
    outcome = run(spec)
    return SimpleNamespace(spec=spec, outcome=outcome, out=spec.parent / "out", before=before, after=_estimate(spec))


def test_estimate_counts_every_call_then_none(first):
    assert first.before == {"baseline": N, "candidate": N, "judge": 2 * N}
    assert first.after == {"baseline": 0, "candidate": 0, "judge": 0}


def test_summary_figures_follow_the_judgments(first):
    o = first.outcome
    assert o.exit_code == 0, (o.message, o.failed_items)
    summary = json.loads((first.out / "summary.json").read_text())
    assert summary["benchmark"] == "pairwise" and summary["complete"] and summary["items"] == N
    assert summary["baseline"] == {"name": "baseline", "source": "model"}
    assert summary["calls_by_provider"] == {"sim": N + N + 2 * N}  # baseline, candidate, judge x 2 orders
    judgments = read_csv(first.out / "judgments.csv")
    assert len(judgments) == 2 * N and {j["order"] for j in judgments} == {"0", "1"}
    scores = [int(j["score"]) for j in judgments if j["score"] != ""]
    row = _overall(summary, "my-vlm")
    assert row["n_pairwise"] == 2 * N and row["fail"] == 2 * N - len(scores)
    assert row["reward"] == pytest.approx(50.0 * sum(scores) / len(scores))
    assert row["win_rate"] == pytest.approx(100.0 * sum(s > 0 for s in scores) / len(scores))
    for key in ("reward", "win_rate"):
        assert row[f"{key}_ci_low"] <= row[key] <= row[f"{key}_ci_high"], key
    assert summary["intervals"]["samples"] == 200 and summary["intervals"]["figures"] == ["reward", "win_rate"]
    cats = {r["group"] for r in summary["results"] if r["level"] == "category"}
    assert cats == {"math", "visual", "writing"}
    # each judgment's score is the parser's reading of its reply, negated when the candidate is A
    for j in judgments:
        token = j["verdict"]
        if token:
            assert token in j["judge_text"]
            b_score = {"A>>B": -2, "A>B": -1, "A=B": 0, "B>A": 1, "B>>A": 2}[token.strip("[]").replace(" ", "")]
            assert int(j["score"]) == (b_score if j["order"] == "0" else -b_score)
    assert [d["model"] for d in o.result.display] == ["my-vlm"] * 4
    assert set(o.result.display[0]) == {"model", "category", "Reward", "Win Rate %", "n", "+2/+1/0/-1/-2", "fail",
                                        "parse ok %"}


def test_report_and_tidy_export(first):
    report = json.loads((first.out / "report.json").read_text())
    assert (first.out / "report.html").is_file()
    heads = {(h["candidate"], h["figure"]): h for h in report["headline"]}
    summary = json.loads((first.out / "summary.json").read_text())
    row = _overall(summary, "my-vlm")
    assert heads[("my-vlm", "Reward")]["value"] == pytest.approx(row["reward"])
    assert heads[("my-vlm", "Win Rate")]["low"] is not None and heads[("my-vlm", "Win Rate")]["high"] is not None
    assert [it["id"] for it in report["items"]] == [q["id"] for q in QUESTIONS]
    visual = next(it for it in report["items"] if it["id"] == "a3")
    kinds = [b["kind"] for b in visual["blocks"]]
    assert kinds[:4] == ["question", "reference", "baseline", "answer"] and kinds.count("judgment") == 2
    assert any("image" in p for p in visual["blocks"][0]["parts"])
    for it in report["items"]:
        for b in it["blocks"]:
            if b["kind"] == "judgment" and b.get("highlight"):
                reply = "".join(p.get("text", "") for p in b["parts"])
                assert b["highlight"] in reply and b["verdict"].startswith(b["highlight"])
    rows = judgekit.results(first.out, kind="rows")
    assert len(rows) == 2 * N
    assert {(r["item"], r["order"]) for r in rows} == {(q["id"], k) for q in QUESTIONS for k in (0, 1)}
    judgments = {(j["index"], j["order"]): j for j in read_csv(first.out / "judgments.csv")}
    for r in rows:
        j = judgments[(r["item"], str(r["order"]))]
        assert r["benchmark"] == "pairwise" and r["kind"] == "pairwise" and r["candidate"] == "my-vlm"
        assert r["value"] == (float(j["score"]) if j["score"] else None) and r["judge_text"] == j["judge_text"]


def test_resume_from_the_cache_makes_no_calls(first):
    again = run(first.spec, "out2")
    assert again.exit_code == 0
    s1 = json.loads((first.out / "summary.json").read_text())
    s2 = json.loads((first.spec.parent / "out2" / "summary.json").read_text())
    assert s2["paid_calls"] == 0 and s2["cache_hits"] == 4 * N
    assert s2["results"] == s1["results"]


def test_panel_of_two_judges(tmp_path):
    spec = write_case(tmp_path, roles='candidates = ["my-vlm"]\njudges = ["judge", "judge-2"]\nbaseline = "baseline"')
    o = run(spec)
    assert o.exit_code == 0, o.message
    s = o.summary
    assert s["judges"] == ["judge", "judge-2"] and set(s["per_judge"]) == {"judge", "judge-2"}
    ens = _overall(s, "my-vlm", key="ensemble")
    assert ens["n_pairwise"] == 2 * N and ens["reward"] is not None
    alpha = [a for a in s["agreement"] if a["quantity"] == "pairwise verdict" and a["model"] == "my-vlm"]
    assert len(alpha) == 1 and alpha[0]["items"] == 2 * N
    assert {b["judge"] for b in s["judge_behaviour"]} == {"judge", "judge-2", "ensemble"}
    assert len(read_csv(tmp_path / "out" / "judgments.csv")) == 2 * 2 * N
    assert len(judgekit.results(tmp_path / "out", kind="rows")) == 2 * 2 * N  # one row per judge x order
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {h["judge"] for h in report["headline"]} == {"judge", "ensemble"}


def test_imported_answers_against_a_baseline_column(tmp_path):
    """Only imported candidates and a baseline column: no answer call; an item one answers file
    lacks is a counted failure for that candidate, not a dropped item."""
    answers_file(tmp_path / "notes.jsonl", {"a1": "42", "a2": "91 is prime.", "a3": "Blue.", "a4": "Lunch?"})
    answers_file(tmp_path / "partial.jsonl", {"a1": "17 + 25 = 42", "a3": "The square is blue."})
    spec = write_case(tmp_path, roles='judge = "judge"',
                      options='baseline_column = "expert"\n'
                              'answers = { "notes" = "notes.jsonl", "partial" = "partial.jsonl" }\n')
    o = run(spec)
    assert o.exit_code == 0, o.message
    s = o.summary
    assert s["candidates"] == ["notes", "partial"] and s["imported"] == ["notes", "partial"]
    assert s["baseline"] == {"name": "expert", "source": "column"}
    assert s["calls_by_provider"] == {"sim": 2 * 2 * N - 4}  # judge calls only; partial's 2 missing items
    partial = _overall(s, "partial")
    assert partial["n_pairwise"] == 2 * N and partial["fail"] == 4
    assert o.failed_items == [] and "partial: no imported answer for 2 of 4 items" in o.result.notes
    judgments = read_csv(tmp_path / "out" / "judgments.csv")
    missing = [j for j in judgments if j["model"] == "partial" and j["index"] in ("a2", "a4")]
    assert len(missing) == 4 and {j["error_kind"] for j in missing} == {"no_answer"}
    # the judge read the column's answer as Assistant A in order 0
    a1 = next(j for j in o.result.tables["judgments"] if j["model"] == "notes" and j["index"] == "a1")
    assert a1["order"] == 0
    behaviour = {(b["judge"], b["model"]): b for b in s["judge_behaviour"]}
    assert behaviour[("judge", "partial")]["judgments"] == 4  # failures without a call are not the judge's
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    a2 = next(it for it in report["items"] if it["id"] == "a2")
    assert any(b["kind"] == "baseline" and "91 is 7 times 13" in b["parts"][0]["text"] for b in a2["blocks"])
    assert "no answer" in a2["flags"]


def test_two_imported_candidates_from_two_columns_of_one_file(tmp_path):
    """Each imported candidate names its own answer column: two candidates read two columns of
    the data file itself, a third its own file through the global answer_column; all three are
    judged, each with its own answers."""
    rows = [dict(q, ans_x=f"x says {q['reference']}", ans_y=f"y says {q['expert']}") for q in QUESTIONS]
    answers_file(tmp_path / "notes.jsonl", {q["id"]: f"notes on {q['id']}" for q in QUESTIONS})
    spec = write_case(tmp_path, rows=rows, roles='judge = "judge"',
                      options='baseline_column = "expert"\n'
                              'answers = { "x" = { file = "questions.jsonl", answer_column = "ans_x" }, '
                              '"y" = { file = "questions.jsonl", answer_column = "ans_y" }, "notes" = "notes.jsonl" }\n')
    o = run(spec)
    assert o.exit_code == 0, o.message
    s = o.summary
    assert s["candidates"] == ["x", "y", "notes"] and s["imported"] == ["x", "y", "notes"]
    assert s["calls_by_provider"] == {"sim": 3 * 2 * N}  # every candidate judged on every item, both orders
    for name in ("x", "y", "notes"):
        assert _overall(s, name)["n_pairwise"] == 2 * N and _overall(s, name)["fail"] == 0
    answers = {(a["model"], a["index"]): a["answer"] for a in o.result.tables["answers"]}
    for q in QUESTIONS:
        assert answers[("x", q["id"])] == f"x says {q['reference']}"
        assert answers[("y", q["id"])] == f"y says {q['expert']}"
        assert answers[("notes", q["id"])] == f"notes on {q['id']}"


def test_reask_on_parse_failure(tmp_path):
    """A garbled judge reply is followed by one request for the verdict line; the first reply is
    kept for the report and the judgment is marked re-asked."""
    spec = write_case(tmp_path, options="reask_on_parse_failure = true\n", garbage=0.5)
    o = run(spec)
    assert o.exit_code == 0, o.message
    js = o.result.tables["judgments"]
    reasked = [j for j in js if j["reasked"]]
    assert reasked, "garbage_rate 0.5 over 8 judgments left none to re-ask"
    made = o.summary["calls_by_provider"]["sim"]
    assert made == 2 * N + 2 * N + len(reasked)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    statuses = [b.get("status") for it in report["items"] for b in it["blocks"] if b["kind"] == "judgment"]
    assert statuses.count("reasked") == len(reasked)


def test_later_judgments_read_the_first_ones_prefix_from_the_prompt_cache(tmp_path):
    """A judge's first judgment of an item goes alone, the others once it has an answer, so the
    simulator's prompt cache (as OpenAI's: repeated prefixes; here from 16 tokens) serves their
    shared prefix.  Two candidates: each item has four judgments of one judge, three of them
    after the first.  (Sent all at once, with the judge's 40 ms latency, none is served from
    the cache: checked by hand, 0 cached calls.)"""
    answers_file(tmp_path / "notes.jsonl", {q["id"]: q["expert"] + " More words." for q in QUESTIONS})
    spec = write_case(tmp_path, options='answers = { "notes" = "notes.jsonl" }\n')
    o = run(spec, "out", "models.judge.sim.prefix_cache_min_tokens={ sim-judge = 16 }",
            "models.judge.sim.prefix_cache_step=16", "models.judge.sim.latency_ms=40")
    assert o.exit_code == 0, o.message
    cache = o.summary["prompt_cache"]
    assert cache["calls"] >= 3 * N and cache["cached_input_tokens"] > 0, cache


@pytest.mark.parametrize(("who", "model", "kind"), [("my-vlm", "sim-vlm-strong", "candidate_failed"),
                                                    ("baseline", "sim-vlm-weak", "baseline_failed")])
def test_a_refused_answer_is_a_counted_failure_with_no_judge_call(tmp_path, who, model, kind):
    """Every reply of the candidate (or of the live baseline) is a refusal: each judgment is a
    failure of its kind, counted in fail, no judge call is made, the failed calls are listed (exit
    1: a re-run retries them) and the judge's behaviour leaves them out."""
    spec = write_case(tmp_path)
    o = run(spec, "out", f'models.{who}.sim.reply_fault_models={{ {model} = "refusal" }}')
    assert o.exit_code == 1 and len(o.failed_items) == N
    assert all(("candidate" if who == "my-vlm" else "baseline") in f for f in o.failed_items)
    js = o.result.tables["judgments"]
    assert len(js) == 2 * N and {j["error_kind"] for j in js} == {kind} and not any(j["judge_text"] for j in js)
    row = _overall(o.summary, "my-vlm")
    assert row["fail"] == 2 * N and row["reward"] is None
    answered = asyncio.run(stage_rows(tmp_path / "cache.duckdb"))  # what the cache holds, by stage
    assert answered == {("baseline" if who == "my-vlm" else "candidate"): N}  # no judge call at all
    behaviour = next(b for b in o.summary["judge_behaviour"] if b["model"] == "my-vlm")
    assert behaviour["judgments"] == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert all(b["status"] == "skipped" for it in report["items"] for b in it["blocks"] if b["kind"] == "judgment")


def test_reasks_stay_within_the_estimate_bound(tmp_path):
    """With re-asks on and a judge that garbles 40 % of its replies, no stage makes more calls
    than the estimate's bound (each judgment planned with a possible re-ask)."""
    spec = load_spec(str(write_case(tmp_path, options="reask_on_parse_failure = true\n", garbage=0.4)))
    opts = RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "cache.duckdb")
    bound: dict[str, int] = {}
    for line in asyncio.run(estimate_spec(spec, opts)).estimate.lines:
        bound[line.stage] = bound.get(line.stage, 0) + line.calls_total
    out = asyncio.run(run_spec(spec, opts))
    made = {s.name: s.calls + s.cache_hits + s.failures for s in out.stats.stages.values()}
    assert bound == {"baseline": N, "candidate": N, "judge": 2 * 2 * N}
    assert made["judge"] > 2 * N, "no reply was re-asked"
    assert all(made[s] <= bound[s] for s in made), (made, bound)
