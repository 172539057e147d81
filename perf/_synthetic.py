"""Synthetic pairwise judges with a known generating model, for ``coverage.py`` and ``intervals.py``.

An item i, a candidate c and a judge j in order o (0: the baseline in the first slot, 1: the
candidate there) give the judge a latent preference for the candidate

    x = quality[c] + item[i] + fit[i, c] + length_bias[j] * z[i, c] + bias[j] * (+1 if o == 1 else -1) + e

with ``item[i] ~ N(0, item_sd)`` (a hard item is hard for every candidate and judge),
``fit[i, c] ~ N(0, fit_sd)`` (what this candidate did on this item, seen by every judge),
``z[i, c] ~ N(0, 1)`` the candidate's standardised length difference (``length_diff`` = 200 z
characters), ``bias[j]`` the judge's pull toward the answer in the first slot and
``e ~ N(0, noise[j])`` the judge's own noise.  The verdict is x cut at -1.5, -0.5, 0.5, 1.5
(-2..+2); it fails (None) with probability ``fail[j]``.  VFS: the candidate's is
``clip(rint(vfs_mean + 2 quality[c] + vitem[i] + e'), 0, 10)``, the baseline's (``vfs_ref``)
``clip(rint(vfs_mean + vitem'[i] + e''), 0, 10)``, with ``vitem ~ N(0, 1.5)`` and
``e' ~ N(0, vfs_noise[j])``; a VFS judgment fails with probability ``fail[j]`` too.

Given an order, x is normal with mean ``quality[c] +- bias[j]`` and variance ``item_sd**2 +
fit_sd**2 + length_bias[j]**2 + noise[j]**2``, and VFS is a rounded, clipped normal, so each judge's
expected Reward, Win Rate and VFS over the item population have closed forms (:func:`truth`); they
are the values a figure's interval should cover.  Failures are independent of everything, so they
leave those ratios' expectations as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

CUTS = (-1.5, -0.5, 0.5, 1.5)
VFS_ITEM_SD = 1.5


@dataclass(frozen=True)
class Judge:
    name: str
    bias: float = 0.4  # pull toward the first slot, in latent units
    noise: float = 0.8
    length_bias: float = 0.3
    fail: float = 0.03
    vfs_noise: float = 1.5


@dataclass(frozen=True)
class Model:
    """The generating model: candidates' qualities, judges, item spread."""

    quality: dict[str, float] = field(default_factory=lambda: {"cand-a": 0.5, "cand-b": 0.0, "cand-c": 0.0})
    judges: tuple[Judge, ...] = (Judge("judge-1", bias=0.4, noise=0.8),
                                 Judge("judge-2", bias=0.8, noise=1.2, length_bias=0.6, fail=0.05))
    item_sd: float = 0.6
    fit_sd: float = 0.5
    vfs_mean: float = 6.0
    categories: int = 1  # items are dealt to categories in turn (task = category)
    human_noise: float = 0.5  # a human label's own noise (``records(human=...)``)

    def judge(self, name: str) -> Judge:
        return next(j for j in self.judges if j.name == name)


