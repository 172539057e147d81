"""Results tables that fit the terminal with every figure whole.

A cell is made of *atoms* that are never broken: a word, a number, an interval in brackets
(``[6.2, 54.2]``), anything in parentheses.  A table is laid out by the first step of this ladder
that fits the width:

1. one line a row, headers on one line;
2. headers wrapped between words;
3. the same without column rules (two spaces between columns instead of a rule and two);
4. cells wrapped between atoms (an interval goes under its estimate: ``29.2`` over
   ``[6.2, 54.2]``), names down to 16 columns;
5. names down to their longest word, without column rules;

and, if even that is too wide, the columns are shared among several tables ("Results (1/3)"),
each repeating the columns that name a row (every leading column of names: model, category,
judge, the two sides of a comparison...), each laid out by the same ladder.  A leading name column
with the same value in every row names no row: in a split table it moves into the title
("...; judge: extractor").  Where the name columns leave no room for a figure, they are shown as
one column ("approach / a / b"), its cells the names joined by " / " and wrapped between words.  The widths are set here and handed to
rich as they are, so rich never has to shrink a column: no figure, header word or name is cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

__all__ = ["fit_tables", "atoms", "wrap_atoms", "is_figure", "name_columns"]

#: an atom: a bracketed or parenthesised group (which may hold spaces), else a run of non-spaces
_ATOM = re.compile(r"\[[^\]\n]*\]\S*|\([^)\n]*\)\S*|\S+")
#: an atom that is a figure: a number (with sign, thousands commas, %, $, a "!" of a small n),
#: "n=12", an interval, counts or shares joined by "/", and the placeholders of a figure
_FIGURE_ATOM = re.compile(r"""^(?:
      [-+~]?\$?[\d.,]*\d[\d.,]*(?:e[-+]?\d+)?%?[!~*]?        # 29.2  -1,234  $0.50  12!  64%
    | n=[\d,]+!?                                            # n=12
    | \[[^\]]*\]                                            # [6.2, 54.2]
    | [-+]?[\d.,]+%?(?:/[-+]?[\d.,]+%?)+                    # 5/10/5/2/2  100.0/100.0
    | -|n/a|n/i|nan|-?inf|none|yes|no|yes/yes|yes/no|no/yes|no/no
    )$""", re.X | re.I)
#: widest a name column is wrapped to at step 4 of the ladder (a longer word keeps its length)
NAME_WIDTH = 16


def atoms(cell: str) -> list[list[str]]:
    """The atoms of each line of ``cell`` (a cell may hold several lines)."""
    return [_ATOM.findall(line) for line in cell.split("\n")]


def is_figure(cell: str) -> bool:
    """Whether ``cell`` holds figures only (an empty cell counts as one)."""
    return all(_FIGURE_ATOM.match(a) for line in atoms(cell) for a in line)


def wrap_atoms(cell: str, width: int) -> list[str]:
    """``cell`` as lines of at most ``width`` columns, broken only between atoms (an atom
    longer than ``width`` gets a line of its own: callers make ``width`` at least the longest)."""
    out: list[str] = []
    for line in atoms(cell):
        cur = ""
        for a in line:
            if cur and len(cur) + 1 + len(a) > width:
                out.append(cur)
                cur = a
            else:
                cur = f"{cur} {a}" if cur else a
        out.append(cur)
    return out


def _longest(cell: str) -> int:
    return max((len(a) for line in atoms(cell) for a in line), default=0)


def _natural(cell: str) -> int:
    return max((len(" ".join(line)) for line in atoms(cell)), default=0)


def name_columns(cols: Sequence[str], cells: Sequence[Sequence[str]], left: frozenset[str] | set[str] = frozenset()
                 ) -> list[bool]:
    """Per column, whether it holds names (``left`` names some; else any cell that is not a figure)."""
    return [c in left or not all(is_figure(row[i]) for row in cells) for i, c in enumerate(cols)]


class _Layout:
    """One way to draw some columns: each column's width and whether column rules are drawn."""

    def __init__(self, idx: list[int], widths: dict[int, int], compact: bool) -> None:
        self.idx, self.widths, self.compact = idx, widths, compact

    def total(self) -> int:
        inner = sum(self.widths[i] for i in self.idx)
        # compact: two spaces between columns, none at the edges; else a rule and a space either side
        return inner + (2 * len(self.idx) - 2 if self.compact else 3 * len(self.idx) + 1)


