"""A batch created but not recorded (issue 24 point 1): requests created at the server when a run is
killed between a batch's create request and its record, then run again, for OpenAI, Azure,
Anthropic and Gemini through their SDKs against the simulator.

For each API and kill point, 92 judge requests (the quickstart's count) in one wave: the first run
dies at the point (the create call raises CancelledError there; ``sent``: the simulator created the
batch and holds its reply back), the second run, on the same cache, makes the same calls.  Printed:
batches created and requests submitted at the server over both runs, and how many requests were
submitted twice; with ``--without-adoption`` the restarted run does not look for the orphan (what
judgekit did before issue 24: the batch layer's start skips the lookup).

    .venv/bin/python perf/batch_orphans.py [--without-adoption] [--apis openai,azure,anthropic,gemini]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.cache.store import CacheStore  # noqa: E402
from judgekit.config import ModelSpec  # noqa: E402
from judgekit.engine import Engine  # noqa: E402
from judgekit.engine.batching import BatchLayer  # noqa: E402
from judgekit.sim import SimConfig, SimServer  # noqa: E402
from judgekit.sim.anthropic_batch_api import AnthropicBatchSim  # noqa: E402
from judgekit.sim.gemini_batch_api import GeminiBatchSim  # noqa: E402
from judgekit.sim.openai_batch_api import OpenAIBatchSim  # noqa: E402
from judgekit.types import ChatRequest, GenParams, Message  # noqa: E402

N = 92
KEY_ENV = "JK_PERF_ORPHAN_KEY"
HANDLERS = {"openai": (OpenAIBatchSim, "create_batch"), "azure": (OpenAIBatchSim, "create_batch"),
            "anthropic": (AnthropicBatchSim, "create_batch"), "gemini": (GeminiBatchSim, "create")}


def spec(api: str, server: SimServer) -> ModelSpec:
    common = dict(api_key_env=KEY_ENV, batch=True, batch_linger_s=0.05, batch_poll_s=0.02)
    return {"openai": lambda: ModelSpec(provider="openai", model="gpt-4o", base_url=server.base_url, **common),
            "azure": lambda: ModelSpec(provider="azure", model="team-4o", serves="gpt-4o", base_url=server.root_url,
                                       api_version="2024-10-21", **common),
            "anthropic": lambda: ModelSpec(provider="anthropic", model="claude-sonnet-4-6",
                                           base_url=server.root_url, **common),
            "gemini": lambda: ModelSpec(provider="gemini", model="gemini-2.0-flash", base_url=server.root_url,
                                        **common)}[api]()


def reqs() -> list[ChatRequest]:
    return [ChatRequest("j", (Message.user(f"Question {i}: which answer is more vivid?"),), GenParams(max_tokens=60),
                        stage="judge", item_id=str(i)) for i in range(N)]


async def one(api: str, point: str) -> tuple[int, int]:
    cls, name = HANDLERS[api]
    orig_handler = getattr(cls, name)
    created, release, seen = asyncio.Event(), asyncio.Event(), [0]

    async def handler(sim_self, request, *args):
        resp = await orig_handler(sim_self, request, *args)
        seen[0] += 1
        if point == "sent" and seen[0] == 1:
            created.set()
            await release.wait()
        return resp

    setattr(cls, name, handler)
    server = SimServer(SimConfig(batch_turnaround_s=0.3, azure_deployments={"team-4o": "gpt-4o"}))
    await server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "c.duckdb"
            cache = await CacheStore.open(path, run_id="run1")
            e = Engine({"j": spec(api, server)}, cache)
            await e.start()
            client = e.providers["j"]._client
            if api == "anthropic":
                obj, attr = client, "post"  # submit_batch posts the batch itself
            elif api == "gemini":
                obj, attr = client.aio.batches, "create"
            else:
                obj, attr = client.batches, "create"
            orig = getattr(obj, attr)

            async def dying(*a, **kw):
                if point == "sent":
                    task = asyncio.ensure_future(orig(*a, **kw))
                    await created.wait()
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                else:
                    await orig(*a, **kw)
                raise asyncio.CancelledError

            setattr(obj, attr, dying)
            await asyncio.gather(*(e.call(r) for r in reqs()))
            await e.close()
            await cache.close()
            cache = await CacheStore.open(path, run_id="run2")
            e = Engine({"j": spec(api, server)}, cache)
            await e.start()
            rs = await asyncio.gather(*(e.call(r) for r in reqs()))
            assert all(r.ok for r in rs)
            await e.close()
            await cache.close()
        st = server.stats()
        return st["batches_created"], st["batch_requests_submitted"]
    finally:
        release.set()
        setattr(cls, name, orig_handler)
        await server.stop()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--without-adoption", action="store_true")
    ap.add_argument("--apis", default="openai,azure,anthropic,gemini")
    args = ap.parse_args()
    os.environ[KEY_ENV] = "sk-perf-0123456789"
    if args.without_adoption:
        async def skip(self, by_endpoint):
            return None

        BatchLayer._adopt_orphans = skip  # type: ignore[method-assign]
    print(f"{'api':<10} {'kill point':<10} {'batches':>7} {'requests':>8} {'twice':>5}")
    for api in args.apis.split(","):
        for point in ("sent", "answered"):
            batches, submitted = await one(api, point)
            print(f"{api:<10} {point:<10} {batches:>7} {submitted:>8} {submitted - N:>5}")


if __name__ == "__main__":
    asyncio.run(main())
