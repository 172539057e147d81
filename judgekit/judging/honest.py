"""Honest small numbers: what a pairwise benchmark's results say about their own reliability.

:func:`annotate` adds to a pairwise benchmark's results (the judging core's rows, comparisons,
behaviour and agreement records, in place) and to its summary:

* ``items`` and ``small_n`` on every results row: the items behind the row's figures, and
  whether they are fewer than ``min_items_for_interval`` (the interval's coverage then falls
  below its nominal level: docs/statistics.md);
* on every paired comparison, ``p_holm`` and ``excludes_zero_holm`` (:mod:`.multiplicity`)
  beside the raw ``p_value`` and ``excludes_zero``, unless ``holm_adjust`` is off;
* on every behaviour row, Wilson intervals (:mod:`.rates`) on swap consistency, first-slot
  preference and the tie rate; on the rows pooled over candidates, the length correlation pooled
  within candidates (``length_correlation``) with the old pooled-across figure kept as
  ``length_correlation_across``;
* on every agreement record, the bootstrap interval of alpha over items (:mod:`.alpha`); on the
  records pooled over candidates, alpha pooled within candidates (``krippendorff_alpha``), the
  pooled-across figure kept as ``krippendorff_alpha_across``;
* ``summary["flags"]``: a degenerate judge (every decisive verdict to one slot, every verdict a
  tie, no item swap-consistent), rows too small for their interval, and (from
  :func:`self_preference_flags`, which needs the spec's model names) a judge scoring a
  candidate of its own model family.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from ..plural import plural
from .alpha import grouped_alpha, matrix_grouped_alpha, subset_alphas, unit_features
from .columns import columns, first_order
from .behaviour import pooled_within, rank_dots
from .behaviour_table import length_within
from .multiplicity import adjust_comparisons
from .keys import packed
from .panel import ALL, QUANTITIES, candidate_codes, rated
from .rates import wilson
from .uncertainty import FIGURE_MIN_ITEMS, IntervalOptions, min_items_for

__all__ = ["DEGENERATE_MIN", "annotate", "interval_line", "flag_lines", "model_family", "self_preference_flags",
           "degenerate_flags", "pooled_within_spearman", "constant_score_flags", "annotate_scores",
           "alpha_repeat_spread"]

#: a judge is called degenerate only with at least this many judgments behind the extreme share
DEGENERATE_MIN = 10


# -- results rows ----------------------------------------------------------------------------------
def _row_items(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], int]:
    """(model, level, group) -> distinct items judged (pairwise or VFS)."""
    if isinstance(records, list):
        return _row_items_columns(records)
    # an item's records (orders, kinds, repeats) share (model, index, task, category): each
    # distinct one is placed in its groups once
    judged = {(r.get("model", ""), r["index"], r.get("task", ""), r.get("category", "")) for r in records
              if r.get("kind", "pairwise") in ("pairwise", "vfs")}
    seen: dict[tuple[str, str, str], set] = {}
    for model, index, task, category in judged:
        m, i = str(model), str(index)
        for key in ((m, "task", str(task)), (m, "category", str(category)), (m, "overall", "overall")):
            seen.setdefault(key, set()).add(i)
    return {k: len(v) for k, v in seen.items()}


def _row_items_columns(records: list) -> dict[tuple[str, str, str], int]:
    """:func:`_row_items` from the records' shared columns (:mod:`.columns`): the distinct indexes
    (as text) of each (model, level, group)."""
    col = columns(records)
    sel = np.flatnonzero(col.is_pairwise | col.kind_is("vfs")) if col.n else np.zeros(0, dtype=np.intp)
    if sel.size == 0:
        return {}
    (mc, mnames), (ic, _) = col.model, col.index
    (tc, _), (cc, _) = col.task, col.category
    # the distinct (model, index, task, category) of the judged records, then each level's cells
    # from those (a few per item, not every record)
    key = packed([mc[sel], ic[sel], tc[sel], cc[sel]])
    judged = np.unique(key, axis=0 if key.ndim == 2 else None, return_index=True)[1]
    sel = sel[judged]
    out: dict[tuple[str, str, str], int] = {}
    for level in ("task", "category", "overall"):
        gc, gnames = col.level(level)
        n_items, n_groups = max(len(col.index[1]), 1), max(len(gnames), 1)
        cells = np.unique((mc[sel].astype(np.int64) * n_groups + gc[sel]) * n_items + ic[sel])
        pairs, count = np.unique(cells // n_items, return_counts=True)
        for p, n in zip(pairs.tolist(), count.tolist()):
            out[(mnames[p // n_groups], level, gnames[p % n_groups])] = n
    return out


# -- behaviour -------------------------------------------------------------------------------------
def pooled_within_spearman(groups: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float | None:
    """Spearman's rho pooled within groups: each group's (x, y) ranked within the group and
    centred on its mean rank, then Pearson's r of all the centred ranks together.  With one group
    it is Spearman's rho; a group shifting both x and y adds nothing.  None without variation."""
    return pooled_within((len(xs), *rank_dots(list(xs), list(ys))) for xs, ys in groups if len(xs) >= 2)


