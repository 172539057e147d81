"""Bootstrap intervals over items: seeded, reproducible, for every ratio-of-sums metric.

Every headline figure of the four benchmarks is a ratio of per-item sums: Reward is 50 x (sum of
an item's valid scores) / (its count of valid scores), pooled over items; Win Rate, VFS, an MMIE
category's percent, a GuessBench accuracy and SIM have the same shape.  So one function serves
them all: each item contributes a numerator and a denominator (its judgments stay together, so
both orders of a dual evaluation are resampled as one), the items are drawn with replacement
``samples`` times, and the interval is the percentile interval of the resampled ratios.

The draw depends only on ``seed``, the ``key`` naming the figure (so figures do not share a
stream, and one figure's interval does not change when another is added) and the number of
items: the same inputs give the same interval on every machine.

A paired comparison of two candidates on the same items resamples the items once for both, so
the interval of the difference keeps what the items share (a hard item is hard for both).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Interval", "ratio_interval", "paired_difference", "paired_difference_p", "DEFAULT_SAMPLES", "DEFAULT_LEVEL", "with_interval",
           "shown"]

DEFAULT_SAMPLES = 1000
DEFAULT_LEVEL = 0.95

#: at most this many drawn indices held at once (samples are drawn in row blocks of this size)
_BLOCK = 4_000_000


@dataclass(frozen=True)
class Interval:
    estimate: float | None  # the figure on all items (None when no item has a denominator)
    low: float | None
    high: float | None
    items: int  # items resampled
    samples: int
    level: float
    seed: int

    def as_dict(self) -> dict:
        return asdict(self)


def _rng(seed: int, key: str) -> np.random.Generator:
    # the whole seed (SeedSequence takes any non-negative int): seeds 2**32 apart are different seeds
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(key.encode("utf-8"))]))


def _check(samples: int, level: float, seed: int) -> None:
    if int(seed) < 0:
        raise ValueError(f"the bootstrap seed must not be negative, not {seed}")
    if samples < 1:
        raise ValueError(f"bootstrap samples must be at least 1, not {samples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"interval level must be between 0 and 1, not {level}")


def _draws(rng: np.random.Generator, n: int, samples: int):
    """Blocks of resampled item indices, ``samples`` rows of ``n`` in all; the blocks depend only
    on ``n`` so the stream is the same on every run."""
    rows = max(1, _BLOCK // max(n, 1))
    done = 0
    while done < samples:
        k = min(rows, samples - done)
        yield rng.integers(0, n, size=(k, n))
        done += k


def _as_arrays(num: Sequence[float], den: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(num, dtype=float)
    b = np.asarray(den, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"numerators ({a.shape}) and denominators ({b.shape}) must be two equally long lists")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("numerators and denominators must be finite")
    if np.any(b < 0):
        raise ValueError("denominators must not be negative")
    return a, b


#: bits an int64 holds for packed non-negative sums (one spare below the sign bit)
_PACK_BITS = 62


def _packing(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, list[tuple[int, int, float]]] | None:
    """The columns packed into one int64 per item, when every value is a whole number and the
    sum of any n of them fits its bit field: (packed values, (shift, width, offset) per column);
    None otherwise.  A resample's sums then come from one gather instead of one per column."""
    n = columns[0].size
    fields: list[tuple[int, int, float]] = []
    shift = 0
    for col in columns:
        if col.size == 0 or not np.array_equal(col, np.rint(col)) or np.signbit(col[col == 0]).any():
            return None  # (a -0.0 too: summed alone it stays -0.0, which the packed sum would not keep)
        low, high = float(col.min()), float(col.max())
        if n * max(abs(low), abs(high)) >= 2.0 ** 51:  # every partial sum, either way, stays exact
            return None
        width = int(n * (high - low)).bit_length()  # the largest sum of n shifted values
        fields.append((shift, width, low))
        shift += width
        if shift > _PACK_BITS:
            return None
    packed = np.zeros(n, dtype=np.int64)
    for col, (at, _, low) in zip(columns, fields):
        packed |= (col - low).astype(np.int64) << np.int64(at)
    return packed, fields


def _resampled_sums(columns: Sequence[np.ndarray], idx: np.ndarray) -> list[np.ndarray]:
    """Each column's sum over every row of drawn indices ``idx`` (samples x n), as
    ``col[idx].sum(axis=1)`` gives it.  Whole-number columns are packed into one int64 (the sums
    are exact either way: float64 adds whole numbers below 2**53 exactly in any order, so the
    result is the same to the bit); others are gathered one by one."""
    packing = _packing(columns) if len(columns) > 1 else None
    if packing is None:
        return [col[idx].sum(axis=1) for col in columns]
    packed, fields = packing
    total = packed[idx].sum(axis=1)
    n = idx.shape[1]
    out = []
    for at, width, low in fields:
        part = (total >> np.int64(at)) & np.int64((1 << width) - 1)
        out.append(part.astype(float) + low * n)
    return out


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def _ratios(a: np.ndarray, b: np.ndarray, idx: np.ndarray) -> np.ndarray:
    top, bottom = _resampled_sums((a, b), idx)
    return _ratio(top, bottom)


