"""The pairwise quickstart with its questions on the hub (``data = "hf:me/my-questions"``, a local
mirror laid out as the hub lays a dataset: a configs: card and ``data/test-00000-of-00001.parquet``
with an Image-list column), run against the simulator: the same items, prompts and figures as the
shipped JSONL gives, the second run answered wholly from the cache the first one filled."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from judgekit import hub
from judgekit.config import load_spec
from judgekit.resources import runners_dir, samples_dir
from judgekit.runner import RunOptions, run_spec

datasets = pytest.importorskip("datasets")

CARD = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*\n---\n"


def publish(folder: Path) -> int:
    """The shipped questions as a hub dataset: images inlined as the Image feature's bytes."""
    from datasets import Dataset, Features, Image, List, Value

    src = samples_dir() / "pairwise"
    rows = [json.loads(line) for line in (src / "questions.jsonl").read_text().splitlines() if line.strip()]
    columns = ("id", "category", "question", "reference", "criteria")
    table = {c: [r.get(c) for r in rows] for c in columns}
    table["images"] = [[{"bytes": (src / name).read_bytes(), "path": name} for name in r.get("images", [])]
                       for r in rows]
    features = Features({**{c: Value("string") for c in columns}, "images": List(Image())})
    (folder / "data").mkdir(parents=True)
    Dataset.from_dict(table, features=features).to_parquet(str(folder / "data" / "test-00000-of-00001.parquet"))
    (folder / "README.md").write_text(CARD + "# My questions\n")
    return len(rows)


def write_spec(folder: Path, data: str, extra: str = "") -> Path:
    text = (runners_dir() / "pairwise_quickstart.toml").read_text()
    text, n = re.subn(r'(?m)^data = "[^"]*"', f"data = {json.dumps(data)}{extra}", text, count=1)
    assert n == 1
    path = folder / "spec.toml"
    path.write_text(text)
    return path


def run(spec_path: Path, out: str, cache: Path):
    spec = load_spec(str(spec_path), ["options.bootstrap_samples=50"])
    return asyncio.run(run_spec(spec, RunOptions(out_dir=spec_path.parent / out, cache_path=cache)))


def test_pairwise_quickstart_from_the_hub_matches_the_jsonl(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    n = publish(mirror / "me" / "my-questions")
    monkeypatch.setenv(hub.MIRROR_ENV, str(mirror))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    cache = tmp_path / "cache.duckdb"
    (tmp_path / "local").mkdir()
    (tmp_path / "hub").mkdir()
    local = run(write_spec(tmp_path / "local", "samples:pairwise/questions.jsonl"), "out", cache)
    assert local.exit_code == 0, (local.message, local.failed_items)
    remote = run(write_spec(tmp_path / "hub", "hf:me/my-questions", '\ndata_split = "test"'), "out", cache)
    assert remote.exit_code == 0, (remote.message, remote.failed_items)
    a = json.loads((tmp_path / "local" / "out" / "summary.json").read_text())
    b = json.loads((tmp_path / "hub" / "out" / "summary.json").read_text())
    assert a["items"] == b["items"] == n
    assert a["results"] == b["results"]
    # the hub's items are the JSONL's to the byte: every call of the second run came from the cache
    assert a["calls_by_provider"].get("sim", 0) > 0
    assert b["calls_by_provider"] == {}, b["calls_by_provider"]
