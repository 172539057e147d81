"""GuessBench's report document (:class:`judgekit.report.doc.ReportDoc`), built from what
:func:`~judgekit.benchmarks.guessbench.results.build_result` has: the prepared sets, the flows'
records, the summary's figures and the image store (for the retrieved images).

- headline: per candidate the four all-set accuracies (static, dynamic #1-#3) of CoT (the run's
  first approach when it has no CoT), with their intervals, by the first extractor and, with a
  panel, the ensemble (every approach is in the charts and Table 2);
- charts: each all-set accuracy per approach and candidate with its interval; short against long
  answers; with a panel, each extractor's and the ensemble's; the extractors' outcomes (answer /
  No Answering / unparsed / failed); self-consistency's votes; the review loops' stops;
- tables: Table 2 as printed (short / long / all per attempt), extraction per extractor, the
  retrievals' outcomes, AutoBencher;
- items: every build set, every flow on it as a conversation (:mod:`.report_items`).

The runner adds what every benchmark shares (the panel's agreement, paired comparisons,
deviations, cost); they are not repeated here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...judging.report import headline_rows, rows_by_judge
from ...plural import plural
from ...report.doc import Chart, Headline, ReportDoc, Series, Table
from .panel import HEADLINE
from .report_items import APPROACH_NAMES, make_context, set_item

if TYPE_CHECKING:
    from .flow import SetOutcome
    from .prepare import Prepared

__all__ = ["build_report"]

_FIGURES = {"static_all": "Static", "dynamic_1_all": "Dynamic #1", "dynamic_2_all": "Dynamic #2",
            "dynamic_3_all": "Dynamic #3"}


def build_report(prep: "Prepared", outcomes: dict[tuple[str, str, str, str], "SetOutcome"], summary: dict[str, Any],
                 display: list[dict[str, Any]], failed: list[str], blobs: Any = None) -> ReportDoc:
    """The run's report document (every set of the run, as items)."""
    spec, o = prep.spec, prep.options
    judges = list(spec.roles.panel)
    figures = [f for f in HEADLINE if ("static" in o.tasks if f == "static_all" else "dynamic" in o.tasks)]
    labelled = list(headline_rows(summary).items())
    doc = ReportDoc(title=f"GuessBench: {spec.name}", benchmark="guessbench", meta=_meta(prep, judges))
    doc.headline = _headline(labelled, figures, list(o.approaches))
    doc.charts = _charts(prep, summary, judges, figures, outcomes)
    doc.tables = _tables(summary, display, failed)
    ctx = make_context(prep, blobs)
    doc.items = [set_item(ctx, gs, outcomes) for gs in prep.sets]
    doc.items_note = (f"every build set of the run ({len(prep.sets)}), each with every flow on it: "
                      f"{plural(len(spec.roles.candidates), 'candidate')} x {plural(len(o.approaches), 'approach')} x "
                      f"{plural(len(o.tasks), 'task')}; extractor verdicts right/wrong, the extracted guess marked")
    return doc


def _meta(prep: "Prepared", judges: list[str]) -> dict[str, str]:
    spec, o = prep.spec, prep.options
    meta = {"data": f"{spec.data} ({spec.data_path()})", "build sets": str(len(prep.sets)),
            "candidates": ", ".join(spec.roles.candidates),
            "extraction": ("each judge (an extractor) reads the replies that are scored and gives the guess "
                           "after 'Answer:'" + (f"; the first, {judges[0]}, steers the flows" if len(judges) > 1
                                                else "")),
            "tasks": ", ".join(o.tasks), "approaches": ", ".join(APPROACH_NAMES.get(a, a) for a in o.approaches),
            "right when": ("the gold answer occurs in the whole lower-cased extractor reply" if o.match == "reply"
                           else "the gold answer occurs in the extracted guess"),
            "previous guess": "the extractor's whole reply" if o.previous_guess == "reply" else "the extracted guess"}
    if "self_consistency" in o.approaches:
        on = "whole extractor replies" if o.vote == "reply" else "guesses"
        meta["self-consistency"] = (f"{o.sc_samples} samples, vote on the {on}, a tie to the {o.sc_tie_break}"
                                    + (", a seed per sample" if o.sc_seed else ""))
    if "self_refine" in o.approaches or "image_retrieval" in o.approaches:
        meta["review rounds"] = f"up to {o.refine_rounds}, stop signal {o.stop_signal}"
    if "image_retrieval" in o.approaches:
        meta["retriever"] = f"{spec.roles.retriever} (the prompt says {o.retrieval_source})"
    if "one_shot" in o.approaches and prep.example is not None:
        meta["one-shot example"] = f"{o.one_shot_example}: {prep.example.answer}"
    return meta


