"""The folded view of a text: what any of the parsers could read in it, after any normalisation.

A judge's reply is read after transformations: the Creation-MMBench parsers upper-case each line
(``str.upper``: the ligature ``ﬁ`` becomes ``FI``, the dotless ``ı`` becomes ``I``) and strip
spaces and markup; a judge that quotes a candidate may itself apply Unicode normalisation, drop
invisible characters or re-wrap lines.  Candidate text is defused against all of these at once by
looking at it through ONE folded view, the same for every benchmark:

* each character is folded with NFKC, case-folded, decomposed (NFKD) and upper-cased, so
  ligatures, full-width and other compatibility forms, and case variants (``ſ``, ``ı``, Kelvin
  ``K``) read as the ASCII they stand for, and accents come apart from their letters;
* what folds to nothing visible is dropped: combining marks, format characters (zero-width
  space, joiners, soft hyphen, BOM), control characters, Hangul and Braille blanks, the markdown
  characters ``* _ ` ~`` and the typographic double quotes the VFS parser removes;
* white space (line breaks included) is either dropped (``spaces=False``, the parsers that strip
  spaces) or collapsed to one ``" "`` (``spaces=True``, where word boundaries matter);
* a few bracket look-alikes that no normalisation maps (``⟦ ⟧ 〚 〛``) read as ``[[`` / ``]]``.

A :class:`View` keeps, for each character of the view, the index of the original character it
came from, so a marker found in the view can be broken where it is in the original text
(:func:`rewrite`), and text with no marker is left byte-identical.

A judge may also decode HTML character references when it quotes (``&#91;``, ``&#x5b;``,
``&lsqb;``, ``&#91`` without its ``;``, and nested ones such as ``&amp;#91;`` when it decodes
again).  :func:`decodings` gives the text as :func:`html.unescape` reads it, applied until nothing
changes, with the original span of each decoded character; :func:`defuse` looks for markers in the
views of these decodings too, and breaks one found there where it lies in the original (a
reference that decodes to a marker's ``[`` is replaced by the ``(`` it becomes).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

__all__ = ["View", "Rule", "fold", "rewrite", "decodings", "unescape_all", "defuse"]

# markup the parsers (or a quoting judge) strip: markdown emphasis and code, markdown's escaping
# backslash (a judge that renders or unescapes markdown quotes ``\[\[9\]\]`` as ``[[9]]``), the
# typographic quotes
_MARKUP = frozenset("*_`~\\\u201c\u201d")
# letters that render as nothing
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# bracket look-alikes that NFKC leaves alone
_CONFUSABLE = {"\u27e6": "[[", "\u27e7": "]]", "\u301a": "[[", "\u301b": "]]"}
_DROPPED_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Cc", "Cs", "Co", "Cn"})


def _invisible(ch: str) -> bool:
    return ch in _MARKUP or ch in _BLANK_LETTERS or unicodedata.category(ch) in _DROPPED_CATEGORIES


@lru_cache(maxsize=8192)
def fold(ch: str) -> str:
    """One character as the view sees it: folded, upper-case, invisible parts dropped.

    White space folds to ``" "`` (one per character); :class:`View` drops or collapses it.
    """
    if ch.isspace():
        return " "
    if ch in _CONFUSABLE:
        return _CONFUSABLE[ch]
    s = unicodedata.normalize("NFKC", ch).casefold()
    s = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", s).upper())
    return "".join(" " if c.isspace() else c for c in s if c.isspace() or not _invisible(c))


# runs of ASCII characters that fold to their upper case, runs of white space, runs of other
# non-ASCII characters; the ASCII markup and control characters that are not white space match
# none of them and fold to nothing
_TOKENS = re.compile("[^\\s*_`~\\\\\\x00-\\x08\\x0e-\\x1b\\x7f-\\U0010ffff]+|\\s+|[^\\x00-\\x7f\\s]+")
# ASCII folding as a translation table: lower case to upper case, markup and the control characters
# that are not white space to nothing (non-ASCII characters are left for _fold_run)
_ASCII_FOLD = {c: None for c in [*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F, *map(ord, "*_`~\\")]}
_ASCII_FOLD.update({c: c - 32 for c in range(ord("a"), ord("z") + 1)})
_NON_ASCII = re.compile("[^\\x00-\\x7f]+")


def _fold_run(m: re.Match) -> str:
    return "".join(map(fold, m.group()))


def _sources(original: str, spaces: bool) -> tuple[int, ...]:
    """Where each character of ``original``'s view came from (see :meth:`View.of`): a space
    stands where white space lay between two characters of the view, at the first white space
    after the earlier one."""
    src: list[int] = []
    gap = -1  # the first white space since the last character of the view
    for m in _TOKENS.finditer(original):
        run, start = m.group(), m.start()
        first = run[0]
        if first.isspace():
            if gap < 0:
                gap = start
            continue
        if first.isascii():
            if gap >= 0 and spaces and src:
                src.append(gap)
            gap = -1
            src.extend(range(start, m.end()))
            continue
        for k, ch in enumerate(run, start):
            for c in fold(ch):
                if c == " ":
                    if gap < 0:
                        gap = k
                    continue
                if gap >= 0 and spaces and src:
                    src.append(gap)
                gap = -1
                src.append(k)
    return tuple(src)


class View:
    """A text's folded view (see the module docstring) and where each of its characters came from."""

    __slots__ = ("text", "_source", "_original", "_spaces")

    def __init__(self, text: str, source: tuple[int, ...] | None = None, *, original: str | None = None,
                 spaces: bool = False) -> None:
        self.text = text
        """The folded text."""
        self._source = source
        self._original = original
        self._spaces = spaces

    @property
    def source(self) -> tuple[int, ...]:
        """``source[i]``: the index in the original text of the character that gave ``text[i]``
        (worked out when first asked: most texts hold no marker, and then nobody asks)."""
        if self._source is None:
            self._source = _sources(self._original or "", self._spaces)
        return self._source

    def __eq__(self, other: object) -> bool:
        return isinstance(other, View) and self.text == other.text and self.source == other.source

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"View(text={self.text!r})"

    @classmethod
    def of(cls, original: str, *, spaces: bool) -> View:
        """The view of ``original``; ``spaces``: keep white space as single ``" "`` (else drop it).

        Folded by runs, not character by character (an estimate defuses every answer it plans,
        tens of megabytes of text): in ASCII, folding is upper-casing, white space folds to a
        space and the markup and control characters to nothing, so a run of other ASCII
        characters is its upper-cased self; each character of a non-ASCII run is folded alone.
        :meth:`_of_any` is the same, character by character."""
        folded = original.translate(_ASCII_FOLD)
        if not original.isascii():
            folded = _NON_ASCII.sub(_fold_run, folded)
        text = " ".join(folded.split()) if spaces else "".join(folded.split())
        return cls(text, original=original, spaces=spaces)

    @classmethod
    def _of_any(cls, original: str, spaces: bool) -> View:
        out: list[str] = []
        src: list[int] = []
        for i, ch in enumerate(original):
            for c in fold(ch):
                if c == " ":
                    if not spaces or (out and out[-1] == " ") or not out:
                        continue
                out.append(c)
                src.append(i)
        if out and out[-1] == " ":
            out.pop()
            src.pop()
        return cls("".join(out), tuple(src))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span ``[a, b)`` that the view's ``[start, end)`` came from (whole characters)."""
        return self.source[start], self.source[end - 1] + 1

    def at_or_after(self, index: int) -> int:
        """The first view position whose character comes from original ``index`` or later."""
        lo, hi = 0, len(self.source)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.source[mid] < index:
                lo = mid + 1
            else:
                hi = mid
        return lo


