"""Which generation parameters a model family accepts, and how they are sent.

The family is read from the model a spec *serves* (``ModelSpec.base_model``: ``serves`` when
set, else ``model``), never guessed from an Azure deployment's name: an Azure model with no
``serves`` is of no known family, and gets its parameters as the spec gives them.

- **OpenAI reasoning models** (``o1``, ``o3``, ``o4-mini``, ``gpt-5`` and their dated or sized
  variants): the output limit is sent as ``max_completion_tokens`` (they reject ``max_tokens``),
  ``reasoning_effort`` is sent where set, and ``temperature`` other than 1 and ``top_p`` are
  rejected by the API with a 400.
- **OpenAI chat models** (``gpt-4o``, ``gpt-4.1``, ``gpt-4``, ``gpt-3.5``): reject
  ``reasoning_effort``.
- **Gemini** (provider ``gemini``): ``thinking_budget`` goes into ``ThinkingConfig``;
  ``reasoning_effort`` is not a parameter of its API.
- **Claude** (provider ``anthropic``): ``thinking_budget`` is sent as extended thinking
  (``thinking = {type: "enabled", budget_tokens: N}``; 0 sends nothing: thinking stays off).  The
  Messages API takes a budget of at least 1,024 and below ``max_tokens``, only on Claude 3.7
  Sonnet and later, and with thinking on only the default ``temperature`` (1) and a ``top_p``
  between 0.95 and 1 (the extended-thinking guide); Claude Opus 4.1, Sonnet 4.5, Haiku 4.5 and
  later take ``temperature`` or ``top_p``, not both (their 400: "`temperature` and `top_p` cannot
  both be specified for this model"; ``top_p`` is the one left out under
  ``drop_unsupported_params``); ``reasoning_effort`` is not a parameter of its API.  The output
  limit is required: the request's ``max_tokens``, else :data:`ANTHROPIC_DEFAULT_MAX_TOKENS`
  (plus the thinking budget when one is set).  ``seed`` is not sent (the API has none).
- ``thinking_budget`` is Gemini's and Claude's; on an OpenAI-protocol model it is rejected here.
- Any other model (an OpenAI-compatible server's, the simulator's ``sim-*``) gets every
  parameter as given.

A spec that sets a parameter its model rejects is refused before the first call
(:func:`check_models`, a :class:`~judgekit.errors.SpecError` naming the alias, the parameter
and the fix), unless the model spec says ``drop_unsupported_params = true``: then the parameter
is left out of every request with a note at start.  A request built by a benchmark (GuessBench's
self-consistency temperature) is checked again when it is sent (:func:`unsupported`): dropped
under the same setting, else an :class:`~judgekit.errors.UnsupportedParameter` that stops the run
at its first call rather than failing every call alike.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable

from ..errors import SpecError, UnsupportedParameter
from ..types import GenParams

__all__ = ["OPENAI_PROTOCOL", "is_openai_reasoning", "is_openai_chat", "family_of", "unsupported",
           "allowed_params", "openai_params", "check_models", "claude_version", "ANTHROPIC_DEFAULT_MAX_TOKENS",
           "CLAUDE_MIN_THINKING_BUDGET", "anthropic_params"]

#: providers that speak the chat-completions protocol
OPENAI_PROTOCOL = frozenset({"openai", "azure", "sim"})

_REASONING = re.compile(r"(?:o1|o3|o4|gpt-5)(?:$|[-.])")
_CHAT = re.compile(r"(?:gpt-4|gpt-3\.5|chatgpt-4o)(?:$|[-.o])")
#: claude-3-5-sonnet-20241022, claude-3-opus, claude-sonnet-4-20250514, claude-opus-4-1, claude-haiku-4-5
_CLAUDE = re.compile(r"claude-(?:(\d+)(?:-(\d))?-(?:opus|sonnet|haiku)|(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?)"
                     r"(?:$|[-@.])")
#: the output limit sent when a request sets none (the Messages API requires one): the largest
#: every Claude model accepts (Claude 3 Haiku and Opus stop at 4,096), and the reference judges'
#: own setting (Creation-MMBench's GPT-4o judge: max_tokens 4096)
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
#: the smallest extended-thinking budget the Messages API takes
CLAUDE_MIN_THINKING_BUDGET = 1024


def _name(model: str) -> str:
    """The model's own name: lower case, without a ``provider/`` or ``models/`` prefix."""
    return model.strip().lower().rsplit("/", 1)[-1]


