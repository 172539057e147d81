"""The generic pairwise benchmark's results from its judgment records: summary.json, the CSVs,
the printed tables and the tidy export.

The records have Creation-MMBench's shape (``task`` = ``category``), so the figures come from the
same functions: :func:`~judgekit.judging.pairwise.summarize` per category and overall (Reward,
Win Rate, verdict counts, parse-ok rate), Creation-MMBench's bootstrap intervals and paired
comparisons (:mod:`judgekit.judging.bootstrap`), a panel's ensemble (the judges' mean verdict, or
the majority verdict with ``ensemble = "majority"``) and
agreement (Krippendorff's alpha), and every judge's behaviour (:mod:`judgekit.judging.panel`).
What differs is only what is shown: there is no VFS, so the tables leave it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.gcpause import paused_gc
from ...judging import results as shared
from ...judging.ensemble import DEFAULT_ENSEMBLE, ensemble_summary
from ...judging.bootstrap import comparison_rows
from ...judging.honest import annotate
from ...judging.human_agreement import HumanLabels, add_human_agreement
from ...judging.control import controlled_spread_table, controlled_summary, controlled_table
from ...judging.pairwise import ENSEMBLE_JUDGE
from ...judging.panel import behaviour_rows
from ...judging.results import (Built, add_panel, intervals_summary, judge_rows, more_displays, summary_and_tables)
from ...judging.uncertainty import IntervalOptions

__all__ = ["LEVELS", "Built", "build", "display_row", "behaviour_display", "tidy_rows"]

#: the levels of the results rows (a generic item has a category, no task)
LEVELS = ("category", "overall")
#: the figures with an interval and compared between candidates
FIGURES = ("reward", "win_rate")


def _drop_vfs(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not k.startswith(("vfs", "n_vfs"))}


@paused_gc()
def build(judgments: Sequence[Mapping[str, Any]], *, judges: Sequence[str], candidates: Sequence[str],
          options: IntervalOptions, no_call: Sequence[str] = (), ensemble: str = DEFAULT_ENSEMBLE,
          repeats: int = 1, labels: HumanLabels | None = None,
          styles: Mapping[tuple[str, str], Mapping[str, Any]] | None = None) -> Built:
    """Everything the run reports from its judgment records (each with ``judge``); records with
    an ``error_kind`` in ``no_call`` (no judge call was made) count as failures in the figures
    and take no part in the judges' behaviour.  ``labels``: human labels, for each judge's (and
    the ensemble's) agreement with them (:mod:`judgekit.judging.human_agreement`)."""
    judges = list(judges)
    panel = len(judges) > 1
    everyone, by_judge, rows, sums = judge_rows(judgments, judges, options, levels=LEVELS, ensemble=ensemble, repeats=repeats)
    rows = {j: [_drop_vfs(r) for r in rs] for j, rs in rows.items()}
    first = rows[judges[0]] if judges else []
    compared = judges[:1] + ([ENSEMBLE_JUDGE] if panel else [])
    comps = [c for j in compared for c in comparison_rows(everyone[j], j, candidates, options, sums.get(j))
             if c["metric"] in FIGURES]
    called = {j: [r for r in recs if r.get("error_kind") not in no_call] for j, recs in everyone.items()}
    behaviour = [_drop_vfs(b) for b in behaviour_rows(called, candidates)]
    summary, tables = summary_and_tables(judges, rows, comps, behaviour, intervals_summary(options, figures=FIGURES))
    if repeats > 1:
        summary["judge_repeats"] = repeats
    controlled = summary["controlled"] = controlled_summary(everyone, compared, candidates, options, styles,
                                                                repeats=repeats)
    tables["controlled"] = [{k: v for k, v in r.items() if k != "style_coefs"} for r in controlled["results"]]
    if panel:
        add_panel(summary, tables, rows, by_judge, judges, candidates, ensemble_summary(ensemble, rows[ENSEMBLE_JUDGE]))
    annotate(summary, rows, called, by_judge, candidates, options)
    display = [display_row(r) for r in _ordered(first, candidates)]
    more = more_displays(rows, summary, behaviour, comps, panel=panel, show=display_row,
                         show_behaviour=behaviour_display)
    cspread = controlled_spread_table(controlled)
    if cspread is not None:
        more.append(cspread[:2])
    if labels is not None:
        add_human_agreement(summary, tables, more, everyone, labels, candidates, options)
    return Built(summary, tables, display, [controlled_table(controlled, panel), *more])


def _ordered(rows: Sequence[Mapping[str, Any]], candidates: Sequence[str]) -> list[Mapping[str, Any]]:
    """Each candidate's rows in ``candidates`` order, overall first, then its categories."""
    rank = {c: i for i, c in enumerate(candidates)}
    return sorted(rows, key=lambda r: (rank.get(r["model"], len(rank)), r["level"] != "overall", r["group"]))


# -- printed tables ------------------------------------------------------------------------------
def display_row(r: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the printed table: Reward and Win Rate with their interval, the verdict counts
    (both orders pooled), the failures and the parse-ok rate (Creation-MMBench's, without VFS)."""
    return shared.display_row(r, vfs=False)


def behaviour_display(b: Mapping[str, Any]) -> dict[str, Any]:
    return shared.behaviour_display(b, vfs=False)


# -- the tidy export -----------------------------------------------------------------------------
def tidy_rows(judgments: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per item x candidate x judge x order (:mod:`judgekit.report.tidy`'s columns; the
    runner fills ``run_id`` and ``benchmark``): ``value`` the candidate's score -2..+2."""
    out = []
    for j in judgments:
        span = [j["span_start"], j["span_end"]] if j.get("span_start") is not None else None
        out.append({"item": j["index"], "category": j["category"], "candidate": j["model"], "judge": j["judge"],
                    "order": j["order"], "kind": "pairwise", "value": j["score"], "verdict": j.get("verdict"),
                    "ok": j["ok"], "error_kind": j["error_kind"], "reasked": j["reasked"],
                    "judge_text": j["judge_text"],
                    "extra": {"length_diff": j.get("length_diff"), "error": j.get("error"), "span": span}})
    return out
