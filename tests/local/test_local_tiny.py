"""``tiny:NAME`` model ids: built once into the tiny folder, then loaded like any checkpoint."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("judgekit_local")

from judgekit_local import tiny  # noqa: E402
from judgekit_local.testing import TINY_CLIP_DIM  # noqa: E402


@pytest.fixture
def tiny_home(tmp_path, monkeypatch):
    monkeypatch.setenv(tiny.TINY_DIR_ENV, str(tmp_path / "tiny"))
    return tmp_path / "tiny"


def test_other_ids_pass_through():
    assert tiny.resolve("openai/clip-vit-large-patch14") == "openai/clip-vit-large-patch14"
    assert tiny.resolve("/models/flux") == "/models/flux"


def test_unknown_tiny_name_lists_the_known_ones(tiny_home):
    with pytest.raises(ValueError, match=r"tiny:nope.*tiny:clip.*tiny:sd"):
        tiny.resolve("tiny:nope")


def test_built_once_and_reused(tiny_home):
    first = tiny.resolve("tiny:clip")
    assert first.startswith(str(tiny_home)) and (tiny_home / "clip-v1" / ".complete").exists()
    stamp = (tiny_home / "clip-v1" / "config.json").stat().st_mtime_ns
    assert tiny.resolve("tiny:clip") == first
    assert (tiny_home / "clip-v1" / "config.json").stat().st_mtime_ns == stamp
    assert [p.name for p in tiny_home.iterdir()] == ["clip-v1"]  # no temporary folder left


def test_the_worker_loads_a_tiny_id(tiny_home, tmp_path, run_batch):
    import io

    from PIL import Image

    from judgekit_local.store import Store
    from judgekit_local.worker import WorkerCore

    core = WorkerCore(tmp_path / "store", device="cpu")
    data = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 200, 30)).save(data, format="PNG")
    sha = Store(tmp_path / "store").put(data.getvalue(), ".png")
    out = run_batch(core, "embed_image", {"id": "tiny:clip"},
                    [{"item_id": "a", "inputs": {"image": {"sha256": sha}}}])
    r = out["results"]["a"]
    assert r["ok"], r.get("error")
    assert r["output"]["vector"]["dim"] == TINY_CLIP_DIM
    assert r["output"]["encoder"] == "tiny:clip:image_embeds"  # results name the id, not the folder
