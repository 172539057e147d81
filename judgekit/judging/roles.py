"""Which models may take a role that needs a chat model (a judge, and the generic benchmarks'
live candidates): the spec check every judge-heavy benchmark shares."""

from __future__ import annotations

from ..errors import SpecError

__all__ = ["CHAT_PROVIDERS", "check_chat_models"]

#: providers whose models can judge (chat models); a local model must have local.task = "chat"
CHAT_PROVIDERS = ("openai", "azure", "gemini", "anthropic", "sim")


def check_chat_models(spec, where: str, aliases, *, verb: str = "cannot judge") -> None:
    """Every model of ``aliases`` (the role ``where``) is a chat model: a SpecError naming the role
    and the model (the generic benchmarks' judge and candidate checks too)."""
    for alias in aliases:
        m = spec.models[alias]
        if not (m.provider in CHAT_PROVIDERS or (m.provider == "local" and m.local.task == "chat")):
            raise SpecError(f"{spec.source_path}: {where}: '{alias}' {verb} (provider {m.provider!r}"
                            + (f", local.task {m.local.task!r}" if m.provider == "local" else "") + ")")
