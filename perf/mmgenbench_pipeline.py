"""MMGenBench end to end: judgekit's pipelined, batched run vs a one-at-a-time run like the reference's.

The reference pipeline handles one image at a time: caption it, draw it (batch size 1), encode both.
This script runs the shipped MMGenBench sample (36 images) twice in one process with fresh caches:

- ``sequential``: every model one call at a time (``max_concurrency = 1``) and every local model at
  ``batch_size = 1``: no batching and no concurrency within a model;
- ``judgekit``: the shipped runner's settings (captions 16 at once, local batches of 8 / 32);

with one simulated captioner (API latency ``--latency-ms``, default 1,500 ms, a typical VLM caption), the tiny local Stable
Diffusion pipeline (``--steps`` denoising steps at 64x64, CPU) and the tiny local CLIP encoder, and
prints the wall time of each and the ratio.  The tiny models cost little per image, so the gain
measured here is mostly the API captions' concurrency and the pipelining of stages; with real
diffusion models the batching share grows.

    .venv/bin/python perf/mmgenbench_pipeline.py [--latency-ms 1500] [--steps 4] [--limit 36]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.config import load_spec  # noqa: E402
from judgekit.runner import RunOptions, run_spec  # noqa: E402


def overrides(latency_ms: int, steps: int, sequential: bool) -> list[str]:
    out = [f"models.sim-strong.sim.latency_ms={latency_ms}", "models.sim-strong.sim.latency_jitter_ms=0",
           f"models.tiny-sd.local.steps={steps}", "models.tiny-sd.local.device='cpu'",
           "models.encoder.local.device='cpu'", "roles.candidates=['sim-strong']", "roles.generators=['tiny-sd']"]
    if sequential:
        out += ["models.sim-strong.limits.max_concurrency=1", "models.tiny-sd.limits.max_concurrency=1",
                "models.encoder.limits.max_concurrency=1", "models.tiny-sd.local.batch_size=1",
                "models.encoder.local.batch_size=1"]
    return out


async def one(name: str, root: Path, args) -> float:
    spec = load_spec("mmgenbench", overrides(args.latency_ms, args.steps, name == "sequential"))
    opts = RunOptions(out_dir=root / name / "out", cache_path=root / name / "cache.duckdb", limit=args.limit)
    t0 = time.perf_counter()
    done = await run_spec(spec, opts)
    wall = time.perf_counter() - t0
    if done.exit_code != 0:
        raise SystemExit(f"{name}: exit {done.exit_code}: {done.message} {done.failed_items[:3]}")
    paid = done.stats.paid_calls
    print(f"{name:>10}: {wall:6.1f} s for {args.limit} images ({paid} calls), {args.limit / wall:.2f} images/s")
    return wall


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency-ms", type=int, default=1500)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--limit", type=int, default=36)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # warm: build the tiny models and import everything once, so neither timed run pays for it
        await one("warm-up", root, argparse.Namespace(**{**vars(args), "limit": 1}))
        seq = await one("sequential", root, args)
        fast = await one("judgekit", root, args)
    print(f"judgekit / sequential speed-up: {seq / fast:.1f}x")


if __name__ == "__main__":
    asyncio.run(main())
