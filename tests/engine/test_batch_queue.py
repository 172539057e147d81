"""The enqueued-token limit (judgekit.engine.batch_queue) and the real causes of unanswered batch
requests, against a fake batch provider whose "organisation" holds a queue of tokens: a batch that
would take the tokens of the model's batches not ended past the limit fails as a whole, as
OpenAI's does (``token_limit_exceeded``).  The fake counts a request's tokens its own way (a
word-based count, not judgekit's tokenizer), so judgekit's estimate can be off, as against a
real provider."""

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from batch_fake import FakeBatchProvider, FakeBatchServer, answer, use_fake

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.engine import Engine
from judgekit.engine.batch_queue import TokenQueue, estimate
from judgekit.engine.batch_status import status_lines
from judgekit.errors import TransientError
from judgekit.plural import plural
from judgekit.providers.batch import BatchOutcome, BatchStatus
from judgekit.providers.batch_errors import BatchExpired, BatchFailed, BatchQueueFull, with_type
from judgekit.types import ChatRequest, GenParams, Message

PRICE = {"input_per_mtok": 2.5, "output_per_mtok": 10.0}
WORDS = 40  # words per question: about 50 tokens


def spec(**kw):
    base = dict(provider="openai", model="gpt-4o-2024-08-06", batch=True, batch_linger_s=0.05, batch_poll_s=0.01,
                price=PRICE, limits={"max_attempts": 3})
    base.update(kw)
    return ModelSpec(**base)


def req(i, words=WORDS):
    text = f"question {i}: " + " ".join(f"word{j}" for j in range(words))
    return ChatRequest("j", (Message.user(text),), GenParams(max_tokens=100), stage="judge", item_id=str(i))


def fake_tokens(item) -> int:
    """The fake organisation's count of a request's tokens: 3 per word (more than a tokenizer's)."""
    return 3 * sum(len(m.text().split()) for m in item.request.messages)


class QueueServer(FakeBatchServer):
    """A FakeBatchServer whose organisation has an enqueued-token limit of ``queue`` tokens."""

    def __init__(self, queue: int, **kw) -> None:
        super().__init__(**kw)
        self.queue = queue
        self.refused: list[list[str]] = []
        self.peak = 0  # the most tokens ever enqueued at once

    def enqueued(self) -> int:
        return sum(b["tokens"] for b in self.batches.values() if b["state"] in ("submitted", "in_progress"))


class QueueProvider(FakeBatchProvider):
    async def submit_batch(self, items, *, wave=None) -> BatchStatus:
        s = self.server
        tokens = sum(fake_tokens(i) for i in items)
        full = s.enqueued() + tokens > s.queue
        status = await super().submit_batch(items, wave=wave)
        b = s.batches[status.batch_id]
        b["tokens"] = 0 if full else tokens
        if full:
            b["state"] = "failed"
            s.refused.append([i.custom_id for i in items])
        s.peak = max(s.peak, s.enqueued())
        return s._status(status.batch_id)

    async def poll_batch(self, batch_id: str) -> BatchStatus:
        b = self.server.batches[batch_id]
        if b["state"] == "failed":
            return BatchStatus(batch_id, "failed", "failed", len(b["items"]), message=self._message())
        return await super().poll_batch(batch_id)

    async def batch_results(self, batch_id: str, custom_ids=None):
        b = self.server.batches[batch_id]
        if b["state"] == "failed":
            return [BatchOutcome(i.custom_id, error=BatchQueueFull(f"the batch failed as a whole: {self._message()}"))
                    for i in b["items"]]
        return await super().batch_results(batch_id, custom_ids)

    def _message(self) -> str:
        return (f"[token_limit_exceeded] Enqueued token limit reached for gpt-4o in organization org-fake. "
                f"Limit: {self.server.queue:,} enqueued tokens.")


