"""Creation-MMBench as the Hugging Face dataset (``opencompass/Creation-MMBench``): parquet shards.

The dataset card declares every column a string but ``image``, a sequence of images, which the
``datasets`` library stores as a list of ``{bytes, path}`` structs.  :func:`parquet_rows` reads
the shards with DuckDB (a dependency already, for the cache), a few rows at a time so that only
the images' bytes are held, and gives the same rows the TSV reader gives: ``image`` as the tuple
of the images' bytes (None when the row has none).  A single image struct, raw binary (one or a
list) and base64 text (read as the TSV's ``image`` cell, pointers included) are read too.

:func:`write_parquet` writes that layout (with the ``huggingface`` features metadata the
``datasets`` library reads), for the shipped sample and the tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from judgekit.errors import DataError

__all__ = ["parquet_files", "parquet_rows", "write_parquet", "HF_COLUMNS"]

#: the dataset card's columns, in its order
HF_COLUMNS = (
    "index", "question", "task_name", "role", "background", "instruction", "requirement",
    "ground_truth", "source", "criteria", "image_path", "reference_answer_by_gpt4o", "image",
)
_MAGIC = b"PAR1"
_BATCH = 16  # rows fetched at a time: a row holds up to 9 photographs
_SCALAR = re.compile(r"^(VARCHAR|BOOLEAN|(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?)|FLOAT|DOUBLE|DECIMAL\(.*\))$")
_STRUCT = re.compile(r"^STRUCT\((.*)\)$")


def parquet_files(p: Path) -> list[Path] | None:
    """The parquet shards ``p`` names (a ``.parquet`` file, a file that starts like one, or the
    dataset's folder: ``data/test-*.parquet``, else any ``*.parquet`` in ``data/`` or in the
    folder itself), or None when ``p`` is not parquet (the TSV)."""
    if p.is_dir():
        for pattern in ("data/test-*.parquet", "data/*.parquet", "*.parquet"):
            shards = sorted(p.glob(pattern))
            if shards:
                return shards
        raise DataError(str(p), "a folder without the dataset's parquet files (data/test-*.parquet); "
                                "give the folder of the Hugging Face dataset, its parquet file or the TSV")
    if p.suffix.lower() == ".parquet":
        return [p]
    try:
        with p.open("rb") as fh:
            head = fh.read(4)
    except OSError:
        return None  # the TSV reader says what is wrong with it
    return [p] if head == _MAGIC else None


def _connect():
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")  # a long read must not draw on the terminal
    return con


def _image_kind(column_type: str) -> str | None:
    """How an ``image`` column of this DuckDB type holds images, or None if it does not."""
    listed = column_type.endswith("[]")
    inner = column_type[:-2] if listed else column_type
    m = _STRUCT.match(inner)
    if m and re.search(r"(^|, )\"?bytes\"? BLOB(,|$)", m.group(1)):
        return "structs" if listed else "struct"
    if inner == "BLOB":
        return "blobs" if listed else "blob"
    if inner == "VARCHAR" and not listed:
        return "text"
    return None


def parquet_rows(files: Sequence[Path], required: Sequence[str]) -> tuple[list[str], Iterator[tuple[int, dict[str, str], Any]]]:
    """``(columns, iterator of (row number, text fields, image))``: every column but ``image`` as
    text (a null as ``""``), ``image`` as a tuple of bytes, the TSV cell's text, or None."""
    import duckdb

    label = str(files[0]) if len(files) == 1 else f"{files[0].parent} ({len(files)} parquet files)"
    names = [str(f) for f in files]
    con = _connect()
    try:
        described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [names]).fetchall()
    except duckdb.Error as e:
        con.close()
        raise DataError(label, f"not a readable parquet file: {str(e).splitlines()[0]}") from None
    types = {row[0]: row[1] for row in described}
    columns = list(types)
    for col in required:
        if col not in types:
            con.close()
            raise DataError(label, f"missing required column {col!r} (columns: {columns})", column=col)
    kind = _image_kind(types["image"])
    if kind is None:
        con.close()
        raise DataError(label, f"the image column is {types['image']}, not a sequence of images", column="image")
    select = []
    for col, typ in types.items():
        if col == "image":
            continue
        if not _SCALAR.match(typ):
            con.close()
            raise DataError(label, f"column {col!r} is {typ}, not text", column=col)
        select.append(f'CAST("{col}" AS VARCHAR)' if typ != "VARCHAR" else f'"{col}"')
    text_cols = [c for c in columns if c != "image"]
    sql = f'SELECT {", ".join(select)}, "image" FROM read_parquet(?)'

    def gen() -> Iterator[tuple[int, dict[str, str], Any]]:
        n = 0
        try:
            cur = con.execute(sql, [names])
            while True:
                try:
                    batch = cur.fetchmany(_BATCH)
                except duckdb.Error as e:
                    raise DataError(label, f"unreadable parquet: {str(e).splitlines()[0]}", row=n + 1) from None
                if not batch:
                    return
                for values in batch:
                    n += 1
                    fields = {c: ("" if v is None else v) for c, v in zip(text_cols, values[:-1], strict=True)}
                    yield n, fields, _images(label, n, fields.get("index", ""), kind, values[-1])
        finally:
            con.close()

    return columns, gen()


def _images(label: str, n: int, index: str, kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "text":
        return value
    items = value if kind in ("structs", "blobs") else [value]
    out = []
    for k, item in enumerate(items):
        data = item.get("bytes") if isinstance(item, dict) else item
        if data is None:
            where = f"image {k + 1} of {len(items)}" if len(items) > 1 else "the image"
            ref = item.get("path") if isinstance(item, dict) else None
            raise DataError(label, f"{where} has no bytes" + (f" (only a path, {ref!r})" if ref else ""),
                            row=f"{n} (index {str(index).strip()})", column="image")
        out.append(bytes(data))
    return tuple(out)


def _hf_features() -> str:
    features: dict[str, Any] = {c: {"dtype": "string", "_type": "Value"} for c in HF_COLUMNS if c != "image"}
    features["image"] = {"feature": {"_type": "Image"}, "_type": "Sequence"}
    return json.dumps({"info": {"features": features}})


def write_parquet(path: str | Path, rows: Sequence[dict[str, Any]]) -> Path:
    """Write ``rows`` (every HF column; ``image`` a list of ``(file name, bytes)``) as one parquet
    file in the Hugging Face layout."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    cols = ", ".join(f'"{c}" VARCHAR' for c in HF_COLUMNS if c != "image")
    con = _connect()
    try:
        con.execute(f'CREATE TABLE t ({cols}, "image" STRUCT("bytes" BLOB, "path" VARCHAR)[])')
        marks = ", ".join("?" for _ in HF_COLUMNS)
        for row in rows:
            values = [row.get(c) for c in HF_COLUMNS if c != "image"]
            values.append([{"bytes": data, "path": name} for name, data in row["image"]])
            con.execute(f"INSERT INTO t VALUES ({marks})", values)
        meta = _hf_features().replace("'", "''")
        target = str(out).replace("'", "''")
        # row groups of 100 rows, as the datasets library writes a dataset of images
        con.execute(f"COPY t TO '{target}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100, "
                    f"KV_METADATA {{huggingface: '{meta}'}})")
    finally:
        con.close()
    return out
