"""What a person sees: the estimate table, the confirmation, live progress and the results.

Live rich progress on a terminal; plain periodic lines otherwise (CI logs, pipes).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from ..plural import plural
from .tables import fit_tables as _fit_tables

__all__ = ["ConsoleUI", "fmt_usd"]


# The engine and the benchmarks are imported when first needed, so the CLI can put a status line on
# screen before the ~1 s of importing them (the cost of ``import judgekit.cli.ui`` is rich's).
def deviation_lines(deviations):
    from ..benchmarks.deviations import deviation_lines

    return deviation_lines(deviations)


def batch_status_lines(engine):
    from ..engine.batch_status import status_lines

    return status_lines(engine)


def cap_text(usd):
    from ..engine.budget import cap_text

    return cap_text(usd)


def fmt_usd(v: float | None) -> str:
    if v is None:
        return "unknown"
    return f"${v:,.4f}" if v < 1 else f"${v:,.2f}"


def _fmt_eta(s: float | None) -> str:
    if s is None:
        return "-"
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class ConsoleUI:
    def __init__(self, console: Console | None = None, *, interval: float | None = None) -> None:
        if console is None:
            console = Console()
            if not console.is_terminal:  # logs and pipes: wide lines beat wrapped tables
                console = Console(width=160)
        self.console = console
        self.live = self.console.is_terminal
        self.interval = interval if interval is not None else (0.25 if self.live else 5.0)
        self._status: Live | None = None
        self._status_line: _StatusLine | None = None
        self._phase: _PhaseLines | None = None  # plain mode: the lines after the last call

    # -- what is happening before the estimate --------------------------------------------------
    def status(self, message: str | None) -> None:
        """One transient line saying what the run is doing (loading data, starting the simulator),
        redrawn with its elapsed time by rich's own thread, so a step that holds the event loop
        (an import, reading data) does not freeze it; None takes it away.  Terminals only: logs
        and pipes get the estimate as before."""
        if message is None or not self.live:
            self._end_status()
            return
        if self._status is None:
            self._status_line = _StatusLine(message)
            self._status = Live(self._status_line, console=self.console, refresh_per_second=8, transient=True)
            self._status.start(refresh=True)
        else:
            self._status_line.set(message)

    def _end_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = self._status_line = None
        if self._phase is not None:
            self._phase.stop()
            self._phase = None

    def _after_calls(self, since: float) -> None:
        """The phase after the last call, until the results print: a transient line with its
        elapsed time on a terminal (redrawn by rich's thread, as the computing holds the loop)."""
        if self.live and self._status is None:
            self._status_line = _StatusLine(AFTER_CALLS, since)
            self._status = Live(self._status_line, console=self.console, refresh_per_second=8, transient=True)
            self._status.start(refresh=True)

    # -- estimate ---------------------------------------------------------------------------
    def show_estimate(self, estimate, cached_note: str) -> None:
        self._end_status()
        batch = getattr(estimate, "batch", False)
        if self.console.width < 120:
            t = self._estimate_narrow(estimate, batch)
        else:
            t = self._estimate_wide(estimate, batch)
        self.console.print(t)
        self.console.print(
            f"cost: {fmt_usd(estimate.total_expected_usd)} expected, {fmt_usd(estimate.total_max_usd)} at most "
            "(the bound --max-cost is checked against: every call, turn and round made, each writing max_tokens)",
            highlight=False)
        self.console.print(f"cached: {cached_note}", highlight=False)
        if any(not ln.input_exact for ln in estimate.lines):
            self.console.print("~: input tokens of calls that use earlier answers, counted with a stand-in",
                               highlight=False)
        if batch:
            self.console.print(
                f"batch: lines marked 'batch' go through the provider's batch API at batch prices; the same calls "
                f"live would cost {fmt_usd(estimate.total_live_expected_usd)} expected, "
                f"{fmt_usd(estimate.total_live_max_usd)} at most. Batches finish within a day (most within an hour).")
        if estimate.adaptive:
            self.console.print(f"calls: {estimate.calls_expected:,.0f} expected, {estimate.calls_to_make:,} at most "
                               f"(turns, rounds and re-asks that stop early are weighted by their chance)")
        total_time = estimate.total_time_s
        untimed = estimate.untimed
        if total_time is not None or untimed:
            line = f"time: about {_fmt_time(total_time)} at the models' limits (latencies of earlier calls, RPM)"
            if untimed:
                line += f"; not known for {', '.join(untimed)} (no earlier calls, no requests_per_minute)"
            self.console.print(line)
        if estimate.unknown_prices:
            self.console.print(f"[yellow]no price known for: {', '.join(estimate.unknown_prices)} "
                               f"(set price = {{input_per_mtok=..., output_per_mtok=...}} in the spec)[/yellow]")

    @staticmethod
    def _estimate_wide(estimate, batch: bool) -> Table:
        t = Table(title="Estimate before any call", title_justify="left")
        cols = ["stage", "model", "calls", "cached", "to make\n(exp./bound)", "input tok", "output tok\n(max)",
                "output tok\n(exp.)", "cost bound", "cost exp."]
        if batch:  # batch lines: what the run pays (batch prices) beside the same calls live
            cols = cols[:-2] + ["cost bound", "batch exp.", "live exp."]
        for col in (*cols, "time"):  # names fold, figures stay whole
            text = col in ("stage", "model")
            t.add_column(col, justify="left" if text else "right", overflow="fold", no_wrap=not text)
        for ln in estimate.lines:
            exp_out = "-" if ln.output_tokens_expected is None else f"{ln.output_tokens_expected:,.0f}"
            row = [ln.stage, f"{ln.alias} ({ln.model})",
                   f"{ln.calls_total:,}", f"{ln.calls_cached:,}", _fmt_calls(ln.calls_expected, ln.calls_to_make),
                   f"{ln.input_tokens:,}" + ("" if ln.input_exact else "~"),
                   f"{ln.output_tokens_max:,}", exp_out, fmt_usd(ln.cost_max_usd)]
            if batch:
                row += [fmt_usd(ln.cost_expected_usd) if ln.batch else "-",
                        fmt_usd(ln.live_cost_expected_usd if ln.batch else ln.cost_expected_usd)]
            else:
                row.append(fmt_usd(ln.cost_expected_usd))
            row.append("batch" if getattr(ln, "batch", False) else _fmt_time(ln.time_s))
            t.add_row(*row)
        return t

    @staticmethod
    def _estimate_narrow(estimate, batch: bool) -> Table:
        """Below 120 columns: six columns, the figures of a line stacked in its cells (stage over
        model, to make over cached, expected over bound); figures never wrap, names may."""
        t = Table(title="Estimate before any call", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1))
        t.add_column("stage\nmodel", overflow="fold", min_width=14)
        for col in ("calls to\nmake\n(cached)", "input\ntokens", "output\ntokens\nmax/exp.",
                    "cost\nexp./max" + ("\n/live" if batch else ""), "time"):
            t.add_column(col, justify="right", no_wrap=True)
        for ln in estimate.lines:
            calls = _fmt_calls(ln.calls_expected, ln.calls_to_make)
            if ln.calls_cached:
                calls += f"\n({ln.calls_cached:,})"
            out = f"{ln.output_tokens_max:,}"
            if ln.output_tokens_expected is not None:
                out += f"\n{ln.output_tokens_expected:,.0f}"
            cost = f"{fmt_usd(ln.cost_expected_usd)}\n{fmt_usd(ln.cost_max_usd)}"
            if batch and ln.batch:
                cost += f"\n{fmt_usd(ln.live_cost_expected_usd)}"
            t.add_row(escape(f"{ln.stage}\n{ln.alias}"), calls,
                      f"{ln.input_tokens:,}" + ("" if ln.input_exact else "~"), out, cost,
                      "batch" if getattr(ln, "batch", False) else _fmt_time(ln.time_s))
        return t

    def confirm(self, message: str) -> bool:
        self._end_status()
        import click

        return click.confirm(message, default=False)

    def note(self, message: str) -> None:
        # a provider's text is neither markup ("[invalid_request]") nor emoji codes (":warning:")
        self.console.print(message, markup=False, emoji=False)

    # -- progress ---------------------------------------------------------------------------
    def progress(self, engine) -> "_Progress":
        return _Progress(self, engine)

    def render(self, engine):
        """The live view: one row per stage, one per bucket with why it waits.  Below 120
        columns the stage table keeps only what a person acts on (the rest is in the results),
        so an 80-column terminal shows every row on one line."""
        narrow = self.console.width < 120
        title = (f"judgekit  spent {fmt_usd(engine.stats.spent_usd)}"
                 + (f" of max {cap_text(engine.max_cost_usd)}" if engine.max_cost_usd is not None else ""))
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD,
                  show_edge=not narrow)
        if narrow:
            cols = ("stage", "done/total", "calls/s", "retry/\n429/fail", "spent", "ETA")
        else:
            cols = ("stage", "done/total", "calls/s", "cache hits", "retries", "429s", "failures", "tokens in/out",
                    "spent", "estimate", "ETA")
        for col in cols:  # figures stay whole; a long stage name folds
            t.add_column(col, justify="left" if col == "stage" else "right", no_wrap=col != "stage",
                         overflow="fold", min_width=8 if col == "stage" else None)
        for st in engine.stats.stages.values():
            if narrow:
                t.add_row(st.name, f"{st.done:,}/{st.total:,}", _fmt_rate(st.calls_per_s()),
                          f"{st.retries:,}/{st.rate_limited:,}/{st.failures:,}", fmt_usd(st.cost_usd),
                          _eta_text(st.eta_s(), st.total, label=''))
            else:
                t.add_row(st.name, f"{st.done:,}/{st.total:,}", _fmt_rate(st.calls_per_s()), f"{st.cache_hits:,}",
                          f"{st.retries:,}", f"{st.rate_limited:,}", f"{st.failures:,}",
                          f"{st.input_tokens:,}/{st.output_tokens:,}", fmt_usd(st.cost_usd),
                          fmt_usd(st.estimate_usd), _eta_text(st.eta_s(), st.total, label=''))
        b = self._buckets(engine.bucket_states(), narrow)
        parts: list[Any] = [t]
        changes = total_change_lines(engine.stats)
        if changes:  # why a total moved since the first frame, one line a stage and reason
            parts.append(Text("\n".join(changes), style="dim"))
        parts += [self._overall(engine.stats), b]
        waits = batch_status_lines(engine)
        if waits:
            bt = Table(title="batches", title_justify="left", show_header=False, box=None, padding=(0, 1))
            bt.add_column("status", overflow="fold")
            for line in waits:
                bt.add_row(escape(line))
            parts.append(bt)
        local = local_status_lines(engine)
        if local:
            w = Table(title="local workers", title_justify="left", show_header=False)
            w.add_column("status")
            for line in local:
                w.add_row(line)
            parts.append(w)
        if engine.stop_reason:
            out = getattr(engine, "in_flight", 0)
            landing = (f"; {plural(out, 'call')} in flight landing (a second Ctrl-C abandons them)"
                       if isinstance(out, int) and out > 0 else "")
            parts.append(f"[yellow]stopping: {escape(engine.stop_reason)}{landing}[/yellow]")
        return Group(*parts)

    def _overall(self, stats):
        """One line for the whole run: a bar, items done of planned, elapsed time, the ETA at the
        recent pace and calls/s over the last seconds ('-' while there is no pace to go by)."""
        total, done = stats.total, stats.done
        g = Table.grid(padding=(0, 2))
        g.add_column(no_wrap=True)
        g.add_column()  # wraps between figures on a narrow terminal, never cuts one
        bar = ProgressBar(total=max(total, 1), completed=done, width=max(10, min(40, self.console.width - 66)))
        pct = f" ({100 * done / total:.0f}%)" if total else ""
        g.add_row(bar, f"{done:,}/{total:,}{pct}  elapsed {_fmt_eta(stats.elapsed_s())}  "
                       f"{_eta_text(stats.eta_s(), total)}  {_fmt_rate(stats.calls_per_s())} calls/s")
        return g

    @staticmethod
    def _buckets(states, narrow: bool):
        """Per model (bucket): calls in flight against the limit, calls waiting, and why they wait.
        Narrow: two lines a model, the reason on its own line, so it is never cut into a column."""
        rows = []
        for s in states:
            waiting = s.waiting_slot + s.waiting_rate + s.backing_off
            why = s.reason or ("concurrency limit" if s.waiting_slot else "")
            limit = f"{s.limit:.0f}" + ("" if s.limit >= s.ceiling else f" of max {s.ceiling}")
            rows.append((s.name, s.in_flight, limit, waiting, why))
        if narrow:
            b = Table(title="models", title_justify="left", show_header=False, box=None, padding=(0, 1))
            b.add_column("model", no_wrap=True, overflow="ellipsis")
            for name, flight, limit, waiting, why in rows:
                b.add_row(escape(f"{name}: {flight} in flight (limit {limit}), {waiting} waiting"))
                if why:
                    b.add_row(f"  [yellow]{escape(why)}[/yellow]")
            return b
        b = Table(title="models", title_justify="left")
        for col in ("model", "in flight", "limit", "waiting", "why (paused: no call goes out; backoff: calls wait to retry)"):
            text = col == "model" or col.startswith("why")
            b.add_column(col, no_wrap=not col.startswith("why"), justify="left" if text else "right")
        for name, flight, limit, waiting, why in rows:
            b.add_row(escape(name), str(flight), limit, str(waiting), escape(why))
        return b

    def plain_line(self, engine) -> str:
        bits = []
        for st in engine.stats.stages.values():
            bits.append(f"{st.name} {st.done}/{st.total} {_eta_text(st.eta_s(), st.total)} (cached {st.cache_hits}, "
                        f"retries {st.retries}, 429s {st.rate_limited}, failed {st.failures})")
        waiting = [f"{s.name}: {s.reason}" for s in engine.bucket_states() if s.reason]
        stats = engine.stats
        line = (f"[{time.strftime('%H:%M:%S')}] {stats.done:,}/{stats.total:,} done, elapsed "
                f"{_fmt_eta(stats.elapsed_s())}, {_eta_text(stats.eta_s(), stats.total)}: " + "; ".join(bits)
                + f"; spent {fmt_usd(stats.spent_usd)}")
        if engine.max_cost_usd is not None:
            line += f" of max {cap_text(engine.max_cost_usd)}"
        changes = total_change_lines(stats)
        if changes:
            line += " | totals: " + "; ".join(changes)
        if waiting:
            line += " | waiting: " + "; ".join(waiting)
        waits = batch_status_lines(engine)
        if waits:
            line += " | " + "; ".join(waits)
        local = local_status_lines(engine)
        if local:
            line += " | local: " + "; ".join(local)
        return line

    # -- results ----------------------------------------------------------------------------
    def show_results(self, outcome) -> None:
        self._end_status()
        for title, cols, cells, left in result_tables(outcome):
            self._print_tables(title, cols, cells, left)
        if outcome.result is not None:
            for note in outcome.result.notes:
                self.console.print(note, markup=False, highlight=False, emoji=False)
            from ..judging.honest import flag_lines, interval_line  # what [a, b] is; the run's warnings

            for line in [interval_line(outcome.summary or {}), *flag_lines(outcome.summary or {})]:
                if line:
                    self.console.print(line, markup=False, highlight=False, emoji=False)
            devs = deviation_lines((outcome.summary or {}).get("deviations") or [])
            if devs:
                self.console.print("departures from the authors' code in force:", highlight=False)
                for line in devs:
                    self.console.print(f"  {line}", markup=False, highlight=False)
            ab = (outcome.summary or {}).get("autobencher") or {}
            for task_key, m in ab.items():
                if isinstance(m, dict):
                    self.console.print(f"AutoBencher ({ab.get('approach')}, {task_key}) over {', '.join(m['models'])}: "
                                       f"difficulty {_cell(m['difficulty'])}, separability {_cell(m['separability'])}, "
                                       f"novelty {_cell(m['novelty'])}")
        cost = None
        if outcome.stats is not None:
            st = outcome.stats
            cost = (_spent_text(st.spent_usd, getattr(outcome, "totals", None))
                    + (f" of max {cap_text(outcome.max_cost_usd)}" if outcome.max_cost_usd is not None else "")
                    + "; " + _calls_made(st.paid_calls, (outcome.summary or {}).get("calls_by_provider"),
                                         outcome.served_by_simulator,
                                         (outcome.summary or {}).get("calls_at_price_0"))
                    + f", cache hits {st.cache_hits:,}")
            for line in savings_lines(outcome.summary or {}):
                self.console.print(line, markup=False, highlight=False, emoji=False)
            from ..local.faults import fault_lines

            for line in fault_lines((outcome.summary or {}).get("local_workers") or {}):
                self.console.print(line, style="yellow", markup=False, highlight=False, emoji=False)
            if st.remade:
                self.console.print(f"[yellow]{plural(st.remade, 'cached reply')} named an image or vector missing "
                                   "from the image store: their calls were made again[/yellow]")
            if st.usage_anomalies or st.over_reservation:
                self.console.print(f"[yellow]{plural(st.usage_anomalies, 'reply')} reported impossible usage "
                                   f"(negative, or more output than the request allowed); {st.over_reservation:,} cost "
                                   "more than the worst case reserved for them[/yellow]")
        if outcome.failed_items:
            self.console.print(f"[red]{len(outcome.failed_items)} failed:[/red]")
            for f in outcome.failed_items[:50]:
                # a failure's provider text is not markup, nor emoji codes (":smile:" stays as written)
                self.console.print(f"  {escape(f)}", emoji=False)
            if len(outcome.failed_items) > 50:
                self.console.print(f"  ... and {len(outcome.failed_items) - 50} more (see judgments.csv)")
        if outcome.out_dir is not None and outcome.summary is not None:
            extra = [p.name for p in outcome.files if p.suffix != ".csv" and p.name != "summary.json"]
            self.console.print(f"results in {outcome.out_dir}/ (summary.json, *.csv{''.join(', ' + n for n in extra)})")
        self.show_closing(outcome, cost)

    def show_closing(self, outcome, cost: str | None) -> None:
        """The closing summary (judgekit.cli.closing): the headline with its intervals, the cost,
        the failures and the report's link, printed last."""
        from .closing import closing_summary

        parts, link = closing_summary(outcome, self.console.width, cost)
        for part in parts:
            self.console.print(part, highlight=False)
        if link is not None:  # one line the terminal wraps: the link stays whole
            self.console.print(link, soft_wrap=True, highlight=False)


    def _print_tables(self, title: str, cols: list[str], cells: list[list[str]], left: set[str] = frozenset()) -> None:
        for t in _fit_tables(title, cols, cells, self.console.width, left):
            self.console.print(t)


