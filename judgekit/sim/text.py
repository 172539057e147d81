"""Reading marked blocks out of a prompt's text: a helper every simulated behaviour may use."""

from __future__ import annotations

__all__ = ["block_span"]


def block_span(text: str, start_mark: str, end_mark: str, *, first_end: bool = False) -> tuple[int, int] | None:
    """Where the text between an ``end_mark`` (the last one; the first with ``first_end``) and the
    last ``start_mark`` before it lies (skipping mentions of the start mark in instructions); None
    if either is missing."""
    j = text.find(end_mark) if first_end else text.rfind(end_mark)
    if j < 0:
        return None
    i = text.rfind(start_mark, 0, j)
    if i < 0:
        return None
    return i + len(start_mark), j
