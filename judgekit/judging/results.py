"""The results every pairwise judge-heavy benchmark builds from its judgment records: summary.json's
keys, the CSV tables and the printed tables.

Per judge of the panel, :func:`~judgekit.judging.pairwise.summarize`'s rows (Reward, Win Rate,
VFS, VFS ref and counts per level) with bootstrap intervals (:mod:`.bootstrap`); with two or
more judges, the ensemble's rows (the judges' mean verdict by default, or the majority verdict, and
the mean score per candidate, item and order, through the same ``summarize``; :mod:`.ensemble`) and the judges' agreement (:mod:`.panel`); every judge's
behaviour; the paired comparisons between candidates.  Creation-MMBench and the generic pairwise
benchmark assemble their results from these pieces (and the rubric benchmark takes
:class:`Built`, :func:`intervals_summary` and :func:`add_panel`); what differs between them is
what they show (the generic pairwise benchmark has no VFS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .agreement import mean_score
from .ensemble import DEFAULT_ENSEMBLE, pairwise_rule
from .bootstrap import FIGURES, add_intervals
from .columns import columns
from .intervals import shown
from .pairwise import ENSEMBLE_JUDGE, FIGURE_SUMS, SUM_COLUMNS, ensemble_records, item_sums, record_sums, summarize
from .repeats import add_spread, repeat_cell
from .panel import agreement_records
from .uncertainty import IntervalOptions, bootstrap_summary

__all__ = ["Built", "intervals_summary", "judge_rows", "summary_and_tables", "add_panel", "more_displays",
           "display_row", "behaviour_display", "agreement_display", "comparison_display", "spread_table", "repeat_cell"]


@dataclass
class Built:
    """The result's parts: summary keys, CSV tables, printed tables (and, where the builder makes
    them, the tidy export's rows: the generic rubric benchmark)."""

    summary: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]]
    display: list[dict[str, Any]]
    more_displays: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    tidy: list[dict[str, Any]] = field(default_factory=list)


def intervals_summary(options: IntervalOptions, *, figures: Sequence[str] = FIGURES,
                      item: str = "a (candidate, index): its judgments in both orders resampled together"
                      ) -> dict[str, Any]:
    """``summary["intervals"]``: how the intervals were made (``item``: what one resampled item is)."""
    if options.bootstrap_samples == 0:
        return {"method": None, "samples": 0, "level": options.interval_level, "seed": options.bootstrap_seed}
    return bootstrap_summary(options, item=item, figures=list(figures))


def records_by_judge(judgments: Sequence[Mapping[str, Any]], judges: Sequence[str]) -> dict[str, list]:
    """judge -> its records, in record order; from a list, each judge's records carry their share
    of the list's shared columns (:func:`.columns.subset`: what the ensemble read is not read again)."""
    if not isinstance(judgments, list):
        return {j: [r for r in judgments if r.get("judge") == j] for j in judges}
    import numpy as np

    from .columns import subset

    col = columns(judgments)
    code, names = col.judge
    out = {}
    for j in judges:
        k = names.index(j) if j in names else -1
        out[j] = subset(judgments, np.flatnonzero(code == k)) if k >= 0 else []
    return out


#: the record fields the statistics pass of a pairwise benchmark reads (its rows, ensemble, intervals,
#: behaviour, agreement, controlled figures, honesty and human agreement)
PASS_FIELDS = ("judge", "model", "index", "kind", "order", "repeat", "score", "vfs", "vfs_ref", "task", "category",
               "length_diff", "error_kind")


class _ItemSums(Mapping):
    """Each judge's :func:`item_sums`, summed the first time a judge's are asked for: the intervals
    read list records from their columns, so only the judges whose paired comparisons are made
    (the first judge and the ensemble) need theirs."""

    def __init__(self, records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]]):
        self._records = records_by_judge
        self._sums: dict[str, dict[tuple[str, str], list[float]]] = {}

    def __getitem__(self, judge: str) -> dict[tuple[str, str], list[float]]:
        got = self._sums.get(judge)
        if got is None:
            got = self._sums[judge] = item_sums(self._records[judge])  # KeyError for a judge not there
        return got

    def __iter__(self):
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


def judge_rows(judgments: Sequence[Mapping[str, Any]], judges: Sequence[str], options: IntervalOptions,
               levels: Sequence[str] | None = None, ensemble: str = DEFAULT_ENSEMBLE, repeats: int = 1):
    """(every judge's records and, with a panel, the ensemble's by rule ``ensemble``; the judges'
    own records; the :func:`summarize` rows of each with their intervals; the per-item sums the
    intervals used): the figures both Creation-MMBench and the generic pairwise benchmark report.
    With ``repeats`` k > 1 (every judgment asked k times, each record with its ``repeat``) each
    figure also gets its judge-induced spread between repeats (:func:`.repeats.add_spread`)."""
    if isinstance(judgments, list):  # every field the pass reads, in one pass over the records
        columns(judgments).prefetch(PASS_FIELDS)
    ensembled = (ensemble_records(judgments, pairwise_rule=pairwise_rule(ensemble), score_rule=mean_score)
                 if len(judges) > 1 else None)
    by_judge = records_by_judge(judgments, judges)
    everyone: dict[str, Sequence[Mapping[str, Any]]] = dict(by_judge)
    if ensembled is not None:
        everyone[ENSEMBLE_JUDGE] = ensembled
    rows = {j: summarize(records) if levels is None else summarize(records, levels=levels)
            for j, records in everyone.items()}
    sums = _ItemSums(everyone) if options.bootstrap_samples else {}
    add_intervals(rows, everyone, options, sums)
    figures = {f: (SUM_COLUMNS.index(n), SUM_COLUMNS.index(d)) for f, (n, d) in FIGURE_SUMS.items()}
    add_spread(rows, everyone, record_sums, figures, repeats)
    return everyone, by_judge, rows, sums


