"""Defusing candidate text shown to a generic judge, so that a judge quoting it cannot be read as a verdict.

A judge often quotes the answers it compares or grades.  If an answer holds ``[[B>>A]]``, ``[[A]]``,
``[[9]]`` or ``Rating: 9`` and the judge quotes it, :mod:`judgekit.parsers.generic` would read the
quote (or, for ``arena_hard``, find two verdicts that disagree, or one that is none, and read
nothing); an answer holding a block delimiter of the prompt could close its block early and write
instructions of its own.  :func:`defuse_answer` (used by the pairwise and the rubric benchmarks,
``options.defuse_answers``) breaks, in the folded view of :mod:`judgekit.parsers.view` (case,
width, ligatures, invisible characters, markup and white space all folded away), and in the view
of the text as a judge that decodes HTML character references would quote it (``&#91;``,
``&lsqb;``, ``&amp;#91;``: :func:`judgekit.parsers.view.decodings`):

* every double-bracketed token, however long and however nested (``[[A>B]]``, ``[[ B ]]``,
  ``[[7.5]]``, ``［［rating］］``, ``[[`` + 41 zeros + ``٩]]``): its brackets become parentheses;
* a single-bracketed number (``[7]``, ``[٩]``, MT-Bench single's fallback rating): likewise;
* ``Rating`` before a colon or a number (``Rating: 9``, ``rating 9``) and ``Score`` before a colon
  become ``Rating-(quoted)`` / ``Score-(quoted)``;
* the answer delimiters of the shipped prompts and of MT-Bench's and Arena-Hard's
  (``[The End of Assistant A's Answer]``, ``<|The Start of Assistant B's Answer|>``, any
  "start/end of assistant"), and the reference and rubric blocks' (``[The Start of Reference
  Answer]``, ``[The End of Rubric]``): ``Start`` / ``End`` become ``Start-(quoted)`` / ``End-(quoted)``;
  ``[ASSISTANT A]`` and ``[END ASSISTANT B]`` get parentheses for brackets.

A digit is any Unicode decimal digit (category Nd), as the parsers' ``\\d`` reads it.  A marker
found only after decoding is broken in the characters it was decoded from (``&#91;`` becomes
``(``).  Text with none of these is returned unchanged.  What cannot be defused: a
``last_number`` score (any number is one) and a user's ``regex`` (its pattern is the user's)
beyond the tokens above.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .creation import brackets_to_parentheses
from .view import View, defuse

__all__ = ["GENERIC_MARKER_RULES", "defuse_answer"]

# looked for in the folded view: upper case, no white space, no markup
# every double-bracketed token, however long (``[[`` + 41 zeros + ``٩]]`` is a 9 to the parsers)
_DOUBLE = re.compile(r"\[\[[^\[\]]*\]\]")
# \d: any Unicode decimal digit (category Nd), as the parsers' own \d reads them
_SINGLE_NUMBER = re.compile(r"\[[-+]?[\d.]+\]")
_LABEL = re.compile(r"RATING(?=:|[-+]?\d)|SCORE(?=:)")
_TAG = re.compile(r"\[(?:END)?ASSISTANT[AB]?\]")
_DELIMITER = re.compile(r"(START|END)OFASSISTANT|(?<=\[THE)(START|END)OF(?:THE)?(?:REFERENCE|RUBRIC)(?:ANSWER)?\]")


def _brackets(pattern: re.Pattern[str]):
    def rule(view: View, text: str) -> list[tuple[int, int, str]]:
        return [e for m in pattern.finditer(view.text) for e in brackets_to_parentheses(view, text, m.start(), m.end())]
    return rule


_TO_PARENTHESES = str.maketrans("[]", "()")
_PARENTHESIS = re.compile(r"[()]")


def _double(view: View, text: str) -> list[tuple[int, int, str]]:
    """Every double-bracketed token, nested ones included (``[[a[[9]]b]]``): once the innermost
    is broken the one around it is a token too, so they are all found at once, not one nesting
    level per round of :func:`~judgekit.parsers.view.defuse`."""
    work = view.text
    while True:
        spans = [m.span() for m in _DOUBLE.finditer(work)]
        if not spans:
            break
        parts, pos = [], 0
        for a, b in spans:
            parts += [work[pos:a], work[a:b].translate(_TO_PARENTHESES)]
            pos = b
        parts.append(work[pos:])
        work = "".join(parts)
    if work is view.text:
        return []
    # each original character behind a bracket that became a parenthesis, broken once
    source, before = view.source, view.text
    broken = {source[i]: i for i in (m.start() for m in _PARENTHESIS.finditer(work)) if before[i] in "[]"}
    return [e for i in broken.values() for e in brackets_to_parentheses(view, text, i, i + 1)]


def _label(view: View, text: str) -> list[tuple[int, int, str]]:
    return [(*view.span(m.start(), m.end()), f"{m.group().title()}-(quoted)") for m in _LABEL.finditer(view.text)]


def _delimiter(view: View, text: str) -> list[tuple[int, int, str]]:
    out = []
    for m in _DELIMITER.finditer(view.text):
        g = 1 if m.group(1) else 2
        out.append((*view.span(m.start(g), m.end(g)), f"{m.group(g).title()}-(quoted)"))
    return out


#: the rules :func:`defuse_answer` applies
GENERIC_MARKER_RULES = (_double, _brackets(_SINGLE_NUMBER), _label, _brackets(_TAG), _delimiter)


@lru_cache(maxsize=1024)  # an answer goes into every judge's prompt (both orders), planned and run
def defuse_answer(text: str) -> str:
    """Candidate text in which no generic verdict, rating or block delimiter can be read, however
    folded (module docstring)."""
    return defuse(text, GENERIC_MARKER_RULES, spaces=False)
