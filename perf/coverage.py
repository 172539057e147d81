"""Coverage of judgekit's nominal 95 % intervals, by simulation with judges of known bias and noise.

Each replication draws n fresh items from the generating model of ``perf/_synthetic.py`` (three
candidates, cand-b and cand-c truly equal; two judges pulled toward the first slot, one more than
the other, with noise, a length bias and 3-5 % failed judgments), makes Creation-MMBench-shaped
judgment records in both orders, and computes every registered figure with judgekit's own
functions (the pairwise benchmarks' ``judge_rows`` and ``comparison_rows``), interval included.
A figure's interval covers when ``low <= truth <= high``; the truth is the figure's expected value
over the item population: a closed form of the generating model where there is one
(:data:`TRUTHS`), otherwise the figure's estimate on one very large sample (``--truth-items``).
n stands for a results row's item count: a category row of n items is computed by the same
function on its n items, so the rates at small n are those of small per-category rows.

Also: with cand-b and cand-c truly equal, how often at least one comparison of a family
(:data:`FAMILIES`) says "excludes 0" (a false alarm): one figure alone should give 5 %.

A new figure plugs in with one line: a function ``(records, options) -> (estimate, low, high)``
in :data:`REGISTRY` (None for an undefined figure or interval), and its closed-form truth in
:data:`TRUTHS` if it has one::

    REGISTRY["lc win rate cand-a (judge-1)"] = lambda recs, o: my_lc_win_rate(recs, o, "judge-1", "cand-a")

Figures judgekit prints without an interval today (Krippendorff's alpha; swap consistency,
first-slot preference, tie rate) have no coverage to measure; they are listed in the output.

    .venv/bin/python perf/coverage.py [--quick] [--reps 400] [--sizes 3,6,12,25,50,100,200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _synthetic import Model, records, truth  # noqa: E402

from judgekit.judging.bootstrap import comparison_rows  # noqa: E402
from judgekit.judging.pairwise import ENSEMBLE_JUDGE  # noqa: E402
from judgekit.judging.results import judge_rows  # noqa: E402
from judgekit.judging.uncertainty import IntervalOptions  # noqa: E402

MODEL = Model()
CANDIDATES = tuple(MODEL.quality)
JUDGES = tuple(j.name for j in MODEL.judges)
SIZES = (3, 6, 12, 25, 50, 100, 200)
BAND = (93.0, 97.0)

Triple = tuple[float | None, float | None, float | None]
Figure = Callable[[Sequence[dict], IntervalOptions], Triple]


class Records(list):
    """A replication's judgment records, with a memo the figures share (the rows of every judge
    are computed once per replication, not once per figure)."""

    def __init__(self, items=()) -> None:
        super().__init__(items)
        self.memo: dict[Any, Any] = {}


def _memo(recs: Sequence[dict], key: Any, make: Callable[[], Any]) -> Any:
    memo = getattr(recs, "memo", None)
    if memo is None:
        return make()
    if key not in memo:
        memo[key] = make()
    return memo[key]


def _judges(recs: Sequence[dict]) -> list[str]:
    return list(dict.fromkeys(r["judge"] for r in recs))


def _built(recs: Sequence[dict], options: IntervalOptions):
    return _memo(recs, ("rows", options.bootstrap_samples, options.bootstrap_seed),
                 lambda: judge_rows(recs, _judges(recs), options, levels=("overall",)))


def row_figure(judge: str, candidate: str, name: str) -> Figure:
    """A figure of a judge's (or the ensemble's) overall row, with its interval."""
    def compute(recs: Sequence[dict], options: IntervalOptions) -> Triple:
        _, _, rows, _ = _built(recs, options)
        row = next(r for r in rows[judge] if r["model"] == candidate and r["level"] == "overall")
        return row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    return compute


def _comparisons(recs: Sequence[dict], options: IntervalOptions, judge: str) -> list[dict]:
    def make() -> list[dict]:
        everyone, _, _, sums = _built(recs, options)
        return comparison_rows(everyone[judge], judge, CANDIDATES, options, sums.get(judge))
    return _memo(recs, ("comparisons", judge, options.bootstrap_samples, options.bootstrap_seed), make)


def difference(judge: str, a: str, b: str, name: str) -> Figure:
    """The paired difference a - b of a figure, as the run's comparisons table gives it."""
    def compute(recs: Sequence[dict], options: IntervalOptions) -> Triple:
        row = next(c for c in _comparisons(recs, options, judge) if c["metric"] == name and c["a"] == a
                   and c["b"] == b)
        return row["difference"], row["ci_low"], row["ci_high"]
    return compute