def _headline_approaches(approaches: list[str]) -> list[str]:
    """The approach of the headline: CoT (the paper's main rows), else the run's first."""
    return [a for a in ("cot",) if a in approaches] or approaches[:1]


def _headline(labelled: list[tuple[str, list[dict[str, Any]]]], figures: list[str],
              approaches: list[str]) -> list[Headline]:
    out = []
    wanted = _headline_approaches(approaches)
    for judge, rows in labelled:
        for r in rows:
            if r["approach"] not in wanted:
                continue
            for f in figures:
                out.append(Headline(candidate=r["model"], figure=f"{_FIGURES[f]} · {APPROACH_NAMES[r['approach']]}",
                                    value=r.get(f), low=r.get(f"{f}_ci_low"), high=r.get(f"{f}_ci_high"), judge=judge,
                                    unit="%"))
    return out


def _cell(rows: list[dict[str, Any]], model: str, approach: str, col: str) -> tuple[Any, Any, Any]:
    for r in rows:
        if r["model"] == model and r["approach"] == approach:
            return r.get(col), r.get(f"{col}_ci_low"), r.get(f"{col}_ci_high")
    return None, None, None


def _series(name: str, cells: list[tuple[Any, Any, Any]]) -> Series:
    return Series(name, [c[0] for c in cells], low=[c[1] for c in cells], high=[c[2] for c in cells])


def _charts(prep: "Prepared", summary: dict[str, Any], judges: list[str], figures: list[str],
            outcomes: dict[tuple[str, str, str, str], "SetOutcome"]) -> list[Chart]:
    o = prep.options
    cands = list(prep.spec.roles.candidates)
    approaches = list(o.approaches)
    groups = [APPROACH_NAMES.get(a, a) for a in approaches]
    rows = summary["results"]
    by = f" (first extractor: {judges[0]})" if len(judges) > 1 else ""
    whiskers = (f"whiskers: the {o.interval_level:.0%} interval over the build sets" if o.bootstrap_samples
                else "no intervals (bootstrap_samples = 0)")
    charts = []
    for f in figures:
        charts.append(Chart(f"{_FIGURES[f]} accuracy per approach, all sets{by}", groups,
                            [_series(c, [_cell(rows, c, a, f) for a in approaches]) for c in cands],
                            unit="%", range=(0, 100), note=whiskers))
    split = "static" if "static" in o.tasks else "dynamic_3"
    name = _FIGURES[f"{split}_all"]
    charts.append(Chart(f"{name} accuracy, short (8 letters or fewer) and long answers{by}", groups,
                        [_series(f"{c} · {s}", [_cell(rows, c, a, f"{split}_{s}") for a in approaches])
                         for c in cands for s in ("short", "long")], unit="%", range=(0, 100)))
    if len(judges) > 1:
        a0 = _headline_approaches(approaches)[0]
        col = f"{split}_all"
        tables = list(rows_by_judge(summary).items())
        charts.append(Chart(f"{name} accuracy by extractor ({APPROACH_NAMES.get(a0, a0)}), all sets",
                            [j for j, _ in tables], [_series(c, [_cell(t, c, a0, col) for _, t in tables])
                                                     for c in cands], unit="%", range=(0, 100)))
    ext = [r for r in summary.get("extraction", []) if r["calls"]]
    if ext:
        keys = (("answer", "answer"), ("no_answer", "No Answering"), ("unparsed", "unparsed"), ("failed", "failed"))
        charts.append(Chart("Extractions by outcome, per extractor (% of its calls)", [r["judge"] for r in ext],
                            [Series(shown, [100.0 * r[k] / r["calls"] for r in ext]) for k, shown in keys],
                            kind="stacked", unit="%"))
    votes = _vote_shapes(prep, outcomes, judges[0])
    if votes:
        kinds = ("unanimous", "majority", "tie")
        charts.append(Chart(f"Self-consistency votes ({o.sc_samples} samples, % of turns)", list(votes),
                            [Series(k, [_share(votes[g], k) for g in votes]) for k in kinds], kind="stacked",
                            unit="%"))
    stops = _stops(prep, outcomes)
    if stops:
        kinds = list(dict.fromkeys(k for c in stops.values() for k in c))
        charts.append(Chart("How the review loops ended (% of turns)", list(stops),
                            [Series(k, [_share(stops[g], k) for g in stops]) for k in kinds], kind="stacked", unit="%"))
    return charts


