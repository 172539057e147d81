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


# -- the preprocessing fast path and the batch's one-go output -----------------------------------

def _noise(w, h, seed=0):
    from PIL import Image

    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")


# Landscape, portrait, square, smaller than every target, exactly the target, very thin, odd.
SIZES = [(64, 48), (48, 64), (32, 32), (20, 10), (7, 90), (300, 211), (33, 32), (41, 41)]


def _processor(tmp_path, name, **kwargs):
    """Saved and loaded back through AutoImageProcessor, as the worker gets it."""
    import transformers
    from transformers import AutoImageProcessor

    folder = tmp_path / name
    getattr(transformers, name)(**kwargs).save_pretrained(folder)
    proc = AutoImageProcessor.from_pretrained(folder)
    if getattr(proc, "backend", None) != "pil":
        pytest.skip(f"{type(proc).__name__} is not transformers' PIL backend: no fast path to test")
    return proc


FAST_CASES = {
    "tiny clip": ("CLIPImageProcessor", {"size": {"shortest_edge": 32}, "crop_size": {"height": 32, "width": 32}}),
    "clip defaults (224)": ("CLIPImageProcessor", {}),
    "crop inside the resize, bilinear": (
        "CLIPImageProcessor",
        {"size": {"shortest_edge": 40}, "crop_size": {"height": 24, "width": 36}, "resample": 2},
    ),
    "bit (dinov2)": ("BitImageProcessor", {"size": {"shortest_edge": 28}, "crop_size": {"height": 28, "width": 28}}),
    "siglip (fixed size, no crop)": ("SiglipImageProcessor", {"size": {"height": 30, "width": 40}}),
}


@pytest.mark.parametrize("case", list(FAST_CASES))
def test_fast_pixels_equal_the_processors(tmp_path, case):
    import torch

    from judgekit_local.tasks.embed import FastPixels

    name, kwargs = FAST_CASES[case]
    proc = _processor(tmp_path, name, **kwargs)
    fast = FastPixels.for_processor(proc)
    assert fast is not None
    images = [_noise(w, h, seed=k) for k, (w, h) in enumerate(SIZES)]
    theirs = proc(images=images, return_tensors="pt")["pixel_values"]
    mine = fast(images)
    assert mine.dtype == theirs.dtype == torch.float32 and mine.shape == theirs.shape
    torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-6)
    assert torch.equal(mine, theirs)  # in fact bit for bit
    torch.testing.assert_close(fast(images[3:4]), theirs[3:4], rtol=0, atol=1e-6)  # alone as in a batch


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("CLIPImageProcessor", {"do_center_crop": False}),  # shortest-edge sizes that do not stack
        ("CLIPImageProcessor", {"do_normalize": False}),
        ("CLIPImageProcessor", {"size": {"shortest_edge": 32, "longest_edge": 64}}),
        ("SiglipImageProcessor", {"size": {"height": 20, "width": 20}, "do_center_crop": True,
                                  "crop_size": {"height": 24, "width": 24}}),  # the processor pads
    ],
)
def test_other_settings_keep_the_processor(tmp_path, name, kwargs):
    from judgekit_local.tasks.embed import FastPixels

    assert FastPixels.for_processor(_processor(tmp_path, name, **kwargs)) is None


def test_a_processor_with_its_own_preprocessing_keeps_it(tmp_path):
    from judgekit_local.tasks.embed import FastPixels

    proc = _processor(tmp_path, "CLIPImageProcessor")

    class Custom(type(proc)):
        def _preprocess(self, images, **kwargs):
            return super()._preprocess(images[::-1], **kwargs)

    assert FastPixels.for_processor(proc) is not None
    assert FastPixels.for_processor(Custom()) is None


def test_fast_pixels_leave_odd_batches_to_the_processor(tmp_path):
    from judgekit_local.tasks.embed import FastPixels

    fast = FastPixels.for_processor(_processor(tmp_path, "CLIPImageProcessor", size={"shortest_edge": 32},
                                               crop_size={"height": 32, "width": 32}))
    assert fast([_noise(40, 30), _noise(40, 30).convert("L")]) is None
    assert fast([]) is None


