"""Creation-MMBench at its real size: how long ``prepare`` and ``estimate`` take, and the peak memory.

Builds, in a temporary folder, a TSV of the released file's shape: 765 rows, 1,020 JPEG images of
photo-like content (gradients plus noise, about 1000 x 700 px, so each base64 string is about
420 KB; the file is about 430 MB), written as VLMEvalKit writes its TSVs (pandas ``to_csv`` with
``sep='\\t'``: fields holding a tab, a quote or a line break quoted, quotes doubled).  Most rows
have one image, some a Python list of 2 to 9, a few point at another row's images.  Then, in a
fresh process pinned to one core (so the figures are the loader's alone), it runs what
``judgekit estimate creation_mmbench --set data=FILE`` runs: the benchmark's ``prepare`` and the
estimate (plan, cache keys, token counts), and prints

    file size, prepare time, estimate time, peak RSS (ru_maxrss of the measuring process)

``--before PATH`` measures another checkout too (a ``git worktree`` of an older commit), on the
same file, in alternating rounds.  Target: prepare + estimate <= 5 s, peak RSS <= 850 MB.

    .venv/bin/python perf/creation_load.py [--rounds 1] [--before /tmp/old-checkout] [--parquet]
"""

from __future__ import annotations

import argparse
import base64
import csv
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ROWS, IMAGES, POINTERS = 765, 1_020, 10


# --------------------------------------------------------------------------- the file


def _photo(rng: random.Random, w: int, h: int) -> bytes:
    """A JPEG with the entropy of a photograph: smooth colour gradients plus grain."""
    import numpy as np
    from PIL import Image

    g = np.random.default_rng(rng.randrange(2**32))
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.empty((h, w, 3), np.float32)
    for c in range(3):
        a, b, p = g.uniform(-0.3, 0.3, 3)
        img[..., c] = 128 + 90 * np.sin(a * x / 40 + b * y / 30 + p * 6)
    img += g.normal(0, 22, img.shape).astype(np.float32)
    arr = np.clip(img, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr, "RGB").save(buf, format="JPEG", quality=86)
    return buf.getvalue()


def _variant(jpeg: bytes, tag: int) -> bytes:
    """The same picture as a distinct file: a JPEG comment segment naming ``tag`` after SOI."""
    note = f"judgekit perf image {tag}".encode()
    return jpeg[:2] + b"\xff\xfe" + (len(note) + 2).to_bytes(2, "big") + note + jpeg[2:]


def _text(rng: random.Random, words: int) -> str:
    vocab = ("the light falls across a \"quiet\" harbour where boats\trest and gulls call; "
             "she writes: 'tomorrow we sail' — café, naïve, 日本 ✓").split(" ")
    lines, line = [], []
    for _ in range(words):
        line.append(rng.choice(vocab))
        if len(line) > 14:
            lines.append(" ".join(line))
            line = []
    lines.append(" ".join(line))
    return "\n".join(lines)


def build_tsv(path: Path, seed: int = 0) -> dict[str, int]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data" / "build"))
    from creation_mmbench_sample import COLUMNS  # the sample's build script
    from judgekit.benchmarks.creation_mmbench.tasks import task_categories

    rng = random.Random(seed)
    bases = [_photo(rng, rng.randint(900, 1100), rng.randint(620, 780)) for _ in range(24)]
    tasks = sorted(task_categories())
    # images per row: POINTERS rows point elsewhere, the others hold 1..9 images, IMAGES in all
    counts = [1] * (ROWS - POINTERS)
    extra = IMAGES - len(counts)
    while extra:
        i = rng.randrange(len(counts))
        if counts[i] < 9:
            counts[i] += 1
            extra -= 1
    pointer_rows = set(rng.sample(range(20, ROWS), POINTERS))
    tag = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(COLUMNS)
        k = 0
        for i in range(ROWS):
            if i in pointer_rows:
                image, image_path = str(rng.randrange(0, 20)), f"{i}.jpg"
            else:
                b64s = []
                for _ in range(counts[k]):
                    b64s.append(base64.b64encode(_variant(rng.choice(bases), tag)).decode("ascii"))
                    tag += 1
                names = [f"{i}_{j}.jpg" for j in range(len(b64s))]
                image = b64s[0] if len(b64s) == 1 else repr(b64s)
                image_path = names[0] if len(names) == 1 else repr(names)
                k += 1
            criteria = {"General Subjective Criteria": _text(rng, 220), "Visual Factuality Criteria": _text(rng, 90)}
            role, background = _text(rng, 25), _text(rng, 60)
            instruction, requirement = _text(rng, 20), _text(rng, 70)
            question = (f"Assume you are {role}\n\n{background}\n\nYour task is to {instruction}\n\n"
                        f"Requirements: {requirement}")
            w.writerow([str(i), question, tasks[i % len(tasks)].replace(" ", "_"), role, background, instruction,
                        requirement, _text(rng, 40) if i % 7 == 0 else "", "perf", repr(criteria), image_path,
                        _text(rng, 450), image])
    return {"images": tag, "rows": ROWS}


