"""The engine's batch layer against a fake batch provider: waves, linger, splitting, durable records,
reattaching after a crash, retries of what a batch left unanswered, failures, the cost cap."""

import asyncio
import os

import pytest
from batch_fake import FakeBatchServer, answer, use_fake
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.cache.store import CacheStore
from judgekit.config import ModelSpec
from judgekit.cost.prices import PriceOverride, price_usd
from judgekit.engine import NOT_RUN, Engine
from judgekit.errors import SpecError
from judgekit.providers.batch import BatchLimits
from judgekit.types import ChatRequest, GenParams, Message

PRICE = {"input_per_mtok": 2.5, "output_per_mtok": 10.0}


def spec(**kw):
    base = dict(provider="openai", model="gpt-4o-2024-08-06", batch=True, batch_linger_s=0.05, batch_poll_s=0.01,
                price=PRICE, limits={"max_attempts": 3})
    base.update(kw)
    return ModelSpec(**base)


def req(i, stage="judge", alias="j"):
    return ChatRequest(alias, (Message.user(f"question {i}"),), GenParams(max_tokens=100), stage=stage, item_id=str(i))


@pytest.fixture
async def cache(tmp_path):
    store = await CacheStore.open(tmp_path / "c.duckdb", run_id="run1")
    yield store
    if not store.closed:
        await store.close()


async def engine_for(cache, models, **kw):
    e = Engine(models, cache, **kw)
    await e.start()
    return e


async def test_a_wave_is_one_batch_and_answers_each_call(monkeypatch, cache):
    server = FakeBatchServer(polls_to_end=2)
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(10)))
    assert all(r.ok for r in rs)
    assert [r.text for r in rs] == [answer(req(i)).text for i in range(10)]  # each call its own answer
    assert server.created == 1 and sorted(server.submitted[0]) == sorted(r.key for r in rs)
    assert server.live_calls == 0
    st = e.stats.stage("judge")
    assert (st.calls, st.done, st.failures, st.cache_hits) == (10, 10, 0, 0)
    assert (st.input_tokens, st.output_tokens) == (120, 200)  # "question i": 12 input tokens, 20 output
    # priced at half the spec's price; the summary's savings say so
    live = price_usd("openai", "gpt-4o-2024-08-06", 12, 20, PriceOverride(**PRICE))
    assert st.cost_usd == pytest.approx(10 * live / 2)
    assert e.savings.batch_calls == 10 and e.savings.batch_saved_usd == pytest.approx(10 * live / 2)
    # the next lookup is a hit, as for a live answer
    again = await e.call(req(3))
    assert again.ok and again.response.cached and again.text == rs[3].text
    assert server.created == 1
    # the batch is collected: no longer live
    assert await cache.batches(live_only=True) == []
    (b,) = await cache.batches()
    assert (b.state, b.succeeded, b.requests, b.alias, b.run_id) == ("ended", 10, 10, "j", "run1")
    await e.close()


async def test_dependent_stages_go_in_waves(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})

    async def flow(i):
        first = await e.call(req(i, "candidate"))
        return await e.call(req(f"judge {first.text}", "judge"))

    rs = await asyncio.gather(*(flow(i) for i in range(6)))
    assert all(r.ok for r in rs)
    assert [len(k) for k in server.submitted] == [6, 6]  # the candidates' wave, then the judges'
    await e.close()


async def test_linger_starts_again_with_every_new_call(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_linger_s=0.5)})

    async def trickle():
        tasks = []
        for i in range(5):  # 5 calls 0.15 s apart: each within the linger of the one before
            tasks.append(asyncio.ensure_future(e.call(req(i))))
            await asyncio.sleep(0.15)
        return await asyncio.gather(*tasks)

    rs = await trickle()
    assert all(r.ok for r in rs) and server.created == 1
    await e.close()


@pytest.mark.parametrize("limits, sizes", [
    (BatchLimits(4, 10_000_000), [4, 4, 2]),  # by count
    (BatchLimits(1000, 3 * 105), [3, 3, 3, 1]),  # by bytes: each line is 105 bytes here
])
async def test_a_big_wave_is_split_to_fit_the_limits(monkeypatch, cache, limits, sizes):
    from batch_fake import FakeBatchProvider

    from judgekit.providers.batch import BatchItem

    server = FakeBatchServer(limits=limits)
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    prov = e.providers["j"]
    assert isinstance(prov, FakeBatchProvider)
    assert {prov.batch_line_bytes(BatchItem(e.key_for(req(i)), req(i))) for i in range(10)} == {105}
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(10)))
    assert all(r.ok for r in rs)
    assert sorted(len(k) for k in server.submitted) == sorted(sizes)
    assert sorted(k for ks in server.submitted for k in ks) == sorted(r.key for r in rs)
    await e.close()


