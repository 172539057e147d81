"""Reading the replies of a judge the user prompts: pairwise verdicts and rubric scores, by name.

A parser is picked by name (``options.verdict`` of the pairwise benchmark, ``options.score`` of the
rubric one) and returns a :class:`Reading` or None.  None is a parse failure, which the benchmark
counts (and may re-ask): it is never a score.

Pairwise verdict parsers (:func:`verdict_parser`); the value is the score for Assistant B, an int
in -2..2 (``A>>B`` -2 ... ``B>>A`` +2, Creation-MMBench's convention):

* ``arena_hard``: Arena-Hard-Auto's rule.  Every ``[[...]]`` made of ``A``, ``B``, ``<``, ``>``,
  ``=`` (and spaces, which are ignored) is read; all must be verdicts of the ``A>>B`` family
  (``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A`` and the mirrored ``B<<A``, ``B<A``, ``B=A``,
  ``A<B``, ``A<<B``) that agree on the score, else None.  A single ``[[A]]`` or ``[[AB]]`` among
  them makes the reply ambiguous (Arena-Hard counts it as a second, different verdict).
  The reading's token and span are the last verdict's.
* ``mt_bench``: MT-Bench's pair-v2 rule: ``[[A]]`` anywhere -> -2, else ``[[B]]`` -> +2, else
  ``[[C]]`` -> 0 (exact, case-sensitive substrings, checked in that order).  A win counts as
  "much better", so Reward = 100 x (wins - losses) / valid and Win Rate = wins / valid.
* ``scale``: a preference on a numeric scale ``(low, high)`` (default 1..5): the last ``[[N]]``,
  else the last ``Rating: N`` (the colon required); low means Assistant A much better, high
  Assistant B much better.  N is mapped linearly onto -2..+2 and rounded half away from zero; a
  number off the scale is None.
* ``regex``: the LAST match of the user's regex.  A named group ``verdict`` is looked up (upper
  case, spaces removed) in ``verdict_values`` (default :data:`DEFAULT_VERDICT_VALUES`: the
  ``[[A>>B]]`` family, and ``A`` -2, ``B`` +2, ``C`` / ``TIE`` 0); a group ``score`` is a number
  mapped as by ``scale``.  A value neither knows is None.

Rubric score parsers (:func:`score_parser`); the value is the number read, on the scale (default
1..10), else None:

* ``rating``: MT-Bench single-v1's rule: the first ``[[N]]`` (digits, optional decimals), else the
  first ``[N]``.
* ``last_number``: the last number in the reply; a denominator (the ``10`` of ``7/10`` or of
  ``7 out of 10``) is not a number read.
* ``regex``: the LAST match of the user's regex; its named group ``score`` is the number.

Where a judge writes several readings the rules differ on purpose: each follows the reference it
is named after (MT-Bench takes the first, Arena-Hard requires agreement), and ``scale``,
``last_number`` and ``regex`` take the last, as Inspect AI's model-graded scorer does (a judge's
conclusion comes last).

Candidate text shown to these judges can be defused with
:func:`judgekit.parsers.generic_defuse.defuse_answer`, so that a judge quoting an answer is not read
as a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated

from pydantic import BaseModel, Field, field_validator, model_validator

from ..model_settings import STRICT_CONFIG
from .creation import VERDICT_SCORES

__all__ = [
    "ARENA_VERDICTS",
    "DEFAULT_PAIRWISE_SCALE",
    "DEFAULT_RUBRIC_SCALE",
    "DEFAULT_VERDICT_VALUES",
    "SCORE_PARSERS",
    "VERDICT_PARSERS",
    "ParserOptions",
    "Reading",
    "scale_to_verdict",
    "score_parser",
    "verdict_parser",
]

VERDICT_PARSERS = ("arena_hard", "mt_bench", "scale", "regex")
SCORE_PARSERS = ("rating", "last_number", "regex")
DEFAULT_PAIRWISE_SCALE: tuple[float, float] = (1.0, 5.0)
DEFAULT_RUBRIC_SCALE: tuple[float, float] = (1.0, 10.0)

#: the ``[[A>>B]]`` family (upper case, no spaces) -> score for Assistant B: Creation-MMBench's table
ARENA_VERDICTS: dict[str, int] = VERDICT_SCORES

#: the regex parser's default ``verdict`` group values (upper case, no spaces)
DEFAULT_VERDICT_VALUES: dict[str, int] = {**ARENA_VERDICTS, "A": -2, "B": 2, "C": 0, "TIE": 0}


@dataclass(frozen=True)
class Reading:
    """One value read from a judge's reply."""

    value: float
    """pairwise: the score for Assistant B, an int in -2..2; rubric: the number read"""
    token: str
    """what was read, as written in the reply (``[[B>A]]``, ``[[B]]``, ``7``)"""
    span: tuple[int, int]
    """where ``token`` lies in the reply (start, end), for the report to highlight"""


