"""The statistics pass at full size, one core: seconds per stage, and the bootstrap's parts.

1. The full pass (default): what a pairwise benchmark's results computation does
   (``judgekit.benchmarks.creation_mmbench.results.build``: every judge's rows, the ensemble, the
   intervals, the paired comparisons, the judges' agreement and behaviour) on synthetic judgment
   records of ``--items`` items x ``--candidates`` candidates x ``--judges`` judges in both orders
   (pairwise and VFS; ``perf/_synthetic.py``), 4 categories, 1,000 resamples; each stage timed
   alone (the same calls ``build`` makes, in its order), then ``build`` itself; CPU seconds, each
   stage's least over ``--rounds`` passes (and the wall seconds of ``build``: on a shared
   machine the CPU seconds are the figure to read).  With a
   ``judge_repeats`` option in this checkout, the same with ``--repeats`` repeats of each
   judgment; without one, that line says it is skipped.  NumPy's threads are set to 1 and the
   process pinned to one core.  ``--before PATH``: the same in a child process on another
   checkout's package (``PYTHONPATH=PATH``), printed beside this one's; the target is 3 s in all.
2. ``--parts``: the bootstrap's parts at Creation-MMBench's size: a synthetic result (765 items in
   51 tasks of 15 and 4 categories, 3 candidates x 3 judges x 4 figures, both orders pooled):
   a. one :func:`judgekit.judging.intervals.ratio_interval` per figure and row (overall, each
      category, each task: what a benchmark calling ``uncertainty.interval`` per figure pays);
   b. the paired comparisons (3 pairs x 3 figures x 3 judges, overall), ``uncertainty.comparisons``;
   c. ``judgekit.judging.bootstrap.add_intervals`` (one draw per row group, shared by the judges
      and figures);
   d. a GuessBench-sized accuracy: 10,000 right/wrong items, one interval.

    .venv/bin/python perf/intervals.py [--items 765 --candidates 20 --judges 3 --repeats 3]
                                       [--before /tmp/old-checkout] [--parts [--repeat 3]]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"  # one core: before NumPy loads its BLAS
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from judgekit.judging.intervals import ratio_interval  # noqa: E402
from judgekit.judging.uncertainty import IntervalOptions, comparisons, interval  # noqa: E402

ITEMS, TASKS, CATEGORIES = 765, 51, 4
CANDIDATES = ("cand-a", "cand-b", "cand-c")
JUDGES = ("judge-1", "judge-2", "judge-3")
# figure -> (scale, how an item's two orders give (numerator, denominator))
FIGURES = ("reward", "win_rate", "vfs", "vfs_ref")


def synthetic_creation(seed: int = 0) -> dict:
    """judge -> candidate -> figure -> (num, den) arrays over the 765 items, plus the items' task
    and category; verdicts -2..+2 with 2 % parse failures, VFS 0..10 with 3 % failures."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(TASKS), ITEMS // TASKS)
    category = task % CATEGORIES
    data: dict = {}
    for j in JUDGES:
        for c, quality in zip(CANDIDATES, (0.3, 0.0, -0.3)):
            verdicts = np.clip(np.rint(rng.normal(quality, 1.0, size=(ITEMS, 2))), -2, 2)
            ok = rng.random((ITEMS, 2)) > 0.02
            vfs = np.clip(np.rint(rng.normal(6 + 2 * quality, 2.0, size=(ITEMS, 2))), 0, 10)
            vfs_ref = np.clip(np.rint(rng.normal(6, 2.0, size=(ITEMS, 2))), 0, 10)
            vok = rng.random((ITEMS, 2)) > 0.03
            valid = ok.sum(axis=1).astype(float)
            vvalid = vok.sum(axis=1).astype(float)
            data.setdefault(j, {})[c] = {
                "reward": ((verdicts * ok).sum(axis=1), valid),
                "win_rate": (((verdicts > 0) & ok).sum(axis=1).astype(float), valid),
                "vfs": ((vfs * vok).sum(axis=1), vvalid),
                "vfs_ref": ((vfs_ref * vok).sum(axis=1), vvalid),
            }
    return {"figures": data, "task": task, "category": category}


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """The best wall and CPU seconds of ``repeat`` runs, and the last result."""
    best_wall = best_cpu = float("inf")
    out = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu, out


