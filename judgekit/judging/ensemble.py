"""A judge panel's ensemble of pairwise verdicts: which rule, and the option that picks it.

judgekit's addition (the benchmarks' authors report one judge), so its default is ours to choose:

* ``"mean"`` (the default): per candidate, item and order, the mean of the judges' valid
  verdicts on the -2..+2 scale, as Arena-Hard-Auto pools its judges' scores.  The averaged value
  ``v`` counts as a win when ``v > 0``, a tie when ``v == 0`` and a loss when ``v < 0``; Reward is
  ``50 x`` the mean of ``v`` over the valid judgments; the verdict counts bin ``v`` to the nearest
  verdict of its sign (``0 < |v| < 1.5`` better/worse, ``|v| >= 1.5`` much better/worse).
* ``"majority"``: the verdict most judges gave (:func:`judgekit.judging.agreement.majority`).
  With two judges who disagree this is the median rounded toward 0, so +1 against -1 is a tie
  and the ensemble ties far more often than either judge.

VFS and other scores are always averaged (:func:`judgekit.judging.agreement.mean_score`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..config import STRICT_CONFIG
from .agreement import ENSEMBLE_RULES, majority, mean_score
from .agreement import ensemble_summary as _summary

__all__ = ["EnsembleRule", "DEFAULT_ENSEMBLE", "EnsembleOptions", "pairwise_rule", "describe", "ensemble_summary"]

EnsembleRule = Literal["mean", "majority"]

#: the ensemble a panel gets unless ``options.ensemble`` says otherwise
DEFAULT_ENSEMBLE: EnsembleRule = "mean"

#: how the ``mean`` ensemble's averaged verdict becomes the figures (summary.json, docs)
MEAN_FIGURES = ("win: the averaged verdict > 0, tie: = 0, loss: < 0; Reward = 50 x the mean averaged verdict; "
                "counts bin it to the nearest verdict of its sign (|v| >= 1.5: much better/worse)")


class EnsembleOptions(BaseModel):
    """``[options]`` of a judge panel's ensemble (the benchmarks with pairwise verdicts)."""

    model_config = STRICT_CONFIG

    ensemble: EnsembleRule = Field(DEFAULT_ENSEMBLE, description="a panel's pairwise ensemble: mean (the judges' "
                                                                 "verdicts -2..+2 averaged) or majority (the verdict "
                                                                 "most judges gave)")


def pairwise_rule(rule: str) -> Callable[[Sequence[Any]], Any]:
    """The function that makes the ensemble's verdict from the judges' valid verdicts."""
    if rule == "mean":
        return mean_score
    if rule == "majority":
        return majority
    raise ValueError(f"unknown ensemble rule {rule!r} (mean or majority)")


def describe(rule: str) -> str:
    """What the pairwise verdict of ``rule`` is, in words (summary.json's ``description``)."""
    if rule == "mean":
        return f"the pairwise verdict by mean ({ENSEMBLE_RULES['mean']}; {MEAN_FIGURES})"
    return f"the pairwise verdict by majority ({ENSEMBLE_RULES['majority']})"


def ensemble_summary(rule: str, results: list[dict[str, Any]], *, vfs: bool = False) -> dict[str, Any]:
    """``summary["ensemble"]``: the rules by name, what they do, and the ensemble's rows."""
    rules = {"pairwise verdict": rule, **({"vfs": "mean"} if vfs else {})}
    text = f"per candidate, item and order: {describe(rule)}"
    if vfs:
        text += f"; VFS and VFS ref by mean ({ENSEMBLE_RULES['mean']})"
    return _summary(f"{rule}/mean" if vfs else rule, results, rules=rules, description=text)