def result_tables(outcome) -> list[tuple[str, list[str], list[list[str]], frozenset[str]]]:
    """Every table :meth:`ConsoleUI.show_results` prints, in order, as (title, columns, cells as
    text, the columns that name a row): the benchmark's results, its further tables and
    Creation-MMBench's human alignment (Table 4)."""
    result = getattr(outcome, "result", None)
    if result is None:
        return []
    out = []
    rows = result.display
    if rows:
        cols = [c for c in rows[0].keys() if c not in ("level",)]
        out.append(("Results", cols, [[_cell(r.get(c)) for c in cols] for r in rows],
                    frozenset({"model", "task", "category", "approach"})))
    for title, more in result.more_displays:
        if more:
            cols = list(more[0].keys())
            out.append((title, cols, [[_cell(r.get(c)) for c in cols] for r in more], frozenset()))
    alignment = (outcome.summary or {}).get("human_alignment") or []
    if alignment:  # Creation-MMBench's Table 4: per judge and model, dual and single evaluation
        out.append(("Human alignment (Table 4)",
                    ["Judge", "Model", "Dual MAE", "Dual Cons.", "Single MAE", "Single Cons.", "Items"],
                    [[str(row.get("judge", "-")), str(row["model"]), _cell(row.get("dual_mae")),
                      _cell(row.get("dual_consistency")), _cell(row.get("single_mae")),
                      _cell(row.get("single_consistency")), _cell(row.get("items"))] for row in alignment],
                    frozenset({"Judge", "Model"})))
    return out


