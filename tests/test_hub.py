"""judgekit.hub offline: a local folder laid out as the hub lays a dataset repository (README.md with
its ``configs:`` header, ``<config>/<split>-00000-of-00001.parquet`` written by the datasets library
with an Image feature), reached through JUDGEKIT_HF_MIRROR; rows by split and configuration, the
errors naming the setting at fault and what exists, and the lazy import."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from judgekit import hub
from judgekit.config import RunSpec
from judgekit.errors import SpecError

datasets = pytest.importorskip("datasets")

README = """---
configs:
- config_name: easy
  data_files:
  - split: test
    path: easy/test-*.parquet
  - split: train
    path: easy/train-*.parquet
- config_name: hard
  data_files:
  - split: test
    path: hard/test-*.parquet
---
# A judge-heavy set, as a hub dataset card
"""


def png(colour: str, size=(6, 4)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format="PNG")
    return buf.getvalue()


def write_split(path: Path, rows: dict) -> None:
    from datasets import ClassLabel, Dataset, Features, Image, List, Value

    features = Features({"id": Value("string"), "question": Value("string"), "score": Value("int64"),
                         "label": ClassLabel(names=["math", "art"]), "image": Image(), "images": List(Image())})
    path.parent.mkdir(parents=True, exist_ok=True)
    Dataset.from_dict(rows, features=features).to_parquet(str(path))


def rows_of(prefix: str, n: int) -> dict:
    colours = ["red", "green", "blue", "white", "black"]
    return {"id": [f"{prefix}{i}" for i in range(n)],
            "question": [f"{prefix} question {i}?" for i in range(n)],
            "score": list(range(n)),
            "label": [i % 2 for i in range(n)],
            "image": [{"bytes": png(colours[i % 5]), "path": f"{prefix}{i}.png"} for i in range(n)],
            "images": [[{"bytes": png(colours[(i + k) % 5], (3 + k, 3)), "path": None} for k in range(i)]
                       for i in range(n)]}


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    root = tmp_path / "mirror"
    repo = root / "someone" / "judge-set"
    repo.mkdir(parents=True)
    (repo / "README.md").write_text(README)
    write_split(repo / "easy" / "test-00000-of-00001.parquet", rows_of("e", 3))
    write_split(repo / "easy" / "train-00000-of-00001.parquet", rows_of("t", 2))
    write_split(repo / "hard" / "test-00000-of-00001.parquet", rows_of("h", 4))
    monkeypatch.setenv(hub.MIRROR_ENV, str(root))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "jk-cache"))
    monkeypatch.chdir(tmp_path)
    return repo


def spec(data="hf:someone/judge-set", **kw) -> RunSpec:
    return RunSpec(name="t", benchmark="pairwise", data=data, models={}, roles={}, source_path="/specs/t.toml", **kw)


def test_rows_by_config_and_split_keep_image_bytes_and_label_names(mirror):
    rows = hub.hub_rows(spec(data_config="easy", data_split="test"))
    want = rows_of("e", 3)
    assert [r["id"] for r in rows] == want["id"]
    assert [r["question"] for r in rows] == want["question"]
    assert [r["score"] for r in rows] == [0, 1, 2]
    assert [r["label"] for r in rows] == ["math", "art", "math"]
    assert [r["image"] for r in rows] == want["image"]  # the file's own bytes, never re-encoded
    assert [r["images"] for r in rows] == want["images"]
    hard = hub.hub_rows(spec(data_config="hard", data_split="test"))
    assert [r["id"] for r in hard] == ["h0", "h1", "h2", "h3"]


def test_split_defaults_to_train_then_to_the_only_split(mirror):
    assert [r["id"] for r in hub.hub_rows(spec(data_config="easy"))] == ["t0", "t1"]
    assert [r["id"] for r in hub.hub_rows(spec(data_config="easy"), default_split="test")] == ["e0", "e1", "e2"]
    assert len(hub.hub_rows(spec(data_config="hard"))) == 4  # no train split: its only one


@pytest.mark.parametrize("kw, message", [
    (dict(data_config="medium"), r"data_config = 'medium': no such configuration \(it has: easy, hard\)"),
    ({}, r"the dataset has several configurations: set data_config to one of: easy, hard"),
    (dict(data_config="easy", data_split="validation"),
     r"data_split = 'validation': no such split \(configuration 'easy'\) \(it has: test, train\)"),
])
def test_errors_name_the_setting_and_what_exists(mirror, kw, message):
    with pytest.raises(SpecError, match=r"^/specs/t\.toml: data = 'hf:someone/judge-set': " + message):
        hub.hub_rows(spec(**kw))


def test_no_default_split_among_several_lists_them(mirror):
    (mirror / "README.md").write_text(README.replace("split: train", "split: dev").replace("train-*", "dev-*"))
    (mirror / "easy" / "train-00000-of-00001.parquet").rename(mirror / "easy" / "dev-00000-of-00001.parquet")
    with pytest.raises(SpecError, match=r"data_split is not set and the dataset \(configuration 'easy'\) has no "
                                        r"'train' split: set data_split to one of: test, dev"):
        hub.hub_rows(spec(data_config="easy"))


def test_mirror_without_the_dataset_and_revisions(mirror, tmp_path):
    with pytest.raises(SpecError, match=r"JUDGEKIT_HF_MIRROR is set and .*mirror/someone/other is not a folder"):
        hub.hub_rows(spec(data="hf:someone/other"))
    with pytest.raises(SpecError, match=r"data_revision = 'v2': JUDGEKIT_HF_MIRROR is set and "
                                        r".*judge-set@v2 is not a folder"):
        hub.hub_rows(spec(data_revision="v2", data_config="easy"))
    pinned = mirror.with_name("judge-set@v2")
    pinned.mkdir()
    (pinned / "README.md").write_text("---\nconfigs:\n- config_name: hard\n  data_files:\n  - split: test\n"
                                      "    path: hard/test-*.parquet\n---\n")
    write_split(pinned / "hard" / "test-00000-of-00001.parquet", rows_of("v", 1))
    assert [r["id"] for r in hub.hub_rows(spec(data_revision="v2", data_config="hard"))] == ["v0"]
    assert hub.hub_files(spec(data_revision="v2")) == pinned


def test_a_folder_named_like_the_dataset_here_is_not_taken_for_the_hub(mirror, monkeypatch):
    monkeypatch.delenv(hub.MIRROR_ENV)
    monkeypatch.chdir(mirror.parent.parent)  # holds someone/judge-set
    with pytest.raises(SpecError, match=r"\./someone/judge-set exists in the current folder and the datasets "
                                        r"library would load it instead of the hub's dataset"):
        hub.hub_rows(spec(data_config="easy"))


def test_a_plain_parquet_repository_needs_no_card(mirror):
    plain = mirror.with_name("plain")
    write_split(plain / "data" / "test-00000-of-00001.parquet", rows_of("p", 2))
    rows = hub.hub_rows(spec(data="hf:someone/plain"))
    assert [r["id"] for r in rows] == ["p0", "p1"]


@pytest.mark.parametrize("data", ["hf:", "hf:judge-set", "hf:a/b/c", "hf:/b", "hf:a/", "hf:a/..", "hf: a/b"])
def test_malformed_names(data):
    with pytest.raises(SpecError, match=r"name a dataset on the hub as hf:org/name"):
        hub.hub_repo(spec(data=data))


_NAME = st.text(st.sampled_from("abcXYZ019-_."), min_size=1, max_size=12).filter(lambda s: s not in (".", ".."))


@settings(max_examples=60, deadline=None)
@given(org=_NAME, name=_NAME, extra=st.lists(_NAME, max_size=2))
def test_hub_repo_accepts_exactly_org_slash_name(org, name, extra):
    data = "hf:" + "/".join([org, name, *extra])
    if extra:
        with pytest.raises(SpecError):
            hub.hub_repo(spec(data=data))
    else:
        assert hub.hub_repo(spec(data=data)) == f"{org}/{name}"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=8), st.one_of(st.none(), st.text(max_size=5))), max_size=4),
       st.lists(st.integers(min_value=-1, max_value=2), max_size=4))
def test_plain_keeps_structure_maps_labels_and_images(images, labels):
    from datasets import ClassLabel, Image, List, Value

    feature = {"pics": List(Image()), "tags": List(ClassLabel(names=["a", "b", "c"])), "n": Value("int64")}
    value = {"pics": [{"bytes": b, "path": p} for b, p in images], "tags": labels, "n": 3}
    out = hub._plain(feature, value)
    assert out["pics"] == value["pics"]
    assert out["tags"] == [("abc"[t] if t >= 0 else t) for t in labels]
    assert out["n"] == 3


def test_an_image_stored_as_a_local_path_is_read(tmp_path):
    from datasets import Image

    f = tmp_path / "x.png"
    f.write_bytes(png("red"))
    assert hub._plain(Image(), {"bytes": None, "path": str(f)}) == {"bytes": f.read_bytes(), "path": str(f)}
    gone = str(tmp_path / "gone.png")
    assert hub._plain(Image(), {"bytes": None, "path": gone}) == {"bytes": None, "path": gone}


def test_without_the_datasets_library_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    with pytest.raises(SpecError, match=r"data = 'hf:someone/judge-set': needs the datasets library: "
                                        r"pip install 'judgekit\[hf\]'"):
        hub.hub_rows(spec())


def test_extracted_unpacks_once_and_refuses_escaping_members(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGEKIT_CACHE_DIR", str(tmp_path / "cache"))
    archive = tmp_path / "images.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = png("blue")
        info = tarfile.TarInfo("images/a.png")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    out = hub.extracted(archive)
    assert (out / "images" / "a.png").read_bytes() == png("blue")
    (out / "images" / "a.png").unlink()
    assert hub.extracted(archive) == out  # reused, not unpacked again
    assert not (out / "images" / "a.png").exists()
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bad, "w:gz") as tar:
        info = tarfile.TarInfo("../outside.png")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(SpecError, match=r"bad\.tar\.gz: cannot unpack: OutsideDestinationError"):
        hub.extracted(bad)
    assert not (tmp_path / "cache" / "outside.png").exists()


def test_judgekit_help_and_a_file_spec_never_import_datasets():
    code = ("import sys\nfrom click.testing import CliRunner\nfrom judgekit.cli.main import cli\n"
            "r = CliRunner().invoke(cli, ['--help'])\nassert r.exit_code == 0, r.output\n"
            "from judgekit.benchmarks.creation_mmbench import pipeline\n"
            "from judgekit.benchmarks.mmie import pipeline\nfrom judgekit.benchmarks.mmgenbench import pipeline\n"
            "import judgekit.hub\n"
            "print(sorted(m for m in ('datasets', 'pyarrow', 'pandas', 'huggingface_hub') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
