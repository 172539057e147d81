"""Model-name normalisation shared by the tokenizer, image and price lookups.

Spec files name models the way each API does: ``gpt-4o-2024-08-06``, ``openai/gpt-4o``,
``models/gemini-2.0-flash``, ``ft:gpt-4o-mini:org::abc123``.  The cost code only needs the
family, so :func:`base_name` lower-cases the name and drops provider prefixes and fine-tune
decorations, and :func:`undated` also drops a trailing release date.  Prices need more care (a
fine-tune has its own price), so they look a name up as :func:`unprefixed` first.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["unprefixed", "base_name", "undated"]

# -2024-08-06, -20240806, @20240620 (Vertex), and OpenAI's -0613 / -0125 style; a 4-digit tail
# is only a date when it reads as MMDD, so gpt-4-1106-preview keeps its name (no tail match).
_DATE_SUFFIX = re.compile(r"(?:[-@]\d{4}-\d{2}-\d{2}|[-@]\d{8}|-(?:0[1-9]|1[0-2])(?:[0-2]\d|3[01]))$")


@lru_cache(maxsize=1024)
def unprefixed(model: str) -> str:
    """``model`` lower-cased, without a ``provider/`` (or ``models/``) prefix."""
    return model.strip().lower().rsplit("/", 1)[-1]


@lru_cache(maxsize=1024)
def base_name(model: str) -> str:
    """:func:`unprefixed`, and a fine-tune (``ft:gpt-4o-mini-2024-07-18:org::id``) named by its
    base model."""
    name = unprefixed(model)
    if name.startswith("ft:"):
        name = name[3:].split(":", 1)[0]
    return name


@lru_cache(maxsize=1024)
def undated(model: str) -> str:
    """:func:`base_name` without a trailing release date (``gpt-4o-2024-08-06`` -> ``gpt-4o``)."""
    return _DATE_SUFFIX.sub("", base_name(model))
