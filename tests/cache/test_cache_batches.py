"""The cache's batch records: written through the write-ahead log, synced, replayed after a kill,
read back live or by run and spec; bad log lines set aside; any sequence of records and updates
reads back as applied."""

import asyncio
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import textwrap

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.cache.batches import BatchRecord, BatchRequestRow
from judgekit.cache.store import CacheStore
from judgekit.cache.wal import rejected_path


def _rec(bid, run="r1", provider="openai", url="https://api", model="gpt-4o", state="submitted", n=2, alias="judge"):
    return BatchRecord(provider, url, bid, model, alias, run, state, state.upper(), n)


async def test_records_updates_and_reads(tmp_path):
    path = tmp_path / "c.duckdb"
    store = await CacheStore.open(path, run_id="r1")
    store.run_started("r1", "spec-a", "{}")
    store.run_started("r2", "spec-b", "{}")
    store.record_batch(_rec("b1"), [BatchRequestRow("k1", "judge", "1", "h"), BatchRequestRow("k2", "judge", "2", "h")])
    store.record_batch(_rec("b2", run="r2", model="gpt-4.1", n=1), [BatchRequestRow("k3")])
    store.record_batch(_rec("b1", url="http://other", n=1), [BatchRequestRow("k4")])  # same id, another endpoint
    store.update_batch(("openai", "https://api", "b1"), state="in_progress", provider_status="in_progress", succeeded=1)
    assert [b.batch_id for b in await store.batches(live_only=True)] == ["b1", "b2", "b1"]
    store.update_batch(("openai", "https://api", "b1"), state="ended", collected=True, succeeded=2)
    live = await store.batches(live_only=True)
    assert [(b.batch_id, b.base_url) for b in live] == [("b2", "https://api"), ("b1", "http://other")]
    assert [b.batch_id for b in await store.batches(run_id="r2")] == ["b2"]
    assert [b.batch_id for b in await store.batches(spec_name="spec-a")] == ["b1", "b1"]
    assert [b.base_url for b in await store.batches(providers=[("openai", "gpt-4o", "http://other")])] == ["http://other"]
    assert await store.live_keys(["k1", "k2", "k3", "k4", "nope"]) == {"k3", "k4"}
    (done,) = [b for b in await store.batches() if b.collected]
    assert (done.state, done.succeeded, done.requests, done.provider_status) == ("ended", 2, 2, "in_progress")
    assert done.updated_at >= done.created_at and 0 <= done.age_s < 60
    rows = await store.batch_requests(done.ident)
    assert rows == [BatchRequestRow("k1", "judge", "1", "h"), BatchRequestRow("k2", "judge", "2", "h")]
    await store.close()
    store = await CacheStore.open(path, run_id="r3")  # and after a reopen
    assert [b.batch_id for b in await store.batches(live_only=True)] == ["b2", "b1"]
    await store.close()
    assert not [n for n in os.listdir(tmp_path) if ".wal." in n]


CHILD = textwrap.dedent('''
    import asyncio, sys, time
    from judgekit.cache.batches import BatchRecord, BatchRequestRow
    from judgekit.cache.store import CacheStore

    async def main():
        store = await CacheStore.open(sys.argv[1], run_id="child", flush_interval=3600)
        store.record_batch(BatchRecord("openai", "u", "batch_1", "gpt-4o", "judge", "child", "submitted", "validating", 3),
                           [BatchRequestRow(f"k{i}", "judge", str(i), "h") for i in range(3)])
        store.update_batch(("openai", "u", "batch_1"), state="in_progress", provider_status="in_progress")
        print("RECORDED", flush=True)
        time.sleep(60)  # never flushes: only the log holds the record

    asyncio.run(main())
''')


async def test_a_batch_recorded_survives_sigkill(tmp_path):
    path = tmp_path / "c.duckdb"
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "RECORDED"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    p.stdout.close()
    store = await CacheStore.open(path, run_id="next")
    (b,) = await store.batches(live_only=True)
    assert (b.batch_id, b.state, b.requests, b.run_id, b.alias) == ("batch_1", "in_progress", 3, "child", "judge")
    assert [r.key for r in await store.batch_requests(b.ident)] == ["k0", "k1", "k2"]
    await store.close()


