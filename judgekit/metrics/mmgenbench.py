"""MMGenBench metrics: SIM-Score and FID-Score over image-encoder features (paper Eq. 4-5).

Pure functions over numpy arrays, usable from a notebook.  Features are the encoder's raw output
(Unicom's 768-d head in the reference; any encoder here): they are not L2-normalised, and nothing
here normalises them.  Every computation is in float64.

SIM-Score.  :func:`cosine` between an original image's features and its generated image's
features, per item (:func:`sim_scores`); reported as the mean and the population standard
deviation (``numpy.std``, ddof=0, as the reference's ``visual/run.py`` does) over all scored
items and over each image pattern (:func:`sim_summary`; patterns are multi-label, so an item
counts in every pattern it belongs to).  The paper's tables report the means.

FID-Score.  :func:`fid`, the Frechet distance between two whole sets of features (never per
pattern)::

    ||mu1 - mu2||^2 + Tr(S1 + S2 - 2 sqrtm(S1 S2))

with sample covariances (ddof=1, ``np.cov(..., rowvar=False)``), as the reference computes it;
the paper's FIDs (about 1.3-2.9 on Test) are on these raw features, hence small.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import scipy.linalg

__all__ = ["cosine", "sim_scores", "sim_summary", "fid", "FID_EPS"]

log = logging.getLogger(__name__)

FID_EPS = 1e-6
"""Added to both covariances' diagonals when ``sqrtm(S1 S2)`` is not finite (the reference's eps)."""

_IMAG_ATOL = 1e-3
"""The largest imaginary part on the diagonal of ``sqrtm(S1 S2)`` taken as rounding noise (reference)."""


def _vector(x: Any, name: str) -> np.ndarray:
    v = np.asarray(x, dtype=np.float64)
    if v.ndim == 2 and 1 in v.shape:
        v = v.reshape(-1)
    if v.ndim != 1:
        raise ValueError(f"{name}: expected a feature vector, got an array of shape {np.shape(x)}")
    if v.size == 0:
        raise ValueError(f"{name}: empty feature vector")
    if not np.isfinite(v).all():
        raise ValueError(f"{name}: feature vector has non-finite values")
    return v


def cosine(a: Any, b: Any, *, names: tuple[str, str] = ("a", "b")) -> float:
    """Cosine similarity of two feature vectors, in float64 (SIM-Score, paper Eq. 4).

    The vectors are used as given (not normalised first).  Shapes ``(d,)``, ``(1, d)`` and
    ``(d, 1)`` are accepted.  Raises ValueError, naming the argument (``names`` gives the names
    used in messages), for a zero vector, a non-finite value, or mismatched lengths.
    """
    u = _vector(a, names[0])
    v = _vector(b, names[1])
    if u.shape != v.shape:
        raise ValueError(f"{names[0]} has {u.size} features but {names[1]} has {v.size}")
    nu = float(np.linalg.norm(u))
    nv = float(np.linalg.norm(v))
    for n, name in ((nu, names[0]), (nv, names[1])):
        if n == 0.0:
            raise ValueError(f"{name} is a zero vector: its cosine similarity is undefined")
    return float(np.dot(u, v) / (nu * nv))


def sim_scores(originals: Mapping[str, Any], generated: Mapping[str, Any]) -> dict[str, float]:
    """SIM-Score per item id, for the ids present in both mappings (in ``originals``' order).

    An id in only one mapping (e.g. a failed generation) is left out; count those apart.  A zero
    or malformed vector raises ValueError naming the item and the side.
    """
    out: dict[str, float] = {}
    for key, f_orig in originals.items():
        if key not in generated:
            continue
        out[key] = cosine(f_orig, generated[key],
                          names=(f"item {key!r} (original)", f"item {key!r} (generated)"))
    return out


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean": None, "std": None}
    arr = np.asarray(values, dtype=np.float64)
    return {"n": int(arr.size), "mean": float(np.mean(arr)), "std": float(np.std(arr))}


def sim_summary(sims: Mapping[str, float],
                patterns: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """Mean and std of SIM-Scores overall and per image pattern.

    ``sims``: item id -> SIM-Score (:func:`sim_scores`).  ``patterns``: pattern name -> the ids
    of its items (MMGenBench-Test's label-index JSON; the ids are compared as ``str``, so the
    reference's integer indices work).  Patterns are multi-label: an item counts in every pattern
    listing it, as often as the pattern lists it (an index listed twice in the label index counts
    twice, as in the reference's summary; pass each id once to count it once).  A listed id with
    no score (a failed item) is not counted; a pattern with no scored item gets ``n=0`` and None for mean and std.

    ``std`` is the population standard deviation (numpy's default, ddof=0), as the reference's
    ``np.std``.  Returns ``{"n", "mean", "std", "patterns": {name: {"n", "mean", "std"}}}``
    (``patterns`` is ``{}`` when none are given; its order is the given order).
    """
    values = {str(k): float(v) for k, v in sims.items()}
    for k, v in values.items():
        if not math.isfinite(v):
            raise ValueError(f"item {k!r}: SIM-Score is not finite ({v})")
    out = _stats(list(values.values()))
    per: dict[str, dict[str, Any]] = {}
    for name, ids in (patterns or {}).items():
        if isinstance(ids, str):
            raise ValueError(f"pattern {name!r}: expected a list of item ids, got a string")
        listed = [str(i) for i in ids]
        per[name] = _stats([values[i] for i in listed if i in values])
    out["patterns"] = per
    return out


def _features(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (items x features), got shape {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"{name}: FID needs at least 2 items (rows) to estimate a covariance, "
                         f"got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError(f"{name}: no feature columns")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: features have non-finite values")
    return arr


def _trace_sqrtm_product(s1: np.ndarray, s2: np.ndarray) -> float:
    """Tr sqrtm(S1 S2) through ``scipy.linalg.sqrtm``, as the reference computes it."""
    def root(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # scipy warns (LinAlgWarning, RuntimeWarning) on singular or ill-conditioned products;
        # the finiteness check and the imaginary-part check below are what decide.  (Python's
        # warning filters are process-wide: other threads' warnings of these two kinds are
        # hidden too while sqrtm runs.)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(scipy.linalg.sqrtm(a @ b))

    covmean = root(s1, s2)
    if not np.isfinite(covmean).all():
        log.debug("FID: sqrtm(S1 S2) is not finite; adding %g to the covariances' diagonals", FID_EPS)
        offset = np.eye(s1.shape[0]) * FID_EPS
        covmean = root(s1 + offset, s2 + offset)
        if not np.isfinite(covmean).all():
            raise ValueError("FID: sqrtm(S1 S2) is not finite, even with "
                             f"{FID_EPS:g} added to the covariances' diagonals")
    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=_IMAG_ATOL):
            raise ValueError("FID: sqrtm(S1 S2) has a non-negligible imaginary component "
                             f"(max |imag| = {np.max(np.abs(covmean.imag)):.3g})")
        covmean = covmean.real
    return float(np.trace(covmean))


def fid(feats_a: Any, feats_b: Any) -> float:
    """Frechet distance between two sets of raw features (rows: items; columns: features).

    ``||mu1 - mu2||^2 + Tr(S1 + S2 - 2 sqrtm(S1 S2))`` in float64, with S the sample covariance
    (ddof=1).  The two sets may have different numbers of rows (at least 2 each) but must have the
    same number of feature columns; otherwise ValueError.

    How ``Tr sqrtm(S1 S2)`` is computed:

    * Both sets have more rows than features (MMGenBench-Test: 1,284 x 768): as the reference,
      ``scipy.linalg.sqrtm(S1 @ S2)`` (without the ``disp`` argument deprecated in SciPy 1.16);
      if that is not finite, :data:`FID_EPS` is added to both covariances' diagonals and it is
      retried; an imaginary part is dropped when its diagonal is within 1e-3 of 0, else
      ValueError.  scipy's warnings about singular matrices are silenced (the checks decide).
    * Otherwise a covariance is singular (rank < features), and the square root of the singular
      product is ill-conditioned: sqrtm turns the rounding noise in its hundreds of zero
      eigenvalues into square roots of about 1e-8 each, an error near 1e-5 on 768-d features.
      The same trace is then computed exactly from the centred data A, B (n x d, m x d):
      the eigenvalues of S1 S2 = A'A B'B / ((n-1)(m-1)) are those of (AB')(AB')' over the same
      factor, so Tr sqrtm(S1 S2) = ||A B'||_* / sqrt((n-1)(m-1)) (the sum of the singular values
      of the n x m matrix A B'), which is also the cheaper computation here.

    In exact arithmetic both give the same number; the result may be a rounding error below 0
    for identical sets.
    """
    a = _features(feats_a, "feats_a")
    b = _features(feats_b, "feats_b")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"FID: feats_a has {a.shape[1]} features per item but feats_b has "
                         f"{b.shape[1]}")
    n, d = a.shape
    m = b.shape[0]
    mu1 = a.mean(axis=0)
    mu2 = b.mean(axis=0)
    s1 = np.atleast_2d(np.cov(a, rowvar=False))
    s2 = np.atleast_2d(np.cov(b, rowvar=False))
    diff = mu1 - mu2
    if n - 1 >= d and m - 1 >= d:
        tr_covmean = _trace_sqrtm_product(s1, s2)
    else:
        cross = (a - mu1) @ (b - mu2).T
        tr_covmean = float(np.linalg.svd(cross, compute_uv=False).sum()) / math.sqrt((n - 1) * (m - 1))
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2.0 * tr_covmean)
