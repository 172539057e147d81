"""The quickstart's judge stage priced as GPT-4o, Claude 3.5 Sonnet and Gemini 2.5 Pro: live, live with
the prompt cache, batch, and batch with the prompt cache, measured on runs against the simulator.

For each judge and mode, the quickstart (Creation-MMBench, 12 items, 2 simulated candidates, dual
evaluation: 92 judge calls) runs once with a fresh cache and a fresh simulator for the judge,
through the judge's real SDK (openai, anthropic, google-genai), the simulator answering as
``sim-judge`` and judgekit pricing it at the list prices of ``serves`` (genai-prices): GPT-4o
(gpt-4o-2024-08-06), Claude 3.5 Sonnet (claude-3-5-sonnet-20241022), Gemini 2.5 Pro.  The
candidates are the simulator's (free), so a run's ``cost_usd`` is its judge's.  Printed per run,
from its ``summary.json``: cost, cached input tokens read, cache writes, batch calls; from the
run's stage counters: the judge's input and output tokens.

The prompt cache: for GPT-4o and Gemini the simulator's automatic prefix cache
(``SimConfig.prefix_cache``: 128-token steps from 1,024 tokens; 4,096 for Gemini Pro), off in the
modes without it; for Claude the provider's ``cache_control`` marks (``prompt_cache = true``),
off (``prompt_cache = false``) in the modes without it.  Live, an item's first judgment of a kind
goes alone and its others once it has an answer (Creation-MMBench's scheduling), so they can read
the prefix they share; ``live + cache*`` sends them all at once instead (the scheduling before),
to show what that buys.  The judge's simulator answers live calls in 30 +- 20 ms (the quickstart's).

Two data sets: the shipped sample (small drawings, queries of ~100 tokens, baseline answers of
~175) and, because its prefixes barely reach the caches' minimums, a paper-length variant built
here from it: the same 12 items with queries padded to ~600 tokens (the paper: most of its queries
exceed 500), baseline answers to ~1,500 tokens (the paper: many exceed 1,500) and images upscaled
to 1024x768 (what Claude counts by pixels; the simulator's OpenAI and Gemini endpoints count 85
tokens an image, GPT-4o's low-detail figure, whatever the size).  Filler words pad them: the
figures are for prompt sizes, not for the content.

    .venv/bin/python perf/judge_cost.py [--data sample|paper|both] [--judges gpt-4o,claude,gemini]
                                        [--gemini-min-tokens 4096]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import base64
import csv
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from judgekit.benchmarks.creation_mmbench.prompts import compose_question
from judgekit.config import RunSpec, load_spec
from judgekit.resources import samples_dir
from judgekit.runner import RunOptions, run_spec
from judgekit.sim import SimConfig, SimProcess

KEY_ENV = "JUDGEKIT_PERF_JUDGE_KEY"
JUDGES = {  # name -> (provider, the model it is priced as, the simulator's minimum for it)
    "gpt-4o": ("openai", "gpt-4o-2024-08-06", None),
    "claude": ("anthropic", "claude-3-5-sonnet-20241022", None),
    "gemini": ("gemini", "gemini-2.5-pro", 4096),
}
MODES = {  # name -> (batch, prompt cache, both orders of an item sent at once)
    "live": (False, False, False),
    "live + cache": (False, True, False),
    "live + cache*": (False, True, True),
    "batch": (True, False, False),
    "batch + cache": (True, True, False),
}
BATCH = {"batch_linger_s": 0.2, "batch_poll_s": 0.1}
QUERY_TOKENS, ANSWER_TOKENS, IMAGE_SIZE = 600, 1500, (1024, 768)


# --------------------------------------------------------------------------- the paper-length data


def _filler(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` simulated tokens (four characters each) of plain prose-like words."""
    vocab = ["the", "scene", "shows", "a", "quiet", "street", "where", "light", "falls", "on", "old", "walls",
             "and", "people", "pass", "by", "while", "the", "writer", "notes", "every", "colour", "shape", "and",
             "small", "detail", "that", "matters", "to", "the", "story"]
    words, size = [], 0
    while size < 4 * tokens:
        w = rng.choice(vocab)
        words.append(w)
        size += len(w) + 1
    return " ".join(words)