async def test_the_batch_is_durable_before_the_first_poll(monkeypatch, tmp_path):
    path = tmp_path / "c.duckdb"
    cache = await CacheStore.open(path, run_id="run1", flush_interval=3600)  # nothing flushed: the log only
    server = FakeBatchServer(polls_to_end=None)
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    seen_on_disk = []
    real_poll = type(e.providers["j"]).poll_batch

    async def poll(self, batch_id):
        if not seen_on_disk:  # at the first poll, the batch's record is in a log file on disk
            logs = [n for n in os.listdir(tmp_path) if ".wal." in n]
            seen_on_disk.append(any(batch_id.encode() in (tmp_path / n).read_bytes() for n in logs))
        return await real_poll(self, batch_id)

    monkeypatch.setattr(type(e.providers["j"]), "poll_batch", poll)
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(req(i)) for i in range(5))))
    while server.created == 0:
        await asyncio.sleep(0.005)
    calls.cancel()  # killed right after the submission
    with pytest.raises(asyncio.CancelledError):
        await calls
    while not seen_on_disk:
        await asyncio.sleep(0.005)
    assert seen_on_disk == [True]
    await e.close()
    await cache.close()
    store = await CacheStore.open(path, run_id="run2")
    (b,) = await store.batches(live_only=True)
    assert b.batch_id == next(iter(server.batches)) and b.requests == 5 and b.run_id == "run1"
    keys = {r.key for r in await store.batch_requests(b.ident)}
    assert keys == set(server.submitted[0]) and {r.stage for r in await store.batch_requests(b.ident)} == {"judge"}
    await store.close()


async def test_a_restarted_run_waits_on_its_live_batches_and_submits_nothing_again(monkeypatch, tmp_path):
    path = tmp_path / "c.duckdb"
    server = FakeBatchServer(polls_to_end=None)  # the batch runs until released
    use_fake(monkeypatch, server)
    cache = await CacheStore.open(path, run_id="run1")
    e = await engine_for(cache, {"j": spec()})
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(req(i)) for i in range(8))))
    while server.polls == 0:
        await asyncio.sleep(0.005)
    calls.cancel()
    await asyncio.gather(calls, return_exceptions=True)
    assert len(e.batches.live()) == 1
    await e.close()  # the run ends without its answers (Ctrl-C)
    await cache.close()
    assert server.created == 1

    server.release()
    cache = await CacheStore.open(path, run_id="run2")
    e = await engine_for(cache, {"j": spec()})
    assert len(e.batches.live()) == 1 and e.batches.live()[0].earlier
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(10)))  # 8 in the live batch, 2 new
    assert all(r.ok for r in rs) and [r.text for r in rs] == [answer(req(i)).text for i in range(10)]
    assert server.created == 2 and len(server.submitted[1]) == 2  # only the 2 new ones
    assert server.live_calls == 0
    assert await cache.batches(live_only=True) == []
    await e.close()
    await cache.close()


async def test_an_earlier_batch_is_collected_even_if_nobody_asks(monkeypatch, tmp_path):
    path = tmp_path / "c.duckdb"
    server = FakeBatchServer(polls_to_end=None)
    use_fake(monkeypatch, server)
    cache = await CacheStore.open(path, run_id="run1")
    e = await engine_for(cache, {"j": spec()})
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(req(i)) for i in range(4))))
    while server.created == 0:
        await asyncio.sleep(0.005)
    calls.cancel()
    await asyncio.gather(calls, return_exceptions=True)
    keys = server.submitted[0]
    await e.close()
    await cache.close()

    server.release()
    cache = await CacheStore.open(path, run_id="run2")
    e = await engine_for(cache, {"j": spec(batch=False)})  # not in batch mode now: still collected
    while e.batches.live():
        await asyncio.sleep(0.01)
    assert len(await cache.get_many(keys)) == 4
    assert e.savings.batch_collected_unasked == 4
    r = await e.call(req(2))
    assert r.ok and r.response.cached and server.live_calls == 0
    await e.close()
    await cache.close()


