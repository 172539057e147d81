"""`judgekit report RUN_DIR...`: rebuilds each run's page from report.json, writes a leaderboard for
several runs (./leaderboard.html or --out), and every bad folder is one line, exit 2."""

from __future__ import annotations

import json

import pytest
from oneline import assert_user_error, invoke

from judgekit.report.doc import Headline, ReportDoc
from judgekit.report.write import write_report


def _run(path, benchmark="creation_mmbench", heads=(("a", 1.0),)):
    write_report(path, ReportDoc(title=f"run {path.name}", benchmark=benchmark,
                                 headline=[Headline(c, "reward", v) for c, v in heads]))
    return path


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_one_run_is_rebuilt_from_report_json_alone(here):
    run = _run(here / "r1")
    (run / "report.html").unlink()
    r = invoke("report", run)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [str(run / "report.html")]
    assert "run r1" in (run / "report.html").read_text(encoding="utf-8")
    assert not (here / "leaderboard.html").exists()  # one run of one candidate: no leaderboard


def test_several_runs_write_a_leaderboard(here):
    a, b = _run(here / "r1", heads=(("a", 1.0),)), _run(here / "r2", heads=(("a", 3.0), ("b", 2.0)))
    r = invoke("report", a, b)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [str(a / "report.html"), str(b / "report.html"), "leaderboard: leaderboard.html"]
    page = (here / "leaderboard.html").read_text(encoding="utf-8")
    assert 'href="r1/report.html"' in page and 'href="r2/report.html"' in page
    # one run with several candidates: its page ranks them, no leaderboard file in the current folder
    (here / "leaderboard.html").unlink()
    r = invoke("report", b)
    assert r.exit_code == 0 and r.stdout.splitlines() == [str(b / "report.html")]
    assert not (here / "leaderboard.html").exists()
    # --out asks for one, and puts it there, links relative to it
    r = invoke("report", b, "--out", here / "boards" / "b.html")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == f"leaderboard: {here / 'boards' / 'b.html'}"
    assert 'href="../r2/report.html"' in (here / "boards" / "b.html").read_text(encoding="utf-8")


def test_bad_folders_are_one_line_and_nothing_is_written(here):
    good = _run(here / "good")
    (good / "report.html").unlink()
    assert_user_error(invoke("report", good, here / "missing"), str(here / "missing"), "no such folder")
    assert not (good / "report.html").exists()  # every folder is checked before anything is written
    (here / "old").mkdir()
    (here / "old" / "summary.json").write_text(json.dumps({"spec": "quickstart"}))
    assert_user_error(invoke("report", here / "old"), str(here / "old" / "report.json"), "written by judgekit run since",
                      "run the spec again")
    (here / "bad").mkdir()
    (here / "bad" / "report.json").write_text('{"title": "t", "headline": [}')
    assert_user_error(invoke("report", here / "bad"), str(here / "bad" / "report.json"), "invalid JSON at line 1")
    (here / "bad" / "report.json").write_text('{"title": "t", "charts": [{"groups": []}]}')
    assert_user_error(invoke("report", here / "bad"), str(here / "bad" / "report.json"), "not a valid report")
    (here / "afile").write_text("x")
    assert_user_error(invoke("report", here / "afile"), str(here / "afile"), "not a folder")
    assert_user_error(invoke("report", good, "--out", here / "afile" / "lb.html"), str(here / "afile" / "lb.html"))
    assert_user_error(invoke("report"), "RUN_DIR")


def test_help_says_it_in_a_few_lines():
    r = invoke("report", "--help")
    assert r.exit_code == 0
    assert "report.json" in r.output and "leaderboard" in r.output and "--out" in r.output


def test_a_glob_of_the_output_folder_skips_what_is_no_run_folder(here):
    """`judgekit report judgekit-out/*` as docs/report.md shows it: the default cache file, its image
    store and WAL segments live beside the run folders; each is skipped with one line, the runs'
    pages and the leaderboard are written, exit 0."""
    out = here / "judgekit-out"
    a, b = _run(out / "quickstart"), _run(out / "other", heads=(("b", 2.0),))
    (out / "cache.duckdb").write_bytes(b"DUCK")
    (out / "cache.duckdb.wal.123.0").write_text("{}\n")
    (out / "cache.duckdb.blobs" / "ab").mkdir(parents=True)
    (out / "old").mkdir()
    (out / "old" / "summary.json").write_text("{}")
    paths = sorted(out.iterdir())  # the shell's expansion of judgekit-out/*
    r = invoke("report", *paths)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [str(b / "report.html"), str(a / "report.html"), "leaderboard: leaderboard.html"]
    skipped = r.stderr.splitlines()
    assert skipped == [f"skipped {out / 'cache.duckdb'}: not a run folder (a file)",
                       f"skipped {out / 'cache.duckdb.blobs'}: not a run folder (no report.json)",
                       f"skipped {out / 'cache.duckdb.wal.123.0'}: not a run folder (a file)",
                       f"skipped {out / 'old'}: not a run folder (no report.json (a run folder from an older "
                       "version: run the spec again to write it))",
                       # two runs of one benchmark, compared item by item from their results.parquet: these have none
                       "no item differences for other -> quickstart: other has no results.parquet"]
    assert 'href="judgekit-out/quickstart/report.html"' in (here / "leaderboard.html").read_text(encoding="utf-8")


def test_a_glob_with_no_run_folder_or_a_missing_path_is_an_error(here):
    out = here / "judgekit-out"
    out.mkdir()
    (out / "cache.duckdb").write_bytes(b"DUCK")
    (out / "cache.duckdb.blobs").mkdir()
    assert_user_error(invoke("report", *sorted(out.iterdir())), "none of the 2 paths is a run folder",
                      str(out / "cache.duckdb"))
    good = _run(out / "good")
    (good / "report.html").unlink()
    # a path that does not exist is a typo, not a glob's by-product; a run folder with a broken
    # report.json is a run folder: both stop the command before anything is written
    assert_user_error(invoke("report", good, out / "cache.duckdb", here / "missing"), "no such folder")
    (out / "bad").mkdir()
    (out / "bad" / "report.json").write_text("{")
    assert_user_error(invoke("report", good, out / "bad"), str(out / "bad" / "report.json"), "invalid JSON")
    assert not (good / "report.html").exists() and not (here / "leaderboard.html").exists()
