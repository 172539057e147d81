"""A stop keeps what was paid: `judgekit run` (a subprocess, the real openai, anthropic and
google-genai SDKs) against a small server of its own speaking their APIs (not the simulator) that
answers in 50-200 ms and bills every request it answers, whether or not the client still listens.
Ctrl-C or SIGTERM while 256 calls are in flight: the calls land within the grace and are kept and
charged, the rerun pays none of them again, and the spend printed and summarised is what the
server served times the price.  Also: a second signal or the grace's end abandons what is still out
(and says so), the cost cap, and kill -9 (the rerun's summary counts both processes' money)."""

from __future__ import annotations

import collections
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

ITEMS = 600  # one candidate: 600 calls, 256 at a time; then 600 judge calls
#: every reply bills 100 input and 10 output tokens; at these prices a call costs $0.20
PRICE = "{input_per_mtok = 1000, output_per_mtok = 10000}"
CALL_USD = 0.2


class BillingServer(ThreadingHTTPServer):
    """Chat completions after ``latency`` seconds (a callable), counted as served (billed) once
    the answer is made, whether the client is still there or not.  With ``gate`` n, the first
    requests wait until n are in flight at once before their latency starts (a client sends a
    few hundred requests a second on a busy machine: without it, 50-200 ms replies would come
    back before 256 were out)."""

    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, latency, gate: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency = latency
        self.gate, self.open = gate, threading.Event()
        if not gate:
            self.open.set()
        self.lock = threading.Lock()
        self.served = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: collections.Counter[str] = collections.Counter()  # request messages -> times served

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request, client_address) -> None:
        pass  # a client that went away mid-request (abandoned calls): nothing to report


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        srv: BillingServer = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with srv.lock:
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
            if srv.in_flight >= srv.gate:
                srv.open.set()
        srv.open.wait(60)
        time.sleep(srv.latency())
        text = json.dumps(body.get("messages") or body.get("contents"), sort_keys=True)  # Gemini: contents
        answer = "Fine. Rating: [[7]]" if "Rating: [[N]]" in text else "An answer."
        with srv.lock:  # the answer is made: billed
            srv.in_flight -= 1
            srv.served += 1
            srv.bodies[text] += 1
        reply = json.dumps(_reply(self.path, answer, body.get("model", "m"))).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except OSError:  # the client left: it was billed all the same
            self.close_connection = True


