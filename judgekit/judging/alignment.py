"""Judge-human alignment (Creation-MMBench's paper, Table 4 and supplementary F.2 / Table 7).

J is a judge's pairwise result for an item (a judging model's score, or one human's rating),
P the reference value for the same item: the mean of the human ratings (for human-human
alignment, the mean of the *other* humans), all on the -2..+2 scale.  Over the n paired items:

* MAE = (1/n) sum |J_i - P_i|                                    (Eq. 1)
* Consistency = (1/n) sum [ |J_i - P_i| <= 1 ], reported in %    (Eq. 2)

Pairs where either side is None (a failed judgment, an unrated item) are left out of n.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["paired", "mae", "consistency"]

# |J - P| is compared with the tolerance after this slack, so that a mean such as 1/3 + 2/3
# computed in floating point still counts as exactly 1 away
_EPS = 1e-9


def paired(judge: Sequence[float | None], human: Sequence[float | None]) -> list[tuple[float, float]]:
    """The (J, P) pairs where both are present; the sequences must be equally long."""
    if len(judge) != len(human):
        raise ValueError(f"judge has {len(judge)} values, human has {len(human)}")
    return [(float(j), float(p)) for j, p in zip(judge, human) if j is not None and p is not None]


def mae(judge: Sequence[float | None], human: Sequence[float | None]) -> float | None:
    """Mean absolute error between judge results and mean human ratings (Eq. 1); None if no pair."""
    pairs = paired(judge, human)
    if not pairs:
        return None
    return sum(abs(j - p) for j, p in pairs) / len(pairs)


def consistency(
    judge: Sequence[float | None], human: Sequence[float | None], tol: float = 1.0
) -> float | None:
    """Percent of pairs with |J - P| <= ``tol`` (Eq. 2, where tol = 1); None if no pair."""
    pairs = paired(judge, human)
    if not pairs:
        return None
    return 100.0 * sum(1 for j, p in pairs if abs(j - p) <= tol + _EPS) / len(pairs)
