"""Cache keys: a sha256 of everything that changes a model's response, and nothing else.

A key is the hex sha256 of this canonical byte encoding (format tag ``judgekit-key/1``)::

    JSON header  ["judgekit-key/1", provider, model, base_url, sample_index,
                  prompt_hash, attempt_tag, params]          (compact, keys sorted, UTF-8)
    per message  "\\nM<len>:<role>"
    per part     "\\nT<len>:<utf-8 text>"   text, length-prefixed in bytes
                 "\\nI<sha256 hex>"         image, by the sha256 of its bytes only

The header is JSON (so every string is escaped) and every message field is length-prefixed,
so no two different inputs share an encoding.

**In the key**

- ``provider`` -- the provider's registry name (``openai``, ``gemini``, ...).
- ``model`` -- the model id sent to the API (resolve the spec's alias first: two aliases of
  one model share entries).
- ``base_url`` -- the endpoint, with surrounding whitespace and trailing ``/`` removed; pass
  the resolved URL (a provider's default URL spelled out and left empty are different keys).
- ``messages`` -- roles, order, text and images in order; an image counts by
  ``ImagePart.sha256`` only, so re-encoding the bytes or moving the file keeps the key.
- ``params`` -- ``GenParams.key_dict()``: temperature, max_tokens, top_p, seed, image_detail
  and ``extra`` (sorted by name). ``temperature`` / ``top_p`` given as ints are read as floats,
  so ``temperature=1`` and ``temperature=1.0`` share a key.
- ``sample_index`` -- so ``n`` samples of one prompt are ``n`` entries.
- ``prompt_hash`` -- the hash of the prompt template file that built the messages.
- ``attempt_tag`` -- set for a deliberate re-ask (``"reask1"``); ``""`` for the first ask.

**Not in the key**: API keys and other credentials, headers, timeouts, retry and backoff
settings, rate and concurrency limits, the spec's model alias, ``stage``, ``item_id``,
run ids, image mime type, file names and dimensions, and the wall clock.

:func:`cache_key` costs a few microseconds for a 2 KB message with two images (one sha256
fed incrementally); it runs once per planned call.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable

from judgekit.types import GenParams, ImagePart, Message, TextPart

__all__ = ["KEY_FORMAT", "cache_key", "messages_fingerprint", "params_canonical"]

#: version tag hashed into every key; changing it invalidates every cached response
KEY_FORMAT = "judgekit-key/1"

_encode_json: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str
).encode


def params_canonical(params: GenParams) -> dict[str, Any]:
    """``params.key_dict()`` with ``temperature`` and ``top_p`` normalised to floats."""
    d = params.key_dict()
    for name in ("temperature", "top_p"):
        v = d.get(name)
        if type(v) is int:
            d[name] = float(v)
    return d


def _feed_messages(update: Callable[[bytes], object], messages: tuple[Message, ...]) -> None:
    for m in messages:
        role = m.role.encode()
        update(b"\nM%d:%s" % (len(role), role))
        for p in m.parts:
            if type(p) is TextPart:
                b = p.text.encode()
                update(b"\nT%d:" % len(b))
                update(b)
            elif isinstance(p, ImagePart):
                update(b"\nI" + p.sha256.encode())
            elif isinstance(p, TextPart):  # a subclass
                b = p.text.encode()
                update(b"\nT%d:" % len(b))
                update(b)
            else:
                raise TypeError(f"cannot key a message part of type {type(p).__name__}")


def cache_key(
    *,
    provider: str,
    model: str,
    base_url: str,
    messages: tuple[Message, ...],
    params: GenParams,
    sample_index: int,
    prompt_hash: str,
    attempt_tag: str = "",
) -> str:
    """The hex sha256 cache key of one call; see the module docstring for what it covers."""
    header = _encode_json(
        [
            KEY_FORMAT,
            provider,
            model,
            base_url.strip().rstrip("/"),
            int(sample_index),
            prompt_hash,
            attempt_tag,
            params_canonical(params),
        ]
    )
    h = hashlib.sha256(header.encode())
    _feed_messages(h.update, messages)
    return h.hexdigest()


def messages_fingerprint(messages: tuple[Message, ...]) -> str:
    """The hex sha256 of the messages alone (roles, text, image hashes), e.g. to spot duplicates."""
    h = hashlib.sha256(b"judgekit-messages/1")
    _feed_messages(h.update, messages)
    return h.hexdigest()
