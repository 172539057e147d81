"""A run's money over its processes, batch mode: the quickstart with its two judges in batch mode
(the real openai SDK against two simulators), killed with SIGKILL right after the first judge's
batch was collected (its answers are in the cache, paid; the second judge's batch still runs).
The rerun collects the second batch; its summary.json counts both processes: the killed one's
batch from the cache, its own beside it, and the batch block over both."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from judgekit.config import load_spec
from judgekit.sim import SimConfig, SimProcess

PRICE = "{input_per_mtok = 2.5, output_per_mtok = 10.0}"


def _judgekit(*args):
    return subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _collected(cache: Path) -> bool:
    """Whether the run's write-ahead log holds a batch marked collected (its answers put before)."""
    for seg in cache.parent.glob(cache.name + ".wal.*"):
        try:
            if b'"collected":true' in seg.read_bytes():
                return True
        except OSError:  # a segment folded into the database meanwhile
            continue
    return False


def test_killed_after_a_batch_was_collected_the_rerun_counts_its_money(tmp_path):
    sims = load_spec("quickstart").models
    fast = SimProcess(SimConfig(**sims["judge"].sim, batch_turnaround_s=0.3))
    slow = SimProcess(SimConfig(**sims["judge-2"].sim, batch_turnaround_s=4.0))
    fast.start()
    slow.start()
    cache = tmp_path / "c.duckdb"
    try:
        args = ["run", "quickstart", "--cache", str(cache), "--out", str(tmp_path / "out"), "--limit", "4"]
        for alias, server in (("judge", fast), ("judge-2", slow)):
            args += ["--set", f"models.{alias}.price={PRICE}", "--set", f"models.{alias}.sim.url={server.base_url}",
                     "--set", f"models.{alias}.batch=true", "--set", f"models.{alias}.batch_linger_s=0.2",
                     "--set", f"models.{alias}.batch_poll_s=0.1"]
        first = _judgekit(*args)
        deadline = time.monotonic() + 90
        while not _collected(cache):
            assert first.poll() is None, first.stdout.read()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
        first.stdout.close()
        second = _judgekit(*args)
        text, _ = second.communicate(timeout=120)
        assert second.returncode == 0, text
    finally:
        fast.stop()
        slow.stop()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    con = duckdb.connect(str(cache), read_only=True)
    try:
        [(paid_usd, calls)] = con.execute("SELECT sum(cost_usd), count(*) FROM responses").fetchall()
        [(batched,)] = con.execute(
            "SELECT count(*) FROM responses WHERE key IN (SELECT key FROM batch_requests)").fetchall()
    finally:
        con.close()
    [killed] = summary["earlier_processes"]
    assert killed["status"] == "killed" and killed["counted_from"] == "cache"
    assert killed["cost_usd"] > 0 and killed["batch"]["calls"] > 0  # the first judge's collected batch
    this = summary["this_process"]
    assert this["cost_usd"] > 0 and this["batch"]["calls"] > 0  # the second judge's
    # every paid answer of the run is in this cache once: the summary's money is theirs
    assert summary["cost_usd"] == pytest.approx(paid_usd, rel=1e-6)
    assert summary["cost_usd"] == pytest.approx(killed["cost_usd"] + this["cost_usd"], rel=1e-6)
    assert summary["paid_calls"] == calls == killed["paid_calls"] + this["paid_calls"]
    b = summary["batch"]
    assert b["calls"] == batched == killed["batch"]["calls"] + this["batch"]["calls"]
    assert b["cost_usd"] == pytest.approx(summary["cost_usd"], rel=1e-6)  # the candidates are free
    # batch prices are half the live ones for the simulator's judges' stand-in price: the killed
    # process's live equivalent is priced from its answers' tokens at the same override
    assert b["live_equivalent_usd"] == pytest.approx(2 * b["cost_usd"], abs=2e-6)
    assert b["saved_usd"] == pytest.approx(b["cost_usd"], abs=2e-6)  # (each rounded to 6 decimals)
