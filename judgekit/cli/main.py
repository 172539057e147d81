"""``judgekit``: the command line.  A thin layer over library calls, one ``asyncio.run`` each.

Exit codes: 0 done, 1 failed items remain (listed), 2 bad spec or input, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import math
import os
import shlex
import sys
from pathlib import Path

import click

from ..errors import CacheLockedError, CacheSchemaError, DataError, JudgekitError, SpecError, UsageError
from ..plural import plural

__all__ = ["main", "cli"]


class FiniteFloat(click.FloatRange):
    """A number option: a float within the range given (none: any), never nan, inf or -inf (every
    float option takes this type; tests/cli/test_cli_finite.py walks them)."""

    name = "number"

    def convert(self, value, param, ctx):
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)

    def _describe_range(self) -> str:  # (click's help would say "x<=None" for no bounds)
        return "" if self.min is None and self.max is None else super()._describe_range()


_MAX_COST_RUN = ("USD cap on what the run spends: ask (or refuse) when the estimate's bound is above it; launch "
                 "no call whose worst case (input + max output at the model's price) would pass it. Later runs "
                 "into the same --out keep it")
_MAX_COST_ESTIMATE = ("USD cap to check the estimate against: says whether its bound (every call writing "
                      "max_tokens) is above it, i.e. whether `judgekit run --max-cost` would ask before starting")


def _spec_options(f=None, *, max_cost_help: str = _MAX_COST_RUN):
    """Options every spec-taking command shares (``--max-cost`` worded for the command)."""
    if f is None:
        return functools.partial(_spec_options, max_cost_help=max_cost_help)
    for deco in reversed([
        click.argument("spec_or_name"),
        click.option("--cache", "cache_path", type=click.Path(path_type=Path), default=None,
                     help="DuckDB cache file [default: $JUDGEKIT_CACHE or judgekit-out/cache.duckdb]"),
        click.option("--limit", type=click.IntRange(min=1), default=None, help="only the first N items"),
        click.option("--max-cost", "max_cost", type=FiniteFloat(min=0), default=None,
                     help=max_cost_help),
        click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                     help="override a spec value, e.g. --set models.judge.limits.max_concurrency=8"),
        click.option("--batch", is_flag=True,
                     help="batch mode for every model whose provider has a batch API (OpenAI, Azure, ...): half "
                          "price, answers as the provider's batches finish; a killed run started again waits on "
                          "its batches instead of submitting them again"),
    ]):
        f = deco(f)
    return f


def _errors(f):
    """Bad input -> exit 2 with the message; nothing else is swallowed."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except (SpecError, DataError, UsageError, CacheLockedError, CacheSchemaError) as e:
            click.echo(f"error: {_one_line(str(e))}", err=True)
            sys.exit(2)
        except JudgekitError as e:
            click.echo(f"error: {_one_line(str(e))}", err=True)
            sys.exit(1)
        except Exception as e:  # a full disk under any command (cache prune, export...): one line
            from ..errors import storage_problem

            why = storage_problem(e)
            if why is None:
                raise
            click.echo(f"error: {getattr(e, 'filename', None) or 'a write'}: {why.lower()} (the disk is full)", err=True)
            sys.exit(1)

    return wrapper


def _one_line(message: str) -> str:
    """A message as one line: its lines joined with '; ' (a user error is one line)."""
    parts = [p.strip() for p in message.splitlines() if p.strip()]
    return "; ".join(parts) if parts else message.strip()


