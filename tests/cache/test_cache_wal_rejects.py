"""What a server sent can never make the cache unopenable: replay keeps every good line of the
write-ahead log and sets aside (counted, warned, kept in ``<file>.wal-rejected``) the rest, and
``put`` never logs a row the file would refuse."""

import json
import logging
import os

import duckdb

from judgekit.cache.store import CacheStore, RequestMeta
from judgekit.types import ChatResponse, Usage

NOW_US = 1_700_000_000_000_000


def line(key, text="an answer", inp=3, out=2, ascii=False, **changes):
    row = [key, "openai", "m", "u", "stage", "item", text, inp, out, "stop", 0.25, "req", 0.001, "h", "old-run",
           NOW_US]
    for i, v in changes.items():
        row[int(i[1:])] = v
    return json.dumps(row, ensure_ascii=ascii)


# the lines the old code accepted (right arity, valid JSON) and DuckDB refused at replay
BAD = {
    "list_text": line("bad-list", text=[{"type": "text", "text": "hi"}]),
    "huge_usage": line("bad-huge", inp=2**40),
    "string_usage": line("bad-str", out="lots"),
    "numeric_text": line("bad-num", text=42),
    "null_text": line("bad-null", text=None),
    "empty_text": line("bad-empty", text="   "),
    "bool_usage": line("bad-bool", inp=True),
    "fraction_usage": line("bad-frac", out=2.5),
    "short_row": json.dumps(["bad-short", "openai", "m"]),
    "not_a_row": json.dumps({"key": "bad-obj"}),
    "not_json": "this is not json at all",
    "surrogate": line("bad-surrogate", ascii=True, p13="\ud800"),  # json.dumps escapes it; DuckDB cannot store it
}


def write_segment(path, lines, tail=""):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(ln + "\n" for ln in lines) + tail)


async def test_replay_keeps_good_lines_and_sets_the_bad_ones_aside(tmp_path, caplog):
    db = tmp_path / "c.duckdb"
    good = [line(f"good-{i}", text=f"answer {i} \u00e9") for i in range(20)]
    # good and bad lines interleaved over two segments, a later bad put of a good key, and a last
    # line cut short by a kill (skipped, as ever, not set aside)
    mixed = [ln for i, b in enumerate(BAD.values()) for ln in (good[i % 6], b)]
    write_segment(f"{db}.wal.111.000000001", good[:6] + mixed + [line("good-0", text=["late", "bad"])])
    write_segment(f"{db}.wal.111.000000002", good[6:], tail='["good-cut", "openai", "m"')

    with caplog.at_level(logging.WARNING, logger="judgekit.cache.store"):
        store = await CacheStore.open(db, run_id="next")
    assert store.counters.wal_replayed == 20
    assert store.counters.wal_rejected == len(BAD) + 1
    got = await store.get_many([f"good-{i}" for i in range(20)] + [f"bad-{k}" for k in ("list", "huge", "str")])
    assert sorted(got) == sorted(f"good-{i}" for i in range(20))
    assert got["good-0"].text == "answer 0 \u00e9"  # the later bad put of the key did not win
    assert (got["good-3"].usage.input_tokens, got["good-3"].usage.output_tokens) == (3, 2)
    await store.close()

    # one warning names the count and where the lines are
    warned = [r.getMessage() for r in caplog.records if "write-ahead log" in r.getMessage()]
    assert len(warned) == 1 and f"{len(BAD) + 1} lines" in warned[0] and "wal-rejected" in warned[0]
    # nothing is lost: every bad line is in <file>.wal-rejected with its reason, as it was
    kept = [json.loads(ln) for ln in (tmp_path / "c.duckdb.wal-rejected").read_text().splitlines()]
    assert len(kept) == len(BAD) + 1
    assert {k["line"] for k in kept} >= set(BAD.values())
    reasons = {k["line"]: k["reason"] for k in kept}
    assert "text is list" in reasons[BAD["list_text"]]
    assert "input_tokens is 1099511627776, outside" in reasons[BAD["huge_usage"]]
    assert "output_tokens is str" in reasons[BAD["string_usage"]]
    assert "text is empty" in reasons[BAD["empty_text"]]
    assert reasons[BAD["not_json"]] == "not JSON"
    assert not [n for n in os.listdir(tmp_path) if ".wal." in n]  # the log is replayed and gone

    # and the cache opens again, cleanly, with the good rows only
    store = await CacheStore.open(db, run_id="again")
    assert store.counters.wal_rejected == 0 and await store.count_responses() == 20
    await store.close()


