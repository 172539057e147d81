"""Answers made safe to put into a generic judge prompt (``options.defuse_answers``, on by default).

A candidate (or an imported answer) could close its own answer block and write a fake verdict
for the judge to echo.  What the shipped prompts and the verdict parsers by name rely on is found
in the folded view of :mod:`judgekit.parsers.view` (case, full-width forms, ligatures, zero-width
characters, markup and spacing fold away) and broken in the original text:

* double-bracketed tokens (``[[B>>A]]``, ``[[A]]``, ``[[4]]``) get parentheses: ``((B>>A))``;
* the answer blocks' delimiters: ``[ASSISTANT A]`` / ``[END ASSISTANT B]`` get parentheses, and the
  "Start/End of Assistant ..." of Arena-Hard's and MT-Bench's becomes "Start-of-(quoted)-Assistant";
* ``Rating: 4`` (the scale parser's fallback) becomes ``Rating-(quoted): 4``.

Any other text is left byte-identical.  A user's own regex cannot be known here: a prompt with
its own delimiters is on its own.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...parsers.creation import brackets_to_parentheses
from ...parsers.view import View, defuse

__all__ = ["defuse_answer"]

# in the folded view: upper case, no white space
_TOKEN = re.compile(r"\[\[[^\[\]]{1,20}\]\]")
_BLOCK = re.compile(r"\[(?:END)?ASSISTANT[AB]\]")
_START = re.compile(r"(?:START|END)(OF)ASSISTANT")
_RATING = re.compile(r"RATING(?=:?[-+]?\d)")


def _brackets(pattern: re.Pattern[str]):
    def rule(view: View, text: str) -> list[tuple[int, int, str]]:
        return [e for m in pattern.finditer(view.text) for e in brackets_to_parentheses(view, text, m.start(), m.end())]
    return rule


def _start(view: View, text: str) -> list[tuple[int, int, str]]:
    return [(*view.span(m.start(1), m.end(1)), "-of-(quoted)-") for m in _START.finditer(view.text)]


def _rating(view: View, text: str) -> list[tuple[int, int, str]]:
    return [(*view.span(m.start(), m.end()), "Rating-(quoted)") for m in _RATING.finditer(view.text)]


_RULES = (_brackets(_TOKEN), _brackets(_BLOCK), _start, _rating)


@lru_cache(maxsize=1024)  # an answer goes into every judge's prompt in both orders, planned and run
def defuse_answer(answer: str) -> str:
    """``answer`` with every marker above broken (see the module docstring)."""
    return defuse(answer, _RULES, spaces=False)