def _reply(path: str, text: str, model: str) -> dict:
    """The answer as the API at ``path`` writes it: 100 input and 10 output tokens billed."""
    if path.endswith("/messages"):  # Anthropic
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 10}}
    if ":generateContent" in path:  # Gemini
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}}
    return {"id": "c", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


#: the provider -> the model the spec names (priced by the spec's override; none thinks)
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-20241022", "gemini": "gemini-2.0-flash"}


@pytest.fixture
def server():
    rng = random.Random(0)
    srv = BillingServer(lambda: 0.05 + 0.15 * rng.random(), gate=256)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _spec(tmp: Path, url: str, provider: str = "openai") -> Path:
    with open(tmp / "q.jsonl", "w") as f:
        for i in range(ITEMS):
            f.write(json.dumps({"id": f"q{i}", "question": f"What is {i} + {i}?"}) + "\n")
    models = "".join(f'''
[models.{alias}]
provider = "{provider}"
model = "{MODELS[provider]}"
base_url = "{url}"
api_key_env = "JK_STOP_TEST_KEY"
params = {{ max_tokens = 64 }}
price = {PRICE}
limits = {{ max_concurrency = 256, max_attempts = 1, timeout_s = 60 }}
''' for alias in ("cand", "judge"))
    spec = tmp / "stop.toml"
    spec.write_text(f'''name = "stop-test"
benchmark = "rubric"
data = "q.jsonl"
[options]
judge_prompt = "prompts:rubric/rubric.txt"
score = "rating"
scale = [1, 10]
rubric = "Correct sums score high."
{models}
[roles]
candidates = ["cand"]
judges = ["judge"]
''')
    return spec


def _judgekit(spec: Path, tmp: Path, *more: str) -> subprocess.Popen:
    env = {**os.environ, "JK_STOP_TEST_KEY": "k", "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "run", str(spec), "--cache",
                             str(tmp / "c.duckdb"), "--out", str(tmp / "out"), *more],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _records(cache: Path) -> list[tuple[str, dict]]:
    con = duckdb.connect(str(cache), read_only=True)
    rows = con.execute("SELECT status, summary_json FROM runs ORDER BY started_at").fetchall()
    con.close()
    return [(s, json.loads(j)) for s, j in rows]


def _spent(stdout: str) -> float:
    """The spend on the closing line (``spent $X``, the run's total where it gives two)."""
    return float(re.findall(r"spent \$([\d,.]+)", stdout)[-1].replace(",", ""))


def _wait_in_flight(p: subprocess.Popen, server: BillingServer, n: int) -> None:
    """Until the server has had ``n`` requests in flight at once."""
    deadline = time.monotonic() + 120
    while server.max_in_flight < n:
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the run never had that many calls in flight"
        time.sleep(0.005)


@pytest.mark.parametrize("provider, sig", [("openai", signal.SIGINT), ("openai", signal.SIGTERM),
                                           ("anthropic", signal.SIGINT), ("gemini", signal.SIGTERM)])
def test_a_stop_keeps_every_call_in_flight_and_the_rerun_pays_none_twice(tmp_path, server, provider, sig):
    spec = _spec(tmp_path, server.url, provider)
    p = _judgekit(spec, tmp_path)
    _wait_in_flight(p, server, 256)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (out, err)
    served_first = server.served
    assert server.in_flight == 0 and 256 <= served_first < ITEMS
    # every call in flight at the stop landed, was kept and charged; the message says so
    landed = re.search(r"of ([\d,]+) calls in flight at the stop, ([\d,]+) landed and were kept", err)
    assert landed and landed[1] == landed[2] and int(landed[1]) > 0, err
    assert "abandoned" not in err and "resume with:" in err
    [(status, first)] = _records(tmp_path / "c.duckdb")
    assert status == "interrupted"
    assert first["paid_calls"] == served_first
    assert first["cost_usd"] == pytest.approx(served_first * CALL_USD)
    assert _spent(out) == pytest.approx(served_first * CALL_USD, abs=0.005)
    # the flow wound down (every call not made returned at once): its results and summary are written
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["paid_calls"] == served_first
    assert summary["cost_usd"] == pytest.approx(served_first * CALL_USD)

    p = _judgekit(spec, tmp_path)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, (out, err)
    # the rerun paid only what was never served: no request was answered (and billed) twice
    assert server.served == 2 * ITEMS and max(server.bodies.values()) == 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["cost_usd"] == pytest.approx(server.served * CALL_USD)  # the run: both processes
    assert summary["paid_calls"] == server.served
    assert summary["this_process"]["cost_usd"] == pytest.approx((server.served - served_first) * CALL_USD)
    assert _spent(out) == pytest.approx(server.served * CALL_USD, abs=0.005)


@pytest.mark.parametrize("how", ["second signal", "grace", "spec's grace"])
def test_a_second_signal_or_the_grace_abandons_the_calls_still_out(tmp_path, how):
    srv = BillingServer(lambda: 30.0)  # nothing lands in time
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        spec = _spec(tmp_path, srv.url)
        p = _judgekit(spec, tmp_path, "--set=models.cand.limits.max_concurrency=20",
                      *(["--grace", "0.5"] if how == "grace" else ["--set=grace_s=0.5"] if how == "spec's grace" else []))
        _wait_in_flight(p, srv, 20)
        p.send_signal(signal.SIGINT)
        if how == "second signal":
            time.sleep(0.5)
            p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        srv.shutdown()
        srv.server_close()
    assert p.returncode == 130, (out, err)
    why = "at the second signal" if how == "second signal" else "after the 0.5 s grace"  # --grace, or the spec's
    assert f"of 20 calls in flight at the stop, 0 landed and were kept, 20 were abandoned {why}" in err, err
    assert "(the provider may bill them" in err
    assert ("--grace 0.5" in err) == (how == "grace")  # the resume command keeps a grace given


def _kill_when(p: subprocess.Popen, ready) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.005)
    p.kill()
    p.communicate(timeout=30)