_FREE_NAMES = {"sim": "simulator", "sim_image": "simulator", "sim_image_search": "simulator", "local": "local model",
               "image_folder": "image folder"}


def _calls_made(made: int, by_provider: dict | None, served: int | None, at_price_0: dict | None = None) -> str:
    """The calls a run made, the free ones (simulator, local models, models priced at 0) told apart
    from the paid: 'calls made 116 (simulator, free)', 'calls made 116 (92 paid; 24 free: sim 24)',
    'calls made 116 (96 paid; 20 free: price 0 openai 20)', 'paid calls 116'."""
    from ..cost.prices import FREE_PROVIDERS

    if by_provider is None:  # no count by provider (an interrupted run): the simulator's own count
        if served is None:
            return f"paid calls {made:,}"
        return f"calls made {made:,} (simulator served {served:,}, free)"
    free = {k: n for k, n in by_provider.items() if k in FREE_PROVIDERS and n}
    zero = {k: n for k, n in (at_price_0 or {}).items() if n}  # a paid kind's model priced at 0
    n_free = sum(free.values()) + sum(zero.values())
    paid = max(0, made - n_free)
    if not n_free:
        return f"paid calls {made:,}" if made else "calls made 0"
    if not paid:
        names = [*(_FREE_NAMES.get(k, k) for k in free), *(["price 0"] if zero else [])]
        return f"calls made {made:,} ({', '.join(dict.fromkeys(names))}, free)"
    parts = [f"{k} {n:,}" for k, n in free.items()] + [f"price 0 {k} {n:,}" for k, n in zero.items()]
    return f"calls made {made:,} ({paid:,} paid; {n_free:,} free: {', '.join(parts)})"


