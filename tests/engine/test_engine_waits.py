"""Waits: which reset a 429 waits for, that every wait is bounded, that every wait ends when the run
stops, and that the live display says why a bucket waits.  Servers answer in the real APIs' shapes
(the simulator's options, or a tiny server where the simulator has no such shape), through the
official SDKs."""

from __future__ import annotations

import asyncio
import math

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as hs

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import NOT_RUN, Engine, RunStopped
from judgekit.engine.limits import Bucket
from judgekit.engine.retry import MAX_SERVER_WAIT_S, RetryWait, wait_reason
from judgekit.errors import RateLimited, TransientError
from judgekit.providers.base import exhausted_limits, parse_duration, retry_after_from_headers
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, Message


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "cache.duckdb", run_id="test")
    yield store
    await store.close()


def req(i, alias="a", max_tokens=32):
    return ChatRequest(alias, (Message.user(f"question {i}"),), GenParams(max_tokens=max_tokens),
                       stage="candidate", item_id=str(i))


class RecordingWait(RetryWait):
    """The engine's retry policy, remembering every wait it chose."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.chosen: list[float] = []

    def wait_for(self, err, attempt):
        w = super().wait_for(err, attempt)
        self.chosen.append(w)
        return w


async def until(cond, what: str, limit_s: float = 20.0) -> None:
    """Poll ``cond`` (no timed assertion: a generous limit only turns a hang into a failure)."""
    for _ in range(int(limit_s / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never happened: {what}")


# ------------------------------------------------------------------------------- which reset


def test_the_reset_of_the_limit_that_was_hit():
    h = {"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "120ms",
         "x-ratelimit-remaining-requests": "12", "x-ratelimit-remaining-tokens": "0"}
    assert retry_after_from_headers(h) == 0.12  # tokens ran out: never the 6 minutes of requests
    assert retry_after_from_headers(h, "Rate limit reached ... on tokens per min (TPM): Limit 30000") == 0.12
    # the message names the limit even when the remaining headers disagree
    assert retry_after_from_headers(h, "Rate limit reached for gpt-4o on requests per min (RPM)") == 360
    # OpenAI's "try again in" is the time until the next request fits: it wins over resets
    assert retry_after_from_headers(h, "... on requests per min (RPM). Please try again in 1.5s. Visit") == 1.5
    assert exhausted_limits(None, "Quota exceeded for metric: generativelanguage.googleapis.com/"
                                  "generate_content_free_tier_requests, limit: 15") == {"requests"}
    assert exhausted_limits(None, "exceeded token rate limit of your current OpenAI S0 pricing tier") == {"tokens"}


_DURATIONS = hs.builds(lambda h, m, s, ms: f"{h}h{m}m{s}s" if h else (f"{m}m{s}s" if m else (f"{s}s" if s else f"{ms}ms")),
                       hs.integers(0, 30), hs.integers(0, 59), hs.integers(0, 59), hs.integers(1, 999))
_COUNT = hs.one_of(hs.just("0"), hs.integers(1, 10**7).map(str))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(req_reset=hs.one_of(hs.none(), _DURATIONS), tok_reset=hs.one_of(hs.none(), _DURATIONS),
       req_left=hs.one_of(hs.none(), _COUNT), tok_left=hs.one_of(hs.none(), _COUNT),
       retry_after=hs.one_of(hs.none(), hs.integers(0, 10**6).map(str), hs.text(max_size=8)),
       junk=hs.text(max_size=30))
def test_wait_is_a_reset_of_a_limit_that_was_hit_and_always_bounded(req_reset, tok_reset, req_left, tok_left,
                                                                    retry_after, junk):
    """The rule, hunted for counter-examples: with no Retry-After and no message, the wait is the
    reset of a limit at 0 when there is one (never the reset of a limit with requests left), and
    whatever the headers say, the engine waits a finite time in [0, the cap]."""
    h = {}
    for name, v in (("x-ratelimit-reset-requests", req_reset), ("x-ratelimit-reset-tokens", tok_reset),
                    ("x-ratelimit-remaining-requests", req_left), ("x-ratelimit-remaining-tokens", tok_left)):
        if v is not None:
            h[name] = v
    w = retry_after_from_headers(h)
    hit = {k: parse_duration(r) for k, r, left in (("requests", req_reset, req_left), ("tokens", tok_reset, tok_left))
           if r is not None and left == "0"}
    given_resets = [parse_duration(r) for r in (req_reset, tok_reset) if r is not None]
    if not given_resets:
        assert w is None
    elif hit:
        assert w == max(hit.values())
    else:
        assert w == min(given_resets)
    if retry_after is not None:
        h["retry-after"] = retry_after
    err = RateLimited("HTTP 429: " + junk, status=429, retry_after=retry_after_from_headers(h, junk))
    for attempt in (1, 2, 6):
        wait = RetryWait().wait_for(err, attempt)
        assert math.isfinite(wait) and 0 <= wait <= MAX_SERVER_WAIT_S
    b = Bucket(name="b", max_concurrency=2)
    b.on_rate_limited(err.retry_after, wait_reason(err))
    b.on_success(remaining=h)
    assert 0 <= b.state().paused_for_s <= MAX_SERVER_WAIT_S


def test_huge_durations_read_as_finite():
    assert parse_duration("9" * 400 + "s") < math.inf
    assert retry_after_from_headers({"retry-after": "nan"}) is None
    assert RetryWait().wait_for(RateLimited("x", retry_after=float("inf")), 1) <= MAX_SERVER_WAIT_S


# ------------------------------------------------------------------------------- bounded, through the SDK


async def test_six_minute_reset_without_retry_after_waits_the_cap_at_most(cache, monkeypatch):
    """Azure's 429 (no Retry-After here, a message with no duration the client reads) whose
    ``x-ratelimit-reset-requests`` says ``6m0s``: judgekit waited 360 s; now the cap."""
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "sim-key-123456")
    async with SimServer(SimConfig(rpm=1, openai_retry_after=False, reset_requests_s=360)) as server:
        spec = ModelSpec(provider="azure", model="gpt-4o-mini", base_url=server.root_url,
                         limits={"max_concurrency": 4, "max_attempts": 3})
        wait = RecordingWait()
        engine = Engine({"a": spec}, cache, retry_wait=wait)
        await engine.start()
        # two at once: one is the request of the minute (its reply says 0 left, reset in 6m0s),
        # the other meets the 429
        both = [asyncio.ensure_future(engine.call(req(i))) for i in range(2)]
        bucket = engine.buckets[next(iter(engine.buckets))]
        await until(lambda: bucket.backing_off == 1 and any(t.done() for t in both),
                    "one answered, one backs off after its 429")
        first = next(t for t in both if t.done())
        task = next(t for t in both if t is not first)
        assert first.result().ok and engine.stats.stage("candidate").rate_limited == 1
        assert first.result().response.rate_headers["x-ratelimit-reset-requests"] == "6m0s"
        assert wait.chosen and MAX_SERVER_WAIT_S - 1 <= wait.chosen[0] <= MAX_SERVER_WAIT_S  # 360 s asked
        state = bucket.state()
        assert 100 < state.paused_for_s <= MAX_SERVER_WAIT_S
        assert state.reason.startswith("paused ") and "429 rate limit (requests/min)" in state.reason
        assert state.reason.endswith("; 1 call in backoff")  # after the same 429, said once
        engine.stop("test over")
        result = await asyncio.wait_for(task, 20)  # wakes at once, not after 120 s
        assert result.error_kind == NOT_RUN and bucket.backing_off == 0
        await engine.close()


async def _retry_after_server(seconds: str):
    async def chat(_request):
        body = {"error": {"message": "Rate limit reached for requests", "type": "requests",
                          "param": None, "code": "rate_limit_exceeded"}}
        return web.json_response(body, status=429, headers={"Retry-After": seconds, "x-should-retry": "true"})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    return runner, f"http://127.0.0.1:{port}/v1"


async def test_retry_after_an_hour_waits_the_cap_at_most(cache):
    runner, url = await _retry_after_server("3600")
    try:
        spec = ModelSpec(provider="openai", model="gpt-4o", base_url=url, limits={"max_attempts": 4})
        wait = RecordingWait()
        engine = Engine({"a": spec}, cache, retry_wait=wait)
        await engine.start()
        task = asyncio.ensure_future(engine.call(req(1)))
        bucket = engine.buckets[next(iter(engine.buckets))]
        await until(lambda: bucket.backing_off == 1, "the call backs off after its 429")
        assert wait.chosen == [MAX_SERVER_WAIT_S]  # 3600 asked; jitter never takes it past the cap
        assert MAX_SERVER_WAIT_S - 5 < bucket.state().paused_for_s <= MAX_SERVER_WAIT_S
        engine.stop("test over")
        assert (await asyncio.wait_for(task, 20)).error_kind == NOT_RUN
        await engine.close()
    finally:
        await runner.cleanup()


# ------------------------------------------------------------------------------- stopping


async def test_a_fatal_error_stops_calls_in_backoff_and_in_a_rate_wait_at_once(cache):
    """Twenty calls sleep in a 60 s backoff after 503s and seven wait for their turn under a
    1-request/min limit; then a call meets a fatal error: every one of them ends within seconds,
    none is sent again."""
    async with SimServer(SimConfig(models=["m1", "m2"], error_rate=1.0)) as server:
        limits = {"flaky": {"max_concurrency": 32}, "limited": {"max_concurrency": 32, "requests_per_minute": 1},
                  "gone": {}}
        specs = {alias: ModelSpec(provider="openai", model=name, base_url=server.base_url, limits=limits[alias])
                 for alias, name in (("flaky", "m1"), ("limited", "m2"), ("gone", "m3"))}
        engine = Engine(specs, cache, retry_wait=RetryWait(initial=60, maximum=60, jitter=0))
        await engine.start()
        flaky = [asyncio.ensure_future(engine.call(req(i, "flaky"))) for i in range(20)]
        limited = [asyncio.ensure_future(engine.call(req(i, "limited"))) for i in range(8)]
        b_flaky, b_limited = engine._bucket_of["flaky"], engine._bucket_of["limited"]
        await until(lambda: b_flaky.backing_off == 20, "every flaky call backs off")
        await until(lambda: b_limited.backing_off == 1 and b_limited.waiting_rate == 7, "the limited calls wait")
        assert "20 calls in backoff after HTTP 50" in b_flaky.state().reason
        assert b_limited.state().reason.startswith("rate limit (RPM/TPM); 1 call in backoff after HTTP 50")
        sent = server.stats()["requests"]
        with pytest.raises(RunStopped, match="m3"):
            await engine.call(req(0, "gone"))
        done = await asyncio.wait_for(asyncio.gather(*flaky, *limited, return_exceptions=True), 20)
        backed_off = done[:20] + done[20:21]
        assert all(isinstance(r, RunStopped) for r in backed_off)  # they met errors: the fatal one is theirs
        assert all(r.error_kind == NOT_RUN for r in done[21:])  # never launched
        assert server.stats()["requests"] == sent + 1  # only the fatal call went out
        assert b_flaky.backing_off == b_limited.backing_off == b_limited.waiting_rate == 0
        await engine.close()


async def test_a_stop_ends_rate_waits_and_pauses_of_a_bare_bucket():
    b = Bucket(name="b", max_concurrency=4, requests_per_minute=60)
    b.pause(600, "test")
    waiter = asyncio.ensure_future(b.acquire())
    await asyncio.sleep(0.05)
    assert not waiter.done()
    b.stop()
    await asyncio.wait_for(waiter, 5)  # the caller checks the run's state next
    b.release()


def test_wait_reasons_name_the_cause():
    assert wait_reason(RateLimited("HTTP 429: Rate limit reached for gpt-4o in organization org-x on "
                                   "tokens per min (TPM): Limit 30000", status=429)) == "429 rate limit (tokens/min)"
    assert wait_reason(RateLimited("HTTP 429: slow down", status=429)) == "429 rate limit"
    assert wait_reason(TransientError("HTTP 503: busy", status=503)) == "HTTP 503"
    assert wait_reason(TransientError("timeout: Request timed out.")) == "timeout"


@pytest.mark.parametrize("api, quota", [("openai", "insufficient_quota"), ("openai", "credit_balance_exhausted"),
                                        ("gemini", "daily"), ("gemini", "free_tier_daily")])
async def test_a_spent_quota_stops_the_run_at_once(cache, monkeypatch, api, quota):
    """A 429 that no wait cures (OpenAI's insufficient_quota and billing codes; Gemini's per-day
    quota, which still says "retry in 37s") stops the run at its first reply: not retried, and
    the twenty calls sleeping in a 60 s backoff meanwhile end at once, none sent again."""
    monkeypatch.setenv("JK_GEMINI_KEY", "sim-gemini-key-123")
    name = "gemini-2.5-flash" if api == "gemini" else "gpt-4o"
    cfg = SimConfig(quota_exhausted_models={name: quota}, error_rate=1.0)
    async with SimServer(cfg) as server:
        flaky = ModelSpec(provider="openai", model="m1", base_url=server.base_url, limits={"max_concurrency": 32})
        spent = (ModelSpec(provider="gemini", model=name, base_url=server.root_url, api_key_env="JK_GEMINI_KEY")
                 if api == "gemini" else ModelSpec(provider="openai", model=name, base_url=server.base_url))
        engine = Engine({"flaky": flaky, "spent": spent}, cache, retry_wait=RetryWait(initial=60, maximum=60, jitter=0))
        await engine.start()
        waiting = [asyncio.ensure_future(engine.call(req(i, "flaky"))) for i in range(20)]
        b_flaky = engine._bucket_of["flaky"]
        await until(lambda: b_flaky.backing_off == 20, "every flaky call backs off")
        sent = server.stats()["requests"]
        with pytest.raises(RunStopped) as ei:  # (a guard limit: retried as a rate limit it took 5 min)
            await asyncio.wait_for(engine.call(req(0, "spent")), 30)
        message = str(ei.value)
        assert "'spent'" in message and name in message
        done = await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), 20)
        assert all(isinstance(r, RunStopped) for r in done)
        assert server.stats()["requests"] == sent + 1  # the quota reply, not retried; nothing after it
        assert server.stats()["quota_exhausted"] == 1
        await engine.close()


def test_remaining_zero_pauses_until_one_request_fits_not_the_full_reset():
    """A reply saying 0 requests left with a 6m0s reset and a 500/min limit: one request fits again
    in 60 / 500 s (a per-minute limit), not 6 minutes; without the limit header, the reset, bounded."""
    b = Bucket(name="b", max_concurrency=4)
    b.on_success(remaining={"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
                            "x-ratelimit-reset-requests": "6m0s"})
    assert 0 < b.state().paused_for_s <= 0.72
    assert "server reports 0 requests left" in b.state().reason
    b = Bucket(name="b", max_concurrency=4)
    b.on_success(remaining={"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1h2m3s"})
    assert MAX_SERVER_WAIT_S - 5 < b.state().paused_for_s <= MAX_SERVER_WAIT_S