def is_openai_reasoning(model: str) -> bool:
    """o1 / o3 / o4-mini / gpt-5 and their variants (the model served, not a deployment name)."""
    return bool(_REASONING.match(_name(model)))


def is_openai_chat(model: str) -> bool:
    """gpt-4o / gpt-4.1 / gpt-4 / gpt-3.5: chat models that reject ``reasoning_effort``."""
    return bool(_CHAT.match(_name(model)))


def claude_version(model: str) -> tuple[int, int] | None:
    """A Claude model's (major, minor) version from its name (``claude-3-5-sonnet-20241022`` ->
    (3, 5), ``claude-sonnet-4-20250514`` -> (4, 0), ``claude-opus-4-1`` -> (4, 1)); None for
    another name."""
    m = _CLAUDE.match(_name(model))
    if m is None:
        return None
    major, minor = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
    return int(major), int(minor or 0)


def family_of(spec: Any) -> str:
    """``"openai_reasoning"``, ``"openai_chat"``, ``"gemini"``, ``"claude"`` or ``""`` (unknown:
    every parameter is sent as given) for a model spec."""
    if spec.provider == "gemini":
        return "gemini"
    if spec.provider == "anthropic":
        return "claude"
    if spec.provider not in OPENAI_PROTOCOL:
        return ""
    if spec.provider == "azure" and not spec.serves:  # a deployment's name says nothing
        return ""
    model = spec.base_model
    if is_openai_reasoning(model):
        return "openai_reasoning"
    if is_openai_chat(model):
        return "openai_chat"
    return ""


def unsupported(spec: Any, params: GenParams) -> list[tuple[str, Any, str]]:
    """The parameters of ``params`` that ``spec``'s model rejects: (name, value, why)."""
    family = family_of(spec)
    out: list[tuple[str, Any, str]] = []
    if family == "openai_reasoning":
        if params.temperature is not None and params.temperature != 1:
            out.append(("temperature", params.temperature, "only the default, 1, is accepted"))
        if params.top_p is not None:
            out.append(("top_p", params.top_p, "it is not accepted"))
    if params.reasoning_effort is not None and family in ("openai_chat", "gemini", "claude"):
        takes = {"gemini": "; Gemini takes thinking_budget", "claude": "; Claude takes thinking_budget"}
        out.append(("reasoning_effort", params.reasoning_effort,
                    "it is for o-series and gpt-5 models" + takes.get(family, "")))
    if params.thinking_budget is not None and spec.provider in OPENAI_PROTOCOL:
        why = "it is Gemini's and Claude's" + ("; use reasoning_effort" if family == "openai_reasoning" else "")
        out.append(("thinking_budget", params.thinking_budget, why))
    if family == "claude":
        out += _claude_unsupported(spec.base_model, params)
    return out


def _claude_unsupported(model: str, params: GenParams) -> list[tuple[str, Any, str]]:
    """What a Claude model rejects of ``params`` (see the module docstring)."""
    out: list[tuple[str, Any, str]] = []
    version = claude_version(model)
    budget = params.thinking_budget
    thinking = False
    if budget is not None and budget > 0:
        if version is not None and version < (3, 7):
            out.append(("thinking_budget", budget, "extended thinking is for Claude 3.7 Sonnet and later"))
        elif budget < CLAUDE_MIN_THINKING_BUDGET:
            out.append(("thinking_budget", budget, f"the budget is at least {CLAUDE_MIN_THINKING_BUDGET:,}; "
                                                   "0 leaves thinking off"))
        elif params.max_tokens is not None and budget >= params.max_tokens:
            out.append(("thinking_budget", budget, f"the budget must be below max_tokens ({params.max_tokens:,}), "
                                                   "which counts thinking and answer together"))
        else:
            thinking = True
    if thinking and params.temperature is not None and params.temperature != 1:
        out.append(("temperature", params.temperature, "extended thinking takes only the default, 1"))
    if thinking and params.top_p is not None and not 0.95 <= params.top_p <= 1:
        out.append(("top_p", params.top_p, "with extended thinking it must be between 0.95 and 1"))
    elif (version is not None and version >= (4, 1) and params.temperature is not None
          and params.top_p is not None and not any(name == "temperature" for name, _, _ in out)):
        out.append(("top_p", params.top_p, "this model takes temperature or top_p, not both"))
    return out


