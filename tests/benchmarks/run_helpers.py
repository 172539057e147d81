"""Helpers the benchmark run tests share (imported by name: pytest puts this folder on sys.path)."""

import csv

import duckdb

from judgekit.cache.store import CacheStore


def read_csv(path) -> list[dict[str, str]]:
    """A results CSV as dicts."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


async def stage_rows(cache) -> dict[str, int]:
    """Cached responses per stage, after replaying the write-ahead log a killed run left."""
    store = await CacheStore.open(str(cache), run_id="count")
    await store.close()
    con = duckdb.connect(str(cache), read_only=True)
    try:
        return dict(con.execute("select stage, count(*) from responses group by stage").fetchall())
    finally:
        con.close()
