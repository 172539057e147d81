"""MMGenBench end to end: simulated captioners, a tiny local diffusion pipeline and the simulator's
images API as generators, a tiny local CLIP encoder; resumed after kills at every stage.
One run of the shipped runner on 12 images serves the module: the first test checks it, the kill
tests compare their resumed runs with it.

Skipped where judgekit-local with torch is not installed (this process never imports torch)."""

import asyncio
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest
from run_helpers import read_csv, stage_rows  # noqa: E402

import judgekit
from judgekit.blobs import BlobStore
from judgekit.config import load_spec
from judgekit.local import read_vector
from judgekit.parsers.mmgenbench import reference_caption
from judgekit.report.doc import ReportDoc
from judgekit.report.tidy import TIDY_COLUMNS
from judgekit.runner import RunOptions, blob_dir_for, estimate_spec, run_spec

if not all(importlib.util.find_spec(m) for m in ("judgekit_local", "torch", "diffusers", "transformers")):
    pytest.skip("judgekit-local with torch, transformers and diffusers is not installed", allow_module_level=True)

SIMS = ("sim-strong", "sim-weak", "sim-images")


@pytest.fixture(autouse=True)
def tiny_home(tmp_path_factory, monkeypatch):
    # one tiny-model folder for the whole session: built once, as a user's machine would
    home = tmp_path_factory.getbasetemp() / "tiny-models"
    monkeypatch.setenv("JUDGEKIT_LOCAL_TINY_DIR", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return home


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The shipped runner on the sample's first 12 images, once for the module: the estimate
    before any call, then the run (in its own folder and cache)."""
    root = tmp_path_factory.mktemp("mmgenbench-12")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGEKIT_LOCAL_TINY_DIR", str(tmp_path_factory.getbasetemp() / "tiny-models"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        s = spec()
        est = asyncio.run(estimate_spec(s, opts(root, limit=12)))
        first = asyncio.run(run_spec(s, opts(root, limit=12)))
    return SimpleNamespace(root=root, spec=s, est=est, first=first)


def spec(*extra):
    return load_spec("mmgenbench", [*(f"models.{a}.sim.latency_ms=0" for a in SIMS),
                                    "models.tiny-sd.local.device='cpu'", "models.encoder.local.device='cpu'",
                                    *extra])


def opts(tmp_path, **kw):
    return RunOptions(out_dir=tmp_path / "out", cache_path=tmp_path / "cache.duckdb", **kw)


async def test_all_stages_metrics_report_and_resume(sample):
    s, est, root = sample.spec, sample.est, sample.root
    by_stage = {}
    for line in est.estimate.lines:
        by_stage[line.stage] = by_stage.get(line.stage, 0) + line.calls_to_make
    # 12 images x 2 candidates x 2 generators; originals once per image
    assert by_stage == {"caption": 24, "generate": 48, "encode/original": 12, "encode/generated": 48}

    first = sample.first
    assert first.exit_code == 0, (first.message, first.failed_items)
    rows = {(r["model"], r["generator"]): r for r in first.summary["results"]}
    assert set(rows) == {(c, g) for c in ("sim-strong", "sim-weak") for g in ("tiny-sd", "sim-images")}
    for r in rows.values():
        assert r["n"] == 12 and r["encoder"] == "tiny:clip:image_embeds"
        assert -1 <= r["sim_mean"] <= 1 and r["fid"] is not None and r["fid"] >= 0
    # the simulated images API draws what the caption says: the better captioner is closer
    assert rows[("sim-strong", "sim-images")]["sim_mean"] > rows[("sim-weak", "sim-images")]["sim_mean"]
    # SIM per pattern, Table 2 shape
    assert first.result.more_displays and first.result.more_displays[0][0].startswith("SIM per pattern")
    pats = {p["pattern"] for p in first.summary["patterns"]}
    assert "Count" in pats and "Color" in pats
    # SIM's intervals over the images (overall and per pattern), candidates compared per generator;
    # no judge, no FID interval
    for r in rows.values():
        assert r["sim_mean_ci_low"] <= r["sim_mean"] <= r["sim_mean_ci_high"]
    assert all(p["mean_ci_low"] <= p["mean"] <= p["mean_ci_high"] for p in first.summary["patterns"] if p["n"])
    assert [(c["generator"], c["a"], c["b"], c["items"]) for c in first.summary["comparisons"]] == [
        ("tiny-sd", "sim-strong", "sim-weak", 12), ("sim-images", "sim-strong", "sim-weak", 12)]
    assert first.summary["judges"] == [] and "FID" in first.summary["intervals"]["fid"]
    assert all(" [" in d["SIM"] for d in first.result.display)

    # SIM is the cosine of the stored features; seeds are index + 0 and recorded
    blobs = BlobStore(blob_dir_for(root / "cache.duckdb"))
    out = root / "out"
    originals = {r["item_id"]: r for r in read_csv(out / "originals.csv")}
    for g in read_csv(out / "generations.csv"):
        assert int(g["seed"]) == int(g["index"])
        a = np.array(read_vector(blobs, originals[g["item_id"]]["vector_sha256"]), dtype=np.float64)
        b = np.array(read_vector(blobs, g["vector_sha256"]), dtype=np.float64)
        assert float(g["sim"]) == pytest.approx(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)), abs=1e-12)
        assert blobs.has(g["image_sha256"])
    # the tidy export: a row per generations.csv row, SIM as value, the encoder as judge
    tidy = judgekit.results(out, kind="rows")
    gens = read_csv(out / "generations.csv")
    assert len(tidy) == len(gens) > 0 and list(tidy[0]) == list(TIDY_COLUMNS)
    assert [(t["item"], t["candidate"], t["value"]) for t in tidy] == [
        (g["item_id"], g["model"], float(g["sim"])) for g in gens]
    caps = read_csv(out / "captions.csv")
    assert all(len(c["caption"].split(" ")) <= 70 for c in caps)  # the reference's cut: pieces of split(' ')
    assert all(c["raw"] for c in caps)
    assert all(c["caption"] == reference_caption(c["raw"]).text for c in caps)
    # every generated image was encoded after the reference's JPEG round trip, kept once in the store
    copies = list((blob_dir_for(root / "cache.duckdb") / "derived" / "jpeg-q75").iterdir())
    assert len(copies) == len({g["image_sha256"] for g in read_csv(out / "generations.csv")})
    summary = json.loads((out / "summary.json").read_text())
    assert summary["deviations"] == []  # defaults: the authors' rules (MMGenBench has no injection guard)
    ref = summary["reference_format"]
    assert set(ref["sim-strong"]["tiny-sd"]) == {"sim", "fid"}
    assert (out / "report.html").exists()

    again = await run_spec(s, opts(root, limit=12))
    assert again.exit_code == 0 and again.served_by_simulator == 0 and again.stats.paid_calls == 0
    assert again.summary["results"] == first.summary["results"]
    after = await estimate_spec(s, opts(root, limit=12))
    assert sum(line.calls_to_make for line in after.estimate.lines) == 0


def assert_same_results(a, b):
    """The same results up to float rounding: a batch of other items rounds the last bits of an
    encoding differently, and the tiny diffusion pipeline's pixels too (so its scores are only
    compared for shape; the simulated images API draws the same bytes whatever the batching)."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x["model"], x["generator"], x["n"]) == (y["model"], y["generator"], y["n"])
        if x["generator"] == "tiny-sd":
            continue
        for k, v in x.items():
            if isinstance(v, float):
                assert y[k] == pytest.approx(v, rel=1e-4, abs=1e-5), k
            else:
                assert y[k] == v, k






