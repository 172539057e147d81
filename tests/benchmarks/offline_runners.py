"""The shipped runners (``runners/*.toml``) made runnable offline, for tests that run every one.

A runner that names a paid API model, an API key or a large local checkpoint gets, in its place,
the built-in simulator or a tiny local model of the same kind (chat, retrieval, text-to-image,
image encoding, InternVL-style chat), keeping the model's generation parameters (not its rate
limits, which change how fast, never which calls); the
benchmark, its ``[options]`` and its roles are the runner's own, unchanged.  A data path that is not
on this machine (the released Creation-MMBench TSV, GuessBench's full data) becomes the shipped
sample of the same format.  Simulated latency is set to 0 and local models run on the CPU, so a
test is fast and deterministic.
"""

from __future__ import annotations

import copy
import tomllib
from typing import Any

from judgekit.config import RunSpec, list_runners, resolve_spec_path

__all__ = ["SHIPPED", "offline_spec", "substitutions"]

#: every shipped runner, by name
SHIPPED = sorted(list_runners())

_SAMPLE_DATA = {
    "creation_mmbench": "samples:creation_mmbench/sample.tsv",
    "guessbench": "samples:guessbench",
    "mmgenbench": "samples:mmgenbench",
    "mmie": "samples:mmie/data.json",
}
_CHAT_APIS = ("openai", "azure", "gemini", "anthropic")
_SIM = {"seed": 7, "latency_ms": 0, "latency_jitter_ms": 0}


def _judge_aliases(data: dict[str, Any]) -> set[str]:
    roles = data.get("roles", {})
    return {a for a in (roles.get("judge"), *roles.get("judges", ()), roles.get("describer")) if a}


def _offline_model(alias: str, m: dict[str, Any], judges: set[str]) -> tuple[dict[str, Any], str | None]:
    """The model table to use offline, and what changed (None: nothing)."""
    m = copy.deepcopy(m)
    provider = m.get("provider")
    if provider in _CHAT_APIS:
        model = "sim-judge" if alias in judges else "sim-vlm-strong"
        new = {"provider": "sim", "model": model, "sim": dict(_SIM)}
        for key in ("params", "price"):
            if key in m:
                new[key] = m[key]
        return new, f"{alias}: {provider} {m.get('model')} -> sim {model}"
    if provider == "brave":
        new = {"provider": "sim_image_search", "model": "images", "sim": dict(_SIM)}
        return new, f"{alias}: brave -> sim_image_search"
    if provider == "openai_image":
        new = {k: v for k, v in m.items() if k not in ("base_url", "api_key_env", "api_version")}
        new.update(provider="sim_image", sim=dict(_SIM))
        return new, f"{alias}: openai_image -> sim_image"
    if provider in ("sim", "sim_image", "sim_image_search"):
        m["sim"] = {**m.get("sim", {}), "latency_ms": 0, "latency_jitter_ms": 0}
        return m, None
    if provider == "local":
        local = dict(m["local"])
        local["device"] = "cpu"
        model = str(m.get("model") or "")
        changed = None
        if not model.startswith("tiny:"):
            task = local["task"]
            if task == "text_to_image":
                tiny = "tiny:sd"
                local.pop("preset", None)
                local.update(steps=4, guidance=3.5, width=64, height=64)
            elif task == "embed_image":
                tiny = "tiny:clip"
            else:
                tiny = "tiny:internvl" if local.get("chat_api") == "internvl" else "tiny:vlm"
                if "dtype" in local:
                    local["dtype"] = "fp32"  # the CPU
            changed = f"{alias}: local {model or 'preset ' + str(m['local'].get('preset'))} -> {tiny}"
            model = tiny
        m["model"], m["local"] = model, local
        return m, changed
    return m, None


def substitutions(name: str) -> list[str]:
    """What :func:`offline_spec` changes in runner ``name`` (for messages)."""
    return offline_spec(name)[1]


def offline_spec(name: str) -> tuple[RunSpec, list[str]]:
    """Shipped runner ``name`` with offline models and data; and the list of what was swapped."""
    path = resolve_spec_path(name)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    changes: list[str] = []
    judges = _judge_aliases(data)
    models = {}
    for alias, m in data["models"].items():
        models[alias], changed = _offline_model(alias, m, judges)
        if changed:
            changes.append(changed)
    data["models"] = models
    data["source_path"] = str(path.resolve())
    spec = RunSpec.model_validate(data)
    if not spec.data_path().exists():
        changes.append(f"data: {data['data']} -> {_SAMPLE_DATA[data['benchmark']]}")
        spec = RunSpec.model_validate(dict(data, data=_SAMPLE_DATA[data["benchmark"]]))
    return spec, changes
