"""A run's report: the benchmark's own document plus what every run's ``summary.json`` shares.

The runner calls :func:`write_run_report` once the CSVs are written.  :func:`with_shared_sections`
adds, from the summary (each only where the summary has it, non-empty):

* meta lines: benchmark, spec, run id, status, judges and the ensemble's rule, calls made by
  provider (free ones said so) and cache hits, cost (and what batching or prompt caching saved),
  the interval method;
* after the document's own charts and tables: "Paired comparisons" (a - b with its interval,
  whether it excludes 0; a comparison without a difference, e.g. Reward of a run with
  pairwise = false, is left out, and said so) with one chart of the differences per metric that
  has one, "Judge agreement"
  (Krippendorff's alpha per candidate and pooled, the share of items where all judges agree) and
  "Departures from the authors' code".

A summary key that is absent or of an unexpected shape is left out, never an error: a one-judge
run has no agreement, an interrupted run may have no comparisons.  The document's headline is the
benchmark's to set and is left as it is.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from . import numbers
from ..plural import plural
from .doc import Chart, ReportDoc, Series, Table

__all__ = ["write_run_report", "with_shared_sections", "num", "interval_text"]

#: keys of a comparison row that are not its context (judge, approach, generator, ...)
_COMPARISON_KEYS = {"metric", "a", "b", "items", "difference", "ci_low", "ci_high", "level", "excludes_zero",
                    "p_value", "p_holm", "excludes_zero_holm", "small_n"}
#: keys of an agreement row that are not the candidate it is about
_AGREEMENT_KEYS = {"quantity", "judges", "krippendorff_alpha", "level", "full_agreement", "items", "alpha_ci_low",
                   "alpha_ci_high", "krippendorff_alpha_across", "alpha_across_ci_low", "alpha_across_ci_high",
                   "pooling"}
_POOLED = "all"


def write_run_report(out_dir: Path, doc: ReportDoc, summary: dict[str, Any]) -> Path:
    """Add the shared sections of ``summary`` to ``doc`` and write the run folder's report
    (``report.json``, ``report_files/``, ``report.html``); return the HTML file's path."""
    from .write import write_report

    return write_report(Path(out_dir), with_shared_sections(doc, summary))


def with_shared_sections(doc: ReportDoc, summary: dict[str, Any]) -> ReportDoc:
    """A copy of ``doc`` with the summary's meta lines, tables and chart added (``doc`` is not changed).
    The document's own meta values win over the summary's for the same key (NaN and infinities
    become None when the report is written: :func:`judgekit.report.write.write_report`)."""
    summary = summary if isinstance(summary, dict) else {}
    meta = {k: v for k, v in _meta(summary).items() if k not in doc.meta}
    meta.update(doc.meta)
    every = _rows(summary.get("comparisons"))
    level = _level(summary, every)
    # a comparison with no difference (a figure the run did not make, e.g. Reward with pairwise = false) is left out
    comparisons = [r for r in every if _finite(r.get("difference")) is not None]
    tables = [t for t in (_flags_table(_rows(summary.get("flags"))), _comparisons_table(comparisons, summary, level, len(every) - len(comparisons)), _agreement_table(_rows(summary.get("agreement"))),
                          _deviations_table(_rows(summary.get("deviations")))) if t is not None]
    return dataclasses.replace(doc, meta=meta, charts=[*doc.charts, *_comparison_charts(comparisons, level)],
                               tables=[*doc.tables, *tables])


# -- numbers -------------------------------------------------------------------------------------

_finite = numbers.finite


def _decimals(*values: Any) -> int:
    """Decimals to show three significant digits of the largest of ``values`` (1 to 6)."""
    big = max((abs(f) for f in map(_finite, values) if f is not None and f != 0), default=0.0)
    if big == 0:
        return 1
    return min(6, max(1, 2 - math.floor(math.log10(big))))


def num(v: Any, decimals: int | None = None) -> str:
    """A number as shown in a table: three significant digits, one decimal at least; "–" where there is none
    (None, NaN, infinite, not a number)."""
    f = _finite(v)
    if f is None:
        return "–"
    d = _decimals(f) if decimals is None else decimals
    s = f"{f:.{d}f}"
    return s.lstrip("-") if float(s) == 0 else s  # no "-0.0"


