"""Creation-MMBench's report document (:class:`~judgekit.report.doc.ReportDoc`), built from what
the run already holds: the prepared items (questions, images, the baseline's answers), the
candidates' answers and every judgment record (each judge's full reply), and the results
:mod:`.results` built.

* headline: Reward, Win Rate and VFS overall per candidate, by the first judge and, for a panel,
  by the ensemble;
* charts: Reward, Win Rate and VFS per category with interval whiskers; each candidate's verdict
  shares; for a panel each judge's overall Reward and VFS; each judge's behaviour (swap
  consistency, first-slot preference, ties; length correlation);
* tables: the results per category, each judge's behaviour, Table 4's human alignment (when the
  run has human ratings);
* items: one per question, with its images, the baseline's answer, each candidate's answer and
  every judge's pairwise and VFS replies in both orders, the parsed verdict highlighted in the
  reply it was read from; failed calls, parse failures and re-asks flagged.

The figures every benchmark shares (panel, agreement, paired comparisons, deviations, cost) are
added by :func:`judgekit.report.run_report.write_run_report`, not here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...metrics.pairwise import ENSEMBLE_JUDGE, NO_VFS, item_sums
from ...parsers.creation import (
    VERDICT_MARKER,
    VERDICT_SCORES,
    VFS_MARKER_A,
    VFS_MARKER_B,
)
from ...report.doc import (
    Block,
    Chart,
    Headline,
    Item,
    ReportDoc,
    Series,
    Table,
    image,
    text,
)
from .data import CreationItem
from .prediction_file import FAIL_MSG
from .results import behaviour_display, display_row

__all__ = ["build_report", "verdict_line", "vfs_lines"]

#: (summary key, headline figure, chart unit, axis range)
FIGURES = (("reward", "Reward", "", (-100.0, 100.0)), ("win_rate", "Win Rate", "%", (0.0, 100.0)),
           ("vfs", "VFS", "/10", (0.0, 10.0)))
#: the verdict counts of a results row, best first, with the names the chart shows
VERDICTS = (("much_better", "much better (+2)"), ("better", "better (+1)"), ("tie", "tie (0)"),
            ("worse", "worse (-1)"), ("much_worse", "much worse (-2)"), ("fail", "fail"))
ORDER_LABEL = {0: "baseline first (A)", 1: "candidate first (A)"}

_DOUBLE = re.compile(r"\[\[\s*(.*?)\s*\]\]")
_VFS_STRIP = re.compile("[\u201c\u201d*]")


# -- where the parsers read their verdict --------------------------------------------------------
def verdict_line(reply: str | None) -> tuple[str, str] | None:
    """``(line, token)``: the line of ``reply`` :func:`~judgekit.parsers.creation.parse_verdict`
    reads its verdict from (stripped of surrounding white space) and the verdict token as the
    judge wrote it (``[[B>A]]``); None where the parser finds none."""
    for line in (reply or "").split("\n"):
        upper = line.upper()
        if VERDICT_MARKER not in upper:
            continue
        m = _DOUBLE.search(upper)
        if m is not None and m.group(1).replace(" ", "") in VERDICT_SCORES:
            return line.strip(), line[m.start():m.end()] if len(line) == len(upper) else m.group(0)
    return None


def vfs_lines(reply: str | None) -> tuple[str, str] | None:
    """The lines of ``reply`` :func:`~judgekit.parsers.creation.parse_vfs` reads the A and the B
    score from (the last that parses of each, stripped of surrounding white space), or None."""
    found: dict[str, str] = {}
    for line in (reply or "").strip().split("\n"):
        folded = _VFS_STRIP.sub("", line.upper())
        for key, marker in (("a", VFS_MARKER_A), ("b", VFS_MARKER_B)):
            if folded.startswith(marker):
                rest = folded.split(marker)[1].strip().split("/")[0].strip()
                try:
                    float(rest)
                except ValueError:
                    continue
                found[key] = line.strip()
    return (found["a"], found["b"]) if len(found) == 2 else None


def _vfs_highlight(reply: str, lines: tuple[str, str], order: int) -> str:
    """Both score lines where they stand together in the reply, else the candidate's."""
    a, b = lines
    for first, second in ((a, b), (b, a)):
        i = reply.rfind(first)
        if i >= 0:
            j = reply.find(second, i + len(first))
            if j >= 0 and reply[i + len(first):j].strip() == "":
                return reply[i:j + len(second)]
    return b if order == 0 else a


# -- one judgment as blocks ----------------------------------------------------------------------
def _verdict(j: Mapping[str, Any]) -> str:
    if j["kind"] == "pairwise":
        s = j.get("score")
        if s is None:
            return "no verdict"
        return f"{s:+d} for the candidate" if s else "0 (tie)"
    v = j.get("vfs")
    if isinstance(v, str) and v == NO_VFS:
        return "no VFS (empty reply: left out)"
    if v is None:
        return "no score"
    return f"candidate {v:g}/10, baseline {j['vfs_ref']:g}/10"


