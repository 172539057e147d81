"""AlpacaEval 2's length-controlled win rate (``length_controlled_v1``) of each candidate, with its
item-bootstrap interval: the formula, its source and what is left out are in :mod:`.control`'s
docstring; the L1-penalised fit and its cross-validated strength in :mod:`.l1_logistic`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import l1_logistic
from .logistic import BOOT_STEP, BOOT_TOL, _aggregate, _boot_counts, _quantiles, _sigmoid, fit_logistic
from .uncertainty import IntervalOptions

__all__ = ["lc_win_rate", "lc_win_rates", "LC_EXTRAPOLATES"]

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
    together.

    A candidate's resamples depend only on the seed, its key and its number of items, so candidates
    given the same key (a run gives all of one judge's candidates one) and the same number of items
    share one draw: drawn and counted once, each candidate refitted on the same count blocks.  Where
    their items are the same in the same order of first appearance (the usual case) each resample
    takes the same items for every candidate, as the SC and BT resamples do."""
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
            C = (l1_logistic.choose_c(dk[0], dk[1], dk[2], dk[3] % folds, folds) if folds >= 2
                 else float(l1_logistic.CS[-1]))
            full[k] = l1_logistic.fit_l1_logistic(dk[0], dk[1], dk[2][None, :], C)[0]
            outs[k]["lc_c"] = C
    else:
        for k, dk in enumerate(data):
            if dk is not None:
                full[k] = fit_logistic(dk[0], dk[1], dk[2][None, :])[0]
    # the count blocks of each (key, number of items), kept until the last candidate that uses them
    draws: dict[tuple[str, int], list[np.ndarray]] = {}
    last = {(keys[k], dk[4]): k for k, dk in enumerate(data) if dk is not None and judged[k][2] is not None}
    for k, dk in enumerate(data):
        if dk is None:
            continue
        X, y, w, item_of_row, n_items = dk
        out, fk = outs[k], full[k]
        out["lc_win_rate"] = 100.0 * float(_sigmoid(fk[0]))
        out["length_coef"] = float(fk[1]) if X.shape[1] > 1 else 0.0
        if options is not None and options.bootstrap_samples and judged[k][2] is not None:
            # the interval: the unpenalised fit's resamples (lc_win_rate says why), stretched to hold the point
            mle = fit_logistic(X, y, w[None, :])[0] if penalised else fk
            shared = (keys[k], n_items)
            if shared not in draws:
                draws[shared] = list(_boot_counts(n_items, options, keys[k]))
            # refit_from only reads the counts, so the next candidate's refit gets them unchanged
            boot = l1_logistic.refit_from(
                X, y, w, item_of_row, None, mle, draws[shared], step_tol=BOOT_STEP,
                fallback=lambda W, start, X=X, y=y: fit_logistic(X, y, W, start, max_iter=60, tol=BOOT_TOL))
            if last[shared] == k:
                del draws[shared]
            lo, hi = _quantiles(100.0 * _sigmoid(boot[:, 0]), options.interval_level)
            point = out["lc_win_rate"]
            out["lc_win_rate_ci_low"], out["lc_win_rate_ci_high"] = float(min(lo, point)), float(max(hi, point))
    return outs