def interval_text(value: Any, low: Any = None, high: Any = None, *, name: Any = None) -> str:
    """``value [low, high]`` with one number of decimals for the three (``value`` alone when the
    interval is not known): the decimals of the figure ``name``'s kind, as the terminal writes it
    (:mod:`judgekit.report.numbers`); of no known kind, three significant digits of the largest."""
    kind = numbers.figure_kind(name) if name is not None else None
    d = numbers.DECIMALS[kind] if kind in numbers.DECIMALS else _decimals(value, low, high)
    if _finite(value) is None:
        return "–"
    return numbers.interval(value, low, high, d)


def _share(v: Any) -> str:
    f = _finite(v)
    return "–" if f is None else f"{100 * f:.0f}%"


# -- summary shapes ------------------------------------------------------------------------------

def _rows(v: Any) -> list[dict[str, Any]]:
    return [r for r in v if isinstance(r, dict)] if isinstance(v, list) else []


def _level(summary: dict[str, Any], comparisons: list[dict[str, Any]]) -> float | None:
    iv = summary.get("intervals")
    lv = iv.get("level") if isinstance(iv, dict) else None
    if _finite(lv) is None:
        lv = next((r.get("level") for r in comparisons if _finite(r.get("level")) is not None), None)
    return _finite(lv)


def _pct(level: float | None) -> str:
    return f"{100 * level:g}%" if level is not None else ""