def _status(j: Mapping[str, Any]) -> str:
    if j.get("error_kind") in ("candidate_failed", "no_objective"):
        return "skipped"
    if not j.get("ok"):
        return "failed"
    return "ok"  # a re-asked one too: the first reply's block is marked "reasked"


def judgment_blocks(j: Mapping[str, Any], group: str, first_reply: str | None = None) -> list[Block]:
    """The blocks of one judgment record: the judge's reply with the parsed verdict (and, for a
    re-ask, the first reply that did not parse before it)."""
    kind = "pairwise" if j["kind"] == "pairwise" else "VFS"
    label = f"{j['judge']} · {kind} · {ORDER_LABEL.get(int(j['order']), 'order ' + str(j['order']))}"
    reply = j.get("judge_text") or ""
    meta: dict[str, str] = {}
    if j.get("length_diff") is not None and j["kind"] == "pairwise":
        meta["length difference"] = f"{j['length_diff']:+d} chars (candidate - baseline, as judged)"
    if j.get("error_kind"):
        meta["error kind"] = str(j["error_kind"])
    out = []
    if first_reply is not None:
        out.append(Block("judgment", label, [text(first_reply)], group=group, verdict="unreadable: re-asked",
                         status="reasked", meta={"error kind": "parse_failure"}))
        label += " · re-ask"
    verdict, highlight = _verdict(j), None
    if j["kind"] == "pairwise" and j.get("score") is not None:
        found = verdict_line(reply)
        if found is not None:
            highlight, token = found
            verdict = f"{token} -> {verdict}"
    elif j["kind"] == "vfs" and j.get("ok"):
        lines = vfs_lines(reply)
        if lines is not None:
            highlight = _vfs_highlight(reply, lines, int(j["order"]))
    parts = [text(reply)]
    if j.get("error_kind") == "candidate_failed":
        parts = [text("no judge call: the candidate's answer failed")]
    elif j.get("error"):
        parts = [text(f"call failed: {j['error']}")] + ([text(reply)] if reply else [])
    elif not j.get("ok") and j.get("error_kind") == "parse_failure":
        verdict = f"{verdict} (the reply does not parse)"
    out.append(Block("judgment", label, parts, group=group, verdict=verdict, highlight=highlight,
                     status=_status(j), meta=meta))
    return out


# -- items ---------------------------------------------------------------------------------------
def _question_block(item: CreationItem) -> Block:
    parts = [image(data=im.data, caption=item.image_paths[k] if k < len(item.image_paths) else None)
             for k, im in enumerate(item.images)]
    return Block("question", "question", [*parts, text(item.question)],
                 meta={"source": item.source} if item.source else {})


def _criteria_block(item: CreationItem) -> Block:
    parts = [text("General subjective criteria:\n" + item.subjective_criteria)]
    if item.vf_criteria is not None:
        parts.append(text("Visual factuality criteria:\n" + item.vf_criteria))
    if item.ground_truth:
        parts.append(text("Ground truth:\n" + item.ground_truth))
    return Block("reference", "criteria", parts)


def _answer_block(alias: str, a: Mapping[str, Any] | None, counted_failure: bool) -> Block:
    if a is None:
        return Block("answer", alias, [text("not run")], group=alias, status="skipped")
    if a.get("ok"):
        meta = {"output tokens": str(a["output_tokens"])} if a.get("output_tokens") is not None else {}
        return Block("answer", alias, [text(a.get("answer"))], group=alias, status="ok", meta=meta)
    judged = ("no judgment made (failed_answer_counts_as_failure)" if counted_failure
              else f"judged as the reference does, with the answer {FAIL_MSG!r}")
    return Block("answer", alias, [text(f"call failed: {a.get('error')}"), text(judged)], group=alias,
                 status="failed", meta={"error kind": str(a.get("error_kind"))})


def _item_score(first_judge_sums: Mapping[tuple[str, str], list[float]], index: str,
                candidates: Sequence[str]) -> str | None:
    shown = []
    for c in candidates:
        s = first_judge_sums.get((c, index))
        if s is not None and s[2]:
            shown.append(f"{c} {s[0] / s[2]:+.0f}")
    return "Reward " + ", ".join(shown) if shown else None