def _spent_text(this_usd: float, totals: dict | None) -> str:
    """'spent $X', or over a run of several processes 'spent $X this run ($Y in this process, 1 earlier)'."""
    earlier = (totals or {}).get("earlier_processes") or []
    if not earlier:
        return f"spent {fmt_usd(this_usd)}"
    return (f"spent {fmt_usd(totals['cost_usd'])} this run ({fmt_usd(this_usd)} in this process, "
            f"{len(earlier):,} earlier)")


def savings_lines(summary: dict) -> list[str]:
    """What batching and prompt caching saved, from a run's summary (nothing when neither ran)."""
    out = []
    b = summary.get("batch") or {}
    if b.get("calls"):
        retried = f", {b['retried']:,} asked again" if b.get("retried") else ""
        out.append(f"batch: {plural(b['calls'], 'call')} cost {fmt_usd(b['cost_usd'])} at batch prices, "
                   f"{fmt_usd(b['live_equivalent_usd'])} live: saved {fmt_usd(b['saved_usd'])}{retried}")
    unanswered = b.get("unanswered") or {}
    if unanswered:  # why batch requests ended unanswered (expired, errored (api_error), batch failed...)
        out.append(f"batch: {plural(sum(unanswered.values()), 'request')} left unanswered: "
                   + ", ".join(f"{cause} {n:,}" for cause, n in sorted(unanswered.items(), key=lambda kv: -kv[1])))
    pc = summary.get("prompt_cache") or {}
    if pc.get("calls"):
        writes = f", {pc['cache_write_tokens']:,} written to it" if pc.get("cache_write_tokens") else ""
        out.append(f"prompt cache: {pc['calls']:,} calls read {pc['cached_input_tokens']:,} input tokens from it"
                   f"{writes}: saved {fmt_usd(pc['saved_usd'])}")
    return out


