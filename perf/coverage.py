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

Issue 27's figures are registered too: the LC win rate, SC score and BT rating (the run's
``summary["controlled"]``), Krippendorff's alpha with its bootstrap interval, the Wilson intervals
of the behaviour rates, agreement with synthetic human labels (kappa, Spearman, Kendall, MAE,
consistency), figures of :data:`REPEATS` judge repeats pooled; each replication runs
Creation-MMBench's whole statistics pass (``results.build``) once for them.  :func:`small_n`
reads the small-n flag the run puts on a figure's row (its threshold: ``min_items_for_interval``
or the figure's own, ``judging.uncertainty.FIGURE_MIN_ITEMS``, which these measurements set), so
each cell says whether the row is flagged ('!') and the report lists every row whose coverage is
below 93 % without the flag; :func:`familywise` measures the run's familywise false-alarm rate
with every candidate equal, raw and after Holm's adjustment of the swap-test p-values
(:func:`run_family`: the run's family of comparisons without the rest of the statistics pass).  Figures judgekit prints
without an interval (:data:`WITHOUT_INTERVAL`) have no coverage to measure.

    .venv/bin/python perf/coverage.py [--quick] [--reps 400] [--sizes 3,6,12,25,50,100,200] [--workers 2]
                                      [--holm-reps N] [--figures NAME,NAME]

Runtime: issue 27's figures need the whole statistics pass per replication.  On a shared 2-core
machine under a load of about 10, ``--reps 200 --sizes 25,50,100,200 --holm-reps 0`` over every
figure took 31 min of wall time (one process), and the familywise rate alone (``--holm-reps 400``
at 12/25/50/200 items, the comparisons only) 9.5 min; ``--workers`` runs the sizes in parallel.
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

from judgekit.benchmarks.creation_mmbench.results import build  # noqa: E402
from judgekit.judging.bootstrap import comparison_rows  # noqa: E402
from judgekit.judging.human_agreement import HumanLabels  # noqa: E402
from judgekit.judging.multiplicity import adjust_comparisons  # noqa: E402
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
    are computed once per replication, not once per figure), the synthetic human labels and
    answer styles of its items, and (drawn when a figure first asks) the same items judged with
    :data:`REPEATS` repeats."""

    def __init__(self, items=(), *, human=None, styles=None, repeated=None) -> None:
        super().__init__(items)
        self.memo: dict[Any, Any] = {}
        self.human: dict[tuple[str, str], float] = human or {}
        self.styles: dict[tuple[str, str], dict[str, list[int]]] = styles or {}
        self._repeated = repeated

    def repeated(self) -> list[dict]:
        if callable(self._repeated):
            self._repeated = self._repeated()
        return self._repeated or []


#: judge repeats of the repeats figures
REPEATS = 3


def replication(model: Model, n: int, seed: Sequence[int]) -> Records:
    """n fresh items of ``model``: the judgments, human labels and styles from one stream, the
    repeated judgments (fresh items of their own) from another."""
    human: dict[tuple[str, str], float] = {}
    styles: dict[tuple[str, str], dict[str, list[int]]] = {}
    recs = records(model, n, np.random.default_rng(list(seed)), human=human, styles=styles)
    again = lambda: records(model, n, np.random.default_rng([*seed, REPEATS]), repeats=REPEATS)  # noqa: E731
    return Records(recs, human=human, styles=styles, repeated=again)


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


def _run(recs: Records, options: IntervalOptions):
    """Creation-MMBench's whole statistics pass (``results.build``) on the replication, with its
    human labels and styles: the controlled figures, alpha, the behaviour rates, human agreement."""
    def make():
        labels = HumanLabels("synthetic", {(c, i, None): [v] for (c, i), v in recs.human.items()})
        return build(recs, judges=_judges(recs), candidates=CANDIDATES, options=options, labels=labels,
                     styles=recs.styles).summary
    return _memo(recs, ("build", options.bootstrap_samples, options.bootstrap_seed), make)


def summary_figure(part: str, name: str, interval: tuple[str, str] | None = None, **match: str) -> Figure:
    """A figure of a row of the run's summary: ``part`` "controlled", "human_agreement",
    "judge_behaviour" or "agreement"; the row where every ``match`` key has its value; the
    interval's columns ``interval`` (default ``<name>_ci_low`` / ``_ci_high``)."""
    low, high = interval or (f"{name}_ci_low", f"{name}_ci_high")

    def compute(recs: Sequence[dict], options: IntervalOptions) -> Triple:
        return _triple(_summary_row(recs, options, part, match), name, low, high)
    compute.row = lambda recs, options: _summary_row(recs, options, part, match)  # type: ignore[attr-defined]
    return compute


