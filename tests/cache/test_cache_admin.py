"""Admin: stats, export and prune of a cache file, and the lock seen from another process."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from judgekit.cache import CacheStore, RequestMeta, admin, schema
from judgekit.errors import CacheLockedError
from judgekit.types import ChatResponse, Usage

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def filled(tmp_path: Path) -> Path:
    path = tmp_path / "c.duckdb"
    s = await CacheStore.open(path, run_id="r1")
    s.run_started("r1", "first", "{}")
    for i in range(10):
        s.put(f"c{i}", RequestMeta("openai", "gpt-4o", stage="candidate"),
              ChatResponse(f"a{i}", Usage(5, 10), cost_usd=0.01))
    for i in range(4):
        s.put(f"j{i}", RequestMeta("gemini", "gemini-2.5", stage="judge"),
              ChatResponse(f"j{i}", Usage(5, 30)))
    s.record_failure("c0", RequestMeta("openai", "gpt-4o", stage="candidate"), "rate_limited", 429, "x")
    s.record_failure("j9", RequestMeta("gemini", "gemini-2.5", stage="judge"), "bad_request", 400, "y")
    s.run_finished("r1", "ok", "{}")
    await s.write_table("scores", [{"item": "q1", "score": 3}])
    await s.close()
    # age the judge rows by 40 days
    con = duckdb.connect(str(path))
    con.execute("UPDATE responses SET created_at = created_at - INTERVAL 40 DAY WHERE stage = 'judge'")
    con.close()
    return path


def test_stats(filled: Path):
    st = admin.stats(filled)
    assert st["schema_version"] == schema.SCHEMA_VERSION and st["responses"] == 14 and st["failures"] == 2
    assert st["failures_by_kind"] == {"bad_request": 1, "rate_limited": 1}
    by = {(r["provider"], r["model"], r["stage"]): r for r in st["responses_by"]}
    assert by[("openai", "gpt-4o", "candidate")]["rows"] == 10
    assert by[("openai", "gpt-4o", "candidate")]["cost_usd"] == pytest.approx(0.1)
    assert by[("gemini", "gemini-2.5", "judge")]["output_tokens_mean"] == 30.0
    assert [r["run_id"] for r in st["runs"]] == ["r1"] and st["runs"][0]["status"] == "ok"
    assert st["result_tables"] == ["result_scores"]
    assert st["file_bytes"] > 0


def test_stats_of_a_missing_file(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        admin.stats(tmp_path / "nope.duckdb")
    assert not (tmp_path / "nope.duckdb").exists()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export(filled: Path, tmp_path: Path, fmt: str):
    out = tmp_path / f"out.{fmt}"
    assert admin.export(filled, out, fmt) == 14
    if fmt == "jsonl":
        lines = out.read_text().splitlines()
        assert len(lines) == 14 and {"key", "text", "model"} <= json.loads(lines[0]).keys()
    elif fmt == "csv":
        rows = list(csv.DictReader(out.open()))
        assert len(rows) == 14 and rows[0]["key"]
    else:
        con = duckdb.connect()
        assert con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone() == (14,)


def test_export_other_tables(filled: Path, tmp_path: Path):
    assert admin.export(filled, tmp_path / "a.jsonl", "jsonl", table="attempts") == 2
    assert admin.export(filled, tmp_path / "s.csv", "csv", table="result_scores") == 1
    with pytest.raises(ValueError):
        admin.export(filled, tmp_path / "x.csv", "csv", table="nope")
    with pytest.raises(ValueError):
        admin.export(filled, tmp_path / "x.xml", "xml")  # type: ignore[arg-type]


def test_prune(filled: Path):
    with pytest.raises(ValueError):
        admin.prune(filled)  # no filter: refuses to wipe the cache
    assert admin.prune(filled, older_than_days=30, dry_run=True) == 4
    assert admin.stats(filled)["responses"] == 14
    assert admin.prune(filled, older_than_days=30) == 4
    assert admin.stats(filled)["responses"] == 10
    assert admin.prune(filled, model="gpt-4o", stage="judge") == 0
    assert admin.prune(filled, model="gpt-4o", stage="candidate") == 10
    assert admin.prune(filled, failures=True, stage="judge") == 1
    assert admin.prune(filled, failures=True) == 1
    st = admin.stats(filled)
    assert st["responses"] == 0 and st["failures"] == 0


def test_admin_on_a_file_held_by_another_process(filled: Path):
    code = textwrap.dedent(f"""
        import asyncio, sys, time
        from judgekit.cache import CacheStore
        s = asyncio.run(CacheStore.open({str(filled)!r}, run_id="holder"))
        print("HOLDING", flush=True)
        sys.stdin.readline()
        s.close_sync()
        """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert proc.stdout.readline().startswith("HOLDING"), proc.stderr.read()
        with pytest.raises(CacheLockedError, match="another judgekit process"):  # it writes: refused
            admin.prune(filled, failures=True)
        st = admin.stats(filled)  # it reads: from a copy of the file, taken now
        assert (st["read_from"], st["responses"]) == ("copy", 14)
    finally:
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)
    assert proc.returncode == 0, proc.stderr.read()
    assert admin.stats(filled)["responses"] == 14  # free again once the holder closed
    assert admin.stats(filled)["read_from"] == "file"


def test_public_api():
    assert set(admin.__all__) == {"stats", "export", "prune", "ExportFormat"}
