"""A whole run mixing API (simulated) and local models: Creation-MMBench on the shipped sample with
a tiny local VLM as a candidate next to a simulated one, judged by the simulator.  The worker is
killed mid-run; the run still completes, loses no finished item, and shows the worker's progress.
Skipped where judgekit-local with torch is not installed (this process never imports torch)."""

import asyncio
import contextlib
import importlib.util
import io
import os
import signal
import subprocess
import sys
from types import SimpleNamespace

import pytest
from rich.console import Console

from judgekit.cli.ui import ConsoleUI
from judgekit.config import load_spec
from judgekit.local import process as local_process
from judgekit.providers import local as local_provider
from judgekit.runner import RunOptions, run_spec

if not all(importlib.util.find_spec(m) for m in ("judgekit_local", "torch", "transformers")):
    pytest.skip("judgekit-local with torch and transformers is not installed", allow_module_level=True)


def spec_file(tmp_path, vlm):
    text = f'''
name = "mixed"
benchmark = "creation_mmbench"
data = "samples:creation_mmbench/sample.tsv"

[options]
vfs = false

[models.tiny-vlm]
provider = "local"
model = "{vlm}"
params = {{ temperature = 0, max_tokens = 8 }}
limits = {{ max_concurrency = 8 }}
local = {{ task = "chat", device = "cpu", batch_size = 4, max_wait_ms = 50 }}

[models.sim-vlm]
provider = "sim"
model = "sim-vlm-strong"
params = {{ temperature = 0, max_tokens = 256 }}
sim = {{ seed = 7 }}

[models.judge]
provider = "sim"
model = "sim-judge"
params = {{ temperature = 0, max_tokens = 1024 }}
sim = {{ seed = 7 }}

[roles]
candidates = ["tiny-vlm", "sim-vlm"]
judge = "judge"
'''
    p = tmp_path / "mixed.toml"
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def vlm(tmp_path_factory):
    """The tiny VLM, built once for both runs, in a subprocess (this process never imports torch)."""
    path = tmp_path_factory.mktemp("mixed") / "vlm"
    code = "import sys; from judgekit_local.testing import build_tiny_vlm; build_tiny_vlm(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True, timeout=300,
                   env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return path


async def _run_killing_the_worker_once(spec, out_dir, cache):
    """The run, its worker SIGKILLed once after it finished at least one item; the outcome, the
    killed pid (or none) and what the progress display printed (off a terminal: plain lines)."""
    ui = ConsoleUI(Console(file=io.StringIO(), width=200, force_terminal=False), interval=0.1)
    killed = []

    async def kill_the_worker_once() -> None:
        # wait for the worker to exist and to have finished at least one item, then SIGKILL it;
        # looked at every 5 ms: on a quiet machine the tiny model's batches of 4 come tens of ms
        # apart, so a 50 ms look could see 0 items done, then all 12, and never kill it
        while not killed:
            await asyncio.sleep(0.005)
            for rt in local_provider.running_runtimes():
                pids = list(local_process._live_pids)
                if pids and 1 <= rt.batcher.items_done < 12:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                    return

    killer = asyncio.ensure_future(kill_the_worker_once())
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            outcome = await run_spec(spec, RunOptions(out_dir=out_dir, cache_path=cache), ui)
    finally:
        killer.cancel()
    return outcome, killed, printed.getvalue()


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory, vlm):
    """The mixed run on the subprocess backend with its worker killed mid-run, once for the module:
    the kill test checks it, the Ray test compares its answers with it."""
    root = tmp_path_factory.mktemp("killed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.delenv(local_provider.WORKER_ENV, raising=False)
        spec = load_spec(str(spec_file(root, vlm)))
        outcome, killed, printed = asyncio.run(_run_killing_the_worker_once(spec, root / "out", root / "c.duckdb"))
    return SimpleNamespace(spec=spec, root=root, outcome=outcome, killed=killed, printed=printed)


async def test_mixed_api_and_local_run_survives_a_worker_kill(killed_run, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(local_provider.WORKER_ENV, raising=False)
    outcome, root = killed_run.outcome, killed_run.root
    assert outcome.exit_code == 0, (outcome.message, outcome.failed_items)
    answers = outcome.result.tables["answers"]
    local = [a for a in answers if a["model"] == "tiny-vlm"]
    assert len(local) == 12 and all(a["ok"] for a in local)
    judged = {r["model"] for r in outcome.summary["results"] if r["level"] == "overall"}
    assert judged == {"tiny-vlm", "sim-vlm"}
    printed = killed_run.printed  # off a terminal, progress is a plain line every interval
    assert "local: worker pid" in printed and "chat" in printed  # the worker's progress
    assert killed_run.killed, "the worker was never killed: the test did not exercise a crash"

    # everything is cached: a rerun makes no local or API call
    again = await run_spec(killed_run.spec, RunOptions(out_dir=root / "out", cache_path=root / "c.duckdb"))
    assert again.exit_code == 0 and again.stats.paid_calls == 0


async def test_the_same_run_on_the_ray_backend(tmp_path, monkeypatch, vlm, killed_run):
    pytest.importorskip("ray")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(local_provider.WORKER_ENV, raising=False)
    path = spec_file(tmp_path, vlm)
    path.write_text(path.read_text().replace('batch_size = 4, max_wait_ms = 50 }',
                                             'batch_size = 4, max_wait_ms = 50, backend = "ray", workers = 2 }'))
    spec = load_spec(str(path))
    outcome = await run_spec(spec, RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "c.duckdb"))
    assert outcome.exit_code == 0, (outcome.message, outcome.failed_items)
    local = [a for a in outcome.result.tables["answers"] if a["model"] == "tiny-vlm"]
    assert len(local) == 12 and all(a["ok"] for a in local)
    # identical greedy answers on either backend: the same worker code (the subprocess backend's
    # are the kill test's run, whose items all finished on one worker or its replacement)
    sub = killed_run.outcome
    assert {a["index"]: a["answer"] for a in sub.result.tables["answers"] if a["model"] == "tiny-vlm"} == \
        {a["index"]: a["answer"] for a in local}