def _summary_row(recs, options, part, match):
    got = _run(recs, options)[part]
    rows = got["results"] if part == "controlled" else got["rows"] if part == "human_agreement" else got
    return next((r for r in rows if all(r.get(k) == v for k, v in match.items())), None)


def _triple(row, name, low, high) -> Triple:
    if row is None:
        return None, None, None
    return row.get(name), row.get(low), row.get(high)


def repeated_figure(judge: str, candidate: str, name: str) -> Figure:
    """A figure of the overall row of :data:`REPEATS` repeats pooled (every repeat's judgments in
    the figure, the items resampled with all their repeats)."""
    def compute(recs: Sequence[dict], options: IntervalOptions) -> Triple:
        def make():
            again = recs.repeated() if isinstance(recs, Records) else recs
            return judge_rows(again, _judges(again), options, levels=("overall",), repeats=REPEATS)[2]
        rows = _memo(recs, ("repeated", options.bootstrap_samples, options.bootstrap_seed), make)
        row = next(r for r in rows[judge] if r["model"] == candidate and r["level"] == "overall")
        return row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    return compute


def row_figure(judge: str, candidate: str, name: str) -> Figure:
    """A figure of a judge's (or the ensemble's) overall row, with its interval."""
    def compute(recs: Sequence[dict], options: IntervalOptions) -> Triple:
        _, _, rows, _ = _built(recs, options)
        row = next(r for r in rows[judge] if r["model"] == candidate and r["level"] == "overall")
        return row.get(name), row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    compute.where = (judge, candidate)  # type: ignore[attr-defined]
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
    compute.where = (judge, a, b, name)  # type: ignore[attr-defined]
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
    # issue 27's figures
    "lc win rate cand-a (judge-1)": summary_figure("controlled", "lc_win_rate", judge="judge-1", model="cand-a"),
    "lc win rate cand-b (ensemble)": summary_figure("controlled", "lc_win_rate", judge=ENSEMBLE_JUDGE,
                                                    model="cand-b"),
    "sc score cand-a (judge-1)": summary_figure("controlled", "sc_score", judge="judge-1", model="cand-a"),
    "bt rating cand-a (judge-1)": summary_figure("controlled", "bt_rating", judge="judge-1", model="cand-a"),
    "bt rating cand-b (ensemble)": summary_figure("controlled", "bt_rating", judge=ENSEMBLE_JUDGE, model="cand-b"),
    "alpha verdict cand-a": summary_figure("agreement", "krippendorff_alpha", ("alpha_ci_low", "alpha_ci_high"),
                                           quantity="pairwise verdict", model="cand-a"),
    "alpha verdict all (within)": summary_figure("agreement", "krippendorff_alpha", ("alpha_ci_low", "alpha_ci_high"),
                                                 quantity="pairwise verdict", model="all"),
    "alpha vfs cand-a": summary_figure("agreement", "krippendorff_alpha", ("alpha_ci_low", "alpha_ci_high"),
                                       quantity="vfs", model="cand-a"),
    "swap consistency cand-a (judge-1)": summary_figure("judge_behaviour", "swap_consistency", judge="judge-1",
                                                        model="cand-a"),
    "first-slot pref. cand-a (judge-1)": summary_figure("judge_behaviour", "first_slot_preference",
                                                        judge="judge-1", model="cand-a"),
    "tie rate cand-a (judge-1)": summary_figure("judge_behaviour", "tie_rate", judge="judge-1", model="cand-a"),
    "tie rate all (judge-2)": summary_figure("judge_behaviour", "tie_rate", judge="judge-2", model="all"),
    "human kappa quad. cand-a (judge-1)": summary_figure("human_agreement", "kappa_quadratic", judge="judge-1",
                                                         model="cand-a"),
    "human kappa cand-a (judge-1)": summary_figure("human_agreement", "kappa", judge="judge-1", model="cand-a"),
    "human spearman cand-a (judge-1)": summary_figure("human_agreement", "spearman", judge="judge-1",
                                                      model="cand-a"),
    "human kendall cand-a (judge-1)": summary_figure("human_agreement", "kendall", judge="judge-1", model="cand-a"),
    "human mae cand-a (judge-1)": summary_figure("human_agreement", "mae", judge="judge-1", model="cand-a"),
    "human consistency cand-a (judge-1)": summary_figure("human_agreement", "consistency", judge="judge-1",
                                                         model="cand-a"),
    "human spearman all (ensemble)": summary_figure("human_agreement", "spearman", judge=ENSEMBLE_JUDGE,
                                                    model="all"),
    "reward cand-a (judge-1 x3 repeats)": repeated_figure("judge-1", "cand-a", "reward"),
    "win rate cand-a (ensemble x3 repeats)": repeated_figure(ENSEMBLE_JUDGE, "cand-a", "win_rate"),
}

