"""The Creation-MMBench task -> category table (data in ``tasks.json``) and task-name matching.

The table lists the 51 tasks under their four categories (8 / 18 / 19 / 6).  Task names in a
TSV are matched after :func:`normalise_task` (lower case; runs of ``_``, ``-`` and white space
become one space), so ``story_continue``, ``Story Continue`` and ``story-continue`` are the same
task.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

__all__ = [
    "UNCATEGORIZED",
    "Category",
    "normalise_task",
    "categories",
    "task_categories",
    "category_code",
    "resolve_category",
]

#: the category given to a task the table does not know (and that the TSV and caller don't name)
UNCATEGORIZED = "Uncategorized"

_TABLE = Path(__file__).with_name("tasks.json")
_SEPARATORS = re.compile(r"[\s_\-]+")


@dataclass(frozen=True, slots=True)
class Category:
    """One of the four categories: short code (``LW``), full name, and its normalised tasks."""

    code: str
    name: str
    tasks: tuple[str, ...]


def normalise_task(name: str) -> str:
    """``"Story_Continue "`` -> ``"story continue"``: lower case, separators collapsed."""
    return _SEPARATORS.sub(" ", str(name)).strip().lower()


@lru_cache(maxsize=None)
def categories() -> tuple[Category, ...]:
    """The four categories in the paper's order (LW, CFW, PFW, CMU)."""
    raw = json.loads(_TABLE.read_text(encoding="utf-8"))
    out = []
    for entry in raw["categories"]:
        tasks = tuple(normalise_task(t) for t in entry["tasks"])
        out.append(Category(code=entry["code"], name=entry["name"], tasks=tasks))
    return tuple(out)


@lru_cache(maxsize=None)
def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    for cat in categories():
        for task in cat.tasks:
            if task in table:  # pragma: no cover - guards the data file
                raise ValueError(f"{_TABLE}: task {task!r} is listed under two categories")
            table[task] = cat.name
    return table


def task_categories() -> dict[str, str]:
    """A fresh copy of the table: normalised task name -> category name."""
    return dict(_table())


def category_code(name: str) -> str | None:
    """``"Literary Writing"`` -> ``"LW"``; None for a name outside the four."""
    for cat in categories():
        if cat.name == name or cat.code == name:
            return cat.code
    return None


def resolve_category(
    task_name: str,
    *,
    tsv_category: str | None = None,
    overrides: Mapping[str, str] | None = None,
) -> str | None:
    """The category of ``task_name``, or None when nothing knows it.

    Precedence: the caller's ``overrides`` (keys matched after normalising), then a non-empty
    ``category`` cell of the TSV row, then the shipped table.
    """
    key = normalise_task(task_name)
    if overrides:
        for k, v in overrides.items():
            if normalise_task(k) == key:
                return v
    if tsv_category is not None and tsv_category.strip():
        return tsv_category.strip()
    return _table().get(key)
