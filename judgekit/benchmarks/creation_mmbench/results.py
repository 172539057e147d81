"""Creation-MMBench's results from the judgment records: what summary.json, the CSVs and the printed
tables hold.

The judging core's pairwise results (:mod:`judgekit.judging.results`): per judge of the panel,
:func:`~judgekit.judging.pairwise.summarize`'s rows (Reward, Win Rate, VFS, VFS ref and counts
per task, category and overall) with bootstrap intervals; with two or more judges, the
ensemble's rows (the judges' mean verdict, or with ``ensemble = "majority"`` the majority verdict,
and the mean VFS per candidate, item and order) and the
judges' agreement; every judge's behaviour figures; paired comparisons between candidates.  What
is Creation-MMBench's own is added here: the ensemble's description, and with human ratings
Table 4's and Table 7's alignment (:mod:`.human`).  The first judge's rows are ``results``, as
with one judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.gcpause import paused_gc
from ...judging.ensemble import DEFAULT_ENSEMBLE
from ...judging.ensemble import ensemble_summary as shared_ensemble_summary
from ...judging.bootstrap import comparison_rows
from ...judging.honest import annotate
from ...judging.human_agreement import HumanLabels, add_human_agreement
from ...judging.control import controlled_spread_table, controlled_summary, controlled_table
from ...judging.pairwise import ENSEMBLE_JUDGE
from ...judging.panel import behaviour_rows
from ...judging.results import (Built, _num, add_panel, display_row, intervals_summary, judge_rows, more_displays,
                                summary_and_tables)
from ...judging.uncertainty import IntervalOptions
from .human import table4_rows, table7_human_rows

__all__ = ["build", "ensemble_summary", "human_display"]


def ensemble_summary(results: list[dict[str, Any]], rule: str = DEFAULT_ENSEMBLE) -> dict[str, Any]:
    """``summary["ensemble"]``: the rules by name, what they do, and the ensemble's rows."""
    return shared_ensemble_summary(rule, results, vfs=True)


@paused_gc()
def build(judgments: Sequence[Mapping[str, Any]], *, judges: Sequence[str], candidates: Sequence[str],
          options: IntervalOptions, human: Mapping[tuple[str, str], float] | None = None,
          dual: bool = True, raters: Mapping[tuple[str, str], Mapping[str, float]] | None = None,
          ensemble: str = DEFAULT_ENSEMBLE, repeats: int = 1,
          labels: HumanLabels | None = None,
          styles: Mapping[tuple[str, str], Mapping[str, Any]] | None = None) -> Built:
    """Everything the run reports from its judgment records (each with ``judge``).  ``human``:
    the mean human rating per (model, index), for Table 4's rows; ``raters``: every rater's
    rating per (model, index), for Table 7's human-human rows (``human_human``); ``labels``: the
    human labels of the judging core's agreement figures (``human_agreement``: kappa, Spearman,
    Kendall, MAE and consistency with intervals, per judge and the ensemble)."""
    judges = list(judges)
    panel = len(judges) > 1
    everyone, by_judge, rows, sums = judge_rows(judgments, judges, options, ensemble=ensemble, repeats=repeats)
    first = rows[judges[0]] if judges else []
    compared = judges[:1] + ([ENSEMBLE_JUDGE] if panel else [])
    comps = [c for j in compared for c in comparison_rows(everyone[j], j, candidates, options, sums.get(j))]
    behaviour = behaviour_rows(everyone, candidates)
    summary, tables = summary_and_tables(judges, rows, comps, behaviour, intervals_summary(options))
    if repeats > 1:
        summary["judge_repeats"] = repeats
    controlled = summary["controlled"] = controlled_summary(everyone, compared, candidates, options, styles,
                                                                repeats=repeats)
    tables["controlled"] = [{k: v for k, v in r.items() if k != "style_coefs"} for r in controlled["results"]]
    if panel:
        add_panel(summary, tables, rows, by_judge, judges, candidates, ensemble_summary(rows[ENSEMBLE_JUDGE], ensemble))
    annotate(summary, rows, everyone, by_judge, candidates, options)
    if human is not None:
        summary["human_alignment"] = tables["human_alignment"] = table4_rows(everyone, human, candidates, dual)
    more = more_displays(rows, summary, behaviour, comps, panel=panel)
    more.insert(0, controlled_table(controlled, panel))
    cspread = controlled_spread_table(controlled)
    if cspread is not None:
        more.append(cspread[:2])
    if raters:
        summary["human_human"] = tables["human_human"] = table7_human_rows(raters, candidates)
        more.append(("Human-human alignment (Table 7): each rater against the mean of the others",
                     [human_display(r) for r in summary["human_human"]]))
    if labels is not None:
        add_human_agreement(summary, tables, more, everyone, labels, candidates, options)
    display = [display_row(r) for r in first if r.get("level") in ("overall", "category")]
    return Built(summary, tables, display, more)


# -- printed tables ------------------------------------------------------------------------------
def human_display(r: Mapping[str, Any]) -> dict[str, Any]:
    """A Table 7 human row as printed (the single-evaluation columns; the paper's ``/`` under dual)."""
    return {"rater": r["judge"], "model": r["model"], "MAE": _num(r["single_mae"]),
            "consistency %": _num(r["single_consistency"]), "items": r["single_items"]}