def small_n(name: str, recs: Sequence[dict], options: IntervalOptions) -> bool | None:
    """The small-n flag the run puts on the figure's row (``small_n``), None where that row has none."""
    fig = REGISTRY[name]
    row = None
    if hasattr(fig, "row"):
        row = fig.row(recs, options)
    elif hasattr(fig, "where"):
        judge, candidate = fig.where[:2]
        summary = _run(recs, options)
        if len(fig.where) == 2:
            rows = summary["ensemble"]["results"] if judge == ENSEMBLE_JUDGE else summary["per_judge"][judge]
            row = next((r for r in rows if r["model"] == candidate and r["level"] == "overall"), None)
        else:
            b, metric = fig.where[2:]
            row = next((c for c in summary["comparisons"] if c["judge"] == judge and c["a"] == candidate
                        and c["b"] == b and c["metric"] == metric), None)
    return None if row is None or "small_n" not in row else bool(row["small_n"])


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
    # repeats pooled: each repeat has the same expectation as one judgment
    "reward cand-a (judge-1 x3 repeats)": lambda m: truth(m, "judge-1", "cand-a")["reward"],
    # cand-b's quality is the baseline's (0) and every bias is symmetric between the orders and about
    # a length difference of 0: it wins as often as it loses, whatever the length control
    "lc win rate cand-b (ensemble)": lambda m: 50.0,
    "bt rating cand-b (ensemble)": lambda m: 1000.0,
}

#: family name -> (records, options) -> "excludes 0" of each comparison; cand-b and cand-c are equal
FAMILIES: dict[str, Callable[[Sequence[dict], IntervalOptions], list[bool]]] = {
    "b-c reward (judge-1), one figure": family(("judge-1",), "cand-b", "cand-c", ("reward",)),
    "b-c reward, win rate, vfs (judge-1)": family(("judge-1",), "cand-b", "cand-c", ("reward", "win_rate", "vfs")),
    "b-c 3 figures x (judge-1, ensemble)": family(("judge-1", ENSEMBLE_JUDGE), "cand-b", "cand-c",
                                                  ("reward", "win_rate", "vfs")),
}

#: what judgekit prints without an interval today (no coverage to measure)
WITHOUT_INTERVAL = ("the repeats' spread (sd and range between repeats)", "length rho",
                    "BT rank (no single truth: cand-b and cand-c are equal)")


def truths(model: Model, names: Sequence[str], items: int, seed: int) -> dict[str, float]:
    """Every figure's truth: its closed form, or its estimate on ``items`` fresh items."""
    out = {name: TRUTHS[name](model) for name in names if name in TRUTHS}
    rest = [name for name in names if name not in out]
    if rest:
        big = replication(model, items, (seed, 10 ** 9))
        opts = IntervalOptions(bootstrap_samples=1)
        for name in rest:
            value = REGISTRY[name](big, opts)[0]
            if value is None:
                raise ValueError(f"{name}: no estimate on {items} items, so no truth")
            out[name] = value
    return out


def _one_size(args: tuple) -> tuple[int, dict, dict, dict]:
    model, n, reps, samples, seed, names, true, check = args
    cover = {name: [0, 0, 0] for name in names}  # [covered, with an interval, flagged small_n]
    alarms = {name: [0, 0, 0] for name in FAMILIES}  # [any excludes 0, comparisons, excluding 0]
    marked: dict[str, bool] = {}  # the figure's row carries small_n
    for rep in range(reps):
        recs = replication(model, n, (seed, n, rep))
        opts = IntervalOptions(bootstrap_samples=samples, bootstrap_seed=rep)
        for name in names:
            est, lo, hi = REGISTRY[name](recs, opts)
            flag = small_n(name, recs, opts) if check else None
            marked[name] = flag is not None
            cover[name][2] += bool(flag)
            if est is None or lo is None or hi is None:
                continue
            cover[name][1] += 1
            cover[name][0] += lo <= true[name] <= hi
        for name, fam in FAMILIES.items():
            flags = fam(recs, opts)
            alarms[name][0] += any(flags)
            alarms[name][1] += len(flags)
            alarms[name][2] += sum(flags)
    return n, cover, alarms, marked


