"""MMIE end to end: a simulated integrated LVLM whose <image> descriptions a tiny local diffusion
pipeline draws, imported native answers and a simulated judge, through the runner and the CLI;
resumed after kills at every stage.

Skipped where judgekit-local with torch and diffusers is not installed (this process never
imports torch)."""

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from run_helpers import read_csv, stage_rows  # noqa: E402

import judgekit
from judgekit.blobs import BlobStore
from judgekit.config import load_spec
from judgekit.report.tidy import TIDY_COLUMNS
from judgekit.runner import RunOptions, blob_dir_for, estimate_spec, run_spec

if not all(importlib.util.find_spec(m) for m in ("judgekit_local", "torch", "diffusers", "transformers")):
    pytest.skip("judgekit-local with torch, transformers and diffusers is not installed", allow_module_level=True)

SIMS = ("sim-lvlm", "judge")
INTEGRATED, NATIVE = "sim-lvlm+tiny-sd", "sample-native"
DATA = Path(__file__).resolve().parents[2] / "data" / "mmie"
#: a second simulated scorer, noisier and lenient (its own simulator: its judge style)
JUDGE_B = ["models.judge-b.provider='sim'", "models.judge-b.model='sim-judge-b'",
           "models.judge-b.params={ temperature = 0, max_tokens = 1024 }",
           "models.judge-b.sim={ seed = 7, latency_ms = 0, judge_styles = { sim-judge-b = { noise = 0.6, "
           "score_offset = 1.0 } } }"]


@pytest.fixture(scope="module", autouse=True)
def tiny_home(tmp_path_factory):
    # one tiny-model folder for the whole session (the MMGenBench tests use the same one)
    home = tmp_path_factory.getbasetemp() / "tiny-models"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGEKIT_LOCAL_TINY_DIR", str(home))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield home


def spec(*extra, name="mmie"):
    return load_spec(name, [*(f"models.{a}.sim.latency_ms=0" for a in SIMS), "models.tiny-sd.local.device='cpu'",
                            *extra])


def opts(root, out="out", cache="cache.duckdb", **kw):
    return RunOptions(out_dir=root / out, cache_path=root / cache, **kw)




def _to_make(est) -> dict[str, int]:
    by_stage: dict[str, int] = {}
    for line in est.estimate.lines:
        by_stage[line.stage] = by_stage.get(line.stage, 0) + line.calls_to_make
    return by_stage


@pytest.fixture(scope="module")
def sample(tmp_path_factory, tiny_home):
    """The shipped runner on the sample, once for the module: the estimate before any call, then
    the run (tests below add their own runs against this cache)."""
    root = tmp_path_factory.mktemp("mmie-sample")
    s = spec()
    before = asyncio.run(estimate_spec(s, opts(root)))
    first = asyncio.run(run_spec(s, opts(root)))
    return SimpleNamespace(root=root, spec=s, before=before, first=first, out=root / "out",
                           cache=root / "cache.duckdb")


