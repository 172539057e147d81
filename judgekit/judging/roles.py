"""Which models may take a role that needs a chat model (a judge, and the generic benchmarks'
live candidates): the spec check every judge-heavy benchmark shares."""

from __future__ import annotations

from ..errors import SpecError

__all__ = ["CHAT_PROVIDERS", "is_chat_model", "check_chat_models", "require_judge"]

#: providers whose models can judge (chat models); a local model must have local.task = "chat"
CHAT_PROVIDERS = ("openai", "azure", "gemini", "anthropic", "sim")


def is_chat_model(m) -> bool:
    """A spec's model (``spec.models[alias]``) answers chat requests: a chat provider's, or a local
    model with ``local.task = "chat"``."""
    return m.provider in CHAT_PROVIDERS or (m.provider == "local" and m.local.task == "chat")


def check_chat_models(spec, where: str, aliases, *, verb: str = "cannot judge") -> None:
    """Every model of ``aliases`` (the role ``where``) is a chat model: a SpecError naming the role
    and the model (the generic benchmarks' judge and candidate checks too)."""
    for alias in aliases:
        m = spec.models[alias]
        if not is_chat_model(m):
            raise SpecError(f"{spec.source_path}: {where}: '{alias}' {verb} (provider {m.provider!r}"
                            + (f", local.task {m.local.task!r}" if m.provider == "local" else "") + ")")


def require_judge(spec) -> str:
    """``roles.judge``, checked to be a chat model; a SpecError naming the role when it is unset
    (a benchmark with one judge; a panel's benchmarks read ``roles.panel``)."""
    judge = spec.roles.judge
    if not judge:
        raise SpecError(f"{spec.source_path}: roles.judge: name the model that judges the answers")
    check_chat_models(spec, "roles.judge", [judge])
    return judge