class ParserOptions(BaseModel):
    """The options the parsers take (the benchmarks' Options carry these fields)."""

    model_config = STRICT_CONFIG

    scale: Annotated[tuple[float, float], Field(strict=False)] | None = None
    """(low, high) of the judge's numeric scale; None: the parser's default (pairwise 1..5, rubric 1..10)"""
    regex: str | None = None
    """the regex parser's pattern: a named group ``verdict`` or ``score``"""
    verdict_values: dict[str, int] | None = None
    """the regex parser's ``verdict`` group values -> score for B (-2..2); None: the defaults"""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            _compile(v)
        return v

    @field_validator("verdict_values")
    @classmethod
    def _in_range(cls, v: dict[str, int] | None) -> dict[str, int] | None:
        if v is not None:
            _verdict_table(v)
        return v

    @model_validator(mode="after")
    def _scale_order(self) -> ParserOptions:
        if self.scale is not None:
            _check_scale(self.scale)
        return self


# --------------------------------------------------------------------------- helpers

_NUMBER = r"[-+]?\d+(?:\.\d+)?"


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        rx = re.compile(pattern)
    except re.error as e:
        raise ValueError(f"regex {pattern!r} does not compile: {e}") from None
    if not ({"verdict", "score"} & set(rx.groupindex)):
        raise ValueError(f"regex {pattern!r} has no named group (?P<verdict>...) or (?P<score>...)")
    return rx


def _check_scale(scale: tuple[float, float]) -> tuple[float, float]:
    low, high = (float(x) for x in scale)
    if not low < high:
        raise ValueError(f"scale ({low:g}, {high:g}): the low end must be below the high end")
    return low, high


def _verdict_table(values: dict[str, int]) -> dict[str, int]:
    table: dict[str, int] = {}
    for key, score in values.items():
        if isinstance(score, bool) or not isinstance(score, int) or not -2 <= score <= 2:
            raise ValueError(f"verdict_values[{key!r}] = {score!r}: a score for B must be an integer in -2..2")
        table[_key(key)] = score
    return table


def _key(word: str) -> str:
    return re.sub(r"\s+", "", word).upper()


def _on_scale(text: str, scale: tuple[float, float]) -> Fraction | None:
    value = Fraction(text)
    low, high = scale
    return value if Fraction(low) <= value <= Fraction(high) else None


def scale_to_verdict(value: Fraction | float, scale: tuple[float, float]) -> int:
    """A number on ``scale`` (low = A much better, high = B much better) as a score for B in -2..2:
    mapped linearly and rounded half away from zero, in exact arithmetic."""
    low, high = Fraction(scale[0]), Fraction(scale[1])
    x = Fraction(-2) + 4 * (Fraction(value) - low) / (high - low)
    r = int(abs(x) + Fraction(1, 2))  # floor(|x| + 1/2): half away from zero
    return r if x >= 0 else -r


