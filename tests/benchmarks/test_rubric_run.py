"""The generic rubric benchmark end to end against the simulator (real HTTP through the openai SDK):
a spec written here with a global rubric and per-item criteria, two live candidates and one
imported, one judge; then a panel of two judges, and a regex score parser, on the same cache."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import judgekit
from judgekit.config import load_spec
from judgekit.resources import samples_dir
from judgekit.runner import RunOptions, estimate_spec, run_spec

SIM = "{ seed = 7, latency_ms = 0, model_quality = { sim-vlm-strong = 0.9, sim-vlm-weak = 0.05 }, " \
      "judge_styles = { sim-judge-2 = { noise = 0.8, score_offset = 1.5 } } }"

JUDGE_PROMPT = """[Instruction]
Please act as an impartial judge and evaluate the quality of the response provided by an AI assistant to the user question displayed below, following the rubric. After a short explanation, you must rate the response on a scale of 1 to 10 by strictly following this format: "[[rating]]", for example: "Rating: [[5]]".

[Rubric]
{rubric}

[Question]
{images}
{question}

[The Start of Assistant's Answer]
{answer}
[The End of Assistant's Answer]
"""

ITEMS = [
    {"id": "c1", "category": "charts", "images": ["bars.png"], "question": "Which bar is the tallest?",
     "reference": "B", "criteria": "CRIT-ONE: full marks only for B."},
    {"id": "c2", "category": "charts", "images": "bars.png", "question": "Add up the three bars."},
    {"id": "w1", "category": "writing", "question": "Write a haiku about rain.",
     "criteria": "CRIT-TWO: three lines, 5-7-5."},
    {"id": "w2", "category": "writing", "question": "Describe a lighthouse in one sentence."},
    {"id": "x1", "question": "Name a prime number above 100."},
]
IMPORTED = [{"id": "c1", "answer": "B is the tallest bar."}, {"id": "c2", "answer": "6 + 15 + 9 = 30"},
            {"id": "w1", "answer": "Rain on the tin roof\nsoft drums beneath a grey sky\nthe garden drinks deep"},
            {"id": "w2", "answer": "A white tower on a black rock, turning its light over the sea."}]  # x1 missing


def write_spec(d: Path, *, judges: str = 'judge = "judge"', options: str = "", sim: str = SIM) -> Path:
    models = "".join(f'[models.{alias}]\nprovider = "sim"\nmodel = "{model}"\n'
                     f'params = {{ temperature = 0, max_tokens = 1024 }}\nsim = {sim}\n\n'
                     for alias, model in (("strong", "sim-vlm-strong"), ("weak", "sim-vlm-weak"),
                                          ("judge", "sim-judge"), ("judge-2", "sim-judge-2")))
    spec = d / f"spec-{abs(hash((judges, options, sim)))}.toml"
    spec.write_text(f'''name = "rubric-test"
benchmark = "rubric"
data = "questions.jsonl"

[options]
judge_prompt = "judge.txt"
rubric = "GLOBAL-RUBRIC: correct and complete answers score high."
answers = {{ "imported" = "answers.jsonl" }}
bootstrap_samples = 50
{options}

{models}
[roles]
candidates = ["strong", "weak"]
{judges}
''')
    return spec


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("rubric")
    shutil.copy(samples_dir() / "rubric" / "images" / "bars.png", d / "bars.png")
    (d / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    (d / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in IMPORTED))
    (d / "judge.txt").write_text(JUDGE_PROMPT)
    return d


def run(d: Path, spec: Path, out: str, cache: str = "cache.duckdb"):
    return asyncio.run(run_spec(load_spec(str(spec)), RunOptions(out_dir=d / out, cache_path=d / cache)))


@pytest.fixture(scope="module")
def one_judge(setup):
    spec = write_spec(setup)
    est = asyncio.run(estimate_spec(load_spec(str(spec)), RunOptions(cache_path=setup / "cache.duckdb")))
    first = run(setup, spec, "one")
    return SimpleNamespace(d=setup, first=first, out=setup / "one", estimate=est.estimate)


def test_one_judge_figures_tables_report_tidy(one_judge):
    first, out = one_judge.first, one_judge.out
    assert first.exit_code == 0, (first.message, first.failed_items)
    s = first.summary
    assert s["candidates"] == ["strong", "weak", "imported"] and s["imported"] == ["imported"]
    # the imported candidate made no call: only the live ones answered; the estimate said so
    assert first.stats.stage("candidate").total == 2 * len(ITEMS)
    planned: dict[str, int] = {}
    for line in one_judge.estimate.lines:
        planned[line.stage] = planned.get(line.stage, 0) + line.calls_to_make
    assert planned == {"candidate": 2 * len(ITEMS), "judge": 3 * len(ITEMS) - 1}  # x1: no imported answer
    judgments = first.result.tables["judgments"]
    assert len(judgments) == 3 * len(ITEMS)
    by = {(j["model"], j["index"]): j for j in judgments}
    # the simulator answers in the format the prompt asks for: every live judgment is read
    assert all(by[(c, it["id"])]["ok"] for c in ("strong", "weak") for it in ITEMS)
    assert by[("imported", "x1")]["error_kind"] == "no_answer" and by[("imported", "x1")]["judge_text"] == ""
    for j in judgments:
        if j["ok"]:
            assert 1 <= j["score"] <= 10
            lo, hi = j["span"]
            assert j["judge_text"][lo:hi] == j["token"] and str(int(j["score"])) in j["token"]

    rows = {(r["model"], r["level"], r["group"]): r for r in s["results"]}
    for c in ("strong", "weak", "imported"):
        r = rows[(c, "overall", "all")]
        valid = [by[(c, it["id"])]["score"] for it in ITEMS if by[(c, it["id"])]["ok"]]
        assert r["n"] == len(valid) and r["n"] + r["fail"] == len(ITEMS)
        assert r["score"] == pytest.approx(sum(valid) / len(valid), abs=1e-3)
        assert r["pct"] == pytest.approx((r["score"] - 1) / 9 * 100, abs=0.02)
        assert r["score_ci_low"] <= r["score"] <= r["score_ci_high"]
        assert {g for m, lv, g in rows if m == c and lv == "category"} == {"charts", "writing", "all"}
    assert rows[("imported", "overall", "all")]["fail"] == 1
    # the judge read the answers: the stronger simulated model scores higher
    assert rows[("strong", "overall", "all")]["score"] > rows[("weak", "overall", "all")]["score"]
    assert {(c["a"], c["b"]) for c in s["comparisons"]} == {("strong", "weak"), ("strong", "imported"),
                                                           ("weak", "imported")}
    assert all(c["judge"] == "judge" and c["metric"] == "score" for c in s["comparisons"])
    assert "agreement" not in s and "ensemble" not in s  # one judge
    d0 = first.result.display[0]
    assert list(d0) == ["model", "category", "Score", "% of scale", "n", "fail"] and d0["category"] == "Overall"

    # the tidy export: one row per item x candidate x judge, no order
    tidy = judgekit.results(out, kind="rows")
    assert len(tidy) == len(judgments)
    t = {(r["candidate"], r["item"]): r for r in tidy}
    for (c, i), j in by.items():
        assert t[(c, i)]["kind"] == "rubric" and t[(c, i)]["order"] is None and t[(c, i)]["judge"] == "judge"
        assert t[(c, i)]["value"] == j["score"] and t[(c, i)]["ok"] == j["ok"]
        assert t[(c, i)]["benchmark"] == "rubric" and t[(c, i)]["run_id"] == s["run_id"]

    report = json.loads((out / "report.json").read_text())
    assert [i["id"] for i in report["items"]] == [it["id"] for it in ITEMS]
    c1 = report["items"][0]
    kinds = [(b["kind"], b["label"]) for b in c1["blocks"]]
    assert kinds[:3] == [("question", "question"), ("note", "criteria"), ("reference", "reference answer")]
    assert c1["blocks"][0]["parts"][0].get("image", {}).get("src")  # the item's image, as a thumbnail
    assert "CRIT-ONE" in c1["blocks"][1]["parts"][0]["text"]
    assert report["items"][1]["blocks"][1]["label"] == "rubric"  # c2: the global rubric
    judged = [b for i in report["items"] for b in i["blocks"] if b["kind"] == "judgment" and b.get("status") == "ok"]
    assert len(judged) == sum(1 for j in judgments if j["ok"])
    for b in judged:
        reply = b["parts"][0]["text"]
        assert b["highlight"] in reply and b["verdict"].startswith("score ")
    heads = {(h["candidate"], h["figure"]) for h in report["headline"]}
    assert ("strong", "Score (1-10)") in heads and ("imported", "% of scale") in heads
    titles = [c["title"] for c in report["charts"]]
    assert titles[:2] == ["Mean score per category", "Score distribution"]
    dist = next(c for c in report["charts"] if c["title"] == "Score distribution")
    assert [s_["name"] for s_ in dist["series"]] == [str(v) for v in range(10, 0, -1)]
    for k in range(len(dist["groups"])):
        assert sum(s_["values"][k] for s_ in dist["series"]) == pytest.approx(100.0)


def test_regex_score_parser_reads_the_same_replies(one_judge):
    spec = write_spec(one_judge.d, options='score = "regex"\nregex = \'Rating: \\[\\[(?P<score>\\d+)\\]\\]\'')
    r = run(one_judge.d, spec, "regex")
    assert r.exit_code == 0, r.message
    # the same prompts: every reply from the cache (the imported x1 has no answer, so no judge call)
    assert r.stats.paid_calls == 0
    assert sum(st.cache_hits for st in r.stats.stages.values()) == 2 * len(ITEMS) + 3 * len(ITEMS) - 1
    first = {(j["model"], j["index"]): j for j in one_judge.first.result.tables["judgments"]}
    for j in r.result.tables["judgments"]:
        assert j["score"] == first[(j["model"], j["index"])]["score"]
        if j["ok"]:
            lo, hi = j["span"]  # the score group, where the last match put it
            assert j["judge_text"][lo:hi] == j["token"] == f"{j['score']:g}"
            assert j["judge_text"][:hi + 2].endswith(f"Rating: [[{j['token']}]]")
    assert r.summary["score_parser"] == "regex"


def test_panel_of_two_judges(one_judge):
    spec = write_spec(one_judge.d, judges='judges = ["judge", "judge-2"]')
    r = run(one_judge.d, spec, "panel")
    assert r.exit_code == 0, r.message
    s = r.summary
    assert s["judges"] == ["judge", "judge-2"] and set(s["per_judge"]) == {"judge", "judge-2"}
    # the first judge's figures are the one-judge run's (the same cached replies)
    assert s["results"] == one_judge.first.summary["results"]
    judgments = r.result.tables["judgments"]
    assert len(judgments) == 2 * 3 * len(ITEMS)
    per: dict[tuple, list] = {}
    for j in judgments:
        per.setdefault((j["model"], j["index"]), []).append(j["score"])
    ens = {(x["model"], x["level"], x["group"]): x for x in s["ensemble"]["results"]}
    for c in ("strong", "weak", "imported"):
        means = [sum(v for v in vs if v is not None) / sum(v is not None for v in vs)
                 for (m, _), vs in per.items() if m == c and any(v is not None for v in vs)]
        assert ens[(c, "overall", "all")]["score"] == pytest.approx(sum(means) / len(means), abs=1e-3)
    assert s["ensemble"]["rule"] == "mean"
    agree = {a["model"]: a for a in s["agreement"]}
    assert set(agree) == {"strong", "weak", "imported", "all"}
    assert all(a["level"] == "interval" and a["quantity"] == "score" for a in agree.values())
    assert agree["all"]["items"] == 3 * len(ITEMS) - 1  # x1 has no imported answer: no judge rated it
    assert agree["all"]["krippendorff_alpha"] is not None
    # the lenient second judge scores higher on average
    j2 = {(x["model"], x["level"]): x for x in s["per_judge"]["judge-2"]}
    j1 = {(x["model"], x["level"]): x for x in s["per_judge"]["judge"]}
    assert sum(j2[(c, "overall")]["score"] for c in ("strong", "weak")) > \
        sum(j1[(c, "overall")]["score"] for c in ("strong", "weak"))
    assert {c["judge"] for c in s["comparisons"]} == {"judge", "ensemble"}
    report = json.loads((one_judge.d / "panel" / "report.json").read_text())
    assert {h["judge"] for h in report["headline"]} == {"judge", "ensemble"}
    assert any(t["title"] == "Judge agreement" for t in report["tables"])  # the shared section
    assert len(judgekit.results(one_judge.d / "panel", kind="rows")) == len(judgments)


def test_unreadable_replies_counted_then_reasked(one_judge):
    """A judge that writes unreadable replies (the simulator's garbage_rate): without re-asks each
    is a counted parse failure; with reask_on_parse_failure each gets exactly one follow-up, read
    from the judge's second reply, and the report shows the first reply beside it."""
    d = one_judge.d
    sim = SIM.replace("seed = 7,", "seed = 7, garbage_rate = 0.5,")
    plain = run(d, write_spec(d, sim=sim), "garbled", cache="garbled.duckdb")
    failures = [(j["model"], j["index"]) for j in plain.result.tables["judgments"] if j["error_kind"] == "parse_failure"]
    assert failures and plain.exit_code == 0
    assert all(j["judge_text"] for j in plain.result.tables["judgments"] if j["error_kind"] == "parse_failure")
    rows = {r["model"]: r for r in plain.summary["results"] if r["level"] == "overall"}
    assert sum(r["fail"] for r in rows.values()) == len(failures) + 1  # + the imported x1 without an answer

    again = run(d, write_spec(d, sim=sim, options="reask_on_parse_failure = true"), "reasked", cache="garbled.duckdb")
    judgments = {(j["model"], j["index"]): j for j in again.result.tables["judgments"]}
    assert sorted(k for k, j in judgments.items() if j["reasked"]) == sorted(failures)
    assert again.stats.paid_calls == len(failures)  # the first replies from the cache, one re-ask each
    assert any(judgments[k]["ok"] for k in failures)
    report = json.loads((d / "reasked" / "report.json").read_text())
    firsts = [b for i in report["items"] for b in i["blocks"] if b["label"].endswith("first reply (no score read)")]
    assert len(firsts) == len(failures)