def _bigger(b64: str) -> str:
    from PIL import Image

    im = Image.open(io.BytesIO(base64.b64decode(b64)))
    fmt = im.format or "JPEG"
    buf = io.BytesIO()
    im.convert("RGB").resize(IMAGE_SIZE).save(buf, format=fmt, **({"quality": 85} if fmt == "JPEG" else {}))
    return base64.b64encode(buf.getvalue()).decode()


def paper_length_tsv(path: Path) -> Path:
    """The shipped sample's rows at the paper's prompt sizes (see the module docstring)."""
    csv.field_size_limit(sys.maxsize)
    with open(samples_dir() / "creation_mmbench" / "sample.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, body = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    out = []
    for row in body:
        row = list(row)
        rng = random.Random(row[col["index"]])
        question_now = len(row[col["question"]]) // 4
        row[col["background"]] += " " + _filler(rng, max(0, QUERY_TOKENS - question_now))
        row[col["question"]] = compose_question(role=row[col["role"]], background=row[col["background"]],
                                                instruction=row[col["instruction"]],
                                                requirement=row[col["requirement"]])
        answer = row[col["reference_answer_by_gpt4o"]]
        row[col["reference_answer_by_gpt4o"]] = answer + "\n\n" + _filler(rng, ANSWER_TOKENS - len(answer) // 4)
        image = row[col["image"]]
        if len(image) > 64:  # not a pointer to another row's images
            if image.startswith("["):
                row[col["image"]] = repr([_bigger(b) for b in ast.literal_eval(image)])
            else:
                row[col["image"]] = _bigger(image)
        out.append(row)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(header)
        w.writerows(out)
    return path


# --------------------------------------------------------------------------- one run


def _spec(data: Path | None, judge: str, batch: bool, cache: bool, sim) -> RunSpec:
    spec = load_spec("quickstart")
    d = spec.model_dump(exclude_none=True)
    if data is not None:
        d["data"] = str(data)
    for alias in spec.roles.candidates:  # free, fast, and out of the prompt-cache figures
        d["models"][alias]["sim"].update(latency_ms=0, latency_jitter_ms=0, prefix_cache=False)
    provider, priced_as, _ = JUDGES[judge]
    old = d["models"]["judge"]
    new = {"provider": provider, "model": "sim-judge", "serves": priced_as, "api_key_env": KEY_ENV,
           "base_url": sim.base_url if provider == "openai" else sim.root_url, "params": old["params"],
           "limits": old["limits"], "batch": batch, **BATCH}
    if provider == "anthropic":
        new["prompt_cache"] = cache
    d["models"]["judge"] = new
    d["roles"]["judges"] = ["judge"]  # the quickstart's first judge alone
    return RunSpec.model_validate(d)


async def one_run(tmp: Path, data: Path | None, judge: str, mode: str) -> dict:
    from judgekit.benchmarks.creation_mmbench import pipeline

    batch, cache, together = MODES[mode]
    _, _, minimum = JUDGES[judge]
    quickstart_judge = load_spec("quickstart").models["judge"].sim  # its seed, qualities, latency 30 +- 20 ms
    config = SimConfig(**{**quickstart_judge, "rpm": None}, batch_turnaround_s=0.3, prefix_cache=cache,
                       prefix_cache_min_tokens={"sim-judge": minimum} if minimum else {})
    scheduling = pipeline._first_judgment_alone
    if together:  # every judgment of an item at once (the scheduling before)
        pipeline._first_judgment_alone = lambda prep, judge=None: False
    sim = SimProcess(config)
    await asyncio.to_thread(sim.start)
    try:
        name = f"{judge}-{mode.replace(' + ', '-').replace('*', '-together')}-{'paper' if data else 'sample'}"
        t = time.perf_counter()
        out = await run_spec(_spec(data, judge, batch, cache, sim),
                             RunOptions(out_dir=tmp / name, cache_path=tmp / f"{name}.duckdb", yes=True))
        wall = time.perf_counter() - t
    finally:
        pipeline._first_judgment_alone = scheduling
        await asyncio.to_thread(sim.stop)
    if out.exit_code != 0:
        raise SystemExit(f"{name}: {out.message}")
    summary = json.loads((tmp / name / "summary.json").read_text())
    stages = {n: s for n, s in out.stats.stages.items() if n in ("pairwise", "vfs")}
    assert out.stats.stages["candidate"].cost_usd == 0  # the candidates are free: the cost is the judge's
    return {
        "judge": judge, "mode": mode, "wall_s": wall,
        "calls": sum(s.calls for s in stages.values()),
        "input": sum(s.input_tokens for s in stages.values()),
        "output": sum(s.output_tokens for s in stages.values()),
        "cached": summary["prompt_cache"]["cached_input_tokens"],
        "written": summary["prompt_cache"]["cache_write_tokens"],
        "batched": summary["batch"]["calls"],
        "cost": summary["cost_usd"],
        "results": summary["results"],
    }


# --------------------------------------------------------------------------- the table


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    head = f"{'judge':8} {'mode':14} {'calls':>5} {'input tok':>10} {'cached':>8} {'written':>8} {'output':>8} " \
           f"{'USD':>9} {'vs live':>8}"
    print(head)
    print("-" * len(head))
    live = {r["judge"]: r["cost"] for r in rows if r["mode"] == "live"}
    for r in rows:
        rel = f"{r['cost'] / live[r['judge']]:.0%}" if live.get(r["judge"]) else "-"
        print(f"{r['judge']:8} {r['mode']:14} {r['calls']:>5} {r['input']:>10,} {r['cached']:>8,} {r['written']:>8,} "
              f"{r['output']:>8,} {r['cost']:>9.4f} {rel:>8}")
    for judge in dict.fromkeys(r["judge"] for r in rows):
        cached = [r for r in rows if r["judge"] == judge and MODES[r["mode"]][1]]
        same = [r["cost"] for r in rows if r["judge"] == judge and r["mode"] in ("batch", "batch + cache")]
        if len(same) == 2 and same[0] == same[1] and cached and any(r["cached"] for r in cached):
            print(f"  {judge}: at genai-prices' batch rates for {JUDGES[judge][1]} cached input costs as much as "
                  "other input")
        if cached and not any(r["cached"] for r in cached):
            minimum = JUDGES[judge][2] or 1024
            print(f"  {judge}: no prefix reached the cache's minimum ({minimum:,} tokens): nothing read from it")


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=["sample", "paper", "both"], default="both")
    ap.add_argument("--judges", default=",".join(JUDGES), help="comma-separated: " + ", ".join(JUDGES))
    ap.add_argument("--gemini-min-tokens", type=int, default=4096,
                    help="the smallest prefix Gemini 2.5 Pro caches (its documentation has said 4,096 and 2,048)")
    args = ap.parse_args(argv)
    provider, priced_as, _ = JUDGES["gemini"]
    JUDGES["gemini"] = (provider, priced_as, args.gemini_min_tokens)
    judges = [j.strip() for j in args.judges.split(",") if j.strip()]
    os.environ.setdefault(KEY_ENV, "sk-judgekit-perf-0123456789")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        sets: list[tuple[str, Path | None]] = []
        if args.data in ("sample", "both"):
            sets.append(("the shipped sample (small drawings, ~100-token queries, ~175-token baseline answers)", None))
        if args.data in ("paper", "both"):
            title = (f"paper-length variant (queries ~{QUERY_TOKENS} tokens, baseline answers ~{ANSWER_TOKENS}, "
                     f"images {IMAGE_SIZE[0]}x{IMAGE_SIZE[1]})")
            sets.append((title, paper_length_tsv(tmp / "paper.tsv")))
        for title, data in sets:
            rows = []
            for judge in judges:
                for mode in MODES:
                    rows.append(await one_run(tmp, data, judge, mode))
            print_table(f"Judge stage of the quickstart, {title}, at list prices", rows)
            same = all(r["results"] == next(x for x in rows if x["judge"] == r["judge"])["results"] for r in rows)
            print(f"  each judge's runs give the same results: {same}")
    print("\n  * an item's judgments sent all at once (not its first alone, then the others)")
    print(f"{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    asyncio.run(main())