def _phi(x: np.ndarray | float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def verdict_probabilities(mean: float, sd: float) -> np.ndarray:
    """P(verdict = -2, -1, 0, +1, +2) when the latent is N(mean, sd)."""
    c = _phi((np.asarray(CUTS) - mean) / sd)
    return np.diff(np.r_[0.0, c, 1.0])


def vfs_expectation(mean: float, sd: float) -> float:
    """E[clip(rint(X), 0, 10)] for X ~ N(mean, sd)."""
    edges = _phi((np.arange(0.5, 10.0, 1.0) - mean) / sd)  # P(X < k + 0.5), k = 0..9
    p = np.diff(np.r_[0.0, edges, 1.0])
    return float(np.dot(np.arange(11), p))


def truth(model: Model, judge: str, candidate: str) -> dict[str, float]:
    """The judge's expected figures for the candidate over the item population (both orders
    pooled, as dual evaluation does): ``reward``, ``win_rate``, ``vfs``, ``vfs_ref``."""
    j = model.judge(judge)
    q = model.quality[candidate]
    sd = math.sqrt(model.item_sd ** 2 + model.fit_sd ** 2 + j.length_bias ** 2 + j.noise ** 2)
    scores = np.arange(-2, 3)
    reward = win = 0.0
    for sign in (-1.0, 1.0):  # order 0: the candidate in the second slot; order 1: in the first
        p = verdict_probabilities(q + sign * j.bias, sd)
        reward += 50.0 * float(np.dot(scores, p)) / 2.0
        win += 100.0 * float(p[3:].sum()) / 2.0
    vsd = math.sqrt(VFS_ITEM_SD ** 2 + j.vfs_noise ** 2)
    return {"reward": reward, "win_rate": win, "vfs": vfs_expectation(model.vfs_mean + 2.0 * q, vsd),
            "vfs_ref": vfs_expectation(model.vfs_mean, vsd)}


def records(model: Model, n: int, rng: np.random.Generator, *, vfs: bool = True,
            judges: tuple[str, ...] | None = None, repeats: int = 1,
            human: dict[tuple[str, str], float] | None = None,
            styles: dict[tuple[str, str], dict[str, list[int]]] | None = None) -> list[dict]:
    """Creation-MMBench-shaped judgment records of ``n`` fresh items: every candidate x judge x
    order, a ``pairwise`` record and (``vfs``) a ``vfs`` record each, sorted as the pipeline sorts
    them (judge, candidate, item, kind, order).

    ``repeats`` k > 1: every judgment asked k times (``repeat`` 0..k-1 on each record), each repeat
    with fresh judge noise and failures over the same items and answers (the item, fit and length
    terms are the answers', shared).  ``human``: filled with a human label per (candidate, index):
    ``quality[c] + item[i] + fit[i, c] + h`` with ``h ~ N(0, human_noise)`` cut like a verdict
    (no slot pull, no length bias).  ``styles``: filled with each (candidate, index)'s answer
    styles for style control (``[length, headers, lists, bold]`` of both answers: the reference's
    length 1000 characters, the candidate's ``1000 + length_diff``, counts Poisson(2)).  These are
    drawn after the judgments, so the judgments are those of the same seed without them."""
    cands = list(model.quality)
    use = [j for j in model.judges if judges is None or j.name in judges]
    k = len(cands)
    item = rng.normal(0.0, model.item_sd, size=(n, 1))
    fit = rng.normal(0.0, model.fit_sd, size=(n, k))
    z = rng.normal(0.0, 1.0, size=(n, k))
    quality = np.array([model.quality[c] for c in cands])
    vitem = rng.normal(0.0, VFS_ITEM_SD, size=(n, k))
    vref_item = rng.normal(0.0, VFS_ITEM_SD, size=(n, 1))
    category = [f"cat{i % model.categories}" for i in range(n)]
    index = [f"i{i}" for i in range(n)]
    length_diff = np.rint(200.0 * z).astype(int)
    out: list[dict] = []
    for j in use:
        for rep in range(repeats):
            base = quality + item + fit + j.length_bias * z  # (n, k)
            shape = (n, k, 2)
            x = base[:, :, None] + j.bias * np.array([-1.0, 1.0]) + rng.normal(0.0, j.noise, size=shape)
            verdict = np.searchsorted(np.asarray(CUTS), x) - 2
            failed = rng.random(shape) < j.fail
            v = np.clip(np.rint(model.vfs_mean + 2.0 * quality[None, :, None] + vitem[:, :, None]
                                + rng.normal(0.0, j.vfs_noise, size=shape)), 0, 10).astype(int)
            vref = np.clip(np.rint(model.vfs_mean + vref_item[:, :, None]
                                   + rng.normal(0.0, j.vfs_noise, size=shape)), 0, 10).astype(int)
            vfailed = rng.random(shape) < j.fail
            for c, cand in enumerate(cands):
                for i in range(n):
                    common = {"model": cand, "judge": j.name, "index": index[i], "task": category[i],
                              "category": category[i]}
                    for kind in ("pairwise", "vfs") if vfs else ("pairwise",):
                        for o in (0, 1):
                            r = {**common, "kind": kind, "order": o, "score": None, "vfs": None, "vfs_ref": None,
                                 "length_diff": int(length_diff[i, c])}
                            if kind == "pairwise":
                                ok = not failed[i, c, o]
                                if ok:
                                    r["score"] = int(verdict[i, c, o])
                            else:
                                ok = not vfailed[i, c, o]
                                if ok:
                                    r["vfs"], r["vfs_ref"] = int(v[i, c, o]), int(vref[i, c, o])
                            r["ok"] = ok
                            r["error_kind"] = None if ok else "parse_failure"
                            if repeats > 1:
                                r["repeat"] = rep
                            out.append(r)
    if human is not None:
        latent = quality + item + fit + rng.normal(0.0, model.human_noise, size=(n, k))
        h = np.searchsorted(np.asarray(CUTS), latent) - 2
        for c, cand in enumerate(cands):
            for i in range(n):
                human[(cand, index[i])] = float(h[i, c])
    if styles is not None:
        counts = rng.poisson(2.0, size=(n, k, 2, 3))
        for c, cand in enumerate(cands):
            for i in range(n):
                styles[(cand, index[i])] = {
                    "candidate": [max(50, 1000 + int(length_diff[i, c])), *map(int, counts[i, c, 0])],
                    "reference": [1000, *map(int, counts[i, c, 1])]}
    return out
