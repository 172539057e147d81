"""The terminal's view of ``judgekit report A B ...``'s item differences: per pair of runs, the
paired differences per (candidate, judge) and the items that changed most (before -> after)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

__all__ = ["comparison_renderables"]


def comparison_renderables(comp: Any, top: int = 10) -> list[Any]:
    """Two tables per pair (:class:`judgekit.report.compare.Comparison`): its statistics, then its
    ``top`` changed items, largest change first."""
    from ..report.compare import difference_text, number_text
    from ..report.numbers import label as numbers_label

    out: list[Any] = []
    for p in comp.pairs:
        title = f"{p.benchmark}: {p.before.label} -> {p.after.label}"
        st = Table(title=escape(f"{title}: paired differences (after - before, shared items)"), title_justify="left")
        for col, right in (("candidate", False), ("judge", False), ("figure", False), ("before", True),
                           ("after", True), ("difference [interval]", True), ("Holm", False), ("shared", True),
                           ("changed", True)):
            st.add_column(escape(col), justify="right" if right else "left", overflow="fold")
        for s in p.stats:
            holm = s.get("excludes_zero_holm")
            st.add_row(*map(escape, (s["candidate"], s["judge"], numbers_label(s["metric"]), number_text(s.get("before"), metric=s["metric"]),
                                     number_text(s.get("after"), metric=s["metric"]),
                                     difference_text(s), "–" if holm is None else ("excl. 0" if holm else "incl. 0"),
                                     str(s["shared"]), str(s["changed"]))))
        out.append(st)
        if not p.changes:
            out.append(escape(f"{title}: no item changed"))
            continue
        if top == 0:
            out.append(escape(f"{title}: {len(p.changes)} changed item{'s' if len(p.changes) != 1 else ''} "
                              "(see diffs.csv)"))
            continue
        shown = sorted(p.changes, key=lambda c: (c.delta is None, -abs(c.delta or 0.0), c.item))[:top]
        ct = Table(title=escape(f"{title}: changed items ({len(shown)} of {len(p.changes)}, largest change first)"),
                   title_justify="left")
        kinds = len({c.kind for c in p.changes}) > 1  # Creation-MMBench: pairwise verdicts and VFS scores
        for col, right in (("item", False), ("candidate", False), ("judge", False), *((("kind", False),) if kinds else ()),
                           ("before", False), ("after", False), ("Δ", True)):
            ct.add_column(col, justify="right" if right else "left", overflow="fold")
        for c in shown:
            d = c.delta
            ct.add_row(*map(escape, (c.item, c.candidate, c.judge, *((c.kind,) if kinds else ()), c.before.text(c.kind),
                                     c.after.text(c.kind), number_text(d, True, c.kind))))
        out.append(ct)
    return out
