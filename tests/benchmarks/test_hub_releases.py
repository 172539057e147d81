"""The papers' sets as released on the Hugging Face hub, loaded offline from a small local mirror
in the hub's layout and column names (JUDGEKIT_HF_MIRROR): Creation-MMBench
(opencompass/Creation-MMBench, parquet with a list-of-images column), MMGenBench
(lerogo/MMGenBench, TSVs + label index; also as the hub cache lays files, links into a blob
store) and MMIE (MMIE/MMIE, a questions JSON, overview.json and images.tar.gz).  Each goes through
its benchmark's prepare(), the hook a run uses, and must give the items the local files give."""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from judgekit import hub
from judgekit.benchmarks.base import load_benchmark
from judgekit.benchmarks.creation_mmbench.data import load_data as load_creation
from judgekit.benchmarks.mmgenbench.data import load_data as load_mmgen
from judgekit.benchmarks.mmie.data import load_items
from judgekit.config import load_spec
from judgekit.errors import DataError, SpecError
from judgekit.resources import runners_dir, samples_dir

datasets = pytest.importorskip("datasets")

SAMPLES = samples_dir()


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    root = tmp_path / "mirror"
    root.mkdir()
    monkeypatch.setenv(hub.MIRROR_ENV, str(root))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "jk-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.chdir(tmp_path)
    return root


def prepared(runner: str, data: str, *overrides: str):
    """The shipped runner with ``data = "hf:..."`` written in the spec, prepared as a run would."""
    text = (runners_dir() / f"{runner}.toml").read_text()
    text, n = re.subn(r'(?m)^data = "[^"]*"', f"data = {json.dumps(data)}", text, count=1)
    assert n == 1
    path = Path.cwd() / f"{runner}.toml"
    path.write_text(text)
    spec = load_spec(str(path), list(overrides))
    bench = load_benchmark(spec.benchmark, spec.source_path)
    return bench.prepare(spec, bench.Options(**spec.options))


# -- Creation-MMBench ------------------------------------------------------------------------------
def creation_view(items):
    return [(it.index, it.question, it.task_name, it.category, it.subjective_criteria, it.vf_criteria,
             it.reference_answer, [im.data for im in it.images]) for it in items]


def test_creation_mmbench_from_the_hub_layout(mirror):
    repo = mirror / "opencompass" / "Creation-MMBench"
    (repo / "data").mkdir(parents=True)
    shutil.copy(SAMPLES / "creation_mmbench" / "data" / "test-00000-of-00001.parquet", repo / "data")
    (repo / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
                                    "    path: data/test-*\n---\n# Creation-MMBench\n")
    local = load_creation(SAMPLES / "creation_mmbench" / "data" / "test-00000-of-00001.parquet")
    prep = prepared("creation_mmbench", "hf:opencompass/Creation-MMBench")
    assert len(prep.items) == len(local.items) >= 3
    assert creation_view(prep.items) == creation_view(local.items)
    with pytest.raises(SpecError, match=r"data_split = 'train': no such split .*\(it has: test\)"):
        prepared("creation_mmbench", "hf:opencompass/Creation-MMBench", 'data_split="train"')


def test_creation_mmbench_hub_rows_missing_a_column_name_it(mirror):
    from datasets import Dataset

    repo = mirror / "someone" / "creation-copy"
    (repo / "data").mkdir(parents=True)
    Dataset.from_dict({"index": ["1"], "question": ["q"]}).to_parquet(str(repo / "data" / "test-00000-of-00001.parquet"))
    with pytest.raises(DataError, match=r"hf:someone/creation-copy \(split test\).*missing required column 'task_name'"):
        prepared("creation_mmbench", "hf:someone/creation-copy")


# -- MMGenBench ------------------------------------------------------------------------------------
def mmgen_view(data):
    return [(it.item_id, it.index, it.patterns, it.data) for it in data.items]


RELEASE = ("MMGenBench-Test.tsv", "MMGenBench-Test-label-index.json", "MMGenBench-Domain.tsv")


@pytest.mark.parametrize("as_hub_cache", [False, True])
def test_mmgenbench_from_the_hub_release(mirror, tmp_path, as_hub_cache):
    repo = mirror / "lerogo" / "MMGenBench"
    repo.mkdir(parents=True)
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    for name in RELEASE:
        if as_hub_cache:  # snapshots/<rev>/<file> -> ../../blobs/<hash>, as huggingface_hub keeps them
            shutil.copy(SAMPLES / "mmgenbench" / name, blobs / f"blob-{name}")
            (repo / name).symlink_to(blobs / f"blob-{name}")
        else:
            shutil.copy(SAMPLES / "mmgenbench" / name, repo / name)
    test = prepared("mmgenbench", "hf:lerogo/MMGenBench")
    assert mmgen_view(test.data) == mmgen_view(load_mmgen(SAMPLES / "mmgenbench" / "MMGenBench-Test.tsv"))
    assert any(it.patterns for it in test.data.items)  # the label index was read
    domain = prepared("mmgenbench", "hf:lerogo/MMGenBench", 'data_config="MMGenBench-Domain"')
    assert mmgen_view(domain.data) == mmgen_view(load_mmgen(SAMPLES / "mmgenbench" / "MMGenBench-Domain.tsv"))
    assert not any(it.patterns for it in domain.data.items)