def _folder_for(path: Path, option: str) -> None:
    """Make the folder ``path`` (and its parents) now, so an unusable --cache or --out is a
    one-line error before anything runs rather than a traceback after the calls were paid."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot make this folder ({e.strerror or e})") from None


def _readable_folder(path: Path, option: str) -> None:
    """A folder that may not exist yet (nothing is made), but whose path does not run into a file."""
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                raise UsageError(f"{option} {path}: not a folder ({p} is a file)")
            return


class _OneLineErrors(click.Group):
    """click's own usage errors (an unknown option, a value out of range, a missing argument)
    as one line, exit 2, like every other user error (click prints usage, a hint and the error)."""

    def main(self, *args, standalone_mode: bool = True, **kwargs):
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as e:
            where = f"{e.ctx.command_path}: " if getattr(e, "ctx", None) is not None else ""
            hint = " (see --help)" if isinstance(e, click.UsageError) else ""
            click.echo(f"error: {where}{_one_line(e.format_message())}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.Abort as e:
            if isinstance(e.__context__, KeyboardInterrupt):  # Ctrl-C or SIGTERM (see main)
                click.echo("interrupted", err=True)
                sys.exit(130)
            click.echo("aborted", err=True)
            sys.exit(1)
        except OSError as e:  # output piped into `head`: stop quietly, as click does
            if e.errno != errno.EPIPE:
                raise
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (the Python docs' recipe)
            sys.exit(1)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="judgekit")
def cli() -> None:
    """judgekit: fast, resumable, cost-bounded judge-heavy evaluations of multimodal models."""


@cli.command()
@_spec_options()
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="results folder [default: judgekit-out/<spec name>]")
@click.option("--yes", "-y", is_flag=True, help="do not ask before spending above --max-cost")
@click.option("--grace", "grace_s", type=FiniteFloat(min=0, max=3600), default=None, metavar="SECONDS",
              help="after Ctrl-C, SIGTERM or the cost cap: how long the calls in flight have to land and be kept "
                   "(paid for); a second Ctrl-C abandons them at once [default: the spec's grace_s, else 15]")
@_errors
def run(spec_or_name, cache_path, limit, max_cost, overrides, batch, out_dir, yes, grace_s):
    """Run a spec (a TOML file, or the name of a shipped runner).  Re-running resumes: finished
    calls come from the cache, failed ones are retried."""
    ui, spec = _ui_and_spec(spec_or_name, overrides)
    from ..runner import RunOptions, default_cache_path, run_spec
    _folder_for((cache_path or default_cache_path()).parent, "--cache")
    _folder_for(out_dir or Path("judgekit-out") / spec.name, "--out")
    opts = RunOptions(out_dir=out_dir, cache_path=cache_path, limit=limit, max_cost_usd=max_cost, yes=yes,
                      interactive=sys.stdin.isatty() and sys.stdout.isatty(), handle_signals=True, batch=batch,
                      grace_s=grace_s)
    outcome = asyncio.run(run_spec(spec, opts, ui))
    resume = (_resume_command(spec_or_name, overrides, cache_path, out_dir, limit, yes, outcome, batch, grace_s)
              if outcome.exit_code in (1, 130) else None)
    if outcome.storage_full and resume:  # a full disk: one line, the path and how to go on
        click.echo(f"{_one_line(outcome.message)}, then resume with: {resume}", err=True)
        sys.exit(outcome.exit_code)
    if outcome.message:
        click.echo(outcome.message, err=outcome.exit_code != 0)
    if resume:
        click.echo(f"resume with: {resume}", err=True)
    sys.exit(outcome.exit_code)


def _ui_and_spec(spec_or_name, overrides):
    """The console and the loaded spec, with "loading the spec" on screen at once (importing the
    runner takes a second) and gone before an error is printed."""
    from .ui import ConsoleUI

    ui = ConsoleUI()
    ui.status("loading the spec")
    try:
        from ..config import load_spec
        from .. import runner  # noqa: F401  (the slow import, under the status line)

        return ui, load_spec(spec_or_name, overrides)
    finally:
        ui.status(None)


def _resume_command(spec_or_name, overrides, cache_path, out_dir, limit, yes, outcome, batch=False,
                    grace_s: float | None = None) -> str:
    """The command that resumes a run as it was started: the same spec, overrides, cache, results
    folder and limit, and the cap it ran under (given, kept from an earlier run or the spec's)."""
    from ..engine.budget import cap_arg

    cap = outcome.max_cost_usd
    return "judgekit run " + shlex.join([spec_or_name, *sum((["--set", o] for o in overrides), [])]
                                        + (["--cache", str(cache_path)] if cache_path else [])
                                        + (["--out", str(out_dir)] if out_dir else [])
                                        + (["--limit", str(limit)] if limit else [])
                                        + (["--max-cost", cap_arg(cap)] if cap is not None else [])
                                        + (["--batch"] if batch else [])
                                        + (["--grace", f"{grace_s:g}"] if grace_s is not None else [])
                                        + (["--yes"] if yes else []))


@cli.command()
@_spec_options(max_cost_help=_MAX_COST_ESTIMATE)
@_errors
def estimate(spec_or_name, cache_path, limit, max_cost, overrides, batch):
    """Estimate calls, tokens and dollars per stage and model, without making any call."""
    ui, spec = _ui_and_spec(spec_or_name, overrides)
    from ..runner import RunOptions, default_cache_path, estimate_spec
    _readable_folder((cache_path or default_cache_path()).parent, "--cache")  # a missing cache is none yet: nothing is made
    outcome = asyncio.run(estimate_spec(spec, RunOptions(cache_path=cache_path, limit=limit, max_cost_usd=max_cost,
                                                         batch=batch), ui))
    if max_cost is not None and outcome.estimate is not None:
        click.echo(_cap_check(outcome.estimate, max_cost))


def _cap_check(est, cap: float) -> str:
    """``estimate --max-cost``: the estimate's bound against the cap, as ``run`` would judge it."""
    from ..engine.budget import cap_text, usd

    bound = est.total_max_usd
    if bound > cap:
        return (f"--max-cost {cap_text(cap)}: the estimate's bound ({usd(bound)}) is above it; `judgekit run` "
                "would ask before starting (or refuse without a terminal; --yes runs up to the cap)")
    return f"--max-cost {cap_text(cap)}: the estimate's bound ({usd(bound)}) is within it"


@cli.command(name="list")
def list_() -> None:
    """List the shipped runners (usable as `judgekit run NAME`), the benchmarks and the installed
    benchmark plugins."""
    import shutil

    from ..benchmarks.base import BENCHMARKS
    from ..benchmarks.plugins import installed_plugins
    from ..config import list_runners, load_spec
    from ..local.process import WORKER_PACKAGE, install_command
    from ..resources import runners_dir

    width = shutil.get_terminal_size((100, 24)).columns
    runners = list_runners()
    rows = []
    for name, desc in runners.items():
        try:
            local = any(m.provider == "local" for m in load_spec(name).models.values())
        except SpecError:
            local = False
        rows.append((name, "local" if local else "", desc))
    click.echo(f"runners ({runners_dir()}):")
    for line in _aligned([("name", "needs", "description"), *rows], width):
        click.echo(line)
    if any(needs for _, needs, _ in rows):
        legend = (f"runs models in the local worker ({WORKER_PACKAGE}: open VLMs, diffusion, image encoders); "
                  "install it from the judgekit repository with:")
        for line in _aligned([("local:", legend), ("", install_command())], width):
            click.echo(line)
    click.echo("benchmarks:")
    for name in sorted(BENCHMARKS):
        click.echo(f"  {name}")
    plugins = installed_plugins()  # packages' entry points in the group judgekit.benchmarks
    click.echo("installed benchmark plugins:" + ("" if plugins else " none"))
    for line in _aligned([(name, str(value)) for name, value in sorted(plugins.items())], width):
        click.echo(line)


def _aligned(rows: list[tuple[str, ...]], width: int) -> list[str]:
    """``rows`` as columns two spaces apart, indented two, each column as wide as its longest
    cell; the last column wrapped to ``width`` under itself (never narrower than 30)."""
    import textwrap

    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)] if rows else []
    indent = 2 + sum(w + 2 for w in widths)
    out = []
    for r in rows:
        head = "  " + "".join(f"{c:<{w}}  " for c, w in zip(r, widths))
        text = textwrap.wrap(r[-1], max(30, width - indent - 1), break_on_hyphens=False) or [""]
        out.append((head + text[0]).rstrip())
        out += [" " * indent + t for t in text[1:]]
    return out