def _share(counts: dict[str, int], key: str) -> float:
    n = sum(counts.values())
    return 100.0 * counts.get(key, 0) / n if n else 0.0


def _vote_shapes(prep: "Prepared", outcomes, judge: str) -> dict[str, dict[str, int]]:
    """Per candidate: how many self-consistency turns (first extractor) were unanimous, a
    majority, a tie."""
    out: dict[str, dict[str, int]] = {}
    for (alias, approach, _task, _set), so in outcomes.items():
        if approach != "self_consistency":
            continue
        for rec in so.turns:
            rd = rec.readings.get(judge)
            if rd is None or not rd.votes:
                continue
            c = out.setdefault(alias, {})
            top = max(rd.votes.values())
            k = "tie" if rd.vote_tied else ("unanimous" if top == sum(rd.votes.values()) else "majority")
            c[k] = c.get(k, 0) + 1
    return {a: out[a] for a in prep.spec.roles.candidates if a in out}


def _stops(prep: "Prepared", outcomes) -> dict[str, dict[str, int]]:
    """Per candidate and review approach: the turns by how their review loop ended."""
    out: dict[str, dict[str, int]] = {}
    for (alias, approach, _task, _set), so in sorted(outcomes.items()):
        if approach not in ("self_refine", "image_retrieval"):
            continue
        for rec in so.turns:
            rounds = len(rec.replies) - 1
            k = {"well_done": f"'Well done!' at round {rounds}", "rounds": "every round asked",
                 "no_guess": "no query"}.get(rec.stop, rec.stop.replace("retrieval_", "search: "))
            c = out.setdefault(f"{alias} · {APPROACH_NAMES[approach]}", {})
            c[k] = c.get(k, 0) + 1
    return out


def _tables(summary: dict[str, Any], display: list[dict[str, Any]], failed: list[str]) -> list[Table]:
    tables = [Table("Accuracy (%) per approach: short / long / all answers (the paper's Table 2)", display,
                    note="dynamic #k: right by attempt k (a right guess stops the set and counts at the later "
                         "attempts); no answer: extractions with no guess (No Answering and unparsed)")]
    ext = summary.get("extraction") or []
    if ext:
        tables.append(Table("Extraction per extractor", [
            {"extractor": r["judge"], "calls": r["calls"], "answer": r["answer"], "No Answering": r["no_answer"],
             "unparsed": r["unparsed"], "failed": r["failed"],
             **{f"{k} %": None if r[f"{k}_rate"] is None else round(100 * r[f"{k}_rate"], 1)
                for k in ("no_answer", "unparsed", "failed")}} for r in ext]))
    if summary.get("retrieval_outcomes"):
        tables.append(Table("Image retrieval: searches by outcome",
                            [{"outcome": k, "searches": v} for k, v in summary["retrieval_outcomes"].items()]))
    ab = summary.get("autobencher")
    if ab:
        rows = [{"accuracy": k, **{m: v for m, v in ab[k].items() if not isinstance(v, (dict, list))}}
                for k in ("static_all", "dynamic_3_all") if isinstance(ab.get(k), dict)]
        if rows:
            tables.append(Table(f"AutoBencher ({APPROACH_NAMES.get(ab['approach'], ab['approach'])})", rows))
    if failed:
        tables.append(Table("Failures", [{"where and why": f} for f in failed]))
    return tables
