"""MkDocs hook: the run-spec reference tables, generated from judgekit's spec models.

``<!-- spec-reference -->`` in a page becomes one table per spec table (the top level,
``[models.ALIAS]``, its ``params``, ``limits``, ``local``, ``image`` and ``price``, and ``[roles]``):
each key with its type, default, allowed range and the field's description, read from the pydantic
models that validate a spec, so the page cannot drift from what ``judgekit run`` accepts.
"""

from __future__ import annotations

import types
import typing
from typing import Any

MARKER = "<!-- spec-reference -->"

#: what a field says when its model gives it no description (the keys every spec has)
_MORE = {
    "RunSpec.name": "the run's name: the default output folder is judgekit-out/NAME",
    "RunSpec.benchmark": "a built-in benchmark (creation_mmbench, guessbench, mmgenbench, mmie, pairwise, rubric), "
                         "an installed plugin's name, a dotted module path or a .py file",
    "RunSpec.data": "the data file or folder, relative to the spec file; samples:REL for a shipped sample; "
                    "hf:org/name for a dataset on the Hugging Face hub",
    "RunSpec.options": "the benchmark's options (each benchmark's page lists them)",
    "RunSpec.models": "[models.ALIAS] tables: one per model the run uses, under a name of your choice",
    "RunSpec.roles": "which alias plays which part",
    "RunSpec.max_cost_usd": "the cost cap in USD; same as --max-cost",
    "ModelSpec.params": "generation parameters",
    "ModelSpec.limits": "concurrency, rate limits, timeouts and retries",
    "ModelParams.image_detail": "OpenAI image detail (low, high, auto)",
}
_TITLE = {"RunSpec": "Every spec has these keys; the tables below are inside them."}


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f'`"{a}"`' for a in args)
    if origin in (typing.Union, types.UnionType):
        shown = [_type(a) for a in args if a is not type(None)]
        return " \\| ".join(shown)
    if origin in (list, tuple):
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return "table"
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return "table (below)"
    return {str: "string", int: "integer", float: "number", bool: "bool"}.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _toml(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (dict, list)) and not value:
        return "`{}`" if isinstance(value, dict) else "`[]`"
    if hasattr(type(value), "model_fields"):
        return "(below)"
    return f"`{value}`"


def _range(info: Any) -> str:
    bounds = []
    for item in info.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            bound = getattr(item, attr, None)
            if bound is not None:
                bounds.append(f"{sign} {bound:,}" if isinstance(bound, int) and not isinstance(bound, bool) else f"{sign} {bound}")
    return ", ".join(bounds)


def table(model: type, title: str, skip: tuple[str, ...] = ()) -> str:
    """One markdown table: the keys of one spec table."""
    doc = _TITLE.get(model.__name__) or (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    rows = [f"### {title}", "", doc, "",
            "| key | type | default | range | what it is |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        default = "required" if info.is_required() else _toml(info.get_default(call_default_factory=True))
        what = (info.description or _MORE.get(f"{model.__name__}.{name}", "")).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{name}` | {_type(info.annotation)} | {default} | {_range(info)} | {what} |")
    return "\n".join(rows) + "\n"


def reference() -> str:
    from judgekit.config import Limits, ModelParams, ModelSpec, Roles, RunSpec
    from judgekit.cost.prices import PriceOverride
    from judgekit.model_settings import ImageGenSettings, LocalSettings

    return "\n".join([
        table(RunSpec, "The top level", skip=("source_path",)),
        table(ModelSpec, "[models.ALIAS]"),
        table(ModelParams, "[models.ALIAS.params]"),
        table(Limits, "[models.ALIAS.limits]"),
        table(LocalSettings, "[models.ALIAS.local]"),
        table(ImageGenSettings, "[models.ALIAS.image]"),
        table(PriceOverride, "[models.ALIAS.price]"),
        table(Roles, "[roles]"),
    ])


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, reference())
    return markdown