async def test_sample_run_tables_blobs_alignment_and_resume(sample):
    from judgekit.metrics.mmie import alignment

    first = sample.first
    assert first.exit_code == 0, (first.message, first.failed_items)
    assert {s["name"] for s in first.summary["systems"]} == {INTEGRATED, NATIVE}
    rows = {r["model"]: r for r in first.summary["results"]}
    assert set(rows) == {INTEGRATED, NATIVE}
    for r in rows.values():
        assert r["n"] == 12
        for k in ("sa", "pbl", "msr", "avg"):
            assert 0 <= r[k] <= 100, (r["model"], k)
    for d in first.result.display:
        assert {"SA", "PBL", "MSR", "Avg."} <= set(d)
    titles = [t for t, _ in first.result.more_displays]
    assert titles[0].startswith("Per field") and titles[1].startswith("Score distribution")

    # the authors' scorer's rules by default: only the injection guards are listed as departures
    assert [(d["option"], d["kind"]) for d in first.summary["deviations"]] == [
        ("defuse_headers", "injection guard"), ("defuse_image_tags", "injection guard")]
    assert first.summary["answer_reading"] == "reference"
    assert rows[NATIVE]["texts_dropped"] == 1  # PBL_0004's text after the third image in all

    scores = read_csv(sample.out / "scores.csv")
    assert len(scores) == 24
    assert {(r["system"], r["id"]) for r in scores} == {(s, i) for s in (INTEGRATED, NATIVE)
                                                        for i in {r["id"] for r in scores}}
    assert all(r["outcome"] == "ok" for r in scores)
    tidy = judgekit.results(sample.out, kind="rows")  # the tidy export: a row per scores.csv row
    assert len(tidy) == 24 and list(tidy[0]) == list(TIDY_COLUMNS)
    assert [(t["candidate"], t["item"], t["value"]) for t in tidy] == [
        (r["system"], r["id"], float(r["score"])) for r in scores]

    # every integrated answer's images are in the store, and they are the answer's images
    blobs = BlobStore(blob_dir_for(sample.cache))
    images = read_csv(sample.out / "images.csv")
    assert images and all(r["system"] == INTEGRATED and not r["error"] for r in images)
    assert all(blobs.has(r["sha256"]) for r in images)
    drawn: dict[str, list[str]] = {}
    for r in sorted(images, key=lambda r: (r["id"], int(r["position"]))):
        drawn.setdefault(r["id"], []).append(r["sha256"])
    for a in read_csv(sample.out / "answers.csv"):
        if a["system"] != INTEGRATED:
            continue
        in_answer = [s["image"] for s in json.loads(a["answer"]) if s["image"]]
        assert in_answer == drawn.get(a["id"], []) and int(a["images"]) == len(in_answer)
        assert "<image>" in a["raw_answer"]

    # Table 5: the alignment is the metric over scores.csv and the human scores
    human = {r["id"]: float(r["score"]) for r in read_csv(DATA / "human_scores.csv")}
    mine = {r["id"]: int(r["score"]) for r in scores if r["system"] == NATIVE}
    ids = list(human)
    want = alignment([mine[i] for i in ids], [human[i] for i in ids])
    (row,) = first.summary["alignment"]
    assert row["system"] == NATIVE and row["n"] == 12 and want["n"] == 12
    for k in ("cosine", "mse", "mae", "pearson"):
        assert row[k] == pytest.approx(want[k], abs=1e-12), k
    assert len(read_csv(sample.out / "alignment.csv")) == 1

    again = await run_spec(sample.spec, opts(sample.root, out="out2"))
    assert again.exit_code == 0
    assert again.served_by_simulator == 0 and again.stats.paid_calls == 0
    assert again.summary["results"] == first.summary["results"]
    assert again.summary["alignment"] == first.summary["alignment"]
    assert read_csv(sample.root / "out2" / "scores.csv") == scores
    after = await estimate_spec(sample.spec, opts(sample.root, out="out3"))
    assert sum(line.calls_to_make for line in after.estimate.lines) == 0
    assert all(line.input_exact for line in after.estimate.lines)


async def test_estimate_before_any_call_counts_every_stage(sample):
    # the stand-in integrated answer has two images: 12 answers x 2 images for the one generator
    # expected; the bound is what each answer's max_tokens (1024) can hold, 342 images (issue 11.8)
    assert _to_make(sample.before) == {"answer": 12, "score": 24, "generate": 12 * 342}
    gen = [ln for ln in sample.before.estimate.lines if ln.stage == "generate"]
    assert sum(ln.calls_expected for ln in gen) == pytest.approx(24)
    assert all(line.calls_cached == 0 for line in sample.before.estimate.lines)
    st = sample.first.stats
    drawn = len(read_csv(sample.out / "images.csv"))
    assert 12 <= st.stage("generate").calls == drawn <= 12 * 342
    assert st.stage("answer").calls == 12 and st.stage("score").calls == 24


