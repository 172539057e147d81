"""Input token counts of a request, computed offline before a run spends anything.

Text is counted with ``bpe-openai``, an exact Rust port of OpenAI's ``o200k_base`` and
``cl100k_base`` BPE tokenizers that ships its vocabularies (``tiktoken`` downloads them, so it
is not used).  A model whose tokenizer is not public (Gemini, Claude, open models) is counted
with ``o200k_base`` and the count is marked ``exact=False``: an approximation, usually within a
few per cent for English.  Images are counted by the providers' rules (:mod:`.images`).

The tokenizers load lazily on the first count (about 0.6 s for o200k_base, once per process)
and are cached; after that a 2,000-word text counts in about 0.2 ms.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ..types import GenParams, Message, TextPart
from ._names import base_name
from .images import GEMINI_PROVIDERS, image_tokens

__all__ = [
    "Encoding",
    "TokenCount",
    "RequestTokens",
    "tokenizer_for",
    "count_text",
    "image_tokens",
    "count_request",
    "FALLBACK_ENCODING",
    "CHAT_TOKENS_PER_MESSAGE",
    "CHAT_REPLY_PRIMER_TOKENS",
    "UNKNOWN_IMAGE_SIZE",
]

Encoding = Literal["o200k_base", "cl100k_base"]

#: the encoding that approximates a model whose tokenizer is unknown
FALLBACK_ENCODING: Encoding = "o200k_base"
#: OpenAI chat format: every message is wrapped in ``<|start|>{role}...<|end|>``
CHAT_TOKENS_PER_MESSAGE = 3
#: OpenAI chat format: every reply is primed with ``<|start|>assistant<|message|>``
CHAT_REPLY_PRIMER_TOKENS = 3
#: the size assumed for an image whose header gave none: the largest an OpenAI image can bill
#: (8 tiles, or 1536 patches), so an unknown size never lowers an estimate
UNKNOWN_IMAGE_SIZE = (2048, 768)

_O200K = re.compile(r"(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4)(?:$|[-.])")
_CL100K = re.compile(r"(?:gpt-4|gpt-3\.5|gpt-35)(?:$|[-.])")


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A token count; ``exact`` is False when it was approximated with another tokenizer."""

    n: int
    exact: bool


@dataclass(frozen=True, slots=True)
class RequestTokens:
    """The input tokens a request will be billed for; ``exact`` as in :class:`TokenCount`, and
    also False when an image's size was unknown (see :data:`UNKNOWN_IMAGE_SIZE`)."""

    input: int
    exact: bool


@lru_cache(maxsize=1024)
def tokenizer_for(model: str) -> Encoding | None:
    """The public encoding ``model`` uses, or None when its tokenizer is unknown.

    Accepts provider prefixes (``openai/gpt-4o``), date suffixes (``gpt-4o-2024-08-06``) and
    fine-tune names (``ft:gpt-4o-mini:org::id``).
    """
    name = base_name(model)
    if _O200K.match(name):
        return "o200k_base"
    if _CL100K.match(name):
        return "cl100k_base"
    return None


def _bindings():
    """bpe_openai's compiled module, loaded without running the package's ``__init__``, which
    decodes three vocabularies in Python (1.5-3 s at every start) for its tiktoken-style wrapper;
    the Rust tokenizer carries its own.  Registered under its real name, so a later ``import
    bpe_openai`` reuses it (a PyO3 module is initialised once per process)."""
    import importlib.machinery
    import importlib.util
    import sys

    name = "bpe_openai._bindings"
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    package = importlib.util.find_spec("bpe_openai")  # finds the folder, runs nothing
    for folder in (package.submodule_search_locations or []) if package else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"_bindings{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader(name, str(path))
                spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                mod = importlib.util.module_from_spec(spec)
                sys.modules[name] = mod
                try:
                    loader.exec_module(mod)
                except BaseException:
                    del sys.modules[name]
                    raise
                return mod
    # an unusual install: the ordinary import (its vocabularies are read through a deprecated
    # importlib.resources call: not ours to report)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from bpe_openai import _bindings as mod
    return mod


@lru_cache(maxsize=None)
def _counter(encoding: Encoding) -> Callable[[str], int]:
    """A function counting ``encoding`` tokens in a text, built once per encoding."""
    try:
        # The Rust tokenizer behind bpe_openai.Encoding: counts without building a token list
        # and without the wrapper's 200k-token chunk limit.
        return _bindings().tokenizer_for_encoding(encoding).count
    except (ImportError, AttributeError):  # pragma: no cover - a bpe-openai without the binding
        from bpe_openai import get_encoding

        enc = get_encoding(encoding)
        return lambda text: len(enc.encode_ordinary(text))


def _count(counter: Callable[[str], int], text: str) -> int:
    if not text:
        return 0
    try:
        return counter(text)
    except UnicodeEncodeError:  # lone surrogates: count them as the replacement character
        return counter(text.encode("utf-8", "replace").decode("utf-8"))


def count_text(model: str, text: str) -> TokenCount:
    """Tokens in ``text`` for ``model`` (special-token strings count as plain text, as an API
    reads them); an unknown tokenizer is approximated with :data:`FALLBACK_ENCODING`."""
    enc = tokenizer_for(model)
    return TokenCount(_count(_counter(enc or FALLBACK_ENCODING), text), enc is not None)


def count_request(
    provider: str, model: str, messages: Iterable[Message], params: GenParams
) -> RequestTokens:
    """Input tokens of a chat request: every text part, every image (by ``params.image_detail``)
    and, for OpenAI-style chat, :data:`CHAT_TOKENS_PER_MESSAGE` per message plus
    :data:`CHAT_REPLY_PRIMER_TOKENS`.  Gemini has no such framing to count."""
    enc = tokenizer_for(model)
    counter = _counter(enc or FALLBACK_ENCODING)
    exact = enc is not None
    detail = params.image_detail
    total = 0
    n_messages = 0
    for message in messages:
        n_messages += 1
        for part in message.parts:
            if isinstance(part, TextPart):
                total += _count(counter, part.text)
            elif part.width > 0 and part.height > 0:
                total += image_tokens(provider, model, part.width, part.height, detail)
            else:
                exact = False
                total += image_tokens(provider, model, *UNKNOWN_IMAGE_SIZE, detail)
    if _openai_style(provider, model):
        total += CHAT_TOKENS_PER_MESSAGE * n_messages + CHAT_REPLY_PRIMER_TOKENS
    return RequestTokens(total, exact)


@lru_cache(maxsize=256)
def _openai_style(provider: str, model: str) -> bool:
    return provider.lower() not in GEMINI_PROVIDERS and not base_name(model).startswith("gemini")
