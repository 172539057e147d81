"""Rows of small integers as one integer each, so that NumPy numbers or dedupes them as a 1-d
array (a sort of int64) rather than as rows (a lexsort, or a structured sort)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["packed"]


def packed(cols: Sequence[np.ndarray]) -> np.ndarray:
    """Rows of integers (one 1-d column each) as one int64 per row, the same for the same row
    only, when their ranges allow (else the rows as a positions x columns matrix):
    :func:`.columns.first_order` and ``np.unique`` number one integer per row faster than rows."""
    n = cols[0].size if cols else 0
    if n == 0:
        return np.zeros((0, len(cols)), dtype=np.int64)
    lows = [int(c.min()) for c in cols]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(cols, lows)]
    if np.prod(np.array(spans, dtype=float)) >= 2.0 ** 62:
        return np.column_stack(cols).astype(np.int64)
    out = np.zeros(n, dtype=np.int64)
    for c, lo, width in zip(cols, lows, spans):
        out *= width
        out += c
        if lo:
            out -= lo
    return out