def use_queue(monkeypatch, server: QueueServer) -> None:
    import judgekit.engine.engine as engine_mod
    import judgekit.providers as providers_mod

    def make(alias, spec):
        return QueueProvider(alias, spec, server)

    monkeypatch.setattr(engine_mod, "create_provider", make)
    monkeypatch.setattr(providers_mod, "create_provider", make)


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    yield store
    if not store.closed:
        await store.close()


async def engine_for(cache, models):
    e = Engine(models, cache)
    await e.start()
    return e


N = 30  # requests in the wave


def wave_tokens() -> int:
    return sum(fake_tokens(type("I", (), {"request": req(i)})) for i in range(N))


async def test_a_wave_three_times_the_limit_runs_in_turns_within_the_setting(monkeypatch, cache):
    limit = wave_tokens() // 3
    server = QueueServer(limit)
    use_queue(monkeypatch, server)
    # the setting at the organisation's limit; judgekit's estimate is below the fake's count here,
    # so a batch it thinks fits may be refused: it halves and goes on
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=limit, batch_attempts=1)})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok]
    assert [r.text for r in rs] == [answer(req(i)).text for i in range(N)]
    assert server.created >= 3 and server.peak <= limit and len(server.refused) <= 1
    assert sorted(k for b in server.submitted for k in b if b not in server.refused) == sorted(r.key for r in rs)
    await e.close()


async def test_with_an_exact_estimate_no_batch_is_refused_and_the_queue_is_never_passed(monkeypatch, cache):
    monkeypatch.setattr("judgekit.engine.batch_queue.estimate", lambda prov, r: fake_tokens(
        type("I", (), {"request": r})))
    limit = wave_tokens() // 3
    server = QueueServer(limit)
    use_queue(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=limit)})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
    assert all(r.ok for r in rs)
    assert server.refused == [] and server.created >= 3 and server.peak <= limit
    assert all(sum(fake_tokens(type("I", (), {"request": req(0)})) for _ in b) <= limit for b in server.submitted)
    await e.close()


async def test_without_the_setting_a_refused_wave_is_halved_until_it_fits(monkeypatch, cache):
    limit = wave_tokens() // 3
    server = QueueServer(limit)
    use_queue(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_attempts=1)})  # a refusal is not one of batch_attempts
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok]
    # the whole wave first, refused; then never the same batch again at once: each refused one halved
    assert len(server.submitted[0]) == N and server.refused[0] == server.submitted[0]
    for a, b in zip(server.submitted, server.submitted[1:]):
        if a in server.refused:
            assert len(b) <= len(a) // 2 + 1 and b != a
    assert server.peak <= limit and len(server.refused) <= 2
    assert e.stats.stage("judge").failures == 0
    kinds = await cache.failures_by_kind()
    assert kinds["batch_queue_full"] == sum(len(b) for b in server.refused)  # each refusal recorded
    lane = e.batches.lanes["j"]
    assert lane.queue.refusals == len(server.refused) and "refused over the enqueued-token limit" in lane.queue.note()
    line = " ".join(status_lines(e))  # the live display says so, with the limit the provider named
    assert (f"{plural(len(server.refused), 'batch')} refused over the enqueued-token limit (the provider's limit: "
            f"{limit:,} tokens): one batch at a time") in line
    await e.close()


async def test_a_request_the_queue_can_never_hold_fails_naming_the_limit(monkeypatch, cache):
    server = QueueServer(10)  # less than any request
    use_queue(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(3)))
    assert not any(r.ok for r in rs)
    for r in rs:
        assert r.error_kind == "batch_queue_full"
        assert "Limit: 10 enqueued tokens" in r.error and "set models.j.batch_queue_tokens = 10" in r.error
    assert all(len(b) >= 1 for b in server.submitted) and len(server.submitted) <= 3 + 2  # halved down to one
    assert e.savings.as_dict()["batch"]["unanswered"] == {"queue full": 3}
    await e.close()


