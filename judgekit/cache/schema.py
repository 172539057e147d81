"""The cache file's layout: tables, the ``schema_version`` table, migrations and result tables.

A cache file is upgraded, never broken: :func:`open_database` reads the file's version from
``schema_version`` and applies every migration from there to :data:`SCHEMA_VERSION`, each in
its own transaction, recording one ``schema_version`` row per step.  A new file is built by
running every migration from version 0, so the upgrade path is the creation path and is
exercised every time.  A file newer than this code raises :class:`CacheSchemaError`.

Versions:

- **1** -- ``responses`` and ``attempts`` (first layout).
- **2** -- cost and provenance: ``responses.cost_usd``, ``responses.prompt_hash``,
  ``responses.run_id``, ``attempts.run_id``, and the ``runs`` table.
- **3** -- provider batches: ``batches`` and ``batch_requests`` (:mod:`judgekit.cache.batches`).

Tables at the current version:

- ``responses`` -- one row per successful call, ``key`` (see :mod:`judgekit.cache.keys`) is the
  primary key.  Errors are never stored here.
- ``attempts`` -- one row per FAILED attempt (``error_kind`` is ``ProviderError.kind``).
- ``runs`` -- one row per ``judgekit run``.
- ``batches``, ``batch_requests`` -- the provider batches a run submitted and the calls in each
  (see :mod:`judgekit.cache.batches`).
- ``result_<name>`` -- tables the report layer writes with :func:`write_result_table`.

Timestamps are ``TIMESTAMP`` (no time zone) holding UTC.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union

import duckdb

from judgekit.cache.batches import BATCH_DDL
from judgekit.errors import CacheLockedError, CacheSchemaError

__all__ = [
    "SCHEMA_VERSION",
    "MIGRATIONS",
    "Migration",
    "CacheSchemaError",
    "RESPONSE_COLUMNS",
    "ATTEMPT_COLUMNS",
    "RESULT_PREFIX",
    "open_database",
    "schema_version",
    "migrate",
    "locked_error",
    "write_result_table",
    "result_table_name",
]




#: (name, DuckDB type) of ``responses``, in insert order (the store builds rows in this order)
RESPONSE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("key", "VARCHAR"),
    ("provider", "VARCHAR"),
    ("model", "VARCHAR"),
    ("base_url", "VARCHAR"),
    ("stage", "VARCHAR"),
    ("item_id", "VARCHAR"),
    ("text", "VARCHAR"),
    ("input_tokens", "INTEGER"),
    ("output_tokens", "INTEGER"),
    ("finish_reason", "VARCHAR"),
    ("latency_s", "DOUBLE"),
    ("request_id", "VARCHAR"),
    ("cost_usd", "DOUBLE"),
    ("prompt_hash", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
)

#: (name, DuckDB type) of ``attempts``, in insert order
ATTEMPT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("key", "VARCHAR"),
    ("provider", "VARCHAR"),
    ("model", "VARCHAR"),
    ("stage", "VARCHAR"),
    ("item_id", "VARCHAR"),
    ("error_kind", "VARCHAR"),
    ("status", "INTEGER"),
    ("message", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
)

RESULT_PREFIX = "result_"

_V1 = """
CREATE TABLE responses (
    key VARCHAR PRIMARY KEY,
    provider VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    base_url VARCHAR,
    stage VARCHAR,
    item_id VARCHAR,
    text VARCHAR NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    finish_reason VARCHAR,
    latency_s DOUBLE,
    request_id VARCHAR,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE attempts (
    key VARCHAR NOT NULL,
    provider VARCHAR,
    model VARCHAR,
    stage VARCHAR,
    item_id VARCHAR,
    error_kind VARCHAR NOT NULL,
    status INTEGER,
    message VARCHAR,
    created_at TIMESTAMP NOT NULL
);
"""

_V2 = """
ALTER TABLE responses ADD COLUMN cost_usd DOUBLE DEFAULT 0;
ALTER TABLE responses ADD COLUMN prompt_hash VARCHAR DEFAULT '';
ALTER TABLE responses ADD COLUMN run_id VARCHAR DEFAULT '';
ALTER TABLE attempts ADD COLUMN run_id VARCHAR DEFAULT '';
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    name VARCHAR,
    spec_json VARCHAR,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    status VARCHAR,
    summary_json VARCHAR
);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step from ``to_version - 1`` to ``to_version``: SQL text or ``apply(con)``."""

    to_version: int
    description: str
    apply: Union[str, Callable[[duckdb.DuckDBPyConnection], None]]


#: ordered steps; ``MIGRATIONS[i]`` takes a file from version ``i`` to ``i + 1``
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "responses and attempts", _V1),
    Migration(2, "cost_usd, prompt_hash, run_id columns; runs table", _V2),
    Migration(3, "batches and batch_requests tables", BATCH_DDL),
)

#: the version this code reads and writes
SCHEMA_VERSION: int = MIGRATIONS[-1].to_version

_VERSION_DDL = (
    "CREATE TABLE IF NOT EXISTS schema_version "
    "(version INTEGER NOT NULL, description VARCHAR, applied_at TIMESTAMP NOT NULL)"
)


def locked_error(path: str | os.PathLike[str], exc: BaseException) -> CacheLockedError:
    """The :class:`CacheLockedError` for a DuckDB lock failure on ``path``."""
    return CacheLockedError(
        f"cache file {os.fspath(path)!s} is in use by another judgekit process; wait for it to "
        f"finish or pass a different --cache PATH ({exc})"
    )


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()
    return {r[0] for r in rows}


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The file's schema version: 0 for an empty database.

    Raises :class:`CacheSchemaError` for a database that has tables but no ``schema_version``
    (not a judgekit cache).
    """
    tables = _tables(con)
    if "schema_version" not in tables:
        if tables:
            raise CacheSchemaError(
                "this DuckDB file is not a judgekit cache (it has tables "
                f"{sorted(tables)[:5]} but no schema_version table)"
            )
        return 0
    v = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(v[0]) if v and v[0] is not None else 0