def _percentiles(values: np.ndarray, level: float) -> tuple[float | None, float | None]:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None, None
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


def ratio_interval(num: Sequence[float], den: Sequence[float], *, samples: int = DEFAULT_SAMPLES,
                   level: float = DEFAULT_LEVEL, seed: int = 0, key: str = "", scale: float = 1.0) -> Interval:
    """``scale`` x sum(num) / sum(den), with its percentile bootstrap interval over the items.

    ``num[i]`` and ``den[i]`` are item i's sums (e.g. the sum of its valid scores and their
    count).  An item with denominator 0 (every judgment failed) still counts as an item drawn; a
    resample whose denominator is 0 is left out of the percentiles."""
    _check(samples, level, seed)
    a, b = _as_arrays(num, den)
    n = a.size
    if n == 0 or b.sum() <= 0:
        return Interval(None, None, None, n, samples, level, seed)
    estimate = scale * float(a.sum() / b.sum())
    rng = _rng(seed, key)
    stats = np.concatenate([_ratios(a, b, idx) for idx in _draws(rng, n, samples)])
    lo, hi = _percentiles(stats * scale, level)
    return Interval(estimate, lo, hi, n, samples, level, seed)


def paired_difference(num_a: Sequence[float], den_a: Sequence[float], num_b: Sequence[float],
                      den_b: Sequence[float], *, samples: int = DEFAULT_SAMPLES, level: float = DEFAULT_LEVEL,
                      seed: int = 0, key: str = "", scale: float = 1.0) -> Interval:
    """The difference A - B of two ratio figures on the same items (position i is the same item
    in both), with the percentile interval of the difference when the items are resampled once
    for both.  Resamples where either side has denominator 0 are left out."""
    return paired_difference_p(num_a, den_a, num_b, den_b, samples=samples, level=level, seed=seed, key=key,
                               scale=scale, test=False)[0]


def paired_difference_p(num_a: Sequence[float], den_a: Sequence[float], num_b: Sequence[float],
                        den_b: Sequence[float], *, samples: int = DEFAULT_SAMPLES, level: float = DEFAULT_LEVEL,
                        seed: int = 0, key: str = "", scale: float = 1.0, test: bool = True
                        ) -> tuple[Interval, float | None]:
    """:func:`paired_difference` and the p-value of a difference of 0 by the paired swap
    permutation test (:func:`judgekit.judging.multiplicity.swap_p`, ``samples`` random swaps,
    its own stream; None without an estimate or with ``test`` False)."""
    from .multiplicity import swap_p, swap_signs

    _check(samples, level, seed)
    a1, b1 = _as_arrays(num_a, den_a)
    a2, b2 = _as_arrays(num_b, den_b)
    if a1.size != a2.size:
        raise ValueError(f"a paired comparison needs the same items on both sides ({a1.size} and {a2.size})")
    n = a1.size
    if n == 0 or b1.sum() <= 0 or b2.sum() <= 0:
        return Interval(None, None, None, n, samples, level, seed), None
    estimate = scale * float(a1.sum() / b1.sum() - a2.sum() / b2.sum())
    rng = _rng(seed, key)
    blocks = []
    for idx in _draws(rng, n, samples):
        t1, d1, t2, d2 = _resampled_sums((a1, b1, a2, b2), idx)
        blocks.append(_ratio(t1, d1) - _ratio(t2, d2))
    stats = np.concatenate(blocks)
    lo, hi = _percentiles(stats * scale, level)
    p = None
    if test:
        signs = swap_signs(_rng(seed, f"{key}:swaps"), n, samples)
        p = float(swap_p(a1[:, None], b1[:, None], a2[:, None], b2[:, None], signs)[0])
    return Interval(estimate, lo, hi, n, samples, level, seed), p


def with_interval(row: dict, name: str, iv: Interval, digits: int = 2) -> dict:
    """``row`` with ``<name>_ci_low`` / ``<name>_ci_high`` added (rounded), for the CSVs."""
    r = lambda v: None if v is None else round(v, digits)  # noqa: E731
    row[f"{name}_ci_low"] = r(iv.low)
    row[f"{name}_ci_high"] = r(iv.high)
    return row


def shown(value: float | None, low: float | None, high: float | None, digits: int = 1) -> str:
    """A figure and its interval for the printed tables: ``12.3 [8.1, 16.0]`` (``-`` when None),
    written as the report page writes it (:func:`judgekit.report.numbers.interval`)."""
    from ..report.numbers import interval

    return interval(value, low, high, digits)
