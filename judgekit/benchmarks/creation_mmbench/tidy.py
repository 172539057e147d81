"""Creation-MMBench's rows of the tidy export (:mod:`judgekit.report.tidy`): one per judgment
(candidate x item x judge x kind x order), pairwise and VFS."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .report_items import verdict_line, vfs_lines

__all__ = ["tidy_rows"]


def _read(j: Mapping[str, Any]) -> str | None:
    """What the parser read, as the judge wrote it: the verdict token, or the candidate's VFS line."""
    reply = j.get("judge_text") or ""
    if not j.get("ok"):
        return None
    if j["kind"] == "pairwise":
        found = verdict_line(reply)
        return found[1] if found else None
    lines = vfs_lines(reply)
    return (lines[1] if j["order"] == 0 else lines[0]) if lines else None  # order 0: the candidate is B


def tidy_rows(judgments: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``value``: the candidate's pairwise score (-2..2, swapped orders already negated) or its VFS
    (0-10); ``extra``: the task, the baseline's VFS, the answers' length difference, a call's error."""
    rows = []
    for j in judgments:
        value = j["score"] if j["kind"] == "pairwise" else j.get("vfs")
        rows.append({"item": j["index"], "category": j.get("category"), "candidate": j["model"], "judge": j["judge"],
                     "order": j["order"], "kind": j["kind"],
                     "value": value if isinstance(value, (int, float)) else None, "verdict": _read(j),
                     "ok": j["ok"], "error_kind": j.get("error_kind"), "reasked": j.get("reasked", False),
                     "judge_text": j.get("judge_text"),
                     "extra": {k: j.get(k) for k in ("task", "vfs_ref", "length_diff", "error")
                               if j.get(k) is not None}})
    return rows