def migrate(con: duckdb.DuckDBPyConnection, *, where: str = "cache file") -> int:
    """Bring ``con``'s database to :data:`SCHEMA_VERSION`; returns the version it started at."""
    start = schema_version(con)
    if start > SCHEMA_VERSION:
        raise CacheSchemaError(
            f"{where} has schema version {start}, newer than this judgekit understands "
            f"({SCHEMA_VERSION}); upgrade judgekit or pass a different --cache PATH"
        )
    for m in MIGRATIONS[start:]:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(_VERSION_DDL)
            if isinstance(m.apply, str):
                con.execute(m.apply)
            else:
                m.apply(con)
            con.execute(
                "INSERT INTO schema_version VALUES ($1, $2, $3)",
                [m.to_version, m.description, _utcnow()],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return start


def open_database(
    path: str | os.PathLike[str], *, read_only: bool = False
) -> duckdb.DuckDBPyConnection:
    """Connect to the cache file at ``path`` and upgrade it to the current schema.

    Raises :class:`CacheLockedError` when another process holds the file,
    :class:`CacheSchemaError` when it is newer than this code, not a judgekit cache, or
    opened ``read_only`` while it still needs upgrading.
    """
    where = os.fspath(path)
    if read_only and not os.path.exists(where):
        raise FileNotFoundError(f"no cache file at {where}")
    try:
        con = duckdb.connect(where, read_only=read_only)
    except duckdb.Error as exc:
        if _is_lock_error(exc):
            raise locked_error(where, exc) from exc
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CacheSchemaError(f"{where}: cannot be opened as a cache ({first}); pass a different --cache PATH") from None
    try:
        if read_only:
            v = schema_version(con)
            if v > SCHEMA_VERSION:
                raise CacheSchemaError(
                    f"{where} has schema version {v}, newer than this judgekit understands "
                    f"({SCHEMA_VERSION}); upgrade judgekit or pass a different --cache PATH"
                )
            if v < SCHEMA_VERSION:
                raise CacheSchemaError(
                    f"{where} has schema version {v}; open it read-write once to upgrade it "
                    f"to {SCHEMA_VERSION}"
                )
        else:
            migrate(con, where=where)
    except BaseException:
        con.close()
        raise
    return con


def _utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


# --------------------------------------------------------------------------- result tables

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def result_table_name(name: str) -> str:
    """``result_<name>``; ``name`` must be an identifier (letters, digits, ``_``)."""
    if not _NAME_RE.match(name):
        raise ValueError(f"result table name {name!r} must match {_NAME_RE.pattern}")
    return RESULT_PREFIX + name


def _quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


def _kind(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT"
    if isinstance(v, float):
        return "DOUBLE"
    if isinstance(v, str):
        return "VARCHAR"
    if isinstance(v, _dt.datetime):
        return "TIMESTAMP"
    if isinstance(v, _dt.date):
        return "DATE"
    return "JSON"  # dicts, lists and anything else, stored as JSON text


def _merge(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    if {a, b} == {"BIGINT", "DOUBLE"}:
        return "DOUBLE"
    return "VARCHAR"


def _cell(v: Any, typ: str) -> Any:
    if v is None:
        return None
    if typ == "JSON":
        return json.dumps(v, default=str, ensure_ascii=False)
    if typ == "VARCHAR" and not isinstance(v, str):
        if isinstance(v, (dict, list)):
            return json.dumps(v, default=str, ensure_ascii=False)
        return str(v)
    if typ == "DOUBLE":
        return float(v)
    return v


def write_result_table(
    con: duckdb.DuckDBPyConnection,
    name: str,
    rows: Sequence[dict[str, Any]],
) -> str:
    """Create or replace ``result_<name>`` from ``rows``; returns the table name.

    Columns are the union of the rows' keys in first-seen order; a column's type is inferred
    from all its non-null values (bool -> BOOLEAN, int -> BIGINT, float -> DOUBLE, int mixed
    with float -> DOUBLE, str -> VARCHAR, datetime -> TIMESTAMP, date -> DATE, dict/list ->
    JSON text, anything mixed -> VARCHAR, all null -> VARCHAR).  A missing key is NULL.
    The data goes in as one typed list per column (no pandas or pyarrow).  With no rows the
    table is created empty with one ``_empty BOOLEAN`` column.
    """
    table = result_table_name(name)
    columns: dict[str, str | None] = {}
    for row in rows:
        for k, v in row.items():
            columns[k] = _merge(columns.get(k), _kind(v))
    con.execute("BEGIN TRANSACTION")
    try:
        if not columns:
            con.execute(f"CREATE OR REPLACE TABLE {_quote(table)} (_empty BOOLEAN)")
        else:
            types = {k: (t or "VARCHAR") for k, t in columns.items()}
            selects = []
            params = []
            for i, (col, typ) in enumerate(types.items(), start=1):
                sql_type = "VARCHAR" if typ == "JSON" else typ
                cast = f"unnest(${i}::{sql_type}[])"
                if typ == "JSON":
                    cast = f"CAST({cast} AS JSON)"
                selects.append(f"{cast} AS {_quote(col)}")
                params.append([_cell(r.get(col), typ) for r in rows])
            con.execute(
                f"CREATE OR REPLACE TABLE {_quote(table)} AS SELECT {', '.join(selects)}",
                params,
            )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return table