def _vectors(cache):
    root = blob_dir_for(cache)
    return sum(1 for _ in root.rglob("*.f32")) if root.exists() else 0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
# the two local stages; a kill among the API captions, the first stage, resumes as in every API
# benchmark (tests/cli/test_cli_run.py, the Creation and GuessBench kills)
@pytest.mark.parametrize("stage, at", [("generate", 12), ("encode/generated", 12 + 10)])
async def test_killed_at_a_stage_resumes_without_redrawing(sample, tmp_path, stage, at):
    from judgekit.sim import SimConfig, SimProcess

    sim = SimProcess(SimConfig(seed=7, latency_ms=40, latency_jitter_ms=20,
                               model_quality={"sim-vlm-strong": 0.85, "sim-vlm-weak": 0.3})).start()
    try:
        cache = tmp_path / "cache.duckdb"
        overrides = [f"models.{a}.sim.url={sim.base_url}" for a in SIMS]
        overrides += ["models.tiny-sd.local.device=cpu", "models.encoder.local.device=cpu",
                      "models.tiny-sd.local.batch_size=2", "models.encoder.local.batch_size=4"]
        cmd = [sys.executable, "-m", "judgekit.cli.main", "run", "mmgenbench", "--cache", str(cache),
               "--out", str(tmp_path / "out"), "--limit", "12"] + [a for o in overrides for a in ("--set", o)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))

        def reached() -> bool:
            if stage == "generate":
                return sim.stats().get("images_generated", 0) >= at
            return _vectors(cache) >= at

        deadline = time.monotonic() + 300
        try:
            while time.monotonic() < deadline and proc.poll() is None and not reached():
                time.sleep(0.05)
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
        time.sleep(0.3)
        kept = (await stage_rows(cache)).get("generate", 0)
        total = 12 * 2 * 2
        assert kept < total

        s = spec(*overrides)
        again = await run_spec(s, opts(tmp_path, limit=12))
        assert again.exit_code == 0, (again.message, again.failed_items)
        paid = again.stats.stage("generate").calls
        print(f"killed at {stage}: {kept} of {total} images kept, the rerun drew {paid}")
        # no finished image is drawn again: the rerun draws exactly the ones the killed run had not
        assert kept + paid == total
        assert (await stage_rows(cache))["generate"] == total
        # and the results are a clean run's: the module's, of the same 12 images (a latency, a
        # simulator's address or a batch size changes no caption, drawing or encoding)
        assert_same_results(sample.first.summary["results"], again.summary["results"])
    finally:
        sim.stop()