def rewrite(original: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``original`` with each ``(start, end, replacement)`` applied; the spans must not overlap."""
    out: list[str] = []
    pos = 0
    for start, end, replacement in sorted(edits):
        if start < pos:
            raise ValueError(f"overlapping edits at {start}")
        out.append(original[pos:start])
        out.append(replacement)
        pos = end
    out.append(original[pos:])
    return "".join(out)


#: a rule finds markers in a view and says how to break each one: ``(start, end, replacement)``
#: edits on the original text
Rule = Callable[[View, str], list[tuple[int, int, str]]]

_MAX_ROUNDS = 64

# html.unescape's own pattern (the standard library's html._charref): a character reference,
# decimal, hexadecimal or named, its ";" optional
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")
# the characters the second decoding folds before decoding: non-ASCII ones that are not white space,
# the markup, the ASCII controls that are not white space
_PRE_FOLD = re.compile("[^\\s\\x00-\\x7f]|[*_`~\\\\\\x00-\\x08\\x0e-\\x1b\\x7f]")


def _unescape_once(text: str, starts: list[int], ends: list[int]) -> tuple[str, list[int], list[int]] | None:
    """``html.unescape(text)`` with the original span of each character (``starts``/``ends`` give
    those of ``text``'s), or None when nothing decodes.  A match decodes as html.unescape decodes
    it alone (the same regular expression, left to right); what a legacy name without ``;`` leaves
    undecoded (``&ampx`` -> ``&x``) keeps its own spans."""
    out: list[str] = []
    s_out: list[int] = []
    e_out: list[int] = []
    pos = 0
    for m in _CHARREF.finditer(text):
        token = m.group()
        rep = html.unescape(token)
        if rep == token:
            continue
        a, b = m.span()
        keep = 0  # the token's undecoded tail, also the tail of rep
        while keep < len(rep) - 1 and rep[-1 - keep] == token[-1 - keep]:
            keep += 1
        head = len(rep) - keep
        out.append(text[pos:a])
        out.append(rep)
        s_out += starts[pos:a]
        e_out += ends[pos:a]
        s_out += [starts[a]] * head
        e_out += [ends[b - keep - 1]] * head
        s_out += starts[b - keep:b]
        e_out += ends[b - keep:b]
        pos = b
    if not out:
        return None
    out.append(text[pos:])
    s_out += starts[pos:]
    e_out += ends[pos:]
    return "".join(out), s_out, e_out


def unescape_all(text: str) -> str:
    """``html.unescape`` applied until the text no longer changes."""
    while "&" in text:
        once = html.unescape(text)
        if once == text:
            break
        text = once
    return text


def decodings(text: str) -> list[tuple[str, list[int], list[int]]]:
    """The texts a judge that decodes HTML character references could make of ``text``, each with
    the original span ``(starts[k], ends[k])`` of its ``k``-th character: ``html.unescape`` applied
    until nothing changes, to the text as it is and to the text with each character NFKC-folded
    and the invisible ones dropped (``＆＃９１；``, ``&#\u200b91;``).  Only those that differ from
    ``text``; none when no ``&`` appears in either."""
    n = len(text)
    variants: list[tuple[str, list[int], list[int]]] = [(text, list(range(n)), list(range(1, n + 1)))]
    pre = _pre_folded(text)
    if pre is not None:
        variants.append(pre)
    out: list[tuple[str, list[int], list[int]]] = []
    for decoded, starts, ends in variants:
        changed = False
        while "&" in decoded:
            once = _unescape_once(decoded, starts, ends)
            if once is None:
                break
            decoded, starts, ends = once
            changed = True
        if changed and decoded != text and all(decoded != d for d, _, _ in out):
            out.append((decoded, starts, ends))
    return out


def _decoded_texts(text: str) -> set[str]:
    """The texts of :func:`decodings`, without the spans (cheaper: most texts with an ``&`` decode
    to nothing a rule finds, and then no span is needed)."""
    pre = _pre_folded(text)
    return {d for t in (text, *(() if pre is None else (pre[0],))) if (d := unescape_all(t)) != text}


@lru_cache(maxsize=8192)
def _pre_fold(ch: str) -> str:
    return "" if _invisible(ch) else unicodedata.normalize("NFKC", ch)


def _pre_folded(text: str) -> tuple[str, list[int], list[int]] | None:
    """``text`` with each character NFKC-folded and the invisible ones dropped, and each
    character's original span; None when that changes nothing."""
    n = len(text)
    odd = list(_PRE_FOLD.finditer(text))
    if odd:
        chars: list[str] = []
        starts: list[int] = []
        pos = 0
        for m in odd:
            i = m.start()
            chars.append(text[pos:i])
            starts += range(pos, i)
            folded = _pre_fold(text[i])
            chars.append(folded)
            starts += [i] * len(folded)
            pos = i + 1
        chars.append(text[pos:])
        starts += range(pos, n)
        pre = "".join(chars)
        if pre != text:
            return pre, starts, [i + 1 for i in starts]
    return None


def defuse(text: str, rules: Sequence[Rule], *, spaces: bool) -> str:
    """``text`` with every marker the ``rules`` find in its view broken, until none is left.

    Each round folds the text, collects every rule's edits (an edit overlapping an earlier one
    waits for the next round) and applies them; once the text's own view holds no marker, the
    rules look at the view of each of its :func:`decodings` (when its view holds an ``&``), and a
    marker found there is broken in the original characters it was decoded from.  Text in which no rule finds anything is
    returned unchanged (the same object).  Raises RuntimeError if markers keep appearing (a rule
    whose replacement rebuilds a marker: a bug).
    """
    for _ in range(_MAX_ROUNDS):
        view = View.of(text, spaces=spaces)
        edits = [e for rule in rules for e in rule(view, text)]
        if not edits and "&" in view.text and any(  # the decodings, once the text itself is clean
                rule(dview, d) for d in _decoded_texts(text) for dview in (View.of(d, spaces=spaces),)
                for rule in rules):
            for decoded, starts, ends in decodings(text):
                dview = View.of(decoded, spaces=spaces)
                edits += [(starts[a], ends[b - 1], r) for rule in rules for a, b, r in rule(dview, decoded)]
        if not edits:
            return text
        kept: list[tuple[int, int, str]] = []
        for e in sorted(edits):
            if not kept or e[0] >= kept[-1][1]:
                kept.append(e)
        text = rewrite(text, kept)
    raise RuntimeError(f"defusing did not settle after {_MAX_ROUNDS} rounds")