def test_mmgenbench_hub_errors_say_what_to_set(mirror):
    repo = mirror / "lerogo" / "MMGenBench"
    repo.mkdir(parents=True)
    for name in RELEASE:
        shutil.copy(SAMPLES / "mmgenbench" / name, repo / name)
    with pytest.raises(SpecError, match=r"data_config = 'MMGenBench-Full': hf:lerogo/MMGenBench has no "
                                        r"MMGenBench-Full\.tsv \(its TSVs: MMGenBench-Domain, MMGenBench-Test\)"):
        prepared("mmgenbench", "hf:lerogo/MMGenBench", 'data_config="MMGenBench-Full"')
    with pytest.raises(SpecError, match=r"data_split = 'test': hf:lerogo/MMGenBench is a set of TSV files, not "
                                        r"splits; name the file with data_config"):
        prepared("mmgenbench", "hf:lerogo/MMGenBench", 'data_split="test"')


# -- MMIE ------------------------------------------------------------------------------------------
def mmie_view(items):
    def seg(s):
        return (s.kind, s.text, s.ref, s.sha256)

    return [(it.id, it.category, it.field, [seg(s) for s in it.question],
             [seg(s) for s in it.gt_answer or ()]) for it in items]


def mmie_release(repo: Path, rows: list, *, prefix: str = "images/", strip: bool = False) -> None:
    """The repository as released: questions JSON, overview.json (its first row), images.tar.gz."""
    repo.mkdir(parents=True)
    if strip:  # image paths relative to images/ itself
        text = json.dumps(rows).replace('"images/', '"')
        rows = json.loads(text)
    (repo / "mmie_test.json").write_text(json.dumps(rows))
    (repo / "overview.json").write_text(json.dumps(rows[:1]))
    with tarfile.open(repo / "images.tar.gz", "w:gz") as tar:
        for f in sorted((SAMPLES / "mmie" / "images").iterdir()):
            tar.add(f, arcname=prefix + f.name)


@pytest.mark.parametrize("strip", [False, True])
def test_mmie_from_the_hub_release(mirror, strip):
    rows = json.loads((SAMPLES / "mmie" / "data.json").read_text())
    mmie_release(mirror / "MMIE" / "MMIE", rows, strip=strip)
    prep = prepared("mmie", "hf:MMIE/MMIE")
    local = load_items(SAMPLES / "mmie" / "data.json")
    view = json.loads(json.dumps(mmie_view(prep.items)))
    want = json.dumps(mmie_view(local.items))
    want = json.loads(want.replace('"images/', '"') if strip else want)  # the refs as the JSON wrote them
    assert len(prep.items) == len(local.items) >= 3
    assert view == want
    assert all(s.path and s.path.is_file() for it in prep.items for s in it.question if s.kind == "image")
    from judgekit.benchmarks.mmie.report import _meta

    assert _meta(prep, {})["data"] == "hf:MMIE/MMIE"  # the report names the dataset, not a made-up path


def test_mmie_hub_file_choice(mirror):
    rows = json.loads((SAMPLES / "mmie" / "data.json").read_text())
    repo = mirror / "MMIE" / "MMIE"
    mmie_release(repo, rows)
    (repo / "mmie_extra.json").write_text(json.dumps(rows[:2]))
    with pytest.raises(SpecError, match=r"several JSON files: set data_config to one of: mmie_extra, mmie_test"):
        prepared("mmie", "hf:MMIE/MMIE")
    prep = prepared("mmie", "hf:MMIE/MMIE", 'data_config="mmie_extra"')
    assert [it.id for it in prep.items] == [r["id"] for r in rows[:2]]
    with pytest.raises(SpecError, match=r"data_config = 'mmie': no such JSON file in the dataset "
                                        r"\(it has: mmie_extra, mmie_test, overview\)"):
        prepared("mmie", "hf:MMIE/MMIE", 'data_config="mmie"')


def test_mmie_release_with_an_unpacked_images_folder(mirror):
    repo = mirror / "MMIE" / "MMIE"
    repo.mkdir(parents=True)
    shutil.copy(SAMPLES / "mmie" / "data.json", repo / "data.json")
    shutil.copytree(SAMPLES / "mmie" / "images", repo / "images")
    prep = prepared("mmie", "hf:MMIE/MMIE")
    assert mmie_view(prep.items) == mmie_view(load_items(SAMPLES / "mmie" / "data.json").items)


def test_a_tarball_that_is_not_one_is_named(mirror):
    repo = mirror / "MMIE" / "MMIE"
    repo.mkdir(parents=True)
    shutil.copy(SAMPLES / "mmie" / "data.json", repo / "data.json")
    (repo / "images.tar.gz").write_bytes(io.BytesIO(b"not a tarball").getvalue())
    with pytest.raises(SpecError, match=r"images\.tar\.gz: cannot unpack"):
        prepared("mmie", "hf:MMIE/MMIE")


# -- GuessBench: not on the hub ----------------------------------------------------------------------
def test_guessbench_says_it_is_not_on_the_hub(mirror):
    with pytest.raises(SpecError, match=r"data = 'hf:Zivenzhu/GuessBench': GuessBench's build sets are not on the "
                                        r"Hugging Face hub; .*GitHub repository \(Zivenzhu/GuessBench\)"):
        prepared("guessbench", "hf:Zivenzhu/GuessBench")