def total_change_lines(stats) -> list[str]:
    """Why totals moved since the first frame: 'guess total -462: sets that ended before their
    last turn or round', one line a stage and reason ([] when none moved)."""
    return [f"{c.stage} total {c.delta:+,}: {c.reason}" for c in stats.total_changes()]


def local_status_lines(engine) -> list[str]:
    """The status lines of the local-model workers (providers with ``status_lines()``), each
    worker once even when several aliases share it; [] when the run has no local model."""
    lines: dict[str, None] = {}
    for prov in list(getattr(engine, "providers", {}).values()):
        get = getattr(prov, "status_lines", None)
        if get is None:
            continue
        try:
            for line in get():
                lines[line] = None
        except Exception as e:  # the display must never break the run
            lines[f"{getattr(prov, 'alias', '?')}: status unavailable ({e!r})"] = None
    return list(lines)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


class _StatusLine:
    """A spinner, what is happening, and for how long (rendered anew at each refresh)."""

    def __init__(self, message: str, since: float | None = None) -> None:
        self.set(message, since)

    def set(self, message: str, since: float | None = None) -> None:
        self.message, self.since = message, time.monotonic() if since is None else since
        self.spinner = Spinner("dots", style="cyan")

    def __rich_console__(self, console, options):
        self.spinner.text = Text(f"{self.message} ({time.monotonic() - self.since:.1f}s)")
        yield self.spinner


