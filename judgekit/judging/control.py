"""Length- and style-controlled figures and Bradley-Terry ratings of a pairwise benchmark's
candidates, each with the item-bootstrap interval the other figures have.

* **LC win rate** (AlpacaEval 2, ``length_controlled_v1``): per candidate, a logistic GLM of the
  judge's preference for the candidate (1 better, 0.5 tie, 0 worse; every judgment, both orders)
  on a candidate-vs-reference term and the length feature ``tanh(length difference / its
  standard deviation)``; the LC win rate is the model's predicted preference with the length term
  set to 0, i.e. ``100 sigmoid(theta)``.  As AlpacaEval, the fit is L1-penalised (both
  coefficients) with the strength chosen by 5-fold cross-validation (:mod:`.l1_logistic`).  Its
  instruction-difficulty term and its regularisation towards its "gamed" baselines need its own
  precomputed data (its judge's verdicts on its own items), so they are left out.  When every
  length difference has one sign the fit is not identified (the figure is a prediction at a
  length difference never seen): the row says so (``lc_identified``) and the tables print n/i.
* **SC score** (Arena-Hard-Auto v2, ``show_result.py --control-features length markdown``): one
  Bradley-Terry fit over all candidates' battles with the reference (a much-better verdict counts
  three times, a tie 0.5), with four style features per battle: the normalised length difference
  ``(l_c - l_r) / (l_c + l_r)`` and, for headers, list items and bold spans, the difference of
  densities (count / length) ``(d_c - d_r) / (d_c + d_r + 1)``; each feature standardised over the
  battles.  The style coefficients are fitted jointly and the score is the candidate's win
  probability against the reference without them: ``100 sigmoid(theta_c)``.
* **BT rating**: the same fit without style features, on the Elo scale (the reference at 1000,
  400 points = 10:1 odds), and each candidate's rank among the candidates.

A resampled item is a (candidate, index) for the LC win rate (both orders together, as the other
figures) and an index with all its candidates' judgments for the joint fits.  Each resample is
fitted by Newton's method started at the fit on all items (a few steps each, all resamples at
once); the interval is the percentile interval of the resampled figures (the LC win rate's: of
the unpenalised fit, stretched to hold the penalised point; :func:`lc_win_rate` says why).

The LC win rate is computed in :mod:`.length_control` and the fits beneath every figure in
:mod:`.logistic` (and :mod:`.l1_logistic`); this module reads the records, fits the style and
Bradley-Terry figures and lays out the rows and tables (every public name importable from here).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..report.doc import Table
from .length_control import lc_win_rate, lc_win_rates
from .logistic import LOGIT_CAP, _aggregate, _quantiles, _refit_groups, _sigmoid, fit_logistic
from .repeats import repeat_cell
from .uncertainty import FIGURE_MIN_ITEMS, IntervalOptions, min_items_for

__all__ = ["answer_style", "style_record", "fit_logistic", "lc_win_rate", "lc_win_rates", "style_controlled",
           "controlled_rows",
           "controlled_summary", "controlled_display", "controlled_table", "controlled_report_table",
           "METHOD", "LC_NOT_IDENTIFIED", "bt_rows", "rating_text", "SPREAD_FIGURES", "controlled_spread",
           "controlled_spread_table",
           "STRONG_WEIGHT", "ELO_SCALE"]

#: how many battles a much-better (or much-worse) verdict counts for, as Arena-Hard-Auto's
#: ``load_judgments(weight=3)``
STRONG_WEIGHT = 3
#: Elo points per natural-log odds unit (400 points = odds of 10:1)
ELO_SCALE = 400.0 / math.log(10.0)
ELO_BASE = 1000.0

_CODE = re.compile(r"```([^`]*)```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_ORDERED = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.MULTILINE)
_BOLD = (re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__"))


def answer_style(text: str) -> list[int]:
    """``[length, headers, list items, bold spans]`` of an answer, as Arena-Hard-Auto counts
    them (``utils/add_markdown_info.py``): markdown is counted after each fenced code block's
    content is removed (its fences stay), headers are ``#`` to ``######`` lines, list items
    numbered or ``-``/``*``/``+`` lines, bold ``**..**`` or ``__..__`` on one line.  The length
    is in characters (Arena-Hard-Auto counts gpt-4o tokens, which needs tiktoken)."""
    text = text or ""
    bare = text
    for inner in _CODE.findall(text):
        bare = bare.replace(inner, "")
    lists = len(_ORDERED.findall(bare)) + len(_UNORDERED.findall(bare))
    return [len(text), len(_HEADER.findall(bare)), lists, sum(len(p.findall(bare)) for p in _BOLD)]


def style_record(candidate: str, reference: str) -> dict[str, list[int]]:
    """A (candidate, item)'s style: both answers' :func:`answer_style` (what the ``styles``
    argument of :func:`style_controlled` maps ``(candidate, index)`` to)."""
    return {"candidate": answer_style(candidate), "reference": answer_style(reference)}


# --------------------------------------------------------------------------- LC win rate
def _preference(score: float) -> float:
    return 1.0 if score > 0 else 0.5 if score == 0 else 0.0


def _verdict(score: float) -> int:
    """A verdict of the -2..+2 scale; a mean ensemble's averaged verdict (0.5, -1.5...) goes to the
    nearest verdict of its sign, as the ensemble's counts do (judging/ensemble.py): a win stays a
    win, |v| >= 1.5 is a strong one."""
    if score == int(score):
        return int(score)
    return (2 if abs(score) >= 1.5 else 1) * (1 if score > 0 else -1)


#: the tables' legend of an LC cell that is not identified
LC_NOT_IDENTIFIED = ("n/i: not identified (LC: every answer of the candidate longer, or every one shorter, "
                     "than the reference's; SC: all on one side of the average length difference; summary.json "
                     "keeps the extrapolated figure)")
#: what a row's ``sc_note`` says when its SC score is not identified by its data
SC_EXTRAPOLATES = ("not identified: every answer's length, against the reference's, is {side} than the battles' "
                   "average, at which the SC score is read, so it extrapolates the length effect")
# --------------------------------------------------------------------------- style control, BT
def _style_matrix(rows: list) -> np.ndarray:
    """Style rows (each ``[length, headers, lists, bold]``) as a float matrix, read in one pass."""
    from itertools import chain

    try:
        return np.fromiter(chain.from_iterable(rows), dtype=float, count=4 * len(rows)).reshape(-1, 4)
    except (ValueError, TypeError):  # not four numbers a row: as np.array reads them
        return np.array(rows, dtype=float)


def _style_features(cand: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Arena-Hard-Auto's four style differences per battle (rows x 4) from both answers'
    [length, headers, lists, bold]; a zero denominator gives 0."""
    lc, lr = cand[:, 0], ref[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        length = np.where(lc + lr > 0, (lc - lr) / np.where(lc + lr > 0, lc + lr, 1.0), 0.0)
        dc = np.where(lc[:, None] > 0, cand[:, 1:] / np.where(lc > 0, lc, 1.0)[:, None], 0.0)
        dr = np.where(lr[:, None] > 0, ref[:, 1:] / np.where(lr > 0, lr, 1.0)[:, None], 0.0)
    return np.column_stack([length, (dc - dr) / (dc + dr + 1.0)])


Styles = Mapping[tuple[str, str], Mapping[str, Sequence[float]]]


def _battles(records: Sequence[Mapping[str, Any]], candidates: Sequence[str], styles: Styles | None = None):
    """(candidate code, item code, outcome, weight, style row or None) of every battle: the
    pairwise judgments of a (candidate, index) whose every order has a verdict (Arena-Hard-Auto
    drops a pair with a missing game); a much-better verdict weighs :data:`STRONG_WEIGHT`."""
    if isinstance(records, list):
        return _battles_columns(records, candidates, styles)
    rank = {c: i for i, c in enumerate(candidates)}
    groups: dict[tuple[str, str], list] = {}  # (model, index) -> its scores (None: a failed judgment)
    for r in records:
        if r.get("kind", "pairwise") == "pairwise":
            model = str(r.get("model", ""))
            if model in rank:
                key = (model, str(r["index"]))
                scores = groups.get(key)
                if scores is None:
                    scores = groups[key] = []
                scores.append(r.get("score"))
    items: dict[str, int] = {}
    rows = []
    styles = styles or {}
    outcome = {2: (1.0, float(STRONG_WEIGHT)), 1: (1.0, 1.0), 0: (0.5, 1.0), -1: (0.0, 1.0),
               -2: (0.0, float(STRONG_WEIGHT))}
    for (model, index), scores in groups.items():
        if None in scores:
            continue
        item = items.setdefault(index, len(items))
        style = styles.get((model, index))
        code = rank[model]
        for s in scores:
            s = _verdict(s)
            y, wt = outcome.get(s) or (_preference(s), float(STRONG_WEIGHT if abs(s) == 2 else 1))
            rows.append((code, item, y, wt, style))
    return rows, len(items)


def _first_order(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each key's number in order of first appearance, each number's first position)."""
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty(order.size, dtype=np.intp)
    renumber[order] = np.arange(order.size)
    return renumber[inverse.ravel()], first[order]


def _battles_columns(records: list, candidates: Sequence[str], styles: Styles | None):
    """:func:`_battles` from the records' shared columns (:mod:`.columns`): the same battles in the
    same order (grouped by (candidate, index) in order of first appearance, each group's judgments
    in record order)."""
    data, n_items = _battle_arrays(records, candidates, styles)
    if data is None:
        return [], 0
    code, item, y, wt, group, style_of = data
    return list(zip(code.tolist(), item.tolist(), y.tolist(), wt.tolist(),
                    map(style_of.__getitem__, group.tolist()))), n_items


def _battle_data(records: Sequence[Mapping[str, Any]], candidates: Sequence[str], styles: Styles | None = None,
                 rows: np.ndarray | None = None):
    """The battles as :func:`_battle_arrays` gives them, for any records (a list: from its shared
    columns, of the records where the mask ``rows`` is set, all without; else from
    :func:`_battles`' rows)."""
    if isinstance(records, list):
        return _battle_arrays(records, candidates, styles, rows)
    return _rows_as_arrays(_battles(records, candidates, styles))


def _rows_as_arrays(battles: tuple[list, int]):
    rows, n_items = battles
    if not rows:
        return None, n_items
    return ((np.array([r[0] for r in rows], dtype=np.intp), np.array([r[1] for r in rows], dtype=np.intp),
             np.array([r[2] for r in rows], dtype=float), np.array([r[3] for r in rows], dtype=float),
             np.arange(len(rows)), [r[4] for r in rows]), n_items)


def _battle_arrays(records: list, candidates: Sequence[str], styles: Styles | None, rows: np.ndarray | None = None):
    """((candidate code, item code, outcome, weight, style group per battle, each style group's
    style row or None) as arrays, items) of :func:`_battles` (None, 0 without battles), of the
    records where the mask ``rows`` is set (all without): the same as of a list of those records."""
    from .columns import columns

    col = columns(records)
    rank = {c: i for i, c in enumerate(candidates)}
    (mc, mnames), pw = col.model, col.is_pairwise
    known = np.array([rank.get(m, -1) for m in mnames], dtype=np.intp)
    use = pw & (known[mc] >= 0) if col.n else np.zeros(0, dtype=bool)
    pos = np.flatnonzero(use if rows is None else use & rows)
    if pos.size == 0:
        return None, 0
    ic, inames = col.index
    score = col.float_score[pos]
    raw = col.raw_score
    for i in pos[np.isnan(score)].tolist():
        if raw[i] is not None:
            float(raw[i])  # a score float() refuses raises, as the record walk does
    group, first = _first_order(mc[pos].astype(np.int64) * max(len(inames), 1) + ic[pos])
    first = pos[first]  # each group's first record, in the records' numbering
    failed = np.bincount(group, weights=np.isnan(score), minlength=first.size) > 0
    keep = ~failed[group]
    pos, score, group = pos[keep], score[keep], group[keep]
    if pos.size == 0:
        return None, 0
    gfirst = first[~failed]  # the kept groups' first records, in group order
    item_of_group = np.full(first.size, -1, dtype=np.intp)
    item_of_group[~failed], item_first = _first_order(ic[gfirst])
    order = np.argsort(group, kind="stable")
    pos, score, group = pos[order], score[order], group[order]
    whole = score == np.trunc(score)
    v = np.where(whole, score, np.where(np.abs(score) >= 1.5, 2.0, 1.0) * np.sign(score))
    y = np.where(v > 0, 1.0, np.where(v == 0, 0.5, 0.0))
    wt = np.where(np.abs(v) == 2, float(STRONG_WEIGHT), 1.0)
    styles = styles or {}
    get = styles.get
    style_of = [get((mnames[m], inames[i])) for m, i in zip(mc[first].tolist(), ic[first].tolist())]
    return (known[mc[pos]], item_of_group[group], y, wt, group, style_of), int(item_first.size)


def style_controlled(records: Sequence[Mapping[str, Any]], candidates: Sequence[str],
                     options: IntervalOptions | None = None, key: str = "", *, style: bool = True,
                     styles: Styles | None = None, battles: tuple[list, int] | None = None) -> dict[str, Any]:
    """One Bradley-Terry fit over every candidate's battles with the reference: with ``style``,
    Arena-Hard-Auto v2's style control (length and markdown; ``styles``: (candidate, index) ->
    :func:`style_record`, a battle without one left out); without, plain BT ratings.
    ``{"theta": {candidate: log-odds against the reference}, "coefs": {feature: coefficient},
    "boot": samples x candidates of resampled theta or None, "n": battles, "features": names}``;
    ``theta`` is None for a candidate with no battle; ``battles``: :func:`_battles` of the
    records, when the caller has them."""
    if battles is None:
        data, n_items = _battle_data(records, candidates, styles)
    elif isinstance(battles[0], list):  # :func:`_battles`' rows
        data, n_items = _rows_as_arrays(battles)
    else:  # :func:`_battle_data`'s arrays
        data, n_items = battles
    K = len(candidates)
    if data is not None:
        cand, item_of_row, y, w, group, style_of = data
        if style:
            has = np.array([s is not None for s in style_of], dtype=bool)
            keep = has[group]
            cand, item_of_row, y, w, group = cand[keep], item_of_row[keep], y[keep], w[keep], group[keep]
    n_rows = 0 if data is None else int(cand.size)
    out: dict[str, Any] = {"theta": {c: None for c in candidates}, "coefs": {}, "boot": None, "n": n_rows,
                           "features": [], "one_sided": {}}
    if not n_rows:
        return out
    present = np.unique(cand)
    column = np.zeros(K, dtype=np.intp)
    column[present] = np.arange(present.size)
    X = np.zeros((n_rows, 0))  # the features; the candidates' one-hot is added after merging rows
    names: list[str] = []
    if style:
        used, at = np.unique(group, return_inverse=True)  # each style group's style read once
        at = at.ravel()
        c = _style_matrix([style_of[g]["candidate"] for g in used.tolist()])[at]
        f = _style_matrix([style_of[g]["reference"] for g in used.tolist()])[at]
        S = _style_features(c, f)
        mean = (w[:, None] * S).sum(axis=0) / w.sum()
        # the score is read at the battles' average style (the features are centred): a candidate
        # whose every length feature lies on one side of that average has its score extrapolated
        for code in present:
            mine = S[cand == code, 0]
            if np.all(mine > mean[0] + 1e-12) or np.all(mine < mean[0] - 1e-12):
                out["one_sided"][candidates[code]] = "longer" if mine[0] > mean[0] else "shorter"
        # the standard deviation over the battles as Arena-Hard-Auto expands them (a strong
        # verdict three rows), unbiased; a feature that never varies cannot be fitted: left out
        var = (w[:, None] * (S - mean) ** 2).sum(axis=0) / max(w.sum() - 1.0, 1.0)
        keep = var > 1e-24
        S = (S[:, keep] - mean[keep]) / np.sqrt(var[keep])
        names = [n for n, k in zip(("length", "headers", "lists", "bold"), keep) if k]
        X = S
    G = len(present)
    X, y, w, item_of_row, group = _aggregate(X, y, w, item_of_row, group=column[cand])
    onehot = np.zeros((X.shape[0], G))
    onehot[np.arange(X.shape[0]), group] = 1.0
    X = np.column_stack([onehot, X])
    full = fit_logistic(X, y, w[None, :], groups=G)[0]
    for col, code in enumerate(present):
        out["theta"][candidates[code]] = float(full[col])
    out["coefs"] = {n: float(v) for n, v in zip(names, full[len(present):])}
    out["features"] = names
    if options is not None and options.bootstrap_samples:
        boot = _refit_groups(X, y, w, item_of_row, n_items, options, key, full, G)
        every = np.full((boot.shape[0], K), np.nan)
        every[:, present] = boot[:, :len(present)]
        out["boot"] = every
    return out


def _ranks(theta: np.ndarray) -> np.ndarray:
    """Rank 1 = best of each row (rows x candidates; NaN: no rank); ties share the better rank."""
    valid = ~np.isnan(theta)
    t = np.where(valid, theta, -np.inf)
    better = (t[:, None, :] > t[:, :, None]) & valid[:, None, :]
    return np.where(valid, 1.0 + better.sum(axis=2), np.nan)


def _judged(records: Sequence[Mapping[str, Any]], rows: np.ndarray | None = None) -> dict[str, tuple[list, list, list]]:
    """candidate -> (preference, length difference, item) of its pairwise judgments with a verdict
    and a length difference, in record order: what the LC win rate fits.  An item is its index
    (or, from the shared columns, the index's code: the same items in the same order).  ``rows``:
    a mask of a list's records to read (as a list of those records would be read)."""
    judged: dict[str, tuple[list, list, list]] = {}
    if isinstance(records, list):
        from .columns import columns

        col = columns(records)
        raw = col.raw_score
        use = col.is_pairwise & ~np.isnan(col.length_diff)
        pos = np.flatnonzero(use if rows is None else use & rows)
        score = col.float_score[pos]
        pref = np.where(score > 0, 1.0, np.where(score == 0, 0.5, 0.0))  # _preference of each
        keep = ~np.isnan(score)
        for k in np.flatnonzero(~keep).tolist():  # None (left out), or a score float() refuses or NaN
            if raw[pos[k]] is not None:
                pref[k], keep[k] = _preference(raw[pos[k]]), True
        pos, pref = pos[keep], pref[keep]
        (mc, mnames), (ic, _) = col.model, col.index
        m = mc[pos]
        for code in np.unique(m).tolist():
            mine = m == code
            judged[mnames[code]] = (pref[mine].tolist(), col.length_diff[pos[mine]].tolist(), ic[pos[mine]].tolist())
        return judged
    for r in records:
        if r.get("kind", "pairwise") == "pairwise" and r.get("score") is not None and r.get("length_diff") is not None:
            p, d, i = judged.setdefault(str(r.get("model", "")), ([], [], []))
            p.append(_preference(r["score"]))
            d.append(float(r["length_diff"]))
            i.append(str(r["index"]))
    return judged


def controlled_rows(records: Sequence[Mapping[str, Any]], judge: str, candidates: Sequence[str],
                    options: IntervalOptions, styles: Styles | None = None) -> list[dict[str, Any]]:
    """Per candidate, one judge's (or the ensemble's) LC win rate, SC score, BT rating and rank,
    each with its interval (``<figure>_ci_low`` / ``_ci_high``; none when intervals are off);
    ``styles`` as :func:`style_controlled` reads them (no SC score without)."""
    level = options.interval_level
    battles = _battle_data(records, candidates, styles)  # one pass over the records for both fits
    sc = style_controlled(records, candidates, options, f"sc:{judge}", style=True, styles=styles, battles=battles)
    bt = style_controlled(records, candidates, options, f"bt:{judge}", style=False, battles=battles)
    bt_theta = np.array([np.nan if bt["theta"][c] is None else bt["theta"][c] for c in candidates])
    full_rank = _ranks(bt_theta[None, :])[0]
    boot_rank = _ranks(bt["boot"]) if bt["boot"] is not None else None
    judged = _judged(records)
    # one bootstrap key for the judge's candidates: each one's resamples depend only on it and the
    # candidate's number of items, and candidates with the same items share one draw (lc_win_rates)
    lcs = lc_win_rates([judged.get(c, ([], [], [])) for c in candidates], options,
                       [f"lc:{judge}"] * len(candidates))
    rows = []
    for k, c in enumerate(candidates):
        preference, diff, index = judged.get(c, ([], [], []))
        row: dict[str, Any] = {"judge": judge, "model": c}
        # n: the candidate's distinct items judged; small_n: too few for one of the row's intervals
        # (judging.honest; the LC and SC figures need more items than the others: set below)
        row["items"] = len(set(index))
        row["small_n"] = row["items"] < options.min_items_for_interval
        row.update(lcs[k])

        def put(name, value, boot):
            row[name] = value
            lo = hi = None
            if value is not None and boot is not None and not np.isnan(boot).all():
                lo, hi = (float(v) for v in _quantiles(boot[~np.isnan(boot)], level))
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = lo, hi

        t = sc["theta"][c]
        put("sc_score", None if t is None else 100.0 * float(_sigmoid(np.array(t))),
            None if sc["boot"] is None else 100.0 * _sigmoid(sc["boot"][:, k]))
        t = bt["theta"][c]
        put("bt_rating", None if t is None else ELO_BASE + ELO_SCALE * t,
            None if bt["boot"] is None else ELO_BASE + ELO_SCALE * bt["boot"][:, k])
        put("rank", None if np.isnan(full_rank[k]) else int(full_rank[k]),
            None if boot_rank is None else boot_rank[:, k])
        row["sc_n"], row["style_coefs"] = sc["n"], sc["coefs"]
        side = sc["one_sided"].get(c)
        row["sc_identified"] = side is None
        row["sc_note"] = None if side is None else SC_EXTRAPOLATES.format(side=side)
        shown = [f for f in ("lc_win_rate", "sc_score") if row[f] is not None]
        row["small_n"] = row["items"] < min_items_for(options, shown)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- results pieces
#: what summary["controlled"]["method"] says each figure is
METHOD = {
    "lc_win_rate": "AlpacaEval 2 length-controlled win rate: logistic GLM of the judge's preference on the "
                   "candidate term and tanh(length difference / sd), L1-penalised with the strength chosen by "
                   "5-fold cross-validation over items, predicted with no length difference (percent); "
                   "lc_identified false: every length difference has one sign and the figure extrapolates; its interval: "
                   "the unpenalised fit's percentile interval over resampled items, stretched to hold the point",
    "sc_score": "Arena-Hard-Auto v2 style control: Bradley-Terry fit with length, header, list and bold "
                "features; the candidate's win probability against the reference without them (percent)",
    "sc_identified": "false: every one of the candidate's length features lies on one side of the battles' "
                     "average (where the SC score is read), so its score extrapolates the length effect",
    "bt_rating": "Bradley-Terry rating on the Elo scale (reference 1000; much better counts 3, tie 0.5); a "
                 "candidate winning (losing) every battle, in the data or a resample, has no finite rating: its "
                 "log-odds are held at 30 and the tables print inf (-inf)",
    "rank": "rank among the candidates by BT rating (1 best)",
}


#: the controlled figures whose judge-induced spread a run with judge repeats shows: (key, column, digits)
SPREAD_FIGURES = (("lc_win_rate", "LC win %", 1), ("sc_score", "SC %", 1), ("bt_rating", "BT rating", 0))


def controlled_spread(records: Sequence[Mapping[str, Any]], judge: str, candidates: Sequence[str],
                      options: IntervalOptions, styles: Styles | None, repeats: int, *,
                      lc_c: Mapping[str, float | None] | None = None) -> dict[str, dict[str, float | None]]:
    """candidate -> ``F_repeat_sd`` and ``F_repeat_range`` for each figure ``F`` of
    :data:`SPREAD_FIGURES`: each figure fitted on each repeat's judgments alone (the point fit,
    no bootstrap), then the SD (``k - 1`` in the denominator) and range of the repeats' figures,
    as :mod:`.repeats` does for the other figures.  Each repeat's LC win rate is fitted at the
    inverse strength cross-validation chose on every repeat's judgments pooled (``lc_c``:
    candidate -> the pooled row's ``lc_c``; chosen here when not given), not chosen again per
    repeat: the spread measures the judge's sampling, not the choice of the penalty on a third of
    the data.  A repeat where the figure is undefined, or a BT rating has no finite value (held
    at the cap), is left out; below two repeats left, None.  Empty below two repeats.  (``options``
    goes unread: the point fits draw no resamples.)"""
    if repeats < 2:
        return {}
    # each repeat's records: of a list, a mask over its shared columns; else the records themselves
    by_repeat: dict[int, Any] = {}
    if isinstance(records, list):
        from .columns import columns

        rep = columns(records).repeat
        for k in np.unique(rep).tolist():
            by_repeat[int(k)] = rep == k
    else:
        for r in records:
            by_repeat.setdefault(int(r.get("repeat", 0)), []).append(r)

    def of_repeat(k):  # (records, mask) of repeat k
        if isinstance(records, list):
            return records, by_repeat.get(k, np.zeros(len(records), dtype=bool))
        return by_repeat.get(k, []), None

    if lc_c is None:
        judged = _judged(records)
        pooled = lc_win_rates([judged.get(c, ([], [], [])) for c in candidates])
        lc_c = {c: r["lc_c"] for c, r in zip(candidates, pooled)}
    # every repeat's LC win rates at once (each repeat's candidates in order)
    per_repeat = [_judged(*of_repeat(rep)) for rep in range(repeats)]
    lcs = lc_win_rates([j.get(c, ([], [], [])) for j in per_repeat for c in candidates],
                       cs=[lc_c.get(c) for _ in per_repeat for c in candidates])
    values: dict[str, dict[str, list[float]]] = {c: {f: [] for f, _, _ in SPREAD_FIGURES} for c in candidates}
    for rep in range(repeats):
        recs, mask = of_repeat(rep)
        battles = _battle_data(recs, candidates, styles, mask)
        sc = style_controlled(recs, candidates, None, style=True, styles=styles, battles=battles)["theta"]
        bt = style_controlled(recs, candidates, None, style=False, battles=battles)["theta"]
        for k, c in enumerate(candidates):
            figures = {"lc_win_rate": lcs[rep * len(candidates) + k]["lc_win_rate"],
                       "sc_score": None if sc[c] is None else 100.0 * float(_sigmoid(np.array(sc[c]))),
                       "bt_rating": None if bt[c] is None else ELO_BASE + ELO_SCALE * bt[c]}
            for f, _, _ in SPREAD_FIGURES:
                v = figures[f]
                if v is None or not np.isfinite(v):
                    continue
                if f == "bt_rating" and abs((v - ELO_BASE) / ELO_SCALE) >= LOGIT_CAP - 1e-6:
                    continue
                values[c][f].append(float(v))
    out: dict[str, dict[str, float | None]] = {}
    for c, per in values.items():
        got: dict[str, float | None] = {}
        for f, vs in per.items():
            two = len(vs) >= 2
            got[f"{f}_repeat_sd"] = float(np.std(vs, ddof=1)) if two else None
            got[f"{f}_repeat_range"] = float(max(vs) - min(vs)) if two else None
        out[c] = got
    return out


def controlled_summary(everyone: Mapping[str, Sequence[Mapping[str, Any]]], judges: Sequence[str],
                       candidates: Sequence[str], options: IntervalOptions, styles: Styles | None = None,
                       repeats: int = 1) -> dict[str, Any]:
    """``summary["controlled"]``: :func:`controlled_rows` of each of ``judges`` (the first judge
    and, for a panel, the ensemble) and what each figure is; with ``repeats`` k > 1, each row
    also has its figures' judge-induced spread (:func:`controlled_spread`)."""
    rows = []
    for j in judges:
        mine = controlled_rows(everyone[j], j, candidates, options, styles)
        spread = controlled_spread(everyone[j], j, candidates, options, styles, repeats,
                                   lc_c={r["model"]: r["lc_c"] for r in mine})
        for r in mine:
            r.update(spread.get(r["model"], {}))
        rows += mine
    out: dict[str, Any] = {"method": METHOD, "results": rows}
    if repeats > 1:
        out["judge_repeats"] = repeats
    return out


def _fig(value, low, high, digits: int = 1) -> str:
    if value is None:
        return "-"
    text = f"{value:.{digits}f}"
    return text if low is None or high is None else f"{text} [{low:.{digits}f}, {high:.{digits}f}]"


def rating_text(value, low=None, high=None) -> str:
    """A BT rating with its interval, ``inf`` (``-inf``) where the fit has no finite rating (a
    candidate that wins, or loses, every battle, in the data or in a resample: the log-odds are
    held at :data:`LOGIT_CAP` there, whose Elo figure would mean nothing)."""
    def one(v):
        t = (v - ELO_BASE) / ELO_SCALE
        return "inf" if t >= LOGIT_CAP - 1e-6 else "-inf" if t <= -LOGIT_CAP + 1e-6 else f"{v:.0f}"

    if value is None:
        return "-"
    return one(value) if low is None or high is None else f"{one(value)} [{one(low)}, {one(high)}]"


def controlled_display(r: Mapping[str, Any], *, judge: bool = False) -> dict[str, Any]:
    """A printed row: the candidate's n (its items; ``!`` when too few for one of its intervals), LC win
    rate, SC score and BT rating with their intervals, the rank's range."""
    rank = "-" if r["rank"] is None else str(r["rank"])
    if r["rank"] is not None and r.get("rank_ci_low") is not None:
        lo, hi = int(r["rank_ci_low"]), int(r["rank_ci_high"])
        rank += f" [{lo}, {hi}]"
    row: dict[str, Any] = {"judge": r["judge"]} if judge else {}
    row["model"] = r["model"]
    if "items" in r:
        row["n"] = f"{r['items']}{'!' if r.get('small_n') else ''}"
    row["LC win %"] = ("n/i" if r.get("lc_identified") is False
                       else _fig(r["lc_win_rate"], r["lc_win_rate_ci_low"], r["lc_win_rate_ci_high"]))
    row["SC %"] = ("n/i" if r.get("sc_identified") is False
                   else _fig(r["sc_score"], r["sc_score_ci_low"], r["sc_score_ci_high"]))
    row["BT rating"] = rating_text(r["bt_rating"], r["bt_rating_ci_low"], r["bt_rating_ci_high"])
    row["rank"] = rank
    return row


def controlled_spread_table(controlled: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]], str] | None:
    """(title, rows, note) of the controlled figures' judge-induced spread (:func:`controlled_spread`):
    per judge and candidate, each figure's SD between repeats with its range (``n/i`` where the
    figure itself is not identified); None without repeats."""
    rows = []
    for r in controlled.get("results") or []:
        if "bt_rating_repeat_sd" not in r:
            continue
        row: dict[str, Any] = {"judge": r["judge"], "model": r["model"]}
        for f, col, digits in SPREAD_FIGURES:
            hidden = {"lc_win_rate": "lc_identified", "sc_score": "sc_identified"}.get(f)
            row[col] = "n/i" if hidden and r.get(hidden) is False else repeat_cell(r, f, digits)
        rows.append(row)
    if not rows:
        return None
    k = controlled.get("judge_repeats")
    title = f"LC/SC/BT spread over {k} repeats: SD (range)" if k else "LC/SC/BT spread over repeats: SD (range)"
    note = ("each figure fitted on each repeat's judgments alone; SD and range across repeats (the judge's own "
            "sampling); a BT rating without a finite value in a repeat is left out of it")
    return title, rows, note