def _map(fn, jobs: list, workers: int) -> list:
    if workers <= 1 or len(jobs) <= 1:
        return [fn(j) for j in jobs]
    import multiprocessing
    with multiprocessing.get_context("fork").Pool(min(workers, len(jobs))) as pool:
        return pool.map(fn, jobs, chunksize=1)


def simulate(*, reps: int, sizes: Sequence[int], samples: int = 1000, seed: int = 0, truth_items: int = 20000,
             names: Sequence[str] | None = None, model: Model = MODEL, workers: int = 1,
             flags: bool = True) -> dict[str, Any]:
    """Coverage (covered, with an interval, flagged small_n) per figure and n, the false-alarm
    count per family and n, whether each figure's row carries a small_n flag, and the truths.
    ``flags`` False: the flags are not read (no whole statistics pass per replication for the
    figures that need none)."""
    names = list(REGISTRY) if names is None else list(names)
    true = truths(model, names, truth_items, seed)
    done = _map(_one_size, [(model, n, reps, samples, seed, names, true, flags) for n in sizes], workers)
    cover = {name: {n: c[name] for n, c, _, _ in done} for name in names}
    alarms = {name: {n: a[name] for n, _, a, _ in done} for name in FAMILIES}
    marked = {name: all(m.get(name, False) for _, _, _, m in done) for name in names}
    return {"truths": true, "coverage": cover, "alarms": alarms, "reps": reps, "sizes": list(sizes),
            "marked": marked, "min_items": IntervalOptions().min_items_for_interval}


#: every candidate equal: each comparison of the run is a true null
EQUAL = Model(quality={"cand-a": 0.0, "cand-b": 0.0, "cand-c": 0.0})


def run_family(recs: Sequence[dict], options: IntervalOptions) -> list[dict]:
    """The run's family of comparisons, Holm-adjusted, as ``results.build`` makes it (the first
    judge's and the ensemble's comparisons: 3 pairs x Reward, Win Rate, VFS x 2), without the
    rest of the statistics pass."""
    comps = [dict(c) for j in (JUDGES[0], ENSEMBLE_JUDGE) for c in _comparisons(recs, options, j)]
    adjust_comparisons(comps, options.interval_level, options.holm_adjust)
    return comps


def _familywise_size(args: tuple) -> tuple[int, list[int]]:
    model, n, reps, samples, seed = args
    got = [0, 0, 0]  # [raw: any excludes 0, Holm: any excludes 0, family size]
    for rep in range(reps):
        recs = replication(model, n, (seed, n, rep, 7))
        comps = run_family(recs, IntervalOptions(bootstrap_samples=samples, bootstrap_seed=rep))
        got[0] += any(c["excludes_zero"] for c in comps)
        got[1] += any(c["excludes_zero_holm"] for c in comps)
        got[2] = len(comps)
    return n, got


def familywise(*, reps: int, sizes: Sequence[int] = (12, 25, 50, 200), samples: int = 1000, seed: int = 0,
               workers: int = 1) -> dict[int, list[int]]:
    """With every candidate equal (:data:`EQUAL`), per n: [runs where any of the run's comparisons
    (3 pairs x Reward, Win Rate, VFS x the first judge and the ensemble) excludes 0 raw, the same
    after Holm's adjustment, the family's size]."""
    return dict(_map(_familywise_size, [(EQUAL, n, reps, samples, seed) for n in sizes], workers))


def outside(result: dict[str, Any], band: tuple[float, float] = BAND) -> dict[str, list[int]]:
    """figure -> the n at which its coverage (of the replications with an interval) is outside ``band``."""
    out: dict[str, list[int]] = {}
    for name, per_n in result["coverage"].items():
        for n, (hit, total, *_) in per_n.items():
            if total == 0 or not band[0] <= 100.0 * hit / total <= band[1]:
                out.setdefault(name, []).append(n)
    return out


def _pct(hit: int, total: int) -> str:
    return "-" if total == 0 else f"{100.0 * hit / total:.1f}"


def flagged(result: dict[str, Any], name: str, n: int) -> float:
    """The share of replications whose row of ``name`` at ``n`` items is flagged small_n (a row
    without the key: by n < min_items_for_interval)."""
    if not result["marked"].get(name):
        return float(n < result["min_items"])
    return result["coverage"][name][n][2] / result["reps"] if result["reps"] else 0.0


def _flag_mark(result: dict[str, Any], name: str, n: int) -> str:
    share = flagged(result, name, n)
    return "!" if share == 1.0 else "~" if share > 0 else ""