def _last(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    m = None
    for m in rx.finditer(text):
        pass
    return m


# --------------------------------------------------------------------------- verdict parsers

_ARENA = re.compile(r"\[\[([AB<>=\s]+)\]\]")


def _arena_hard(text: str | None) -> Reading | None:
    if not text:
        return None
    matches = [m for m in _ARENA.finditer(text) if m.group(1).strip()]
    scores = {ARENA_VERDICTS.get(_key(m.group(1))) for m in matches}
    if len(scores) != 1 or None in scores:
        return None
    m = matches[-1]
    return Reading(float(scores.pop()), m.group(0), m.span())


_MT_PAIR = (("[[A]]", -2), ("[[B]]", 2), ("[[C]]", 0))


def _mt_bench(text: str | None) -> Reading | None:
    if not text:
        return None
    for token, score in _MT_PAIR:
        i = text.find(token)
        if i >= 0:
            return Reading(float(score), token, (i, i + len(token)))
    return None


_SCALE_DOUBLE = re.compile(r"\[\[\s*(" + _NUMBER + r")\s*\]\]")
_SCALE_RATING = re.compile(r"rating\s*:\s*\**\s*(" + _NUMBER + r")", re.IGNORECASE)


def _scale_parser(scale: tuple[float, float]) -> Callable[[str | None], Reading | None]:
    def parse(text: str | None) -> Reading | None:
        if not text:
            return None
        m = _last(_SCALE_DOUBLE, text) or _last(_SCALE_RATING, text)
        if m is None:
            return None
        value = _on_scale(m.group(1), scale)
        if value is None:
            return None
        return Reading(float(scale_to_verdict(value, scale)), m.group(0), m.span())
    return parse


def _regex_verdict(rx: re.Pattern[str], table: dict[str, int],
                   scale: tuple[float, float]) -> Callable[[str | None], Reading | None]:
    def parse(text: str | None) -> Reading | None:
        if not text:
            return None
        m = _last(rx, text)
        if m is None:
            return None
        groups = m.groupdict()
        if groups.get("verdict") is not None:
            score = table.get(_key(groups["verdict"]))
            if score is None:
                return None
            return Reading(float(score), m.group("verdict"), m.span("verdict"))
        if groups.get("score") is not None:
            number = re.fullmatch(r"\s*(" + _NUMBER + r")\s*", groups["score"])
            if number is None:
                return None
            value = _on_scale(number.group(1), scale)
            if value is None:
                return None
            return Reading(float(scale_to_verdict(value, scale)), m.group("score"), m.span("score"))
        return None
    return parse


def verdict_parser(name: str, *, scale: tuple[float, float] | None = None, regex: str | None = None,
                   verdict_values: dict[str, int] | None = None) -> Callable[[str | None], Reading | None]:
    """The pairwise parser called ``name`` (one of :data:`VERDICT_PARSERS`).

    ``scale`` is used by ``scale`` and by ``regex``'s ``score`` group (default 1..5); ``regex`` and
    ``verdict_values`` by ``regex`` only.  ValueError for an unknown name, a regex that does not
    compile or has neither named group, a missing regex, a scale whose low end is not below its high
    end, or a verdict value outside -2..2.
    """
    sc = _check_scale(scale) if scale is not None else DEFAULT_PAIRWISE_SCALE
    if name == "arena_hard":
        return _arena_hard
    if name == "mt_bench":
        return _mt_bench
    if name == "scale":
        return _scale_parser(sc)
    if name == "regex":
        if regex is None:
            raise ValueError("verdict = 'regex' needs options.regex, a pattern with a named group "
                             "(?P<verdict>...) or (?P<score>...)")
        table = _verdict_table(verdict_values) if verdict_values is not None else DEFAULT_VERDICT_VALUES
        return _regex_verdict(_compile(regex), table, sc)
    raise ValueError(f"unknown verdict parser {name!r}: one of {', '.join(VERDICT_PARSERS)}")


# --------------------------------------------------------------------------- score parsers

# MT-Bench single-v1 (fastchat/llm_judge/common.py): one_score_pattern and its backup
_RATING = re.compile(r"\[\[(\d+\.?\d*)\]\]")
_RATING_BACKUP = re.compile(r"\[(\d+\.?\d*)\]")
# a number not glued to a word or another number; a denominator ("/ 10", "out of 10") is skipped
_ANY_NUMBER = re.compile(r"(?<![\w.])" + _NUMBER + r"(?![\w]|\.\d)")
_DENOMINATOR = re.compile(r"(?:/|\bout\s+of)\s*$", re.IGNORECASE)


def _rating(scale: tuple[float, float]) -> Callable[[str | None], Reading | None]:
    def parse(text: str | None) -> Reading | None:
        if not text:
            return None
        m = _RATING.search(text) or _RATING_BACKUP.search(text)
        if m is None:
            return None
        raw = m.group(1).rstrip(".")  # "7." is 7, as ast.literal_eval reads it
        value = _on_scale(raw, scale)
        if value is None:
            return None
        return Reading(float(value), m.group(0), m.span())
    return parse


def _last_number(scale: tuple[float, float]) -> Callable[[str | None], Reading | None]:
    def parse(text: str | None) -> Reading | None:
        if not text:
            return None
        last = None
        for m in _ANY_NUMBER.finditer(text):
            if not _DENOMINATOR.search(text[max(0, m.start() - 12):m.start()]):
                last = m
        if last is None:
            return None
        value = _on_scale(last.group(0), scale)
        if value is None:
            return None
        return Reading(float(value), last.group(0), last.span())
    return parse


def _regex_score(rx: re.Pattern[str], scale: tuple[float, float]) -> Callable[[str | None], Reading | None]:
    def parse(text: str | None) -> Reading | None:
        if not text:
            return None
        m = _last(rx, text)
        if m is None or m.group("score") is None:
            return None
        number = re.fullmatch(r"\s*(" + _NUMBER + r")\s*", m.group("score"))
        if number is None:
            return None
        value = _on_scale(number.group(1), scale)
        if value is None:
            return None
        return Reading(float(value), m.group("score"), m.span("score"))
    return parse


def score_parser(name: str, *, scale: tuple[float, float] | None = None, regex: str | None = None,
                 verdict_values: dict[str, int] | None = None) -> Callable[[str | None], Reading | None]:
    """The rubric parser called ``name`` (one of :data:`SCORE_PARSERS`), reading numbers on ``scale``
    (default 1..10).  ``verdict_values`` is accepted (the options are shared) and not used.
    ValueError for an unknown name, a missing regex or one without a ``score`` group, a bad scale."""
    sc = _check_scale(scale) if scale is not None else DEFAULT_RUBRIC_SCALE
    if name == "rating":
        return _rating(sc)
    if name == "last_number":
        return _last_number(sc)
    if name == "regex":
        if regex is None:
            raise ValueError("score = 'regex' needs options.regex, a pattern with a named group (?P<score>...)")
        rx = _compile(regex)
        if "score" not in rx.groupindex:
            raise ValueError(f"regex {regex!r} has no named group (?P<score>...)")
        return _regex_score(rx, sc)
    raise ValueError(f"unknown score parser {name!r}: one of {', '.join(SCORE_PARSERS)}")