def _behaviour(rows: Sequence[MutableMapping[str, Any]], everyone: Mapping[str, Sequence[Mapping[str, Any]]],
               level: float) -> None:
    for b in rows:
        valid = b["judgments"] - b["parse_failures"]
        both = b["items_both_orders"]
        counts = {"swap_consistency": (round((b["swap_consistency"] or 0) * both), both),
                  "first_slot_preference": (b["first_slot_wins"], b["first_slot_wins"] + b["second_slot_wins"]),
                  "tie_rate": (round((b["tie_rate"] or 0) * valid), valid)}
        for name, (k, n) in counts.items():
            b[f"{name}_ci_low"], b[f"{name}_ci_high"] = wilson(int(k), int(n), level)
            b[f"{name}_n"] = int(n)
        if b["model"] == ALL:
            b["length_correlation_across"] = b.get("length_correlation")
            b["length_correlation"] = length_within(everyone.get(b["judge"], []))
            b["length_pooling"] = "within candidates"


def _few(rows: int, comparisons: int) -> str:
    """'2 results rows and 1 comparison have', '1 results row has': the subject of a small-n flag."""
    what = " and ".join(x for x in (plural(rows, "results row") if rows else "",
                                    plural(comparisons, "comparison") if comparisons else "") if x)
    return f"{what} {'has' if rows + comparisons == 1 else 'have'}"


def _too_few_flag(rows: int, comparisons: int, options: IntervalOptions) -> dict[str, Any]:
    """The ``too few items`` flag of ``rows`` results rows and ``comparisons`` comparisons under the
    option's threshold."""
    return {"kind": "too few items", "rows": rows, "comparisons": comparisons,
            "message": f"{_few(rows, comparisons)} fewer than {plural(options.min_items_for_interval, 'item')} "
                       "(n marked !): too few for their interval, which then covers less often than it says"}


def degenerate_flags(rows: Sequence[Mapping[str, Any]], minimum: int = DEGENERATE_MIN) -> list[dict[str, Any]]:
    """A flag for each judge (its row pooled over candidates) that gives every decisive verdict
    to one slot, every verdict a tie, or no item the same direction in both orders, on at least
    ``minimum`` judgments."""
    out = []
    for b in rows:
        if b.get("model") != ALL:
            continue
        decided = b["first_slot_wins"] + b["second_slot_wins"]
        valid = b["judgments"] - b["parse_failures"]
        said = []
        if decided >= minimum and b["first_slot_preference"] in (0.0, 1.0):
            slot = "first (Assistant A)" if b["first_slot_preference"] == 1.0 else "second (Assistant B)"
            said.append(f"gives all {plural(decided, 'decisive verdict')} to the {slot} slot")
        if valid >= minimum and b["tie_rate"] == 1.0:
            said.append(f"calls all {plural(valid, 'verdict')} a tie")
        if b["items_both_orders"] >= minimum and b["swap_consistency"] == 0.0:
            said.append(f"agrees with itself after the swap on none of {plural(b['items_both_orders'], 'item')}")
        if said:
            out.append({"kind": "degenerate judge", "judge": b["judge"],
                        "message": f"judge {b['judge']} looks degenerate: it " + "; ".join(said)
                                   + ": its figures measure the judge, not the candidates"})
    return out


