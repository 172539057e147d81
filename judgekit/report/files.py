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
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(cols))
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if v is None else v) for k, v in r.items()})

    _replace(path, write)


def _replace(path: Path, write) -> None:
    """``write(tmp)`` then rename it to ``path``.  A write that fails (a full disk) leaves no
    temporary file and names ``path`` (a failed write or close names no file of its own)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if e.filename is None:
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise


def write_results(out_dir: Path, summary: dict[str, Any], tables: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Write ``summary.json`` and ``<table>.csv`` for every table; return the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    p = out_dir / "summary.json"
    text = json.dumps(summary, indent=2, default=str)
    _replace(p, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    written.append(p)
    for name, rows in tables.items():
        q = out_dir / f"{name}.csv"
        write_csv(q, rows)
        written.append(q)
    return written
