"""`judgekit estimate` and `judgekit cache stats` only read: a missing cache is no cache yet (no file
is made), and a cache a run holds in another process is read from a copy instead of refused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli

FAST = [f"--set=models.{a}.sim.latency_ms=0" for a in ("sim-strong", "sim-weak", "judge")]
FAST.append('--set=roles.judges=["judge"]')  # the quickstart's first judge alone: 2 + 4 + 4 calls for an item


WIDE = {"COLUMNS": "300"}  # the lines checked whole, unfolded


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    d = tmp_path_factory.mktemp("reading")
    r = invoke("run", "quickstart", "--limit", "1", "--cache", d / "c.duckdb", "--out", d / "o", *FAST, env=WIDE)
    assert r.exit_code == 0, r.output
    # the run says which cache it uses (absolute) and that it holds no earlier run of the spec
    assert f"cache {d / 'c.duckdb'}: new (no earlier run of quickstart)\n" in r.output
    # every call was made by the simulator (free): the summary says so, for the "paid calls" line
    summary = json.loads((d / "o" / "summary.json").read_text())
    assert (summary["calls_by_provider"], summary["paid_calls"]) == ({"sim": 10}, 10)
    return d / "c.duckdb"


def test_estimate_on_a_missing_cache_makes_nothing(tmp_path):
    where = tmp_path / "not" / "yet" / "c.duckdb"
    r = invoke("estimate", "quickstart", "--limit", "1", "--cache", where, *FAST)
    assert r.exit_code == 0, r.output
    assert "0 of 10 calls already cached" in " ".join(r.output.split())  # every call counted as to make
    assert f"cache {where}: none yet (a run makes it); every call is counted as to make" in " ".join(r.output.split())
    assert list(tmp_path.iterdir()) == []  # neither the file nor its folder


def test_cache_stats_on_a_missing_cache_makes_nothing(tmp_path):
    r = invoke("cache", "stats", "--cache", tmp_path / "none.duckdb")
    assert r.exit_code == 2 and "no cache file there" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_cache_a_run_holds_is_read_from_a_copy(cache):
    # another process holds the file read-write, as a run does (DuckDB refuses it to every other
    # process, read-only connections included); it says so once it holds it, then waits on stdin
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
                               "sys.stdin.read()", str(cache)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        from judgekit.cache.admin import export

        with pytest.raises(Exception, match="another judgekit process"):  # still refused where it writes
            export(cache, cache.parent / "x.jsonl", "jsonl")
        r = invoke("cache", "stats", "--cache", cache, "--json")
        assert r.exit_code == 0, r.output
        st = json.loads(r.stdout)
        assert (st["read_from"], st["responses"], st["runs"][0]["status"]) == ("copy", 10, "done")
        r = invoke("estimate", "quickstart", "--limit", "1", "--cache", cache, *FAST)
        assert r.exit_code == 0, r.output
        assert "10 of 10 calls already cached" in " ".join(r.output.split())
    finally:
        holder.stdin.close()
        holder.wait(30)
    assert [p.name for p in cache.parent.iterdir() if p.name.startswith("c.duckdb")] == ["c.duckdb"]  # nothing added


def test_cache_stats_is_a_table_that_fits_80_columns(cache):
    r = invoke("cache", "stats", "--cache", cache, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    assert lines[0].startswith(f"cache {cache}: ")  # the absolute path
    assert "10 cached calls" in text and "1 run (done 1)" in text and "0 failed attempts" in text
    rows = {tuple(line.split()[:3]) for line in lines}
    # one row per stage and model, the provider said once in the header (all sim here)
    assert {("candidate", "sim-vlm-strong", "1"), ("candidate", "sim-vlm-weak", "1"),
            ("pairwise", "sim-judge", "4"), ("vfs", "sim-judge", "4")} <= rows
    assert any(line.split()[:2] == ["stage", "model"] and "(sim)" in line for line in lines)
    st = json.loads(invoke("cache", "stats", "--cache", cache, "--json").stdout)  # the machines' view
    assert st["responses"] == 10 and sum(r["input_tokens"] for r in st["responses_by"]) > 0


def test_a_run_and_an_estimate_say_what_the_cache_holds_of_the_spec(cache, tmp_path, monkeypatch):
    r = invoke("estimate", "quickstart", "--limit", "1", "--cache", cache, *FAST, env=WIDE)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("cache "))
    assert line.startswith(f"cache {cache}: 1 earlier run of quickstart, the last at 20")
    assert line.endswith(" UTC, 10 calls cached by them")
    # from another folder the default cache is another file: said, with what it holds (here: nothing)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEKIT_CACHE", raising=False)
    r = invoke("estimate", "quickstart", "--limit", "1", *FAST, env=WIDE)
    assert r.exit_code == 0, r.output
    assert f"cache {tmp_path / 'judgekit-out' / 'cache.duckdb'}: none yet" in r.output