@cli.command()
@click.argument("run_dirs", nargs=-1, required=True, metavar="RUN_DIR...",
                type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="where to write the leaderboard page [default: ./leaderboard.html]; diffs.csv and "
                   "diffs.json go beside it")
@click.option("--baseline", "baseline", type=click.Path(path_type=Path), default=None, metavar="RUN_DIR",
              help="compare each other run of its benchmark against this one [default: every pair of runs of a "
                   "benchmark, in the order given]")
@click.option("--top", "top", type=click.IntRange(min=0), default=10, show_default=True,
              help="changed items printed per pair of runs (all are in diffs.csv and on the page)")
@_errors
def report(run_dirs, out, baseline, top):
    """Rebuild each RUN_DIR's report.html from its report.json (no cache needed).  Several runs
    (or --out): also a leaderboard page (per benchmark, a row per run and candidate) linking each
    run's page, and, for runs of the same benchmark, their item-level differences: which items
    changed verdict or score and by how much, with the paired difference and its interval on the
    shared items (a table here, diffs.csv/diffs.json and a section of the page).  Of several paths
    (judgekit-out/*), a file or a folder without report.json is skipped with a line saying so."""
    from ..report.compare import compare_runs, pick_baseline
    from ..report.leaderboard import load_runs, run_label, wants_leaderboard, write_leaderboard
    from ..report.write import rebuild_report

    skipped: list[str] = []
    runs = load_runs(run_dirs, skipped)  # every folder checked before anything is written
    base = pick_baseline(runs, baseline)
    for line in skipped:  # of several paths (a glob), what is no run folder: the cache file beside them
        click.echo(line, err=True)
    for run in runs:
        click.echo(str(rebuild_report(run.path)))
    if wants_leaderboard(runs) or out is not None:
        run_label(runs)
        comparison = compare_runs(runs, base)
        for line in comparison.skipped:
            click.echo(line, err=True)
        if comparison.pairs:
            from rich.console import Console

            from .compare_view import comparison_renderables

            console = Console(highlight=False)
            for part in comparison_renderables(comparison, top):
                console.print(part)
        page = write_leaderboard(runs, out or Path("leaderboard.html"), comparison)
        click.echo(f"leaderboard: {page}")
        if comparison.pairs:
            click.echo(f"item differences: {page.parent / 'diffs.csv'}, {page.parent / 'diffs.json'}")