def build_parquet(tsv: Path, out: Path) -> None:
    """The Hugging Face layout of the same rows (``image`` a list of {bytes, path})."""
    from judgekit.benchmarks.creation_mmbench.data import tsv_to_parquet

    tsv_to_parquet(tsv, out)


# --------------------------------------------------------------------------- the measurement

_CHILD = r"""
import asyncio, json, os, resource, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from judgekit.config import load_spec
from judgekit import runner
from judgekit.runner import RunOptions

def peak_rss_mb():
    # VmHWM: this process's own high-water mark (ru_maxrss would carry over the parent's, which
    # built the file, across fork and exec)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

async def main(data, cache):
    from pathlib import Path
    cache = Path(cache)
    spec = load_spec("creation_mmbench", [f"data={data}"])
    opts = RunOptions(cache_path=cache)
    bench, options = runner._benchmark(spec)
    t0, c0 = time.perf_counter(), time.process_time()
    prepared = bench.prepare(spec, options, None)
    t1, c1 = time.perf_counter(), time.process_time()
    async with runner._Session(spec, opts, "perf-estimate", offline=True) as s:
        est = await runner._estimate(bench, prepared, s.engine)
    t2, c2 = time.perf_counter(), time.process_time()
    tokens = {line.stage: line.input_tokens for line in est.lines}
    images = sum(len(it.images) for it in prepared.items)
    print(json.dumps({"prepare_s": t1 - t0, "estimate_s": t2 - t1, "prepare_cpu_s": c1 - c0, "estimate_cpu_s": c2 - c1,
                      "items": len(prepared.items), "images": images, "input_tokens": tokens,
                      "peak_rss_mb": peak_rss_mb()}))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def measure(checkout: Path, data: Path, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout), "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-perf")}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(data), str(cache)], env=env, cwd=checkout,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{checkout}: exit {out.returncode}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--before", type=Path, help="another checkout to measure on the same file (e.g. a worktree of HEAD~)")
    ap.add_argument("--parquet", action="store_true", help="also measure the Hugging Face parquet of the same rows")
    ap.add_argument("--keep", type=Path, help="write the file here instead of a temporary folder (reused if present)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        tsv = folder / "Creation_MMBench_perf.tsv"
        if not tsv.exists():
            t = time.perf_counter()
            shape = build_tsv(tsv)
            print(f"built {tsv.name}: {shape['rows']} rows, {shape['images']} images in {time.perf_counter() - t:.1f} s")
        print(f"file size: {tsv.stat().st_size / 1e6:,.0f} MB ({tsv.stat().st_size:,} bytes)")
        files = [("tsv", tsv)]
        if args.parquet:
            pq = folder / "test-00000-of-00001.parquet"
            if not pq.exists():
                build_parquet(tsv, pq)
            print(f"parquet size: {pq.stat().st_size / 1e6:,.0f} MB")
            files.append(("parquet", pq))
        checkouts = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
        for r in range(args.rounds):
            for name, checkout in (checkouts if r % 2 == 0 else checkouts[::-1]):
                for kind, data in files:
                    if name == "before" and kind == "parquet":
                        continue  # the old loader cannot read it
                    m = measure(checkout, data, Path(tmp) / f"cache-{name}-{kind}-{r}.duckdb")
                    total = m["prepare_s"] + m["estimate_s"]
                    cpu = m["prepare_cpu_s"] + m["estimate_cpu_s"]
                    print(f"round {r + 1} {name:>6} {kind:>7}: prepare {m['prepare_s']:5.2f} s "
                          f"(cpu {m['prepare_cpu_s']:5.2f}), estimate {m['estimate_s']:5.2f} s "
                          f"(cpu {m['estimate_cpu_s']:5.2f}), total {total:5.2f} s (cpu {cpu:5.2f}), "
                          f"peak RSS {m['peak_rss_mb']:4.0f} MB")
                    print(f"{'':>22}{m['items']} items, {m['images']} images, input tokens {m['input_tokens']}")


if __name__ == "__main__":
    main()
