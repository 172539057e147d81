"""Wilson score intervals for a share k / n (a judge's swap consistency, first-slot preference, tie
rate): the interval of the binomial proportion that inverts the score test (Wilson 1927; Agresti &
Coull 1998 show it keeps close to its nominal coverage down to small n, where the Wald interval
does not).  With z the normal quantile of the level, p = k / n:

    centre = (p + z^2 / 2n) / (1 + z^2 / n)
    half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

It is never empty and stays inside [0, 1]; at k = 0 its low end is 0 and at k = n its high end 1.
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["wilson"]


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """(low, high) of the Wilson interval of ``k`` successes in ``n`` trials; (None, None) for n = 0."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"a share needs 0 <= k <= n, not k={k}, n={n}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"interval level must be between 0 and 1, not {level}")
    if n == 0:
        return None, None
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high
