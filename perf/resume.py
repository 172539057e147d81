"""Resume after kill -9: a Creation-MMBench run of N items (rows x 1 candidate) against a simulator,
killed with SIGKILL at about half of its calls, then re-run with the same command.

Prints: calls paid on the rerun vs the calls missing from the cache after the kill (target: at
most the remaining calls plus the concurrency), the calls lost by the kill (served but not yet
flushed: at most the last flush interval), and whether the final summary equals an
uninterrupted run's.

    .venv/bin/python perf/resume.py [--items 2000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import start_sim  # noqa: E402

from judgekit.resources import samples_dir  # noqa: E402

CONCURRENCY = 32


def make_tsv(path: Path, items: int) -> None:
    """The shipped sample's rows repeated with new indices (pointer rows keep pointing at a row
    of their own copy)."""
    csv.field_size_limit(sys.maxsize)
    with open(samples_dir() / "creation_mmbench" / "sample.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, body = rows[0], rows[1:]
    i_index, i_image = header.index("index"), header.index("image")
    out = []
    for k in range(items):
        row = list(body[k % len(body)])
        copy = k // len(body)
        row[i_index] = str(copy * 1000 + int(row[i_index]))
        if len(row[i_image]) <= 64:  # a pointer to another row's index
            row[i_image] = str(copy * 1000 + int(row[i_image]))
        # make every copy's question distinct so each item is its own set of calls
        row[header.index("question")] += f"\n(variant {copy})"
        out.append(row)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(header)
        w.writerows(out)


def write_spec(path: Path, data: Path, sim_url: str) -> None:
    path.write_text(f'''
name = "resume-perf"
benchmark = "creation_mmbench"
data = "{data}"
[models.cand]
provider = "sim"
model = "sim-vlm"
params = {{ temperature = 0, max_tokens = 512 }}
limits = {{ max_concurrency = {CONCURRENCY} }}
sim = {{ url = "{sim_url}", seed = 11 }}
[models.judge]
provider = "sim"
model = "sim-judge"
params = {{ temperature = 0, max_tokens = 1024 }}
limits = {{ max_concurrency = {CONCURRENCY} }}
sim = {{ url = "{sim_url}", seed = 11 }}
[roles]
candidates = ["cand"]
judge = "judge"
''')


def run(spec: Path, cache: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "judgekit.cli.main", "run", str(spec), "--cache", str(cache),
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def responses(cache: Path) -> int:
    """Responses kept: opening the store replays the write-ahead log a killed run left."""
    import asyncio

    from judgekit.cache.store import CacheStore

    async def count() -> int:
        store = await CacheStore.open(cache, run_id="count")
        n = await store.count_responses()
        await store.close()
        return n

    return asyncio.run(count())


def results(out: Path) -> list:
    return json.loads((out / "summary.json").read_text())["results"]


def main(args) -> None:
    sim = start_sim(seed=11)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            make_tsv(tmp / "data.tsv", args.items)
            write_spec(tmp / "spec.toml", tmp / "data.tsv", sim.base_url)

            # 1. uninterrupted reference run
            t0 = time.monotonic()
            p = run(tmp / "spec.toml", tmp / "ref.duckdb", tmp / "ref")
            _, err = p.communicate()
            assert p.returncode == 0, err
            total = sim.stats()["served"]
            print(f"uninterrupted run: {args.items} items, {total} calls in {time.monotonic() - t0:.1f} s")

            # 2. the same run, killed with SIGKILL at about half of its calls
            sim.reset()
            p = run(tmp / "spec.toml", tmp / "cache.duckdb", tmp / "out")
            while sim.stats()["served"] < total // 2:
                if p.poll() is not None:
                    raise SystemExit("the run ended before it could be killed")
                time.sleep(0.02)
            p.send_signal(signal.SIGKILL)
            p.wait()
            served_before = sim.stats()["served"]
            kept = responses(tmp / "cache.duckdb")
            remaining = total - kept
            print(f"killed with SIGKILL after {served_before} paid calls ({served_before / total:.0%}); "
                  f"{kept} responses kept (cache + write-ahead log), {served_before - kept} lost with the kill "
                  f"(in flight or not yet logged)")

            # 3. rerun with the same command
            sim.reset()
            p = run(tmp / "spec.toml", tmp / "cache.duckdb", tmp / "out")
            _, err = p.communicate()
            assert p.returncode == 0, err
            paid = sim.stats()["served"]
            print(f"rerun paid {paid} calls; remaining (total - cached) {remaining}; limit remaining + concurrency "
                  f"= {remaining + CONCURRENCY}: {'OK' if paid <= remaining + CONCURRENCY else 'OVER'}")
            print(f"calls paid twice overall: {served_before + paid - total}")
            same = results(tmp / "out") == results(tmp / "ref")
            print(f"final summary identical to the uninterrupted run's: {same}")
    finally:
        sim.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=2000)
    main(ap.parse_args())
