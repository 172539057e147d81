"""GuessBench's figures from the extractors' verdicts: Table 2 per extractor, the panel's ensemble,
agreement, bootstrap intervals and paired comparisons between candidates.

Pure functions over plain records (:class:`SetVerdicts`: one set under one (model, approach,
task), each extractor's right/wrong on each turn that was asked), usable from a notebook.

- **An extractor's Table 2** (:func:`judge_records` -> :func:`accuracy_table`): each extractor's
  verdicts go through the same rules as the single extractor's (:func:`~judgekit.metrics.guessbench.
  accuracy_rows`).  A dynamic set stops when the first extractor calls a guess right; the attempts
  not asked then take each extractor's verdict on that last guess (the guess stands: right for the
  first extractor, so its attempts carry forward as before; another extractor that called it wrong
  has it wrong at the later attempts too).  A set that stopped on a failed call has no verdict
  past it (None: left out, counted as failed).
- **The ensemble** (``majority``): per asked turn, the verdict most extractors gave (a tie, and so
  right against wrong with two, is wrong; a failed reading takes no part), then the same rules.
- **Agreement**: Krippendorff's alpha (nominal) over the asked turns' right/wrong verdicts, per
  candidate and pooled.
- **Intervals**: every accuracy cell, the build sets that count in it resampled (each contributes
  1 or 0 over 1: the accuracy is 100 x their mean); ``<cell>_ci_low`` / ``<cell>_ci_high``.
- **Comparisons**: per approach, each pair of candidates on the sets both have, for the four
  ``*_all`` accuracies (static, dynamic #1-#3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...judging.agreement import ENSEMBLE_RULES, agreement_rows, ensemble_summary, majority
from ...judging.intervals import with_interval
from ...judging.uncertainty import IntervalOptions, bootstrap_summary, comparisons, interval
from ...metrics.guessbench import ACCURACY_COLUMNS, accuracy_items, accuracy_rows

__all__ = ["ENSEMBLE", "RULE", "HEADLINE", "SetVerdicts", "filled", "judge_records", "ensemble_verdicts",
           "ensemble_records", "accuracy_table", "add_intervals", "candidate_comparisons", "verdict_agreement",
           "panel_summary"]

#: the ensemble's name where a judge's alias goes (``judge`` columns, ``per_judge``-like keys)
ENSEMBLE = "ensemble"
#: the ensemble rule (right/wrong per turn)
RULE = "majority"
#: the accuracies compared between candidates (and printed with their intervals)
HEADLINE = ("static_all", "dynamic_1_all", "dynamic_2_all", "dynamic_3_all")
_ATTEMPTS = 3


@dataclass(frozen=True)
class SetVerdicts:
    """One build set under one (model, approach, task): each extractor's verdict on each turn
    asked, in order (static: the one turn), and whether the set stopped on a failed call."""

    model: str
    approach: str
    task: str  # "static" | "dynamic"
    set_id: str
    short: bool
    verdicts: Mapping[str, Sequence[bool | None]]  # judge -> right/wrong (None: its reading failed) per turn
    failed: bool = False


def filled(verdicts: Sequence[bool | None], task: str, failed: bool) -> list[bool | None]:
    """One extractor's verdicts as Table 2 reads them: static ``[v]``; dynamic three, the attempts
    not asked taking the last asked verdict (the flow stopped on a right guess: that guess stands)
    or None after a failed call."""
    v = list(verdicts)
    if task == "static":
        return [v[0] if v and not failed else None]
    if failed or not v:
        return v + [None] * (_ATTEMPTS - len(v))
    return v + [v[-1]] * (_ATTEMPTS - len(v))


def _record(sv: SetVerdicts, vec: list[bool | None]) -> dict[str, Any]:
    return {"model": sv.model, "approach": sv.approach, "task": sv.task, "set_id": sv.set_id, "short": sv.short,
            "correct": vec[0] if sv.task == "static" else vec}


def judge_records(sets: Iterable[SetVerdicts], judge: str) -> list[dict[str, Any]]:
    """``judge``'s records for :func:`~judgekit.metrics.guessbench.accuracy_rows`."""
    return [_record(sv, filled(sv.verdicts.get(judge, ()), sv.task, sv.failed)) for sv in sets]


def ensemble_verdicts(sv: SetVerdicts, judges: Sequence[str]) -> list[bool | None]:
    """The majority verdict on each asked turn (None where every reading failed)."""
    turns = max((len(sv.verdicts.get(j, ())) for j in judges), default=0)
    out: list[bool | None] = []
    for t in range(turns):
        m = majority([sv.verdicts[j][t] if t < len(sv.verdicts.get(j, ())) else None for j in judges])
        out.append(None if m is None else bool(m))
    return out


def ensemble_records(sets: Iterable[SetVerdicts], judges: Sequence[str]) -> list[dict[str, Any]]:
    """The ensemble's records: :func:`ensemble_verdicts`, then the rules of :func:`filled`."""
    return [_record(sv, filled(ensemble_verdicts(sv, judges), sv.task, sv.failed)) for sv in sets]


