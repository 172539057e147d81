"""The tidy export: every judgment of a run as one row, in ``results.parquet`` beside its CSVs.

One row per item x candidate x judge x order (and kind, where a benchmark judges several
ways), in the fixed columns of :data:`TIDY_COLUMNS`, so the runs of every benchmark load into
the same frame::

    df = judgekit.results("judgekit-out/quickstart")          # pandas
    rel = judgekit.results(run_dir, kind="duckdb")            # a DuckDB relation
    rows = judgekit.results(run_dir, kind="rows")             # a list of dicts

The file is written by DuckDB (``COPY ... TO ... (FORMAT parquet)``): neither pyarrow nor pandas
is needed to write it, and pandas only to load it as a DataFrame.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

__all__ = ["TIDY_COLUMNS", "TIDY_FILE", "tidy_row", "write_tidy", "results"]

TIDY_FILE = "results.parquet"

#: the columns, in order, with their DuckDB types and what each holds
TIDY_COLUMNS: dict[str, tuple[str, str]] = {
    "run_id": ("VARCHAR", "the run that made the row"),
    "benchmark": ("VARCHAR", "the spec's benchmark"),
    "item": ("VARCHAR", "the item's id (index) in the benchmark's data"),
    "category": ("VARCHAR", "the item's category (task, type), when the benchmark has one"),
    "candidate": ("VARCHAR", "the model under test"),
    "judge": ("VARCHAR", "the model (or scorer, extractor, encoder) that made the judgment"),
    "order": ("INTEGER", "the answers' order shown to the judge (0: baseline first); null without orders"),
    "kind": ("VARCHAR", "what the row is: pairwise, vfs, rubric, score, extract, sim, ..."),
    "value": ("DOUBLE", "the figure from the candidate's side (a pairwise score -2..2, a rubric score, ...)"),
    "verdict": ("VARCHAR", "what was read from the judge's reply, as written"),
    "ok": ("BOOLEAN", "whether the judgment counted (its call succeeded and its reply was read)"),
    "error_kind": ("VARCHAR", "why it did not count"),
    "reasked": ("BOOLEAN", "whether the judge was asked again for a reply that could be read"),
    "judge_text": ("VARCHAR", "the judge's reply"),
    "extra": ("VARCHAR", "JSON text of the benchmark's own fields"),
}

_FILLED = ("run_id", "benchmark")  # write_tidy fills these


def tidy_row(**fields: Any) -> dict[str, Any]:
    """A row with every column (missing ones None); keys that are not columns go into ``extra``,
    which is always a JSON object (a dict, or JSON text of one; any other value is kept under the
    key "extra")."""
    extra = fields.pop("extra", None)
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            pass
    extra = dict(extra) if isinstance(extra, dict) else ({} if extra is None else {"extra": extra})
    row = {c: None for c in TIDY_COLUMNS}
    for k, v in fields.items():
        if k in row:
            row[k] = v
        else:
            extra[k] = v
    row["extra"] = extra or None
    return row


def _cell(col: str, v: Any) -> Any:
    if v is None:
        return None
    typ = TIDY_COLUMNS[col][0]
    if typ == "DOUBLE":
        v = float(v)
        return None if math.isnan(v) else v
    if typ == "INTEGER":
        return int(v)
    if typ == "BOOLEAN":
        return bool(v)
    if col == "extra" and not isinstance(v, str):
        return json.dumps(_finite(v), ensure_ascii=False, default=str, sort_keys=True) if v else None
    return str(v)


def _finite(v: Any) -> Any:
    """NaN and infinities as None, so ``extra`` is valid JSON."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def write_tidy(out_dir: Path, rows: list[dict[str, Any]], run_id: str, benchmark: str) -> Path:
    """Write ``rows`` (``tidy`` of a BenchmarkResult) to ``out_dir/results.parquet`` in the columns
    of :data:`TIDY_COLUMNS`; ``run_id`` and ``benchmark`` fill those columns where a row leaves
    them out.  Keys that are not columns go into ``extra``.  Returns the path written."""
    import duckdb

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    full = []
    for r in rows:
        row = tidy_row(**r)
        for col, value in zip(_FILLED, (run_id, benchmark)):
            if row[col] is None:
                row[col] = value
        full.append(row)
    columns: dict[str, list[Any]] = {c: [] for c in TIDY_COLUMNS}
    for n, r in enumerate(full, start=1):
        for c in TIDY_COLUMNS:
            try:
                columns[c].append(_cell(c, r[c]))
            except (TypeError, ValueError) as e:
                raise ValueError(f"tidy row {n}, column {c!r}: {r[c]!r} is not a {TIDY_COLUMNS[c][0]} ({e})") from None
    path = out_dir / TIDY_FILE
    tmp = out_dir / (TIDY_FILE + ".tmp")
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE tidy (" + ", ".join(f'"{c}" {t}' for c, (t, _) in TIDY_COLUMNS.items()) + ")")
        if full:
            selects = ", ".join(f'unnest(${i}::{t}[]) AS "{c}"'
                                for i, (c, (t, _)) in enumerate(TIDY_COLUMNS.items(), start=1))
            con.execute(f"INSERT INTO tidy SELECT {selects}", list(columns.values()))
        target = str(tmp).replace("'", "''")
        con.execute(f"COPY tidy TO '{target}' (FORMAT parquet)")
    finally:
        con.close()
    os.replace(tmp, path)
    return path


def _parquet(run_dir: str | Path) -> Path:
    p = Path(run_dir)
    path = p if p.suffix == ".parquet" else p / TIDY_FILE
    if not path.is_file():
        from ..errors import DataError

        raise DataError(str(path), "no such file (a run folder written by `judgekit run` holds results.parquet)")
    return path


def results(run_dir: str | Path, kind: str = "pandas"):
    """A run's tidy results (``RUN_DIR/results.parquet``, or that file's path itself):
    ``kind="pandas"``: a DataFrame; ``"duckdb"``: a DuckDB relation; ``"rows"``: a list of dicts.
    ``extra`` stays JSON text in each (``json.loads`` it for a benchmark's own fields)."""
    if kind not in ("pandas", "duckdb", "rows"):
        raise ValueError(f"kind={kind!r}: one of 'pandas', 'duckdb', 'rows'")
    path = _parquet(run_dir)
    if kind == "pandas":
        try:
            import pandas  # noqa: F401  (DuckDB's .df() needs it)
        except ImportError:
            raise ImportError("judgekit.results(kind='pandas') needs pandas: pip install pandas "
                              "(or use kind='duckdb' or kind='rows')") from None
    import duckdb

    con = duckdb.connect()
    rel = con.read_parquet(str(path))
    if kind == "duckdb":
        return rel  # the relation keeps its connection open
    try:
        if kind == "pandas":
            return rel.df()
        cols = [c for c in rel.columns]
        return [dict(zip(cols, r)) for r in rel.fetchall()]
    finally:
        con.close()
