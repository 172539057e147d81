"""Calls to a model of a paid provider kind whose price is 0 (a price override of 0, as for a
self-hosted server) are free: the engine counts them by kind, live and batch alike, and the
closing line and the report page count them among the free calls, named by why ('price 0')."""

import asyncio

from judgekit.cache.store import CacheStore
from judgekit.cli.ui import _calls_made
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.report.run_report import _calls
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message

KEY_ENV = "JK_PRICE_ZERO_KEY"
ZERO = {"input_per_mtok": 0, "output_per_mtok": 0}


def _req(alias: str, i: int) -> ChatRequest:
    return ChatRequest(alias, (Message.user(f"Which answer to question {i} is better?"),), GenParams(max_tokens=40),
                       stage="judge", item_id=str(i))


async def test_calls_at_price_zero_are_counted_free(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-price-zero-0123456789")
    server = SimServer(SimConfig(batch_turnaround_s=0.05))
    await server.start()
    common = dict(provider="openai", base_url=server.base_url, api_key_env=KEY_ENV)
    models = {"paid": ModelSpec(model="gpt-4o", **common),
              "self-hosted": ModelSpec(model="Qwen/Qwen2-VL-72B-Instruct", price=ZERO, **common),
              "free-batch": ModelSpec(model="gpt-4o-mini", price=ZERO, batch=True, batch_linger_s=0.02,
                                      batch_poll_s=0.02, **common)}
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    e = Engine(models, cache)
    await e.start()
    try:
        rs = await asyncio.gather(*(e.call(_req(a, i)) for a in models for i in range(3)))
    finally:
        await e.close()
        await cache.close()
        await server.stop()
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok]
    assert e.price_zero == {"self-hosted", "free-batch"}
    assert cache.counters.made_by_provider == {"openai": 9}
    assert e.made_at_price_zero == {"openai": 6}  # the live and the batch calls at price 0
    assert e.stats.paid_calls == 9


def test_the_closing_line_and_the_page_name_price_zero_calls_free():
    assert _calls_made(9, {"openai": 9}, None, {"openai": 6}) == "calls made 9 (3 paid; 6 free: price 0 openai 6)"
    assert _calls_made(6, {"openai": 6}, None, {"openai": 6}) == "calls made 6 (price 0, free)"
    assert _calls_made(10, {"openai": 6, "sim": 4}, None, {"openai": 6}) == \
        "calls made 10 (simulator, price 0, free)"
    assert _calls_made(9, {"openai": 9}, None, None) == "paid calls 9"  # no price 0: as before
    summary = {"calls_by_provider": {"openai": 9, "sim": 2}, "calls_at_price_0": {"openai": 6}, "cache_hits": 1}
    assert _calls(summary) == "11 made (openai 3; free: sim 2, price 0 openai 6); 1 from the cache"
    summary["calls_at_price_0"] = {"openai": 9}
    assert _calls(summary) == "11 made, all free (sim 2, price 0 openai 9); 1 from the cache"