@cli.command()
@click.argument("path", required=False, type=click.Path(path_type=Path), metavar="[RUN_DIR]")
@click.option("--print", "print_only", is_flag=True, help="print the report's path and file:// URL; open nothing")
@click.option("--serve", is_flag=True,
              help="serve RUN_DIR (default: judgekit-out) on localhost: an index of its runs linking to each report")
@click.option("--port", default=7600, show_default=True, type=click.IntRange(0, 65535),
              help="with --serve: the port (0: a free one)")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="with --serve: the address to listen on (0.0.0.0 shows your results to the whole network)")
@_errors
def view(path, print_only, serve, port, host):
    """Open a run's report.html in the browser: RUN_DIR's, or the latest run's in judgekit-out/.
    Without a browser (no display, or --print) its path and file:// URL are printed.  --serve
    serves a folder of runs on localhost until Ctrl-C."""
    from ..report import view as v

    if serve:
        server = v.make_server(path if path is not None else v.DEFAULT_ROOT, host, port)
        shown_host, shown_port = server.server_address[:2]
        n = len(v.list_runs(path if path is not None else v.DEFAULT_ROOT))
        click.echo(f"serving {n} run{'s' if n != 1 else ''} of {path or v.DEFAULT_ROOT} at "
                   f"http://{shown_host}:{shown_port}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        click.echo("stopped")
        return
    report = v.find_report(path)
    opened, url = v.open_report(report, print_only=print_only)
    if opened:
        click.echo(f"opened {url}")
    else:
        click.echo(str(report))
        click.echo(url)


@cli.group()
def sim() -> None:
    """The OpenAI-compatible simulator (for tests, demos and benchmarks)."""


@sim.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on (0.0.0.0: every interface)")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="port to listen on (0: a free one, said in the line printed once it listens)")
@click.option("--seed", default=0, show_default=True, type=int,
              help="seed of every simulated answer, verdict and fault: the same seed, the same replies")
@click.option("--latency-ms", default=0.0, show_default=True, type=FiniteFloat(), help="mean delay before each answer")
@click.option("--latency-jitter-ms", default=0.0, show_default=True, type=FiniteFloat(),
              help="spread of the delay, +/- around --latency-ms")
@click.option("--rpm", default=None, type=int, help="requests/min per model, enforced with 429s")
@click.option("--tpm", default=None, type=int, help="tokens/min per model, enforced with 429s")
@click.option("--error-rate", default=0.0, type=FiniteFloat(), help="share of requests answered 5xx")
@click.option("--hang-rate", default=0.0, type=FiniteFloat(), help="share of requests that hang")
@click.option("--garbage-rate", default=0.0, type=FiniteFloat(), help="share of judge replies that cannot be parsed")
@click.option("--api-key", "api_keys", multiple=True, help="accept only these keys (repeatable)")
@click.option("--batch-turnaround-s", default=5.0, show_default=True, type=FiniteFloat(), metavar="SECONDS",
              help="how long a batch job (OpenAI, Azure, Anthropic) takes from creation to its end")
@click.option("--batch-request-fail-rate", default=0.0, type=FiniteFloat(),
              help="share of the requests inside batches answered with a server error")
@click.option("--batch-expire-rate", default=0.0, type=FiniteFloat(),
              help="share of batch jobs that stall halfway and expire at the end of the turnaround")
@click.option("--benchmark", "benchmarks", multiple=True, metavar="NAME",
              help="a plugin benchmark whose simulated behaviour to add (repeatable; every built-in one is on)")
@_errors
def serve(host, port, seed, latency_ms, latency_jitter_ms, rpm, tpm, error_rate, hang_rate, garbage_rate, api_keys,
          batch_turnaround_s, batch_request_fail_rate, batch_expire_rate, benchmarks):
    """Serve the simulator until Ctrl-C.  Point any OpenAI client at http://HOST:PORT/v1 (Anthropic's
    and Gemini's SDKs at http://HOST:PORT); it serves their batch APIs too.  It answers every built-in
    benchmark's requests; --benchmark adds a plugin benchmark's simulated judge."""
    from pydantic import ValidationError

    from ..config import validation_problems
    from ..sim import SimConfig
    from ..sim.server import serve_forever

    try:
        config = SimConfig(seed=seed, latency_ms=latency_ms, latency_jitter_ms=latency_jitter_ms, rpm=rpm, tpm=tpm,
                           error_rate=error_rate, hang_rate=hang_rate, garbage_rate=garbage_rate,
                           api_keys=list(api_keys) or None, batch_turnaround_s=batch_turnaround_s,
                           batch_request_fail_rate=batch_request_fail_rate, batch_expire_rate=batch_expire_rate,
                           benchmarks=list(benchmarks))
    except ValidationError as e:
        raise UsageError("; ".join(f"--{p.replace('_', '-')}" for p in validation_problems(e))) from None
    try:  # it says where it listens once it does (the port may be 0: a free one)
        serve_forever(config, host, port)
    except KeyboardInterrupt:
        pass
    except OSError as e:  # the address: unknown host, port taken or not allowed
        raise UsageError(f"cannot serve on {host}:{port}: {e.strerror or e}") from None


@cli.group()
def guessbench() -> None:
    """GuessBench tools (making new build sets)."""


@guessbench.command()
@click.argument("answer")
@click.option("--seed", default=0, show_default=True, type=int, help="picks the revealed letters")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="also write Hint_1.txt, Hint_2.txt, Hint_3.txt and Answer.txt into this set folder")
@_errors
def hints(answer, seed, out_dir):
    """Print the three hints of ANSWER as GuessBench builds them (Hint_2 reveals ceil(N/8) letters,
    Hint_3 ceil(N/4), N = letters without spaces)."""
    from ..benchmarks.guessbench.hints import generate_hints

    try:
        texts = generate_hints(answer, seed)
    except ValueError as e:
        raise SpecError(f"ANSWER: {e}") from None
    for i, text in enumerate(texts, 1):
        click.echo(f"--- Hint_{i}.txt")
        click.echo(text)
    if out_dir is not None:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            for i, text in enumerate(texts, 1):
                (out_dir / f"Hint_{i}.txt").write_text(text + "\n", encoding="utf-8")
            (out_dir / "Answer.txt").write_text(answer.strip() + "\n", encoding="utf-8")
        except OSError as e:
            raise UsageError(f"--out {out_dir}: cannot write the set there ({e.strerror or e})") from None
        click.echo(f"wrote {out_dir}/Hint_1.txt .. Hint_3.txt and Answer.txt (add 1.png, 2.png, 3.png)")