def controlled_table(controlled: Mapping[str, Any], panel: bool) -> tuple[str, list[dict[str, Any]]]:
    """The printed table of ``summary["controlled"]`` (with the judge column for a panel)."""
    title = ("Length-controlled win rate (AlpacaEval 2), style-controlled score (Arena-Hard-Auto), "
             "Bradley-Terry rating and rank")
    if any(r.get("lc_identified") is False or r.get("sc_identified") is False for r in controlled["results"]):
        title += f"; {LC_NOT_IDENTIFIED}"
    return title, [controlled_display(r, judge=panel) for r in controlled["results"]]


def controlled_report_table(summary: Mapping[str, Any]):
    """report.json's / report.html's table of ``summary["controlled"]`` (None when absent)."""
    controlled = summary.get("controlled")
    if not controlled or not controlled.get("results"):
        return None
    panel = len({r["judge"] for r in controlled["results"]}) > 1
    coefs = "; ".join(f"{r['judge']}: " + ", ".join(f"{k} {v:+.2f}" for k, v in r["style_coefs"].items())
                      for r in controlled["results"] if r["model"] == controlled["results"][0]["model"]
                      and r.get("style_coefs"))
    note = ("LC win %: AlpacaEval 2's length-controlled win rate (a logistic GLM on the candidate term and "
            "tanh(length difference / sd), L1-penalised with the strength chosen by 5-fold cross-validation, "
            "predicted with no length difference); SC %: Arena-Hard-Auto v2's "
            "style-controlled win probability against the reference (a Bradley-Terry fit with length, header, "
            "list and bold features, reported without them); BT rating: Bradley-Terry on the Elo scale, the "
            "reference at 1000; rank among the candidates; [a, b]: the item-bootstrap interval; n: the "
            "candidate's items, marked ! when too few for one of the row's intervals (LC under "
            f"{FIGURE_MIN_ITEMS['lc_win_rate']}, SC under {FIGURE_MIN_ITEMS['sc_score']} items, any under the "
            "run's min_items_for_interval)"
            + (f"; {LC_NOT_IDENTIFIED}" if any(r.get("lc_identified") is False or r.get("sc_identified") is False
                                               for r in controlled["results"])
               else "")
            + (f"; style coefficients (standardised features) {coefs}" if coefs else ""))
    return Table(controlled_table(controlled, panel)[0], [controlled_display(r, judge=panel)
                                                          for r in controlled["results"]], note=note)


