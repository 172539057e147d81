"""The L1-penalised logistic fit AlpacaEval 2 uses for its length-controlled win rate, and its
choice of the penalty by cross-validation, for one or two coefficients and many fits at once.

AlpacaEval (``alpaca_eval/metrics/glm_winrate.py``, ``fit_LogisticRegressionCV``) fits
scikit-learn's ``LogisticRegressionCV(penalty="l1", solver="liblinear", fit_intercept=False)``
with the outcome as a soft label, 5 folds grouped by annotation and the held-out soft log loss
as the score, over scikit-learn's default grid of ten inverse strengths ``C = 10**linspace(-4,
4, 10)``; the chosen ``C`` is then refitted on all the data.  The objective, for coefficients
``b``, soft labels ``y``, row weights ``w`` and ``p = sigmoid(X b)``, is

    F(b) = |b|_1 + C * sum_r w_r * (-(y_r log p_r + (1 - y_r) log(1 - p_r)))

(every coefficient penalised, the candidate term included).  It is minimised here by proximal
Newton steps: the loss's quadratic model at ``b`` plus the L1 term, whose minimiser in one or two
dimensions is found exactly (the best of its few sign patterns), then a halving line search on
F.  liblinear stops at its tolerance 1e-4; this runs to the exact minimiser.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CS", "FOLDS", "fit_l1_logistic", "choose_c", "refit_from"]

#: scikit-learn's ``LogisticRegressionCV`` default grid (``Cs=10``): ten inverse strengths
CS = np.logspace(-4.0, 4.0, 10)
#: AlpacaEval's ``GLM_INFO["length_controlled_v1"]["kwargs"]["n_splits"]``
FOLDS = 5
#: scikit-learn's log-loss clip of a held-out probability
_CLIP = 1e-15


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _softplus(eta):
    """``log(1 + exp(eta))`` without overflow: ``np.logaddexp(0, eta)``'s formula (the larger term
    plus ``log1p(exp(-|eta|))``) in whole-array steps, several times faster than its element loop
    (the two agree to the last bit or one unit in it)."""
    out = np.exp(-np.abs(eta))
    np.log1p(out, out=out)
    out += np.maximum(eta, 0.0)
    return out


def _linear(beta, X):
    """Each fit's linear predictor (B x rows): ``X`` rows x p, shared, or B x rows x p, one per fit."""
    if X.ndim == 2:
        return beta @ X.T
    eta = beta[:, 0, None] * X[:, :, 0]
    for j in range(1, X.shape[2]):
        eta += beta[:, j, None] * X[:, :, j]
    return eta


def _row_sums(m, X):
    """``m @ X`` of each fit (B x rows ``m``; ``X`` shared rows x k or B x rows x k): B x k."""
    if X.ndim == 2:
        return m @ X
    return np.einsum("br,brk->bk", m, X)


def _objective(beta, X, y, W, C):
    """F of every fit (B,): L1 norm plus C times the weighted soft log loss; and the linear
    predictor (B x rows)."""
    eta = _linear(beta, X)
    loss = (W * (_softplus(eta) - y * eta)).sum(axis=1)
    return np.abs(beta).sum(axis=1) + C * loss, eta


def _penalised_quadratic(H, b):
    """``argmin_u 0.5 u'Hu - b'u + |u|_1`` for B positive-definite p x p ``H`` (p = 1 or 2), B x p
    ``b``: the best of the candidates that fix each coordinate's sign or zero it."""
    B, p = b.shape
    soft = np.sign(b) * np.maximum(np.abs(b) - 1.0, 0.0)
    if p == 1:
        return soft / H[:, 0, :]
    cands = [np.zeros_like(b)]
    for j in (0, 1):
        u = np.zeros_like(b)
        u[:, j] = soft[:, j] / H[:, j, j]
        cands.append(u)
    det = H[:, 0, 0] * H[:, 1, 1] - H[:, 0, 1] * H[:, 1, 0]
    for s0 in (1.0, -1.0):
        for s1 in (1.0, -1.0):
            r0, r1 = b[:, 0] - s0, b[:, 1] - s1
            cands.append(np.column_stack([(H[:, 1, 1] * r0 - H[:, 0, 1] * r1) / det,
                                          (H[:, 0, 0] * r1 - H[:, 1, 0] * r0) / det]))
    U = np.stack(cands, axis=1)  # B x candidates x p
    value = 0.5 * np.einsum("bki,bij,bkj->bk", U, H, U) - np.einsum("bki,bi->bk", U, b) + np.abs(U).sum(axis=2)
    return U[np.arange(B), np.argmin(value, axis=1)]


