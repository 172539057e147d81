"""`judgekit run --max-cost` end to end (in-process through click, against the simulator): the cap
holds with concurrent calls, refuses a model it cannot price, and is kept by the printed resume
command and by a later run into the same results folder."""

import json
import shlex

import duckdb
import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.sim import SimConfig, SimThread
# the judge priced like gpt-4o: one judge call may cost up to ~$0.045 (its prompt + 4,096 output
# tokens), really costs ~$0.004; the candidates are the simulator's (free)
PRICED = ["--set=models.judge.price={input_per_mtok = 2.5, output_per_mtok = 10}",
          "--set=models.judge.limits.max_concurrency=4"]


@pytest.fixture(scope="module")
def sim():
    """One simulator for every run here (a run starting its own costs a second or more)."""
    with SimThread(SimConfig(seed=7, model_quality={"sim-vlm-strong": 0.3, "sim-vlm-weak": 0.05})) as server:
        yield [f'--set=models.{a}.sim={{url = "{server.base_url}"}}' for a in ("sim-strong", "sim-weak", "judge")]


def invoke(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def records(cache):
    con = duckdb.connect(str(cache), read_only=True)
    try:
        rows = con.execute("select status, spec_json, summary_json from runs order by started_at").fetchall()
    finally:
        con.close()
    return [(status, json.loads(spec), json.loads(summary)) for status, spec, summary in rows]


def judge_rows(cache):
    con = duckdb.connect(str(cache), read_only=True)
    try:
        return con.execute("select count(*) from responses where model = 'sim-judge'").fetchone()[0]
    finally:
        con.close()


def resume_args(stderr: str) -> list[str]:
    [line] = [ln for ln in stderr.splitlines() if ln.startswith("resume with: judgekit ")]
    return shlex.split(line.removeprefix("resume with: judgekit "))


def capped_run(tmp_path, sim):
    """A run with a cap far below one judge call: it stops at once, having spent nothing."""
    cache, out = tmp_path / "c.duckdb", tmp_path / "o"
    base = ["run", "quickstart", "--limit", "1", "--cache", str(cache), "--out", str(out), *PRICED, *sim]
    r = invoke([*base, "--max-cost", "0.0001", "--yes"])
    # before: the judge's slots launched calls before any cost was known: 713x the cap spent
    assert r.exit_code == 1, r.output
    assert "more than is left under --max-cost $0.0001 ($0.00 spent)" in r.stderr
    assert "spent $0.0000 of max $0.0001" in r.stdout
    assert judge_rows(cache) == 0
    [(status, spec_json, summary)] = records(cache)
    assert status == "stopped" and summary["cost_usd"] == 0 and summary["max_cost_usd"] == 0.0001
    assert spec_json["run"]["max_cost_usd"] == 0.0001 and spec_json["spec"]["name"] == "quickstart"
    return cache, base, r


def test_the_printed_resume_command_keeps_the_cap(tmp_path, sim):
    cache, _, r = capped_run(tmp_path, sim)
    args = resume_args(r.stderr)
    assert args[-3:] == ["--max-cost", "0.0001", "--yes"]
    r = invoke(args)
    assert r.exit_code == 1 and "--max-cost $0.0001" in r.stderr
    assert judge_rows(cache) == 0
    assert [rec[2]["cost_usd"] for rec in records(cache)] == [0, 0]


def test_a_later_run_into_the_same_folder_keeps_the_cap_until_a_new_one_is_given(tmp_path, sim):
    cache, base, _ = capped_run(tmp_path, sim)
    r = invoke([*base, "--yes"])  # no --max-cost
    assert r.exit_code == 1, r.output
    assert "kept from the earlier run" in r.stdout and "--max-cost 0.0001" in r.stderr
    assert judge_rows(cache) == 0

    r = invoke([*base, "--max-cost", "1", "--yes"])
    assert r.exit_code == 0, r.output
    status, spec_json, summary = records(cache)[-1]
    assert status == "done" and 0 < summary["cost_usd"] <= 1 and spec_json["run"]["max_cost_usd"] == 1
    assert judge_rows(cache) > 0


def test_spending_stays_under_a_cap_that_lets_some_calls_run(tmp_path, sim):
    cache = tmp_path / "c.duckdb"
    r = invoke(["run", "quickstart", "--limit", "3", "--cache", str(cache), "--out", str(tmp_path / "o"),
                *PRICED, *sim, "--max-cost", "0.06", "--yes"])
    # the 20 judge calls of 3 items cost ~$0.07 in all: some ran, the run stopped under the cap
    [(status, _, summary)] = records(cache)
    assert 0 < summary["cost_usd"] <= 0.06 and judge_rows(cache) > 0
    assert r.exit_code == 1 and status == "stopped", r.output
    assert "more than is left under --max-cost $0.06" in r.stderr


@pytest.mark.parametrize("where", ["option", "spec"])
def test_an_unknown_price_under_a_cap_is_refused_in_one_line(tmp_path, where):
    spec = tmp_path / "s.toml"
    spec.write_text(f'''
name = "unpriced"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"
{"max_cost_usd = 2.5" if where == "spec" else ""}
[models.cand]
provider = "sim"
model = "sim-vlm-strong"
[models.judge]
provider = "openai"
model = "a-judge-nobody-prices"
base_url = "http://127.0.0.1:9/v1"
[roles]
candidates = ["cand"]
judge = "judge"
''')
    args = ["run", str(spec), "--cache", str(tmp_path / "c.duckdb"), "--out", str(tmp_path / "o")]
    r = invoke(args + (["--max-cost", "2.5"] if where == "option" else []))
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "no price is known for 'judge' (openai a-judge-nobody-prices)" in lines[0]
    assert "models.judge.price=" in lines[0] and "$2.50" in lines[0]