async def test_a_request_over_the_setting_fails_before_anything_is_sent(monkeypatch, cache):
    server = QueueServer(10_000)
    use_queue(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=20)})
    r = await e.call(req(0))
    assert not r.ok and r.error_kind == "batch_queue_full" and "batch_queue_tokens = 20" in r.error
    assert server.created == 0
    await e.close()


async def test_an_expired_request_fails_with_its_cause_not_a_guess(monkeypatch, cache):
    server = FakeBatchServer()
    server.not_run = "expire"
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_attempts=2)})
    monkeypatch.setattr(FakeBatchProvider, "batch_results", _results_with(lambda k: BatchExpired(
        "the batch expired before running this request")))
    r = await e.call(req(0))
    assert not r.ok and r.error_kind == "batch_expired"
    assert "in 2 batches; the last one: expired: the batch expired" in r.error
    assert e.savings.as_dict()["batch"]["unanswered"] == {"expired": 1}
    await e.close()


async def test_an_errored_request_fails_with_the_providers_type_and_message(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    monkeypatch.setattr(FakeBatchProvider, "batch_results", _results_with(lambda k: with_type(TransientError(
        "the batch request errored: api_error: Internal server error [invalid_request]", status=500), "api_error")))
    e = await engine_for(cache, {"j": spec(batch_attempts=2)})
    r = await e.call(req(0))
    assert not r.ok and r.error_kind == "transient"
    assert "the last one: errored (api_error): the batch request errored: api_error: Internal server error" in r.error
    assert e.savings.as_dict()["batch"]["unanswered"] == {"errored (api_error)": 1}
    await e.close()


async def test_a_failed_batch_that_reports_nothing_gives_the_providers_message(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)

    async def poll(self, batch_id):
        b = self.server.batches[batch_id]
        return BatchStatus(batch_id, "failed", "BATCH_STATE_FAILED", len(b["items"]),
                           message="[INTERNAL] the operation failed: quota of the project exceeded")

    async def nothing(self, batch_id, custom_ids=None):
        return []  # Gemini: a failed batch has no responses file

    monkeypatch.setattr(FakeBatchProvider, "poll_batch", poll)
    monkeypatch.setattr(FakeBatchProvider, "batch_results", nothing)
    e = await engine_for(cache, {"j": spec(batch_attempts=1)})
    r = await e.call(req(0))
    assert not r.ok and r.error_kind == "batch_failed"
    assert "batch failed: batch batch_" in r.error and "[INTERNAL] the operation failed: quota" in r.error
    assert await cache.failures_by_kind() == {"batch_failed": 1}
    await e.close()


def _results_with(make_error):
    async def results(self, batch_id, custom_ids=None):
        b = self.server.batches[batch_id]
        return [BatchOutcome(i.custom_id, error=make_error(i.custom_id)) for i in b["items"]]

    return results


def test_chunks_keep_the_order_and_the_cap():
    q = TokenQueue(100)

    class W:
        def __init__(self, t):
            self.tokens = t

    ws = [W(t) for t in (40, 50, 20, 90, 150, 10, 10)]
    chunks = q.chunks(ws)
    assert [w for c in chunks for w in c] == ws
    assert [[w.tokens for w in c] for c in chunks] == [[40, 50], [20], [90], [150], [10, 10]]
    assert TokenQueue(None).chunks(ws) == [ws]


def test_the_estimate_is_at_least_the_tokenizers_count():
    from judgekit.providers import create_provider

    prov = create_provider("j", spec())
    n = estimate(prov, req(0))
    assert 40 <= n <= 200


async def test_a_429_of_the_create_call_counts_as_a_429(monkeypatch, cache):
    from judgekit.errors import RateLimited

    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    real = FakeBatchProvider.submit_batch
    calls = {"n": 0}

    async def limited(self, items, *, wave=None):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RateLimited("HTTP 429: Too many batch creations", status=429, retry_after=0.01)
        return await real(self, items, wave=wave)

    monkeypatch.setattr(FakeBatchProvider, "submit_batch", limited)
    e = await engine_for(cache, {"j": spec()})
    r = await e.call(req(0))
    assert r.ok and server.created == 1
    assert e.stats.stage("judge").rate_limited == 1  # the live view's 429 count
    await e.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=40), st.integers(1, 250))