def test_the_encoder_gives_the_processors_vectors(tiny_clip):
    """The worker's fast path (when the processor has one) changes nothing in the vectors."""
    import torch

    from judgekit_local.tasks import embed

    enc = embed.load({"id": tiny_clip}, "cpu", torch.float32)
    if getattr(enc.processor, "backend", None) == "pil":
        assert enc.fast is not None
    images = [_noise(w, h, seed=k) for k, (w, h) in enumerate(SIZES)]
    fast, _ = enc.encode(images)
    enc.fast = None
    slow, _ = enc.encode(images)
    assert torch.equal(fast, slow)


def test_run_writes_each_row_of_the_batch(tmp_path):
    """The batch is converted to float32 once; each item's vector file holds its own row."""
    from judgekit_local.store import Store
    from judgekit_local.tasks import embed

    class Fixed:
        name = "fixed"

        def encode(self, images):
            return np.arange(len(images) * 5, dtype=np.float64).reshape(len(images), 5) / 7

    loaded = embed._Plugin.__new__(embed._Plugin)
    loaded.encoder, loaded.name = Fixed(), "fixed"
    store = Store(tmp_path)
    outs = embed.run(loaded, [None] * 3, {}, {"id": "x"}, store)
    for k, out in enumerate(outs):
        sha = out["vector"]["sha256"]
        assert out == {"vector": {"sha256": sha, "dim": 5, "dtype": "float32"}, "encoder": "fixed"}
        np.testing.assert_array_equal(np.frombuffer(store.read(out["vector"]["sha256"]), "<f4"),
                                      (np.arange(5 * k, 5 * k + 5) / 7).astype("<f4"))


# -- blob lookups: exact names, never a listing of the folder on the hot path --------------------

@pytest.fixture
def no_listing(monkeypatch):
    """Fail any glob or folder listing (the stores' slow path is for missing blobs only)."""
    import os
    from pathlib import Path

    def boom(*args, **kwargs):
        raise AssertionError("a blob lookup listed a folder")

    monkeypatch.setattr(Path, "glob", boom)
    monkeypatch.setattr(os, "scandir", boom)
    monkeypatch.setattr(os, "listdir", boom)


def test_worker_store_lookups_are_exact_names(tmp_path, png_bytes, no_listing, monkeypatch):
    from judgekit_local.store import Store

    store = Store(tmp_path)
    png = store.put(png_bytes(), ".png")
    vec = store.put(b"\x00\x00\x80\x3f", ".f32")
    assert store.put(png_bytes(), ".png") == png and store.put(b"\x00\x00\x80\x3f", ".f32") == vec
    assert store.read(png) == png_bytes() and store.read(vec) == b"\x00\x00\x80\x3f"
    assert store.path(vec) == tmp_path / vec[:2] / f"{vec}.f32"
    monkeypatch.undo()  # listing allowed again, to check the files
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted([f"{png}.png", f"{vec}.f32"])


def test_core_store_lookups_are_exact_names(tmp_path, png_bytes, no_listing):
    blobs = pytest.importorskip("judgekit.blobs")
    store = blobs.BlobStore(tmp_path)
    sha = store.put(png_bytes())
    assert store.put(png_bytes()) == sha and store.has(sha) and store.get(sha) == png_bytes()
    assert store.mime(sha) == "image/png" and store.path(sha).name == f"{sha}.png"


def test_stores_find_blobs_under_other_extensions(tmp_path):
    """A blob some other writer stored under an extension of its own is still found (by the
    slow path), temporary files are not blobs, and bytes stored under any known extension are
    not written again."""
    import hashlib

    from judgekit_local.store import BlobMissing, Store

    data = b"some bytes"
    sha = hashlib.sha256(data).hexdigest()
    (tmp_path / sha[:2]).mkdir()
    (tmp_path / sha[:2] / f"{sha[:8]}abcdef.tmp").write_bytes(b"half")
    store = Store(tmp_path)
    with pytest.raises(BlobMissing):
        store.read(sha)
    (tmp_path / sha[:2] / f"{sha}.xyz").write_bytes(data)
    assert store.read(sha) == data and store.path(sha).suffix == ".xyz"
    blobs = pytest.importorskip("judgekit.blobs")
    assert blobs.BlobStore(tmp_path).get(sha) == data and blobs.BlobStore(tmp_path).has(sha)

    other = b"stored by the core"
    core_sha = blobs.BlobStore(tmp_path).put(other)  # no known type: .bin
    assert store.put(other, ".f32") == core_sha
    assert [p.suffix for p in (tmp_path / core_sha[:2]).iterdir() if p.name.startswith(core_sha)] == [".bin"]