def build_items(items: Sequence[CreationItem], answers: Sequence[Mapping[str, Any]],
                judgments: Sequence[Mapping[str, Any]], *, candidates: Sequence[str], judges: Sequence[str],
                first_replies: Mapping[tuple, str] | None = None, counted_failure: bool = False) -> list[Item]:
    """One :class:`Item` per question: every item of the run, in the data's order."""
    first_replies = first_replies or {}
    ans = {(a["model"], a["index"]): a for a in answers}
    by_item: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for j in judgments:
        by_item.setdefault((j["model"], j["index"]), []).append(j)
    judge_rank = {j: k for k, j in enumerate(judges)}
    sums = item_sums([j for j in judgments if judges and j.get("judge") == judges[0]])
    out = []
    for item in items:
        blocks = [_question_block(item), _criteria_block(item),
                  Block("baseline", "baseline (GPT-4o, reference_answer_by_gpt4o)", [text(item.reference_answer)])]
        flags: list[str] = []
        for alias in candidates:
            a = ans.get((alias, item.index))
            blocks.append(_answer_block(alias, a, counted_failure))
            if a is None:
                flags.append("not run")
            elif not a.get("ok"):
                flags += ["failed", "no answer"]
            own = sorted(by_item.get((alias, item.index), []),
                         key=lambda j: (judge_rank.get(j["judge"], len(judge_rank)), j["kind"] != "pairwise", j["order"]))
            for j in own:
                first = first_replies.get((j["judge"], alias, item.index, j["kind"], j["order"]))
                blocks += judgment_blocks(j, alias, first if j.get("reasked") else None)
                if j.get("reasked"):
                    flags.append("reasked")
                if j.get("error"):
                    flags.append("failed")
                elif j.get("error_kind") == "parse_failure":
                    flags.append("parse failure")
        out.append(Item(id=item.index, title=item.task_name,
                        tags={"category": item.category, "task": item.task_name}, flags=flags,
                        blocks=blocks, score=_item_score(sums, item.index, candidates)))
    return out


