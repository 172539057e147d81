"""Issue 24 point 6, measured: the quickstart's Claude judge (the simulator answering as
``sim-judge``, priced as Claude 3.5 Sonnet, prompt-cache marks on) priced three ways from the same
runs' usage: genai-prices' list prices (the reference), a spec's ``price = { input_per_mtok = 3,
output_per_mtok = 15 }`` override as judgekit prices it now (cache reads 0.1x, writes 1.25x: the
provider's multipliers), and that override as it was priced before (reads at the input price,
writes at 1.0x).  Also the "prompt cache saved" figure of each run and the estimate's bound and
expectation beside the cost.

Live and batch, on the shipped sample and on the paper-length variant of ``perf/judge_cost.py``
(where the marked images reach the 1,024-token minimum).  Each run: a fresh cache and simulator.

    .venv/bin/python perf/override_prices.py [--data sample|paper|both]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_cost import BATCH, JUDGES, KEY_ENV, _spec, paper_length_tsv  # noqa: E402

from judgekit.config import load_spec  # noqa: E402
from judgekit.cost.prices import PriceOverride  # noqa: E402
from judgekit.runner import RunOptions, estimate_spec, run_spec  # noqa: E402
from judgekit.sim import SimConfig, SimProcess  # noqa: E402

OVERRIDE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}


def old_rule(inp: int, out: int, batch: bool) -> float:
    """What the override cost before: every input token at the input price."""
    usd = (inp * OVERRIDE["input_per_mtok"] + out * OVERRIDE["output_per_mtok"]) / 1e6
    return usd / 2 if batch else usd


async def one(tmp: Path, data: Path | None, batch: bool, override: bool) -> dict:
    quickstart_judge = load_spec("quickstart").models["judge"].sim
    sim = SimProcess(SimConfig(**{**quickstart_judge, "rpm": None}, batch_turnaround_s=0.3))
    await asyncio.to_thread(sim.start)
    try:
        spec = _spec(data, "claude", batch, True, sim)
        d = spec.model_dump(exclude_none=True)
        if override:
            d["models"]["judge"]["price"] = OVERRIDE
        spec = type(spec).model_validate(d)
        name = f"{'batch' if batch else 'live'}-{'override' if override else 'list'}-{'paper' if data else 'sample'}"
        est = await estimate_spec(spec, RunOptions(out_dir=tmp / f"e-{name}", cache_path=tmp / f"e-{name}.duckdb"))
        out = await run_spec(spec, RunOptions(out_dir=tmp / name, cache_path=tmp / f"{name}.duckdb", yes=True))
    finally:
        await asyncio.to_thread(sim.stop)
    if out.exit_code != 0:
        raise SystemExit(f"{name}: {out.message}")
    summary = json.loads((tmp / name / "summary.json").read_text())
    stages = [s for n, s in out.stats.stages.items() if n in ("pairwise", "vfs")]
    judge = [ln for ln in est.estimate.lines if ln.alias == "judge"]
    pc = summary["prompt_cache"]
    return {"cost": summary["cost_usd"], "saved": pc["saved_usd"], "read": pc["cached_input_tokens"],
            "written": pc["cache_write_tokens"], "input": sum(s.input_tokens for s in stages),
            "output": sum(s.output_tokens for s in stages), "est_max": sum(ln.cost_max_usd or 0 for ln in judge),
            "est_exp": sum(ln.cost_expected_usd or 0 for ln in judge), "summary": summary}


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=["sample", "paper", "both"], default="both")
    args = ap.parse_args(argv)
    os.environ.setdefault(KEY_ENV, "sk-judgekit-perf-0123456789")
    assert JUDGES["claude"][1] == "claude-3-5-sonnet-20241022" and BATCH
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        sets = []
        if args.data in ("sample", "both"):
            sets.append(("sample", None))
        if args.data in ("paper", "both"):
            sets.append(("paper-length", paper_length_tsv(tmp / "paper.tsv")))
        head = (f"{'data':13} {'mode':6} {'read':>7} {'written':>8} {'list USD':>9} {'override':>9} {'before':>9} "
                f"{'before vs list':>15} {'saved now':>10} {'est. exp / bound':>18}")
        print(head)
        print("-" * len(head))
        for title, data in sets:
            for batch in (False, True):
                listed = await one(tmp, data, batch, False)
                over = await one(tmp, data, batch, True)
                assert (over["input"], over["read"], over["written"]) == (listed["input"], listed["read"],
                                                                           listed["written"])
                before = old_rule(over["input"], over["output"], batch)
                print(f"{title:13} {'batch' if batch else 'live':6} {over['read']:>7,} {over['written']:>8,} "
                      f"{listed['cost']:>9.4f} {over['cost']:>9.4f} {before:>9.4f} "
                      f"{(before / listed['cost'] - 1):>+15.1%} {over['saved']:>10.4f} "
                      f"{over['est_exp']:>8.4f} / {over['est_max']:.4f}")
    print(f"{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    asyncio.run(main())