async def test_requests_a_batch_left_unanswered_go_in_the_next_batch(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    expired = e.key_for(req(2))
    server.not_run = {expired}
    first = asyncio.ensure_future(asyncio.gather(*(e.call(req(i)) for i in range(4))))
    while server.created < 2:
        await asyncio.sleep(0.005)
    server.not_run = set()  # the second batch answers it
    rs = await first
    assert all(r.ok for r in rs)
    assert server.submitted[1] == [expired]
    st = e.stats.stage("judge")
    assert (st.retries, st.calls, st.failures) == (1, 4, 0) and e.savings.batch_retried == 1
    assert await cache.failures_by_kind() == {"batch_not_run": 1}
    await e.close()


async def test_a_request_no_batch_answers_fails_after_batch_attempts(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_attempts=2)})
    server.not_run = {e.key_for(req(1))}
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(3)))
    assert [r.ok for r in rs] == [True, False, True]
    assert rs[1].error_kind == "batch_not_run" and "2 batches" in rs[1].error
    assert server.created == 2
    st = e.stats.stage("judge")
    assert (st.retries, st.failures, st.done) == (1, 1, 3)
    assert await cache.failures_by_kind() == {"batch_not_run": 2}
    await e.close()


async def test_an_expired_batch_falls_back_to_live_calls_when_asked(monkeypatch, cache):
    server = FakeBatchServer()
    server.not_run = "expire"
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec(batch_fallback="live")})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(5)))
    assert all(r.ok for r in rs)
    assert server.created == 1 and server.live_calls == 5
    st = e.stats.stage("judge")
    assert (st.retries, st.calls) == (5, 5)
    assert await cache.failures_by_kind() == {"batch_not_run": 5}
    (b,) = await cache.batches()
    assert b.state == "expired" and b.collected
    await e.close()


async def test_a_request_the_provider_refuses_is_a_failure_not_retried(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()}, max_cost_usd=1.0)
    server.fail = {e.key_for(req(0))}
    server.filtered = {e.key_for(req(1))}
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(3)))
    assert [r.ok for r in rs] == [False, False, True] and rs[0].error_kind == "bad_request"
    assert rs[1].error_kind == "filtered"
    assert "invalid image" in rs[0].error and server.created == 1
    assert await cache.failures_by_kind() == {"bad_request": 1, "filtered": 1}
    st = e.stats.stage("judge")
    assert st.failures == 2 and st.calls == 1
    # the filtered reply billed its tokens, at the batch rates, like the answer
    billed = price_usd("openai", "gpt-4o", 12, 5, PriceOverride(**PRICE), batch=True)
    answered = price_usd("openai", "gpt-4o", 12, 20, PriceOverride(**PRICE), batch=True)
    assert st.cost_usd == pytest.approx(billed + answered) and e.cap.spent == pytest.approx(st.cost_usd)
    assert e.cap.reserved == 0 and e.cap.outstanding == 0
    await e.close()


async def test_a_failing_poll_is_tried_again(monkeypatch, cache):
    server = FakeBatchServer(polls_to_end=1)
    server.poll_errors = 2
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(3)))
    assert all(r.ok for r in rs) and server.polls == 3
    await e.close()


async def test_a_provider_bug_while_following_fails_the_calls_instead_of_hanging(monkeypatch, cache):
    server = FakeBatchServer()
    server.broken = KeyError("request_counts")
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()})
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(2)))
    assert [r.error_kind for r in rs] == ["error", "error"]
    assert "following batch batch_" in rs[0].error and "KeyError" in rs[0].error
    assert len(await cache.batches(live_only=True)) == 1  # left for the next run
    await e.close()


async def test_the_cap_submits_the_part_that_fits_and_stops(monkeypatch, cache):
    server = FakeBatchServer()
    use_fake(monkeypatch, server)
    e = await engine_for(cache, {"j": spec()}, max_cost_usd=0.0015)  # each request's worst case: ~0.0005 (100 output tokens)
    pricing = e.batches.lanes["j"].pricing
    assert pricing.batch and pricing.cost(1_000_000, 0) == pytest.approx(1.25)  # half of 2.5
    rs = await asyncio.gather(*(e.call(req(i)) for i in range(6)))
    fit = [r for r in rs if r.ok]
    assert 0 < len(fit) < 6 and server.created == 1 and len(server.submitted[0]) == len(fit)
    assert {r.error_kind for r in rs if not r.ok} == {NOT_RUN}
    assert e.stop_reason.startswith("the next batch of 'j'") and "at batch prices" in e.stop_reason
    assert e.cap.spent <= 0.0015 and e.cap.reserved == 0 and e.cap.outstanding == 0
    await e.close()


