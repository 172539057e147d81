"""Item-level differences between two runs of one benchmark (``judgekit report A B``).

Two runs' tidy rows (``results.parquet``: one row per item x candidate x judge x order x kind)
are matched on (kind, candidate, judge, item).  Where one run's judge and the other's have
different names but each run has one judge for a (kind, candidate), they are matched with each
other, so two runs that differ only in their judge can be compared ("judge-a -> judge-b").

Per matched item, each side is summed as the benchmark's figures sum it:

* a pairwise judgment (``kind == "pairwise"``, ``value`` the candidate's score -2..2 in each
  order): the item's Reward part, 50 x the sum of its valid scores over the count of them (both
  orders pooled, as :func:`.pairwise.item_sums`), and its combined outcome (win, tie, loss: the
  sign of the summed scores);
* any other kind with a ``value`` (a rubric score, MMIE's score, a VFS value): the mean of its
  valid values.

An item *changed* when one of its judgments did: a different verdict (a pairwise order's score,
or for a judgment without a value the verdict as written), a different value, or a judgment that
counted on one side and failed on the other.  The paired statistics are the judging core's:
:func:`.uncertainty.comparisons` over the items both runs judged (after - before, the paired
item bootstrap), and Holm's adjustment (:func:`.multiplicity.adjust_comparisons`) over every
comparison of the call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .multiplicity import adjust_comparisons
from .uncertainty import IntervalOptions, comparisons

__all__ = ["ItemSide", "ItemChange", "item_sides", "run_differences", "adjust"]

#: the item figure of a pairwise judgment's kind is its Reward part (x 50)
PAIRWISE = "pairwise"
_TOL = 1e-9


@dataclass
class ItemSide:
    """One run's judgments of one (kind, candidate, judge, item)."""

    orders: dict[int | None, tuple[str, float | None, bool]] = field(default_factory=dict)
    """order -> (verdict as written or why it failed, value when it counted, whether it counted)."""
    num: float = 0.0
    den: float = 0.0
    category: str | None = None

    @property
    def value(self) -> float | None:
        """The item's figure (Reward part for pairwise, the mean value otherwise); None: none counted."""
        return self.num / self.den if self.den > 0 else None

    def outcome(self, kind: str) -> str | None:
        """A pairwise item's combined outcome over its orders: win, tie or loss (None: none counted)."""
        if kind != PAIRWISE or self.den == 0:
            return None
        return "win" if self.num > _TOL else "loss" if self.num < -_TOL else "tie"

    def text(self, kind: str) -> str:
        """The side as one short line: a pairwise item's verdict and score in each order, then its
        Reward part and outcome (``[[A>B]] -1 | [[B>A]] -1 = -50 (loss)``); a scored item's value
        in each order, then their mean where there are several (``6 | 7 = 6.5``)."""
        parts = []
        for order in sorted(self.orders, key=lambda o: -1 if o is None else o):
            verdict, value, ok = self.orders[order]
            if not ok:
                shown = f"failed ({verdict})" if verdict else "failed"
            elif kind == PAIRWISE and value is not None:
                shown = f"{verdict} {value:+g}" if verdict else f"{value:+g}"
            else:  # a score: its value (the verdict as written where it has none)
                shown = f"{value:.4g}" if value is not None else verdict
            parts.append(shown)
        body = " | ".join(parts)
        v = self.value
        if kind == PAIRWISE:
            return f"{body} = {v:+.0f} ({self.outcome(kind)})" if v is not None else body
        if len(self.orders) > 1 and v is not None:
            return f"{body} = {v:.4g}"
        return body


@dataclass
class ItemChange:
    """An item whose judgments differ between the two runs."""

    kind: str
    candidate: str
    judge: str
    item: str
    category: str | None
    before: ItemSide
    after: ItemSide
    change: str
    """verdict (a judgment's verdict or a pairwise outcome changed), score (only a value), failed
    (counted before, not after), recovered (the other way round)."""

    @property
    def delta(self) -> float | None:
        a, b = self.before.value, self.after.value
        return None if a is None or b is None else b - a

    def row(self) -> dict[str, Any]:
        d = self.delta
        return {"kind": self.kind, "candidate": self.candidate, "judge": self.judge, "item": self.item,
                "category": self.category, "change": self.change,
                "before": self.before.text(self.kind), "after": self.after.text(self.kind),
                "before_value": _round(self.before.value), "after_value": _round(self.after.value),
                "delta": _round(d), "before_outcome": self.before.outcome(self.kind),
                "after_outcome": self.after.outcome(self.kind)}


def _round(v: float | None, digits: int = 6) -> float | None:
    return None if v is None else round(v, digits)


def _number(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def item_sides(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], dict[str, ItemSide]]:
    """``(kind, candidate, judge) -> item -> ItemSide`` from a run's tidy rows."""
    out: dict[tuple[str, str, str], dict[str, ItemSide]] = {}
    for r in rows:
        kind = str(r.get("kind") or "")
        key = (kind, str(r.get("candidate")), str(r.get("judge")))
        side = out.setdefault(key, {}).setdefault(str(r.get("item")), ItemSide())
        if side.category is None and r.get("category") is not None:
            side.category = str(r["category"])
        value = _number(r.get("value"))
        ok = bool(r.get("ok")) and value is not None if kind == PAIRWISE else bool(r.get("ok"))
        verdict = str(r.get("verdict") or "") if ok else str(r.get("error_kind") or r.get("verdict") or "")
        order = r.get("order")
        order = None if order is None else int(order)
        side.orders[order] = (verdict, value if ok else None, ok)
        if ok and value is not None:
            side.num += 50.0 * value if kind == PAIRWISE else value
            side.den += 1.0
    return out


