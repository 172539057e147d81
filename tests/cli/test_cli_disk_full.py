"""`judgekit run` with its cache on a disk that fills up: one line naming the cache file and the
resume command (exit 1, no traceback), no new call once a write failed, and after space is freed
the rerun pays 0 calls twice (the simulator counts every call it served over both runs).

One test fills a real file system (a small tmpfs: needs root and a mount the container allows, else
it is skipped); the other injects ENOSPC into the cache's log and DuckDB's commits in a child
process and always runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import uuid

import pytest

from judgekit.sim import SimConfig, SimThread

ALIASES = ("sim-strong", "sim-weak", "judge", "judge-2")
CALLS = 208  # the quickstart's calls


def _cmd(server, cache, out) -> list[str]:
    sets = sum((["--set", f"models.{a}.sim.url={server.root_url}"] for a in ALIASES), [])
    return ["quickstart", "--cache", str(cache), "--out", str(out), *sets]


def _check_stop(r: subprocess.CompletedProcess, cache) -> None:
    text = r.stdout + r.stderr
    assert r.returncode == 1, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("stopped: ") and str(cache) in lines[0], lines[0]
    assert "no space left on device" in lines[0] and "then resume with: judgekit run quickstart" in lines[0]


def _hits(r: subprocess.CompletedProcess) -> int:
    m = re.search(r"cache hits (\d+)", r.stdout)
    assert m, r.stdout[-2000:]
    return int(m.group(1))


def _judgekit(args, **kw) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "judgekit")
    return subprocess.run([exe, "run", *args], capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    # too small for the log's 4 MiB reserve: replies can be held in memory (see _run_freeing_space)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160k", f"jk-{uuid.uuid4().hex[:6]}", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"mount not permitted here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _run_freeing_space(args, mnt) -> subprocess.CompletedProcess:
    """``judgekit run ARGS``, read as it goes: when it says it holds replies in memory until there
    is room, the tmpfs grows (as a user frees space on reading that line)."""
    exe = os.path.join(os.path.dirname(sys.executable), "judgekit")
    proc = subprocess.Popen([exe, "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    for line in proc.stdout:
        out.append(line)
        if "held in memory until" in line:
            subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], check=True)
    return subprocess.CompletedProcess(proc.args, proc.wait(timeout=300), "".join(out), proc.stderr.read())


def test_a_real_full_disk_stops_in_one_line_and_the_rerun_pays_nothing_twice(small_tmpfs, tmp_path):
    cache = small_tmpfs / "c.duckdb"
    with SimThread(SimConfig(latency_ms=150, latency_jitter_ms=50)) as server:
        first = _run_freeing_space(_cmd(server, cache, tmp_path / "out"), small_tmpfs)
        _check_stop(first, cache)
        served_first = server.stats()["served"]
        subprocess.run(["mount", "-o", "remount,size=64m", str(small_tmpfs)], check=True)  # space freed
        second = _judgekit(_cmd(server, cache, tmp_path / "out"))
        assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
        assert server.stats()["served"] == CALLS  # 0 calls paid twice over both runs
    assert _hits(second) == served_first  # every reply the first run got was kept
    assert not [n for n in os.listdir(small_tmpfs) if ".wal." in n]


DRIVER = textwrap.dedent('''
    import errno, os, sys
    import duckdb
    from judgekit.cache import _worker, wal
    from judgekit.cli import ui

    state = {"lines": 0, "full": False, "freed": False}

    class _OS:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def write(fd, data):
            state["lines"] += 1
            if state["lines"] > 40 and not state["freed"]:  # the disk fills after 40 replies were logged
                state["full"] = True
            if state["full"]:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return os.write(fd, data)

    wal.os = _OS()
    insert = _worker.StoreWorker._insert

    def _insert(worker, *args):
        if state["full"]:
            raise duckdb.IOException('Could not write file "c.duckdb.wal": No space left on device')
        return insert(worker, *args)

    _worker.StoreWorker._insert = _insert
    note = ui.ConsoleUI.note

    def _note(self, message):
        note(self, message)
        if "held in memory" in message:  # the user reads it and frees space
            print(f"HELD {message.split()[0]}", file=sys.stderr, flush=True)
            state["full"], state["freed"] = False, True

    ui.ConsoleUI.note = _note
    sys.argv = ["judgekit", "run", *sys.argv[1:]]
    from judgekit.cli.main import main
    main()
''')


def test_an_injected_full_disk_holds_replies_in_memory_until_space_is_freed(tmp_path):
    """The log's writes fail too: the replies that land after the disk filled are held in memory;
    the run says so and waits; once space is freed it writes them and ends in one line."""
    cache = tmp_path / "c.duckdb"
    with SimThread(SimConfig(latency_ms=60, latency_jitter_ms=20)) as server:
        first = subprocess.run([sys.executable, "-c", DRIVER, *_cmd(server, cache, tmp_path / "out")],
                               capture_output=True, text=True, timeout=300)
        held = [line for line in first.stderr.splitlines() if line.startswith("HELD ")]
        assert len(held) == 1 and int(held[0].split()[1].replace(",", "")) > 0, first.stderr[-3000:]
        first = subprocess.CompletedProcess(first.args, first.returncode, first.stdout,
                                            "\n".join(x for x in first.stderr.splitlines() if not x.startswith("HELD ")))
        _check_stop(first, cache)
        assert "held in memory until there is room" in first.stdout
        served_first = server.stats()["served"]
        assert served_first < CALLS  # it stopped launching calls once a write failed
        second = _judgekit(_cmd(server, cache, tmp_path / "out"))
        assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
        assert server.stats()["served"] == CALLS  # 0 calls paid twice
    assert _hits(second) == served_first


def test_a_full_results_folder_is_one_line_naming_the_file(small_tmpfs, tmp_path):
    """--out on the full disk (the cache elsewhere): the file that could not be written is named,
    no temporary file is left, and the rerun makes no call (every reply is in the cache)."""
    out = small_tmpfs / "out"
    with SimThread(SimConfig()) as server:
        first = _judgekit(_cmd(server, tmp_path / "c.duckdb", out))
        text = first.stdout + first.stderr
        assert first.returncode == 1 and "Traceback" not in text, text[-3000:]
        (line,) = [x for x in first.stderr.splitlines() if x.strip()]
        assert line.startswith(f"stopped: {out}/") and "no space left on device" in line and "resume with:" in line
        assert not list(out.glob("*.tmp"))
        subprocess.run(["mount", "-o", "remount,size=64m", str(small_tmpfs)], check=True)
        second = _judgekit(_cmd(server, tmp_path / "c.duckdb", out))
        assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
        assert server.stats()["served"] == CALLS and _hits(second) == CALLS
