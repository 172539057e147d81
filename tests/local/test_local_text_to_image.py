"""text_to_image: a tiny Stable Diffusion pipeline through diffusers' from_pretrained."""

import io

import pytest

pytest.importorskip("torch")
pytest.importorskip("diffusers")
pytest.importorskip("judgekit_local")

from PIL import Image  # noqa: E402

from judgekit_local.presets import DEFAULT_TEXT_TO_IMAGE_PRESET, TEXT_TO_IMAGE_PRESETS  # noqa: E402

PARAMS = {"steps": 2, "guidance": 5.0, "width": 48, "height": 32}


def prompt(item_id, text, seed, negative=None):
    inputs = {"prompt": text, "seed": seed}
    if negative is not None:
        inputs["negative_prompt"] = negative
    return {"item_id": item_id, "inputs": inputs}


def image_bytes(core, result) -> bytes:
    return core.store.path(result["output"]["image"]["sha256"]).read_bytes()


@pytest.mark.parametrize("pipeline", ["auto", "StableDiffusionPipeline"])
def test_pngs_of_the_requested_size(core, tiny_diffusion, run_batch, pipeline):
    items = [prompt("a", "a red cat", 1), prompt("b", "a blue sky", 2, negative="")]
    out = run_batch(core, "text_to_image", {"id": tiny_diffusion, "pipeline": pipeline}, items, PARAMS)
    for r in out["results"].values():
        assert r["ok"], r.get("error")
        ref = r["output"]["image"]
        assert ref["mime"] == "image/png" and (ref["width"], ref["height"]) == (48, 32)
        path = core.store.path(ref["sha256"])
        assert path.suffix == ".png"
        with Image.open(io.BytesIO(path.read_bytes())) as im:
            assert im.format == "PNG" and im.size == (48, 32)


def test_same_seed_same_bytes(core, tiny_diffusion, run_batch):
    items = [prompt("a", "a red cat", 11), prompt("b", "a red cat", 12)]
    first = run_batch(core, "text_to_image", {"id": tiny_diffusion}, items, PARAMS)["results"]
    again = run_batch(core, "text_to_image", {"id": tiny_diffusion}, items, PARAMS)["results"]
    assert image_bytes(core, first["a"]) == image_bytes(core, again["a"])
    assert first["a"]["output"] == again["a"]["output"]
    assert image_bytes(core, first["a"]) != image_bytes(core, first["b"])  # another seed


def test_bad_items_fail_alone(core, tiny_diffusion, run_batch):
    items = [
        prompt("ok", "a dog", 3),
        {"item_id": "no-seed", "inputs": {"prompt": "a dog"}},
        {"item_id": "no-prompt", "inputs": {"seed": 1}},
        {"item_id": "bad-negative", "inputs": {"prompt": "a dog", "seed": 1, "negative_prompt": 5}},
    ]
    out = run_batch(core, "text_to_image", {"id": tiny_diffusion}, items, PARAMS)["results"]
    assert out["ok"]["ok"]
    for k in ("no-seed", "no-prompt", "bad-negative"):
        assert out[k]["error_kind"] == "bad_input", out[k]


def test_bad_params_and_pipeline(core, tiny_diffusion, run_batch):
    items = [prompt("a", "a dog", 3)]
    out = run_batch(core, "text_to_image", {"id": tiny_diffusion}, items, {"width": "wide"})
    assert out["results"]["a"]["error_kind"] == "bad_input"
    out = run_batch(core, "text_to_image", {"id": tiny_diffusion, "pipeline": "NoSuchPipeline"}, items, PARAMS)
    assert out["results"]["a"]["error_kind"] == "load_failed" and "NoSuchPipeline" in out["results"]["a"]["error"]


def test_presets_are_the_reference_settings():
    assert DEFAULT_TEXT_TO_IMAGE_PRESET == "flux-dev"
    expected = {
        "flux-dev": ("black-forest-labs/FLUX.1-dev", "bf16", 3.5, 50),
        "sd3.5-large": ("stabilityai/stable-diffusion-3.5-large", "bf16", 3.5, 28),
        "kolors": ("Kwai-Kolors/Kolors-diffusers", "fp16", 5.0, 50),
        "lumina": ("Alpha-VLLM/Lumina-Next-SFT-diffusers", "bf16", 4.0, 30),
    }
    for name, (checkpoint, dtype, guidance, steps) in expected.items():
        p = TEXT_TO_IMAGE_PRESETS[name]
        assert (p["model"]["id"], p["model"]["dtype"], p["params"]["guidance"], p["params"]["steps"]) == (
            checkpoint, dtype, guidance, steps,
        )
        assert (p["params"]["width"], p["params"]["height"]) == (1024, 1024)
    assert TEXT_TO_IMAGE_PRESETS["kolors"]["negative_prompt"] == ""
    assert TEXT_TO_IMAGE_PRESETS["flux-dev"]["model"]["pipeline"] == "flux"
    assert TEXT_TO_IMAGE_PRESETS["sd3.5-large"]["model"]["pipeline"] == "sd3"
