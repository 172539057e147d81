"""`judgekit run` as a user runs it: a subprocess, exit codes, signals, resume."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from judgekit import results as tidy_results
from judgekit.report.tidy import TIDY_COLUMNS
from judgekit.sim import SimConfig, SimThread

FAST = [f"--set=models.{a}.sim.latency_ms=0" for a in ("sim-strong", "sim-weak", "judge")]


def judgekit(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "judgekit.cli.main", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120, **kw)


def popen(*args):
    return subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def runs(cache):
    con = duckdb.connect(str(cache), read_only=True)
    rows = con.execute("select status, summary_json from runs order by started_at").fetchall()
    con.close()
    return [(s, json.loads(j)) for s, j in rows]


def _logged_responses(cache: Path, seen: dict) -> int:
    """Responses a running process has put in the cache so far: lines of its log segments, each
    segment counted at the most lines seen in it (a committed segment is deleted)."""
    for seg in cache.parent.glob(cache.name + ".wal.*"):
        try:
            seen[seg.name] = max(seen.get(seg.name, 0), seg.read_bytes().count(b"\n"))
        except FileNotFoundError:  # committed and deleted between the listing and the read
            pass
    return sum(seen.values())


def test_run_quickstart_exit_0(tmp_path):
    r = judgekit("run", "quickstart", "--limit", "2", "--cache", str(tmp_path / "c.duckdb"),
                 "--out", str(tmp_path / "out"), *FAST)
    assert r.returncode == 0, r.stderr
    assert "Estimate before any call" in r.stdout and "Results" in r.stdout
    assert "Overall" in r.stdout
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["status"] == "done"
    # the tidy export: a row per judgment (2 items x 2 candidates x 2 judges x 2 orders, pairwise and VFS)
    tidy = tidy_results(tmp_path / "out")
    with open(tmp_path / "out" / "judgments.csv", newline="", encoding="utf-8") as f:
        judgments = list(csv.DictReader(f))
    assert list(tidy.columns) == list(TIDY_COLUMNS) and len(tidy) == len(judgments) >= 16
    assert set(tidy["kind"]) <= {"pairwise", "vfs"} and (tidy["benchmark"] == "creation_mmbench").all()


def test_bad_spec_exit_2(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "x"\nbenchmark = "creation_mmbench"\ndata = "d.tsv"\nmodelz = 1\n')
    r = judgekit("run", str(spec))
    assert r.returncode == 2
    assert "modelz: unknown key" in r.stderr and str(spec) in r.stderr


def test_wrong_key_stops_fast_naming_env_var(tmp_path):
    with SimThread(SimConfig(seed=1, api_keys=["right"], latency_ms=50)) as sim:
        spec = tmp_path / "s.toml"
        spec.write_text(f'''
name = "wrongkey"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"
[models.cand]
provider = "openai"
model = "some-vlm"
base_url = "{sim.base_url}"
api_key_env = "JK_CANDIDATE_KEY"
[models.judge]
provider = "sim"
model = "sim-judge"
[roles]
candidates = ["cand"]
judge = "judge"
''')
        r = judgekit("run", str(spec), "--cache", str(tmp_path / "c.duckdb"), "--out", str(tmp_path / "o"),
                     "--set=models.cand.limits.max_concurrency=2", env={"JK_CANDIDATE_KEY": "wrong"})
        seen = sim.stats()
    assert r.returncode == 1
    assert "JK_CANDIDATE_KEY" in r.stderr and "'cand'" in r.stderr
    # the first refusal stops the run: no retry, no call launched after it (only the ones already
    # in flight beside it); the sample has 12 items, each of which would otherwise be tried 6 times
    assert 1 <= seen["auth_failures"] <= 2 and seen["requests"] == seen["auth_failures"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_keeps_finished_calls_and_resumes(tmp_path, sig):
    cache = tmp_path / "c.duckdb"
    slow = [f"--set=models.{a}.sim.latency_ms=150" for a in ("sim-strong", "sim-weak", "judge")]
    slow += [f"--set=models.{a}.limits.max_concurrency=2" for a in ("sim-strong", "sim-weak", "judge")]
    # 4 of the sample's 12 items (40 calls, 2 at a time per model): most are still to make at the signal
    p = popen("run", "quickstart", "--limit", "4", "--cache", str(cache), "--out", str(tmp_path / "o"), *slow)
    # signal once a few calls have finished (each is in the cache's write-ahead log as it lands),
    # however long start-up takes on a busy machine
    deadline, segments = time.monotonic() + 120, {}
    while _logged_responses(cache, segments) < 4 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert p.poll() is None, p.communicate()
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (out, err)
    assert "resume with: judgekit run quickstart" in err
    [(status, first)] = runs(cache)
    assert status == "interrupted" and first["paid_calls"] > 0

    r = judgekit("run", "quickstart", "--limit", "4", "--cache", str(cache), "--out", str(tmp_path / "o"), *FAST)
    assert r.returncode == 0, r.stderr
    (_, _), (status2, second) = runs(cache)
    assert status2 == "done"
    # every call finished before the signal came back from the cache, none was paid twice
    assert second["cache_hits"] == first["paid_calls"]
    assert second["paid_calls"] + second["cache_hits"] == second["paid_calls"] + first["paid_calls"]


def test_max_cost_refuses_without_terminal_and_caps_with_yes(tmp_path):
    price = "--set=models.judge.price={input_per_mtok = 100000, output_per_mtok = 100000}"
    args = ["run", "quickstart", "--limit", "3", "--cache", str(tmp_path / "c.duckdb"), "--out",
            str(tmp_path / "o"), price, "--set=models.judge.limits.max_concurrency=2", "--max-cost", "5", *FAST]
    r = judgekit(*args)
    assert r.returncode == 2 and "above --max-cost $5.00" in r.stderr
    r = judgekit(*args, "--yes")
    assert r.returncode == 1
    assert "more than is left under --max-cost $5.00 ($0.00 spent)" in r.stderr
    assert "resume with:" in r.stderr and "--max-cost 5 --yes" in r.stderr
    [(status, rec)] = runs(tmp_path / "c.duckdb")
    assert status == "stopped"
    # at this price one judge call may cost more than the cap: none is launched (the cap is hard)
    assert rec["cost_usd"] == 0
    assert rec["paid_calls"] <= 6  # the candidates' (free) calls only


def test_sigterm_during_startup_exits_130_without_orphans(tmp_path):
    p = popen("run", "quickstart", "--cache", str(tmp_path / "c.duckdb"), "--out", str(tmp_path / "o"))
    time.sleep(1.5)  # importing, loading the data, starting the simulators
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (out, err)
    time.sleep(1.0)
    ps = subprocess.run(["ps", "-eo", "ppid,args"], capture_output=True, text=True).stdout
    assert f"--out {tmp_path}" not in ps
    orphans = [line for line in ps.splitlines() if "judgekit.sim" in line and line.split()[0] == "1"]
    assert not orphans, orphans