def family(judges: Sequence[str], a: str, b: str, names: Sequence[str]) -> Callable[[Sequence[dict], IntervalOptions],
                                                                                       list[bool]]:
    """"excludes 0" of every comparison a - b of ``names`` by each of ``judges``."""
    def compute(recs: Sequence[dict], options: IntervalOptions) -> list[bool]:
        return [bool(c["excludes_zero"]) for j in judges for c in _comparisons(recs, options, j)
                if c["a"] == a and c["b"] == b and c["metric"] in names]
    return compute


#: figure name -> (records, options) -> (estimate, low, high)
REGISTRY: dict[str, Figure] = {
    "reward cand-a (judge-1)": row_figure("judge-1", "cand-a", "reward"),
    "win rate cand-a (judge-1)": row_figure("judge-1", "cand-a", "win_rate"),
    "vfs cand-a (judge-1)": row_figure("judge-1", "cand-a", "vfs"),
    "reward cand-b (judge-1)": row_figure("judge-1", "cand-b", "reward"),
    "reward cand-a (judge-2)": row_figure("judge-2", "cand-a", "reward"),
    "reward cand-a (ensemble)": row_figure(ENSEMBLE_JUDGE, "cand-a", "reward"),
    "win rate cand-a (ensemble)": row_figure(ENSEMBLE_JUDGE, "cand-a", "win_rate"),
    "reward a-b (judge-1)": difference("judge-1", "cand-a", "cand-b", "reward"),
    "win rate a-b (judge-1)": difference("judge-1", "cand-a", "cand-b", "win_rate"),
    "vfs a-b (judge-1)": difference("judge-1", "cand-a", "cand-b", "vfs"),
    "reward b-c (judge-1)": difference("judge-1", "cand-b", "cand-c", "reward"),
    "reward a-b (ensemble)": difference(ENSEMBLE_JUDGE, "cand-a", "cand-b", "reward"),
}

#: figure name -> its exact value under :data:`MODEL` (the others: a very large sample)
TRUTHS: dict[str, Callable[[Model], float]] = {
    "reward cand-a (judge-1)": lambda m: truth(m, "judge-1", "cand-a")["reward"],
    "win rate cand-a (judge-1)": lambda m: truth(m, "judge-1", "cand-a")["win_rate"],
    "vfs cand-a (judge-1)": lambda m: truth(m, "judge-1", "cand-a")["vfs"],
    "reward cand-b (judge-1)": lambda m: truth(m, "judge-1", "cand-b")["reward"],
    "reward cand-a (judge-2)": lambda m: truth(m, "judge-2", "cand-a")["reward"],
    "reward a-b (judge-1)": lambda m: truth(m, "judge-1", "cand-a")["reward"] - truth(m, "judge-1", "cand-b")["reward"],
    "win rate a-b (judge-1)": lambda m: (truth(m, "judge-1", "cand-a")["win_rate"]
                                         - truth(m, "judge-1", "cand-b")["win_rate"]),
    "vfs a-b (judge-1)": lambda m: truth(m, "judge-1", "cand-a")["vfs"] - truth(m, "judge-1", "cand-b")["vfs"],
    "reward b-c (judge-1)": lambda m: 0.0,
}