#: the line shown from the last call until the results print
AFTER_CALLS = "all calls made: computing intervals and the report…"


class _Progress:
    def __init__(self, ui: ConsoleUI, engine) -> None:
        self.ui, self.engine = ui, engine
        self._task: asyncio.Task | None = None
        self._live: Live | None = None
        #: when the last call ended (every planned item done, none in flight), as first seen
        self.calls_ended_at: float | None = None

    def calls_ended(self) -> float | None:
        """When the calls ended, noted the first time it is seen (from any thread: the live
        view's refresh, the plain lines' ticker), None while calls remain."""
        if self.calls_ended_at is None:
            out = getattr(self.engine, "in_flight", 0)
            if self.engine.stats.calls_ended(out if isinstance(out, int) else 0):
                self.calls_ended_at = time.monotonic()
        return self.calls_ended_at

    async def __aenter__(self):
        self.ui._end_status()
        # the benchmark's flow announces its plan before its first call: let it, so the first
        # frame shows the totals (not 0/0)
        await asyncio.sleep(0)
        self.engine.stats.sample()  # the elapsed time starts with the calls
        if self.ui.live:
            self._live = Live(self._frame(), console=self.ui.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        else:
            self.ui._phase = _PhaseLines(self, self.ui.interval)
        self._task = asyncio.ensure_future(self._loop())
        return self

    def _frame(self):
        """The live view and, once the calls have ended, the line of what follows (redrawn by
        rich's own thread, so its seconds go on while the computing holds the event loop)."""
        return Group(self.ui.render(self.engine), _AfterCallsLine(self))

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.ui.interval)
            self._tick()

    def _tick(self) -> None:
        self.engine.stats.sample()
        if self._live is not None:
            self._live.update(self._frame())
        else:
            print(self.ui.plain_line(self.engine), file=sys.stdout, flush=True)

    async def __aexit__(self, exc_type, exc, tb):
        if self._task is not None:
            self._task.cancel()
        self._tick()
        since = self.calls_ended() or time.monotonic()
        if self._live is not None:
            self._live.update(self.ui.render(self.engine))  # the last frame stays, without the phase line
            self._live.__exit__(None, None, None)
        if exc_type is None:  # the flow returned: the results, intervals and report follow
            if self.ui._phase is not None:
                self.ui._phase.begin(since)
            else:
                self.ui._after_calls(since)
        elif self.ui._phase is not None:
            self.ui._phase.stop(quiet=True)
            self.ui._phase = None
        return False


