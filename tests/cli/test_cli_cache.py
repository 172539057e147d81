"""`judgekit cache ...` and `judgekit sim serve` as a user runs them."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

FAST = [f"--set=models.{a}.sim.latency_ms=0" for a in ("sim-strong", "sim-weak", "judge")]
FAST.append('--set=roles.judges=["judge"]')  # the quickstart's first judge alone


def judgekit(*args):
    return subprocess.run([sys.executable, "-m", "judgekit.cli.main", *args], capture_output=True, text=True,
                          timeout=120)


def test_cache_stats_export_prune(tmp_path):
    cache = str(tmp_path / "c.duckdb")
    assert judgekit("run", "quickstart", "--limit", "1", "--cache", cache, "--out", str(tmp_path / "o"),
                    *FAST).returncode == 0
    r = judgekit("cache", "stats", "--cache", cache, "--json")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["responses"] == 2 + 4 + 4  # 2 candidates, 2x2 pairwise, 2x2 VFS for item 0
    assert {row["stage"] for row in st["responses_by"]} == {"candidate", "pairwise", "vfs"}
    assert st["runs"][0]["status"] == "done"

    out = tmp_path / "responses.jsonl"
    r = judgekit("cache", "export", str(out), "--cache", cache)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == st["responses"] and "text" in json.loads(lines[0])

    r = judgekit("cache", "prune", "--cache", cache, "--stage", "vfs", "--dry-run")
    assert r.returncode == 0 and "would remove 4 rows" in r.stdout
    r = judgekit("cache", "prune", "--cache", cache, "--stage", "vfs")
    assert "removed 4 rows" in r.stdout
    assert json.loads(judgekit("cache", "stats", "--cache", cache, "--json").stdout)["responses"] == 6


def test_cache_commands_need_a_file(tmp_path):
    r = judgekit("cache", "stats", "--cache", str(tmp_path / "none.duckdb"))
    assert r.returncode == 2 and "no cache file there" in r.stderr


def test_second_process_on_the_same_cache_gets_a_clear_error(tmp_path):
    cache = str(tmp_path / "c.duckdb")
    slow = [f"--set=models.{a}.sim.latency_ms=300" for a in ("sim-strong", "sim-weak", "judge")]
    p = subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "run", "quickstart", "--cache", cache,
                          "--out", str(tmp_path / "o1"), *slow], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(cache) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        r = judgekit("run", "quickstart", "--cache", cache, "--out", str(tmp_path / "o2"))
        assert r.returncode == 2
        assert cache in r.stderr and "another judgekit" in r.stderr.lower()
    finally:
        p.terminate()
        p.wait(30)


def test_sim_serve(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "sim", "serve", "--port", str(port),
                          "--rpm", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/sim/stats", timeout=1) as resp:
                    stats = json.loads(resp.read())
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert stats["served"] == 0
        # one line for a person (listening by then), not the handshake python -m judgekit.sim prints
        assert p.stdout.readline() == (f"simulator on http://127.0.0.1:{port}/v1 (OpenAI-compatible; Anthropic and "
                                       f"Gemini SDKs at http://127.0.0.1:{port}); Ctrl-C stops it\n")
        import openai

        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=16)
        assert r.choices[0].message.content
    finally:
        p.terminate()
        p.wait(10)
