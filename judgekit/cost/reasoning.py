"""Reasoning and thinking models: how many output tokens a call of one may be billed for.

Both kinds bill their hidden tokens as output, but bound them differently:

* **OpenAI o-series and gpt-5** (``o1``, ``o3``, ``o4-mini``, ``gpt-5*``): reasoning tokens are
  part of ``completion_tokens`` and of ``max_completion_tokens`` (the only output limit these
  models take), so a call writes at most ``max_tokens`` output tokens, reasoning included.  A
  small ``max_tokens`` may go entirely into reasoning (an empty ``length`` reply), never past it.
* **Gemini thinking models** (2.5 and later): thoughts are billed as output
  (``thoughts_token_count``), and the documentation prices them in addition to the answer, while
  ``max_output_tokens`` limits the answer; replies have been seen either way.  The worst case
  judgekit reserves (:func:`max_billed_output`) is therefore ``max_tokens`` plus the thinking
  budget: the request's own (``thinking_budget``; 0 turns thinking off where the model allows)
  or else the model's largest (Gemini 2.5 Pro 32,768; 2.5 Flash and Flash-Lite 24,576, from the
  thinking guide's table) or, for a model with no published numeric budget (Gemini 3's
  ``thinking_level``), its whole output limit, 65,536.

The thinking budget of a request is ``GenParams.thinking_budget`` when the params have one, else
``thinking_budget`` in ``GenParams.extra`` (``-1``, dynamic thinking, counts as unset).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ._names import base_name
from .images import GEMINI_PROVIDERS

__all__ = ["is_openai_reasoning", "gemini_thinking_cap", "thinking_budget_of", "thinking_allowance",
           "max_billed_output", "reasons", "GEMINI_MAX_OUTPUT"]

#: the output limit of Gemini 2.5 and 3 models (their thoughts cannot exceed it either)
GEMINI_MAX_OUTPUT = 65_536
#: the largest thinking budget per Gemini model family (ai.google.dev/gemini-api/docs/thinking)
_GEMINI_THINKING_CAPS: tuple[tuple[str, int], ...] = (
    ("gemini-2.5-pro", 32_768),
    ("gemini-2.5-flash-lite", 24_576),
    ("gemini-2.5-flash", 24_576),
)
_OPENAI_REASONING = re.compile(r"(?:o1|o3|o4|gpt-5)(?:$|[-.])")
_GEMINI_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?")


@lru_cache(maxsize=512)
def is_openai_reasoning(model: str) -> bool:
    """o1 / o3 / o4-mini / gpt-5 and their dated or sized variants (give the model a deployment
    serves, not the deployment's name)."""
    return bool(_OPENAI_REASONING.match(base_name(model)))


@lru_cache(maxsize=512)
def gemini_thinking_cap(provider: str, model: str) -> int:
    """The most thinking tokens one call of a Gemini model may spend when the request sets no
    budget; 0 for a model that does not think (Gemini 1.x, 2.0) or is not a Gemini model."""
    name = base_name(model)
    if provider.lower() not in GEMINI_PROVIDERS and not name.startswith("gemini"):
        return 0
    if "thinking" in name:  # gemini-2.0-flash-thinking-exp and the like
        return GEMINI_MAX_OUTPUT
    m = _GEMINI_VERSION.match(name)
    if m is None:
        return 0
    version = (int(m.group(1)), int(m.group(2) or 0))
    if version < (2, 5):
        return 0
    for prefix, cap in _GEMINI_THINKING_CAPS:
        if name.startswith(prefix):
            return cap
    return GEMINI_MAX_OUTPUT


def thinking_budget_of(params: Any) -> int | None:
    """The thinking budget a request sets (see the module docstring), or None."""
    budget = getattr(params, "thinking_budget", None)
    if budget is None:
        extra = getattr(params, "extra", ()) or ()
        try:
            budget = dict(extra).get("thinking_budget")
        except (TypeError, ValueError):
            budget = None
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        return None
    return budget


def thinking_allowance(provider: str, model: str, params: Any = None) -> int:
    """Output tokens a call may be billed beyond its ``max_tokens``: a Gemini thinking model's
    thoughts (its budget, never above the model's cap); 0 for everything else, OpenAI
    reasoning models included (their reasoning is inside ``max_completion_tokens``)."""
    cap = gemini_thinking_cap(provider, model)
    if cap == 0:
        return 0
    budget = thinking_budget_of(params) if params is not None else None
    return cap if budget is None else min(budget, cap)


def max_billed_output(provider: str, model: str, max_tokens: int | None, params: Any = None) -> int | None:
    """The most output tokens a call with this ``max_tokens`` may be billed for (None when
    ``max_tokens`` is None: nothing in the request bounds it)."""
    if max_tokens is None:
        return None
    return max_tokens + thinking_allowance(provider, model, params)


def reasons(provider: str, model: str) -> bool:
    """Whether the model spends hidden reasoning or thinking tokens, billed as output."""
    return is_openai_reasoning(model) or gemini_thinking_cap(provider, model) > 0