def test_report_of_the_run(sample, tmp_path):
    """The run's report: every image an item, each with its original and a drawing per candidate and
    generator, thumbnails in the run folder (a copy of the folder keeps them all); the headline is
    summary.json's."""
    out = sample.root / "out"
    summary = json.loads((out / "summary.json").read_text())
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert (out / "report.html").is_file()
    doc = ReportDoc.from_json(data)
    assert doc.title == "MMGenBench: mmgenbench"
    assert [it.id for it in doc.items] == [str(i) for i in range(12)]
    images = list(doc.images())
    assert len(images) == 12 * (1 + 2 * 2) and not [im for im in images if im.missing]
    shutil.copytree(out, tmp_path / "moved")
    for im in images:
        assert im.src.startswith("report_files/") and (tmp_path / "moved" / im.src).is_file(), im.src
    heads = {(h.candidate, h.figure): h for h in doc.headline}
    for r in summary["results"]:
        h = heads[(r["model"], f"SIM · {r['generator']}")]
        assert (h.value, h.low, h.high) == (r["sim_mean"], r["sim_mean_ci_low"], r["sim_mean_ci_high"])
        assert heads[(r["model"], f"FID · {r['generator']}")].value == r["fid"]
    assert {p for it in doc.items for p in it.tags.get("pattern", [])} >= {"Count", "Color"}  # a list per image


