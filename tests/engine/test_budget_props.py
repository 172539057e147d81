"""Property tests for the cost cap's guards: the books, the usage check and the way caps are written."""

import asyncio
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.engine.budget import CallPricing, CostCap, cap_arg, cap_text, sane_usage, usd
from judgekit.types import Usage

PROPS = settings(max_examples=400, deadline=None, derandomize=True)

amounts = st.floats(min_value=0, max_value=50, allow_nan=False, allow_infinity=False)


@PROPS
@given(limit=amounts, ops=st.lists(st.tuples(amounts, st.floats(min_value=-5, max_value=1), st.booleans()),
                                   max_size=60))
def test_spent_plus_reserved_never_passes_the_cap(limit, ops):
    """Whatever is reserved, and whatever fraction of it is charged (negative charges included: a
    broken reply), the books never pass the cap and never go below zero."""
    cap = CostCap(limit)
    held: list[float] = []
    spent_before = 0.0
    for amount, fraction, settle_first in ops:
        if settle_first and held:
            reserved = held.pop(0)
            cap.settle(reserved, reserved * fraction)
        elif cap.try_reserve(amount):
            held.append(amount)
        assert cap.spent + cap.reserved <= limit * (1 + 1e-12) + 1e-12
        assert cap.spent >= spent_before and cap.reserved >= 0
        assert cap.outstanding == len(held)
        spent_before = cap.spent
    for reserved in held:
        cap.settle(reserved, reserved)
    assert cap.reserved == 0 and cap.outstanding == 0 and cap.spent <= limit * (1 + 1e-12) + 1e-12


@PROPS
@given(i=st.integers(-(2**40), 2**40), o=st.integers(-(2**40), 2**40))
def test_sane_usage_is_never_negative_and_flags_what_it_changed(i, o):
    usage, broken = sane_usage(Usage(i, o))
    assert usage.input_tokens >= 0 and usage.output_tokens >= 0
    assert broken == (i < 0 or o < 0)
    if not broken:
        assert usage == Usage(i, o)


@PROPS
@given(v=st.floats(min_value=1e-12, max_value=1e9, allow_nan=False))
def test_a_cap_reads_back_exactly_and_no_amount_shows_as_zero(v):
    assert float(cap_arg(v)) == v
    assert "e" not in cap_arg(v).lower()
    shown = cap_text(v)
    assert float(shown[1:].replace(",", "")) == v
    money = usd(v)
    assert money.startswith("$") and float(money[1:].replace(",", "")) > 0
    assert math.isclose(float(money[1:].replace(",", "")), v, rel_tol=0.06, abs_tol=0.005)


@PROPS
@given(window=st.one_of(st.none(), st.integers(1, 2_000_000)), max_tokens=st.one_of(st.none(), st.integers(1, 10**6)),
       image=st.one_of(st.none(), st.integers(1, 10_000)), inp=st.integers(0, 3_000_000))
def test_the_output_bound_is_what_the_request_or_the_model_allows(window, max_tokens, image, inp):
    p = CallPricing("openai", "m", None, free=False, known=True, image_output=image, context=window)
    bound = p.output_bound(inp, max_tokens)
    assert bound >= 0
    if image is not None:
        assert bound == image
    elif max_tokens is not None:
        assert bound == max_tokens
    elif window is not None:
        assert bound == max(0, window - inp)


def test_waiters_wake_when_a_reservation_settles():
    async def go():
        cap = CostCap(1.0)
        assert cap.try_reserve(0.8)
        assert not cap.try_reserve(0.5)
        waiter = asyncio.ensure_future(cap.wait())
        await asyncio.sleep(0)
        assert not waiter.done()
        cap.settle(0.8, 0.1)
        await asyncio.sleep(0)
        assert waiter.done() and cap.try_reserve(0.5)

    asyncio.run(go())


@settings(max_examples=200, deadline=None, derandomize=True)
@given(texts=st.lists(st.text(max_size=400), min_size=1, max_size=4),
       model=st.sampled_from(["gpt-4o", "gpt-4", "gemini-2.0-flash", "some-open-model"]))
def test_the_cheap_input_bound_is_never_below_the_tokenizer_count(texts, model):
    """The engine reserves the byte bound without counting when it fits: it must never be below
    what the tokenizer counts, whatever the text (any Unicode, surrogates, whitespace runs)."""
    from judgekit.cost.tokens import count_request
    from judgekit.engine.budget import input_upper_bound
    from judgekit.types import ChatRequest, GenParams, Message

    request = ChatRequest("a", tuple(Message.user(t) for t in texts), GenParams(max_tokens=8))
    provider = "gemini" if model.startswith("gemini") else "openai"
    assert input_upper_bound(provider, model, request) >= count_request(provider, model, request.messages,
                                                                         request.params).input