async def test_scorer_format_export_reads_back_and_rescores_from_the_cache_by_a_panel(sample, tmp_path):
    from judgekit.benchmarks.mmie.data import load_answers
    from judgekit.metrics.mmie import alignment
    from judgekit.benchmarks.mmie.results import EXPORT_NAME, system_export_names

    # the combined file: every scored answer of every system
    combined = json.loads((sample.out / EXPORT_NAME).read_text(encoding="utf-8"))
    assert len(combined) == 24 and {r["model"] for r in combined} == {INTEGRATED, NATIVE}

    path = sample.out / system_export_names([INTEGRATED, NATIVE])[INTEGRATED]
    answers = load_answers(path)  # images relative to its folder
    assert len(answers) == 12 and {m for m, _ in answers.values()} == {INTEGRATED}
    drawn = {r["sha256"] for r in read_csv(sample.out / "images.csv")}
    exported = {s.sha256 for _, segs in answers.values() for s in segs if s.is_image}
    assert exported == drawn
    assert all(s.path.parent == sample.out / "images" for _, segs in answers.values() for s in segs if s.is_image)

    # scored again as a native system by a panel: the sample's judge (the same requests, all from the
    # cache) and a second, lenient scorer (new calls); the estimate counts each scorer's calls
    rescore = ["roles.candidates=[]", f"options.native_answers=['{path}']",
               f"options.human_scores_system='{INTEGRATED}'"]
    s = spec(*rescore, "roles.judges=['judge', 'judge-b']", *JUDGE_B)
    before = await estimate_spec(s, RunOptions(out_dir=tmp_path / "est", cache_path=sample.cache))
    lines = {ln.alias: ln for ln in before.estimate.lines if ln.stage == "score"}
    assert {a: (ln.calls_cached, ln.calls_to_make) for a, ln in lines.items()} == {"judge": (12, 0),
                                                                                  "judge-b": (0, 12)}
    out = await run_spec(s, RunOptions(out_dir=tmp_path / "out", cache_path=sample.cache))
    assert out.exit_code == 0, (out.message, out.failed_items)
    assert [x["name"] for x in out.summary["systems"]] == [INTEGRATED]
    assert out.summary["systems"][0]["kind"] == "native"
    sc = out.stats.stage("score")
    assert (sc.cache_hits, sc.calls) == (12, 12) and out.stats.paid_calls == out.served_by_simulator == 12
    key = ("id", "score", "outcome", "judge_reply", "images_attached")
    was = {r["id"]: tuple(r[k] for k in key) for r in sample.first.result.tables["scores"] if r["system"] == INTEGRATED}
    rows = out.result.tables["scores"]
    assert len(rows) == 24 and {r["judge"] for r in rows} == {"judge", "judge-b"}
    now = {r["id"]: tuple(r[k] for k in key) for r in rows if r["judge"] == "judge"}
    assert now == was
    # the panel's first scorer's results are the single scorer's, intervals included
    (row,) = out.summary["results"]
    assert row == next(r for r in sample.first.summary["results"] if r["model"] == INTEGRATED)
    assert out.summary["judges"] == ["judge", "judge-b"] and out.summary["per_judge"]["judge"] == [row]
    assert row["avg_ci_low"] <= row["avg"] <= row["avg_ci_high"]
    # the ensemble: each answer's mean of the two scores, percent over the answers (all scored here)
    by_id: dict[str, list[int]] = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r["score"])
    assert all(len(v) == 2 and None not in v for v in by_id.values())
    (ens,) = out.summary["ensemble"]["results"]
    assert ens["avg"] == round(sum(sum(v) / 2 for v in by_id.values()) / 12 / 6 * 100, 2)
    assert ens["avg_ci_low"] <= ens["avg"] <= ens["avg_ci_high"]
    # the scorers' agreement (interval alpha; one system, so pooled is the same) and Table 5 per scorer
    agree = out.summary["agreement"]
    assert [a["system"] for a in agree] == [INTEGRATED, "all"] and agree[0]["items"] == 12
    assert agree[0]["krippendorff_alpha"] == agree[1]["krippendorff_alpha"] is not None
    human = {r["id"]: float(r["score"]) for r in read_csv(DATA / "human_scores.csv")}
    want = {"judge": [v[0] for v in by_id.values()], "judge-b": [v[1] for v in by_id.values()],
            "ensemble": [sum(v) / 2 for v in by_id.values()]}
    assert [a["scorer"] for a in out.summary["alignment"]] == list(want)
    for a in out.summary["alignment"]:
        ref = alignment(want[a["scorer"]], [human[i] for i in by_id])
        assert a["items"] == 12 and a["mae"] == pytest.approx(ref["mae"]) and a["pearson"] == pytest.approx(ref["pearson"])
    assert any(t == "Human alignment (Table 5)" for t, _ in out.result.more_displays)
    assert {d["scorer"] for d in out.result.display} == {"judge", "judge-b", "ensemble"}

    # resumed per scorer: the other order is all cached and gives each scorer the same figures
    again = await run_spec(spec(*rescore, "roles.judges=['judge-b', 'judge']", *JUDGE_B),
                           RunOptions(out_dir=tmp_path / "again", cache_path=sample.cache))
    assert again.exit_code == 0 and again.stats.paid_calls == 0 and again.served_by_simulator == 0
    assert again.summary["per_judge"] == out.summary["per_judge"]
    assert again.summary["results"] == out.summary["per_judge"]["judge-b"]