def report(result: dict[str, Any]) -> str:
    sizes, reps = result["sizes"], result["reps"]
    width = max(len(k) for k in result["coverage"]) + 2
    lines = [f"Coverage of the nominal 95 % intervals, % of {reps} replications (n = items in the row; "
             f"'*' outside {BAND[0]:.0f}-{BAND[1]:.0f} %; '!' the row is flagged small_n, '~' in some replications)",
             "figure".ljust(width) + "truth".rjust(9) + "".join(f"{'n=' + str(n):>8}" for n in sizes)]
    for name, per_n in result["coverage"].items():
        cells = ""
        for n in sizes:
            hit, total = per_n[n][:2]
            mark = "" if total and BAND[0] <= 100.0 * hit / total <= BAND[1] else "*"
            cells += f"{_pct(hit, total) + mark + _flag_mark(result, name, n):>8}"
        lines.append(name.ljust(width) + f"{result['truths'][name]:9.3f}" + cells)
    missing = {name: {n: reps - t for n, (_, t, *_) in per_n.items() if t < reps}
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
    lines.append("")
    lines += flag_report(result)
    return "\n".join(lines)


def unflagged(result: dict[str, Any], floor: float = BAND[0]) -> dict[str, list[int]]:
    """figure -> the n at which its coverage is below ``floor`` and its row is not flagged small_n
    in every replication (a row without the flag: judged by n < min_items_for_interval)."""
    out: dict[str, list[int]] = {}
    reps, least = result["reps"], result["min_items"]
    for name, per_n in result["coverage"].items():
        for n, (hit, total, flagged) in per_n.items():
            if total and 100.0 * hit / total < floor:
                ok = flagged == reps if result["marked"].get(name) else n < least
                if not ok:
                    out.setdefault(name, []).append(n)
    return out


def flag_report(result: dict[str, Any]) -> list[str]:
    reps, least = result["reps"], result["min_items"]
    lines = [f"small-n flag (min_items_for_interval = {least}) where coverage < {BAND[0]:.0f} %:"]
    bare = [k for k, v in result["marked"].items() if not v]
    if bare:
        lines.append("  rows without a small_n key (judged by the registry's n < "
                     f"{least}): " + ", ".join(bare))
    miss = unflagged(result)
    se = 100.0 * (0.95 * 0.05 / reps) ** 0.5
    far = unflagged(result, BAND[0] - 2 * se)
    lines.append("  below and not flagged: " + ("; ".join(f"{k}: n = {', '.join(map(str, v))}" for k, v in miss.items())
                                               if miss else "none"))
    lines.append(f"  below {BAND[0] - 2 * se:.1f} % (beyond Monte Carlo noise) and not flagged: "
                 + ("; ".join(f"{k}: n = {', '.join(map(str, v))}" for k, v in far.items()) if far else "none"))
    return lines


def familywise_report(got: dict[int, list[int]], reps: int) -> str:
    lines = ["Every candidate equal: % of runs where any of the run's comparisons 'excludes 0' "
             f"({reps} replications)",
             "n".rjust(6) + "family".rjust(8) + "raw".rjust(8) + "Holm".rjust(8)]
    for n, (raw, holm, size) in got.items():
        lines.append(f"{n:6d}{size:8d}{_pct(raw, reps):>8}{_pct(holm, reps):>8}")
    se = 100.0 * (0.05 * 0.95 / reps) ** 0.5 if reps else 0.0
    lines.append(f"(raw: some percentile interval excludes 0; Holm: after Holm's adjustment of the swap-test "
                 f"p-values, which should stay at or below 5 %; standard error at 5 %: {se:.1f} points)")
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
    ap.add_argument("--workers", type=int, default=1, help="processes (one per n)")
    ap.add_argument("--holm-reps", type=int, default=None,
                    help="replications of the all-equal familywise rate at 12/25/50/200 items (default --reps; 0: none)")
    args = ap.parse_args(argv)
    reps = args.reps or (100 if args.quick else 400)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else ((3, 12, 50, 200) if args.quick else SIZES)
    truth_items = args.truth_items or (5000 if args.quick else 20000)
    names = [s.strip() for s in args.figures.split(",")] if args.figures else None
    start = time.perf_counter()
    result = simulate(reps=reps, sizes=sizes, samples=args.samples, seed=args.seed, truth_items=truth_items,
                      names=names, workers=args.workers)
    print(report(result))
    holm_reps = reps if args.holm_reps is None else args.holm_reps
    if holm_reps:
        print()
        print(familywise_report(familywise(reps=holm_reps, samples=args.samples, seed=args.seed,
                                           workers=args.workers), holm_reps))
    print(f"({time.perf_counter() - start:.1f} s; {args.samples} resamples per interval, seed {args.seed})")


if __name__ == "__main__":
    main()
