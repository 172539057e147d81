"""Schema: new files get every migration, old files are upgraded, newer files are refused."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import judgekit.cache.schema as schema
from judgekit.cache import CacheStore, RequestMeta
from judgekit.cache.schema import SCHEMA_VERSION, CacheSchemaError
from judgekit.types import ChatResponse

# the version-1 layout, written out by hand as judgekit 0.0 created it
V1_DDL = """
CREATE TABLE schema_version (version INTEGER NOT NULL, description VARCHAR,
                             applied_at TIMESTAMP NOT NULL);
INSERT INTO schema_version VALUES (1, 'responses and attempts', TIMESTAMP '2025-01-01 00:00:00');
CREATE TABLE responses (
    key VARCHAR PRIMARY KEY, provider VARCHAR NOT NULL, model VARCHAR NOT NULL,
    base_url VARCHAR, stage VARCHAR, item_id VARCHAR, text VARCHAR NOT NULL,
    input_tokens INTEGER, output_tokens INTEGER, finish_reason VARCHAR, latency_s DOUBLE,
    request_id VARCHAR, created_at TIMESTAMP NOT NULL);
CREATE TABLE attempts (
    key VARCHAR NOT NULL, provider VARCHAR, model VARCHAR, stage VARCHAR, item_id VARCHAR,
    error_kind VARCHAR NOT NULL, status INTEGER, message VARCHAR, created_at TIMESTAMP NOT NULL);
INSERT INTO responses VALUES ('old-key', 'openai', 'gpt-4o', '', 'candidate', 'q1', 'old answer',
                              5, 7, 'stop', 1.5, 'req-old', TIMESTAMP '2025-01-01 00:00:00');
INSERT INTO attempts VALUES ('old-fail', 'openai', 'gpt-4o', 'candidate', 'q1', 'transient', 503,
                             'overloaded', TIMESTAMP '2025-01-01 00:00:00');
"""


def _version(path: Path) -> int:
    con = duckdb.connect(str(path))
    try:
        return con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    finally:
        con.close()


def test_public_api():
    assert "open_database" in schema.__all__ and "MIGRATIONS" in schema.__all__
    assert [m.to_version for m in schema.MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))


def test_new_file_runs_every_migration(tmp_path: Path):
    con = schema.open_database(tmp_path / "new.duckdb")
    try:
        rows = con.execute("SELECT version FROM schema_version ORDER BY 1").fetchall()
        assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
        cols = [r[0] for r in con.execute("DESCRIBE responses").fetchall()]
        assert sorted(cols) == sorted(c for c, _ in schema.RESPONSE_COLUMNS)
        cols = [r[0] for r in con.execute("DESCRIBE attempts").fetchall()]
        assert sorted(cols) == sorted(c for c, _ in schema.ATTEMPT_COLUMNS)
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    finally:
        con.close()


async def test_v1_file_is_upgraded_not_broken(tmp_path: Path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(V1_DDL)
    con.close()
    assert _version(path) == 1

    s = await CacheStore.open(path, run_id="new-run")
    try:
        old = await s.get("old-key")
        assert old is not None and old.text == "old answer" and old.usage.output_tokens == 7
        assert old.cost_usd == 0.0  # the column added by migration 2 defaults to 0
        assert await s.count_attempts() == 1
        s.put("new-key", RequestMeta("openai", "gpt-4o", prompt_hash="ph"), ChatResponse("new"))
        s.run_started("new-run", "after upgrade", "{}")
        await s.flush()
        assert (await s.get("new-key")).text == "new"
        assert await s.query("SELECT run_id, prompt_hash FROM responses WHERE key = 'new-key'") == [
            ("new-run", "ph")]
        assert await s.query("SELECT name FROM runs") == [("after upgrade",)]
    finally:
        await s.close()
    assert _version(path) == SCHEMA_VERSION


async def test_newer_file_is_refused(tmp_path: Path):
    path = tmp_path / "future.duckdb"
    schema.open_database(path).close()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_version VALUES (99, 'from the future', now()::TIMESTAMP)")
    con.close()
    with pytest.raises(CacheSchemaError, match="newer than this judgekit"):
        await CacheStore.open(path, run_id="r")
    with pytest.raises(CacheSchemaError, match="version 99"):
        schema.open_database(path, read_only=True)


def test_foreign_duckdb_file_is_refused(tmp_path: Path):
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales (id INTEGER)")
    con.close()
    with pytest.raises(CacheSchemaError, match="not a judgekit cache"):
        schema.open_database(path)


def test_read_only_open_of_an_old_file_asks_for_an_upgrade(tmp_path: Path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(V1_DDL)
    con.close()
    with pytest.raises(CacheSchemaError, match="read-write once"):
        schema.open_database(path, read_only=True)
    assert _version(path) == 1  # untouched


def test_failed_migration_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(V1_DDL)
    con.close()

    def boom(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("ALTER TABLE responses ADD COLUMN half_done VARCHAR")
        raise RuntimeError("migration bug")

    bad = schema.MIGRATIONS[:1] + (schema.Migration(2, "broken", boom),)
    monkeypatch.setattr(schema, "MIGRATIONS", bad)
    with pytest.raises(RuntimeError, match="migration bug"):
        schema.open_database(path)
    con = duckdb.connect(str(path))
    try:
        assert con.execute("SELECT max(version) FROM schema_version").fetchone() == (1,)
        assert "half_done" not in [r[0] for r in con.execute("DESCRIBE responses").fetchall()]
    finally:
        con.close()


def test_result_table_names_are_checked():
    assert schema.result_table_name("scores_v2") == "result_scores_v2"
    for bad in ("", "1x", "a-b", 'x"; DROP TABLE responses; --'):
        with pytest.raises(ValueError):
            schema.result_table_name(bad)