def summary_and_tables(judges: Sequence[str], rows, comps, behaviour, intervals: dict[str, Any]):
    """summary.json's keys and the CSV tables every judge's rows, the comparisons and the judges'
    behaviour make (the first judge's rows are ``results``)."""
    summary: dict[str, Any] = {"judges": list(judges), "results": rows[judges[0]] if judges else [],
                               "intervals": intervals, "comparisons": comps, "judge_behaviour": behaviour}
    tables: dict[str, list[dict[str, Any]]] = {
        "summary": [{"judge": j, **r} for j in rows for r in rows[j]],
        "comparisons": comps,
        "judge_behaviour": behaviour,
    }
    return summary, tables


def add_panel(summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]], rows, by_judge, judges: Sequence[str],
              candidates: Sequence[str], ensemble: dict[str, Any], *, agreement=agreement_records) -> None:
    """A panel's per-judge rows, its ``ensemble`` summary and the judges' ``agreement`` (records
    from the judges' records and the candidates), into ``summary`` and ``tables``."""
    summary["per_judge"] = {j: rows[j] for j in judges}
    summary["ensemble"] = ensemble
    summary["agreement"] = agreement(by_judge, candidates)
    tables["agreement"] = [{**a, "judges": ", ".join(a["judges"])} for a in summary["agreement"]]


def more_displays(rows, summary: Mapping[str, Any], behaviour, comps, *, panel: bool,
                  show=None, show_behaviour=None) -> list[tuple[str, list[dict[str, Any]]]]:
    """The printed tables after the first: per judge (a panel), agreement, behaviour, comparisons;
    rows shown by ``show`` and ``show_behaviour`` (this module's by default)."""
    show, show_behaviour = show or display_row, show_behaviour or behaviour_display
    more: list[tuple[str, list[dict[str, Any]]]] = []
    if panel:
        more.append(("Per judge, overall", [{"judge": j, **{k: v for k, v in show(r).items() if k != "category"}}
                                            for j in rows for r in rows[j] if r["level"] == "overall"]))
        more.append(("Judge agreement (Krippendorff's alpha)", [agreement_display(a) for a in summary["agreement"]]))
    more.append(("Judge behaviour", [show_behaviour(b) for b in behaviour]))
    if comps:
        more.append(("Paired comparisons (overall, a - b)", [comparison_display(c) for c in comps]))
    spread = spread_table(summary)
    if spread is not None:
        more.append(spread[:2])
    return more


#: the figures of a results row whose spread is shown: (key, column, digits)
_SPREAD_SHOWN = (("reward", "Reward", 1), ("win_rate", "Win Rate %", 1), ("vfs", "VFS", 2))


def spread_table(summary: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]], str] | None:
    """(title, rows, note) of the judge-induced spread, overall per judge (and ensemble) and
    candidate: each figure's SD between repeats with its range; None without repeats."""
    by_judge = dict(summary.get("per_judge") or {})
    judges = list(summary.get("judges") or [])
    if judges and judges[0] not in by_judge:
        by_judge[judges[0]] = summary.get("results") or []
    if summary.get("ensemble"):
        by_judge[ENSEMBLE_JUDGE] = summary["ensemble"]["results"]
    rows = []
    for judge, judge_rows in by_judge.items():
        for r in judge_rows:
            if r.get("level") != "overall" or "reward_repeat_sd" not in r:
                continue
            row: dict[str, Any] = {"judge": judge, "model": r["model"]}
            for key, col, digits in _SPREAD_SHOWN:
                if f"{key}_repeat_sd" in r and (key != "vfs" or r.get("n_vfs")):
                    row[col] = repeat_cell(r, key, digits)
            rows.append(row)
    if not rows:
        return None
    k = summary.get("judge_repeats")
    title = f"Judge-induced spread over {k} repeats: SD (range)" if k else "Judge-induced spread: SD (range)"
    note = ("each figure computed on each repeat's judgments alone; SD and range across repeats (the judge's own "
            "sampling). The interval beside each figure is the item-sampling one (bootstrap over items)")
    return title, rows, note


def _pct(v: float | None) -> float | None:
    return None if v is None else round(100.0 * v, 1)


def _fig(r: Mapping[str, Any], name: str, digits: int) -> str:
    return shown(r.get(name), r.get(f"{name}_ci_low"), r.get(f"{name}_ci_high"), digits)


