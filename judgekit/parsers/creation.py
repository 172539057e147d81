"""Reading Creation-MMBench judge replies, exactly as the reference evaluation does.

Both parsers return None for a reply they cannot read: that is a parse failure, counted by the
metrics (parse-ok rate) and not re-asked by default (the reference never re-asks).  An empty VFS
reply is :data:`NO_OBJECTIVE`, the reference's value for "no VFS judgment", left out of every VFS
figure.  (An empty reply never reaches the reference's parser from its API wrapper, which asks
again and then hands over its failure message, a parse failure; judgekit's providers do the same
with an empty reply: :class:`~judgekit.errors.EmptyReply`, retried, then a counted failure.)

Which line wins when several match is the reference's choice, not ours, and differs between
the two parsers (see each docstring).

Candidate answers are defused against these parsers with :func:`defuse_markers`, which looks for
the same markers through the folded view of :mod:`judgekit.parsers.view` (every normalisation the
parsers or a quoting judge could apply), so that no candidate text can be read as a verdict or a
VFS line; the parsers themselves read genuine judge replies exactly as the reference does.
"""

from __future__ import annotations

import re

from .view import View, defuse

__all__ = [
    "VERDICT_SCORES",
    "VERDICT_MARKER",
    "VFS_MARKER_A",
    "VFS_MARKER_B",
    "parse_verdict",
    "parse_vfs",
    "NO_OBJECTIVE",
    "MARKER_RULES",
    "defuse_markers",
]

VERDICT_MARKER = "FINAL VERDICT IS:"
VFS_MARKER_A = "RESPONSE A VISUAL FACTUALITY SCORE:"
VFS_MARKER_B = "RESPONSE B VISUAL FACTUALITY SCORE:"

#: verdict (upper case, no spaces) -> score for Assistant B; mirrored spellings included
VERDICT_SCORES: dict[str, int] = {
    "B>>A": 2, "A<<B": 2,
    "B>A": 1, "A<B": 1,
    "A=B": 0, "B=A": 0,
    "A>B": -1, "B<A": -1,
    "A>>B": -2, "B<<A": -2,
}

#: what :func:`parse_vfs` returns for an empty reply, as the reference's ``extract_objective``
NO_OBJECTIVE = "NO_OBJECTIVE"

_DOUBLE = re.compile(r"\[\[\s*(.*?)\s*\]\]")
# the reference strips only typographic double quotes and asterisks before matching
_VFS_STRIP = re.compile("[\u201c\u201d*]")


def parse_verdict(text: str | None) -> int | None:
    """The pairwise score for Assistant B (+2..-2), or None.

    Line by line, top to bottom: a line whose upper-cased text contains ``FINAL VERDICT IS:``
    is read by taking the first ``[[...]]`` on it and removing spaces; if that is one of the
    ten spellings (``A>>B`` ... ``B>>A`` and the mirrored ``B<<A`` ... ``A<<B``) it is the
    answer.  Otherwise (no ``[[...]]``, or an unknown token such as ``[[VERDICT]]``) the line is
    passed over and the search goes on.  So the answer is the FIRST marker line that carries a
    valid verdict, as in the reference; a second ``[[...]]`` on the same line is never read.

    Mapping: ``B>>A``/``A<<B`` +2, ``B>A``/``A<B`` +1, ``A=B``/``B=A`` 0, ``A>B``/``B<A`` -1,
    ``A>>B``/``B<<A`` -2.
    """
    if not text:
        return None
    for line in text.split("\n"):
        upper = line.upper()
        if VERDICT_MARKER not in upper:
            continue
        m = _DOUBLE.search(upper)
        if m is None:
            continue
        token = m.group(1).replace(" ", "")
        if token in VERDICT_SCORES:
            return VERDICT_SCORES[token]
    return None


def _score_after(line: str, marker: str) -> float | None:
    # the reference splits the line at EVERY occurrence of the marker and reads the piece after
    # the first: a second marker on the line ends the number's text
    rest = line.split(marker)[1].strip()
    rest = rest.split("/")[0].strip()
    try:
        return float(rest)
    except ValueError:
        return None