#: family name -> (records, options) -> "excludes 0" of each comparison; cand-b and cand-c are equal
FAMILIES: dict[str, Callable[[Sequence[dict], IntervalOptions], list[bool]]] = {
    "b-c reward (judge-1), one figure": family(("judge-1",), "cand-b", "cand-c", ("reward",)),
    "b-c reward, win rate, vfs (judge-1)": family(("judge-1",), "cand-b", "cand-c", ("reward", "win_rate", "vfs")),
    "b-c 3 figures x (judge-1, ensemble)": family(("judge-1", ENSEMBLE_JUDGE), "cand-b", "cand-c",
                                                  ("reward", "win_rate", "vfs")),
}

#: what judgekit prints without an interval today (no coverage to measure)
WITHOUT_INTERVAL = ("Krippendorff's alpha (agreement)", "swap consistency", "first-slot preference", "tie rate",
                    "length rho")


def truths(model: Model, names: Sequence[str], items: int, seed: int) -> dict[str, float]:
    """Every figure's truth: its closed form, or its estimate on ``items`` fresh items."""
    out = {name: TRUTHS[name](model) for name in names if name in TRUTHS}
    rest = [name for name in names if name not in out]
    if rest:
        big = Records(records(model, items, np.random.default_rng([seed, 10 ** 9])))
        opts = IntervalOptions(bootstrap_samples=1)
        for name in rest:
            value = REGISTRY[name](big, opts)[0]
            if value is None:
                raise ValueError(f"{name}: no estimate on {items} items, so no truth")
            out[name] = value
    return out


def simulate(*, reps: int, sizes: Sequence[int], samples: int = 1000, seed: int = 0, truth_items: int = 20000,
             names: Sequence[str] | None = None, model: Model = MODEL) -> dict[str, Any]:
    """Coverage (covered, with an interval, replications) per figure and n, the false-alarm count
    per family and n, and the truths."""
    names = list(REGISTRY) if names is None else list(names)
    true = truths(model, names, truth_items, seed)
    cover = {name: {n: [0, 0] for n in sizes} for name in names}  # [covered, with an interval]
    alarms = {name: {n: [0, 0, 0] for n in sizes} for name in FAMILIES}  # [any excludes 0, comparisons, excl.]
    for n in sizes:
        for rep in range(reps):
            recs = Records(records(model, n, np.random.default_rng([seed, n, rep])))
            opts = IntervalOptions(bootstrap_samples=samples, bootstrap_seed=rep)
            for name in names:
                est, lo, hi = REGISTRY[name](recs, opts)
                if est is None or lo is None or hi is None:
                    continue
                cover[name][n][1] += 1
                cover[name][n][0] += lo <= true[name] <= hi
            for name, fam in FAMILIES.items():
                flags = fam(recs, opts)
                alarms[name][n][0] += any(flags)
                alarms[name][n][1] += len(flags)
                alarms[name][n][2] += sum(flags)
    return {"truths": true, "coverage": cover, "alarms": alarms, "reps": reps, "sizes": list(sizes)}


def outside(result: dict[str, Any], band: tuple[float, float] = BAND) -> dict[str, list[int]]:
    """figure -> the n at which its coverage (of the replications with an interval) is outside ``band``."""
    out: dict[str, list[int]] = {}
    for name, per_n in result["coverage"].items():
        for n, (hit, total) in per_n.items():
            if total == 0 or not band[0] <= 100.0 * hit / total <= band[1]:
                out.setdefault(name, []).append(n)
    return out


def _pct(hit: int, total: int) -> str:
    return "-" if total == 0 else f"{100.0 * hit / total:.1f}"


