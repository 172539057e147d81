"""Batch limits and causes (issue 24, points 2, 3 and 5), measured through the real SDKs:

- point 2: a wave of 24 requests, three times the enqueued-token limit of an independent fake of
  OpenAI's Files + Batches API (tests/engine/test_batch_queue_fake_openai.py: its own token count,
  ``token_limit_exceeded`` as OpenAI words it), with the default ``batch_attempts = 2``: requests
  answered in batch mode, the batches created (requests each) and how many were refused;
- point 3: one request whose batches leave it unanswered, against the simulator: Anthropic
  ``errored`` api_error, a failed Gemini batch operation, an expired OpenAI batch: the call's error
  kind and text, the cache's failure kinds, summary.json's ``batch.unanswered``; the console's
  failed-items list with ``[invalid_request]`` in it; a batch create's 429 in the live view's count;
- point 5: live batches listed in ``judgekit cache stats``'s table.

    .venv/bin/python perf/batch_limits.py [--before /tmp/old-checkout]

``--before`` runs the same from another checkout (PYTHONPATH), e.g. ``git archive`` of an older
commit, for a before/after figure.  Under a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
KEY_ENV = "JK_PERF_BATCH_KEY"


async def queue_case() -> str:
    from aiohttp import web
    from test_batch_queue_fake_openai import N, FakeOpenAIBatches, req, tokens

    from judgekit.cache.store import CacheStore
    from judgekit.config import ModelSpec
    from judgekit.engine import Engine

    wave = sum(tokens({"messages": [{"role": "system", "content": m.messages[0].text()},
                                    {"role": "user", "content": m.messages[1].text()}]}) for m in map(req, range(N)))
    server = FakeOpenAIBatches(wave // 3)
    runner = web.AppRunner(server.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    spec = ModelSpec(provider="openai", model="gpt-4o", base_url=f"http://127.0.0.1:{port}/v1", api_key_env=KEY_ENV,
                     batch=True, batch_linger_s=0.05, batch_poll_s=0.02)
    with tempfile.TemporaryDirectory() as d:
        cache = await CacheStore.open(os.path.join(d, "c.duckdb"), run_id="r")
        e = Engine({"j": spec}, cache)
        await e.start()
        rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
        await e.close()
        await cache.close()
    await runner.cleanup()
    ok = sum(r.ok for r in rs)
    line = (f"point 2: wave of {N} requests = 3x the fake's enqueued-token limit ({server.queue:,} tokens): "
            f"{ok}/{N} answered in batch mode; batches created (requests each) {server.created}, refused "
            f"{server.failed}")
    return line + ("" if ok else f"; the failure: {rs[0].error}")


async def cause_case(api: str) -> str:
    from judgekit.cache.store import CacheStore
    from judgekit.config import ModelSpec
    from judgekit.engine import Engine
    from judgekit.sim import SimConfig, SimServer
    from judgekit.types import ChatRequest, GenParams, Message

    sim = {"anthropic": dict(batch_request_fail_rate=1.0), "gemini": dict(batch_fail_rate=1.0),
           "openai": dict(batch_expire_rate=1.0, batch_expire_after_s=0.05)}[api]
    server = SimServer(SimConfig(batch_turnaround_s=0.05, **sim))
    await server.start()
    base = dict(api_key_env=KEY_ENV, batch=True, batch_linger_s=0.02, batch_poll_s=0.02)
    spec = {"anthropic": lambda: ModelSpec(provider="anthropic", model="claude-sonnet-4-6", base_url=server.root_url,
                                           **base),
            "gemini": lambda: ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.root_url, **base),
            "openai": lambda: ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, **base)}[api]()
    with tempfile.TemporaryDirectory() as d:
        cache = await CacheStore.open(os.path.join(d, "c.duckdb"), run_id="r")
        e = Engine({"j": spec}, cache)
        await e.start()
        r = await e.call(ChatRequest("j", (Message.user("Which answer is better?"),), GenParams(max_tokens=40),
                                     stage="judge", item_id="0"))
        await e.close()
        kinds = await cache.failures_by_kind()
        await cache.close()
    await server.stop()
    unanswered = e.savings.as_dict()["batch"].get("unanswered", "(none)")
    return f"point 3, {api}: kind {r.error_kind}; cache kinds {kinds}; summary unanswered {unanswered}; {r.error}"


async def create_429() -> str:
    import judgekit.engine.engine as engine_mod
    import judgekit.providers as providers_mod
    from batch_fake import FakeBatchProvider, FakeBatchServer

    from judgekit.cache.store import CacheStore
    from judgekit.config import ModelSpec
    from judgekit.engine import Engine
    from judgekit.errors import RateLimited
    from judgekit.types import ChatRequest, GenParams, Message

    server = FakeBatchServer()
    engine_mod.create_provider = providers_mod.create_provider = lambda a, s: FakeBatchProvider(a, s, server)
    real, tries = FakeBatchProvider.submit_batch, []

    async def limited(self, items, **kw):
        tries.append(1)
        if len(tries) == 1:
            raise RateLimited("HTTP 429: too many batch creations", status=429, retry_after=0.01)
        return await real(self, items, **kw)

    FakeBatchProvider.submit_batch = limited
    with tempfile.TemporaryDirectory() as d:
        cache = await CacheStore.open(os.path.join(d, "c.duckdb"), run_id="r")
        e = Engine({"j": ModelSpec(provider="openai", model="gpt-4o", batch=True, batch_linger_s=0.02,
                                   batch_poll_s=0.01, limits={"max_attempts": 3})}, cache)
        await e.start()
        await e.call(ChatRequest("j", (Message.user("q"),), GenParams(max_tokens=9), stage="judge", item_id="0"))
        await e.close()
        await cache.close()
    return f"point 3, 429s: 1 create call answered 429; the live view's 429 count: {e.stats.stage('judge').rate_limited}"


def console_case() -> str:
    from rich.console import Console

    from judgekit.cli.ui import ConsoleUI

    import io

    console = Console(file=io.StringIO(), width=200, force_terminal=False, color_system=None, record=True)
    ConsoleUI(console).show_results(SimpleNamespace(
        result=None, stats=None, out_dir=None, summary=None,
        failed_items=["item 3: the Batch API refused this request: line 2: [invalid_request] bad"]))
    return f"point 3, console: '[invalid_request]' printed: {'[invalid_request]' in console.export_text()}"


def stats_case() -> str:
    from oneline import invoke
    from test_batch_causes_console import _cache_with_live_batches

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.duckdb"
        _cache_with_live_batches(path)
        out = invoke("cache", "stats", "--cache", path).output
    listed = sum(b in out for b in ("batch_live0", "batch_live1"))
    return f"point 5: live batches listed in `cache stats`'s table: {listed} of 2"


async def measure() -> None:
    import judgekit

    os.environ.setdefault(KEY_ENV, "sk-perf-batch-0123456789")
    print(f"judgekit from {Path(judgekit.__file__).parent}")
    print(await queue_case())
    for api in ("anthropic", "gemini", "openai"):
        print(await cause_case(api))
    print(await create_429())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="another checkout to measure (its folder goes first on PYTHONPATH)")
    args = ap.parse_args()
    if args.before:
        env = dict(os.environ, PYTHONPATH=args.before)
        sys.exit(subprocess.call([sys.executable, __file__], env=env))
    for sub in ("engine", "cli"):
        sys.path.insert(0, str(ROOT / "tests" / sub))
    asyncio.run(measure())
    print(console_case())
    print(stats_case())


if __name__ == "__main__":
    main()