def _ladder(idx: list[int], cols: Sequence[str], cells: Sequence[Sequence[str]], names: list[bool]):
    """The layouts of columns ``idx``, from the roomiest to the tightest (the module's steps)."""
    def w(i: int, wrap_head: bool, wrap_cells: bool, name_cap: int | None) -> int:
        head = _longest(cols[i]) if wrap_head else _natural(cols[i])
        if not wrap_cells:
            body = max((_natural(r[i]) for r in cells), default=0)
        else:
            longest = max((_longest(r[i]) for r in cells), default=0)
            body = longest
            if names[i]:  # names wrap down to the cap, never below their longest word
                body = max(longest, min(max((_natural(r[i]) for r in cells), default=0), name_cap or 0))
        return max(head, body, 1)

    for wrap_head, wrap_cells, cap, compact in ((False, False, None, False), (True, False, None, False),
                                                (True, False, None, True), (True, True, NAME_WIDTH, False),
                                                (True, True, NAME_WIDTH, True), (True, True, 0, True)):
        yield _Layout(idx, {i: w(i, wrap_head, wrap_cells, cap) for i in idx}, compact)


def _first_fit(idx, cols, cells, names, width: int) -> _Layout | None:
    for layout in _ladder(idx, cols, cells, names):
        if layout.total() <= width:
            return layout
    return None


def _tightest(idx, cols, cells, names) -> _Layout:
    *_, last = _ladder(idx, cols, cells, names)
    return last


def _table(title: str, cols, cells, names: list[bool], layout: _Layout) -> Table:
    if layout.compact:  # (rich's collapse_padding takes a column of fixed width one short)
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0),
                  pad_edge=False)
    else:
        t = Table(title=title, title_justify="left", box=box.HEAVY_HEAD)
    for i in layout.idx:
        w = layout.widths[i]
        t.add_column(Text("\n".join(wrap_atoms(cols[i], w))), justify="left" if names[i] else "right",
                     width=w, no_wrap=True, overflow="fold")
    for row in cells:
        t.add_row(*[Text("\n".join(wrap_atoms(row[i], layout.widths[i]))) for i in layout.idx])
    return t


def fit_tables(title: str, cols: Sequence[str], cells: Sequence[Sequence[str]], width: int,
               left: frozenset[str] | set[str] = frozenset()) -> list[Table]:
    """The table ``title`` (columns ``cols``, rows of text ``cells``) as one or more rich tables,
    each at most ``width`` columns wide, no figure, header word or name cut (the module's rules).
    ``left`` names columns that hold names whatever their cells look like."""
    cols, cells = list(cols), [list(r) for r in cells]
    names = name_columns(cols, cells, left)
    every = list(range(len(cols)))
    one = _first_fit(every, cols, cells, names, width)
    if one is not None:
        return [_table(title, cols, cells, names, one)]
    keys = []
    for i in every:  # the leading name columns name a row: every part repeats them
        if not names[i]:
            break
        keys.append(i)
    if len(keys) == len(cols):  # names only: the tightest layout is all there is
        return [_table(title, cols, cells, names, _tightest(every, cols, cells, names))]
    rest = every[len(keys):]
    # a name column with one value in every row tells no row from another: it goes into the title
    same = [i for i in keys if len({r[i] for r in cells}) == 1] if len(cells) > 1 else []
    if same and len(same) < len(keys):
        title += "; " + ", ".join(f"{cols[i]}: {cells[0][i]}" for i in same)
        keys = [i for i in keys if i not in same]
    if len(keys) > 1 and max(_tightest(keys + [i], cols, cells, names).total() for i in rest) > width:
        # the name columns leave no room for a figure: one column of them ("judge / a / b")
        merged = " / ".join(cols[i] for i in keys)
        cols = [merged] + [cols[i] for i in rest]
        cells = [[" / ".join(r[i] for i in keys)] + [r[i] for i in rest] for r in cells]
        names = [True] + [names[i] for i in rest]
        keys, rest = [0], list(range(1, len(cols)))
    parts: list[list[int]] = []
    for i in rest:  # each part as many columns as fit at their tightest, in order
        if parts and _tightest(keys + parts[-1] + [i], cols, cells, names).total() <= width:
            parts[-1].append(i)
        else:
            parts.append([i])
    layouts = [_first_fit(keys + p, cols, cells, names, width) or _tightest(keys + p, cols, cells, names)
               for p in parts]
    if any(la.compact for la in layouts):  # the parts of one table share its look
        layouts = [la if la.compact else next(x for x in _ladder(la.idx, cols, cells, names)
                                              if x.compact and x.total() <= width) for la in layouts]
    out = []
    for k, layout in enumerate(layouts):
        out.append(_table(f"{title} ({k + 1}/{len(parts)})" if len(parts) > 1 else title, cols, cells, names,
                          layout))
    return out