async def test_image_cap_drops_images_never_text(sample, tmp_path, monkeypatch):
    from judgekit.engine.engine import Engine
    from judgekit.types import ImagePart, TextPart

    seen = {}
    real_call = Engine.call

    async def recording(self, req):
        if req.stage == "score":
            seen[req.item_id] = req
        return await real_call(self, req)

    monkeypatch.setattr(Engine, "call", recording)
    # the sample's cache: answers and images come from it, the capped scoring prompts are new
    out = await run_spec(spec("options.keep_full_answer=true", "options.image_cap=1"),
                         RunOptions(out_dir=tmp_path / "out", cache_path=sample.cache))
    assert out.exit_code == 0, (out.message, out.failed_items)
    sc = out.stats.stage("score")
    assert sc.calls > 0 and sc.calls + sc.cache_hits == 24  # (a prompt with one image at most is unchanged)
    assert out.stats.stage("generate").calls == 0
    assert sum(r["images_dropped"] for r in out.summary["results"]) > 0
    assert out.result.display[0]["images dropped"] == out.summary["results"][0]["images_dropped"]
    assert any("image cap 1" in n for n in out.result.notes)
    assert len(seen) == 24

    answers = {(a["system"], a["id"]): json.loads(a["answer"]) for a in out.result.tables["answers"]}
    checked_text = 0
    for r in out.result.tables["scores"]:
        req = seen[f"{r['system']}/{r['id']}"]
        parts = req.messages[-1].parts
        prompt = "".join(p.text for p in parts if isinstance(p, TextPart))
        attached = sum(isinstance(p, ImagePart) for p in parts)
        assert attached == r["images_attached"] <= 1
        assert prompt.count("[not shown: image cap of 1 reached]") == r["images_dropped"]
        segs = answers[(r["system"], r["id"])]
        in_answer = sum(1 for s in segs if s["image"])
        # the question's images come first; every image is attached or named as dropped
        assert r["images_attached"] + r["images_dropped"] >= in_answer
        for s in segs:
            if s["text"]:
                assert s["text"] in prompt, (r["system"], r["id"])
                checked_text += 1
        if in_answer:
            assert r["images_dropped"] >= in_answer  # the cap is spent on the question
    assert checked_text >= 24


async def test_judge_parse_failures_are_counted_not_dropped(sample, tmp_path):
    # the judge alone gets garbage replies (its settings differ: another simulator process, other
    # cache keys); answers and images come from the sample's cache
    s = spec("models.judge.sim.garbage_rate=1.0")
    out = await run_spec(s, RunOptions(out_dir=tmp_path / "out", cache_path=sample.cache))
    assert out.exit_code == 0, (out.message, out.failed_items)
    assert not out.failed_items
    scores = out.result.tables["scores"]
    assert len(scores) == 24
    assert {r["outcome"] for r in scores} <= {"missing", "not_a_number", "out_of_range"}
    assert all(r["score"] is None and r["judge_reply"] for r in scores)
    assert out.stats.stage("score").calls == 24 and out.stats.stage("answer").cache_hits == 12
    assert out.result.tables["answers"] == sample.first.result.tables["answers"]  # the LVLM was not garbled
    for r in out.summary["results"]:
        assert r["n"] == 0 and r["avg"] is None and r["sa"] is None
        assert r["parse_missing"] + r["parse_not_a_number"] + r["parse_out_of_range"] == 12
    for d in out.result.display:
        assert d["parse failures"] == 12 and d["n"] == 0 and d["Avg."] == "-" and d["failed"] == 0
    (row,) = out.summary["alignment"]
    assert row["n"] == 0 and row["cosine"] is None


async def test_text_mode_scores_the_candidates_themselves(tmp_path):
    from judgekit.errors import SpecError

    with pytest.raises(SpecError, match="nothing would use them"):  # generators with text answers
        await run_spec(spec("options.answer_mode='text'"), opts(tmp_path))
    s = spec("options.answer_mode='text'", "roles.generators=[]")
    before = await estimate_spec(s, opts(tmp_path))
    assert _to_make(before) == {"answer": 12, "score": 24}
    out = await run_spec(s, opts(tmp_path))
    assert out.exit_code == 0, (out.message, out.failed_items)
    assert [(x["name"], x["kind"]) for x in out.summary["systems"]] == [("sim-lvlm", "text"), (NATIVE, "native")]
    assert out.stats.stage("generate").calls == 0 and out.stats.stage("score").calls == 24
    assert out.result.tables["images"] == []
    for a in out.result.tables["answers"]:
        if a["system"] == "sim-lvlm":
            assert a["images"] == 0 and a["raw_answer"]
            assert [s["text"] for s in json.loads(a["answer"])] == [a["raw_answer"]]
    assert {r["model"] for r in out.summary["results"]} == {"sim-lvlm", NATIVE}