def _change(kind: str, a: ItemSide, b: ItemSide) -> str | None:
    """How an item changed between ``a`` and ``b`` (see :attr:`ItemChange.change`), or None."""
    verdict = score = False
    for order in set(a.orders) | set(b.orders):
        va, vb = a.orders.get(order), b.orders.get(order)
        if va is None or vb is None:
            continue  # an order one run did not judge (both_orders off) is no change of verdict
        (ta, xa, oka), (tb, xb, okb) = va, vb
        if oka != okb:
            return "failed" if oka else "recovered"
        if not oka:
            continue
        if xa is None or xb is None:
            verdict |= ta != tb
        elif abs(xa - xb) > _TOL:
            if kind == PAIRWISE:
                verdict = True
            else:
                score = True
    if a.outcome(kind) != b.outcome(kind):
        verdict = True
    return "verdict" if verdict else "score" if score else None


def _judge_pairs(judges_a: set[str], judges_b: set[str]) -> list[tuple[str, str]]:
    shared = sorted(judges_a & judges_b)
    if shared:
        return [(j, j) for j in shared]
    if len(judges_a) == 1 and len(judges_b) == 1:
        return [(next(iter(judges_a)), next(iter(judges_b)))]
    return []


def run_differences(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]],
                    options: IntervalOptions | None = None, key: str = "") -> dict[str, Any]:
    """The item-level differences from run ``before`` to run ``after`` (their tidy rows).

    Returns ``{"stats": [...], "changes": [ItemChange, ...]}``: one stats row per matched (kind,
    candidate, judge) with ``kind, candidate, judge, metric, shared`` (items both runs judged),
    ``changed``, ``before, after`` (the figure on the shared items), ``difference, ci_low, ci_high,
    level, excludes_zero, p_value`` (after - before, :func:`.uncertainty.comparisons`; None with
    intervals off); the changes sorted by kind, candidate, judge, then the largest |difference|
    first (a change without a difference last), then item.  Holm's adjustment is left to the
    caller, over every pair of runs it compares (:func:`.multiplicity.adjust_comparisons`)."""
    options = options or IntervalOptions()
    sides_a, sides_b = item_sides(before), item_sides(after)
    groups: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for (kind, cand, judge) in sides_a:
        groups.setdefault((kind, cand), (set(), set()))[0].add(judge)
    for (kind, cand, judge) in sides_b:
        groups.setdefault((kind, cand), (set(), set()))[1].add(judge)
    stats, changes = [], []
    for (kind, cand), (ja, jb) in groups.items():
        for judge_a, judge_b in _judge_pairs(ja, jb):
            items_a, items_b = sides_a[(kind, cand, judge_a)], sides_b[(kind, cand, judge_b)]
            judge = judge_a if judge_a == judge_b else f"{judge_a} -> {judge_b}"
            shared = [i for i in items_a if i in items_b]
            found = []
            for item in shared:
                how = _change(kind, items_a[item], items_b[item])
                if how is not None:
                    found.append(ItemChange(kind, cand, judge, item, items_a[item].category or items_b[item].category,
                                            items_a[item], items_b[item], how))
            found.sort(key=lambda c: (c.delta is None, -abs(c.delta or 0.0), c.item))
            changes.extend(found)
            metric = "reward" if kind == PAIRWISE else f"mean {kind or 'value'}"
            sums_a = {i: (items_a[i].num, items_a[i].den) for i in shared}
            sums_b = {i: (items_b[i].num, items_b[i].den) for i in shared}
            comp = comparisons({"after": sums_b, "before": sums_a}, options, metric,
                               key=f"run-diff:{key}:{kind}:{cand}:{judge}:", candidates=["after", "before"])
            row: dict[str, Any] = {"kind": kind, "candidate": cand, "judge": judge, "metric": metric,
                                   "shared": len(shared), "changed": len(found),
                                   "before": _ratio(sums_a), "after": _ratio(sums_b)}
            c = comp[0] if comp else {}
            row.update(difference=c.get("difference"), ci_low=c.get("ci_low"), ci_high=c.get("ci_high"),
                       level=c.get("level"), excludes_zero=c.get("excludes_zero"), p_value=c.get("p_value"))
            if row["difference"] is None and row["before"] is not None and row["after"] is not None:
                row["difference"] = row["after"] - row["before"]  # intervals off: the point difference
            stats.append(row)
    return {"stats": stats, "changes": changes}


def _ratio(sums: Mapping[str, tuple[float, float]]) -> float | None:
    num = sum(n for n, _ in sums.values())
    den = sum(d for _, d in sums.values())
    return num / den if den > 0 else None


def adjust(stats: Sequence[dict[str, Any]], options: IntervalOptions | None = None) -> dict[str, Any]:
    """Holm's adjustment over ``stats`` rows (every pair of runs compared), in place."""
    options = options or IntervalOptions()
    return adjust_comparisons(stats, options.interval_level, options.holm_adjust)
