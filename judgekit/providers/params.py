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
- ``thinking_budget`` is Gemini's alone; on an OpenAI-protocol model it is rejected here.
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
           "allowed_params", "openai_params", "check_models"]

#: providers that speak the chat-completions protocol
OPENAI_PROTOCOL = frozenset({"openai", "azure", "sim"})

_REASONING = re.compile(r"(?:o1|o3|o4|gpt-5)(?:$|[-.])")
_CHAT = re.compile(r"(?:gpt-4|gpt-3\.5|chatgpt-4o)(?:$|[-.o])")


def _name(model: str) -> str:
    """The model's own name: lower case, without a ``provider/`` or ``models/`` prefix."""
    return model.strip().lower().rsplit("/", 1)[-1]


def is_openai_reasoning(model: str) -> bool:
    """o1 / o3 / o4-mini / gpt-5 and their variants (the model served, not a deployment name)."""
    return bool(_REASONING.match(_name(model)))


def is_openai_chat(model: str) -> bool:
    """gpt-4o / gpt-4.1 / gpt-4 / gpt-3.5: chat models that reject ``reasoning_effort``."""
    return bool(_CHAT.match(_name(model)))


def family_of(spec: Any) -> str:
    """``"openai_reasoning"``, ``"openai_chat"``, ``"gemini"`` or ``""`` (unknown: every
    parameter is sent as given) for a model spec."""
    if spec.provider == "gemini":
        return "gemini"
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
    if params.reasoning_effort is not None and family in ("openai_chat", "gemini"):
        why = "it is for o-series and gpt-5 models" + ("; Gemini takes thinking_budget" if family == "gemini" else "")
        out.append(("reasoning_effort", params.reasoning_effort, why))
    if params.thinking_budget is not None and spec.provider in OPENAI_PROTOCOL:
        why = "it is Gemini's" + ("; use reasoning_effort" if family == "openai_reasoning" else "")
        out.append(("thinking_budget", params.thinking_budget, why))
    return out


def _what(spec: Any) -> str:
    family = family_of(spec)
    shown = spec.base_model if spec.serves is None else f"{spec.model}, serving {spec.serves}"
    if family == "openai_reasoning":
        return f"{shown} (an o-series / gpt-5 reasoning model)"
    if family == "openai_chat":
        return f"{shown} (an OpenAI chat model)"
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
