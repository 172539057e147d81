"""`judgekit view [RUN_DIR]`: opens a run's report.html, or prints its path and file:// URL where no
browser can be shown; `--serve` serves a folder of runs on localhost with an index page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import webbrowser
from pathlib import Path

import httpx
import pytest
from oneline import assert_user_error, invoke

from judgekit.report.doc import Headline, ReportDoc
from judgekit.report.view import make_server
from judgekit.report.write import write_report


def _run(path: Path, benchmark: str, value: float, mtime: float | None = None) -> Path:
    write_report(path, ReportDoc(title=f"run {path.name}", benchmark=benchmark,
                                 headline=[Headline("model-a", "Reward", value)]))
    (path / "summary.json").write_text('{"spec": "spec-%s", "status": "done"}' % path.name)
    if mtime is not None:
        for name in ("report.json", "report.html"):
            os.utime(path / name, (mtime, mtime))
    return path


@pytest.fixture
def out(tmp_path, monkeypatch):
    """judgekit-out/ in the current folder with two runs (the newer: ``new``), the cache file and
    a folder of a group of runs one level down."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "judgekit-out"
    _run(root / "old", "pairwise", 12.5, mtime=1_700_000_000)
    _run(root / "new", "rubric", 7.25, mtime=1_800_000_000)
    _run(root / "group" / "inner", "pairwise", -3.0, mtime=1_600_000_000)
    (root / "cache.duckdb").write_bytes(b"DUCK")
    return root


@pytest.fixture
def opened(monkeypatch):
    """webbrowser.open recorded (never a real browser); what it answers is set per test."""
    calls: list[str] = []
    answer = {"value": True}

    def fake_open(url, *a, **k):
        calls.append(url)
        return answer["value"]

    monkeypatch.setattr(webbrowser, "open", fake_open)
    return calls, answer


def test_no_browser_prints_the_path_and_url(out, opened, monkeypatch):
    calls, _ = opened
    for var in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    r = invoke("view")  # the latest run in judgekit-out/
    assert r.exit_code == 0, r.output
    report = Path("judgekit-out") / "new" / "report.html"
    assert r.stdout.splitlines() == [str(report), report.resolve().as_uri()]
    assert calls == []  # no display: no browser is tried
    r = invoke("view", out / "group" / "inner")
    assert r.stdout.splitlines()[0] == str(out / "group" / "inner" / "report.html")


def test_a_browser_opens_it_unless_print(out, opened, monkeypatch):
    calls, answer = opened
    monkeypatch.setenv("BROWSER", "true")
    r = invoke("view", out / "old")
    url = (out / "old" / "report.html").resolve().as_uri()
    assert r.exit_code == 0 and r.stdout.splitlines() == [f"opened {url}"]
    assert calls == [url]
    r = invoke("view", out / "old", "--print")
    assert r.stdout.splitlines() == [str(out / "old" / "report.html"), url] and len(calls) == 1
    answer["value"] = False  # the module found no browser to run
    r = invoke("view", out / "old" / "report.html")
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == url and len(calls) == 2


def test_bad_paths_are_one_line(out, tmp_path):
    assert_user_error(invoke("view", tmp_path / "missing"), "no such file or folder")
    assert_user_error(invoke("view", out / "cache.duckdb"), "not a run folder or a report page")
    (tmp_path / "empty").mkdir()
    assert_user_error(invoke("view", tmp_path / "empty"), "no report.html there")
    os.chdir(tmp_path / "empty")
    assert_user_error(invoke("view"), "no judgekit-out/ here")


def test_serve_lists_the_runs_and_serves_their_reports(out):
    server = make_server(out, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = "http://%s:%d" % server.server_address[:2]
        index = httpx.get(base + "/", timeout=10)
        assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
        page = index.text
        # newest first, each with its benchmark, spec, status and headline, linking its report
        assert page.index('href="new/report.html"') < page.index('href="old/report.html"') \
            < page.index('href="group/inner/report.html"')
        assert "rubric" in page and "spec-new" in page and "Reward: model-a 7.25" in page and "done" in page
        assert "cache.duckdb" not in page
        report = httpx.get(base + "/new/report.html", timeout=10)
        assert report.status_code == 200 and "run new" in report.text
        assert httpx.get(base + "/nothing/report.html", timeout=10).status_code == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert not thread.is_alive()


def test_serve_command_stops_cleanly_on_ctrl_c(out):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "view", "--serve", str(out), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"serving 3 runs of {out} at http://127.0.0.1:"), (line, proc.stderr.read())
        url = line.split(" at ")[1].split()[0]
        assert 'href="old/report.html"' in httpx.get(url, timeout=10).text
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert rest.strip() == "stopped" and "Traceback" not in err
