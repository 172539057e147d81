"""The hard cost cap: a call is launched only when its worst case still fits under the cap.

Before a paid call goes out, the engine reserves its worst-case cost: the input tokens the
request is known to hold plus the most output it may produce, at the model's price
(:class:`CallPricing`).  A call whose reservation would take ``spent + reserved`` past the cap
is not launched.  When the reply arrives the reservation is released and the real cost charged
(:meth:`CostCap.settle`), so what is spent never passes the cap unless a server bills more than
its request allowed (charged as claimed, and counted).

The most output a call may produce, first match wins:

1. an image generator's output for one image at its size and quality (the gpt-image-1 table of
   :func:`judgekit.cost.images.generation_output_tokens`; ``max_tokens`` does not bound it);
2. the request's ``max_tokens``, plus a Gemini thinking model's thinking budget (the request's, else
   the model's largest: :func:`judgekit.cost.reasoning.max_billed_output`; thoughts are billed as
   output and may come on top of ``max_output_tokens``).  An OpenAI reasoning model's reasoning is
   inside ``max_completion_tokens``, so ``max_tokens`` bounds it;
3. the model's context window less the input (``genai-prices``), since no reply is longer;
4. :data:`DEFAULT_OUTPUT_BOUND`.

Input tokens, two steps (a BPE count of a long prompt costs about a millisecond, on the event
loop, for every paid call): first :func:`input_upper_bound`, the UTF-8 bytes of the text (a
byte-level BPE token covers at least one byte) plus the images' tokens and the chat framing,
which costs microseconds and is never below the real count; only when that reservation does not
fit is the text counted (:func:`judgekit.cost.tokens.count_request`) and the call reserved at the
count, so a run near its cap loses nothing to the cheap bound.  A count made with a stand-in
tokenizer (``exact=False``: Gemini, open models) is raised by :data:`INEXACT_INPUT_MARGIN`, and
never above the byte bound.  Usage from a server is sanity-checked (:func:`sane_usage`): a negative count is a
broken reply whose cost is unknown, so it is charged its reservation, never less than 0.

Prices are those of the model that answers (``ModelSpec.base_model``: an Azure deployment's
``serves``), and a reply is charged as billed (:func:`judgekit.cost.prices.usage_usd`): its
cached input tokens at the cached rate, every output token (reasoning and thoughts included) at
the output rate.  The reservation prices all input at the full input rate, or at the cache-write
rate where the model has a higher one (Anthropic's 5-minute writes, 1.25x: any of a request's input
up to its last prompt-cache mark may be written; an override's cached rate if set above its input
rate), so it stays a worst case.

Batches (:mod:`judgekit.engine.batching`): a batch-mode alias's calls are priced at the batch
rates (``CallPricing.batch``), and a wave of them is reserved request by request before it is
submitted; the requests that do not fit are not submitted and the run stops, as it does for a
live call that cannot fit.

Waiting: when a call does not fit while other reservations are outstanding, it waits for one of
them to settle (real costs are usually far below the worst case) and checks again.  When it does
not fit with nothing else outstanding, nothing more can ever fit in order, and the run stops.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass, replace

from ..cost.images import image_tokens
from ..cost.prices import PriceOverride, context_window, price_usd
from ..cost.reasoning import thinking_allowance
from ..cost.tokens import CHAT_REPLY_PRIMER_TOKENS, CHAT_TOKENS_PER_MESSAGE, UNKNOWN_IMAGE_SIZE
from ..types import ChatRequest, TextPart, Usage

__all__ = ["CostCap", "CallPricing", "sane_usage", "input_upper_bound", "usd", "cap_text", "cap_arg", "DEFAULT_OUTPUT_BOUND", "INEXACT_INPUT_MARGIN",
           "BILLED_FAILURES"]

#: the output bound of a call with no max_tokens whose model's context window is unknown: the
#: largest max output of common chat models (GPT-4.1 writes at most 32,768 tokens, GPT-4o
#: 16,384).  Set ``max_tokens`` for a bound that is yours; a longer reply is charged as claimed.
DEFAULT_OUTPUT_BOUND = 32_768
#: input counted with a stand-in tokenizer is reserved at this multiple (counts are usually within
#: a few per cent, 25 % leaves room for odd texts)
INEXACT_INPUT_MARGIN = 1.25
#: failure kinds of an attempt the server answered (200) with a reply that could not be read: it
#: most likely billed the tokens, so under a cap the attempt is charged its reservation
BILLED_FAILURES = frozenset({"malformed_reply", "empty_reply"})


def usd(v: float) -> str:
    """Dollars with enough digits to read a small amount: two significant digits or four decimals,
    two decimals at least (``$0.0001``, ``$0.000012``, ``$0.0713``, ``$0.50``, ``$5.00``,
    ``$1,234.57``); a non-zero amount never reads ``$0.00``."""
    if v == 0 or not math.isfinite(v) or abs(v) >= 1:
        return f"${v:,.2f}"
    digits = max(4, 1 - math.floor(math.log10(abs(v))))
    return "$" + _trim(f"{v:.{digits}f}")


def cap_text(v: float) -> str:
    """A cap exactly as given (``$0.0001``, ``$0.00012345``, ``$5.00``): the shortest decimal that
    reads back as ``v``, with two decimals at least, never in exponent form."""
    from decimal import Decimal

    if not math.isfinite(v):
        return f"${v}"
    whole, _, frac = _trim(format(Decimal(repr(float(v))), "f")).partition(".")
    return f"${int(whole):,}.{frac}"


def cap_arg(v: float) -> str:
    """A cap as a ``--max-cost`` argument that reads back as exactly ``v`` (``0.0001``, ``5``)."""
    from decimal import Decimal

    text = format(Decimal(repr(float(v))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _trim(text: str) -> str:
    """Trailing zeros off a decimal fraction, keeping two decimals."""
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0").ljust(2, "0")
    return f"{whole}.{frac}"


def sane_usage(usage: Usage) -> tuple[Usage, bool]:
    """``usage`` with negative counts raised to 0 (and the cached and reasoning parts kept within
    the input and output), and whether any count was negative (the reply's true cost is then
    unknown)."""
    i, o = usage.input_tokens, usage.output_tokens
    c, r = usage.cached_input_tokens, usage.reasoning_tokens
    if i >= 0 and o >= 0 and 0 <= c <= i and 0 <= r <= o:
        return usage, False
    broken = i < 0 or o < 0 or c < 0 or r < 0
    i, o = max(0, i), max(0, o)
    return replace(usage, input_tokens=i, output_tokens=o, cached_input_tokens=min(max(0, c), i),
                   reasoning_tokens=min(max(0, r), o)), broken


def input_upper_bound(provider: str, model: str, request: ChatRequest) -> int:
    """Input tokens ``request`` cannot exceed: UTF-8 bytes of its text, its images' tokens (an
    image of unknown size at :data:`~judgekit.cost.tokens.UNKNOWN_IMAGE_SIZE`) and OpenAI's chat
    framing.  Microseconds: ``len`` of an ASCII string is its byte count."""
    total = CHAT_REPLY_PRIMER_TOKENS
    detail = request.params.image_detail
    for message in request.messages:
        total += CHAT_TOKENS_PER_MESSAGE
        for part in message.parts:
            if isinstance(part, TextPart):
                text = part.text
                total += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            elif part.width > 0 and part.height > 0:
                total += image_tokens(provider, model, part.width, part.height, detail)
            else:
                total += image_tokens(provider, model, *UNKNOWN_IMAGE_SIZE, detail)
    return total


@dataclass(frozen=True, slots=True)
class CallPricing:
    """How one model alias's calls are priced and bounded under a cap."""

    provider: str  # the provider's kind, as prices know it
    model: str
    override: PriceOverride | None
    free: bool  # priced at 0 whatever the tokens (simulator, local models): no reservation
    known: bool  # a price is known (the spec's, or genai-prices')
    image_output: int | None  # an image generator's output tokens per image, when priced by token
    context: int | None  # context window, when genai-prices knows it
    batch: bool = False  # priced at the batch rates
    #: the dearest way input is billed, when dearer than plain input: "write" (a prompt-cache
    #: write: Claude's 1.25x) or "read" (an override's cached rate set above its input rate)
    dearest_input: str = ""

    @classmethod
    def of(cls, provider: str, model: str, override: PriceOverride | None,
           image_output: int | None = None, *, batch: bool = False) -> "CallPricing":
        big = price_usd(provider, model, 1_000_000, 1_000_000, override, batch=batch)
        dearest, top = "", big
        if big is not None:
            for way, cached, written in (("write", 0, 1_000_000), ("read", 1_000_000, 0)):
                cost = price_usd(provider, model, 1_000_000, 1_000_000, override, cached, written, batch=batch)
                if cost is not None and top is not None and cost > top:
                    dearest, top = way, cost
        return cls(provider, model, override, free=big == 0.0, known=big is not None,
                   image_output=image_output, context=context_window(provider, model), batch=batch,
                   dearest_input=dearest)

    def output_bound(self, input_tokens: int, max_tokens: int | None, params=None) -> int:
        """The most output tokens one call may be billed for (see the module docstring);
        ``params``: the request's :class:`~judgekit.types.GenParams` (a thinking budget)."""
        if self.image_output is not None:
            return self.image_output
        if max_tokens is not None:
            return max_tokens + thinking_allowance(self.provider, self.model, params)
        if self.context is not None:
            return max(0, self.context - input_tokens)
        return DEFAULT_OUTPUT_BOUND

    def reserve_input(self, input_tokens: int, exact: bool, bound: int | None = None) -> int:
        """Input tokens to reserve for a count (raised when approximate, never above ``bound``)."""
        n = input_tokens if exact else math.ceil(input_tokens * INEXACT_INPUT_MARGIN)
        return n if bound is None else min(n, bound)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The most ``input_tokens`` and ``output_tokens`` may cost (every input token billed
        the dearest way: :attr:`dearest_input`)."""
        way = self.dearest_input
        return price_usd(self.provider, self.model, input_tokens, output_tokens, self.override,
                         input_tokens if way == "read" else 0, input_tokens if way == "write" else 0, batch=self.batch)


class CostCap:
    """``spent + reserved <= limit``, kept on the event loop (every method but :meth:`wait` is
    synchronous, so a check and the launch that follows it cannot interleave with other calls)."""

    __slots__ = ("limit", "spent", "reserved", "outstanding", "_waiters")

    def __init__(self, limit: float) -> None:
        if not limit >= 0:  # also refuses NaN
            raise ValueError(f"a cost cap must be a number >= 0, got {limit!r}")
        self.limit = float(limit)
        self.spent = 0.0
        self.reserved = 0.0
        self.outstanding = 0  # reservations not settled yet
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def left(self) -> float:
        return self.limit - self.spent - self.reserved

    def try_reserve(self, amount: float) -> bool:
        """Reserve ``amount`` if ``spent + reserved + amount`` stays within the cap."""
        if not amount >= 0:
            raise ValueError(f"a reservation must be >= 0, got {amount!r}")
        if self.spent + self.reserved + amount > self.limit:
            return False
        self.reserved += amount
        self.outstanding += 1
        return True

    def settle(self, reserved: float, charge: float) -> None:
        """End a reservation of ``reserved``, charging ``charge`` (0 for an attempt not billed)."""
        self.outstanding -= 1
        # the sum of floats drifts; with nothing outstanding the exact value is 0
        self.reserved = self.reserved - reserved if self.outstanding > 0 else 0.0
        if self.reserved < 0:
            self.reserved = 0.0
        self.spent += max(0.0, charge)
        self.wake()

    def charge(self, amount: float) -> None:
        """Add a cost that had no reservation (never below 0)."""
        self.spent += max(0.0, amount)

    async def wait(self) -> None:
        """Until a reservation settles (or :meth:`wake` is called)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        finally:
            if not fut.done():
                fut.cancel()

    def wake(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
