"""MMIE's rows of the tidy export (:mod:`judgekit.report.tidy`): one per system x item x scorer,
from the ``scores`` table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["tidy_rows"]

_EXTRA = ("field", "percent", "images_attached", "images_dropped", "texts_dropped", "error", "failed_stage",
          "skipped")


def tidy_rows(scores: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``value``: the score 0-6; ``verdict``: the number as written after ``### Score``; a row the
    reference's rules skip, a failed call or an unreadable score has ``ok`` false and its outcome
    (``skipped``, ``failed``, ``missing``, ``not_a_number``, ``out_of_range``) as ``error_kind``."""
    rows = []
    for r in scores:
        ok = r["outcome"] == "ok"
        rows.append({"item": r["id"], "category": r["category"], "candidate": r["system"], "judge": r["judge"],
                     "order": None, "kind": "score", "value": r["score"], "verdict": r["raw_score"], "ok": ok,
                     "error_kind": None if ok else (r["outcome"] or "not_scored"), "reasked": False,
                     "judge_text": r["judge_reply"],
                     "extra": {k: r[k] for k in _EXTRA if r.get(k) is not None}})
    return rows