async def test_a_bad_batch_line_is_set_aside_and_the_rest_replayed(tmp_path):
    path = tmp_path / "c.duckdb"
    good = {"op": "batch", "id": ["openai", "u", "b9"],
            "row": ["openai", "u", "b9", "m", "a", "r", "submitted", "", 1, 0, 0, False, "", 1_700_000_000_000_000,
                    1_700_000_000_000_000], "requests": [["k", "s", "i", "h"]]}
    bad = [dict(good, row=good["row"][:5]), {"op": "batch_update", "id": ["openai", "u", "b9"], "set": {"state": 7}},
           {"op": "explode", "id": ["a", "b", "c"]}]
    lines = [json.dumps(x) for x in (good, *bad)]
    (tmp_path / "c.duckdb.wal.1.000000001").write_text("\n".join(lines) + "\n")
    store = await CacheStore.open(path, run_id="r")
    assert [b.batch_id for b in await store.batches()] == ["b9"]
    assert store.counters.wal_rejected == 3
    await store.close()
    reasons = [json.loads(x)["reason"] for x in open(rejected_path(str(path)))]
    assert reasons == ["row has not 15 values", "set.state is int", "op 'explode' is not a batch record"]


async def test_an_old_cache_gains_the_batch_tables(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    from judgekit.cache import schema

    con.execute(schema._VERSION_DDL)
    for m in schema.MIGRATIONS[:2]:
        con.execute(m.apply)
        con.execute("INSERT INTO schema_version VALUES ($1, $2, now()::TIMESTAMP)", [m.to_version, m.description])
    con.close()
    store = await CacheStore.open(path, run_id="r")
    assert await store.batches() == []
    assert (await store.query("SELECT max(version) FROM schema_version"))[0][0] == 3
    await store.close()


_ops = st.lists(st.one_of(
    st.tuples(st.just("new"), st.sampled_from(["b1", "b2", "b3"]), st.integers(0, 4)),
    st.tuples(st.just("set"), st.sampled_from(["b1", "b2", "b3"]),
              st.fixed_dictionaries({}, optional={"state": st.sampled_from(["in_progress", "ended", "cancelled"]),
                                                  "succeeded": st.integers(0, 9), "collected": st.booleans(),
                                                  "message": st.text(max_size=8)})),
    st.tuples(st.just("forget"), st.sampled_from(["b1", "b2", "b3"])),
), max_size=12)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops, close=st.booleans())
def test_any_records_and_updates_read_back_as_applied(tmp_path_factory, ops, close):
    """Applied in order to a dict, or written (flushed or only logged) and read back: the same;
    a forgotten batch (an intent settled) leaves neither its row nor its requests."""
    path = tmp_path_factory.mktemp("prop") / "c.duckdb"
    model: dict[str, dict] = {}
    for op in ops:
        if op[0] == "new":
            model[op[1]] = {"state": "submitted", "succeeded": 0, "collected": False, "message": "", "n": op[2]}
        elif op[0] == "forget":
            model.pop(op[1], None)
        elif op[1] in model:
            model[op[1]].update(op[2])

    async def write():
        store = await CacheStore.open(path, run_id="r", flush_interval=3600)
        for op in ops:
            if op[0] == "new":
                store.record_batch(_rec(op[1], n=op[2]), [BatchRequestRow(f"{op[1]}-{i}") for i in range(op[2])])
            elif op[0] == "forget":  # an intent settled: its row and requests deleted
                store.forget_batch(("openai", "https://api", op[1]))
            elif op[1] in model:  # updates of a batch never recorded are not made (the layer never does)
                store.update_batch(("openai", "https://api", op[1]), **op[2])
        if close:
            await store.close()
            return
        # as if killed: nothing reaches the file but the log, which is left behind
        with store._lock:
            segment = store._wal._path
            with open(segment, "rb") as f:
                log = f.read()
            store._batch_ops.clear()
        await store.close()
        with open(segment, "wb") as f:
            f.write(log)

    async def read():
        store = await CacheStore.open(path, run_id="r2")
        got = {b.batch_id: {"state": b.state, "succeeded": b.succeeded, "collected": b.collected,
                            "message": b.message, "n": b.requests} for b in await store.batches()}
        keys = {b.batch_id: sorted(r.key for r in await store.batch_requests(b.ident)) for b in await store.batches()}
        await store.close()
        return got, keys

    asyncio.run(write())
    got, keys = asyncio.run(read())
    assert got == model
    for bid, ks in keys.items():  # a batch recorded again keeps the requests of every record (ids are unique)
        assert set(ks) >= {f"{bid}-{i}" for i in range(model[bid]["n"])}
        forgot = [i for i, op in enumerate(ops) if op == ("forget", bid)]
        if forgot:  # none of the requests recorded before it was forgotten
            assert set(ks) <= {f"{bid}-{i}" for op in ops[max(forgot) + 1:] if op[:2] == ("new", bid)
                               for i in range(op[2])}, ops


def test_record_dates_are_utc():
    r = _rec("x")
    r.created_at = dt.datetime(2026, 1, 2, 3, 4, 5)
    assert r._values()[13] == int(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc).timestamp() * 1e6)
