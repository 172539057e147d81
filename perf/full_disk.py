"""The quickstart with its cache on a disk that fills up, then the rerun after space is freed:
what the first run printed (tracebacks, lines on stderr, exit code), how many calls the simulator
served in each run, and how many the rerun paid twice.  Needs root (a small tmpfs is mounted).  A
run that says it holds replies in memory gets its space at once (as a user reading that line would
free some).  A tmpfs under 4 MiB leaves no room for the log's reserve (cache/wal.py's RESERVE_BYTES).

    python perf/full_disk.py [--src DIR] [--size 240k] [--latency-ms 120]

``--src`` runs another judgekit source tree (e.g. ``git archive <commit> | tar -x -C DIR``) to
measure the code as it was; the simulator counting the calls is this tree's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from judgekit.sim import SimConfig, SimThread

ALIASES = ("sim-strong", "sim-weak", "judge", "judge-2")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=None, help="a judgekit source tree to run instead of the installed one")
    ap.add_argument("--size", default="240k", help="the tmpfs's size (the cache's disk)")
    ap.add_argument("--latency-ms", type=float, default=120.0)
    args = ap.parse_args()
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = args.src
    with tempfile.TemporaryDirectory() as tmp, SimThread(SimConfig(latency_ms=args.latency_ms,
                                                                   latency_jitter_ms=args.latency_ms / 3)) as server:
        mnt = os.path.join(tmp, "disk")
        os.mkdir(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.size}", "jkperf", mnt], check=True)
        try:
            sets = sum((["--set", f"models.{a}.sim.url={server.base_url}"] for a in ALIASES), [])
            cmd = [sys.executable, "-c", "from judgekit.cli.main import main; main()", "run", "quickstart",
                   "--cache", f"{mnt}/c.duckdb", "--out", f"{tmp}/out", *sets]
            # the first run, read as it goes: a run that says it holds replies in memory until there
            # is room gets it, as a user would free space on reading that line
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp)
            out_lines, freed = [], False
            for line in proc.stdout:
                out_lines.append(line)
                if "held in memory until" in line and not freed:
                    subprocess.run(["mount", "-o", "remount,size=256m", mnt], check=True)
                    freed = True
            first = subprocess.CompletedProcess(cmd, proc.wait(timeout=600), "".join(out_lines), proc.stderr.read())
            served1 = server.stats()["served"]
            subprocess.run(["mount", "-o", "remount,size=256m", mnt], check=True)
            second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp)
            served2 = server.stats()["served"] - served1
        finally:
            subprocess.run(["umount", "-l", mnt])
    text = first.stdout + first.stderr
    print(f"source: {args.src or 'installed'}; tmpfs {args.size}; simulator latency {args.latency_ms:.0f} ms")
    print(f"first run: exit {first.returncode}, {text.count('Traceback')} traceback(s), "
          f"{len([x for x in first.stderr.splitlines() if x.strip()])} stderr line(s), served {served1} calls")
    print(f"  last stderr line: {(first.stderr.strip().splitlines() or [''])[-1][:300]}")
    held = [x for x in first.stdout.splitlines() if "held in memory until" in x]
    print(f"  {held[0].split(' repl')[0] + ' replies held in memory, space freed while it waited' if held else 'no reply held in memory'}")
    print(f"rerun after space was freed: exit {second.returncode}, served {served2} calls; "
          f"paid twice: {served1 + served2 - 208} of 208")


if __name__ == "__main__":
    main()