def generic(synth: dict, samples: int) -> int:
    """Every row's every figure through ratio_interval; the number of intervals."""
    rows = [("overall", "overall", np.ones(ITEMS, dtype=bool))]
    rows += [("category", str(k), synth["category"] == k) for k in range(CATEGORIES)]
    rows += [("task", str(t), synth["task"] == t) for t in range(TASKS)]
    count = 0
    for j, per_candidate in synth["figures"].items():
        for c, figs in per_candidate.items():
            for level, group, mask in rows:
                for f in FIGURES:
                    num, den = figs[f]
                    ratio_interval(num[mask], den[mask], samples=samples, key=f"{j}:{c}:{level}:{group}:{f}",
                                   scale=50.0 if f == "reward" else 100.0 if f == "win_rate" else 1.0)
                    count += 1
    return count


def paired(synth: dict, samples: int) -> int:
    options = IntervalOptions(bootstrap_samples=samples)
    count = 0
    for j, per_candidate in synth["figures"].items():
        for f in ("reward", "win_rate", "vfs"):
            per = {c: {i: (float(n), float(d)) for i, (n, d) in enumerate(zip(*figs[f]))}
                   for c, figs in per_candidate.items()}
            count += len(comparisons(per, options, f, key=f"{j}:", candidates=CANDIDATES))
    return count


def creation_records(synth: dict) -> dict[str, list[dict]]:
    """The same result as Creation-MMBench judgment records (pairwise and VFS, both orders)."""
    rng = np.random.default_rng(1)
    out: dict[str, list[dict]] = {}
    for j in JUDGES:
        recs = out.setdefault(j, [])
        for c in CANDIDATES:
            for i in range(ITEMS):
                task, cat = f"task{synth['task'][i]}", f"cat{synth['category'][i]}"
                for order in (0, 1):
                    score = None if rng.random() < 0.02 else int(rng.integers(-2, 3))
                    vfs = None if rng.random() < 0.03 else int(rng.integers(0, 11))
                    base = {"model": c, "index": str(i), "task": task, "category": cat, "order": order}
                    recs.append({**base, "kind": "pairwise", "score": score})
                    recs.append({**base, "kind": "vfs", "vfs": vfs, "vfs_ref": None if vfs is None else 6})
    return out


def agreement_at_scale(samples: int) -> int:
    """Krippendorff's alpha of 3 judges with item-bootstrap intervals, per candidate, pooled within
    and across candidates, on 765 items x 20 candidates x 2 orders (the honesty pass's agreement)."""
    from judgekit.judging.alpha import grouped_alpha

    rng = np.random.default_rng(4)
    judges = ["j1", "j2", "j3"]
    verdicts, vfs = {}, {}
    for c in range(20):
        for i in range(765):
            for o in (0, 1):
                b = int(rng.integers(-2, 3))
                verdicts[(c, i, o)] = {j: int(np.clip(b + rng.integers(-1, 2), -2, 2)) for j in judges}
                v = float(rng.integers(0, 21)) / 2
                vfs[(c, i, o)] = {j: min(10.0, v + float(rng.integers(0, 2)) / 2) for j in judges}
    for ratings, level in ((verdicts, "ordinal"), (vfs, "interval")):
        grouped_alpha(ratings, judges, level, group=lambda u: u[0], cluster=lambda u: u[1], samples=samples,
                      interval_level=0.95, seed=0, key=level, groups=list(range(20)))
    return 2


