"""Running a spec: prepare -> estimate -> confirm -> run with progress -> results.

The library side of ``judgekit run`` and ``judgekit estimate``; the CLI passes a ``ui`` object for
the parts a person sees (estimate table, confirmation, live progress, results table), so a
notebook can run a spec with its own (or no) display.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from .benchmarks.base import BENCHMARKS, BenchmarkResult, load_benchmark
from .benchmarks.deviations import deviations
from .benchmarks.plugins import simulated, table_prefix
from .blobs import BlobStore
from .cache.describe import cache_line
from .cache.store import CacheStore
from .config import RunSpec, check_simulator_settings, validation_problems
from .cost.estimate import Estimate, EstimateBuilder, line_time_s, price_lookup_for
from .cost.reasoning import max_billed_output, reasons
from .cost.tokens import count_request
from .engine import Engine, RunStats, RunStopped
from .engine.batch_status import batches_pending, live_batch_keys
from .engine.batching import batch_all, check_batch_models
from .local.faults import local_workers
from .errors import AuthError, SpecError, StorageFull, UsageError, storage_problem
from .plural import plural
from .providers.anthropic_wire import written_prefix
from .providers.params import check_models
from .report.files import write_results
from .report.tidy import write_tidy
from .run_cap import RunCap, check_prices, choose_cap, run_record
from .run_totals import run_totals

__all__ = ["RunOptions", "RunOutcome", "UI", "run_spec", "estimate_spec", "default_cache_path", "blob_dir_for", "EXIT"]

#: seconds the calls in flight at a stop have to land when neither --grace nor the spec says
DEFAULT_GRACE_S = 15.0
#: exit codes: done, failed items remain, bad spec/input, interrupted
EXIT = {"ok": 0, "failed": 1, "bad_input": 2, "interrupted": 130}


def default_cache_path() -> Path:
    return Path(os.environ.get("JUDGEKIT_CACHE", "judgekit-out/cache.duckdb"))


def blob_dir_for(cache_path: Path) -> Path:
    """The image store that goes with a cache file: ``<cache>.blobs/`` beside it (cached rows refer
    to images by sha256, so the two travel together)."""
    return cache_path.with_name(cache_path.name + ".blobs")


@dataclass
class RunOptions:
    out_dir: Path | None = None
    cache_path: Path | None = None
    limit: int | None = None
    max_cost_usd: float | None = None
    yes: bool = False
    interactive: bool = False  # a person can answer a confirmation
    handle_signals: bool = False  # Ctrl-C / SIGTERM stop launching calls and end the run cleanly
    #: seconds the calls in flight when the run stops (Ctrl-C, SIGTERM, the cost cap) have to land
    #: and be kept; those still out then are abandoned (a second Ctrl-C abandons them at once).
    #: None: the spec's ``grace_s``, else :data:`DEFAULT_GRACE_S`
    grace_s: float | None = None
    batch: bool = False  # --batch: every model whose provider has a batch API runs in batch mode


@dataclass
class RunOutcome:
    exit_code: int
    message: str = ""
    out_dir: Path | None = None
    summary: dict[str, Any] | None = None
    result: BenchmarkResult | None = None
    estimate: Estimate | None = None
    stats: RunStats | None = None
    failed_items: list[str] = field(default_factory=list)
    served_by_simulator: int | None = None
    files: list[Path] = field(default_factory=list)  # what the run wrote to out_dir
    max_cost_usd: float | None = None  # the cap the run ran under (--max-cost, kept, or the spec's)
    #: spend, paid calls and batch block over every process of the run, with this process's
    #: (``this_process``) and the earlier ones' (``earlier_processes``): :func:`judgekit.run_totals.run_totals`
    totals: dict[str, Any] | None = None
    storage_full: bool = False  # a write failed for want of room (the message names the path)
    #: the report's headline (judgekit.report.doc.Headline: the leaderboard's figures) and the
    #: report.html written, for the closing summary; empty and None when the run wrote no report
    headline: list[Any] = field(default_factory=list)
    report_path: Path | None = None


class UI(Protocol):
    def show_estimate(self, estimate: Estimate, cached_note: str) -> None: ...
    def confirm(self, message: str) -> bool: ...
    def progress(self, engine: Engine): ...  # an async context manager
    def show_results(self, outcome: RunOutcome) -> None: ...
    def note(self, message: str) -> None: ...


class _NullUI:
    def show_estimate(self, estimate, cached_note):
        pass

    def confirm(self, message):
        return False

    def progress(self, engine):
        return _AsyncNull()

    def show_results(self, outcome):
        pass

    def note(self, message):
        pass


class _AsyncNull:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False


def _aliases(spec: RunSpec) -> list[str]:
    used = list(spec.roles.candidates)
    for a in (*spec.roles.panel, spec.roles.describer, spec.roles.retriever, *spec.roles.generators,
              spec.roles.encoder, spec.roles.baseline):
        if a and a not in used:
            used.append(a)
    return used


def _benchmark(spec: RunSpec):
    check_simulator_settings(spec)
    check_models(spec.models, _aliases(spec))  # a parameter a model rejects: refused before any call
    check_batch_models(spec, _aliases(spec))  # batch = true on a provider without a batch API
    bench = load_benchmark(spec.benchmark, spec.source_path)  # a SpecError line when unknown or broken
    _simulate_plugin(spec, bench)
    try:
        options = bench.Options.model_validate(spec.options)
    except ValidationError as e:
        problems = "; ".join(validation_problems(e, prefix="options."))
        raise SpecError(f"{spec.source_path}: invalid options for {spec.benchmark}: {problems}") from None
    return bench, options


def _simulate_plugin(spec: RunSpec, bench) -> None:
    """A plugin benchmark with a ``simulated`` behaviour: every simulator the run starts answers with
    it too (``SimConfig.benchmarks``; a ``.py`` plugin by its absolute path).  Built-in benchmarks'
    behaviours are always on; a simulator given by ``url`` is left as it is."""
    if spec.benchmark in BENCHMARKS or getattr(bench, "simulated", None) is None:
        return
    if any(m.provider == "sim" and "url" not in m.sim for m in spec.models.values()):
        simulated(spec.benchmark, spec.source_path)  # a simulated behaviour that does not load: one SpecError line
    ref = spec.benchmark
    if ref.endswith(".py"):
        p = Path(ref).expanduser()
        ref = str((Path(spec.source_path).parent / p if spec.source_path and not p.is_absolute() else p).resolve())
    for m in spec.models.values():
        if m.provider == "sim" and "url" not in m.sim:
            named = list(m.sim.get("benchmarks", []))
            if ref not in named:
                m.sim["benchmarks"] = [*named, ref]


async def _estimate(bench, prepared, engine: Engine) -> Estimate:
    planned = await bench.plan(prepared, engine)
    keys = [engine.key_for(pc.request) for pc in planned]
    cached = await engine.cache.cached_keys(keys)
    # a cached reply whose image or vector is gone from the store is made again: not cached
    cached -= await engine.stale_keys((pc.request, k) for pc, k in zip(planned, keys) if k in cached)
    cached |= await live_batch_keys(engine.cache, keys)  # in a batch at the provider: submitted already
    means: dict[tuple[str, str], float | None] = {}
    builder = EstimateBuilder()
    seen: set[str] = set()
    for pc, key in zip(planned, keys):
        # the same call planned twice (two approaches sharing a first guess) is paid once: the
        # engine answers the second from the first
        duplicate = pc.exact and key in seen  # (stand-in requests look alike but are not)
        if pc.exact:
            seen.add(key)
        req = pc.request
        prov = engine.providers[req.model]
        mk = (pc.stage, prov.model)
        if mk not in means:
            means[mk] = await engine.cache.output_token_mean(pc.stage, prov.model)
        billed = prov.spec.base_model  # an Azure deployment: the model it serves (prices, token rules)
        toks = count_request(prov.kind, billed, req.messages, req.params)
        if not pc.exact:
            toks = type(toks)(toks.input, False)
        bound = pc.max_output_tokens if pc.max_output_tokens is not None else req.params.max_tokens
        # a Gemini thinking model's thoughts may come on top of max_tokens (cost.reasoning)
        bound = max_billed_output(prov.kind, billed, bound, req.params)
        # a reasoning model's output is mostly reasoning: a guess of the text is no expectation
        guess = None if reasons(prov.kind, billed) else pc.expected_output_tokens
        # a stand-in request that matches a cached call (MMGenBench's stand-in drawing is the
        # original, whose encoding is cached) is still to make: only exact requests count as cached
        cached_now = (pc.exact and key in cached) or duplicate
        # Claude's marked prefix where it reaches the model's minimum: its write costs 1.25x input
        written, prefix = written_prefix(billed, req.messages, lambda ms: count_request(
            prov.kind, billed, ms, req.params).input) if getattr(prov, "prompt_cache", False) else (0, ())
        builder.add_call(pc.stage, req.model, prov.kind, prov.model, toks, bound,
                         cached_now, means[mk] if means[mk] is not None else guess,
                         pc.chance, cache_prefix_tokens=written, cache_prefix=prefix)
        if pc.more_at_most:  # calls the plan could not follow (counted in the bound only)
            builder.add_call(pc.stage, req.model, prov.kind, prov.model, type(toks)(toks.input, False), bound,
                             False, means[mk] if means[mk] is not None else guess,
                             0.0, pc.more_at_most, cache_prefix_tokens=written, cache_prefix=prefix)
    overrides = {a: s.price for a, s in engine.models.items()}
    billed = {a: s.base_model for a, s in engine.models.items()}
    est = builder.finish(price_lookup_for(overrides, billed), batch_lookup=price_lookup_for(overrides, billed, batch=True),
                         batch_aliases=[a for a, s in engine.models.items() if s.batch])
    for line in est.lines:  # how long: measured latencies of earlier calls, and the RPM limits
        if line.batch:
            continue  # as long as the provider's batches take (most within an hour, at most a day)
        lim = engine.models[line.alias].limits
        latency = await engine.cache.latency_mean(line.stage, line.model) if line.calls_to_make else None
        line.time_s = line_time_s(line.calls_to_make, latency, lim.max_concurrency, lim.requests_per_minute)
    return est


async def _plan_only_providers(engine: Engine, aliases: list[str]) -> None:
    """The providers an estimate needs: made, not started, so no key is read, no client made, no
    simulator or local worker launched.  Their cache identity is known without starting, except an
    image folder's (a fingerprint of its index, built locally) and Brave's (its endpoint)."""
    from .providers import create_provider
    from .providers.retrieval import BraveProvider, ImageFolderProvider
    from .retrieval.brave import BraveImageSearch

    for alias in aliases:
        spec = engine.models[alias]
        prov = create_provider(alias, spec)
        prov.blobs = engine.blobs
        if isinstance(prov, ImageFolderProvider):
            await prov.start()
        elif isinstance(prov, BraveProvider):  # the identity is the endpoint; the key plays no part
            prov.retriever = BraveImageSearch(api_key=None, base_url=spec.base_url, source=prov.kind)
        engine.providers[alias] = prov


class _Session:
    """Spec + cache + engine, opened and closed together."""

    def __init__(self, spec: RunSpec, opts: RunOptions, run_id: str, *, offline: bool = False,
                 out_dir: Path | None = None) -> None:
        self.spec, self.opts, self.run_id = spec, opts, run_id
        self.out_dir = out_dir  # a run's results folder: an earlier run into it may have left its cap
        self.cap = RunCap(None, "none")
        self.offline = offline  # estimate only: providers are made but not started (no key, no server)
        self.cache_path = opts.cache_path or default_cache_path()
        self.cache: CacheStore | None = None
        self.engine: Engine | None = None

    async def __aenter__(self) -> "_Session":
        if not self.offline:  # an estimate reads a snapshot: it makes no cache and waits for no run
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        self.cache = await CacheStore.open(self.cache_path, run_id=self.run_id, snapshot=self.offline)
        try:
            self.cap = await choose_cap(self.cache, self.spec, self.out_dir, self.opts.max_cost_usd)
            if not self.offline:  # a cap cannot hold over a model of unknown price: refuse now
                check_prices(self.spec, _aliases(self.spec), self.cap)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        self.engine = Engine(self.spec.models, self.cache, max_cost_usd=self.cap.usd,
                             blobs=BlobStore(blob_dir_for(self.cache_path)))
        try:
            if self.offline:
                await _plan_only_providers(self.engine, _aliases(self.spec))
            else:
                await self.engine.start(_aliases(self.spec))
        except RunStopped as e:  # a missing key or unknown model at start: the spec's fault
            await self.__aexit__(None, None, None)
            cause = e.__context__  # a key never sent (not set) is said plainly, without "authentication failed"
            missing_key = isinstance(cause, AuthError) and cause.status is None
            raise SpecError(str(cause) if missing_key else str(e)) from None
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc) -> bool:
        if self.engine is not None:
            await self.engine.close()
        if self.cache is not None:
            await self.cache.close()
        return False


_SIGNALS = ("SIGINT", "SIGTERM")


def _on_signals(callback):
    """Route SIGINT/SIGTERM to ``callback`` while a run is going; returns a function telling
    whether a signal arrived."""
    import signal

    seen = []
    if callback is None:
        return lambda: False
    loop = asyncio.get_running_loop()

    def handler() -> None:
        seen.append(1)
        callback()

    for name in _SIGNALS:
        try:
            loop.add_signal_handler(getattr(signal, name), handler)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return lambda: bool(seen)


def _restore_signals() -> None:
    import signal

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    for name in _SIGNALS:
        try:
            loop.remove_signal_handler(getattr(signal, name))
        except (NotImplementedError, RuntimeError, ValueError):
            pass


def _abandon(holder: dict[str, Any], why: str) -> None:
    """Cancel the run's calls now, counting the attempts still out at a provider (abandoned: a
    provider may bill them, and nobody keeps their answers)."""
    calls, engine = holder.get("calls"), holder.get("engine")
    if calls is None or calls.done() or "abandoned" in holder:
        return
    holder["abandoned"], holder["abandoned_why"] = (engine.in_flight if engine is not None else 0), why
    calls.cancel()


#: after a signal, once no attempt is out, how long the flow has to wind down before it is cancelled
#: (calls waiting on a submitted batch wait no longer: the batch stays recorded for the next run)
_WIND_DOWN_S = 3.0


async def _grace_watch(engine: Engine, holder: dict[str, Any], grace_s: float) -> None:
    """Once the run stops (a signal, the cost cap), give the attempts in flight ``grace_s`` seconds
    to land (each one that does is stored and charged), then abandon what is left.  After a signal
    the flow is also cancelled once nothing has been out for :data:`_WIND_DOWN_S`."""
    await engine.wait_stopped()
    holder["out_at_stop"] = engine.in_flight_at_stop  # counted by stop() itself: calls may land before this wakes
    loop = asyncio.get_running_loop()
    end = loop.time() + grace_s
    idle_since = None
    while loop.time() < end:
        if engine.in_flight:
            idle_since = None
        elif not holder.get("signalled"):
            return  # the cap: what is not in flight goes on as the flow decides (batches are collected)
        elif idle_since is None:
            idle_since = loop.time()
        elif loop.time() - idle_since >= _WIND_DOWN_S:
            break
        await asyncio.sleep(0.05)
    _abandon(holder, f"after the {grace_s:g} s grace")


def _landing_note(engine: Engine, holder: dict[str, Any]) -> str:
    """What became of the attempts in flight when the run stopped, for the closing message."""
    out, abandoned = holder.get("out_at_stop", 0), holder.get("abandoned", 0)
    if not out:
        return "; no call was in flight, every finished call is in the cache"
    text = f"; of {plural(out, 'call')} in flight at the stop, {engine.landed_after_stop:,} landed and were kept"
    if abandoned:
        text += (f", {abandoned:,} were abandoned {holder['abandoned_why']} (the provider may bill them; "
                 "the next run asks them again)")
    return text


def _served(engine: Engine) -> int | None:
    total, found = 0, False
    seen = set()
    for prov in engine.providers.values():
        server = getattr(prov, "server", None)
        if server is not None and id(server) not in seen:
            seen.add(id(server))
            try:
                st = server.stats()
                total += int(st.get("served", 0)) + int(st.get("searches_served", 0))
                found = True
            except Exception:
                pass
    return total if found else None


async def estimate_spec(spec: RunSpec, opts: RunOptions, ui: UI | None = None) -> RunOutcome:
    """Estimate only: prepares the data and reads the cache; makes no call."""
    ui = ui or _NullUI()
    try:
        return await _estimate_spec(spec, opts, ui)
    finally:
        _status(ui, None)  # the status line goes before an error is printed


async def _estimate_spec(spec: RunSpec, opts: RunOptions, ui: UI) -> RunOutcome:
    _status(ui, f"loading {spec.benchmark}")
    spec = _batch_option(spec, opts, ui)
    bench, options = _benchmark(spec)
    _status(ui, "loading data")
    prepared = bench.prepare(spec, options, opts.limit)
    _status(ui, "opening the cache")
    async with _Session(spec, opts, "estimate-" + uuid.uuid4().hex[:8], offline=True) as s:
        ui.note(await cache_line(s.cache, spec.name))  # which cache, and its earlier runs of the spec
        _status(ui, "estimating")
        est = await _estimate(bench, prepared, s.engine)
    ui.show_estimate(est, _cached_note(est))
    return RunOutcome(EXIT["ok"], estimate=est)


def _batch_option(spec: RunSpec, opts: RunOptions, ui: UI) -> RunSpec:
    """``--batch``: batch mode for every alias whose provider has a batch API (said in a note)."""
    if not opts.batch:
        return spec
    spec, chosen = batch_all(spec, _aliases(spec))
    if not chosen:
        raise UsageError("--batch: no model of this run has a provider with a batch API")
    ui.note(f"batch mode for {', '.join(chosen)}: calls go in the provider's batches at batch prices; answers "
            "come as the batches finish (usually within an hour, at most a day)")
    return spec


def _status(ui: UI, message: str | None) -> None:
    """Say what the run is doing before anything else is on screen (None: say nothing more); a UI
    without ``status`` shows nothing."""
    say = getattr(ui, "status", None)
    if say is not None:
        say(message)


def _starting(spec: RunSpec) -> str:
    kinds = {spec.models[a].provider for a in _aliases(spec) if a in spec.models}
    what = [w for k, w in (("sim", "the simulator"), ("local", "the local worker")) if k in kinds]
    return "opening the cache" + (", starting " + " and ".join(what) if what else "")


def _cached_note(est: Estimate) -> str:
    cached = sum(line.calls_cached for line in est.lines)
    total = sum(line.calls_total for line in est.lines)
    return f"{cached:,} of {plural(total, 'call')} already cached or made once for several uses (free)"


async def run_spec(spec: RunSpec, opts: RunOptions, ui: UI | None = None) -> RunOutcome:
    """Run a spec to the end (or to a stop).  Raises SpecError/DataError for bad input; all other
    outcomes are in the returned RunOutcome's exit code and message.

    With ``opts.handle_signals``, SIGINT/SIGTERM at any point end the run cleanly: during the
    calls, no new call is launched and the calls in flight have a grace period to land
    (``opts.grace_s``, else the spec's ``grace_s``, else :data:`DEFAULT_GRACE_S`); each one that
    does is stored and charged, as it was paid; a second signal, or the end of the grace, abandons
    the rest.  Before the calls, the run simply ends.  Either way the exit code is
    130.  A stop for the cost cap gives the calls in flight the same grace.
    """
    main_task = asyncio.current_task()
    holder: dict[str, Any] = {}

    def on_signal() -> None:
        engine, calls = holder.get("engine"), holder.get("calls")
        if calls is None or engine is None:
            if engine is not None:
                engine.stop("interrupted")
            main_task.cancel()  # no call going: the run simply ends
        elif not holder.get("signalled") and not engine.stopping:
            holder["signalled"] = True
            engine.stop("interrupted")  # no new call; the grace watcher abandons what is left after it
        else:  # a second signal, or one that comes after a stop for the cap: at once
            _abandon(holder, "at the second signal" if holder.get("signalled") else "at the signal")
            holder["signalled"] = True

    interrupted = _on_signals(on_signal if opts.handle_signals else None)
    ui = ui or _NullUI()
    try:
        return await _run_spec(spec, opts, ui, holder, interrupted)
    except (StorageFull, OSError, BaseExceptionGroup) as e:  # a full disk: the cache, its log, images, --out
        full = _storage_full(e, opts.out_dir or Path("judgekit-out") / spec.name)
        if full is None:
            raise
        return RunOutcome(EXIT["failed"], f"stopped: {full}; free space there", storage_full=True,
                          max_cost_usd=opts.max_cost_usd)
    except asyncio.CancelledError:
        if not interrupted():
            raise
        main_task.uncancel()
        engine = holder.get("engine")
        if engine is None or not (engine.stats.paid_calls or engine.stats.cache_hits or engine.stats.failures):
            return RunOutcome(EXIT["interrupted"], "interrupted before any call was made")
        # e.g. while the cache waited for disk space to write replies it held: what reached it is kept
        return RunOutcome(EXIT["interrupted"], "interrupted; every call the cache holds is kept, "
                          "re-run the same command to resume")
    finally:
        _status(ui, None)  # the status line goes before an error is printed
        _restore_signals()


def _storage_full(exc: BaseException, out_dir: Path) -> StorageFull | None:
    """``exc`` (or the first of its group) as a StorageFull when a write failed for want of room
    (an OSError without a file name was writing the results folder), else None."""
    if isinstance(exc, BaseExceptionGroup):
        found = [_storage_full(e, out_dir) for e in exc.exceptions]
        return next((f for f in found if f is not None), None)
    if isinstance(exc, StorageFull):
        return exc
    why = storage_problem(exc)
    if why is None:
        return None
    return StorageFull(getattr(exc, "filename", None) or out_dir, why)


async def _run_spec(spec: RunSpec, opts: RunOptions, ui: UI, holder: dict[str, Any], interrupted) -> RunOutcome:
    _status(ui, f"loading {spec.benchmark}")
    spec = _batch_option(spec, opts, ui)
    bench, options = _benchmark(spec)
    dropped = check_models(spec.models, _aliases(spec))  # parameters drop_unsupported_params leaves out
    for note in dropped:
        ui.note(note)
    _status(ui, "loading data")
    prepared = bench.prepare(spec, options, opts.limit)
    run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    out_dir = opts.out_dir or Path("judgekit-out") / spec.name
    _status(ui, _starting(spec))
    async with _Session(spec, opts, run_id, out_dir=out_dir) as s:
        engine, cache = s.engine, s.cache
        holder["engine"] = engine
        # a full disk: no new call, the calls in flight land (their replies held until written)
        cache.on_storage_full = lambda err: engine.stop(f"{err}; no new call is made")
        if engine.blobs is not None:  # a full image store says so from the writing thread
            loop = asyncio.get_running_loop()
            engine.blobs.on_full = lambda err: loop.call_soon_threadsafe(cache.on_storage_full, err)
        cache.on_hold = lambda n, err: ui.note(
            f"{plural(n, 'reply')} that arrived {'is' if n == 1 else 'are'} held in memory until "
            f"there is room (at most {cache.hold_s / 60:.0f} minutes): free space for {err.path} (Ctrl-C gives "
            "them up; the next run asks them again)")
        ui.note(await cache_line(cache, spec.name))  # a run from another folder opens another cache: say so
        if s.cap.source == "earlier run" and s.cap.usd is not None:
            from .engine.budget import cap_text

            ui.note(f"cost cap: --max-cost {cap_text(s.cap.usd)}, kept from the earlier run into {out_dir} "
                    "(pass --max-cost to change it)")
        _status(ui, "estimating")
        est = await _estimate(bench, prepared, engine)
        pace: dict[str, float] = {}  # the estimate's calls a second per stage: the ETAs' until calls end
        for line in est.lines:
            st = engine.stats.stage(line.stage)
            cost = line.cost_expected_usd if line.cost_expected_usd is not None else line.cost_max_usd
            st.estimate_usd = (st.estimate_usd or 0.0) + (cost or 0.0)
            if line.time_s and line.calls_expected > 0 and not line.batch:
                pace[line.stage] = pace.get(line.stage, 0.0) + line.calls_expected / line.time_s
        for stage, per_s in pace.items():
            engine.stats.stage(stage).expect(per_s)
        if est.total_time_s and est.calls_expected > 0:
            engine.stats.expect(est.calls_expected / est.total_time_s)
        ui.show_estimate(est, _cached_note(est))
        budget = engine.max_cost_usd
        if budget is not None:
            # the bound (every adaptive turn and round made, every call writing max_tokens) is what
            # is checked: the expected cost may be passed by an unlucky run
            bound, expected = est.total_max_usd, est.total_expected_usd
            if bound > budget and not opts.yes:
                from .engine.budget import cap_text, usd

                exp = "unknown" if expected is None else usd(expected)
                msg = f"the estimate's bound ({usd(bound)}; {exp} expected) is above --max-cost {cap_text(budget)}"
                if not (opts.interactive and ui.confirm(f"{msg}. Run anyway (it stops launching calls at the cap)?")):
                    return RunOutcome(EXIT["failed"] if opts.interactive else EXIT["bad_input"],
                                      f"{msg}; not started (pass --yes to run up to the cap)", estimate=est,
                                      max_cost_usd=budget)
        cache.run_started(run_id, spec.name, run_record(spec, out_dir, s.cap, opts.limit))
        # Everything built so far (modules, SDK clients, the loaded data with its images) lives for
        # the whole run: move it out of the garbage collector's sight.  Without this a full
        # collection scans it all and stalls the event loop for ~120 ms every few seconds.
        gc.collect()
        gc.freeze()
        result: BenchmarkResult | None = None
        status, code, message = "done", EXIT["ok"], ""
        task = holder["calls"] = asyncio.ensure_future(bench.run(prepared, engine))
        grace = next(g for g in (opts.grace_s, spec.grace_s, DEFAULT_GRACE_S) if g is not None)
        watcher = asyncio.ensure_future(_grace_watch(engine, holder, grace))
        try:
            async with ui.progress(engine):
                result = await task
        except* RunStopped as eg:
            status, code = "stopped", EXIT["failed"]
            message = str(eg.exceptions[0])
        except* asyncio.CancelledError:
            if not interrupted() and "abandoned" not in holder:
                raise
            if interrupted():
                status, code, message = "interrupted", EXIT["interrupted"], "interrupted: no new calls were launched"
            else:  # the cap (or another stop) whose calls in flight outlasted the grace
                status, code, message = "stopped", EXIT["failed"], f"stopped: {engine.stop_reason}"
            message += _landing_note(engine, holder)
        finally:
            holder.pop("calls", None)
            watcher.cancel()
            gc.unfreeze()  # let everything be collected again (DuckDB objects must die before exit)
        pending = batches_pending(engine, s.cache_path, spec.name)  # batches left live at the provider
        served = _served(engine)
        totals = await run_totals(cache, engine, spec.name, out_dir, run_id)  # over the run's processes
        outcome = RunOutcome(code, message, out_dir, estimate=est, stats=engine.stats, served_by_simulator=served,
                             max_cost_usd=budget, totals=totals)
        if result is not None:
            if interrupted():
                status, code = "interrupted", EXIT["interrupted"]
                message = (f"interrupted: no new calls were launched ({result.not_run} not made)"
                           + _landing_note(engine, holder))
            elif engine.stop_reason and result.not_run:
                status, code = "stopped", EXIT["failed"]
                message = (f"stopped: {engine.stop_reason}; {plural(result.not_run, 'call')} not made"
                           + _landing_note(engine, holder))
            elif result.failed_items:
                status, code = "failed_items", EXIT["failed"]
                message = (f"{plural(len(result.failed_items), 'failed call')} "
                           f"{'remains' if len(result.failed_items) == 1 else 'remain'}; re-run the same command to "
                           "retry them")
            summary = dict(result.summary)
            summary.update(run_id=run_id, spec=spec.name, status=status, cost_usd=round(engine.stats.spent_usd, 6),
                           paid_calls=engine.stats.paid_calls,
                           calls_by_provider=dict(cache.counters.made_by_provider),  # sim, local: free
                           cache_hits=engine.stats.cache_hits)
            if engine.made_at_price_zero:  # calls of a paid kind to a model priced at 0: free too
                summary["calls_at_price_0"] = dict(engine.made_at_price_zero)
            summary.update(engine.savings.as_dict())  # what batching and prompt caching saved
            summary.update(totals)  # spend, paid calls and batch block over the run's processes, this one's beside
            workers = local_workers(getattr(engine, "providers", {}))  # crashes, lost nodes (local models only)
            if workers:
                summary["local_workers"] = workers
            # every choice in force that departs from the authors' code: the options' (injection
            # guards always, others when set) and the model parameters left out
            summary["deviations"] = deviations(options) + [{"kind": "dropped parameter", "note": n}
                                                           for n in dropped]
            _add_self_preference(summary, spec)
            _add_holm(summary, options)
            written = write_results(out_dir, summary, result.tables)
            try:
                written.append(write_tidy(out_dir, result.tidy, run_id, spec.benchmark))  # results.parquet
            except ValueError as e:  # a benchmark's row that does not fit the columns: said, not fatal
                ui.note(f"results.parquet not written: {e}")
            for writer in result.writers:
                written.append(writer(out_dir))
            if result.report is not None:
                from .report.run_report import write_run_report

                doc = result.report()
                outcome.report_path = write_run_report(out_dir, doc, summary)
                outcome.headline = list(doc.headline)
                written.append(outcome.report_path)
            outcome.files = written
            for name, rows in result.tables.items():
                await cache.write_table(f"{table_prefix(spec.benchmark)}_{name}", [dict(r, run_id=run_id) for r in rows])
            outcome.summary, outcome.result, outcome.failed_items = summary, result, result.failed_items
            outcome.exit_code, outcome.message = code, message
        if pending:
            outcome.message = message = f"{outcome.message}; {pending}" if outcome.message else pending
        record = outcome.summary or {"message": message}
        record = {k: v for k, v in record.items() if k not in ("this_process", "earlier_processes")}
        record = dict(record, status=status, paid_calls=totals["this_process"]["paid_calls"],  # this process's own
                      batch=totals["this_process"]["batch"],
                      cache_hits=engine.stats.cache_hits,
                      failures=engine.stats.failures, cost_usd=engine.stats.spent_usd, max_cost_usd=budget,
                      usage_anomalies=engine.stats.usage_anomalies, over_reservation=engine.stats.over_reservation,
                      remade=engine.stats.remade)
        full = cache.write_error or (engine.blobs.write_error if engine.blobs is not None else None)
        outcome.storage_full = full is not None
        if full is not None and full.path not in outcome.message:  # (failed calls remain: say why)
            outcome.message = f"stopped: {full}; {outcome.message}" if outcome.message else f"stopped: {full}"
        cache.run_finished(run_id, status, json.dumps(record, default=str))
    ui.show_results(outcome)
    return outcome


def _add_self_preference(summary: dict[str, Any], spec) -> None:
    """summary["flags"] += a judge scoring a candidate of its own model family (simulated models,
    which have no family, are left out)."""
    from .judging.honest import self_preference_flags

    def named(aliases):  # the model that answers: an Azure deployment's or a gateway alias's `serves`
        return {a: getattr(spec.models[a], "base_model", None) or spec.models[a].model
                for a in aliases if a in spec.models and spec.models[a].provider != "sim"}
    roles = spec.roles
    judges = named(list(roles.judges) or ([roles.judge] if roles.judge else []))
    candidates = named(roles.candidates)
    if getattr(roles, "baseline", None):  # the generic pairwise benchmark's baseline model
        candidates.update(named([roles.baseline]))
    if isinstance(summary.get("baseline_model"), str):  # a pairwise benchmark's fixed baseline answers
        candidates["baseline"] = summary["baseline_model"]
    found = self_preference_flags(judges, candidates)
    if found:
        summary["flags"] = list(summary.get("flags") or []) + found


def _add_holm(summary: dict[str, Any], options: Any) -> None:
    """Holm's adjustment over the run's comparisons for a benchmark whose results did not make it
    (their comparisons carry ``p_value``; GuessBench, MMIE and MMGenBench now make it themselves,
    for their printed tables): the rows are shared with the comparisons table, so the CSV and the
    report get it too."""
    from .judging.multiplicity import adjust_summary

    adjust_summary(summary, bool(getattr(options, "holm_adjust", True)))