class _AfterCallsLine:
    """In the live view: nothing while calls remain; then a spinner, :data:`AFTER_CALLS` and the
    seconds since the last call."""

    def __init__(self, progress: _Progress) -> None:
        self.progress = progress
        self.spinner = Spinner("dots", style="cyan")

    def __rich_console__(self, console, options):
        since = self.progress.calls_ended()
        if since is not None:
            self.spinner.text = Text(f"{AFTER_CALLS} ({time.monotonic() - since:.1f}s)")
            yield self.spinner


class _PhaseLines:
    """Plain mode (logs, pipes): a thread that prints :data:`AFTER_CALLS` when the calls end
    (after the last progress line, or a second after the calls end if the flow's computing holds
    the event loop) and again every ``interval`` seconds with the time since, until the results
    print (then one line with the whole time).  A thread, as the computing holds the loop."""

    def __init__(self, progress: _Progress, interval: float, out=None) -> None:
        self.progress, self.interval, self.out = progress, interval, out
        self.since: float | None = None
        self._begun = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="judgekit-after-calls", daemon=True)
        self._thread.start()

    def begin(self, since: float) -> None:
        """The flow returned (its last progress line printed): the phase began at ``since``
        (or earlier, if already seen)."""
        if self.progress.calls_ended_at is None:
            self.progress.calls_ended_at = since
        self._begun = True

    def _print(self, line: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {line}", file=self.out or sys.stdout, flush=True)

    def _run(self) -> None:
        shown = None
        while not self._stop.wait(0.1):
            try:
                since = self.progress.calls_ended()
            except RuntimeError:  # a counter changed under the reading thread: ask again
                continue
            if since is None:
                continue
            now = time.monotonic()
            if shown is None and not self._begun and now - since < 1.0:
                continue  # the flow's last progress line first, unless the computing holds on
            if shown is None or now - shown >= self.interval:
                self._print(f"{AFTER_CALLS} ({now - since:.1f}s)" if shown is not None else AFTER_CALLS)
                shown = now
            self.since = since

    def stop(self, quiet: bool = False) -> None:
        self._stop.set()
        self._thread.join()
        since = self.since if self.since is not None else self.progress.calls_ended_at
        if not quiet and since is not None:
            self._print(f"intervals and the report computed in {time.monotonic() - since:.1f}s")


def _eta_text(eta: float | None, total: int, label: str = "ETA ") -> str:
    """'done' when every planned item is done, '-' when there is no pace to go by (or nothing is
    planned yet), else the time left."""
    if total and eta == 0:
        return "done"
    if not total or eta is None:
        return f"{label}-"
    return f"{label}{_fmt_eta(eta)}"


def _fmt_rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1f}"


def _fmt_calls(expected: float, bound: int) -> str:
    """``expected / bound`` calls to make, or one figure when every call is certain."""
    if expected >= bound:
        return f"{bound:,}"
    return f"{expected:,.0f} / {bound:,}"


def _fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
