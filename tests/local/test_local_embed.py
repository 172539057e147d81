"""embed_image: vectors in the store, poolings, determinism, batching, plug-in encoders."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("judgekit_local")

import numpy as np  # noqa: E402

from judgekit_local.testing import TINY_CLIP_DIM, TINY_CLIP_HIDDEN  # noqa: E402
from judgekit_local.worker import WorkerCore  # noqa: E402


def vector(core, result) -> np.ndarray:
    ref = result["output"]["vector"]
    path = core.store.path(ref["sha256"])
    assert path.suffix == ".f32" and ref["dtype"] == "float32"
    vec = np.frombuffer(path.read_bytes(), dtype="<f4")
    assert vec.shape == (ref["dim"],)
    return vec


def items_for(images):
    return [{"item_id": f"i{k}", "inputs": {"image": ref}} for k, ref in enumerate(images)]


def test_vectors_of_the_model_dim_in_the_store(core, tiny_clip, put_image, run_batch):
    images = [put_image(pattern=k) for k in range(3)]
    out = run_batch(core, "embed_image", {"id": tiny_clip}, items_for(images))
    for r in out["results"].values():
        assert r["ok"] and r["output"]["vector"]["dim"] == TINY_CLIP_DIM
        assert r["output"]["encoder"] == f"{tiny_clip}:image_embeds"
        assert np.isfinite(vector(core, r)).all()
    loading = [p for p in out["progress"] if p["phase"] == "loading"]
    running = [p for p in out["progress"] if p["phase"] == "running"]
    if loading:  # the shared core may have loaded the model in an earlier test
        assert [(p["done"], p["total"]) for p in loading] == [(0, 1), (1, 1)]
    assert running[-1]["done"] == running[-1]["total"] == 3


@pytest.mark.parametrize(
    ("pooling", "dim"), [("pooler", TINY_CLIP_HIDDEN), ("cls", TINY_CLIP_HIDDEN), ("mean", TINY_CLIP_HIDDEN)]
)
def test_poolings(core, tiny_clip, put_image, run_batch, pooling, dim):
    out = run_batch(core, "embed_image", {"id": tiny_clip, "pooling": pooling}, items_for([put_image()]))
    r = out["results"]["i0"]
    assert r["ok"], r["error"]
    assert r["output"]["vector"]["dim"] == dim
    assert r["output"]["encoder"] == f"{tiny_clip}:{pooling}"


def test_pooler_and_cls_differ(core, tiny_clip, put_image, run_batch):
    ref = put_image(pattern=2)
    vecs = {
        p: vector(core, run_batch(core, "embed_image", {"id": tiny_clip, "pooling": p}, items_for([ref]))["results"]["i0"])
        for p in ("pooler", "cls")
    }
    assert not np.allclose(vecs["pooler"], vecs["cls"])  # pooler_output is the CLS after a layer norm


def test_same_image_same_vector(core, tiny_clip, put_image, run_batch):
    ref = put_image(pattern=5)
    first = run_batch(core, "embed_image", {"id": tiny_clip}, items_for([ref, ref]))["results"]
    again = run_batch(core, "embed_image", {"id": tiny_clip}, items_for([ref, ref]))["results"]
    shas = {r["output"]["vector"]["sha256"] for r in [*first.values(), *again.values()]}
    assert len(shas) == 1  # bit for bit (alone vs batched: equal within tolerance, below)


def test_batch_equals_one_at_a_time(core, tiny_clip, put_image, run_batch):
    images = [put_image(pattern=k, size=(30 + 7 * k, 40)) for k in range(4)]
    batched = run_batch(core, "embed_image", {"id": tiny_clip}, items_for(images))["results"]
    for k, ref in enumerate(images):
        alone = run_batch(core, "embed_image", {"id": tiny_clip}, items_for([ref]))["results"]["i0"]
        np.testing.assert_allclose(vector(core, alone), vector(core, batched[f"i{k}"]), rtol=1e-4, atol=1e-5)


def test_bad_items_fail_alone(core, tiny_clip, put_image, run_batch):
    junk = {"sha256": core.store.put(b"this is not an image", ".png")}
    items = items_for([put_image(), {"sha256": "0" * 64}, junk, {"sha256": "../../etc/passwd"}])
    items.append({"item_id": "no-image", "inputs": {}})
    out = run_batch(core, "embed_image", {"id": tiny_clip}, items)["results"]
    assert out["i0"]["ok"]
    for item_id in ("i1", "i2", "i3", "no-image"):
        assert out[item_id]["error_kind"] == "bad_input", out[item_id]
    assert "no blob" in out["i1"]["error"] and "cannot decode" in out["i2"]["error"]


def test_unknown_pooling_is_bad_input(core, tiny_clip, put_image, run_batch):
    out = run_batch(core, "embed_image", {"id": tiny_clip, "pooling": "max"}, items_for([put_image()]))
    assert out["results"]["i0"]["error_kind"] == "bad_input" and "pooling" in out["results"]["i0"]["error"]
    assert not out["progress"]  # nothing loaded, nothing run


PLUGIN = '''
import numpy as np

class Encoder:
    name = "toy-mean-rgb"
    nbytes = 123

    def __init__(self, model_ref, device, dtype):
        self.model_ref, self.device, self.dtype = model_ref, device, dtype

    def encode(self, images):
        out = []
        for im in images:
            if im.size == (7, 7):
                raise RuntimeError("this encoder cannot read 7x7 images")
            out.append(np.asarray(im, dtype="float32").mean(axis=(0, 1)) / 255.0)
        return np.stack(out)

def make(model_ref, device, dtype):
    return Encoder(model_ref, device, dtype)
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "toy_encoder_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "toy_encoder_plugin:make"


def test_plugin_encoder(tmp_path, plugin, png_bytes, run_batch):
    core = WorkerCore(tmp_path / "blobs", device="cpu")
    refs = [{"sha256": core.store.put(png_bytes(color=c), ".png")} for c in [(255, 0, 0), (0, 255, 0)]]
    out = run_batch(core, "embed_image", {"id": "toy", "encoder": plugin}, items_for(refs))["results"]
    assert out["i0"]["output"]["encoder"] == "toy-mean-rgb"
    np.testing.assert_allclose(vector(core, out["i0"]), [1, 0, 0], atol=1e-6)
    np.testing.assert_allclose(vector(core, out["i1"]), [0, 1, 0], atol=1e-6)
    assert core.loaded_models()[0]["nbytes"] == 123


def test_an_error_on_one_item_fails_only_that_item(tmp_path, plugin, png_bytes, run_batch):
    core = WorkerCore(tmp_path / "blobs", device="cpu")
    refs = [{"sha256": core.store.put(png_bytes(size=s), ".png")} for s in [(8, 8), (7, 7), (9, 9)]]
    out = run_batch(core, "embed_image", {"id": "toy", "encoder": plugin}, items_for(refs))
    res = out["results"]
    assert res["i0"]["ok"] and res["i2"]["ok"]
    assert res["i1"]["error_kind"] == "error" and "7x7" in res["i1"]["error"]
    assert any("one at a time" in log["message"] for log in out["logs"])


def test_bad_plugin_references(put_image, core, run_batch):
    out = run_batch(core, "embed_image", {"id": "toy", "encoder": "no_such_module_xyz:make"}, items_for([put_image()]))
    assert out["results"]["i0"]["error_kind"] == "load_failed" and "no_such_module_xyz" in out["results"]["i0"]["error"]
    out = run_batch(core, "embed_image", {"id": "toy", "encoder": "not-a-reference"}, items_for([put_image()]))
    assert out["results"]["i0"]["error_kind"] == "bad_input"


def test_a_full_clip_checkpoint_loads_its_vision_half(tmp_path, png_bytes, run_batch):
    """openai/clip-* checkpoints are two-tower CLIPModels: the worker loads the vision tower and
    the projection only, and gets CLIPModel.get_image_features' vectors."""
    import torch
    from PIL import Image
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    torch.manual_seed(0)
    config = CLIPConfig(
        text_config={"vocab_size": 64, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "max_position_embeddings": 16},
        vision_config={"image_size": 32, "patch_size": 8, "hidden_size": 16, "intermediate_size": 32,
                       "num_hidden_layers": 1, "num_attention_heads": 2},
        projection_dim=8,
    )
    full = CLIPModel(config).eval()
    full.save_pretrained(tmp_path / "clip-full")
    processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor.save_pretrained(tmp_path / "clip-full")

    core = WorkerCore(tmp_path / "blobs", device="cpu")
    data = png_bytes(pattern=4)
    ref = {"sha256": core.store.put(data, ".png")}
    out = run_batch(core, "embed_image", {"id": str(tmp_path / "clip-full")}, items_for([ref]))["results"]["i0"]
    assert out["ok"], out.get("error")
    assert out["output"]["vector"]["dim"] == 8
    (loaded,) = core.loaded_models()
    assert type(core._cache.entries[loaded["key"]].obj.model).__name__ == "CLIPVisionModelWithProjection"

    import io

    pixels = processor(images=[Image.open(io.BytesIO(data)).convert("RGB")], return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        feats = full.get_image_features(pixel_values=pixels)
    feats = feats if isinstance(feats, torch.Tensor) else feats.pooler_output
    np.testing.assert_allclose(vector(core, out), feats[0].numpy(), rtol=1e-4, atol=1e-5)


def test_a_dinov2_encoder_pools_its_pooler_output(tmp_path, png_bytes, run_batch):
    """No projection: "auto" takes pooler_output (DINOv2: the layer-normed CLS token)."""
    import torch
    from transformers import AutoImageProcessor, BitImageProcessor, Dinov2Config, Dinov2Model

    torch.manual_seed(0)
    Dinov2Model(Dinov2Config(image_size=28, patch_size=14, hidden_size=16, intermediate_size=32,
                             num_hidden_layers=1, num_attention_heads=2)).save_pretrained(tmp_path / "dino")
    BitImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}).save_pretrained(tmp_path / "dino")
    assert AutoImageProcessor.from_pretrained(tmp_path / "dino")  # what the worker will use

    core = WorkerCore(tmp_path / "blobs", device="cpu")
    ref = {"sha256": core.store.put(png_bytes(), ".png")}
    auto = run_batch(core, "embed_image", {"id": str(tmp_path / "dino")}, items_for([ref]))["results"]["i0"]
    cls = run_batch(core, "embed_image", {"id": str(tmp_path / "dino"), "pooling": "cls"}, items_for([ref]))["results"]["i0"]
    assert auto["output"]["encoder"].endswith(":pooler") and auto["output"]["vector"]["dim"] == 16
    assert cls["output"]["vector"]["dim"] == 16
    out = run_batch(core, "embed_image", {"id": str(tmp_path / "dino"), "pooling": "image_embeds"}, items_for([ref]))
    assert out["results"]["i0"]["error_kind"] == "bad_input" and "projection" in out["results"]["i0"]["error"]
