"""The simulator's automatic prompt cache: cached prompt tokens for repeated prefixes, as OpenAI's
chat completions and Gemini's ``generateContent`` report them.

What the real APIs do (``shared/reference/batch_and_caching.md``): OpenAI caches a prompt of
1,024 tokens or more by itself, in 128-token steps of the longest prefix it saw before (text and
images must match exactly), evicts it after 5-10 idle minutes, and reports the hit in
``usage.prompt_tokens_details.cached_tokens`` (part of ``prompt_tokens``); Gemini 2.5+ caches
implicitly, from 1,024 prompt tokens (Flash) or 4,096 (Pro), and reports
``usageMetadata.cachedContentTokenCount``.

The simulator's model of it
---------------------------
- **Tokens** are the simulator's own estimate (:func:`judgekit.sim.protocol.estimate_prompt_tokens`):
  the prompt's texts joined by newlines, four characters a token, and 85 tokens an image.  A point
  in the prompt sits at token ``chars // 4 + 85 * images`` of the content before it (``chars``
  counts the newline before every text part but the first), so the prompt's last point is at most
  its ``prompt_tokens``, and a cached count never exceeds them.
- **The prefix** is the request's content in order, as the request hash reads it: each message's
  role, its text parts (where each starts, an empty one too) and its images (the image's bytes or
  URL), nothing else (not the generation parameters: the real caches do not depend on them
  either).  A step boundary ``T`` (a multiple
  of ``prefix_cache_step``, at least the model's minimum) is the earliest point of the content
  whose position reaches ``T``: inside a text part after the right number of characters, or
  inside an image (an image's 85 tokens are cut like text: two prompts that share the image
  share all of them).  Each boundary's key is a hash of the model, the API and the content up to
  it, so two prompts have the same key at ``T`` exactly when they agree up to there.  This is an
  approximation of a tokenizer's boundaries (the real ones move with the words); the step, the
  minimum and the "longest prefix" rule are the providers'.
- **A hit** is the largest boundary of the request whose key is in the cache: the request's
  ``cached_tokens``.  The cache holds a boundary from the moment the first request with it is
  *answered* (its reply built), and a request looks the cache up as it *starts* (when it is
  admitted, before the simulated latency): two identical requests in flight together both miss,
  as on the real APIs, and the second of two sent one after the other hits.  Requests in a batch
  (no latency) are answered one after another, each seeing those answered before it.
- **Lifetime**: a boundary lives ``prefix_cache_ttl_s`` after it was last used (written or hit);
  at most ``KEEP_BOUNDARIES`` are kept (the least recently used go first).

The clock (:attr:`PrefixCache.clock`, ``time.monotonic``) is an attribute, so a test can drive
lifetimes by hand.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["GEMINI_FLASH_MIN_TOKENS", "GEMINI_PRO_MIN_TOKENS", "KEEP_BOUNDARIES", "OPENAI_MIN_TOKENS", "PrefixCache",
           "PrefixHit", "boundaries", "minimum_tokens"]

#: OpenAI's minimum prompt for its cache
OPENAI_MIN_TOKENS = 1024
#: Gemini 2.5 Flash's minimum for implicit caching (and any Gemini name without "pro")
GEMINI_FLASH_MIN_TOKENS = 1024
#: Gemini 2.5 Pro's minimum for implicit caching (any Gemini name with "pro")
GEMINI_PRO_MIN_TOKENS = 4096
#: boundaries kept at most (LRU beyond): ~100 bytes each
KEEP_BOUNDARIES = 200_000

_TOKENS_PER_IMAGE = 85  # judgekit.sim.protocol.estimate_prompt_tokens's figure
_ROLE = b"\x1erole:"
_TEXT = b"\x1ft:"
_IMAGE = b"\x1fi:"
_SEP = b"\x1d"


def minimum_tokens(api: str, model: str, overrides: dict[str, int]) -> int:
    """The smallest prompt a model caches: ``overrides[model]`` when set, else 4,096 for a Gemini
    name with ``pro`` in it and 1,024 for every other (OpenAI, Azure, Gemini Flash)."""
    explicit = overrides.get(model)
    if explicit is not None:
        return explicit
    if api == "gemini" and "pro" in model.lower():
        return GEMINI_PRO_MIN_TOKENS
    return GEMINI_FLASH_MIN_TOKENS if api == "gemini" else OPENAI_MIN_TOKENS


def _segments(content: Iterable[bytes]) -> Iterable[bytes]:
    """The request hash's content chunks one part each (Gemini's string system instruction is
    hashed as one ``role`` + ``text`` chunk: split here)."""
    for chunk in content:
        if chunk.startswith(_ROLE):
            cut = chunk.find(_TEXT)
            if cut > 0:
                yield chunk[:cut]
                yield chunk[cut:]
                continue
        yield chunk


def boundaries(namespace: bytes, content: Iterable[bytes], *, step: int, first: int) -> list[tuple[int, bytes]]:
    """``(T, key)`` of every step boundary ``T`` of a prompt (``first <= T``, ``T`` a multiple of
    ``step``, ``T`` at most the prompt's last point), in increasing order; see the module
    docstring.  ``content`` is the request's content chunks as the request hash reads them
    (``_SimRequest.content``): ``\\x1erole:NAME``, ``\\x1ft:TEXT``, ``\\x1fi:IMAGE``."""
    if step < 1:
        raise ValueError("step must be at least 1")
    t = max(step, -(-first // step) * step)
    h = hashlib.sha256(namespace)
    chars = images = texts = 0
    out: list[tuple[int, bytes]] = []
    for chunk in _segments(content):
        if chunk.startswith(_TEXT):
            s = chunk[len(_TEXT):].decode("utf-8", "surrogatepass")
            sep = 1 if texts else 0
            texts += 1
            end = chars + sep + len(s)
            h.update(_SEP + _TEXT)
            done = 0  # characters of s hashed so far
            while 4 * (t - _TOKENS_PER_IMAGE * images) <= end:
                k = max(0, 4 * (t - _TOKENS_PER_IMAGE * images) - chars - sep)
                h.update(s[done:k].encode("utf-8", "surrogatepass"))
                done = k
                out.append((t, h.copy().digest()))
                t += step
            h.update(s[done:].encode("utf-8", "surrogatepass"))
            chars = end
        elif chunk.startswith(_IMAGE):
            start = chars // 4 + _TOKENS_PER_IMAGE * images
            h.update(_SEP + chunk)
            while t <= start + _TOKENS_PER_IMAGE:
                cut = h.copy()
                cut.update(b"\x1c%d" % (t - start))
                out.append((t, cut.digest()))
                t += step
            images += 1
        else:  # a role (or anything else the hash reads): part of the prefix, no tokens
            h.update(_SEP + chunk)
    return out


@dataclass(slots=True)
class _Entry:
    written: float
    """When the first request with this prefix was answered."""
    expires: float
    """Last use plus the lifetime."""


@dataclass(frozen=True, slots=True)
class PrefixHit:
    """What :meth:`PrefixCache.use` found and wrote."""

    cached_tokens: int
    """The longest cached boundary (0: none)."""
    boundaries: int
    """The request's boundaries (now all in the cache)."""


class PrefixCache:
    """Step boundaries of prompts answered before (see the module docstring)."""

    def __init__(self, *, ttl_s: float, step: int, keep: int = KEEP_BOUNDARIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.step = step
        self.keep = keep
        #: seconds, for lifetimes and for when a request started (tests pass a fake one)
        self.clock = clock
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def use(self, api: str, model: str, content: Iterable[bytes], *, minimum: int,
            started: float | None = None) -> PrefixHit:
        """The cached tokens of a request being answered now that started at ``started`` (None:
        now), and its boundaries written to the cache (a boundary already there is refreshed)."""
        now = self.clock()
        seen = now if started is None else min(started, now)
        namespace = b"judgekit-sim-prefix" + _SEP + api.encode() + _SEP + model.encode()
        marks = boundaries(namespace, content, step=self.step, first=minimum)
        cached = 0
        for t, key in reversed(marks):
            e = self._entries.get(key)
            if e is not None and e.written <= seen < e.expires:
                cached = t
                break
        expires = now + self.ttl_s
        entries = self._entries
        for _, key in marks:
            e = entries.get(key)
            if e is None or e.expires <= now:
                entries[key] = _Entry(now, expires)
            else:
                e.expires = expires
            entries.move_to_end(key)
        while len(entries) > self.keep:
            entries.popitem(last=False)
        return PrefixHit(cached, len(marks))
