"""Creation-MMBench's alignment with human ratings, per judge: the paper's Table 4.

For each judge (and a panel's ensemble), each candidate and all candidates pooled
(``model`` = ``"overall"``, the table's second column), MAE and Consistency
(:mod:`judgekit.judging.alignment`) between J, the judge's result for an item, and P, the mean
human rating of that item (the candidate's own row of the ratings file, or a row without a
model):

* dual evaluation: J = the mean of the item's valid pairwise scores in both orders (the
  swapped one negated back), as the benchmark pools them;
* single evaluation (the paper's "Single Eval"): J = the forward order's score only, the
  baseline as Assistant A, from the same run.

A run with ``dual = false`` has the single columns only.  ``mae`` / ``consistency`` / ``items``
are the run's own evaluation (dual when it is dual), the keys earlier versions wrote.

Table 7 adds the human-human rows (:func:`table7_human_rows`, from the ratings file alone): each
rater as the "judge", J = that rater's rating of an item, P = the mean rating of the *other*
raters of the same item (supplementary F.3), with the same statistics as the model rows, in the
single-evaluation columns (each human rated once, as the paper's table shows them: ``/`` under
dual).  Items with no other rater's rating are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...judging.alignment import consistency, mae
from ...judging.human_agreement import unit_scores

__all__ = ["OVERALL", "table4_rows", "table7_human_rows"]

#: the ``model`` of the row pooled over candidates
OVERALL = "overall"


def _figures(pairs: list[tuple[float, float]]) -> tuple[int, float | None, float | None]:
    js, ps = [j for j, _ in pairs], [p for _, p in pairs]
    return len(pairs), mae(js, ps), consistency(js, ps)


def table4_rows(records_by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                human: Mapping[tuple[str, str], float], candidates: Sequence[str],
                dual: bool) -> list[dict[str, Any]]:
    """Rows {judge, model, items, dual_mae, dual_consistency, single_items, single_mae,
    single_consistency, mae, consistency} per judge (in order), for each candidate with a valid
    pairwise score (in ``candidates`` order) and then ``"overall"``."""
    rows = []
    for judge, records in records_by_judge.items():
        scores = unit_scores(records)  # (model, index) -> order -> valid pairwise scores
        dual_pairs: dict[str, list[tuple[float, float]]] = {}
        single_pairs: dict[str, list[tuple[float, float]]] = {}
        for (model, index), by_order in scores.items():
            p = human.get((model, index), human.get(("", index)))
            if p is None:
                continue
            for m in (model, OVERALL):
                dual_pairs.setdefault(m, [])
                single_pairs.setdefault(m, [])
                if dual:
                    every = [s for order in sorted(by_order) for s in by_order[order]]
                    dual_pairs[m].append((sum(every) / len(every), p))
                if by_order.get(0):
                    single_pairs[m].append((float(by_order[0][0]), p))
        models = [m for m in dict.fromkeys(candidates) if any(k[0] == m for k in scores)]
        extra = sorted({k[0] for k in scores} - set(models))  # records of a model not listed
        for model in [*models, *extra, OVERALL]:
            if model == OVERALL and not scores:
                continue
            d_items, d_mae, d_cons = _figures(dual_pairs.get(model, []))
            s_items, s_mae, s_cons = _figures(single_pairs.get(model, []))
            row = {"judge": judge, "model": model, "items": d_items if dual else s_items,
                   "dual_mae": d_mae if dual else None, "dual_consistency": d_cons if dual else None,
                   "single_items": s_items, "single_mae": s_mae, "single_consistency": s_cons}
            row["mae"], row["consistency"] = (d_mae, d_cons) if dual else (s_mae, s_cons)
            rows.append(row)
    return rows


def table7_human_rows(ratings: Mapping[tuple[str, str], Mapping[str, float]],
                      candidates: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Table 7's human rows: for each rater (in the file's column order), each model of the
    ratings file (``candidates`` order first, then the others; a row without a model counts only
    in ``"overall"``) and ``"overall"``, MAE and Consistency of the rater's ratings against the
    mean of the other raters' on the same items.  ``ratings``: ``(model, index) -> {rater:
    rating}`` (:func:`~.ratings.read_human_rating_table`).  The rows have the keys of
    :func:`table4_rows`' (``judge`` is the rater; the dual columns are None)."""
    raters = list(dict.fromkeys(r for by_rater in ratings.values() for r in by_rater))
    models = [m for m in dict.fromkeys(candidates) if any(k[0] == m for k in ratings)]
    models += sorted({k[0] for k in ratings if k[0]} - set(models))
    rows = []
    for rater in raters:
        pairs: dict[str, list[tuple[float, float]]] = {m: [] for m in (*models, OVERALL)}
        for (model, _), by_rater in ratings.items():
            others = [v for r, v in by_rater.items() if r != rater]
            if rater not in by_rater or not others:
                continue
            pair = (by_rater[rater], sum(others) / len(others))
            for m in ((model, OVERALL) if model else (OVERALL,)):
                pairs[m].append(pair)
        for model in (*models, OVERALL):
            items, m_mae, m_cons = _figures(pairs[model])
            rows.append({"judge": rater, "model": model, "items": items, "dual_mae": None, "dual_consistency": None,
                         "single_items": items, "single_mae": m_mae, "single_consistency": m_cons,
                         "mae": m_mae, "consistency": m_cons})
    return rows
