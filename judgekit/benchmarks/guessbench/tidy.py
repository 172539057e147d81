"""GuessBench's rows of the tidy export (:mod:`judgekit.report.tidy`): one per set x model x
approach x task x turn x extractor, from the ``turns`` table.  ``candidate`` is the model; the
approach and the turn are in ``extra``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["tidy_rows"]

_EXTRA = ("approach", "turn", "answer", "stop", "vote_tied", "error")


def _extractor_reply(row: Mapping[str, Any]) -> str | None:
    """The extractor's own reply on the answer the verdict is on (its last extraction), else the
    lower-cased reply the reference matches."""
    try:
        extractions = json.loads(row.get("extractions") or "[]")
    except ValueError:
        extractions = []
    mine = [e for e in extractions if e.get("prompt") == "extract" and e.get("judge") in (None, row["judge"])]
    return mine[-1].get("raw") if mine and mine[-1].get("raw") is not None else row.get("extracted")


def tidy_rows(turns: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``value``: 1 when the guess is right, 0 when wrong, null when there is no reading;
    ``verdict``: the guess read after ``Answer:``; ``error_kind``: ``failed`` (a call failed) or the
    extraction's ``unparsed`` (a ``no_answer`` reading counts, as wrong)."""
    rows = []
    for r in turns:
        correct, outcome = r.get("correct"), r.get("extraction")
        error_kind = "failed" if r.get("error") else ("unparsed" if outcome == "unparsed" or outcome is None else None)
        rows.append({"item": r["set_id"], "category": r["task"], "candidate": r["model"], "judge": r["judge"],
                     "order": None, "kind": "extract", "value": None if correct is None else float(correct),
                     "verdict": r.get("guess"), "ok": error_kind is None and correct is not None,
                     "error_kind": error_kind, "reasked": False, "judge_text": _extractor_reply(r),
                     "extra": {k: r[k] for k in _EXTRA if r.get(k) not in (None, "")}})
    return rows
