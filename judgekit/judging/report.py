"""The report sections every pairwise judge-heavy benchmark shares, from its summary: the headline
(Reward, Win Rate and, when judged, VFS overall per candidate, by the first judge and, for a
panel, by the ensemble) and the charts (each figure per category with interval whiskers; each
candidate's verdict shares; for a panel each judge's overall figures; each judge's behaviour:
swap consistency, first-slot preference, ties, length correlation).  A figure a run made no
judgment for (VFS in the generic pairwise benchmark) is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report.doc import Chart, Headline, Series, Table
from .pairwise import ENSEMBLE_JUDGE

__all__ = ["FIGURES", "VERDICTS", "headline", "charts", "interval_note", "rows_by_judge", "headline_rows",
           "figure_series", "spread_tables"]


#: (summary key, headline figure, chart unit, axis range)
FIGURES = (("reward", "Reward", "", (-100.0, 100.0)), ("win_rate", "Win Rate", "%", (0.0, 100.0)),
           ("vfs", "VFS", "/10", (0.0, 10.0)))


#: the verdict counts of a results row, best first, with the names the chart shows (an ordered
#: scale, tie its middle; "fail", no verdict, is outside it: said in the chart's note)
VERDICTS = (("much_better", "much better (+2)"), ("better", "better (+1)"), ("tie", "tie (0)"),
            ("worse", "worse (-1)"), ("much_worse", "much worse (-2)"))


def rows_by_judge(summary: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Results rows by judge, from any panel benchmark's summary: the first judge's
    (``results``), each judge's (``per_judge``), then the ensemble's (``ensemble.results``)."""
    judges = list(summary.get("judges") or [])
    out = dict(summary.get("per_judge") or {})
    if judges and judges[0] not in out:
        out[judges[0]] = summary.get("results", [])
    if summary.get("ensemble"):
        out[ENSEMBLE_JUDGE] = summary["ensemble"]["results"]
    return {j: out[j] for j in [*judges, ENSEMBLE_JUDGE] if j in out}