def add_intervals(rows: list[dict[str, Any]], records: Sequence[Mapping[str, Any]], options: IntervalOptions,
                  label: str) -> list[dict[str, Any]]:
    """Each row of :func:`accuracy_rows` (over ``records``) with ``<cell>_ci_low/_ci_high`` for
    its twelve accuracies (None when intervals are off or no set counts); ``label`` (the judge,
    or ``ensemble``) names the figures' bootstrap streams."""
    items = accuracy_items(records)
    for row in rows:
        cells = items[(row["model"], row["approach"])]
        for col in ACCURACY_COLUMNS:
            sums = {s: (float(v), 1.0) for s, v in cells[col].items()}
            iv = interval(sums, options, key=f"{label}:{row['model']}:{row['approach']}:{col}", scale=100.0)
            if iv is None:
                row[f"{col}_ci_low"] = row[f"{col}_ci_high"] = None
            else:
                with_interval(row, col, iv, digits=1)
    return rows


def accuracy_table(records: Sequence[Mapping[str, Any]], options: IntervalOptions, label: str,
                   extraction: Mapping[tuple[str, str], Mapping[str, int]] | None = None) -> list[dict[str, Any]]:
    """Table 2 rows over ``records`` (:func:`accuracy_rows`), with the extraction counts of
    ``extraction`` ((model, approach) -> {"no_answer", "unparsed"}; None: the ensemble, which
    extracts nothing) and the intervals."""
    rows = accuracy_rows(records)
    for r in rows:
        c = extraction.get((r["model"], r["approach"]), {}) if extraction is not None else None
        r["extraction_no_answer"] = None if c is None else c.get("no_answer", 0)
        r["extraction_unparsed"] = None if c is None else c.get("unparsed", 0)
    return add_intervals(rows, records, options, label)


def candidate_comparisons(records: Sequence[Mapping[str, Any]], options: IntervalOptions, label: str,
                          candidates: Sequence[str]) -> list[dict[str, Any]]:
    """Per approach, every pair of candidates: the difference of each :data:`HEADLINE` accuracy
    (percentage points) on the sets both have, with its paired interval."""
    items = accuracy_items(records)
    approaches = list(dict.fromkeys(a for _, a in items))
    out = []
    for approach in approaches:
        for col in HEADLINE:
            per = {m: {s: (float(v), 1.0) for s, v in items[(m, a)][col].items()}
                   for (m, a) in items if a == approach}
            for row in comparisons(per, options, col, scale=100.0, key=f"{label}:{approach}:",
                                   candidates=candidates):
                out.append({"judge": label, "approach": approach, **row})
    return out


def verdict_agreement(sets: Sequence[SetVerdicts], judges: Sequence[str]) -> list[dict[str, Any]]:
    """Krippendorff's alpha (nominal) of the extractors' right/wrong on every asked turn, per
    candidate (in the order first seen) and pooled (``model`` ``"all"``)."""
    rated: dict[tuple, dict[str, int | None]] = {}
    for sv in sets:
        turns = max((len(sv.verdicts.get(j, ())) for j in judges), default=0)
        for t in range(turns):
            per = {}
            for j in judges:
                v = sv.verdicts.get(j, ())
                per[j] = None if t >= len(v) or v[t] is None else int(v[t])
            rated[(sv.model, sv.approach, sv.task, sv.set_id, t)] = per
    return agreement_rows(rated, judges, "nominal", quantity="extraction verdict (right/wrong per turn)",
                          groups=list(dict.fromkeys(k[0] for k in rated)), keep_empty=True)


def panel_summary(sets: Sequence[SetVerdicts], judges: Sequence[str], options: IntervalOptions,
                  candidates: Sequence[str],
                  extraction: Mapping[str, Mapping[tuple[str, str], Mapping[str, int]]] | None = None
                  ) -> dict[str, Any]:
    """The summary's figures: ``results`` (the first extractor's rows), and with two or more
    extractors ``per_judge``, ``ensemble`` and ``agreement``; ``comparisons`` (the first's, and
    the ensemble's with a panel) and ``intervals``.  ``extraction``: judge -> the counts of
    :func:`accuracy_table`."""
    extraction = extraction or {}
    per_judge = {j: accuracy_table(judge_records(sets, j), options, j, extraction.get(j, {})) for j in judges}
    first = judges[0]
    out: dict[str, Any] = {"results": per_judge[first]}
    comps = candidate_comparisons(judge_records(sets, first), options, first, candidates)
    if len(judges) > 1:
        ens = ensemble_records(sets, judges)
        out["per_judge"] = per_judge
        out["ensemble"] = ensemble_summary(
            RULE, accuracy_table(ens, options, ENSEMBLE),
            description=ENSEMBLE_RULES[RULE] + " (of each turn's right/wrong: a tie is wrong)")
        out["agreement"] = verdict_agreement(sets, judges)
        comps += candidate_comparisons(ens, options, ENSEMBLE, candidates)
    out["comparisons"] = comps
    out["intervals"] = bootstrap_summary(options, items="build sets")
    return out