@cli.group()
def cache() -> None:
    """Inspect and maintain the response cache."""


def _cache_option(f):
    return click.option("--cache", "cache_path", type=click.Path(path_type=Path), default=None,
                        help="cache file [default: $JUDGEKIT_CACHE or judgekit-out/cache.duckdb]")(f)


def _cache_file(cache_path: Path | None) -> Path:
    from ..runner import default_cache_path

    p = cache_path or default_cache_path()
    if not p.exists():
        raise SpecError(f"{p}: no cache file there (use --cache PATH)")
    return p


@cache.command()
@_cache_option
@click.option("--json", "as_json", is_flag=True, help="everything as one JSON object (for scripts), not tables")
@_errors
def stats(cache_path, as_json):
    """What the cache holds: calls per stage and model with their tokens and dollars, runs,
    failures, provider batches, images.  Works while a run holds the cache (it reads a copy)."""
    import json

    from ..cache.admin import stats as cache_stats

    st = cache_stats(_cache_file(cache_path))
    if as_json:
        click.echo(json.dumps(st, indent=2, default=str))
        return
    from rich.console import Console

    from .stats_view import stats_renderables

    console = Console(highlight=False)
    for part in stats_renderables(st):
        console.print(part)


@cache.command()
@_cache_option
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default="jsonl", show_default=True,
              help="file format: JSON lines (one row a line), CSV with a header, or Parquet")
