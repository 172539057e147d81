"""The engine: one ``await engine.call(request)`` per call, for any number of concurrent calls.

Per call:
1. compute the cache key and look it up (micro-batched, off the event loop) BEFORE any limiter
   slot is taken, so cached calls never wait behind paid ones.  A cached reply that names a file
   its provider made (a drawn image, an encoding, a retrieved image:
   :meth:`~judgekit.providers.base.Provider.output_blobs`) that is no longer in the image store
   (deleted, or written on a node that does not share it) is a miss: the call is made again and
   its new reply replaces the row (counted in ``remade``);
2. when stopping (Ctrl-C, budget reached, a fatal error), calls not yet launched are not made;
   those already out land and are kept as usual (``in_flight`` and ``landed_after_stop`` count
   them: the runner gives them a grace period, then abandons what is left);
3. take the bucket's slot and rate budget and, under a cost cap, reserve the call's worst-case
   cost (:mod:`judgekit.engine.budget`) in the same step, with no await between the check and
   the launch; make one attempt; on a retryable error retry with the policy of
   :mod:`judgekit.engine.retry`, releasing the slot (and the reservation) while waiting;
   every wait (a retry's backoff, a bucket's pause, a rate wait, room under the cap) ends at
   once when the run stops, and the call is then not made (``NOT_RUN``), so a run stopped by a
   fatal error (bad key, spent quota) or the cap ends within seconds however many calls wait;
4. charge the real cost, store the response (buffered, written in bulk by the cache's thread)
   or record the failure.

A miss of a batch-mode alias (or one a live batch holds) takes :mod:`.batching` instead of 3-4.

Failures are values (:class:`CallResult` with ``error_kind``); only errors that make the whole run
pointless (bad key, unknown model, spent quota: ``errors.FATAL_ERRORS``) raise :class:`RunStopped`.
These two, :data:`NOT_RUN` and the billed model's rule live in the leaf :mod:`judgekit.engine.calls`
(re-exported here), which the batch side imports instead of this module.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Iterable

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from ..cache.keys import cache_key
from ..cache.store import RequestMeta
from ..cost.prices import FREE_PROVIDERS, price_usd, usage_usd
from ..cost.reasoning import max_billed_output
from ..errors import FATAL_ERRORS, ProviderError, RateLimited
from ..providers import Provider, create_provider
from ..types import ChatRequest, ChatResponse, Usage
from .batching import start_batches
from .calls import NOT_RUN, CallResult, RunStopped, billed_model, image_output
from .budget import BILLED_FAILURES, CallPricing, CostCap, cap_text, input_upper_bound, sane_usage, usd
from .limits import Bucket, BucketState, sleep_unless
from .retry import RetryWait, is_retryable, wait_reason
from .savings import Savings
from .stats import RunStats

__all__ = ["Engine", "CallResult", "RunStopped", "NOT_RUN"]

#: recently paid responses kept to answer twins whose cache lookup raced the write
_PAID_KEPT = 4096


class _NotLaunched(Exception):
    """Internal: the call was still waiting for a slot when the run began stopping."""


@dataclass(slots=True)
class _Reservation:
    """What one paid call holds against the cost cap while an attempt is out."""

    amount: float  # USD: the input tokens + the most output, at the model's price
    input_tokens: int
    output_tokens: int  # the output bound
    pricing: CallPricing
    counted: bool  # input_tokens is a tokenizer count (else the cheap byte bound)


class Engine:
    """Runs calls for the model aliases of a spec against one cache."""

    def __init__(self, models: dict, cache, *, stats: RunStats | None = None, max_cost_usd: float | None = None,
                 retry_wait: RetryWait | None = None, blobs=None) -> None:
        self.models = models  # alias -> judgekit.config.ModelSpec
        self.cache = cache
        self.blobs = blobs  # judgekit.blobs.BlobStore: images providers fetch or make, by sha256
        self.stats = stats or RunStats()
        self.cap = CostCap(max_cost_usd) if max_cost_usd is not None else None
        self._pricing: dict[str, CallPricing] = {}  # alias -> how its calls are priced (under a cap)
        self.retry_wait = retry_wait or RetryWait()
        self.providers: dict[str, Provider] = {}
        self.buckets: dict[str, Bucket] = {}
        self._bucket_of: dict[str, Bucket] = {}
        self.stop_reason: str | None = None
        self._stopped = asyncio.Event()  # set by stop(): every wait of the engine and its buckets ends
        self._inflight: dict[str, asyncio.Future[CallResult]] = {}
        # the latest responses paid for, by key: a call whose cache lookup began before a twin
        # finished (and so missed its row) finds it here.  Bounded: the race lasts a lookup.
        self._paid: dict[str, ChatResponse] = {}
        self.fatal: str | None = None
        #: aliases of a paid provider kind priced at 0 (a price override of 0: a self-hosted server)
        self.price_zero: set[str] = set()
        #: calls made to them, by provider kind: free, though their kind is not
        self.made_at_price_zero: dict[str, int] = {}
        #: attempts out at a provider now, and those that came back (answered or failed) after the stop
        self.in_flight = 0
        self.landed_after_stop = 0
        #: attempts out at the moment the stop came (read when it came, not when a watcher wakes)
        self.in_flight_at_stop = 0
        self.batches = None  # the batch layer (.batching.BatchLayer) when a provider has a batch API
        self.savings = Savings()  # what batching and prompt caching saved

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self, aliases: list[str] | None = None) -> None:
        """Create and start the providers of ``aliases`` (default: all).  A missing key env var
        raises RunStopped naming the alias and the variable."""
        for alias in aliases or list(self.models):
            if alias in self.providers:
                continue
            spec = self.models[alias]
            prov = create_provider(alias, spec)
            prov.blobs = self.blobs
            try:
                await prov.start()
            except FATAL_ERRORS as e:
                raise RunStopped(prov.describe_error(e)) from None
            self.providers[alias] = prov
            # first lookups load price data and tokenizers (~0.1-0.5 s): do it now, not mid-run on
            # the event loop where it would stall every call in flight
            whole = await asyncio.to_thread(price_usd, prov.kind, billed_model(prov), 1_000_000, 1_000_000, spec.price)
            if whole == 0.0 and prov.kind not in FREE_PROVIDERS:
                self.price_zero.add(alias)
            if self.cap is not None:
                pricing = self._pricing[alias] = await asyncio.to_thread(
                    CallPricing.of, prov.kind, billed_model(prov), spec.price, image_output(prov))
                if not pricing.free:
                    from ..cost.tokens import count_text

                    await asyncio.to_thread(count_text, billed_model(prov), "warm up")
            if spec.limits.tokens_per_minute:
                from ..cost.tokens import count_text

                await asyncio.to_thread(count_text, billed_model(prov), "warm up")
            name = f"{spec.provider}:{spec.model}@{prov.identity}"
            bucket = self.buckets.get(name)
            if bucket is None:
                lim = spec.limits
                bucket = self.buckets[name] = Bucket(
                    name=f"{alias} ({spec.provider} {spec.model})",
                    max_concurrency=lim.max_concurrency,
                    requests_per_minute=lim.requests_per_minute,
                    tokens_per_minute=lim.tokens_per_minute,
                    max_consecutive_failures=lim.max_consecutive_failures,
                    max_pause_s=self.retry_wait.max_server_wait,
                    stop_event=self._stopped,
                )
            self._bucket_of[alias] = bucket
        self.batches = await start_batches(self, aliases or list(self.models))

    async def close(self) -> None:
        if self.batches is not None:
            await self.batches.close()  # submitted batches stay live in the cache
        for prov in self.providers.values():
            try:
                await prov.close()
            except Exception:
                pass
        self.providers.clear()

    @property
    def max_cost_usd(self) -> float | None:
        """The run's cost cap in USD, or None."""
        return self.cap.limit if self.cap is not None else None

    def stop(self, reason: str) -> None:
        """Stop launching calls (in-flight calls finish).  The first reason given wins."""
        if self.stop_reason is None:
            self.stop_reason = reason
            self.in_flight_at_stop = self.in_flight
        self._stopped.set()  # calls sleeping in a backoff, a pause or a rate wait wake now
        if self.cap is not None:
            self.cap.wake()  # calls waiting for room under the cap give up
        if self.batches is not None:
            self.batches.on_stop()  # calls still in a wave are not made

    @property
    def stopping(self) -> bool:
        return self.stop_reason is not None

    async def wait_stopped(self) -> None:
        """Until the run begins stopping (:meth:`stop`)."""
        await self._stopped.wait()

    def _landed(self) -> None:
        """An attempt came back: counted when the run is stopping (it was out when the stop came)."""
        if self.stop_reason is not None:
            self.landed_after_stop += 1

    def bucket_states(self) -> list[BucketState]:
        return [b.state() for b in self.buckets.values()]

    # -- calls -------------------------------------------------------------------------------
    def key_for(self, req: ChatRequest) -> str:
        prov = self.providers[req.model]
        return cache_key(
            provider=prov.kind,
            model=prov.model,
            base_url=prov.identity,
            messages=req.messages,
            params=req.params,
            sample_index=req.sample_index,
            prompt_hash=req.prompt_hash,
            attempt_tag=req.attempt_tag,
        )

    async def lookup(self, req: ChatRequest) -> tuple[str, ChatResponse | None]:
        """The key of ``req`` and its cached reply (None: a miss, or a reply whose file is gone)."""
        key, hit, _gone = await self._lookup(req)
        return key, hit

    async def _lookup(self, req: ChatRequest) -> tuple[str, ChatResponse | None, bool]:
        """The key, the cached reply, and whether a cached reply was set aside because a file it
        names is missing from the image store."""
        key = self.key_for(req)
        hit = await self.cache.get(key)
        if hit is not None and self.blobs is not None:
            prov = self.providers.get(req.model)
            if prov is not None and prov.stores_outputs:
                # a stat or two per file, off the loop: the store may be a network mount
                if await asyncio.to_thread(self._outputs_gone, prov, hit):
                    return key, None, True
        return key, hit, False

    async def stale_keys(self, calls: Iterable[tuple[ChatRequest, str]]) -> set[str]:
        """Of cached calls (``(request, key)`` pairs), the keys whose cached reply names a file
        missing from the image store: the run makes those calls again (the estimate counts them)."""
        if self.blobs is None:
            return set()
        todo: dict[str, Provider] = {}
        for req, key in calls:
            prov = self.providers.get(req.model)
            if prov is not None and prov.stores_outputs:
                todo[key] = prov
        if not todo:
            return set()
        got = await self.cache.get_many(todo)
        return await asyncio.to_thread(lambda: {k for k, r in got.items() if self._outputs_gone(todo[k], r)})

    def _outputs_gone(self, prov: Provider, hit: ChatResponse) -> bool:
        has = self.blobs.has
        return not all(has(sha) for sha in prov.output_blobs(hit))

    async def call(self, req: ChatRequest) -> CallResult:
        stage = self.stats.stage(req.stage)
        key, hit, gone = await self._lookup(req)
        if hit is not None:
            stage.cache_hits += 1
            stage.done += 1
            return CallResult(req, hit, key=key)
        if self.stopping:
            return CallResult(req, None, NOT_RUN, self.stop_reason, key)
        # the same call already in flight (two approaches sharing a first guess, say): wait for
        # it instead of paying twice; it counts here as a cache hit
        done = None if gone else self._paid.get(key)  # paid in this run after our lookup began
        if done is not None:
            stage.cache_hits += 1
            stage.done += 1
            return CallResult(req, done, key=key)
        twin = self._inflight.get(key)
        if twin is not None:
            first = await asyncio.shield(twin)
            stage.done += 1
            if first.ok:
                stage.cache_hits += 1
                return CallResult(req, first.response, key=key)
            return CallResult(req, None, first.error_kind, first.error, key)
        fut: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        if gone:
            stage.remade += 1
        result = CallResult(req, None, NOT_RUN, "cancelled", key)
        try:
            batch = self.batches is not None and self.batches.takes(req.model, key)
            result = await (self.batches.call(req, stage, key) if batch else self._call(req, stage, key))
            return result
        finally:
            del self._inflight[key]
            if result.response is not None:
                paid = self._paid
                paid[key] = result.response
                if len(paid) > _PAID_KEPT:
                    del paid[next(iter(paid))]  # the oldest (dicts keep insertion order)
            fut.set_result(result)

    async def _call(self, req: ChatRequest, stage, key: str) -> CallResult:
        prov = self.providers[req.model]
        bucket = self._bucket_of[req.model]
        tokens = 0
        hold: _Reservation | None = None
        pricing = self._pricing.get(req.model) if self.cap is not None else None
        counted = None
        if bucket.counts_tokens:
            from ..cost.tokens import count_request

            counted = count_request(prov.kind, billed_model(prov), req.messages, req.params)
            tokens = counted.input + (req.params.max_tokens or 0)
        if pricing is not None and not pricing.free:
            # the cheap bound first; the tokenizer only if that does not fit (see _reserve)
            bound = input_upper_bound(prov.kind, billed_model(prov), req)
            if counted is None:
                hold = self._worst_case(pricing, req, bound, False)
            else:
                hold = self._worst_case(pricing, req, pricing.reserve_input(counted.input, counted.exact, bound), True)
        if stage.first_call is None:
            stage.first_call = time.monotonic()
        meta = RequestMeta(prov.kind, prov.model, prov.identity, req.stage, req.item_id, req.prompt_hash)
        try:
            try:
                resp = await self._attempt(prov, bucket, req, tokens, hold)
            except ProviderError as first:
                try:
                    resp = await self._retry(first, prov, bucket, req, tokens, key, meta, hold)
                except ProviderError as e:
                    stage.failures += 1
                    stage.done += 1
                    return CallResult(req, None, e.kind, prov.describe_error(e), key)
        except _NotLaunched as e:
            return CallResult(req, None, NOT_RUN, str(e), key)
        u = resp.usage
        bucket.on_success(reserved_tokens=tokens, used_tokens=u.input_tokens + u.output_tokens, remaining=resp.rate_headers)
        self.cache.put(key, meta, resp)
        self.count_made(prov)
        stage.calls += 1
        stage.done += 1
        stage.input_tokens += u.input_tokens
        stage.output_tokens += u.output_tokens
        return CallResult(req, resp, key=key)

    def _worst_case(self, pricing: CallPricing, req: ChatRequest, input_tokens: int, counted: bool) -> _Reservation:
        """The reservation a call of ``req`` needs under the cap for ``input_tokens`` (see
        :mod:`.budget`)."""
        o = pricing.output_bound(input_tokens, req.params.max_tokens, req.params)
        cost = pricing.cost(input_tokens, o)
        if cost is None:  # refused at start (runner); an engine driven directly gets this
            cost = float("inf")
        return _Reservation(cost, input_tokens, o, pricing, counted)

    def _count_into(self, prov: Provider, req: ChatRequest, hold: _Reservation) -> None:
        """Replace ``hold``'s byte bound by a tokenizer count (never above the bound)."""
        from ..cost.tokens import count_request

        n = count_request(prov.kind, billed_model(prov), req.messages, req.params)
        exact = self._worst_case(hold.pricing, req, hold.pricing.reserve_input(n.input, n.exact, hold.input_tokens), True)
        hold.amount, hold.input_tokens, hold.output_tokens, hold.counted = (
            exact.amount, exact.input_tokens, exact.output_tokens, True)

    async def _attempt(self, prov: Provider, bucket: Bucket, req: ChatRequest, tokens: int,
                       hold: _Reservation | None = None) -> ChatResponse:
        await bucket.acquire(tokens)
        try:
            if self.stop_reason is not None:  # the run began stopping while this call waited its turn
                raise _NotLaunched(self.stop_reason)
            if hold is not None:
                await self._reserve(prov, req, hold)
        except BaseException:
            bucket.release()
            raise
        # from the reservation to the launch nothing awaits: no other call can take the room
        self.in_flight += 1
        try:
            resp = await prov.generate(req)
        except ProviderError as e:
            self._landed()
            self._settle_failed(prov, req, hold, e)
            raise
        except BaseException:
            if hold is not None:
                self.cap.settle(hold.amount, 0.0)
            raise
        finally:
            self.in_flight -= 1
            bucket.release()
        self._landed()
        self._charge(prov, req, resp, hold)
        return resp

    async def _reserve(self, prov: Provider, req: ChatRequest, hold: _Reservation) -> None:
        """Reserve ``hold`` under the cap, waiting while other reservations may settle; when it
        cannot fit with nothing else outstanding, stop the run (raises _NotLaunched)."""
        cap = self.cap
        while not cap.try_reserve(hold.amount):
            if not hold.counted:  # the cheap bound did not fit: count the text, and try again
                self._count_into(prov, req, hold)
                continue
            if cap.outstanding == 0:
                self.stop(self._cap_message(prov, req, hold))
                raise _NotLaunched(self.stop_reason)
            await cap.wait()
            if self.stop_reason is not None:
                raise _NotLaunched(self.stop_reason)

    def _cap_message(self, prov: Provider, req: ChatRequest, hold: _Reservation) -> str:
        cap = self.cap
        if hold.amount == float("inf"):
            return (f"--max-cost {cap_text(cap.limit)}: model '{req.model}' ({prov.kind} {prov.model}) has no "
                    "known price; set one in the spec (price = {input_per_mtok = ..., output_per_mtok = ...})")
        return (f"the next call of '{req.model}' may cost up to {usd(hold.amount)} ({hold.input_tokens:,} input + "
                f"{hold.output_tokens:,} output tokens at most), more than is left under --max-cost "
                f"{cap_text(cap.limit)} ({usd(cap.spent)} spent)")

    def _settle_failed(self, prov: Provider, req: ChatRequest, hold: _Reservation | None, err: ProviderError) -> None:
        """A failed attempt is charged what it was billed: the usage of a reply that carried no
        answer (a filter, a refusal, a budget spent on reasoning: ``err.usage``, priced as
        billed), else, for a reply that could not be read (it most likely billed), the
        reservation; else nothing.  The reservation, if any, is released."""
        usage = getattr(err, "usage", None)
        usage = usage if isinstance(usage, Usage) else None
        if usage is not None:
            usage, broken = sane_usage(usage)
            cost = usage_usd(prov.kind, billed_model(prov), usage, prov.spec.price) or 0.0
            if broken and hold is not None:
                cost = max(cost, hold.amount)
        elif err.kind in BILLED_FAILURES and hold is not None:
            cost = hold.amount
        else:
            cost = 0.0
        if hold is not None:
            if cost > hold.amount:
                self.stats.stage(req.stage).over_reservation += 1
            self.cap.settle(hold.amount, cost)
        elif self.cap is not None:
            self.cap.charge(cost)
        self.stats.stage(req.stage).cost_usd += cost

    def count_made(self, prov: Provider) -> None:
        """Count a call made to ``prov`` (answered, into the cache) among those at price 0."""
        if self.price_zero and getattr(prov, "alias", None) in self.price_zero:
            self.made_at_price_zero[prov.kind] = self.made_at_price_zero.get(prov.kind, 0) + 1

    def _charge(self, prov: Provider, req: ChatRequest, resp: ChatResponse, hold: _Reservation | None) -> None:
        """Price a reply, settle its reservation, add its cost to the stage (no await: the cap's
        sums and the stage's stay in step).  Usage is sanity-checked: negative counts are raised
        to 0 and, under a cap, the call is charged its reservation (its true cost is unknown); a
        reply longer than the request allowed is charged as claimed and counted."""
        stage = self.stats.stage(req.stage)
        usage, broken = sane_usage(resp.usage)
        if usage != resp.usage:  # negative counts, or a cached / reasoning part larger than its whole
            resp.usage = usage
            stage.usage_anomalies += 1
        # more output than the request allowed (an image generator's max_tokens bounds nothing; a
        # Gemini thinking model may add its thoughts)
        allowed = hold.output_tokens if hold is not None else (
            None if hasattr(prov, "expected_output_tokens")
            else max_billed_output(prov.kind, billed_model(prov), req.params.max_tokens, req.params))
        if allowed is not None and usage.output_tokens > allowed:
            stage.usage_anomalies += 1
        # as billed: cached input at the cached rate, reasoning and thoughts as output
        cost = usage_usd(prov.kind, billed_model(prov), usage, prov.spec.price) or 0.0
        if hold is not None:
            if broken:
                cost = max(cost, hold.amount)
            if cost > hold.amount:
                stage.over_reservation += 1
            self.cap.settle(hold.amount, cost)
        elif self.cap is not None:
            self.cap.charge(cost)
        resp.cost_usd = cost
        stage.cost_usd += cost
        self.savings.note(prov.kind, billed_model(prov), prov.spec.price, usage, cost)  # prompt-cache savings

    def _note_failure(self, err: ProviderError, prov: Provider, bucket: Bucket, req: ChatRequest, key: str, meta: RequestMeta) -> None:
        """Book-keeping for one failed attempt; raises RunStopped for fatal errors."""
        stage = self.stats.stage(req.stage)
        self.cache.record_failure(key, meta, err.kind, err.status, err.record_text())  # with an excerpt of a reply that had no answer
        if isinstance(err, FATAL_ERRORS):
            msg = prov.describe_error(err)
            self.fatal = self.fatal or msg
            self.stop(msg)
            raise RunStopped(msg)
        if isinstance(err, RateLimited):
            stage.rate_limited += 1
            bucket.on_rate_limited(err.retry_after, wait_reason(err))
        elif err.retryable:
            bucket.on_failure(str(err))

    async def _backoff(self, bucket: Bucket, err: BaseException, seconds: float) -> None:
        """Sleep before a retry, counted on the bucket for the display; raises RunStopped (a fatal
        error stopped the run) or _NotLaunched (it is stopping otherwise) instead of retrying."""
        bucket.backing_off += 1
        bucket.backoff_reason = wait_reason(err)
        try:
            await sleep_unless(self._stopped, seconds)
        finally:
            bucket.backing_off -= 1
        if self.fatal:
            raise RunStopped(self.fatal)
        if self.stop_reason is not None:
            raise _NotLaunched(self.stop_reason)

    async def _retry(self, first: ProviderError, prov: Provider, bucket: Bucket, req: ChatRequest,
                     tokens: int, key: str, meta: RequestMeta, hold: _Reservation | None = None) -> ChatResponse:
        stage = self.stats.stage(req.stage)
        self._note_failure(first, prov, bucket, req, key, meta)
        if not first.retryable:
            raise first
        max_attempts = prov.spec.limits.max_attempts
        if max_attempts <= 1:
            raise first
        await self._backoff(bucket, first, self.retry_wait.wait_for(first, 1))

        async def before(_state) -> None:
            stage.retries += 1

        async def sleep(seconds: float) -> None:
            await self._backoff(bucket, last[0], seconds)

        last: list[BaseException] = [first]
        retrying = AsyncRetrying(
            stop=stop_after_attempt(max_attempts - 1),
            wait=self.retry_wait,
            retry=retry_if_exception(is_retryable),
            before=before,
            sleep=sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                if self.fatal:
                    raise RunStopped(self.fatal)
                try:
                    return await self._attempt(prov, bucket, req, tokens, hold)
                except ProviderError as e:
                    last[0] = e
                    self._note_failure(e, prov, bucket, req, key, meta)  # RunStopped if fatal
                    raise
        raise first  # unreachable: reraise=True re-raises the last error