# -- agreement -------------------------------------------------------------------------------------

def _put_alpha(rows: list[dict[str, Any]], got: Mapping[str, Any]) -> None:
    """Agreement ``rows`` of one quantity take :func:`grouped_alpha`'s figures: each candidate's
    interval; the pooled row (``ALL``) alpha pooled within candidates with its interval, the
    pooled-across figure kept beside it."""
    for a in rows:
        if a["model"] == ALL:
            a["krippendorff_alpha_across"] = a["krippendorff_alpha"]
            a["alpha_across_ci_low"], a["alpha_across_ci_high"] = got["across"][1:]
            a["krippendorff_alpha"], a["alpha_ci_low"], a["alpha_ci_high"] = got["within"]
            a["pooling"] = "within candidates"
        else:
            _, a["alpha_ci_low"], a["alpha_ci_high"] = got["groups"].get(a["model"], (None, None, None))

def _agreement(records: list[MutableMapping[str, Any]], by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
               candidates: Sequence[str], options: IntervalOptions) -> None:
    for quantity, kind, field, level in QUANTITIES:
        mine = [a for a in records if a.get("quantity") == quantity]
        if not mine:
            continue
        # a unit is one judgment asked of every judge: (candidate, item, order, repeat); the panel's
        # matrix of them (units in order of first appearance, a judge's last record of a unit counts)
        got = rated(by_judge, kind, field)
        grid, unit_group = got.matrix.T, candidate_codes(got, candidates)
        unit_cluster, first = first_order(got.index)  # the items numbered in order of first appearance
        clusters = int(first.size)
        features = unit_features(grid, level)  # each unit's part, for alpha and its spread between repeats
        alpha = matrix_grouped_alpha(grid, unit_group, unit_cluster, list(candidates), clusters, level,
                                     samples=options.bootstrap_samples, interval_level=options.interval_level,
                                     seed=options.bootstrap_seed, key=f"alpha:{quantity}", features=features)
        spread = _matrix_repeat_spread(grid, unit_group, got.repeat, unit_cluster, level, candidates, features)
        for a in mine:
            a.update(spread.get(a["model"], {}))
        _put_alpha(mine, alpha)
        _alpha_small_n(mine, unit_group, unit_cluster, candidates, options)


def _alpha_small_n(rows: list[MutableMapping[str, Any]], unit_group: np.ndarray, unit_cluster: np.ndarray,
                   candidates: Sequence[str], options: IntervalOptions) -> None:
    """``n_items`` (the distinct items behind each alpha: its bootstrap resamples them) and
    ``small_n`` (fewer than alpha's threshold, :data:`uncertainty.FIGURE_MIN_ITEMS`) on agreement rows."""
    floor = min_items_for(options, ["krippendorff_alpha"])
    for a in rows:
        if a["model"] == ALL:
            n = int(np.unique(unit_cluster[unit_group >= 0]).size) if unit_cluster.size else 0
        elif a["model"] in candidates:
            k = list(candidates).index(a["model"])
            n = int(np.unique(unit_cluster[unit_group == k]).size)
        else:
            continue
        a["n_items"] = n
        a["small_n"] = n < floor


def _unit_arrays(grid: np.ndarray, units: Sequence[tuple], candidates: Sequence[str]):
    """(the units x judges ratings, each unit's candidate's number in ``candidates`` (-1: none),
    its item's number in order of first appearance, how many items)."""
    gidx = {g: i for i, g in enumerate(candidates)}
    clusters: dict[Any, int] = {}
    unit_group = np.array([gidx.get(u[0], -1) for u in units], dtype=np.intp)
    unit_cluster = np.array([clusters.setdefault(u[1], len(clusters)) for u in units], dtype=np.intp)
    return grid, unit_group, unit_cluster, len(clusters)