@click.option("--table", default="responses", show_default=True, help="responses, attempts, runs or a result table")
@_errors
def export(cache_path, out, fmt, table):
    """Export a table of the cache to a file."""
    from ..cache.admin import export as cache_export

    n = cache_export(_cache_file(cache_path), out, fmt, table=table)
    click.echo(f"wrote {out}" + (f" ({plural(n, 'row')})" if isinstance(n, int) else ""))


@cache.command()
@_cache_option
@click.option("--older-than-days", type=FiniteFloat(), default=None, metavar="DAYS",
              help="only rows written more than DAYS days ago (fractions allowed: 0.5 is 12 hours)")
@click.option("--model", default=None, metavar="NAME",
              help="only rows of this model, as the provider names it (see `judgekit cache stats`)")
@click.option("--stage", default=None, metavar="NAME",
              help="only rows of this stage, e.g. candidate, pairwise, vfs (see `judgekit cache stats`)")
@click.option("--failures", is_flag=True,
              help="prune the failed-attempt records instead of responses (no filter: all of them)")
@click.option("--dry-run", is_flag=True, help="count the rows that would go; delete nothing")
@_errors
def prune(cache_path, older_than_days, model, stage, failures, dry_run):
    """Delete cached responses (or failure records) matching every filter given.  Responses need at
    least one filter (a bare prune never empties the cache); the next run makes those calls again."""
    from ..cache.admin import prune as cache_prune

    n = cache_prune(_cache_file(cache_path), older_than_days=older_than_days, model=model, stage=stage,
                    failures=failures, dry_run=dry_run)
    click.echo(f"{'would remove' if dry_run else 'removed'} {plural(n, 'row')}")


@cli.group()
def batches() -> None:
    """Provider batches a run left live (see `judgekit cache stats` for all of them)."""


@batches.command()
@_cache_option
@click.argument("run_id", required=False)
@click.option("--spec", "spec_name", default=None, metavar="NAME",
              help="the batches of every run of this spec (its name, a spec file or a shipped runner)")
@_errors
def cancel(cache_path, run_id, spec_name):
    """Cancel live batches at their provider: those of RUN_ID, of the runs of --spec NAME, or all of
    them.  What a batch answered before it stopped is collected by the next run, which asks the
    rest again."""
    from ..engine.batch_cancel import cancel_batches

    if run_id is not None and spec_name is not None:
        raise UsageError("give RUN_ID or --spec NAME, not both")
    if spec_name is not None:
        spec_name = _spec_name(spec_name)
    results = asyncio.run(cancel_batches(_cache_file(cache_path), run_id=run_id, spec_name=spec_name))
    if not results:
        click.echo("no live batches" + (f" of run {run_id}" if run_id else f" of spec {spec_name!r}" if spec_name else ""))
        return
    failed = 0
    for r in results:
        if r.error and r.state != "failed":
            failed += 1
            click.echo(f"{r.batch_id} ({r.alias}, run {r.run_id}, {r.requests:,} requests): not cancelled: {r.error}",
                       err=True)
        else:
            click.echo(f"{r.batch_id} ({r.alias}, run {r.run_id}, {r.requests:,} requests): {r.state}"
                       + (f" ({r.error})" if r.error else ""))
    if failed:
        sys.exit(1)


def _spec_name(value: str) -> str:
    """The spec name of ``--spec``: a spec file's or runner's ``name``, else the value as written."""
    from ..config import load_spec

    try:
        return load_spec(value).name
    except SpecError:
        return value


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    # SIGTERM, like Ctrl-C, ends the command as "interrupted" (130) from the first moment, not
    # only once a run has installed its own handlers: a signal during imports, spec loading or
    # the cache's opening must neither kill the process mid-write nor print a traceback
    import signal

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        cli()
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