async def test_spec_errors(tmp_path):
    from judgekit.errors import DataError, SpecError

    with pytest.raises(SpecError, match="roles.generators"):
        await run_spec(spec("roles.generators=[]"), opts(tmp_path))
    with pytest.raises(SpecError, match="roles.judge"):
        await run_spec(spec("roles.judge=''"), opts(tmp_path))
    with pytest.raises(SpecError, match="roles.judges: 'tiny-sd' cannot score"):  # a panel's every scorer
        await run_spec(spec("roles.judges=['judge', 'tiny-sd']"), opts(tmp_path))

    rows = json.loads((DATA / "scorer_format.json").read_text(encoding="utf-8"))
    short = tmp_path / "short.json"
    short.write_text(json.dumps([r for r in rows if r["id"] != "PBL_0002"]), encoding="utf-8")
    with pytest.raises(DataError) as e:
        await run_spec(spec(f"options.native_answers=['{short}']", f"options.native_images_dir='{DATA}'"),
                       opts(tmp_path))
    assert str(short) in str(e.value) and "PBL_0002" in str(e.value)

    # two systems and human scores without saying whose
    text = Path(load_spec("mmie").source_path).read_text(encoding="utf-8")
    assert "human_scores_system" in text
    no_system = tmp_path / "mmie.toml"
    no_system.write_text("\n".join(ln for ln in text.splitlines() if not ln.startswith("human_scores_system")),
                         encoding="utf-8")
    with pytest.raises(SpecError, match="human_scores_system"):
        await run_spec(spec(name=str(no_system)), opts(tmp_path))


# -- kill -9 at each stage, then resume -------------------------------------------------------------
STAGES = ("answer", "generate", "score")
KILL_LIMIT = 6  # SA x 4 and PBL x 2: half the sample keeps the three runs short




def _pngs(cache) -> int:
    root = blob_dir_for(cache)
    return sum(1 for _ in root.rglob("*.png")) if root.exists() else 0


def _answers_by_slot(answers, images):
    """Answer rows with every drawn image (named by its hash) replaced by its slot in the images
    table, checking the hash is the one that slot holds."""
    drawn = {}
    for r in images:
        drawn.setdefault((r["system"], r["id"]), []).append(r["sha256"])
    out = []
    for r in answers:
        shas = drawn.get((r["system"], r["id"]), [])
        segments = []
        for s in json.loads(r["answer"]) if r["answer"] else []:
            if s["image"] is not None and r["system"] == INTEGRATED:
                k = len([x for x in segments if isinstance(x, int)])
                assert s["image"] == shas[k], (r["id"], k)
                segments.append(k)
            else:
                segments.append(s["text"] if s["image"] is None else s["image"])
        out.append({**r, "answer": segments})
    return out