def bt_rows(records: Sequence[Mapping[str, Any]], candidates: Sequence[str], options: IntervalOptions,
            key: str) -> list[dict[str, Any]]:
    """Per candidate, the Bradley-Terry rating (Elo scale, the reference at 1000) and rank of one
    fit over ``records`` (as :func:`style_controlled` reads them), each with its item-bootstrap
    interval (``_ci_low`` / ``_ci_high``; None when intervals are off), and ``battles``: the
    candidate's battles with the reference (a much-better verdict counted once)."""
    battles = _battle_data(records, candidates)
    bt = style_controlled(records, candidates, options, key, style=False, battles=battles)
    theta = np.array([np.nan if bt["theta"][c] is None else bt["theta"][c] for c in candidates])
    full_rank = _ranks(theta[None, :])[0]
    boot_rank = _ranks(bt["boot"]) if bt["boot"] is not None else None
    count = (np.zeros(len(candidates), dtype=np.intp) if battles[0] is None
             else np.bincount(battles[0][0], minlength=len(candidates)))
    rows = []
    for k, c in enumerate(candidates):
        row: dict[str, Any] = {"model": c}
        for name, value, boot in (
                ("bt_rating", None if np.isnan(theta[k]) else ELO_BASE + ELO_SCALE * float(theta[k]),
                 None if bt["boot"] is None else ELO_BASE + ELO_SCALE * bt["boot"][:, k]),
                ("rank", None if np.isnan(full_rank[k]) else int(full_rank[k]),
                 None if boot_rank is None else boot_rank[:, k])):
            row[name] = value
            lo = hi = None
            if value is not None and boot is not None and not np.isnan(boot).all():
                lo, hi = (float(v) for v in _quantiles(boot[~np.isnan(boot)], options.interval_level))
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = lo, hi
        row["battles"] = int(count[k])
        rows.append(row)
    return rows
