"""The logistic fits beneath the controlled figures (:mod:`.control`, :mod:`.length_control`): the
maximum-likelihood fit of many weightings at once (a Bradley-Terry fit's candidates as groups),
the merging of rows an item shares, and the item-bootstrap refits that start at the full fit
(plain Newton steps; the Bradley-Terry one over a candidates x items grid)."""

from __future__ import annotations

import numpy as np

from .intervals import _draws, _rng
from .uncertainty import IntervalOptions

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
    # the grids' buffers, allocated once (fresh arrays of this size cost more in page faults than the arithmetic)
    wb_buf, r_buf = (np.empty((GRID_CHUNK, G, I), dtype=np.float32) for _ in range(2))
    q_buf = np.empty((0, G, I), dtype=np.float32)
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
            if q_buf.shape[0] < n:
                q_buf = np.empty((n, G, I), dtype=np.float32)
            q_all = q_buf[:n]
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
                Wb = np.multiply(counts32[part][:, None, :], Wg32[None], out=wb_buf[:k])
                r = np.subtract(Yg32[None], prob, out=r_buf[:k])
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
