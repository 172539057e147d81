"""MMGenBench's rows of the tidy export (:mod:`judgekit.report.tidy`): one per image x candidate x
generator, from the ``generations`` table.  The judge is the encoder; the generator is in ``extra``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["tidy_rows"]

_EXTRA = ("generator", "index", "seed", "image_sha256", "error")


def tidy_rows(generations: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``value``: SIM, the cosine of the original's and the generated image's encodings; a row
    with none has ``ok`` false and the stage that failed (caption, generate, encode...) as
    ``error_kind``.  ``category``: the image's patterns, comma-separated."""
    rows = []
    for g in generations:
        sim = g.get("sim")
        rows.append({"item": g["item_id"], "category": g.get("patterns") or None, "candidate": g["model"],
                     "judge": g.get("encoder"), "order": None, "kind": "sim", "value": sim, "verdict": None,
                     "ok": sim is not None,
                     "error_kind": None if sim is not None else (g.get("failed_stage") or "not_scored"),
                     "reasked": False, "judge_text": None,
                     "extra": {k: g[k] for k in _EXTRA if g.get(k) is not None}})
    return rows
