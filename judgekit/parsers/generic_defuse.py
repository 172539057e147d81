"""Defusing candidate text shown to a generic judge, so that a judge quoting it cannot be read as a verdict.

A judge often quotes the answers it compares.  If an answer holds ``[[B>>A]]``, ``[[A]]``, ``[[9]]``
or ``Rating: 9`` and the judge quotes it, :mod:`judgekit.parsers.generic` would read the quote (or,
for ``arena_hard``, find two verdicts that disagree).  :func:`defuse_answer` breaks, in the folded
view of :mod:`judgekit.parsers.view` (case, width, ligatures, invisible characters, markup and white
space all folded away):

* every short double-bracketed token (``[[A>B]]``, ``[[ B ]]``, ``[[7.5]]``, ``［［rating］］``): its
  brackets become parentheses;
* a single-bracketed number (``[7]``, MT-Bench's fallback rating): likewise;
* ``Rating`` before a colon becomes ``Rating-(quoted)``;
* the answer delimiters of the shipped prompts (``[The End of Assistant A's Answer]``,
  ``<|The Start of Assistant B's Answer|>``, ``[END ASSISTANT A]`` ...), with which a candidate
  could close its block early and write instructions of its own: ``Start`` / ``End`` become
  ``Start-(quoted)`` / ``End-(quoted)``, and ``[ASSISTANT A]``'s brackets parentheses.

Text with none of these is returned unchanged (the same object).  What cannot be defused: a
``last_number`` score (any number is one) and a user's ``regex`` (its pattern is the user's).
"""

from __future__ import annotations

import re

from .creation import brackets_to_parentheses
from .view import View, defuse

__all__ = ["GENERIC_MARKER_RULES", "defuse_answer"]

_DOUBLE = re.compile(r"\[\[[^\[\]]{0,40}\]\]")
_SINGLE_NUMBER = re.compile(r"\[[-+]?\d+(?:\.\d*)?\]")
_RATING = re.compile(r"RATING(?=:)")
_TAG = re.compile(r"\[(?:END)?ASSISTANT[AB]?\]")
_DELIMITER = re.compile(r"THE(START|END)OFASSISTANT[AB]?'SANSWER")


def _brackets(pattern: re.Pattern[str]):
    def rule(view: View, text: str) -> list[tuple[int, int, str]]:
        return [e for m in pattern.finditer(view.text) for e in brackets_to_parentheses(view, text, m.start(), m.end())]
    return rule


def _rating(view: View, text: str) -> list[tuple[int, int, str]]:
    return [(*view.span(m.start(), m.end()), "Rating-(quoted)") for m in _RATING.finditer(view.text)]


def _delimiter(view: View, text: str) -> list[tuple[int, int, str]]:
    return [(*view.span(m.start(1), m.end(1)), f"{m.group(1).title()}-(quoted)") for m in _DELIMITER.finditer(view.text)]


#: the rules :func:`defuse_answer` applies
GENERIC_MARKER_RULES = (_brackets(_DOUBLE), _brackets(_SINGLE_NUMBER), _rating, _brackets(_TAG), _delimiter)


def defuse_answer(text: str) -> str:
    """Candidate text in which no generic verdict, rating or answer delimiter can be read, however
    folded (module docstring)."""
    return defuse(text, GENERIC_MARKER_RULES, spaces=False)