def display_row(r: Mapping[str, Any], vfs: bool = True) -> dict[str, Any]:
    """A row of the printed table, shaped like the paper's Tables 2 and 5; Reward, Win Rate and
    VFS with their interval when there is one.  ``vfs`` False (the generic pairwise benchmark):
    the pairwise figures alone."""
    counts = "/".join(str(r[k]) for k in ("much_better", "better", "tie", "worse", "much_worse"))
    row = {
        "model": r["model"],
        "category": "Overall" if r["level"] == "overall" else r["group"],
        "Reward": _fig(r, "reward", 1),
        "Win Rate %": _fig(r, "win_rate", 1),
    }
    if "items" in r:  # n: the items behind the row; ! when too few for the interval (judging.honest)
        row["n"] = f"{r['items']}{'!' if r.get('small_n') else ''}"
    if not vfs:
        return {**row, "+2/+1/0/-1/-2": counts, "fail": r["fail"],
                "parse ok %": _num(_pct(r["pairwise_parse_ok"]), 1)}
    return {
        **row,
        "VFS": _fig(r, "vfs", 2),
        "VFS ref": r["vfs_ref"],
        "+2/+1/0/-1/-2": counts,
        "fail": r["fail"] + r.get("vfs_fail", 0),
        "parse ok % (pair/VFS)": f"{_pct(r['pairwise_parse_ok'])}/{_pct(r['vfs_parse_ok'])}",
    }


def _num(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _rate(b: Mapping[str, Any], name: str) -> str:
    """A behaviour share in % with its Wilson interval and n, when :mod:`.honest` added them."""
    if f"{name}_n" not in b:
        return _num(_pct(b[name]), 1)
    return f"{shown(_pct(b[name]), _pct(b[f'{name}_ci_low']), _pct(b[f'{name}_ci_high']), 0)} n={b[f'{name}_n']}"


def behaviour_display(b: Mapping[str, Any], vfs: bool = True) -> dict[str, Any]:
    """A judge's behaviour figures as printed (``vfs`` False: without the VFS parse failures).
    The row pooled over candidates is ``all (within)`` once its length correlation is pooled
    within candidates."""
    row = {"judge": b["judge"], "model": "all (within)" if b.get("length_pooling") else b["model"],
           "swap consistency %": _rate(b, "swap_consistency"),
           "first-slot %": _rate(b, "first_slot_preference"),
           "ties %": _rate(b, "tie_rate"),
           "length rho": _num(b["length_correlation"])}
    if not vfs:
        return {**row, "parse failures %": _num(_pct(b["parse_failure_rate"]), 1)}
    return {**row, "parse failures % (pair/VFS)": f"{_num(_pct(b['parse_failure_rate']), 1)}/"
                                                  f"{_num(_pct(b['vfs_parse_failure_rate']), 1)}"}


def agreement_display(a: Mapping[str, Any]) -> dict[str, Any]:
    alpha = (_num(a["krippendorff_alpha"], 3) if a["krippendorff_alpha"] is None or "alpha_ci_low" not in a
             else shown(a["krippendorff_alpha"], a["alpha_ci_low"], a["alpha_ci_high"], 2))
    row = {"quantity": a["quantity"], "model": "all (within)" if a.get("pooling") else a["model"], "alpha": alpha,
           "level": a["level"], "full agreement %": _num(_pct(a["full_agreement"]), 1)}
    if "n_items" in a:  # units: judgments two judges rated; n: the distinct items alpha's interval
        # resamples, "!" below alpha's threshold (uncertainty.FIGURE_MIN_ITEMS)
        row["units"] = a["items"]
        row["n"] = f"{a['n_items']}{'!' if a.get('small_n') else ''}"
    else:
        row["items"] = a["items"]
    if "alpha_repeat_sd" in a:  # judge repeats: alpha's spread between them (judging.honest)
        row["alpha SD (range) over repeats"] = repeat_cell(a, "alpha", 2)
    return row



def _places(metric: str) -> int:
    """The decimals of a figure's difference: its kind's (the report page's too), else 2."""
    from ..report.numbers import DECIMALS, figure_kind

    return DECIMALS.get(figure_kind(metric) or "", 2)


def comparison_display(c: Mapping[str, Any]) -> dict[str, Any]:
    """A paired comparison as printed; with Holm's adjustment (:mod:`.honest`), ``excludes 0``
    says both, raw and adjusted (``yes/no``)."""
    excl = "yes" if c["excludes_zero"] else "no"
    row = {"judge": c["judge"], "figure": c["metric"], "a - b": f"{c['a']} - {c['b']}",
           "difference": shown(c["difference"], c["ci_low"], c["ci_high"], _places(c["metric"])),
           "items": f"{c['items']}!" if c.get("small_n") else c["items"]}
    if "excludes_zero_holm" not in c:
        return {**row, "excludes 0": excl}
    holm = {True: "yes", False: "no"}.get(c["excludes_zero_holm"], "-")
    return {**row, "excludes 0 raw/Holm": f"{excl}/{holm}"}