def _matrix_repeat_spread(grid: np.ndarray, unit_group: np.ndarray, unit_repeat: np.ndarray,
                          unit_cluster: np.ndarray, level: str, candidates: Sequence[str], features: Any = None
                          ) -> dict[str, dict[str, float | None]]:
    """:func:`alpha_repeat_spread` of a units x judges matrix (each unit's candidate number and repeat;
    ``features``: :func:`.alpha.unit_features` of ``grid``, when the caller has them)."""
    repeats = np.unique(unit_repeat).tolist()
    if len(repeats) < 2:
        return {}
    per: dict[str, list[float]] = {g: [] for g in [*candidates, ALL]}
    subsets = [np.flatnonzero(unit_repeat == rep) for rep in repeats]
    if features is None:
        features = unit_features(grid, level)
    for got in subset_alphas(grid, unit_group, unit_cluster, subsets, list(candidates), level, features):
        for g in candidates:
            if got["groups"].get(g, (None,))[0] is not None:
                per[g].append(float(got["groups"][g][0]))
        if got["within"][0] is not None:
            per[ALL].append(float(got["within"][0]))
    return {g: {"alpha_repeat_sd": float(np.std(v, ddof=1)) if len(v) >= 2 else None,
                "alpha_repeat_range": float(max(v) - min(v)) if len(v) >= 2 else None} for g, v in per.items()}


def alpha_repeat_spread(ratings: Mapping[tuple, Mapping[str, Any]], judges: Sequence[str], level: str,
                        candidates: Sequence[str]) -> dict[str, dict[str, float | None]]:
    """With judge repeats (the units' last element, the repeat, takes two values or more): per
    candidate and pooled within candidates (:data:`ALL`), ``alpha_repeat_sd`` and
    ``alpha_repeat_range``: alpha computed on each repeat's units alone (the judges' agreement
    within one asking), then the SD (``k - 1``) and range across repeats; None below two repeats
    where alpha is defined.  Empty without repeats."""
    units = list(ratings)
    if len({u[-1] for u in units}) < 2:
        return {}
    grid = np.array([[np.nan if v is None else float(v) for v in (ratings[u].get(j) for j in judges)]
                     for u in units], dtype=float).reshape(len(units), len(judges))
    grid, unit_group, unit_cluster, _ = _unit_arrays(grid, units, candidates)
    codes: dict[Any, int] = {}
    unit_repeat = np.array([codes.setdefault(u[-1], len(codes)) for u in units], dtype=np.intp)
    # the repeats in sorted order, as the units' own values sort
    order = sorted(codes, key=lambda r: r)
    rank = np.empty(len(order), dtype=np.intp)
    rank[[codes[r] for r in order]] = np.arange(len(order))
    return _matrix_repeat_spread(grid, unit_group, rank[unit_repeat], unit_cluster, level, candidates)


# -- self-preference -------------------------------------------------------------------------------
#: model-name prefixes (after the provider) and the family they belong to
_FAMILIES = (("gpt", "openai"), ("chatgpt", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
             ("claude", "anthropic"), ("gemini", "google"), ("gemma", "google"), ("qwen", "qwen"),
             ("qvq", "qwen"), ("llama", "meta"), ("mistral", "mistral"), ("mixtral", "mistral"),
             ("pixtral", "mistral"), ("internvl", "internvl"), ("deepseek", "deepseek"), ("glm", "glm"),
             ("grok", "xai"), ("phi", "microsoft"), ("llava", "llava"), ("minicpm", "minicpm"))


def model_family(name: str) -> str | None:
    """The model family of a model id (``openai/gpt-4o-mini`` -> ``openai``, ``claude-3-5-sonnet``
    -> ``anthropic``, ``Qwen2-VL-7B`` -> ``qwen``); an unknown name's leading letters; None for
    an empty name."""
    # no provider or folder (a local model's path may end in /), no tag
    base = str(name).strip().lower().rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1].split(":", 1)[0]
    if not base:
        return None
    for prefix, family in _FAMILIES:
        if base.startswith(prefix) and (len(base) == len(prefix) or not base[len(prefix)].isalpha()
                                        or len(prefix) >= 4):
            return family
    m = re.match(r"[a-z]+", base)
    return m.group(0) if m else base


