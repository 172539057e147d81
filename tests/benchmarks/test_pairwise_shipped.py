"""The shipped pieces of the generic pairwise benchmark: the quickstart runner on its sample
(data/pairwise) and each shipped judge prompt with the verdict parser its format names, against
the simulator (which answers a generic judge prompt in the format it asks for)."""

import json
import re

import pytest
from pairwise_helpers import QUESTIONS, run, write_case

from judgekit.config import load_spec
from judgekit.runner import RunOptions, run_spec

N = len(QUESTIONS)


async def test_quickstart_runner_on_its_sample(tmp_path):
    models = ("sim-strong", "baseline", "judge")
    spec = load_spec("pairwise_quickstart", [f"models.{m}.sim.latency_ms=0" for m in models]
                     + ["options.bootstrap_samples=200"])
    o = await run_spec(spec, RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "cache.duckdb"))
    assert o.exit_code == 0, (o.message, o.failed_items)
    s = o.summary
    assert s["candidates"] == ["sim-strong", "my-notes-model"] and s["imported"] == ["my-notes-model"]
    assert s["items"] == 7 and s["baseline"]["source"] == "model"
    assert s["calls_by_provider"] == {"sim": 7 + 7 + 2 * 2 * 7}
    for c in s["candidates"]:
        row = next(r for r in s["results"] if r["model"] == c and r["level"] == "overall")
        assert row["pairwise_parse_ok"] == 1.0 and row["n_pairwise"] == 14
        assert row["reward_ci_low"] <= row["reward"] <= row["reward_ci_high"]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    pictures = [it for it in report["items"] if any("image" in p for p in it["blocks"][0]["parts"])]
    assert len(pictures) == 3  # the three drawn PNGs reach the report (and the judge)


@pytest.mark.parametrize(("verdict", "prompt", "tokens"), [
    ("arena_hard", "arena_hard.txt", r"\[\[(A>>B|A>B|A=B|B>A|B>>A)\]\]"),
    ("mt_bench", "mt_bench.txt", r"\[\[[ABC]\]\]"),
    ("mt_bench", "mt_bench_reference.txt", r"\[\[[ABC]\]\]"),
    ("scale", "scale.txt", r"\[\[[1-5]\]\]"),
])
def test_each_shipped_prompt_with_its_parser(tmp_path, verdict, prompt, tokens):
    spec = write_case(tmp_path, options=f'verdict = "{verdict}"\n')
    o = run(spec, "out", f"options.judge_prompt='prompts:pairwise/{prompt}'")
    assert o.exit_code == 0, (o.message, o.failed_items)
    js = o.result.tables["judgments"]
    assert len(js) == 2 * N and all(j["ok"] for j in js), [j["judge_text"][-80:] for j in js if not j["ok"]]
    assert all(re.fullmatch(tokens, j["verdict"].replace(" ", "")) for j in js), {j["verdict"] for j in js}
    if verdict == "mt_bench":  # a win counts as much better: only -2, 0, +2
        assert {j["score"] for j in js} <= {-2, 0, 2}
    row = next(r for r in o.summary["results"] if r["level"] == "overall")
    assert row["reward"] == pytest.approx(50.0 * sum(j["score"] for j in js) / len(js))


def test_a_regex_parser_of_your_own(tmp_path):
    """verdict = "regex": the last match of the user's pattern, its 'verdict' group looked up in
    the default verdict values (the [[A>>B]] family); the report highlights what was read."""
    spec = write_case(tmp_path, options="verdict = \"regex\"\nregex = '\\[\\[(?P<verdict>[AB<>= ]+)\\]\\]'\n")
    o = run(spec)
    assert o.exit_code == 0, (o.message, o.failed_items)
    js = o.result.tables["judgments"]
    assert len(js) == 2 * N and all(j["ok"] for j in js)
    assert all(re.fullmatch(r"(A>>B|A>B|A=B|B>A|B>>A)", j["verdict"].replace(" ", "")) for j in js)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    marked = [b["highlight"] for it in report["items"] for b in it["blocks"] if b["kind"] == "judgment"]
    assert len(marked) == 2 * N and all(m for m in marked)
