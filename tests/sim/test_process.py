"""SimProcess stops promptly, and the simulator's public names stay where importers find them."""

from __future__ import annotations

import signal
import threading
import time

import openai
import pytest

import judgekit.sim
import judgekit.sim.server
from judgekit.sim import SimConfig, SimProcess

PUBLIC = {
    "SimConfig", "SimServer", "SimThread", "SimProcess", "SimStats", "SimStartError", "READY_PREFIX",
    "build_app", "serve_forever", "estimate_prompt_tokens", "RateLimiter", "RateDecision", "TokenBucket",
    "format_duration", "Reply", "make_reply", "classify", "answer_quality", "verdict_probabilities",
    "JudgeStyle",  # a simulated judge's habits (SimConfig.judge_styles)
}


def test_public_names():
    assert set(judgekit.sim.__all__) == PUBLIC
    for name in judgekit.sim.__all__:
        assert getattr(judgekit.sim, name) is not None
    # judgekit.sim.server keeps every name it exported before the split
    for name in judgekit.sim.server.__all__:
        assert getattr(judgekit.sim.server, name) is getattr(judgekit.sim, name)
    from judgekit.sim.server import SimProcess as P, SimThread as T, serve_forever

    assert P is SimProcess and T is judgekit.sim.SimThread and serve_forever is judgekit.sim.serve_forever


def _timed_stop(p: SimProcess) -> tuple[float, int | None]:
    proc = p.proc
    assert proc is not None
    t = time.perf_counter()
    p.stop()
    return time.perf_counter() - t, proc.returncode


def test_stop_is_prompt_with_an_open_connection():
    p = SimProcess(SimConfig(seed=1)).start()
    c = openai.OpenAI(base_url=p.base_url, api_key="k", max_retries=0)
    try:
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
        _, code = _timed_stop(p)  # the client's keep-alive connection is still open
    finally:
        c.close()
        p.stop()
    assert code == 0  # ended by its SIGTERM handler, not by the kill that follows a 5 s wait


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_stop_is_prompt_when_the_starting_thread_blocks_sigterm():
    # a blocked signal mask is inherited through fork and exec: the child must unblock SIGTERM
    # itself, or stop() waits 5 s and kills it
    result: dict[str, object] = {}

    def run() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        p = SimProcess(SimConfig())
        try:
            p.start()
            result["stop"] = _timed_stop(p)
        except BaseException as e:  # reported below
            result["error"] = e
        finally:
            p.stop()

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert "error" not in result, result.get("error")
    _, code = result["stop"]
    assert code == 0  # its own SIGTERM handler ended it, not the kill after a 5 s wait


def test_child_exits_when_its_parent_is_killed():
    """kill -9 of the process that started the simulator leaves no orphan behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = ("from judgekit.sim import SimConfig, SimProcess\n"
            "import time\n"
            "s = SimProcess(SimConfig(seed=1)); s.start(); print(s.pid, flush=True); time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        # reap it if it became our zombie (it is not our child, so this is only a poll)
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the simulator outlived its parent")