def test_chunks_are_in_order_within_the_cap_and_as_full_as_they_can_be(sizes, cap):
    class W:
        def __init__(self, t):
            self.tokens = t

    ws = [W(t) for t in sizes]
    q = TokenQueue(cap)
    chunks = q.chunks(ws)
    assert [w for c in chunks for w in c] == ws  # every call once, in order
    for c in chunks:
        assert c and (len(c) == 1 or sum(w.tokens for w in c) <= cap)  # over the cap only alone
    for a, b in zip(chunks, chunks[1:]):
        assert sum(w.tokens for w in a) + b[0].tokens > cap  # the next call did not fit: greedy


async def test_a_batch_an_earlier_run_left_live_fills_the_queue_until_it_ends(monkeypatch, tmp_path):
    path = tmp_path / "c.duckdb"
    server = FakeBatchServer(polls_to_end=None)  # batches run until released
    use_fake(monkeypatch, server)
    cache = await CacheStore.open(path, run_id="run1")
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=10_000)})
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(req(i)) for i in range(4))))
    while server.polls == 0:
        await asyncio.sleep(0.005)
    calls.cancel()
    await asyncio.gather(calls, return_exceptions=True)
    await e.close()  # the run ends with its batch live (Ctrl-C)
    await cache.close()
    assert server.created == 1

    cache = await CacheStore.open(path, run_id="run2")
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=10_000)})
    lane = e.batches.lanes["j"]
    new = asyncio.ensure_future(e.call(req(99)))  # not in the earlier batch: a new wave
    for _ in range(2000):  # a bound, not a timing assertion: until the new wave waits for room
        if lane.queue.waiting:
            break
        await asyncio.sleep(0.005)
    assert lane.queue.waiting == 1 and server.created == 1  # its tokens are unknown: it fills the queue
    assert "1 call waits for room in the provider's batch queue" in " ".join(status_lines(e))
    server.release()
    r = await new
    assert r.ok and server.created == 2 and server.submitted[1] == [r.key]
    await e.close()
    await cache.close()


async def test_a_stop_ends_the_wait_for_room(monkeypatch, tmp_path):
    from judgekit.engine import NOT_RUN

    server = FakeBatchServer(polls_to_end=None)
    use_fake(monkeypatch, server)
    cache = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=100, batch_linger_s=0.01)})
    first = asyncio.ensure_future(e.call(req(0)))  # ~60 tokens: fills most of the queue
    second = asyncio.ensure_future(e.call(req(1, words=WORDS + 1)))  # another wave that cannot fit beside it
    lane = e.batches.lanes["j"]
    for _ in range(2000):  # a bound, not a timing assertion
        if lane.queue.waiting:
            break
        await asyncio.sleep(0.005)
    assert lane.queue.waiting == 1 and server.created == 1
    e.stop("stopped by the test")
    r = await second
    assert r.error_kind == NOT_RUN and server.created == 1  # not made, and the close does not wait for room
    await e.close()
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    await cache.close()


async def test_a_429_of_a_poll_counts_as_a_429(monkeypatch, cache):
    from judgekit.errors import RateLimited

    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    real = FakeBatchProvider.poll_batch
    calls = {"n": 0}

    async def limited(self, batch_id):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise RateLimited("HTTP 429 while polling", status=429)
        return await real(self, batch_id)

    monkeypatch.setattr(FakeBatchProvider, "poll_batch", limited)
    e = await engine_for(cache, {"j": spec()})
    r = await e.call(req(0))
    assert r.ok and e.stats.stage("judge").rate_limited == 2
    await e.close()


