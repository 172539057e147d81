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
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..report.doc import Table
from . import l1_logistic
from .intervals import _draws, _rng
from .repeats import repeat_cell
from .uncertainty import FIGURE_MIN_ITEMS, IntervalOptions, min_items_for

__all__ = ["answer_style", "style_record", "fit_logistic", "lc_win_rate", "lc_win_rates", "style_controlled", "controlled_rows",
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


# --------------------------------------------------------------------------- the fit
#: the largest log-odds a candidate that (almost) always wins or loses is given
LOGIT_CAP = 30.0


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow


def _pairs(X: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The columns X_i * X_j (i <= j) that are not all zero, and their (i, j)."""
    cols, where = [], []
    for i in range(X.shape[1]):
        for j in range(i, X.shape[1]):
            c = X[:, i] * X[:, j]
            if np.any(c):
                cols.append(c)
                where.append((i, j))
    return (np.stack(cols, axis=1) if cols else np.zeros((X.shape[0], 0))), where


def fit_logistic(X: np.ndarray, y: np.ndarray, W: np.ndarray, start: np.ndarray | None = None, *,
                 max_iter: int = 60, tol: float = 1e-10, groups: int = 0) -> np.ndarray:
    """Maximum-likelihood coefficients (no intercept) of ``P = sigmoid(X beta)`` for outcomes
    ``y`` in [0, 1] (a tie 0.5) with row weights ``W`` (fits x rows: B fits at once), by Newton's
    method from ``start`` (zeros); returns B x p.  ``groups`` G > 0: X's first G columns are a
    one-hot of each row's group with the rows sorted by group and every group present (the
    candidates of a Bradley-Terry fit), which the sums then use instead of products with zeros.
    A candidate that always wins drifts to large coefficients (its probability to 1), never to
    NaN."""
    X = np.asarray(X, dtype=float)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    B, p = W.shape[0], X.shape[1]
    beta = np.zeros((B, p)) if start is None else np.broadcast_to(np.asarray(start, dtype=float), (B, p)).copy()
    if p == 0:
        return beta
    G = groups
    S = X[:, G:]  # the columns that are not a group's one-hot
    Z, where = _pairs(S)
    ii = np.array([i for i, _ in where], dtype=int) + G
    jj = np.array([j for _, j in where], dtype=int) + G
    if G:
        group = np.argmax(X[:, :G], axis=1)
        starts = np.flatnonzero(np.r_[True, np.diff(group) != 0])
        if starts.size != G or np.any(np.diff(group) < 0):
            raise ValueError("groups: the rows must be sorted by group, every group present")

    def by_group(m):  # B x rows -> B x G sums
        return np.add.reduceat(m, starts, axis=1)

    if G and G == p:  # groups alone: each group's fit is the logit of its weighted mean outcome
        wins, total = by_group(W * y), by_group(W)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(total > 0, wins / np.where(total > 0, total, 1.0), np.nan)
            fitted = np.clip(np.log(share) - np.log1p(-share), -LOGIT_CAP, LOGIT_CAP)
        return np.where(np.isnan(share), beta, fitted)

    def times_x(m):  # m @ X
        return np.concatenate([by_group(m), m @ S], axis=1) if G else m @ X

    ridge = 1e-12 * np.eye(p)
    wyx = times_x(W * y)  # the gradient's constant part
    diag = np.arange(G)
    for _ in range(max_iter):
        eta = beta[:, G:] @ S.T
        if G:
            eta += beta[:, group]
        prob = _sigmoid(eta)
        q = W * prob
        grad = wyx - times_x(q)
        q -= q * prob  # W p (1 - p)
        H = np.zeros((B, p, p))
        if G:
            H[:, diag, diag] = by_group(q)
            for j in range(S.shape[1]):
                cross = by_group(q * S[:, j])
                H[:, diag, G + j] = cross
                H[:, G + j, diag] = cross
        if where:
            h = q @ Z
            H[:, ii, jj] = h
            H[:, jj, ii] = h
        # a saturated fit (probabilities at 0 or 1) has a vanishing curvature: a small floor keeps
        # the system solvable, the clip keeps a separated direction's growth finite
        scale = np.maximum(np.abs(np.diagonal(H, axis1=1, axis2=2)).max(axis=1), 1e-6)[:, None, None]
        step = np.linalg.solve(H + ridge * scale, grad[..., None])[..., 0]
        step = np.clip(np.nan_to_num(step, nan=0.0, posinf=10.0, neginf=-10.0), -10.0, 10.0)
        beta = np.clip(beta + step, -LOGIT_CAP * 10, LOGIT_CAP * 10)
        if np.max(np.abs(step)) < tol:
            break
    return beta


def _unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, axis=0, return_index=True, return_inverse=True)``'s index and inverse (the
    distinct rows in lexicographic order, each one's first row; each row's distinct row), by a
    stable lexicographic sort of the columns, which is several times faster than sorting the rows
    as records."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    order = np.lexsort(keys.T[::-1])
    s = keys[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def _aggregate(X: np.ndarray, y: np.ndarray, w: np.ndarray, item_of_row: np.ndarray, groups: int = 0, *,
               group: np.ndarray | None = None):
    """The rows that share an item and a design row merged into one (weights summed, outcome their
    weighted mean): the same likelihood for every resample, as an item's rows are resampled
    together, with fewer rows to fit.  Rows come sorted by their group (``groups``: X's first
    columns are a one-hot of it; or ``group``, each row's group, X without it: then each merged
    row's group is returned too), then item."""
    given = group is not None
    if not given:
        group = np.argmax(X[:, :groups], axis=1) if groups else np.zeros(X.shape[0], dtype=np.intp)
    # the one-hot columns are the group's: equal wherever the group is, so they are left out of the keys.
    # Where every (group, item)'s rows share one design row (the features are the item's), those
    # pairs alone are the distinct rows, in the same order: found by one integer sort
    _, first, inverse = np.unique(group.astype(np.int64) * (int(item_of_row.max(initial=0)) + 1) + item_of_row,
                                  return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if not np.array_equal(X[first][inverse, groups:], X[:, groups:]):
        keys = np.column_stack([group[:, None].astype(float), item_of_row[:, None].astype(float), X[:, groups:]])
        first, inverse = _unique_rows(keys)
    m = first.size
    wsum = np.bincount(inverse, weights=w, minlength=m)
    ysum = np.bincount(inverse, weights=w * y, minlength=m)
    yy = np.where(wsum > 0, ysum / np.where(wsum > 0, wsum, 1.0), 0.5)
    if given:
        return X[first], yy, wsum, item_of_row[first], group[first]
    return X[first], yy, wsum, item_of_row[first]


def _style_matrix(rows: list) -> np.ndarray:
    """Style rows (each ``[length, headers, lists, bold]``) as a float matrix, read in one pass."""
    from itertools import chain

    try:
        return np.fromiter(chain.from_iterable(rows), dtype=float, count=4 * len(rows)).reshape(-1, 4)
    except (ValueError, TypeError):  # not four numbers a row: as np.array reads them
        return np.array(rows, dtype=float)


def _quantiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1.0 - level) / 2.0
    q = np.quantile(values, [tail, 1.0 - tail], axis=0)
    return q[0], q[1]


def _boot_counts(n_items: int, options: IntervalOptions, key: str, block: int = 128):
    """Each resample's count of each item (block x items), in blocks."""
    for idx in _draws(_rng(options.bootstrap_seed, key), n_items, options.bootstrap_samples):
        for s in range(0, idx.shape[0], block):
            part = idx[s:s + block]
            k = part.shape[0]
            yield np.bincount((part + (np.arange(k) * n_items)[:, None]).ravel(),
                              minlength=k * n_items).reshape(k, n_items).astype(float)


def _boot_weights(n_items: int, item_of_row: np.ndarray, options: IntervalOptions, key: str, block: int = 128):
    """Row weights of every resample, in blocks: each resample's count of each row's item."""
    for counts in _boot_counts(n_items, options, key, block):
        yield counts[:, item_of_row]


#: a resample's fit stops when no coefficient moves more than this (figures printed to 0.1)
BOOT_TOL = 1e-7


def _refit(X, y, w, item_of_row, n_items, options, key, full, warm_iter: int = 12, groups: int = 0) -> np.ndarray:
    """The coefficients of every resample (samples x p), each started at the full fit (rows as
    :func:`_aggregate` gives them)."""
    return np.concatenate([fit_logistic(X, y, W * w, full, max_iter=warm_iter, tol=BOOT_TOL, groups=groups)
                           for W in _boot_weights(n_items, item_of_row, options, key)])


#: a resample of a Bradley-Terry fit stops once its last Newton step moved no coefficient more than
#: this: Newton's quadratic convergence (each step about half the square of the one before on
#: these fits) leaves it within about 1e-8 of its minimiser, 1e-6 of a percentage point
BOOT_STEP = 1e-4


def _schur_step(gt, gb, Hd, Hc, Ha):
    """The Newton step of a Bradley-Terry fit with features: the Hessian's candidate block is
    diagonal (``Hd``, B x G), so the features' F x F system is solved first (its Schur complement)
    and the candidates' steps follow.  ``gt``/``gb`` the gradient's candidate and feature parts,
    ``Hc`` B x G x F, ``Ha`` B x F x F."""
    Hd = np.maximum(Hd, 1e-12 * np.maximum(Hd.max(axis=1, keepdims=True), 1e-6))
    F = gb.shape[1]
    if F:
        CD = Hc / Hd[:, :, None]
        M = Ha - np.einsum("bgf,bgh->bfh", Hc, CD)
        M += np.eye(F) * (1e-12 * np.maximum(np.abs(np.diagonal(M, axis1=1, axis2=2)).max(axis=1), 1e-6))[:, None, None]
        db = np.linalg.solve(M, (gb - np.einsum("bgf,bg->bf", CD, gt))[..., None])[..., 0]
        dt = (gt - np.einsum("bgf,bf->bg", Hc, db)) / Hd
    else:
        db, dt = gb, gt / Hd
    step = np.nan_to_num(np.concatenate([dt, db], axis=1), nan=0.0, posinf=10.0, neginf=-10.0)
    return np.clip(step, -10.0, 10.0)


#: resamples whose candidates x items grid a Bradley-Terry refit evaluates at once
GRID_CHUNK = 32


def _refit_groups(X, y, w, item_of_row, n_items, options, key, full, G, max_iter: int = 12) -> np.ndarray:
    """:func:`_refit` of a Bradley-Terry fit (X's first G columns the candidates' one-hot, the rest
    features), fast: with one row per (candidate, item), a resample's weights are its item counts
    times the rows' weights, so every sum is over a candidates x items grid; the first Newton step
    from the full fit needs only the counts times per-item sums (the probabilities are the full
    fit's), later steps evaluate the grid for the resamples whose last step exceeded
    :data:`BOOT_STEP`.
    The same minimiser as :func:`_refit`, at a fraction of the cost."""
    group = np.argmax(X[:, :G], axis=1)
    cell = group * n_items + item_of_row
    if np.unique(cell).size != cell.size:
        return _refit(X, y, w, item_of_row, n_items, options, key, full, groups=G)
    S = X[:, G:]
    F, I = S.shape[1], n_items
    Wg = np.zeros(G * I)
    Wg[cell] = w
    Yg = np.zeros(G * I)
    Yg[cell] = y
    Sg = np.zeros((G * I, F))
    Sg[cell] = S
    Wg, Yg, Sg = Wg.reshape(G, I), Yg.reshape(G, I), Sg.reshape(G, I, F)
    SS = (Sg[:, :, :, None] * Sg[:, :, None, :]).reshape(G * I, F * F)
    theta0, beta0 = full[:G], full[G:]
    if F == 0:  # candidates alone: each one's fit is the logit of its resampled weighted win share
        out = []
        for counts in _boot_counts(I, options, key):
            wins, total = counts @ (Wg * Yg).T, counts @ Wg.T
            with np.errstate(invalid="ignore", divide="ignore"):
                share = wins / total
                fitted = np.clip(np.log(share) - np.log1p(-share), -LOGIT_CAP, LOGIT_CAP)
            out.append(np.where(total > 0, fitted, theta0[None, :]))
        return np.concatenate(out)
    p0 = _sigmoid(theta0[:, None] + Sg @ beta0)
    r0, q0 = Wg * (Yg - p0), Wg * p0 * (1.0 - p0)
    # per item: the sums of the first step, to be weighted by each resample's counts
    item_gt, item_gb = r0.T, np.einsum("gi,gif->if", r0, Sg)
    item_Hd, item_Hc = q0.T, (q0[:, :, None] * Sg).transpose(1, 0, 2).reshape(I, G * F)
    item_Ha = np.einsum("gi,gif,gih->ifh", q0, Sg, Sg).reshape(I, F * F)
    Wg32, Yg32, Sg32, SS32 = (a.astype(np.float32) for a in (Wg, Yg, Sg, SS))
    out = []
    for counts in _boot_counts(I, options, key):
        counts32 = counts.astype(np.float32)
        B = counts.shape[0]
        step = _schur_step(counts @ item_gt, counts @ item_gb, counts @ item_Hd,
                           (counts @ item_Hc).reshape(B, G, F), (counts @ item_Ha).reshape(B, F, F))
        coef = np.broadcast_to(full, (B, G + F)) + step
        live = np.abs(step).max(axis=1) >= BOOT_STEP
        for _ in range(max_iter - 1):
            idx = np.flatnonzero(live)
            if idx.size == 0:
                break
            n = idx.size
            # the grid in float32 (half the memory traffic), a few resamples at a time so that their
            # grids stay in the cache; the sums and the steps in float64.  The curvature's feature
            # block is one product over every resample's grid (its float32 sums depend on how many
            # resamples a product takes)
            gt, gb, Hd, Hc = np.empty((n, G)), np.empty((n, F)), np.empty((n, G)), np.empty((n, G, F))
            q_all = np.empty((n, G, I), dtype=np.float32)
            for s in range(0, n, GRID_CHUNK):
                part = idx[s:s + GRID_CHUNK]
                k = part.size
                eta = np.tensordot(coef[part, G:].astype(np.float32), Sg32, axes=([1], [2]))
                eta += coef[part, :G, None].astype(np.float32)
                prob = eta  # _sigmoid, in place
                prob *= 0.5
                np.tanh(prob, out=prob)
                prob += 1.0
                prob *= 0.5
                Wb = counts32[part][:, None, :] * Wg32[None]
                r = Yg32[None] - prob
                r *= Wb
                q = q_all[s:s + k]
                np.subtract(1.0, prob, out=q)
                q *= prob
                q *= Wb
                gt[s:s + k] = r.sum(axis=2, dtype=float)
                gb[s:s + k] = r.reshape(k, G * I) @ Sg32.reshape(G * I, F)
                Hd[s:s + k] = q.sum(axis=2, dtype=float)
                Hc[s:s + k] = np.matmul(q.transpose(1, 0, 2), Sg32).transpose(1, 0, 2)
            step = _schur_step(gt, gb, Hd, Hc, (q_all.reshape(n, G * I) @ SS32).reshape(n, F, F).astype(float))
            coef[idx] = np.clip(coef[idx] + step, -LOGIT_CAP * 10, LOGIT_CAP * 10)
            live[idx[np.abs(step).max(axis=1) < BOOT_STEP]] = False
        out.append(coef)
    return np.concatenate(out)


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
#: what a row's ``lc_note`` says when its LC win rate is not identified by its data
LC_EXTRAPOLATES = ("not identified: every answer is {side} than the reference's, so the figure extrapolates "
                   "to a length difference the data never had")


def lc_win_rate(preference: Sequence[float], length_diff: Sequence[float], items: Sequence[Any] | None = None,
                options: IntervalOptions | None = None, key: str = "", *, penalised: bool = True) -> dict[str, Any]:
    """AlpacaEval 2's length-controlled win rate of one candidate from its judgments
    (``preference`` 1 / 0.5 / 0 for the candidate; ``length_diff`` the answers' length
    difference; ``items`` each judgment's item, for the folds and the interval).  ``penalised``:
    AlpacaEval's L1-penalised fit with the strength chosen by 5-fold cross-validation over items
    (:mod:`.l1_logistic`); off, the plain maximum-likelihood fit.  ``lc_win_rate`` (percent),
    ``length_coef`` (per unit of the tanh feature), ``lc_c`` (the chosen inverse strength),
    ``lc_n``, ``lc_identified`` (False when every length difference has one sign: the figure is a
    prediction at a length difference never seen) with ``lc_note``, and with ``options`` the
    bootstrap interval: the percentile interval of the unpenalised (maximum-likelihood) fit over
    the resampled items, the length scale held at the full data's, stretched to hold the point.

    Why not the penalised fit's resamples: the figure estimates the candidate's length-controlled
    win rate, which the penalised fit reaches as the items grow (cross-validation then picks an
    ever weaker penalty); at 25-50 items it often picks a strong one that pulls the point toward
    50 (at the weakest strength of the grid the candidate term is exactly 0), and resamples
    refitted at that same strength share the pull and ignore the choice, so their interval
    covered 71 % at 25 items and 86-89 % at 50 of a nominal 95 % (``perf/coverage.py``).  The
    unpenalised fit's resamples cover 93-95 % from 25 items; the point keeps AlpacaEval's
    penalty and lies inside their interval in 98 % of runs at 25 items (the stretch covers the
    rest)."""
    return lc_win_rates([(preference, length_diff, items)], options, [key], penalised=penalised)[0]


def _item_codes(items: Sequence[Any]) -> np.ndarray:
    """Each item's number in order of first appearance."""
    arr = np.asarray(items) if len(items) else np.zeros(0, dtype=np.intp)
    if arr.ndim == 1 and arr.dtype.kind in "iuU":
        from .columns import first_order

        return first_order(arr)[0]
    codes: dict[Any, int] = {}
    return np.array([codes.setdefault(i, len(codes)) for i in items], dtype=np.intp)


def _lc_data(preference, length_diff, items, out: dict[str, Any]):
    """One candidate's LC design (:func:`_aggregate`'s rows: X, y, w, item of each row) and its
    number of items, ``out``'s identification flag and note set; None without judgments."""
    y = np.asarray(preference, dtype=float)
    d = np.asarray(length_diff, dtype=float)
    if y.size == 0:
        return None
    sd = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
    if sd > 0 and np.isfinite(sd):
        X = np.column_stack([np.ones_like(d), np.tanh(d / sd)])
        if np.all(d > 0) or np.all(d < 0):
            out["lc_identified"] = False
            out["lc_note"] = LC_EXTRAPOLATES.format(side="longer" if d[0] > 0 else "shorter")
    else:  # no length difference to tell: the candidate term alone
        X = np.ones((d.size, 1))
    item_of_row = _item_codes(items) if items is not None else np.arange(y.size)
    n_items = int(item_of_row.max()) + 1
    return (*_aggregate(X, y, np.ones(y.size), item_of_row), n_items)


def _padded(data: list, at: list[int]):
    """The designs of ``data[k]`` for k in ``at`` padded to the longest (rows of weight 0, item
    -1): X sets x rows x p, y, w, item of each row (sets x rows)."""
    rows = max(data[k][0].shape[0] for k in at)
    p = data[at[0]][0].shape[1]
    X, y = np.zeros((len(at), rows, p)), np.full((len(at), rows), 0.5)
    w, item = np.zeros((len(at), rows)), np.full((len(at), rows), -1, dtype=np.intp)
    for s, k in enumerate(at):
        Xk, yk, wk, ik = data[k][:4]
        n = yk.size
        X[s, :n], y[s, :n], w[s, :n], item[s, :n] = Xk, yk, wk, ik
    return X, y, w, item


def lc_win_rates(judged: Sequence[tuple[Sequence[float], Sequence[float], Sequence[Any] | None]],
                 options: IntervalOptions | None = None, keys: Sequence[str] | None = None, *,
                 penalised: bool = True, cs: Sequence[float | None] | None = None) -> list[dict[str, Any]]:
    """:func:`lc_win_rate` of several candidates at once (``judged``: each one's ``(preference,
    length_diff, items)``; ``keys`` each one's bootstrap key).  ``cs``: an inverse strength per candidate
    to fit at instead of cross-validating (None: cross-validate that one); those fits are solved
    together."""
    keys = list(keys) if keys is not None else [""] * len(judged)
    outs, data = [], []
    for preference, length_diff, items in judged:
        out: dict[str, Any] = {"lc_win_rate": None, "lc_win_rate_ci_low": None, "lc_win_rate_ci_high": None,
                               "length_coef": None, "lc_c": None, "lc_n": len(preference), "lc_identified": True,
                               "lc_note": None}
        outs.append(out)
        data.append(_lc_data(preference, length_diff, items, out))
    full: list[np.ndarray | None] = [None] * len(judged)
    if penalised:
        given = [k for k, dk in enumerate(data) if dk is not None and cs is not None and cs[k] is not None]
        for p in (1, 2):  # the fits at a given C, of each design width, solved together
            at = [k for k in given if data[k][0].shape[1] == p]
            if at:
                C = np.array([cs[k] for k in at], dtype=float)
                beta = l1_logistic.fit_l1_logistic(*_padded(data, at)[:3], C, of=np.arange(len(at)))
                for s, k in enumerate(at):
                    full[k], outs[k]["lc_c"] = beta[s], float(C[s])
        for k, dk in enumerate(data):
            if dk is None or full[k] is not None:
                continue
            folds = min(l1_logistic.FOLDS, dk[4])
            C = l1_logistic.choose_c(dk[0], dk[1], dk[2], dk[3] % folds, folds) if folds >= 2 else float(l1_logistic.CS[-1])
            full[k] = l1_logistic.fit_l1_logistic(dk[0], dk[1], dk[2][None, :], C)[0]
            outs[k]["lc_c"] = C
    else:
        for k, dk in enumerate(data):
            if dk is not None:
                full[k] = fit_logistic(dk[0], dk[1], dk[2][None, :])[0]
    for k, dk in enumerate(data):
        if dk is None:
            continue
        X, y, w, item_of_row, n_items = dk
        out, fk = outs[k], full[k]
        out["lc_win_rate"] = 100.0 * float(_sigmoid(fk[0]))
        out["length_coef"] = float(fk[1]) if X.shape[1] > 1 else 0.0
        if options is not None and options.bootstrap_samples and judged[k][2] is not None:
            # the interval: the unpenalised fit's resamples (see the docstring), stretched to hold the point
            mle = fit_logistic(X, y, w[None, :])[0] if penalised else fk
            boot = l1_logistic.refit_from(
                X, y, w, item_of_row, None, mle, _boot_counts(n_items, options, keys[k]), step_tol=BOOT_STEP,
                fallback=lambda W, start, X=X, y=y: fit_logistic(X, y, W, start, max_iter=60, tol=BOOT_TOL))
            lo, hi = _quantiles(100.0 * _sigmoid(boot[:, 0]), options.interval_level)
            point = out["lc_win_rate"]
            out["lc_win_rate_ci_low"], out["lc_win_rate_ci_high"] = float(min(lo, point)), float(max(hi, point))
    return outs


# --------------------------------------------------------------------------- style control, BT
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


def _battle_data(records: Sequence[Mapping[str, Any]], candidates: Sequence[str], styles: Styles | None = None):
    """The battles as :func:`_battle_arrays` gives them, for any records (a list: from its shared
    columns; else from :func:`_battles`' rows)."""
    if isinstance(records, list):
        return _battle_arrays(records, candidates, styles)
    return _rows_as_arrays(_battles(records, candidates, styles))


def _rows_as_arrays(battles: tuple[list, int]):
    rows, n_items = battles
    if not rows:
        return None, n_items
    return ((np.array([r[0] for r in rows], dtype=np.intp), np.array([r[1] for r in rows], dtype=np.intp),
             np.array([r[2] for r in rows], dtype=float), np.array([r[3] for r in rows], dtype=float),
             np.arange(len(rows)), [r[4] for r in rows]), n_items)


def _battle_arrays(records: list, candidates: Sequence[str], styles: Styles | None):
    """((candidate code, item code, outcome, weight, style group per battle, each style group's
    style row or None) as arrays, items) of :func:`_battles` (None, 0 without battles)."""
    from .columns import columns

    col = columns(records)
    rank = {c: i for i, c in enumerate(candidates)}
    (mc, mnames), pw = col.model, col.is_pairwise
    known = np.array([rank.get(m, -1) for m in mnames], dtype=np.intp)
    pos = np.flatnonzero(pw & (known[mc] >= 0)) if col.n else np.zeros(0, dtype=np.intp)
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


def _judged(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list, list, list]]:
    """candidate -> (preference, length difference, item) of its pairwise judgments with a verdict
    and a length difference, in record order: what the LC win rate fits.  An item is its index
    (or, from the shared columns, the index's code: the same items in the same order)."""
    judged: dict[str, tuple[list, list, list]] = {}
    if isinstance(records, list):
        from .columns import columns

        col = columns(records)
        raw = col.raw_score
        pos = np.flatnonzero(col.is_pairwise & ~np.isnan(col.length_diff))
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
    lcs = lc_win_rates([judged.get(c, ([], [], [])) for c in candidates], options,
                       [f"lc:{judge}:{c}" for c in candidates])
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
    at the cap), is left out; below two repeats left, None.  Empty below two repeats."""
    if repeats < 2:
        return {}
    by_repeat: dict[int, list[Mapping[str, Any]]] = {}
    if isinstance(records, list):  # each repeat's records with their share of the shared columns
        from .columns import columns, subset

        col = columns(records)
        rep = col.repeat
        for k in np.unique(rep).tolist():
            by_repeat[int(k)] = subset(records, np.flatnonzero(rep == k))
    else:
        for r in records:
            by_repeat.setdefault(int(r.get("repeat", 0)), []).append(r)
    if lc_c is None:
        judged = _judged(records)
        pooled = lc_win_rates([judged.get(c, ([], [], [])) for c in candidates])
        lc_c = {c: r["lc_c"] for c, r in zip(candidates, pooled)}
    # every repeat's LC win rates at once (each repeat's candidates in order)
    per_repeat = [_judged(by_repeat.get(rep, [])) for rep in range(repeats)]
    lcs = lc_win_rates([j.get(c, ([], [], [])) for j in per_repeat for c in candidates],
                       cs=[lc_c.get(c) for _ in per_repeat for c in candidates])
    values: dict[str, dict[str, list[float]]] = {c: {f: [] for f, _, _ in SPREAD_FIGURES} for c in candidates}
    for rep in range(repeats):
        recs = by_repeat.get(rep, [])
        battles = _battle_data(recs, candidates, styles)
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