def parse_vfs(text: str | None) -> tuple[float, float] | str | None:
    """The visual factuality scores ``(A, B)``, each in [0, 10]; None; or :data:`NO_OBJECTIVE`.

    ``text`` is read as the reference reads a reply its OpenAI wrapper hands over: stripped of
    leading and trailing white space first (so a first line indented by spaces still counts).
    An empty reply (``None``, or nothing once stripped) is :data:`NO_OBJECTIVE`.

    Each line is upper-cased and stripped of ``*`` and of the typographic quotes ``“ ”`` (the
    reference removes only those: a straight ``"`` stays and breaks the match).  A line that
    then STARTS with ``RESPONSE A VISUAL FACTUALITY SCORE:`` (or ``... B ...``) gives the number
    before the first ``/`` after the marker (``8/10`` -> 8.0, ``7.5 / 10`` -> 7.5, a bare ``9``
    -> 9.0).  The number's text is what lies between the marker and the first ``/``, or the next
    occurrence of the marker, whichever comes first (the reference's ``line.split(marker)[1]``),
    read by Python's ``float`` (so ``1e1``, ``+8``, ``8_0`` and ``inf`` are numbers too).  A
    number that does not parse leaves that line out.

    Several matching lines: the LAST one that parses wins, for A and for B separately (the
    reference overwrites as it goes).  This differs from :func:`parse_verdict`, which takes the
    first; both follow the reference.

    Quirk kept from the reference: only a line *starting* with the marker counts, so a leading
    bullet (``- Response A ...``), heading mark (``### Response A ...``), number (``1. ...``)
    or even leading spaces (on any line but the first, which the wrapper's strip cleans) make
    the line invisible.  Markdown bold (``**Response A ...:** 8/10``)
    is fine, because ``*`` is removed first.

    Both scores must be found and lie in [0, 10]; otherwise None.
    """
    if text is None:
        return NO_OBJECTIVE
    text = text.strip()
    if not text:
        return NO_OBJECTIVE
    a: float | None = None
    b: float | None = None
    for line in text.split("\n"):
        line = _VFS_STRIP.sub("", line.upper())
        if line.startswith(VFS_MARKER_A):
            v = _score_after(line, VFS_MARKER_A)
            if v is not None:
                a = v
        elif line.startswith(VFS_MARKER_B):
            v = _score_after(line, VFS_MARKER_B)
            if v is not None:
                b = v
    if a is None or b is None:
        return None
    if not (0.0 <= a <= 10.0 and 0.0 <= b <= 10.0):  # also rejects nan
        return None
    return a, b


# --------------------------------------------------------------------------- defusing candidate text
# The same markers as the parsers above, looked for in the folded view with white space dropped
# (the parsers upper-case and strip spaces; the view also folds ligatures, full-width forms,
# case variants, zero-width characters and markup).  Each is broken in the original text by a
# change that no folding undoes: a hyphen and a parenthesised word inside the marker phrase,
# parentheses in place of brackets.

_VIEW_VERDICT = re.compile(r"FINALVERDICTIS(?=:)")
_VIEW_VFS = re.compile(r"VISUALFACTUALITYSCORE(?=:)")
# a double-bracketed A-op-B token: the ten verdicts, and look-alikes (B≫A, A→B) a judge could
# read or rewrite as one
_VIEW_TOKEN = re.compile(r"\[\[[AB][^\w\[\]]{1,4}[AB]\]\]")


def _phrase(pattern: re.Pattern[str], replacement: str):
    def rule(view: View, text: str) -> list[tuple[int, int, str]]:
        return [(*view.span(m.start(), m.end()), replacement) for m in pattern.finditer(view.text)]
    return rule


def brackets_to_parentheses(view: View, text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Edits turning each original character behind a ``[`` or ``]`` of ``view.text[start:end]``
    into as many ``(`` or ``)`` as it folds to (``［`` -> ``(``, ``⟦`` -> ``((``)."""
    seen: dict[int, str] = {}
    for i in range(start, end):
        if view.text[i] in "[]":
            j = view.source[i]
            if j not in seen:
                ch = text[j]
                folded = ch if ch in "[]" else View.of(ch, spaces=False).text
                seen[j] = "(" * folded.count("[") + ")" * folded.count("]")
    return [(j, j + 1, r) for j, r in seen.items()]


def _tokens(view: View, text: str) -> list[tuple[int, int, str]]:
    return [e for m in _VIEW_TOKEN.finditer(view.text) for e in brackets_to_parentheses(view, text, m.start(), m.end())]


#: the rules :func:`defuse_markers` applies (the pairwise and VFS judge prompts add their own
#: block delimiters to these)
MARKER_RULES = (
    _phrase(_VIEW_VERDICT, "Final-verdict (quoted)"),
    _phrase(_VIEW_VFS, "Visual-factuality (quoted) score"),
    _tokens,
)


def defuse_markers(text: str) -> str:
    """Candidate text in which nothing can be read as a verdict or a VFS line, however folded.

    In the folded view (no white space): ``FINAL VERDICT IS`` before a colon becomes
    ``Final-verdict (quoted)``, ``VISUAL FACTUALITY SCORE`` before a colon becomes
    ``Visual-factuality (quoted) score``, and the brackets of a double-bracketed verdict token
    (``[[B>>A]]``, ``［［Ｂ＞＞Ａ］］``, ``[[ B > > A ]]``) become parentheses.  Text with none of these
    is returned unchanged.
    """
    return defuse(text, MARKER_RULES, spaces=False)