def report(result: dict[str, Any]) -> str:
    sizes, reps = result["sizes"], result["reps"]
    width = max(len(k) for k in result["coverage"]) + 2
    lines = [f"Coverage of the nominal 95 % intervals, % of {reps} replications (n = items in the row; "
             f"'*' outside {BAND[0]:.0f}-{BAND[1]:.0f} %)",
             "figure".ljust(width) + "truth".rjust(9) + "".join(f"{'n=' + str(n):>8}" for n in sizes)]
    for name, per_n in result["coverage"].items():
        cells = ""
        for n in sizes:
            hit, total = per_n[n]
            mark = "" if total and BAND[0] <= 100.0 * hit / total <= BAND[1] else "*"
            cells += f"{_pct(hit, total) + mark:>8}"
        lines.append(name.ljust(width) + f"{result['truths'][name]:9.3f}" + cells)
    missing = {name: {n: reps - t for n, (_, t) in per_n.items() if t < reps}
               for name, per_n in result["coverage"].items()}
    missing = {k: v for k, v in missing.items() if v}
    if missing:
        lines.append("replications with no interval (left out above): "
                     + "; ".join(f"{k}: " + ", ".join(f"n={n}: {c}" for n, c in v.items()) for k, v in missing.items()))
    se = 100.0 * (0.95 * 0.05 / reps) ** 0.5
    lines.append(f"(Monte Carlo standard error of a 95 % coverage over {reps} replications: {se:.1f} points)")
    lines.append("")
    lines.append("Equal candidates (cand-b = cand-c): % of replications where at least one comparison "
                 "'excludes 0'")
    fw = max(len(k) for k in result["alarms"]) + 2
    lines.append("family".ljust(fw) + "size".rjust(6) + "".join(f"{'n=' + str(n):>8}" for n in sizes))
    for name, per_n in result["alarms"].items():
        size = per_n[sizes[0]][1] // reps if reps else 0
        lines.append(name.ljust(fw) + f"{size:6d}" + "".join(f"{_pct(per_n[n][0], reps):>8}" for n in sizes))
    lines.append("")
    off = outside(result)
    if off:
        lines.append(f"outside {BAND[0]:.0f}-{BAND[1]:.0f} %:")
        lines += [f"  {name}: n = {', '.join(map(str, ns))}" for name, ns in off.items()]
    else:
        lines.append(f"every figure within {BAND[0]:.0f}-{BAND[1]:.0f} % at every n")
    wide = (BAND[0] - 2 * se, BAND[1] + 2 * se)
    far = outside(result, wide)
    lines.append(f"outside {wide[0]:.1f}-{wide[1]:.1f} % (the band widened by two standard errors, beyond "
                 "Monte Carlo noise): " + ("; ".join(f"{k}: n = {', '.join(map(str, v))}" for k, v in far.items())
                                           if far else "none"))
    lines.append("no interval today, so no coverage: " + ", ".join(WITHOUT_INTERVAL))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 replications at n = 3, 12, 50, 200 (about 30 s)")
    ap.add_argument("--reps", type=int, default=None, help="replications per n (default 400; --quick 100)")
    ap.add_argument("--sizes", default=None, help="comma-separated item counts (default 3,6,12,25,50,100,200)")
    ap.add_argument("--samples", type=int, default=1000, help="bootstrap resamples per interval")
    ap.add_argument("--truth-items", type=int, default=None,
                    help="items of the large sample for figures without a closed form (default 20000; --quick 5000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--figures", default=None, help="comma-separated figure names (default: all registered)")
    args = ap.parse_args(argv)
    reps = args.reps or (100 if args.quick else 400)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else ((3, 12, 50, 200) if args.quick else SIZES)
    truth_items = args.truth_items or (5000 if args.quick else 20000)
    names = [s.strip() for s in args.figures.split(",")] if args.figures else None
    start = time.perf_counter()
    result = simulate(reps=reps, sizes=sizes, samples=args.samples, seed=args.seed, truth_items=truth_items,
                      names=names)
    print(report(result))
    print(f"({time.perf_counter() - start:.1f} s; {args.samples} resamples per interval, seed {args.seed})")


if __name__ == "__main__":
    main()
