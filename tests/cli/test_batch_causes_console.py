"""What a person reads of batches: `judgekit cache stats` (the table, not only --json) lists every
live batch, and a failure's provider text such as ``[invalid_request]`` reaches the console whole
(rich would take it for markup and swallow it)."""

import asyncio
import datetime as dt
from types import SimpleNamespace

from oneline import invoke
from rich.console import Console

from judgekit.cache.batches import BatchRecord, BatchRequestRow
from judgekit.cache.store import CacheStore
from judgekit.cli.ui import ConsoleUI, savings_lines


def _cache_with_live_batches(path) -> None:
    async def go():
        store = await CacheStore.open(path, run_id="run-abc")
        now = dt.datetime(2026, 11, 28, 20, 0, 0)
        for i, (alias, word) in enumerate([("judge", "in_progress"), ("j[b]", "validating")]):
            rec = BatchRecord("openai", "https://api.openai.com/v1", f"batch_live{i}", "gpt-4o", alias, "run-abc",
                              "in_progress" if i == 0 else "submitted", word, 4 + i, i, 0, False, "",
                              created_at=now)
            store.record_batch(rec, [BatchRequestRow(f"{i}{k:063d}", "judge", str(k)) for k in range(4 + i)])
        done = BatchRecord("openai", "https://api.openai.com/v1", "batch_done", "gpt-4o", "judge", "run-abc", "ended",
                           "completed", 3, 3, 0, True, "", created_at=now)
        store.record_batch(done, [BatchRequestRow(f"d{k:063d}", "judge", str(k)) for k in range(3)])
        await store.close()

    asyncio.run(go())


def test_cache_stats_lists_every_live_batch_in_its_table(tmp_path):
    path = tmp_path / "c.duckdb"
    _cache_with_live_batches(path)
    r = invoke("cache", "stats", "--cache", path)
    assert r.exit_code == 0, r.output
    out = r.output
    assert "3 provider batches" in out and "2 live" in out
    assert "batch_live0" in out and "batch_live1" in out and "batch_done" not in out
    row = next(line for line in out.splitlines() if "batch_live1" in line)
    assert "j[b]" in row  # an alias is text, not markup
    assert row.split()[-4:] == ["5", "1", "2026-11-28", "20:00"]  # requests, answered, created
    assert "submitted" in row and "(validating)" in out and "run-abc" in row  # the state with the provider's word
    assert "in_progress" in next(line for line in out.splitlines() if "batch_live0" in line)


def _console() -> tuple[ConsoleUI, Console]:
    console = Console(width=200, force_terminal=False, color_system=None, record=True)
    return ConsoleUI(console), console


def test_a_failures_provider_text_is_printed_whole():
    ui, console = _console()
    failed = ["sim-weak item 3 order 0 (judge judge): model 'judge': no batch answered this request in 2 batches; "
              "the last one: validation error: the Batch API refused this request: line 2: [invalid_request] bad",
              "item 4: errored (api_error): [bold]not bold[/bold]"]
    outcome = SimpleNamespace(result=None, stats=None, failed_items=failed, out_dir=None, summary=None)
    ui.show_results(outcome)
    text = console.export_text()
    assert "line 2: [invalid_request] bad" in text and "[bold]not bold[/bold]" in text
    ui.note("the provider said: [invalid_request] no")
    assert "[invalid_request] no" in console.export_text()


def test_a_providers_text_keeps_its_colons():
    """rich turns ``:warning:`` into an emoji by default: a provider's message is shown as written."""
    ui, console = _console()
    outcome = SimpleNamespace(result=None, stats=None, out_dir=None, summary=None,
                              failed_items=["item 1: HTTP 400: quota :warning: for :smile: [x]"])
    ui.show_results(outcome)
    ui.note("the provider said: :thumbs_up: done")
    text = console.export_text()
    assert "quota :warning: for :smile: [x]" in text and ":thumbs_up: done" in text, text


def test_the_causes_of_unanswered_requests_are_summed_up():
    lines = savings_lines({"batch": {"calls": 10, "cost_usd": 0.1, "live_equivalent_usd": 0.2, "saved_usd": 0.1,
                                     "retried": 2, "unanswered": {"expired": 1, "errored (api_error)": 3}}})
    assert lines[1] == "batch: 4 requests left unanswered: errored (api_error) 3, expired 1"
