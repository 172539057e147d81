"""Options where judgekit departs from the authors' evaluation code, and the list of those in force.

The default of every benchmark option reproduces the authors' code, quirks included, since that
code produced the published tables.  A sounder rule of ours is an option declared with
:func:`ours`, which records what the reference does instead.  :func:`deviations` lists the ones in
force for ``summary.json`` (under ``deviations``) and the printed results:

- an ordinary option is listed when its value differs from its default (the reference's rule);
- a *guard* (``guard=True``) is on by default because it only defends against injected text (a
  candidate's answer that forges a marker the parser looks for); it is listed whenever it is on,
  so a run with defaults lists exactly its injection guards.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["ours", "deviations", "deviation_lines"]

_KEY = "judgekit_deviation"


def ours(default: Any = ..., *, reference: str, guard: bool = False, **field_kwargs: Any) -> Any:
    """A pydantic ``Field`` for an option that can depart from the reference code.

    ``reference`` says in a few words what the authors' code does; the field's ``description``
    says what the option does.  ``guard=True`` marks an injection guard, on by default."""
    extra = dict(field_kwargs.pop("json_schema_extra", None) or {})
    extra[_KEY] = {"reference": reference, "guard": guard}
    return Field(default, json_schema_extra=extra, **field_kwargs)


def _default(info) -> Any:
    return info.get_default(call_default_factory=True)


def deviations(options: BaseModel | None) -> list[dict[str, Any]]:
    """The departures from the reference code in force in ``options``, in field order."""
    if options is None:
        return []
    out: list[dict[str, Any]] = []
    for name, info in type(options).model_fields.items():
        extra = info.json_schema_extra
        meta = extra.get(_KEY) if isinstance(extra, dict) else None
        if not meta:
            continue
        value = getattr(options, name)
        if meta["guard"]:
            if not value:
                continue
            kind = "injection guard"
        else:
            if value == _default(info):
                continue
            kind = "option"
        out.append({"option": name, "value": value, "kind": kind, "reference": meta["reference"],
                    "judgekit": info.description or ""})
    return out


def deviation_lines(items: list[dict[str, Any]]) -> list[str]:
    """One printable line per deviation (options and dropped model parameters alike)."""
    lines = []
    for d in items:
        if d.get("kind") in ("option", "injection guard"):
            lines.append(f"{d['kind']} {d['option']} = {d['value']!r} (the authors' code: {d['reference']})")
        else:
            lines.append(str(d.get("note", d)))
    return lines
