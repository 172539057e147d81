"""The report items' pieces every pairwise judge-heavy benchmark shares: how a judgment's order
reads, what every judgment's blocks start with (its label, its meta, a re-asked judgment's first
reply), the flags a judgment puts on its item, an item's line of Rewards, and the answers and
judgments grouped by (candidate, item).  Creation-MMBench and the generic pairwise benchmark build
their items from these; each draws its own reply blocks (where its parser read the verdict)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report.doc import Block, text
from .pairwise import item_sums

__all__ = ["ORDER_LABEL", "judgment_head", "item_score", "judgment_flags", "by_candidate_and_item"]


#: how a judgment's order reads in its label (order 0: the baseline is Assistant A)
ORDER_LABEL = {0: "baseline first (A)", 1: "candidate first (A)"}


def judgment_head(j: Mapping[str, Any], who: str, group: str, first_reply: str | None, *,
                  length_note: str | None) -> tuple[str, dict[str, str], list[Block]]:
    """What every judgment's blocks start with: (its label, ``who`` and the order; its meta: the
    length difference with ``length_note`` when given and recorded, the error kind; the block of
    the first reply when the judgment was re-asked)."""
    label = f"{who} · {ORDER_LABEL.get(int(j['order']), 'order ' + str(j['order']))}"
    meta: dict[str, str] = {}
    if length_note is not None and j.get("length_diff") is not None:
        meta["length difference"] = f"{j['length_diff']:+d} chars ({length_note})"
    if j.get("error_kind"):
        meta["error kind"] = str(j["error_kind"])
    out = []
    if first_reply is not None:
        out.append(Block("judgment", label, [text(first_reply)], group=group, verdict="unreadable: re-asked",
                         status="reasked", meta={"error kind": "parse_failure"}))
        label += " · re-ask"
    return label, meta, out


def item_score(first_judge_sums: Mapping[tuple[str, str], list[float]], index: str,
               candidates: Sequence[str]) -> str | None:
    """An item's line of Rewards by candidate (the first judge's), or None."""
    shown = []
    for c in candidates:
        s = first_judge_sums.get((c, index))
        if s is not None and s[2]:
            shown.append(f"{c} {s[0] / s[2]:+.0f}")
    return "Reward " + ", ".join(shown) if shown else None


def judgment_flags(j: Mapping[str, Any]) -> list[str]:
    """The flags a judgment puts on its item: re-asked, failed (a call) or a parse failure."""
    flags = ["reasked"] if j.get("reasked") else []
    if j.get("error"):
        flags.append("failed")
    elif j.get("error_kind") == "parse_failure":
        flags.append("parse failure")
    return flags


def by_candidate_and_item(answers: Sequence[Mapping[str, Any]], judgments: Sequence[Mapping[str, Any]],
                          judges: Sequence[str]):
    """(answer by (model, index), judgments by (model, index), the first judge's per-item sums):
    what a report's items are built from."""
    ans = {(a["model"], a["index"]): a for a in answers}
    by_item: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for j in judgments:
        by_item.setdefault((j["model"], j["index"]), []).append(j)
    sums = item_sums([j for j in judgments if judges and j.get("judge") == judges[0]])
    return ans, by_item, sums
