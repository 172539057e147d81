"""Results on disk: ``summary.json``, one CSV per table, in the run's output folder."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_results", "write_csv"]


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Rows of dicts to CSV; columns in first-seen order across all rows."""
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(cols))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    os.replace(tmp, path)


def write_results(out_dir: Path, summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Write ``summary.json`` and ``<table>.csv`` for every table; return the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    p = out_dir / "summary.json"
    tmp = p.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    os.replace(tmp, p)
    written.append(p)
    for name, rows in tables.items():
        q = out_dir / f"{name}.csv"
        write_csv(q, rows)
        written.append(q)
    return written
