"""Test helpers: parse judge replies the way the Creation-MMBench reference does."""

from __future__ import annotations

import re

__all__ = ["parse_verdict", "parse_vfs", "VALID_VERDICTS"]

VALID_VERDICTS = {"A>>B", "A>B", "A=B", "B>A", "B>>A", "B<<A", "B<A", "B=A", "A<B", "A<<B"}
_CANON = {"B<<A": "A>>B", "B<A": "A>B", "B=A": "A=B", "A<B": "B>A", "A<<B": "B>>A"}


def parse_verdict(text: str) -> str | None:
    """The canonical verdict of the first 'FINAL VERDICT IS:' line, or None."""
    for line in text.split("\n"):
        up = line.upper()
        if "FINAL VERDICT IS:" in up:
            m = re.search(r"\[\[\s*(.*?)\s*\]\]", up)
            if m:
                v = m.group(1).replace(" ", "")
                if v in VALID_VERDICTS:
                    return _CANON.get(v, v)
    return None


def parse_vfs(text: str) -> tuple[float, float] | None:
    """(A score, B score) from the two 'Response X Visual Factuality Score:' lines, or None."""
    scores: dict[str, float] = {}
    for line in text.split("\n"):
        up = re.sub(r"[\"*]", "", line.upper())
        for side in ("A", "B"):
            prefix = f"RESPONSE {side} VISUAL FACTUALITY SCORE:"
            if up.startswith(prefix):
                try:
                    scores[side] = float(up[len(prefix):].split("/")[0].strip())
                except ValueError:
                    pass
    if len(scores) == 2 and all(0 <= s <= 10 for s in scores.values()):
        return scores["A"], scores["B"]
    return None