async def test_batch_on_a_provider_without_a_batch_api_is_a_spec_error(cache):
    from judgekit.config import RunSpec
    from judgekit.engine.batching import check_batch_models

    s = RunSpec(name="t", benchmark="x", data="d", models={"m": ModelSpec(provider="local", model="x", batch=True,
                                                                          local={"task": "chat"})},
                roles={"candidates": ["m"]})
    with pytest.raises(SpecError, match=r"models\.m\.batch: provider 'local' has no batch API"):
        check_batch_models(s, ["m"])


class _Recorder:
    """A stand-in layer that records the waves a lane launches."""

    def __init__(self):
        self.waves = []

    def launch_wave(self, lane, calls):
        self.waves.append([w.key for w in calls])


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 50), max_size=40), max_requests=st.integers(1, 8), max_bytes=st.integers(50, 200))
def test_waves_split_in_order_within_the_limits_and_as_full_as_they_can_be(sizes, max_requests, max_bytes):
    from judgekit.engine.batching import Lane, Waiter

    class Prov:
        batch_limits = BatchLimits(max_requests, max_bytes)

        def batch_line_bytes(self, item):
            return int(item.custom_id.split(":")[1])

    async def go():
        layer = _Recorder()
        lane = Lane(layer, "j", Prov(), spec())
        loop = asyncio.get_running_loop()
        for i, n in enumerate(sizes):
            lane.join(Waiter(req(i), f"{i}:{n}", None, loop.create_future()))
        if lane.timer is not None:
            lane.timer.cancel()
        return layer.waves + ([list(lane.wave)] if lane.wave else [])

    waves = asyncio.run(go())
    assert [k for w in waves for k in w] == [f"{i}:{n}" for i, n in enumerate(sizes)]  # every call once, in order
    size = lambda w: sum(int(k.split(":")[1]) for k in w)  # noqa: E731
    for i, w in enumerate(waves):
        assert 1 <= len(w) <= max_requests and size(w) <= max_bytes
        if i + 1 < len(waves):  # a wave was cut only when the next call would not fit
            nxt = int(waves[i + 1][0].split(":")[1])
            assert len(w) == max_requests or size(w) + nxt > max_bytes


async def test_batches_adopted_the_wrong_way_round_keep_every_answer(monkeypatch, tmp_path):
    """Two aliases' live batches of the same size, each recorded with the other's requests (what
    Anthropic's matching of running orphans by size and time can do): each batch's answers are
    kept for the requests they answer, nothing is asked again (before: every answer dropped, all
    8 requests submitted again in 2 new batches)."""
    path = tmp_path / "c.duckdb"
    server = FakeBatchServer(polls_to_end=None)
    use_fake(monkeypatch, server)
    models = {"j1": spec(), "j2": spec(model="gpt-4o-mini-2024-07-18")}
    reqs = [req(i, alias="j1") for i in range(4)] + [req(100 + i, alias="j2") for i in range(4)]
    cache = await CacheStore.open(path, run_id="run1")
    e = await engine_for(cache, models)
    calls = asyncio.ensure_future(asyncio.gather(*(e.call(r) for r in reqs)))
    while server.polls < 2 or server.created < 2:
        await asyncio.sleep(0.005)
    calls.cancel()
    await asyncio.gather(calls, return_exceptions=True)
    await e.close()
    await cache.close()
    first, second = list(server.batches)
    server.batches[first], server.batches[second] = server.batches[second], server.batches[first]

    server.release()
    cache = await CacheStore.open(path, run_id="run2")
    e = await engine_for(cache, models)
    rs = await asyncio.gather(*(e.call(r) for r in reqs))
    assert all(r.ok for r in rs) and [r.text for r in rs] == [answer(r).text for r in reqs]
    assert server.created == 2 and server.live_calls == 0  # nothing asked (and paid) again
    st = e.stats.stage("judge")
    assert (st.calls, st.done, st.failures) == (8, 8, 0) and st.cost_usd > 0  # each kept, priced and counted
    assert await cache.batches(live_only=True) == []
    await e.close()
    await cache.close()
