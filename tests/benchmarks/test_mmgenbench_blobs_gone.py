"""A generated image or an encoding deleted from the image store after it was made is made again by
the next run: exactly the calls whose cached replies name a deleted file, with the same outputs as
before.  The shipped MMGenBench runner, offline (the simulator and the tests' fake local worker,
as the goldens run it)."""

import asyncio
import csv
import json
import os
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden"))
from golden import FAKE_WORKER, _unthrottled, offline_spec  # noqa: E402

from judgekit.engine import Engine  # noqa: E402
from judgekit.providers import local as local_provider  # noqa: E402
from judgekit.runner import RunOptions, blob_dir_for, estimate_spec, run_spec  # noqa: E402

#: summary keys that count this run's calls (a rerun's differ by design); every other key must not
_CALL_COUNTS = ("paid_calls", "cache_hits", "calls_by_provider", "this_process", "earlier_processes", "run_id",
                "started_at", "finished_at", "elapsed_s", "estimate")


@pytest.fixture(autouse=True)
def fake_worker(monkeypatch):
    monkeypatch.setenv(local_provider.WORKER_ENV, f"{sys.executable} {FAKE_WORKER}")


def run(root: Path, name: str):
    spec = _unthrottled(offline_spec("mmgenbench")[0])
    return asyncio.run(run_spec(spec, RunOptions(out_dir=root / name, cache_path=root / "cache.duckdb", yes=True)))


def to_make(root: Path) -> dict[str, int]:
    """The estimate's calls to make per stage."""
    spec = _unthrottled(offline_spec("mmgenbench")[0])
    est = asyncio.run(estimate_spec(spec, RunOptions(out_dir=root / "est", cache_path=root / "cache.duckdb")))
    found: dict[str, int] = {}
    for line in est.estimate.lines:
        found[line.stage] = found.get(line.stage, 0) + line.calls_to_make
    return found


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """One run of the shipped runner; each test works on a copy of its cache and image store."""
    root = tmp_path_factory.mktemp("mmgenbench-first")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(local_provider.WORKER_ENV, f"{sys.executable} {FAKE_WORKER}")
        outcome = run(root, "out1")
    assert outcome.stats.paid_calls > 300 and outcome.stats.remade == 0
    return root, outcome


def copy_of(first, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(first[0], root)
    return root


def rows(out: Path, name: str) -> list[dict]:
    with open(out / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def delete(root: Path, shas: list[str]) -> None:
    blobs = blob_dir_for(root / "cache.duckdb")
    for sha in shas:
        [path] = (blobs / sha[:2]).glob(sha + ".*")
        path.unlink()


def replies_naming(root: Path, shas: list[str]) -> dict[str, int]:
    """Cached replies per stage whose text names one of ``shas`` (read from the file itself)."""
    con = duckdb.connect(str(root / "cache.duckdb"), read_only=True)
    try:
        found: dict[str, int] = {}
        for stage, text in con.execute("SELECT stage, text FROM responses").fetchall():
            if any(sha in text for sha in shas):
                found[stage] = found.get(stage, 0) + 1
        return found
    finally:
        con.close()


def assert_same_outputs(a: Path, b: Path) -> None:
    csvs = sorted(p.name for p in a.glob("*.csv"))
    assert csvs and csvs == sorted(p.name for p in b.glob("*.csv"))
    for name in csvs:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sa, sb = (json.loads((d / "summary.json").read_text(encoding="utf-8")) for d in (a, b))
    for s in (sa, sb):
        for k in _CALL_COUNTS:
            s.pop(k, None)
    assert sa == sb


def made_by_stage(outcome) -> dict[str, int]:
    return {s.name: s.calls for s in outcome.stats.stages.values() if s.calls}


def test_deleted_images_and_vectors_are_made_again_and_nothing_else(first, tmp_path):
    root = copy_of(first, tmp_path)
    gens = [g for g in rows(root / "out1", "generations.csv") if g["image_sha256"] and g["vector_sha256"]]
    originals = [o for o in rows(root / "out1", "originals.csv") if o["vector_sha256"]]
    by_generator: dict[str, list[dict]] = {}
    for g in gens:
        by_generator.setdefault(g["generator"], []).append(g)
    assert sorted(by_generator) == ["sim-images", "tiny-sd"]
    # images drawn by both generators (local and API), encodings of generated and original images
    images = [by_generator["tiny-sd"][0]["image_sha256"], by_generator["tiny-sd"][5]["image_sha256"],
              by_generator["sim-images"][3]["image_sha256"]]
    vectors = [by_generator["tiny-sd"][9]["vector_sha256"], by_generator["sim-images"][11]["vector_sha256"],
               originals[4]["vector_sha256"]]
    gone = list(dict.fromkeys(images + vectors))
    expected = replies_naming(root, gone)
    assert expected.get("generate", 0) >= 3 and sum(expected.values()) >= 6
    before = to_make(root)
    delete(root, gone)
    # the estimate counts them as calls to make (the encodings of images not drawn yet follow
    # stand-ins, as for any image not drawn yet: compared for the stages it counts exactly)
    after = to_make(root)
    for stage in ("generate", "encode/original"):
        assert after.get(stage, 0) - before.get(stage, 0) == expected.get(stage, 0), stage

    again = run(root, "out2")
    assert again.failed_items == first[1].failed_items  # nothing new failed
    assert made_by_stage(again) == expected
    assert again.stats.remade == sum(expected.values())
    assert {s.name: s.remade for s in again.stats.stages.values() if s.remade} == expected
    blobs = blob_dir_for(root / "cache.duckdb")
    assert all(list((blobs / sha[:2]).glob(sha + ".*")) for sha in gone)  # the same files, made again
    assert_same_outputs(root / "out1", root / "out2")

    third = run(root, "out3")  # everything is back: nothing left to make
    assert third.stats.paid_calls == 0 and third.stats.remade == 0
    assert_same_outputs(root / "out1", root / "out3")


def test_an_image_gone_after_the_engine_looked_names_the_file_and_the_rerun_draws_it(first, tmp_path,
                                                                                       monkeypatch):
    root = copy_of(first, tmp_path)
    gens = [g for g in rows(root / "out1", "generations.csv") if g["image_sha256"] and not g["error"]]
    sha = gens[2]["image_sha256"]
    delete(root, [sha])
    # the file disappears between the engine's look and the benchmark's read: the engine serves
    # the cached reply, as it would have had it looked a moment earlier
    with monkeypatch.context() as mp:
        mp.setattr(Engine, "_outputs_gone", lambda self, prov, hit: False)
        stale = run(root, "out2")
    assert stale.stats.paid_calls == 0
    failed = [f for f in stale.failed_items if sha in f]
    assert failed and len(failed) == sum(g["image_sha256"] == sha for g in gens)
    file = str(blob_dir_for(root / "cache.duckdb") / sha[:2] / f"{sha}.png")
    for f in failed:
        assert f"the generated image {file} is missing from the image store" in f
        assert "re-run the same command to make it again" in f

    fixed = run(root, "out3")
    assert fixed.failed_items == first[1].failed_items and made_by_stage(fixed) == {"generate": replies_naming(root, [sha])["generate"]}
    assert os.path.exists(file)
    assert_same_outputs(root / "out1", root / "out3")