async def test_a_batch_being_created_holds_its_room():
    """Two waves woken together: the second waits while the first one's create call is under way."""
    from types import SimpleNamespace

    stopped = asyncio.Event()
    layer = SimpleNamespace(engine=SimpleNamespace(_stopped=stopped), batches={})
    lane = object()
    q = TokenQueue(100)
    q.serial = True  # after a refusal: one batch at a time
    assert await q.admit(layer, lane, 60) is True  # alone; its create call now runs
    second = asyncio.ensure_future(q.admit(layer, lane, 30))
    await asyncio.sleep(0)
    assert not second.done()  # not admitted beside a batch that is being created
    b = SimpleNamespace(ident=("openai", "u", "batch_1"))
    q.hold(b, 60, True)
    await asyncio.sleep(0)
    assert not second.done()
    q.ended(b)
    assert await second is True and q.enqueued == 30
    stopped.set()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**12), st.sampled_from(["Limit: {:,} enqueued tokens.", "limit {} enqueued tokens",
                                                   "LIMIT:{}  ENQUEUED TOKENS"]), st.text(max_size=40))
def test_the_limit_a_refusal_names_is_read(n, form, noise):
    from judgekit.engine.batch_queue import provider_limit

    assert provider_limit(f"{noise} Enqueued token limit reached for gpt-4o. " + form.format(n)) == n
    assert provider_limit(noise.replace("enqueued", "")) is None or "enqueued tokens" in noise.lower()


async def test_with_the_live_fallback_a_request_no_queue_can_hold_goes_live(monkeypatch, cache):
    server = QueueServer(10)  # less than any request
    use_queue(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_fallback="live")})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(3)))
    assert all(r.ok for r in rs) and server.live_calls == 3
    assert [r.text for r in rs] == [answer(req(i)).text for i in range(3)]
    await e.close()


async def test_an_estimate_that_breaks_fails_the_calls_instead_of_hanging(monkeypatch, cache):
    def broken(prov, r):
        raise RuntimeError("tokenizer exploded")

    monkeypatch.setattr("judgekit.engine.batch_queue.estimate", broken)
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_queue_tokens=1000)})
    r = await e.call(req(0))
    assert not r.ok and "estimating a wave's tokens failed unexpectedly" in r.error and server.created == 0
    await e.close()


async def test_a_create_refused_with_429_over_the_queue_is_halved_not_failed(monkeypatch, cache):
    """Gemini's way: a batch over the model's enqueued tokens is refused at creation with a 429
    (RESOURCE_EXHAUSTED); after the create's retries the wave goes again in smaller batches."""
    from judgekit.errors import RateLimited

    limit = wave_tokens() // 3
    server = QueueServer(limit)
    use_fake(monkeypatch, server)
    real = FakeBatchProvider.submit_batch
    refused: list[int] = []

    async def create(self, items, *, wave=None):
        need = sum(fake_tokens(i) for i in items)
        live = sum(sum(fake_tokens(i) for i in b["items"]) for b in self.server.batches.values()
                   if b["state"] in ("submitted", "in_progress"))
        if live + need > limit:
            refused.append(len(items))
            raise RateLimited("429 RESOURCE_EXHAUSTED: enqueued tokens over the model's limit", status=429,
                              retry_after=0.001)
        return await real(self, items, wave=wave)

    monkeypatch.setattr(FakeBatchProvider, "submit_batch", create)
    e = await engine_for(cache, {"j": spec(limits={"max_attempts": 2})})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(N)))
    assert all(r.ok for r in rs), [r.error for r in rs if not r.ok][:2]
    assert refused[0] == N and sum(len(b) for b in server.submitted) == N  # each request in one batch created
    assert e.batches.lanes["j"].queue.refusals >= 1 and e.stats.stage("judge").rate_limited >= 2
    await e.close()