def _what(spec: Any) -> str:
    family = family_of(spec)
    shown = spec.base_model if spec.serves is None else f"{spec.model}, serving {spec.serves}"
    if family == "openai_reasoning":
        return f"{shown} (an o-series / gpt-5 reasoning model)"
    if family == "openai_chat":
        return f"{shown} (an OpenAI chat model)"
    if family == "claude":
        return f"{shown} (a Claude model)"
    return f"{shown} ({spec.provider})"


def allowed_params(alias: str, spec: Any, params: GenParams) -> GenParams:
    """``params`` with the parameters ``spec``'s model rejects left out when the spec says
    ``drop_unsupported_params``; else ``params`` itself, or :class:`UnsupportedParameter` naming
    the first one it rejects."""
    bad = unsupported(spec, params)
    if not bad:
        return params
    if spec.drop_unsupported_params:
        return dataclasses.replace(params, **{name: None for name, _, _ in bad})
    name, value, why = bad[0]
    raise UnsupportedParameter(
        f"model '{alias}': {_what(spec)} rejects {name} = {value!r} ({why}); leave it out of the request, or "
        f"set models.{alias}.drop_unsupported_params = true to drop it")


def openai_params(alias: str, spec: Any, params: GenParams) -> dict[str, Any]:
    """The chat-completions fields for ``params`` (model and messages aside): the output limit
    as ``max_completion_tokens`` for reasoning models (``max_tokens`` otherwise),
    ``reasoning_effort`` where set, and nothing the model rejects (see :func:`allowed_params`)."""
    p = allowed_params(alias, spec, params)
    out: dict[str, Any] = {}
    if p.temperature is not None:
        out["temperature"] = p.temperature
    if p.max_tokens is not None:
        out["max_completion_tokens" if family_of(spec) == "openai_reasoning" else "max_tokens"] = p.max_tokens
    if p.top_p is not None:
        out["top_p"] = p.top_p
    if p.seed is not None:
        out["seed"] = p.seed
    if p.reasoning_effort is not None:
        out["reasoning_effort"] = p.reasoning_effort
    return out


def anthropic_params(alias: str, spec: Any, params: GenParams) -> dict[str, Any]:
    """The Messages API fields for ``params`` (model, system and messages aside): ``max_tokens``
    (always: see :data:`ANTHROPIC_DEFAULT_MAX_TOKENS`), ``temperature``, ``top_p`` and
    ``thinking``, and nothing the model rejects (see :func:`allowed_params`)."""
    p = allowed_params(alias, spec, params)
    budget = p.thinking_budget if p.thinking_budget else None
    max_tokens = p.max_tokens
    if max_tokens is None:
        max_tokens = ANTHROPIC_DEFAULT_MAX_TOKENS + (budget or 0)
    out: dict[str, Any] = {"max_tokens": max_tokens}
    if p.temperature is not None:
        out["temperature"] = p.temperature
    if p.top_p is not None:
        out["top_p"] = p.top_p
    if budget is not None:
        out["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return out


def check_models(models: dict[str, Any], aliases: Iterable[str]) -> list[str]:
    """Check the parameters each alias's spec sets against its model family, before any call.

    Returns the notes to show (one per parameter dropped under ``drop_unsupported_params``);
    raises :class:`SpecError` naming the alias, the parameter and the fix for the first one a
    model rejects otherwise."""
    notes: list[str] = []
    for alias in aliases:
        spec = models[alias]
        bad = unsupported(spec, spec.params.gen_params())
        for name, value, why in bad:
            if spec.drop_unsupported_params:
                notes.append(f"model '{alias}': {name} = {value!r} is left out of its requests: "
                             f"{_what(spec)} rejects it ({why}); drop_unsupported_params = true")
            else:
                raise SpecError(
                    f"models.{alias}.params.{name} = {value!r}: {_what(spec)} rejects it ({why}); remove it, or "
                    f"set models.{alias}.drop_unsupported_params = true to leave it out of requests")
    return notes