def fit_l1_logistic(X: np.ndarray, y: np.ndarray, W: np.ndarray, C, start: np.ndarray | None = None, *,
                    of: np.ndarray | None = None, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """The minimiser of F (module docstring) for each of B fits: ``X`` rows x p (p = 1 or 2) and
    ``y`` the rows' soft labels, shared by every fit; or, with ``of`` (each fit's data set), ``X``
    sets x rows x p and ``y`` sets x rows (fits of several data sets at once, each padded to the
    longest with rows of weight 0); ``W`` B x rows weights, ``C`` one inverse strength or one per
    fit; from ``start`` (zeros).  Returns B x p."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    B, p = W.shape[0], X.shape[-1]
    if p not in (1, 2):
        raise ValueError("fit_l1_logistic: one or two coefficients")
    C = np.broadcast_to(np.asarray(C, dtype=float), (B,)).copy()
    beta = np.zeros((B, p)) if start is None else np.broadcast_to(np.asarray(start, dtype=float), (B, p)).copy()
    pairs = np.stack([X[..., i] * X[..., j] for i in range(p) for j in range(p)], axis=-1)  # rows x p*p

    def data(idx):  # the design, labels and pairs of these fits (shared, or each fit's own set's)
        return (X, y, pairs) if of is None else (X[of[idx]], y[of[idx]], pairs[of[idx]])

    Wy = W * (y if of is None else y[of])
    f, eta = _objective(beta, *data(np.arange(B))[:2], W, C)
    live = np.ones(B, dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        b, w, c = beta[idx], W[idx], C[idx]
        Xi, yi, Pi = data(idx)
        prob = _sigmoid(eta[idx])
        grad = _row_sums(w * prob - Wy[idx], Xi)  # of the loss
        H = c[:, None, None] * _row_sums(w * prob * (1.0 - prob), Pi).reshape(-1, p, p)
        # a saturated fit has a vanishing curvature: a floor keeps the model strictly convex
        H += np.eye(p) * (1e-9 * np.maximum(np.abs(np.diagonal(H, axis1=1, axis2=2)).max(axis=1), 1e-6))[:, None, None]
        target = np.einsum("bij,bj->bi", H, b) - c[:, None] * grad
        step = _penalised_quadratic(H, target) - b
        t = np.ones(idx.size)
        new = b + step
        fn, en = _objective(new, Xi, yi, w, c)
        bad = fn > f[idx] + 1e-12 * np.abs(f[idx])
        for _ in range(40):  # halve the step where F did not fall
            if not bad.any():
                break
            t[bad] *= 0.5
            new[bad] = b[bad] + t[bad, None] * step[bad]
            fn[bad], en[bad] = _objective(new[bad], *((X, y) if of is None else (Xi[bad], yi[bad])), w[bad], c[bad])
            bad = fn > f[idx] + 1e-12 * np.abs(f[idx])
        keep = ~bad
        beta[idx[keep]] = new[keep]
        f[idx[keep]] = fn[keep]
        eta[idx[keep]] = en[keep]
        moved = np.abs(t[:, None] * step).max(axis=1)
        live[idx[bad | (moved < tol)]] = False
    return beta


def choose_c(X: np.ndarray, y: np.ndarray, w: np.ndarray, fold_of_row: np.ndarray, folds: int) -> float:
    """AlpacaEval's penalty: the ``C`` of :data:`CS` whose fits on all folds but one have the
    best held-out soft log loss (each fold's weighted mean, summed over the folds; the smaller
    ``C`` of a tie), as ``LogisticRegressionCV`` chooses it."""
    n_c = CS.size
    train = np.stack([w * (fold_of_row != f) for f in range(folds)])  # folds x rows
    W = np.repeat(train, n_c, axis=0)  # (fold, C) pairs
    beta = fit_l1_logistic(X, y, W, np.tile(CS, folds))
    prob = np.clip(_sigmoid(beta @ X.T), _CLIP, 1.0 - _CLIP)
    loss = -(y * np.log(prob) + (1.0 - y) * np.log1p(-prob))
    held = np.repeat(np.stack([w * (fold_of_row == f) for f in range(folds)]), n_c, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (held * loss).sum(axis=1) / held.sum(axis=1)
    score = -np.nan_to_num(mean, nan=0.0).reshape(folds, n_c).sum(axis=0)
    return float(CS[int(np.argmax(score))])


def refit_from(X: np.ndarray, y: np.ndarray, w: np.ndarray, item_of_row: np.ndarray, C: float | None,
               full: np.ndarray, blocks, *, step_tol: float, max_iter: int = 12, fallback=None) -> np.ndarray:
    """The minimiser of F for each resample of the items (``blocks``: arrays B x items of each
    resample's item counts, a row's weight its item's count times ``w``), started at the full
    data's minimiser ``full``; resamples x p.

    Fast path: a resample keeps the full fit's signs (its nonzero coefficients keep their sign,
    its zeros stay zero), on which F is smooth, so plain Newton steps on the nonzero coefficients
    converge; the first step needs only the counts times per-item sums (the probabilities are the
    full fit's), later steps' sums are taken in float32 (:meth:`_RowSums.fast`; a resample still
    moving after ``max_iter`` steps is fitted again with float64 sums throughout), and a resample
    stops once its last step moved no coefficient more than ``step_tol``.
    Each resample's result is then checked against F's optimality conditions (signs kept, and
    ``|C * gradient| <= 1`` on each zero coefficient); one that fails is fitted again by
    :func:`fit_l1_logistic`.

    ``C`` None: the unpenalised (maximum-likelihood) fit, ``full`` its minimiser; the same Newton
    steps on every coefficient without the L1 term, and a resample that has not converged after
    ``max_iter`` steps is fitted again by ``fallback(weights, start)`` (resamples x rows weights;
    returns resamples x p)."""
    X = np.asarray(X, dtype=float)
    p = X.shape[1]
    sign = np.sign(full) if C is not None else np.ones(p)
    act = np.flatnonzero(sign != 0)
    zero = np.flatnonzero(sign == 0)
    sums = _RowSums(X, y, w, item_of_row)
    prob0 = _sigmoid(X @ full)
    n_items = int(item_of_row.max()) + 1 if item_of_row.size else 0
    item_r = np.zeros((n_items, p))
    np.add.at(item_r, item_of_row, (w * (y - prob0))[:, None] * X)
    item_H = np.zeros((n_items, p * p))
    np.add.at(item_H, item_of_row, (w * prob0 * (1.0 - prob0))[:, None] * sums.pairs)
    return np.concatenate([_refit_block(sums, C, full, counts, item_r, item_H, act, zero, step_tol, max_iter,
                                        fallback) for counts in blocks])


#: the bound on a resample's largest |linear predictor| up to which its Newton sums are taken in
#: float32 (:meth:`_RowSums.fast`); beyond it, in float64
F32_ETA = 30.0
#: the fewest rows whose Newton sums are taken in float32: a resample stops after a step under the
#: step tolerance, and float32's rounding can move which step that is; on the golden tests' few
#: items the curvature changes fast enough that this moved an interval end by up to 9e-7 of it
#: (1.5e-8 at 120 items, 1e-8 at 765), and float64 sums cost little there
F32_ROWS = 200


class _RowSums:
    """The log-likelihood's gradient ``r = sum_r W_r (y_r - p_r) x_r`` and curvature
    ``H = sum_r W_r p_r (1 - p_r) x_r x_r'`` at many resamples' coefficients (one pass over the rows),
    for one design; its buffers are allocated once and reused for every block of resamples (fresh
    arrays of this size cost more in page faults than the arithmetic)."""

    def __init__(self, X, y, w, item_of_row):
        p = X.shape[1]
        self.X, self.y, self.w, self.item_of_row = X, y, w, item_of_row
        self.pairs = np.stack([X[:, i] * X[:, j] for i in range(p) for j in range(p)], axis=1)
        self.pairs32 = self.pairs.astype(np.float32)
        self.reach = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(p)  # each column's largest |x|
        # rows one per item, in item order: a resample's row weights are its counts times w, no gather
        self.by_item = np.array_equal(item_of_row, np.arange(item_of_row.size))
        self._bufs: dict = {}

    def _buf(self, name, n, dtype):
        rows = self.X.shape[0]
        b = self._bufs.get(name)
        if b is None or b.shape[0] < n:
            b = self._bufs[name] = np.empty((n, rows), dtype=dtype)
        return b[:n]

    def weights(self, counts):
        """Each resample's row weights (B x rows), kept for the sums that follow."""
        W = self._buf("W", counts.shape[0], float)
        if self.by_item:
            np.multiply(counts, self.w, out=W)
        else:
            np.multiply(counts[:, self.item_of_row], self.w, out=W)
        self.W = W
        return W

    def exact(self, beta, idx):
        """(r, H) in float64 at ``beta`` (the resamples ``idx``'s coefficients)."""
        p = self.X.shape[1]
        prob = _sigmoid(beta @ self.X.T)
        Wi = self.W if idx.size == self.W.shape[0] else self.W[idx]
        return (Wi * (self.y - prob)) @ self.X, ((Wi * prob * (1.0 - prob)) @ self.pairs).reshape(-1, p, p)

    def fast(self, beta, idx):
        """:meth:`exact`'s (r, H), the probabilities in float32 where a resample's linear predictor
        is bounded by :data:`F32_ETA`: ``p = 1 / (1 + e)``, ``p (1 - p) = e p^2`` with
        ``e = exp(-eta)`` (no difference of nearly equal numbers, so accurate to float32's relative
        precision near saturation too); the gradient's residuals and sums in float64 (its terms
        nearly cancel at the minimiser).  Rows fewer than :data:`F32_ROWS`: :meth:`exact`'s.  On
        765 items x 20 candidates the LC interval ends moved by at most 1e-8 of themselves."""
        if self.X.shape[0] < F32_ROWS:
            return self.exact(beta, idx)
        near = (np.abs(beta) @ self.reach) <= F32_ETA
        if not near.all():
            r, H = self.exact(beta, idx)
            if near.any():
                r[near], H[near] = self.fast(beta[near], idx[near])
            return r, H
        n, p = idx.size, self.X.shape[1]
        eta = self._buf("eta", n, float)
        np.matmul(beta, self.X.T, out=eta)
        e = self._buf("e", n, np.float32)
        np.negative(eta, out=e, casting="same_kind")
        np.exp(e, out=e)
        prob = self._buf("prob", n, np.float32)
        np.add(e, 1.0, out=prob)
        np.reciprocal(prob, out=prob)
        Wi = self.W if n == self.W.shape[0] else np.take(self.W, idx, axis=0, out=self._buf("Wi", n, float))
        res = eta  # the residuals y - p times the weights, in float64
        np.subtract(self.y, prob, out=res)
        res *= Wi
        e *= prob  # e p^2 = p (1 - p), times the weights
        e *= prob
        np.multiply(e, Wi, out=e, casting="same_kind")
        return res @ self.X, (e @ self.pairs32).astype(float).reshape(n, p, p)


def _newton(sums, C, sign, act, full, r, H, rows, step_tol, max_iter, fast=False):
    """Newton steps on the active coefficients for the block's resamples ``rows`` from ``full``
    (``r``, ``H``: their gradient and curvature there), each stopping after a step under
    ``step_tol``; (coefficients, still moving after ``max_iter`` steps).  ``fast``: the sums after
    the first step by :meth:`_RowSums.fast`, else in float64."""
    m, p = rows.size, sums.X.shape[1]
    beta = np.broadcast_to(full, (m, p)).copy()
    live = np.full(m, act.size > 0)
    for n in range(max_iter):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        if n:
            r[idx], H[idx] = (sums.fast if fast else sums.exact)(beta[idx], rows[idx])
        HA = C * H[idx][:, act][:, :, act]
        HA += np.eye(act.size) * (1e-12 * np.maximum(np.abs(np.diagonal(HA, axis1=1, axis2=2)).max(axis=1),
                                                     1e-6))[:, None, None]
        step = np.linalg.solve(HA, (C * r[idx][:, act] - sign[act])[..., None])[..., 0]
        step = np.clip(np.nan_to_num(step, nan=0.0, posinf=10.0, neginf=-10.0), -10.0, 10.0)
        beta[idx[:, None], act] += step
        live[idx[np.abs(step).max(axis=1) < step_tol]] = False
    return beta, live


def _refit_block(sums, C, full, counts, item_r, item_H, act, zero, step_tol, max_iter, fallback=None):
    X = sums.X
    B, p = counts.shape[0], X.shape[1]
    free = C is None  # unpenalised: no L1 term, every coefficient free to take any sign
    sign = np.zeros(p) if free else np.sign(full)
    C = 1.0 if free else C
    W = sums.weights(counts)
    r0 = counts @ item_r  # the log-likelihood's gradient at the full fit
    H0 = (counts @ item_H).reshape(B, p, p)
    every = np.arange(B)
    beta, live = _newton(sums, C, sign, act, full, r0.copy(), H0.copy(), every, step_tol, max_iter,
                         fast=True)
    if live.any():
        # a resample still moving (one whose fit runs off towards a separation) is fitted again with
        # float64 steps throughout, as before the float32 sums: where it ends depends on every step
        stuck = np.flatnonzero(live)
        beta[stuck], live[stuck] = _newton(sums, C, sign, act, full, r0[stuck], H0[stuck], stuck, step_tol,
                                           max_iter)
    ok = ~live
    if free:
        if not ok.all():
            bad = np.flatnonzero(~ok)
            beta[bad] = fallback(W[bad], beta[bad])
        return beta
    if act.size:
        ok &= np.all(np.sign(beta[:, act]) == sign[act], axis=1)
    if zero.size:  # the gradient at the final beta (only a zero coefficient's condition needs it)
        r = sums.exact(beta, every)[0] if act.size else r0
        ok &= np.all(np.abs(C * r[:, zero]) <= 1.0 + 1e-9, axis=1)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        beta[bad] = fit_l1_logistic(X, sums.y, W[bad], C, full, max_iter=60, tol=step_tol)
    return beta