def test_report_of_a_run_on_the_released_layout(sample, tmp_path):
    """A run on the released layout (the sample's MMGenBench-Test.tsv and the label index beside
    it): the originals come from the TSV's bytes, and every image is a thumbnail of the run folder.
    (Its first images are the folder's: the module run's cache holds their calls.)"""
    done = asyncio.run(run_spec(spec("data='samples:mmgenbench/MMGenBench-Test.tsv'"),
                                RunOptions(out_dir=tmp_path / "out", cache_path=sample.root / "cache.duckdb",
                                           limit=6)))
    assert done.exit_code == 0, done.failed_items
    assert done.summary["labels"].endswith("MMGenBench-Test-label-index.json")
    assert {p["pattern"] for p in done.summary["patterns"]} >= {"Position", "Symbol"}
    doc = ReportDoc.from_json(json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8")))
    images = list(doc.images())
    assert len(images) == 6 * (1 + 2 * 2)
    for im in images:
        assert im.src and (tmp_path / "out" / im.src).is_file(), im
    assert doc.items[0].blocks[0].meta["source"].endswith("MMGenBench-Test.tsv, row 1")


async def test_api_image_generation_is_priced_in_the_estimate_and_the_run(tmp_path, monkeypatch):
    """openai_image against the simulator's images endpoint: gpt-image-1's image tokens are priced
    by genai-prices before the run (by size and quality) and from the returned usage during it."""
    from judgekit.cost.images import generation_output_tokens
    from judgekit.sim import SimConfig, SimProcess

    sim = SimProcess(SimConfig(seed=7, latency_ms=0, model_quality={"sim-vlm-strong": 0.85,
                                                                   "sim-vlm-weak": 0.3})).start()
    try:
        monkeypatch.setenv("TEST_IMAGES_KEY", "sim")
        s = spec('models.sim-images.provider="openai_image"', f'models.sim-images.base_url="{sim.base_url}"',
                 'models.sim-images.api_key_env="TEST_IMAGES_KEY"', 'models.sim-images.image.size="1024x1024"',
                 'models.sim-images.image.quality="medium"', "models.sim-images.sim={}",
                 'roles.generators=["sim-images"]')
        est = await estimate_spec(s, opts(tmp_path, limit=4))
        gen = next(line for line in est.estimate.lines if line.stage == "generate")
        per_image = generation_output_tokens("gpt-image-1", "1024x1024", "medium")
        assert per_image == 1056
        assert gen.calls_to_make == 8 and gen.cost_expected_usd > 0
        done = await run_spec(s, opts(tmp_path, limit=4))
        assert done.exit_code == 0, done.failed_items
        st = done.stats.stage("generate")
        assert st.calls == 8 and st.output_tokens == 8 * per_image
        assert st.cost_usd == pytest.approx(gen.cost_expected_usd, rel=0.2)
    finally:
        sim.stop()


async def test_failed_generations_are_listed_then_retried(tmp_path):
    """A generator that fails every call: its images are listed as failed, the other generator's
    results stand, the exit code says so; the next run draws only what failed."""
    broken = spec("models.sim-images.sim.error_rate=1.0", "models.sim-images.limits.max_attempts=1",
                  "models.sim-images.sim.seed=8")  # another simulator process, the chat one stays clean
    first = await run_spec(broken, opts(tmp_path, limit=4))
    assert first.exit_code == 1
    assert len(first.failed_items) == 2 * 4 and all("sim-images: image" in f for f in first.failed_items)
    rows = {(r["model"], r["generator"]): r for r in first.summary["results"]}
    assert rows[("sim-strong", "sim-images")]["n"] == 0 and rows[("sim-strong", "sim-images")]["fid"] is None
    assert rows[("sim-strong", "sim-images")]["generation_failures"] == 4
    assert rows[("sim-strong", "tiny-sd")]["n"] == 4

    fixed = spec("models.sim-images.sim.seed=8")
    again = await run_spec(fixed, opts(tmp_path, limit=4))
    assert again.exit_code == 0, again.failed_items
    assert again.stats.stage("generate").calls == 2 * 4  # only the failed ones
    assert again.stats.stage("caption").calls == 0


async def test_estimate_counts_encodings_of_images_not_drawn_yet(sample, tmp_path):
    """A generator whose images are not drawn yet (here: the module run's sim-images with another
    seed, a new cache identity): their encodings are still to make, though every original's is
    cached (the estimate's stand-in drawing, the original, must not pass for a cached encoding)."""
    est = await estimate_spec(spec("models.sim-images.sim.seed=8"),
                              RunOptions(out_dir=tmp_path / "out", cache_path=sample.root / "cache.duckdb", limit=4))
    to_make = {(line.stage, line.alias): line.calls_to_make for line in est.estimate.lines}
    assert to_make[("generate", "sim-images")] == 2 * 4
    assert to_make[("generate", "tiny-sd")] == 0 and to_make[("caption", "sim-strong")] == 0
    assert to_make[("encode/generated", "encoder")] == 2 * 4
    assert to_make[("encode/original", "encoder")] == 0


async def test_an_unusable_encoding_fails_its_image_not_the_run(sample, tmp_path):
    """A zero vector in the store (an encoder that overflowed, say) is a listed failure of that
    image; every other score and the tables are still written.  (On a copy of the module run's
    cache and store, which hold every call of this run.)"""
    shutil.copyfile(sample.root / "cache.duckdb", tmp_path / "cache.duckdb")
    shutil.copytree(blob_dir_for(sample.root / "cache.duckdb"), blob_dir_for(tmp_path / "cache.duckdb"))
    s = spec('roles.generators=["sim-images"]', 'roles.candidates=["sim-strong"]')
    first = await run_spec(s, opts(tmp_path, limit=4))
    assert first.exit_code == 0, first.failed_items
    blobs = BlobStore(blob_dir_for(tmp_path / "cache.duckdb"))
    victim = read_csv(tmp_path / "out" / "generations.csv")[0]
    path = blobs.path(victim["vector_sha256"])
    path.write_bytes(b"\x00" * path.stat().st_size)
    again = await run_spec(s, opts(tmp_path, limit=4))
    assert again.exit_code == 1 and again.stats.paid_calls == 0
    assert len(again.failed_items) == 1 and "unusable encoding" in again.failed_items[0]
    (row,) = again.summary["results"]
    assert row["n"] == 3 and row["encode_failures"] == 1 and row["fid"] is not None
    assert (tmp_path / "out" / "report.html").exists()