def self_preference_flags(judges: Mapping[str, str], candidates: Mapping[str, str]) -> list[dict[str, Any]]:
    """A flag for each (judge, candidate) of one model family: ``judges`` and ``candidates`` map
    the spec's names to their model ids."""
    out = []
    for j, jm in judges.items():
        fj = model_family(jm)
        for c, cm in candidates.items():
            if fj is not None and fj == model_family(cm):
                out.append({"kind": "self-preference", "judge": j, "model": c, "family": fj,
                            "message": f"judge {j} ({jm}) scores {c} ({cm}), a model of its own family ({fj}): "
                                       f"judges tend to prefer their own family's answers"})
    return out


# -- the whole pass --------------------------------------------------------------------------------
def annotate(summary: MutableMapping[str, Any], rows: Mapping[str, Sequence[MutableMapping[str, Any]]],
             everyone: Mapping[str, Sequence[Mapping[str, Any]]], by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
             candidates: Sequence[str], options: IntervalOptions) -> None:
    """Everything of the module docstring, in place (``rows``: every judge's and the ensemble's
    results rows; ``summary``: with ``comparisons``, ``judge_behaviour`` and, for a panel,
    ``agreement``)."""
    small = []
    for judge, rs in rows.items():
        items = _row_items(everyone.get(judge, []))
        for r in rs:
            r["items"] = items.get((r["model"], r["level"], r["group"]), 0)
            r["small_n"] = r["items"] < options.min_items_for_interval
            if r["small_n"] and judge == next(iter(rows)) and r["level"] in ("overall", "category"):
                small.append(r)
    few_comps = 0
    for c in summary.get("comparisons") or []:
        c["small_n"] = c.get("items", 0) < options.min_items_for_interval
        few_comps += c["small_n"]
    holm = adjust_comparisons(summary.get("comparisons") or [], options.interval_level,
                              options.holm_adjust and options.bootstrap_samples > 0)
    _behaviour(summary.get("judge_behaviour") or [], everyone, options.interval_level)
    if summary.get("agreement"):
        _agreement(summary["agreement"], by_judge, candidates, options)
    flags = list(summary.get("flags") or [])
    flags += degenerate_flags(summary.get("judge_behaviour") or [])
    if small or few_comps:
        flags.append(_too_few_flag(len(small), few_comps, options))
    summary["flags"] = flags
    iv = summary.get("intervals")
    if isinstance(iv, dict):
        iv["min_items_for_interval"] = options.min_items_for_interval
        iv["multiple_comparisons"] = holm
        iv["behaviour_rates"] = "Wilson score interval"
        iv["agreement"] = "percentile bootstrap over items (all of an item's units together)"


# -- a benchmark of scores (the rubric benchmark) ------------------------------------------------------
def constant_score_flags(by_judge: Mapping[str, Sequence[Mapping[str, Any]]], minimum: int = DEGENERATE_MIN
                         ) -> list[dict[str, Any]]:
    """A flag for each judge whose valid scores, at least ``minimum`` of them, are all the same
    value: it tells no candidate or item from another."""
    out = []
    for judge, records in by_judge.items():
        scores = {float(r["score"]) for r in records if r.get("score") is not None}
        valid = sum(1 for r in records if r.get("score") is not None)
        if valid >= minimum and len(scores) == 1:
            out.append({"kind": "degenerate judge", "judge": judge,
                        "message": f"judge {judge} looks degenerate: it gives all "
                                   f"{plural(valid, 'valid judgment')} the "
                                   f"same score ({next(iter(scores)):g}): its figures measure the judge, not the "
                                   f"candidates"})
    return out