def _rows(result, table, ids):
    return sorted((r for r in result.tables[table] if r["id"] in ids),
                  key=lambda r: (r["system"], r["id"], r.get("position", 0)))


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
# the local stage (drawing) and the judge stage after it; a kill among API answers, the first stage,
# resumes as in every API benchmark (tests/cli/test_cli_run.py, the Creation and GuessBench kills)
@pytest.mark.parametrize("stage, at", [("generate", 3), ("score", 4)])
async def test_killed_at_a_stage_resumes_paying_only_what_was_missing(sample, tmp_path, stage, at):
    from judgekit.metrics.mmie import category_table
    from judgekit.sim import SimConfig, SimProcess
    from judgekit.benchmarks.mmie.sim import KIND_SCORE

    # the runner's simulator settings (seed, quality), slower and one call at a time per alias, so
    # a stage is caught half-way; answers are the same as the sample's (latency is no part of them)
    sim = SimProcess(SimConfig(seed=7, latency_ms=40, latency_jitter_ms=20,
                               model_quality={"sim-vlm-strong": 0.8})).start()
    try:
        cache = tmp_path / "cache.duckdb"
        overrides = [f"models.{a}.sim.url='{sim.base_url}'" for a in SIMS]
        overrides += ["models.sim-lvlm.limits.max_concurrency=1", "models.judge.limits.max_concurrency=1",
                      "models.tiny-sd.local.device='cpu'", "models.tiny-sd.local.batch_size=2"]
        cmd = [sys.executable, "-m", "judgekit.cli.main", "run", "mmie", "--cache", str(cache),
               "--out", str(tmp_path / "out"), "--limit", str(KILL_LIMIT)]
        cmd += [a for o in overrides for a in ("--set", o)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))

        def reached() -> bool:
            if stage == "generate":
                return _pngs(cache) >= at
            return sim.stats().get("served_by_kind", {}).get(KIND_SCORE, 0) >= at

        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline and proc.poll() is None and not reached():
                await asyncio.sleep(0.02)
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert reached(), "the stage was not reached in time"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stderr.close()
        await asyncio.sleep(0.3)  # calls in flight at the kill finish on the server side
        kept = await stage_rows(cache)

        again = await run_spec(spec(*overrides), RunOptions(out_dir=tmp_path / "out", cache_path=cache,
                                                            limit=KILL_LIMIT))
        assert again.exit_code == 0, (again.message, again.failed_items)
        total = await stage_rows(cache)
        paid = {s: again.stats.stage(s).calls for s in STAGES}
        print(f"killed at {stage}: kept {kept}, the rerun paid {paid}, total {total}")

        # the clean run (the sample's, which these items are part of) made the same calls
        ids = {r["id"] for r in again.result.tables["scores"]}
        assert len(ids) == KILL_LIMIT
        clean_images = _rows(sample.first.result, "images", ids)
        assert total == {"answer": KILL_LIMIT, "generate": len(clean_images), "score": 2 * KILL_LIMIT}
        # nothing finished before the kill was paid again, nothing missing was skipped
        for s in STAGES:
            assert kept.get(s, 0) + paid[s] == total[s], s
        assert kept.get(stage, 0) < total[stage]
        # every drawn image is in the store; a kill -9 can land after the worker wrote a batch's files
        # and before their replies reached the cache: those calls were in flight (lost, like an API
        # call's answer at a kill) and are drawn again, in another batch, so their first files can
        # stay beside the new ones: at most one batch of them (batch_size = 2; seen once in a loaded run)
        assert total["generate"] <= _pngs(cache) <= total["generate"] + 2

        # and the results are the clean run's.  The LVLM's answers, the image descriptions and seeds
        # are identical; the drawn images are identical only where they shared a batch with the same
        # items (batched float sums round differently, and which items share a batch depends on
        # timing), and the judge's score follows its image.  An integrated answer names its drawn
        # images by hash, so answers are compared with each image replaced by its slot, and each
        # slot must hold the image the images table lists for it
        now_images = _rows(again.result, "images", ids)
        was_images = _rows(sample.first.result, "images", ids)
        assert _answers_by_slot(_rows(again.result, "answers", ids), now_images) == \
            _answers_by_slot(_rows(sample.first.result, "answers", ids), was_images)
        drawn_keys = ("system", "id", "position", "description", "seed")
        assert [tuple(r[k] for k in drawn_keys) for r in now_images] == \
            [tuple(r[k] for k in drawn_keys) for r in was_images]
        same_pixels = {r["id"] for r in now_images} - {
            a["id"] for a, b in zip(now_images, was_images) if a["sha256"] != b["sha256"]}
        now_scores = {(r["system"], r["id"]): r for r in _rows(again.result, "scores", ids)}
        for r in _rows(sample.first.result, "scores", ids):
            if r["system"] == NATIVE or r["id"] in same_pixels or r["id"] not in {x["id"] for x in now_images}:
                assert now_scores[(r["system"], r["id"])] == r
        records = [{"model": r["system"], "category": r["category"], "field": r["field"], "score": r["score"]}
                   for r in _rows(sample.first.result, "scores", ids) if r["system"] == NATIVE]
        want = {r["model"]: r for r in category_table(records)}
        (native,) = [r for r in again.summary["results"] if r["model"] == NATIVE]
        for k in ("sa", "pbl", "msr", "avg", "n"):
            assert native[k] == pytest.approx(want[NATIVE][k]), k
    finally:
        sim.stop()
