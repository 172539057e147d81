"""`judgekit cache ...` given wrong arguments: one line naming what is wrong, exit 2."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from oneline import assert_user_error, invoke

from judgekit.cache import CacheStore, RequestMeta
from judgekit.types import ChatResponse, Usage


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    path = tmp_path / "c.duckdb"

    async def fill() -> None:
        s = await CacheStore.open(path, run_id="r1")
        s.put("k1", RequestMeta("openai", "gpt-4o", stage="candidate"), ChatResponse("a", Usage(5, 10)))
        await s.write_table("scores", [{"item": "q1", "score": 3}])
        await s.close()

    asyncio.run(fill())
    return path


def test_export_of_an_unknown_table_lists_the_valid_ones(cache, tmp_path):
    r = invoke("cache", "export", tmp_path / "x.jsonl", "--table", "NOSUCH", "--cache", cache)
    line = assert_user_error(r, "'NOSUCH'", "responses", "attempts", "runs", "result_scores")
    assert "schema_version" not in line  # bookkeeping, not a table to export
    assert not (tmp_path / "x.jsonl").exists()


def test_prune_without_a_filter_says_which_to_give(cache):
    r = invoke("cache", "prune", "--cache", cache)
    assert_user_error(r, "--older-than-days", "--model", "--stage", "--failures")


@pytest.mark.parametrize("days", ["inf", "nan", "-1", "-1e308"])
def test_prune_with_an_impossible_age(cache, days):
    assert_user_error(invoke("cache", "prune", "--older-than-days", days, "--cache", cache), "--older-than-days")


def test_prune_older_than_the_calendar_removes_nothing(cache):
    r = invoke("cache", "prune", "--older-than-days", "1e300", "--cache", cache)
    assert r.exit_code == 0 and "removed 0 rows" in r.stdout


def test_export_into_a_missing_folder_or_onto_a_folder(cache, tmp_path):
    assert_user_error(invoke("cache", "export", tmp_path / "no" / "such" / "x.jsonl", "--cache", cache),
                      str(tmp_path / "no" / "such" / "x.jsonl"))
    assert_user_error(invoke("cache", "export", tmp_path, "--cache", cache), str(tmp_path), "folder")


def test_a_file_that_is_not_a_cache(tmp_path):
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database\n")
    for args in (["cache", "stats"], ["cache", "prune", "--stage", "x"], ["estimate", "quickstart"]):
        assert_user_error(invoke(*args, "--cache", junk), str(junk), "cannot be opened as a cache")


def test_a_folder_given_as_the_cache_file(tmp_path):
    assert_user_error(invoke("cache", "stats", "--cache", tmp_path), str(tmp_path), "folder")
    assert_user_error(invoke("estimate", "quickstart", "--cache", tmp_path), str(tmp_path))


def test_cache_or_out_under_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_user_error(invoke("estimate", "quickstart", "--cache", f / "sub" / "c.duckdb"), "--cache", str(f / "sub"))
    assert_user_error(invoke("run", "quickstart", "--cache", tmp_path / "c.duckdb", "--out", f / "o"),
                      "--out", str(f / "o"))