def annotate_scores(summary: MutableMapping[str, Any], rows: Mapping[str, Sequence[MutableMapping[str, Any]]],
                    by_judge: Mapping[str, Sequence[Mapping[str, Any]]],
                    ratings: Mapping[tuple, Mapping[str, float | None]], candidates: Sequence[str],
                    options: IntervalOptions, *, level: str = "interval", quantity: str = "score") -> None:
    """The honest-numbers pass of a benchmark whose judges give scores, in place: ``small_n`` on
    every results row (from its ``items``) and paired comparison; on each ``summary["agreement"]``
    record of ``quantity``, alpha's bootstrap interval over items, the record pooled over
    candidates pooled within them (the pooled-across figure kept as ``krippendorff_alpha_across``);
    flags for a judge giving one score to everything and for rows too small for their interval;
    ``summary["intervals"]`` says what each interval is.  ``ratings``: unit ``(candidate, item,
    ...)`` -> judge -> score (the judges' own, not the ensemble's).  Holm's adjustment is the
    benchmark's (:func:`.multiplicity.adjust_comparisons`)."""
    small = 0
    first = next(iter(rows), None)
    for judge, rs in rows.items():
        for r in rs:
            r["small_n"] = r.get("items", 0) < options.min_items_for_interval
            small += r["small_n"] and judge == first
    few_comps = 0
    for c in summary.get("comparisons") or []:
        c["small_n"] = c.get("items", 0) < options.min_items_for_interval
        few_comps += c["small_n"]
    mine = [a for a in summary.get("agreement") or [] if a.get("quantity") == quantity]
    if mine:
        got = grouped_alpha(ratings, list(by_judge), level, group=lambda u: u[0], cluster=lambda u: u[1],
                            samples=options.bootstrap_samples, interval_level=options.interval_level,
                            seed=options.bootstrap_seed, key=f"alpha:{quantity}", groups=list(candidates))
        _put_alpha(mine, got)
        spread = alpha_repeat_spread(ratings, list(by_judge), level, candidates)
        for a in mine:
            a.update(spread.get(a["model"], {}))
    flags = list(summary.get("flags") or []) + constant_score_flags(by_judge)
    if small or few_comps:
        flags.append(_too_few_flag(small, few_comps, options))
    summary["flags"] = flags
    iv = summary.get("intervals")
    if isinstance(iv, dict):
        iv["min_items_for_interval"] = options.min_items_for_interval
        if mine:
            iv["agreement"] = "percentile bootstrap over items (all of an item's units together)"


def interval_line(summary: Mapping[str, Any]) -> str | None:
    """The terminal's lines on what ``[a, b]`` and ``n`` are (None without intervals)."""
    iv = summary.get("intervals") or {}
    if not iv.get("method"):
        return None
    lines = [f"[a, b]: {100 * iv['level']:g}% {iv['method']} (the row's n items, {iv['samples']} resamples)"
             + ("; behaviour %: Wilson interval over its n" if iv.get("behaviour_rates") else "")]
    extra = []
    if iv.get("min_items_for_interval"):
        floor = iv["min_items_for_interval"]
        # the figures that need more items than the option (uncertainty.FIGURE_MIN_ITEMS), where the run has them
        more = []
        if summary.get("controlled"):
            more += [f"LC {max(floor, FIGURE_MIN_ITEMS['lc_win_rate'])}", f"SC {max(floor, FIGURE_MIN_ITEMS['sc_score'])}"]
        if summary.get("human_agreement"):
            more.append(f"human agreement {max(floor, FIGURE_MIN_ITEMS['kappa'])}")
        if any(a.get("small_n") is not None for a in summary.get("agreement") or [] if isinstance(a, Mapping)):
            more.append(f"alpha {max(floor, FIGURE_MIN_ITEMS['krippendorff_alpha'])}")
        extra.append(f"n!: under {plural(floor, 'item')}" + (f" ({', '.join(more)})" if more else "")
                     + ", too few for the interval")
    mc = iv.get("multiple_comparisons") or {}
    if mc.get("method") == "holm":
        extra.append(f"Holm: excludes 0 after Holm's adjustment over the run's {plural(mc['family'], 'comparison')}")
    if extra:
        lines.append("; ".join(extra))
    return "\n".join(lines)


def flag_lines(summary: Mapping[str, Any]) -> list[str]:
    return [f"warning: {f['message']}" for f in summary.get("flags") or [] if f.get("message")]