def parts(args: argparse.Namespace) -> None:
    """The bootstrap's parts at Creation-MMBench's size (``--parts``)."""
    synth = synthetic_creation()
    print(f"Creation-MMBench, synthetic: {ITEMS} items, {TASKS} tasks, {CATEGORIES} categories, "
          f"{len(CANDIDATES)} candidates x {len(JUDGES)} judges x {len(FIGURES)} figures, {args.samples} resamples")
    wall, cpu, n = _timed(lambda: generic(synth, args.samples), args.repeat)
    print(f"  a. one ratio_interval per figure and row: {n} intervals in {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"({1000 * wall / n:.2f} ms each)")
    wall, cpu, n = _timed(lambda: paired(synth, args.samples), args.repeat)
    print(f"  b. paired comparisons, overall: {n} differences in {wall:.2f} s wall, {cpu:.2f} s CPU")
    try:
        from judgekit.judging.bootstrap import add_intervals
        from judgekit.judging.pairwise import summarize
    except ImportError as e:
        print(f"  c. judging.bootstrap.add_intervals: not available here ({e})")
    else:
        records = creation_records(synth)
        options = IntervalOptions(bootstrap_samples=args.samples)

        def creation() -> int:
            rows = {j: summarize(records[j]) for j in JUDGES}
            add_intervals(rows, records, options)
            return sum(len(r) for r in rows.values())

        rows_wall, rows_cpu, _ = _timed(lambda: {j: summarize(records[j]) for j in JUDGES}, args.repeat)
        wall, cpu, n = _timed(creation, args.repeat)
        print(f"  c. judging.bootstrap.add_intervals: {n} rows x {len(FIGURES)} figures in "
              f"{wall - rows_wall:.2f} s wall, {cpu - rows_cpu:.2f} s CPU (building the rows: {rows_wall:.2f} s "
              f"wall, {rows_cpu:.2f} s CPU, not counted)")

    try:
        from judgekit.judging.alpha import grouped_alpha  # noqa: F401  (there or not)
    except ImportError as e:
        print(f"  d. judging.alpha.grouped_alpha: not available here ({e})")
    else:
        wall, cpu, n = _timed(lambda: agreement_at_scale(args.samples), args.repeat)
        print(f"  d. alpha with intervals, within and across candidates (judging.alpha), 765 items x 20 candidates "
              f"x 2 orders x 3 judges, verdict (ordinal) and VFS (interval): {wall:.2f} s wall, {cpu:.2f} s CPU")

    n = 10_000
    rng = np.random.default_rng(2)
    right = (rng.random(n) < 0.62).astype(float)
    opts = IntervalOptions(bootstrap_samples=args.samples)
    wall, cpu, iv = _timed(lambda: interval({i: (right[i], 1.0) for i in range(n)}, opts, key="guess:acc",
                                            scale=100.0), args.repeat)
    print(f"GuessBench-sized accuracy: {n:,} items, {args.samples} resamples: {iv.estimate:.2f} "
          f"[{iv.low:.2f}, {iv.high:.2f}] in {wall:.2f} s wall, {cpu:.2f} s CPU")


# ---------------------------------------------------------------------------- the full pass


def _model(candidates: int, judges: int):
    from _synthetic import Judge, Model

    quality = {f"cand-{i:02d}": 0.05 * (i - candidates // 2) for i in range(candidates)}
    panel = tuple(Judge(f"judge-{k + 1}", bias=0.2 + 0.3 * (k % 3), noise=0.8 + 0.2 * (k % 3)) for k in range(judges))
    return Model(quality=quality, judges=panel, categories=4)


def _extras(recs: list[dict], seed: int = 3):
    """Synthetic answer styles ((candidate, index) -> both answers' length and markdown counts, the
    candidate's length the reference's plus the record's ``length_diff``) and human labels (one
    label -2..+2 per (candidate, index)) for the records' (candidate, item)s: what the controlled
    figures and the agreement with human labels read."""
    from judgekit.judging.human_agreement import HumanLabels

    rng = np.random.default_rng(seed)
    units = sorted({(r["model"], r["index"]): r.get("length_diff", 0) for r in recs}.items())
    ref = rng.integers(400, 1600, size=len(units))
    marks = rng.integers(0, 6, size=(len(units), 6))
    labels = np.clip(np.rint(rng.normal(0.0, 1.2, size=len(units))), -2, 2)
    styles = {u: {"candidate": [int(ref[k] + d), *map(int, marks[k, :3])], "reference": [int(ref[k]), *map(int, marks[k, 3:])]}
              for k, (u, d) in enumerate(units)}
    human = HumanLabels("synthetic", {(m, i, None): [float(labels[k])] for k, ((m, i), _) in enumerate(units)})
    return styles, human


def _stages(recs: list[dict], judges: list[str], candidates: list[str], options, repeats: int = 1) -> dict[str, float]:
    """Seconds (CPU of this process) of each stage of the pass, as ``creation_mmbench.results.build``
    makes its calls (controlled figures, honesty annotations and agreement with synthetic human
    labels included), and of ``build`` itself (``total``)."""
    from judgekit.benchmarks.creation_mmbench.results import build
    from judgekit.judging.agreement import mean_score
    from judgekit.judging.bootstrap import add_intervals, comparison_rows
    from judgekit.judging.control import controlled_summary
    from judgekit.judging.ensemble import DEFAULT_ENSEMBLE, pairwise_rule
    from judgekit.judging.honest import annotate
    from judgekit.judging.human_agreement import add_human_agreement
    from judgekit.judging.pairwise import (ENSEMBLE_JUDGE, FIGURE_SUMS, SUM_COLUMNS, ensemble_records, item_sums,
                                           record_sums, summarize)
    from judgekit.judging.panel import agreement_records, behaviour_rows
    from judgekit.judging.repeats import add_spread
    from judgekit.judging.results import records_by_judge, summary_and_tables

    styles, labels = _extras(recs)
    out: dict[str, float] = {}

    def stage(name: str, fn: Callable[[], object]):
        c = time.process_time()
        value = fn()
        out[name] = time.process_time() - c
        return value

    # in judge_rows' order: the ensemble first (it reads the list's columns), then each judge's share of them
    ensembled = stage("ensemble records", lambda: ensemble_records(
        recs, pairwise_rule=pairwise_rule(DEFAULT_ENSEMBLE), score_rule=mean_score)) if len(judges) > 1 else None
    by_judge = stage("records by judge", lambda: records_by_judge(recs, judges))
    everyone = dict(by_judge)
    if ensembled is not None:
        everyone[ENSEMBLE_JUDGE] = ensembled
    rows = stage("rows (summarize)", lambda: {j: summarize(r) for j, r in everyone.items()})
    sums = stage("item sums", lambda: {j: item_sums(r) for j, r in everyone.items()})
    stage("intervals (add_intervals)", lambda: add_intervals(rows, everyone, options, sums))
    figures = {f: (SUM_COLUMNS.index(n), SUM_COLUMNS.index(d)) for f, (n, d) in FIGURE_SUMS.items()}
    stage("repeat spread", lambda: add_spread(rows, everyone, record_sums, figures, repeats))
    compared = judges[:1] + ([ENSEMBLE_JUDGE] if len(judges) > 1 else [])
    comps = stage("comparisons", lambda: [c for j in compared
                                          for c in comparison_rows(everyone[j], j, candidates, options, sums.get(j))])
    behaviour = stage("behaviour", lambda: behaviour_rows(everyone, candidates))
    summary, tables = summary_and_tables(judges, rows, comps, behaviour, {})
    spread = {"repeats": repeats} if "repeats" in inspect.signature(controlled_summary).parameters else {}
    stage("controlled (LC, SC, BT)", lambda: controlled_summary(everyone, compared, candidates, options, styles,
                                                                **spread))
    if len(judges) > 1:
        summary["agreement"] = stage("agreement", lambda: agreement_records(by_judge, candidates))
    stage("honesty (annotate)", lambda: annotate(summary, rows, everyone, by_judge, candidates, options))
    stage("human agreement", lambda: add_human_agreement(summary, tables, [], everyone, labels, candidates, options))
    fresh = list(recs)  # a new list: nothing the stages above read from ``recs`` is cached for it
    c, w = time.process_time(), time.perf_counter()
    build(fresh, judges=judges, candidates=candidates, options=options, repeats=repeats, styles=styles, labels=labels)
    out["total: build()"] = time.process_time() - c
    out["total: build(), wall"] = time.perf_counter() - w
    return out


def _best(run: Callable[[], dict[str, float]], rounds: int) -> dict[str, float]:
    """Each stage's least seconds over ``rounds`` runs (a busy machine only ever adds time)."""
    best: dict[str, float] = {}
    for _ in range(max(1, rounds)):
        for name, sec in run().items():
            best[name] = min(sec, best.get(name, sec))
    return best


def full_pass(args: argparse.Namespace) -> dict:
    """Every stage's seconds, without and (where the option exists) with judge repeats."""
    from _synthetic import records

    from judgekit.benchmarks.creation_mmbench.prepare import Options

    model = _model(args.candidates, args.judges)
    judges, candidates = [j.name for j in model.judges], list(model.quality)
    recs = records(model, args.items, np.random.default_rng(0))
    options = Options(bootstrap_samples=args.samples)
    result = {"records": len(recs), "stages": _best(lambda: _stages(recs, judges, candidates, options), args.rounds)}
    if "judge_repeats" not in Options.model_fields:
        result["repeats"] = "skipped: no judge_repeats option in this checkout"
        return result
    # the same items and answers, fresh judge noise and failures in each repeat (``repeat`` 0..k-1)
    repeated = records(model, args.items, np.random.default_rng(0), repeats=args.repeats)
    try:
        options = Options(bootstrap_samples=args.samples, judge_repeats=args.repeats)
        result["repeats_stages"] = _best(lambda: _stages(repeated, judges, candidates, options, args.repeats),
                                         args.rounds)
        result["repeats_records"] = len(repeated)
    except (TypeError, ValueError) as e:  # an option of another shape than this script knows
        result["repeats"] = f"skipped: {type(e).__name__}: {e}"
    return result


def _print(title: str, now: dict, before: dict | None) -> None:
    stages = now.get("stages", {})
    print(title)
    head = f"  {'stage':<28}{'now s':>9}" + (f"{'before s':>10}{'x':>7}" if before else "")
    print(head)
    for name, sec in stages.items():
        line = f"  {name:<28}{sec:9.2f}"
        if before and name in before.get("stages", {}):
            b = before["stages"][name]
            line += f"{b:10.2f}{b / sec if sec > 0 else float('inf'):7.1f}"
        print(line)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=765)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--judges", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3, help="judge repeats, where this checkout has judge_repeats")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3, help="passes; each stage's least time is printed")
    ap.add_argument("--before", default=None, help="another checkout: the same pass with its package")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("--parts", action="store_true", help="the bootstrap's parts instead of the full pass")
    ap.add_argument("--repeat", type=int, default=3, help="--parts: runs of each; the best is printed")
    args = ap.parse_args(argv)
    if args.parts:
        parts(args)
        return
    now = full_pass(args)
    if args.json:
        print(json.dumps(now))
        return
    before = None
    if args.before:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.abspath(args.before),
                                                            os.environ.get("PYTHONPATH", "")])}
        cmd = [sys.executable, os.path.abspath(__file__), "--json", "--items", str(args.items), "--candidates",
               str(args.candidates), "--judges", str(args.judges), "--repeats", str(args.repeats),
               "--samples", str(args.samples), "--rounds", str(args.rounds)]
        before = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    print(f"Statistics pass, one core: {args.items} items x {args.candidates} candidates x {args.judges} judges, "
          f"both orders, pairwise + VFS ({now['records']:,} records), {args.samples} resamples; CPU seconds, "
          f"the least of {args.rounds} rounds")
    _print("without repeats:", now, before)
    if "repeats_stages" in now:
        _print(f"judge_repeats = {args.repeats} ({now['repeats_records']:,} records):",
               {"stages": now["repeats_stages"]}, before and {"stages": before.get("repeats_stages", {})})
    else:
        print(f"judge_repeats = {args.repeats}: {now['repeats']}")
    for label, stages in (("without repeats", now["stages"]), (f"judge_repeats = {args.repeats}", now.get("repeats_stages"))):
        if stages:
            total = stages["total: build()"]
            print(f"whole pass (build(), controlled figures and human agreement included), {label}: {total:.2f} s "
                  f"against the 3 s target: {'met' if total <= 3.0 else 'NOT met'}")
    stages = now.get("repeats_stages") or now["stages"]
    total, wall = stages["total: build()"], stages.get("total: build(), wall", float("nan"))
    print(f"target 3 s (CPU, one core, {args.items} x {args.candidates} x {args.judges}"
          f"{f' x {args.repeats} repeats' if now.get('repeats_stages') else ''}): {total:.2f} s CPU, {wall:.2f} s wall: "
          + ("met" if total <= 3.0 else f"{total - 3.0:.2f} s over"))


if __name__ == "__main__":
    main()