def _meta(s: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, label in (("benchmark", "benchmark"), ("spec", "spec"), ("run_id", "run id"), ("status", "status")):
        if s.get(key) not in (None, ""):
            out[label] = str(s[key])
    judges = s.get("judges")
    if isinstance(judges, list) and judges:
        out["judges"] = ", ".join(map(str, judges))
    ens = s.get("ensemble")
    if isinstance(ens, dict) and ens.get("rule"):
        out["ensemble"] = str(ens["rule"]) + (f": {ens['description']}" if ens.get("description") else "")
    calls = _calls(s)
    if calls:
        out["calls"] = calls
    cost = _finite(s.get("cost_usd"))
    if cost is not None:
        from ..engine.budget import usd

        out["cost"] = usd(cost) + _processes(s, usd) + "".join(f"; {x}" for x in _savings(s, usd))
    iv = s.get("intervals")
    if isinstance(iv, dict) and iv.get("method"):
        over = f" (resampling {iv['items']})" if isinstance(iv.get("items"), str) else ""
        extra = [f"{iv['samples']:,} resamples" if _finite(iv.get("samples")) is not None else "",
                 f"seed {iv['seed']}" if iv.get("seed") is not None else ""]
        extra_s = ", ".join(x for x in extra if x)
        out["intervals"] = (f"{_pct(_finite(iv.get('level')))} {iv['method']}".strip() + over
                            + (f"; {extra_s}" if extra_s else ""))
    return out


def _processes(s: dict[str, Any], usd) -> str:
    """' over 2 processes ($0.0500 in this one)' for a run resumed after a stop or a kill ('' otherwise)."""
    earlier, this = s.get("earlier_processes"), s.get("this_process")
    if not (isinstance(earlier, list) and earlier and isinstance(this, dict)):
        return ""
    mine = _finite(this.get("cost_usd"))
    return f" over {len(earlier) + 1:,} processes" + (f" ({usd(mine)} in this one)" if mine is not None else "")


def _calls(s: dict[str, Any]) -> str:
    """'208 made, all free (sim 208); 66 from the cache', '120 made (openai 100; free: sim 20)',
    '120 made (openai 80; free: price 0 openai 40)' (calls to a model priced at 0 are free)."""
    from ..cost.prices import FREE_PROVIDERS

    parts = []
    by = s.get("calls_by_provider")
    made = s.get("paid_calls")
    if isinstance(by, dict) and by:
        by = {str(k): n for k, n in by.items() if isinstance(n, int) and not isinstance(n, bool)}
        zero = s.get("calls_at_price_0")  # calls of a paid kind to a model priced at 0
        zero = {str(k): n for k, n in zero.items() if isinstance(n, int) and not isinstance(n, bool) and n > 0
                } if isinstance(zero, dict) else {}
        paid = ", ".join(f"{k} {n - zero.get(k, 0):,}" for k, n in by.items()
                         if k not in FREE_PROVIDERS and n > zero.get(k, 0))
        free = ", ".join([*(f"{k} {n:,}" for k, n in by.items() if k in FREE_PROVIDERS),
                          *(f"price 0 {k} {n:,}" for k, n in zero.items())])
        total = f"{sum(by.values()):,} made"
        parts.append(f"{total} ({paid}; free: {free})" if paid and free else
                     f"{total} ({paid})" if paid else f"{total}, all free ({free})" if free else total)
    elif isinstance(made, int):
        parts.append(f"{made:,} made")
    hits = s.get("cache_hits")
    if isinstance(hits, int):
        parts.append(f"{hits:,} from the cache")
    return "; ".join(parts)


def _savings(s: dict[str, Any], usd) -> list[str]:
    out = []
    b = s.get("batch")
    if isinstance(b, dict) and b.get("calls") and _finite(b.get("saved_usd")) is not None:
        out.append(f"batch: {plural(b['calls'], 'call')}, saved {usd(b['saved_usd'])}")
    pc = s.get("prompt_cache")
    if isinstance(pc, dict) and pc.get("calls") and _finite(pc.get("saved_usd")):
        out.append(f"prompt cache: {plural(pc['calls'], 'call')}, saved {usd(pc['saved_usd'])}")
    return out


def _context(rows: list[dict[str, Any]], standard: set[str]) -> list[str]:
    """The keys beyond ``standard`` that some row gives a value (judge, approach, generator...)."""
    keys: dict[str, None] = {}
    for r in rows:
        for k, v in r.items():
            if k not in standard and v not in (None, "") and not isinstance(v, (list, dict)):
                keys.setdefault(k, None)
    return list(keys)


def _pair(r: dict[str, Any]) -> str:
    return f"{r.get('a', '?')} − {r.get('b', '?')}"


def _comparisons_table(rows: list[dict[str, Any]], s: dict[str, Any], level: float | None,
                       left_out: int = 0) -> Table | None:
    if not rows:
        return None
    ctx = _context(rows, _COMPARISON_KEYS)
    head = f"a − b [{_pct(level)} interval]" if level is not None else "a − b [interval]"
    out = []
    for r in rows:
        row: dict[str, Any] = {"metric": numbers.label(r.get("metric", ""))}
        row.update({k: "" if r.get(k) is None else str(r.get(k)) for k in ctx})
        row["a − b"] = _pair(r)
        row[head] = interval_text(r.get("difference"), r.get("ci_low"), r.get("ci_high"), name=r.get("metric"))
        row["items"] = f"{r.get('items', '')}!" if r.get("small_n") else r.get("items", "")
        ex = r.get("excludes_zero")
        row["excludes 0"] = "yes" if ex is True else "no" if ex is False else "–"
        if "excludes_zero_holm" in r:  # Holm's adjustment over the run's comparisons (judging.multiplicity)
            hx = r.get("excludes_zero_holm")
            hp = _finite(r.get("p_holm"))
            row["Holm p"] = "< 0.001" if hp is not None and hp < 0.001 else num(hp, 3)
            row["excludes 0 (Holm)"] = "yes" if hx is True else "no" if hx is False else "–"
        out.append(row)
    iv = s.get("intervals") if isinstance(s.get("intervals"), dict) else {}
    notes = ["each difference is paired over the items both candidates answered; an interval that "
             "excludes 0 is a difference the resampling supports"]
    notes += [str(iv[k]) for k in ("item", "fid") if isinstance(iv.get(k), str)]
    mc = iv.get("multiple_comparisons") if isinstance(iv.get("multiple_comparisons"), dict) else {}
    if mc.get("method") == "holm":
        notes.append(f"Holm: p-values from the bootstrap, adjusted by Holm's step-down over the run's {mc.get('family')} "
                     "comparisons, so that any false 'excludes 0' among them stays as rare as the level says")
    if left_out:
        notes.append(f"{left_out} comparison{'s' if left_out > 1 else ''} without a difference (a figure the "
                     "run did not make) left out")
    return Table(title="Paired comparisons", rows=out, note="; ".join(notes))


def _comparison_charts(rows: list[dict[str, Any]], level: float | None) -> list[Chart]:
    """One chart per metric: a group per pair (a − b), a bar per context that varies (judge,
    approach, generator); one bar named after the metric where none varies."""
    ctx = [k for k in _context(rows, _COMPARISON_KEYS) if len({str(r.get(k)) for r in rows}) > 1]
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_metric.setdefault(str(r.get("metric", "")), []).append(r)
    charts = []
    for metric, rs in by_metric.items():
        groups = list(dict.fromkeys(_pair(r) for r in rs))
        names = list(dict.fromkeys(" · ".join(str(r.get(k)) for k in ctx if r.get(k) is not None) or numbers.label(metric)
                                   for r in rs))
        cells: dict[tuple[str, str], dict[str, Any]] = {}
        for r in rs:
            name = " · ".join(str(r.get(k)) for k in ctx if r.get(k) is not None) or numbers.label(metric)
            cells[(name, _pair(r))] = r
        series = []
        for name in names:
            got = [cells.get((name, g), {}) for g in groups]
            series.append(Series(name=name, values=[_finite(c.get("difference")) for c in got],
                                 low=[_finite(c.get("ci_low")) for c in got],
                                 high=[_finite(c.get("ci_high")) for c in got]))
        whisker = f"whiskers: the {_pct(level)} interval" if level is not None else "whiskers: the interval"
        charts.append(Chart(title=f"Paired differences in {numbers.label(metric)}" if metric else "Paired differences",
                            groups=groups, series=series,
                            note=f"{whisker}; one that crosses 0 is no clear difference"))
    return charts


def _agreement_table(rows: list[dict[str, Any]]) -> Table | None:
    if not rows:
        return None
    ctx = _context(rows, _AGREEMENT_KEYS)
    out = []
    for r in rows:
        row: dict[str, Any] = {"quantity": str(r.get("quantity", ""))}
        for k in ctx:
            v = r.get(k)
            row["candidate" if k in ("model", "system", "candidate") else k] = (
                "pooled (all)" if v == _POOLED else "" if v is None else str(v))
        judges = r.get("judges")
        row["judges"] = ", ".join(map(str, judges)) if isinstance(judges, list) else str(judges or "")
        if r.get("pooling"):
            row["candidate"] = "pooled within candidates"
        row["Krippendorff's α"] = (interval_text(r.get("krippendorff_alpha"), r.get("alpha_ci_low"), r.get("alpha_ci_high"),
                                                 name="alpha")
                                   if "alpha_ci_low" in r else num(r.get("krippendorff_alpha"), 3))
        if any("krippendorff_alpha_across" in x for x in rows):
            row["α pooled across candidates"] = (interval_text(r.get("krippendorff_alpha_across"),
                                                               r.get("alpha_across_ci_low"), r.get("alpha_across_ci_high"),
                                                               name="alpha")
                                                 if "krippendorff_alpha_across" in r else "")
        row["level"] = str(r.get("level", ""))
        row["all agree"] = _share(r.get("full_agreement"))
        row["items"] = r.get("items", "")
        out.append(row)
    note = ("Krippendorff's α: 1 is full agreement, 0 what chance gives, below 0 systematic "
            "disagreement; all agree: the share of items where every judge gave the same")
    if any("alpha_ci_low" in r for r in rows):
        note += ("; the interval: items resampled (all their units together); pooled within candidates: chance "
                 "disagreement counted within each candidate, so that one candidate being better is not agreement "
                 "(pooled across, the older figure, beside it)")
    return Table(title="Judge agreement", rows=out, note=note)


def _flags_table(rows: list[dict[str, Any]]) -> Table | None:
    """The run's warnings (summary["flags"]): degenerate judges, rows too small for their interval,
    self-preference."""
    if not rows:
        return None
    return Table(title="Warnings", rows=[{"kind": str(r.get("kind", "")), "what": str(r.get("message", ""))}
                                         for r in rows],
                 note="what the figures above cannot be trusted for; see docs/statistics.md")


def _deviations_table(rows: list[dict[str, Any]]) -> Table | None:
    if not rows:
        return None
    out = []
    for d in rows:
        if "option" in d:
            what = f"{d['option']} = {d.get('value')!r}"
        else:
            what = str(d.get("note", ""))
        out.append({"kind": str(d.get("kind", "")), "what": what,
                    "the authors' code": str(d.get("reference", "") or ""),
                    "judgekit": str(d.get("judgekit", "") or "")})
    return Table(title="Departures from the authors' code", rows=out,
                 note="choices in force in this run that differ from the reference code (injection guards "
                      "are on by default)")