@pytest.mark.parametrize("point", ["amid the candidates", "amid the judges"])
def test_a_run_killed_then_resumed_reports_the_money_of_both_processes(tmp_path, point):
    """kill -9 (no record left): the rerun's summary.json counts what the killed process paid and
    kept (its responses in the cache) with its own, this process's figures beside them."""
    rng = random.Random(1)
    srv = BillingServer(lambda: 0.01 + 0.02 * rng.random())
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        spec = _spec(tmp_path, srv.url)
        at = ITEMS // 3 if point == "amid the candidates" else ITEMS + ITEMS // 3
        p = _judgekit(spec, tmp_path, "--set=models.cand.limits.max_concurrency=8",
                      "--set=models.judge.limits.max_concurrency=8")
        _kill_when(p, lambda: srv.served >= at)
        time.sleep(0.3)  # what the killed client left in flight ends at the server
        served_first = srv.served
        p = _judgekit(spec, tmp_path)
        out, err = p.communicate(timeout=120)
    finally:
        srv.shutdown()
        srv.server_close()
    assert p.returncode == 0, (out, err)
    lost = srv.served - 2 * ITEMS  # answered while the client was being killed: nobody kept them
    assert 0 <= lost <= 16  # at most the two models' 8 calls each in flight at the kill
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    [killed] = summary["earlier_processes"]
    assert killed["status"] == "killed" and killed["counted_from"] == "cache"
    assert killed["paid_calls"] == served_first - lost
    this = summary["this_process"]
    assert this["paid_calls"] == srv.served - served_first
    # the run's money: every call kept, once, whichever process paid it
    assert summary["paid_calls"] == 2 * ITEMS == killed["paid_calls"] + this["paid_calls"]
    assert summary["cost_usd"] == pytest.approx(2 * ITEMS * CALL_USD)
    assert this["cost_usd"] == pytest.approx((srv.served - served_first) * CALL_USD)
    line = re.search(r"spent \$([\d,.]+) this run \(\$([\d,.]+) in this process, 1 earlier\)", out)
    assert line, out
    assert float(line[1].replace(",", "")) == pytest.approx(summary["cost_usd"], abs=0.005)
    assert float(line[2].replace(",", "")) == pytest.approx(this["cost_usd"], abs=0.005)


def test_a_done_run_closes_the_run_the_next_process_into_the_folder_starts_anew(tmp_path, server):
    server.open.set()  # no gate
    spec = _spec(tmp_path, server.url)
    for _ in range(2):
        p = _judgekit(spec, tmp_path, "--limit", "5")
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, (out, err)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["earlier_processes"] == [] and summary["paid_calls"] == 0 and summary["cost_usd"] == 0
    assert server.served == 10


def test_at_the_cost_cap_every_call_launched_is_kept_and_charged(tmp_path, server):
    server.open.set()  # no gate
    spec = _spec(tmp_path, server.url)
    p = _judgekit(spec, tmp_path, "--max-cost", "20", "--yes")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, (out, err)
    assert "more than is left under --max-cost $20.00" in err
    # the cap stops only once no reservation is outstanding: every call launched has landed
    assert "no call was in flight, every finished call is in the cache" in err
    [(status, rec)] = _records(tmp_path / "c.duckdb")
    assert status == "stopped" and rec["paid_calls"] == server.served
    assert rec["cost_usd"] == pytest.approx(server.served * CALL_USD) and rec["cost_usd"] <= 20
    assert _spent(out) == pytest.approx(server.served * CALL_USD, abs=0.005)