async def test_a_row_duckdb_refuses_in_a_batch_does_not_sink_the_batch(tmp_path, monkeypatch):
    """The bulk insert's guard: a row the check let through but DuckDB refuses is set aside alone."""
    import judgekit.cache.wal as wal

    db = tmp_path / "c.duckdb"
    write_segment(f"{db}.wal.1.000000001", [line(f"g{i}") for i in range(5)] + [line("refused")])
    monkeypatch.setattr(wal, "response_row_problem", lambda row: None)  # let everything through the check
    write_segment(f"{db}.wal.1.000000002", [line("nulltext", text=None)])  # NOT NULL: DuckDB refuses
    store = await CacheStore.open(db, run_id="r")
    assert store.counters.wal_replayed == 6 and store.counters.wal_rejected == 1
    assert await store.count_responses() == 6
    await store.close()
    kept = [json.loads(ln) for ln in (tmp_path / "c.duckdb.wal-rejected").read_text().splitlines()]
    assert len(kept) == 1 and "refused by DuckDB" in kept[0]["reason"] and "nulltext" in kept[0]["line"]


async def test_put_refuses_rows_the_file_could_not_hold(tmp_path):
    db = tmp_path / "c.duckdb"
    store = await CacheStore.open(db, run_id="r", flush_interval=3600)
    meta = RequestMeta("openai", "m")
    store.put("ok", meta, ChatResponse("fine", Usage(1, 2)))
    store.put("list", meta, ChatResponse([{"type": "text", "text": "x"}], Usage(1, 2)))  # type: ignore[arg-type]
    store.put("huge", meta, ChatResponse("x", Usage(2**40, 2)))
    store.put("empty", meta, ChatResponse("  ", Usage(1, 2)))
    assert store.counters.rows_rejected == 3
    assert await store.get("list") is None and await store.get("empty") is None
    # nothing refused reached the log
    logged = b"".join(open(os.path.join(tmp_path, n), "rb").read() for n in os.listdir(tmp_path) if ".wal." in n)
    assert logged.count(b"\n") == 1 and b'"ok"' in logged
    await store.close()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select key from responses").fetchall() == [("ok",)]
    con.close()
    assert len((tmp_path / "c.duckdb.wal-rejected").read_text().splitlines()) == 3


async def test_a_cached_empty_answer_is_a_miss(tmp_path):
    """A cache an older judgekit filled with empty answers is repaired by the next run: the
    lookup misses, and the new answer replaces the row."""
    db = tmp_path / "c.duckdb"
    store = await CacheStore.open(db, run_id="r")
    await store.close()
    con = duckdb.connect(str(db))
    con.execute("insert into responses (key, provider, model, text, created_at) values "
                "('old', 'openai', 'm', '', now()), ('kept', 'openai', 'm', 'yes', now())")
    con.close()
    store = await CacheStore.open(db, run_id="r2")
    assert await store.get("old") is None and (await store.get("kept")).text == "yes"
    store.put("old", RequestMeta("openai", "m"), ChatResponse("repaired"))
    await store.flush()
    await store.close()
    store = await CacheStore.open(db, run_id="r3")
    assert (await store.get("old")).text == "repaired"
    await store.close()


async def test_failure_rows_are_made_storable(tmp_path):
    db = tmp_path / "c.duckdb"
    store = await CacheStore.open(db, run_id="r")
    meta = RequestMeta("openai", "m")
    store.record_failure("k", meta, "malformed_reply", 2**40, "bad \ud800 body " + "x" * 10_000)
    store.put("k2", meta, ChatResponse("fine"))
    await store.flush()
    assert await store.count_attempts() == 1 and await store.count_responses() == 1
    rows = await store.query("select status, length(message) from attempts")
    assert rows == [(None, 2000)]
    await store.close()