def headline_rows(summary: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The rows a headline shows: the first judge's and, for a panel, the ensemble's."""
    first = list(summary.get("judges") or [])[:1]
    return {j: rows for j, rows in rows_by_judge(summary).items() if j in first or j == ENSEMBLE_JUDGE}


def _overall(rows: Sequence[Mapping[str, Any]], model: str) -> Mapping[str, Any] | None:
    return next((r for r in rows if r["model"] == model and r["level"] == "overall"), None)


def headline(summary: Mapping[str, Any], candidates: Sequence[str]) -> list[Headline]:
    out = []
    for judge, rows in headline_rows(summary).items():
        made = _figures_made(rows)
        for c in candidates:
            r = _overall(rows, c)
            if r is None:
                continue
            for key, figure, unit, _ in made:
                out.append(Headline(c, figure, r.get(key), r.get(f"{key}_ci_low"), r.get(f"{key}_ci_high"), judge=judge,
                                    unit="%" if unit == "%" else ""))
    return out


def _figures_made(rows: Sequence[Mapping[str, Any]]) -> list[tuple]:
    """The figures of :data:`FIGURES` the run has judgments for (no VFS with ``vfs = false``)."""
    count = {"reward": "n_pairwise", "win_rate": "n_pairwise", "vfs": "n_vfs"}
    return [f for f in FIGURES if any(r.get(count[f[0]]) for r in rows)]


def figure_series(name: str, rows: Sequence[Mapping[str, Any] | None], key: str) -> Series:
    """A chart series of figure ``key`` over ``rows`` (None: no row), with its interval whiskers."""
    def get(r, k):
        return None if r is None else r.get(k)
    return Series(name, [get(r, key) for r in rows], [get(r, f"{key}_ci_low") for r in rows],
                  [get(r, f"{key}_ci_high") for r in rows])


def charts(summary: Mapping[str, Any], candidates: Sequence[str]) -> list[Chart]:
    rows = rows_by_judge(summary)
    judges = list(summary.get("judges") or [])
    if not judges:
        return []
    first = rows[judges[0]]
    cats = sorted({r["group"] for r in first if r["level"] == "category"})
    groups = ["Overall", *cats]
    note = f"judged by {judges[0]}; whiskers: {interval_note(summary)}"
    out = []
    for key, figure, unit, rng in _figures_made(first):
        series = []
        for c in candidates:
            per = [_overall(first, c)] + [next((r for r in first if r["model"] == c and r["level"] == "category"
                                                and r["group"] == g), None) for g in cats]
            series.append(figure_series(c, per, key))
        if any(v is not None for s in series for v in s.values):
            out.append(Chart(f"{figure} per category", groups, series, unit=unit, note=note, range=rng))
    # verdict shares per candidate (and per judge of a panel)
    bars, shares, fails = [], {name: [] for _, name in VERDICTS}, []
    for judge in judges[:1] + ([*judges[1:], ENSEMBLE_JUDGE] if len(judges) > 1 else []):
        for c in candidates:
            r = _overall(rows.get(judge, []), c)
            if r is None or not r.get("n_pairwise"):
                continue
            bars.append(c if len(judges) == 1 else f"{c} · {judge}")
            read = r["n_pairwise"] - r.get("fail", 0)
            for k, name in VERDICTS:
                shares[name].append(100.0 * r[k] / read if read else 0.0)
            if r.get("fail"):
                fails.append(f"{bars[-1]} {100.0 * r['fail'] / r['n_pairwise']:.0f}%")
    if bars:
        out.append(Chart("Verdicts per candidate", bars, [Series(n, v) for n, v in shares.items()], kind="stacked",
                         unit="%", palette="diverging", range=(0.0, 100.0),
                         note="share of the pairwise judgments with a verdict, both orders pooled, from much better "
                              "to much worse for the candidate; no verdict (fail): "
                              + ("; ".join(fails) if fails else "none")))
    if len(judges) > 1:
        for key, figure, unit, rng in (f for f in _figures_made(first) if f[0] != "win_rate"):
            series = [figure_series(j, [_overall(rows[j], c) for c in candidates], key) for j in rows]
            out.append(Chart(f"Overall {figure} per judge", list(candidates), series, unit=unit, range=rng,
                             note=f"each judge and the ensemble; whiskers: {interval_note(summary)}"))
    out += _behaviour_charts(summary.get("judge_behaviour") or [])
    return out


def interval_note(summary: Mapping[str, Any]) -> str:
    """How a chart's whiskers were made, from ``summary["intervals"]``."""
    iv = summary.get("intervals") or {}
    if not iv.get("method"):
        return "none (bootstrap_samples = 0)"
    return f"{100 * iv['level']:g}% {iv['method']} ({iv['samples']} samples)"


def _behaviour_charts(rows: Sequence[Mapping[str, Any]]) -> list[Chart]:
    pooled = [r for r in rows if r["model"] == "all"]
    if not any(r.get("judgments") for r in pooled):  # no pairwise judgment: no behaviour figure
        return []
    judges = [r["judge"] for r in pooled]

    def pct(v):
        return None if v is None else 100.0 * v
    figures = (("swap consistency", "swap_consistency"), ("first-slot preference", "first_slot_preference"),
               ("ties", "tie_rate"))
    out = [Chart("Judge behaviour", judges, [Series(name, [pct(r.get(k)) for r in pooled]) for name, k in figures],
                 unit="%", range=(0.0, 100.0),
                 note="pooled over candidates; swap consistency: the same direction (better, tie, worse) in both orders; first-slot "
                      "preference: wins going to Assistant A among decisive verdicts (50% = no position bias)")]
    models = list(dict.fromkeys(r["model"] for r in rows))
    series = [Series(m, [next((r.get("length_correlation") for r in rows if r["judge"] == j and r["model"] == m), None)
                         for j in judges]) for m in models]
    out.append(Chart("Length correlation per judge", judges, series, range=(-1.0, 1.0),
                     note="Spearman's rho of the verdict with the answers' length difference (candidate - "
                          "baseline): above 0, longer answers win more"))
    return out


def spread_tables(summary: Mapping[str, Any]) -> list[Table]:
    """The report tables of the judge-induced spread (``judge_repeats`` > 1): each figure's SD and
    range between repeats (:func:`judgekit.judging.results.spread_table`) and the controlled
    figures' (:func:`judgekit.judging.control.controlled_spread_table`); none with one repeat."""
    from .control import controlled_spread_table
    from .results import spread_table

    found = [spread_table(summary), controlled_spread_table(summary.get("controlled") or {})]
    return [Table(*t) for t in found if t is not None]