# -- headline, charts, tables --------------------------------------------------------------------
def _rows(summary: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Results rows by judge: the first judge's (``results``), each judge's, the ensemble's."""
    judges = list(summary.get("judges") or [])
    out = dict(summary.get("per_judge") or {})
    if judges and judges[0] not in out:
        out[judges[0]] = summary.get("results", [])
    if summary.get("ensemble"):
        out[ENSEMBLE_JUDGE] = summary["ensemble"]["results"]
    return {j: out[j] for j in [*judges, ENSEMBLE_JUDGE] if j in out}


def _overall(rows: Sequence[Mapping[str, Any]], model: str) -> Mapping[str, Any] | None:
    return next((r for r in rows if r["model"] == model and r["level"] == "overall"), None)


def headline(summary: Mapping[str, Any], candidates: Sequence[str]) -> list[Headline]:
    rows = _rows(summary)
    judges = list(summary.get("judges") or [])
    shown = judges[:1] + ([ENSEMBLE_JUDGE] if ENSEMBLE_JUDGE in rows else [])
    out = []
    for judge in shown:
        for c in candidates:
            r = _overall(rows[judge], c)
            if r is None:
                continue
            for key, figure, _, _ in FIGURES:
                out.append(Headline(c, figure, r.get(key), r.get(f"{key}_ci_low"), r.get(f"{key}_ci_high"), judge=judge))
    return out


def _series(name: str, rows: Sequence[Mapping[str, Any] | None], key: str) -> Series:
    def get(r, k):
        return None if r is None else r.get(k)
    return Series(name, [get(r, key) for r in rows], [get(r, f"{key}_ci_low") for r in rows],
                  [get(r, f"{key}_ci_high") for r in rows])


def charts(summary: Mapping[str, Any], candidates: Sequence[str]) -> list[Chart]:
    rows = _rows(summary)
    judges = list(summary.get("judges") or [])
    if not judges:
        return []
    first = rows[judges[0]]
    cats = sorted({r["group"] for r in first if r["level"] == "category"})
    groups = ["Overall", *cats]
    note = f"judged by {judges[0]}; whiskers: {_interval_note(summary)}"
    out = []
    for key, figure, unit, rng in FIGURES:
        series = []
        for c in candidates:
            per = [_overall(first, c)] + [next((r for r in first if r["model"] == c and r["level"] == "category"
                                                and r["group"] == g), None) for g in cats]
            series.append(_series(c, per, key))
        if any(v is not None for s in series for v in s.values):
            out.append(Chart(f"{figure} per category", groups, series, unit=unit, note=note, range=rng))
    # verdict shares per candidate (and per judge of a panel)
    bars, shares = [], {name: [] for _, name in VERDICTS}
    for judge in judges[:1] + ([*judges[1:], ENSEMBLE_JUDGE] if len(judges) > 1 else []):
        for c in candidates:
            r = _overall(rows.get(judge, []), c)
            if r is None or not r.get("n_pairwise"):
                continue
            bars.append(c if len(judges) == 1 else f"{c} · {judge}")
            for k, name in VERDICTS:
                shares[name].append(100.0 * r[k] / r["n_pairwise"])
    if bars:
        out.append(Chart("Verdicts per candidate", bars, [Series(n, v) for n, v in shares.items()], kind="stacked",
                         unit="%", note="share of pairwise judgments, both orders pooled", range=(0.0, 100.0)))
    if len(judges) > 1:
        for key, figure, unit, rng in (FIGURES[0], FIGURES[2]):
            series = [_series(j, [_overall(rows[j], c) for c in candidates], key) for j in rows]
            out.append(Chart(f"Overall {figure} per judge", list(candidates), series, unit=unit, range=rng,
                             note=f"each judge and the ensemble; whiskers: {_interval_note(summary)}"))
    out += _behaviour_charts(summary.get("judge_behaviour") or [])
    return out


def _interval_note(summary: Mapping[str, Any]) -> str:
    iv = summary.get("intervals") or {}
    if not iv.get("method"):
        return "none (bootstrap_samples = 0)"
    return f"{100 * iv['level']:g}% {iv['method']} ({iv['samples']} samples)"


def _behaviour_charts(rows: Sequence[Mapping[str, Any]]) -> list[Chart]:
    pooled = [r for r in rows if r["model"] == "all"]
    if not pooled:
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


def tables(summary: Mapping[str, Any]) -> list[Table]:
    judges = list(summary.get("judges") or [])
    first = summary.get("results") or []
    out = []
    if first:
        rows = [display_row(r) for r in first if r.get("level") in ("overall", "category")]
        out.append(Table("Results per category" + (f", judged by {judges[0]}" if judges else ""), rows,
                         note="as the paper's Tables 2 and 5; +2/+1/0/-1/-2: verdict counts, both orders pooled"))
    if summary.get("judge_behaviour"):
        out.append(Table("Judge behaviour", [behaviour_display(b) for b in summary["judge_behaviour"]]))
    if summary.get("human_alignment"):
        out.append(Table("Human alignment (Table 4)", [_alignment_row(r) for r in summary["human_alignment"]],
                         note="the judges' pairwise scores against the mean human rating: MAE (lower is better) "
                              "and consistency % (|judge - human| <= 1); dual: both orders' mean, single: the "
                              "baseline-first order alone"))
    return out


def _alignment_row(r: Mapping[str, Any]) -> dict[str, Any]:
    def num(v, d=3):
        return "-" if v is None else round(v, d)
    return {"judge": r["judge"], "model": r["model"], "items": r["items"],
            "dual MAE": num(r.get("dual_mae")), "dual consistency %": num(r.get("dual_consistency"), 1),
            "single MAE": num(r.get("single_mae")), "single consistency %": num(r.get("single_consistency"), 1)}


# -- the document --------------------------------------------------------------------------------
def build_report(prep: Any, answers: Sequence[Mapping[str, Any]], judgments: Sequence[Mapping[str, Any]],
                 summary: Mapping[str, Any], first_replies: Mapping[tuple, str] | None = None) -> ReportDoc:
    """The run's report document (see the module docstring)."""
    spec, o = prep.spec, prep.options
    candidates = list(spec.roles.candidates)
    judges = list(summary.get("judges") or spec.roles.panel)
    meta = {
        "data": str(spec.data), "items": str(len(prep.items)),
        "candidates": ", ".join(candidates),
        "judges": ", ".join(judges) + (" (ensemble: majority verdict, mean VFS)" if len(judges) > 1 else ""),
        "baseline": "GPT-4o's answers in the data (reference_answer_by_gpt4o)",
        "orders": "both (dual evaluation, pooled)" if o.dual else "baseline as A only",
        "judgments": ", ".join(k for k, on in (("pairwise", o.pairwise), ("VFS", o.vfs)) if on) or "none",
        "intervals": _interval_note(summary),
        "re-ask on parse failure": "yes" if o.reask_on_parse_failure else "no (as the reference)",
    }
    if o.text_only:
        meta["variant"] = f"Creation-MMBench-TO (describer {spec.roles.describer}, {o.description} description)"
    if prep.unknown_tasks:
        meta["unknown tasks"] = ", ".join(sorted(prep.unknown_tasks))
    if prep.warnings:
        meta["data warnings"] = f"{len(prep.warnings)}: " + "; ".join(prep.warnings[:3])
    items = build_items(prep.items, answers, judgments, candidates=candidates, judges=judges,
                        first_replies=first_replies, counted_failure=o.failed_answer_counts_as_failure)
    return ReportDoc(title=f"Creation-MMBench: {spec.name}", benchmark="creation_mmbench", meta=meta,
                     headline=headline(summary, candidates), charts=charts(summary, candidates),
                     tables=tables(summary), items=items,
                     items_note="every question of the run: its images, the baseline's and each candidate's "
                                "answer, and every judge's reply in both orders")
