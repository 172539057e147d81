"""chat with chat_api "internvl": a tiny InternVL-shaped remote-code checkpoint, asked through its
own chat(), with InternVL's dynamic 448 px tiling."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("judgekit_local")

import torch  # noqa: E402
from PIL import Image  # noqa: E402

from judgekit_local.tasks import BadInput  # noqa: E402
from judgekit_local.tasks import internvl  # noqa: E402
from judgekit_local.tasks.chat import prepare  # noqa: E402


@pytest.fixture(scope="module")
def tiny_internvl(tmp_path_factory):
    from judgekit_local.testing import build_tiny_internvl

    return str(build_tiny_internvl(tmp_path_factory.mktemp("tiny-internvl")))


def model_ref(path, **kw):
    return {"id": path, "trust_remote_code": True, "chat_api": "internvl", **kw}


def text(t):
    return {"type": "text", "text": t}


def img(ref):
    return {"type": "image", **ref}


def user(*parts):
    return {"role": "user", "content": list(parts)}


def rgb(w, h, color=(120, 40, 200)):
    return Image.new("RGB", (w, h), color)


# -- tiling ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size, max_tiles, grid, tiles", [
    ((448, 448), 12, (1, 1), 1),      # one tile, no thumbnail
    ((896, 448), 12, (2, 1), 3),      # 2 tiles + thumbnail
    ((448, 896), 12, (1, 2), 3),
    ((1000, 500), 12, (2, 1), 3),     # (4, 2) ties on the ratio, but the image is too small for it
    ((1792, 1792), 12, (3, 3), 10),   # ties on 1:1 go to the larger grid the image fills: 3x3
    ((5000, 100), 12, (12, 1), 13),   # very wide: capped at max_tiles
    ((5000, 100), 6, (6, 1), 7),
    ((1344, 448), 12, (3, 1), 4),
    ((800, 600), 12, (4, 3), 13),     # 4:3 exactly; (8, 6) is over 12 tiles
    ((300, 200), 1, (1, 1), 1),       # max_tiles 1: one tile whatever the shape
    ((40, 30), 12, (4, 3), 13),       # small images are upscaled onto the grid
])
def test_dynamic_tiling_counts(size, max_tiles, grid, tiles):
    assert internvl.tile_grid(*size, max_tiles) == grid
    out = internvl.tile_image(rgb(*size), max_tiles)
    assert len(out) == tiles and all(t.size == (448, 448) for t in out)


def test_tiles_are_row_major_normalised_and_thumbnail_last():
    image = Image.new("RGB", (896, 448), (255, 0, 0))
    image.paste((0, 0, 255), (448, 0, 896, 448))  # left red, right blue
    pixels, counts = internvl.pixel_values([image, rgb(448, 448, (0, 0, 0))])
    assert counts == [3, 1] and pixels.shape == (4, 3, 448, 448) and pixels.dtype == torch.float32
    mean, std = torch.tensor(internvl.IMAGENET_MEAN), torch.tensor(internvl.IMAGENET_STD)
    red, blue, black = [(torch.tensor(c, dtype=torch.float32) - mean) / std for c in ((1, 0, 0), (0, 0, 1), (0, 0, 0))]
    assert torch.allclose(pixels[0, :, 200, 200], red, atol=1e-5)
    assert torch.allclose(pixels[1, :, 200, 200], blue, atol=1e-5)
    assert torch.allclose(pixels[2, :, 200, 100], red, atol=1e-5)  # thumbnail: left half red
    assert torch.allclose(pixels[2, :, 200, 350], blue, atol=1e-5)  # right half blue
    assert torch.allclose(pixels[3, :, 10, 10], black, atol=1e-5)
    assert internvl.pixel_values([]) == (None, [])


# -- messages -> question -------------------------------------------------------------------


def test_existing_placeholders_are_kept():
    a, b = rgb(10, 10), rgb(20, 20)
    messages = [user(text("Image-1: <image>\nImage-2: <image>\nwhich is bigger ?"),
                     {"type": "image", "image": a}, {"type": "image", "image": b})]
    p = internvl.build_prompt(messages)
    assert p.question == "Image-1: <image>\nImage-2: <image>\nwhich is bigger ?"
    assert p.images == [a, b] and p.history is None and p.system is None


def test_missing_placeholders_are_inserted_where_the_images_were():
    a, b = rgb(10, 10), rgb(20, 20)
    messages = [
        {"role": "system", "content": [text("answer short")]},
        user({"type": "image", "image": a}, text("compare it with"), {"type": "image", "image": b}, text("please")),
    ]
    p = internvl.build_prompt(messages)
    assert p.question == "<image>\ncompare it with\n<image>\nplease"
    assert p.images == [a, b] and p.system == "answer short"
    only = internvl.build_prompt([user(text("what is this ?"), {"type": "image", "image": a})])
    assert only.question == "what is this ?\n<image>"


def test_wrong_placeholder_count_and_bad_turns_are_bad_input():
    a = rgb(10, 10)
    with pytest.raises(BadInput, match="2 <image> placeholder"):
        internvl.build_prompt([user(text("<image> and <image>"), {"type": "image", "image": a})])
    with pytest.raises(BadInput, match="last message"):
        internvl.build_prompt([user(text("hi")), {"role": "assistant", "content": [text("yes")]}])


def test_earlier_turns_become_history():
    p = internvl.build_prompt([
        user(text("a")), user(text("b")), {"role": "assistant", "content": [text("c")]}, user(text("d")),
    ])
    assert p.history == [("a\nb", "c")] and p.question == "d"


# -- through the worker ---------------------------------------------------------------------


def test_two_images_in_one_item_and_a_text_only_item(core, tiny_internvl, put_image, run_batch):
    one, two = put_image(size=(896, 448), pattern=2), put_image(size=(448, 448), pattern=5)
    items = [
        {"item_id": "two", "inputs": {"messages": [
            {"role": "system", "content": [text("answer short")]},
            user(text("Image-1: <image>\nImage-2: <image>\nwhich is the cat ?"), img(one), img(two)),
        ]}},
        {"item_id": "inserted", "inputs": {"messages": [user(img(one), text("describe"), img(two))]}},
        {"item_id": "txt", "inputs": {"messages": [user(text("describe"))]}},
    ]
    out = run_batch(core, "chat", model_ref(tiny_internvl), items, {"max_new_tokens": 5})["results"]
    for r in out.values():
        assert r["ok"], r.get("error")
        o = r["output"]
        assert isinstance(o["text"], str) and 0 < o["output_tokens"] <= 5 and o["input_tokens"] > 0
        assert o["finish_reason"] in ("stop", "length")
        if o["finish_reason"] == "length":
            assert o["output_tokens"] == 5
    # the same words plus 3 + 1 tiles of 4 image context tokens each and <img>, </img> per image
    assert out["inserted"]["output"]["input_tokens"] == out["txt"]["output"]["input_tokens"] + 4 * 4 + 2 * 2


def test_max_tiles_reaches_the_model(core, tiny_internvl, put_image, run_batch):
    wide = put_image(size=(1792, 448), pattern=1)  # 4 tiles + thumbnail, or 1 tile with max_tiles 1
    items = [{"item_id": "a", "inputs": {"messages": [user(img(wide), text("what"))]}}]
    many = run_batch(core, "chat", model_ref(tiny_internvl), items, {"max_new_tokens": 2})["results"]["a"]
    one = run_batch(core, "chat", model_ref(tiny_internvl, max_tiles=1), items, {"max_new_tokens": 2})["results"]["a"]
    assert many["ok"] and one["ok"], (many, one)
    assert many["output"]["input_tokens"] - one["output"]["input_tokens"] == 4 * 4


def test_without_trust_remote_code_the_load_fails_clearly(core, tiny_internvl, run_batch):
    items = [{"item_id": "a", "inputs": {"messages": [user(text("hi"))]}}]
    r = run_batch(core, "chat", model_ref(tiny_internvl, trust_remote_code=False), items)["results"]["a"]
    assert not r["ok"] and r["error_kind"] == "load_failed"
    assert "trust_remote_code" in r["error"]


def test_a_bad_item_fails_alone(core, tiny_internvl, put_image, run_batch):
    ref = put_image(pattern=4)
    items = [
        {"item_id": "ok", "inputs": {"messages": [user(img(ref), text("what"))]}},
        {"item_id": "count", "inputs": {"messages": [user(text("<image> <image>"), img(ref))]}},
        {"item_id": "missing", "inputs": {"messages": [user({"type": "image", "sha256": "e" * 64})]}},
    ]
    out = run_batch(core, "chat", model_ref(tiny_internvl), items, {"max_new_tokens": 2})["results"]
    assert out["ok"]["ok"], out["ok"]
    assert out["count"]["error_kind"] == "bad_input" and "placeholder" in out["count"]["error"]
    assert out["missing"]["error_kind"] == "bad_input"


def test_bad_model_settings_fail_every_item(core, tiny_internvl, run_batch):
    items = [{"item_id": "a", "inputs": {"messages": [user(text("hi"))]}}]
    for ref in (model_ref(tiny_internvl, chat_api="vllm"), model_ref(tiny_internvl, max_tiles=0)):
        r = run_batch(core, "chat", ref, items)["results"]["a"]
        assert r["error_kind"] == "bad_input", r


def test_seeded_sampling_repeats_and_does_not_depend_on_the_batch(core, tiny_internvl, put_image, run_batch):
    ref = put_image(pattern=6)
    items = [
        {"item_id": "a", "inputs": {"messages": [user(img(ref), text("describe the image"))]}},
        {"item_id": "b", "inputs": {"messages": [user(text("write a short caption"))]}},
    ]
    params = {"max_new_tokens": 8, "do_sample": True, "temperature": 1.5, "top_p": 1.0, "seed": 11}
    first = run_batch(core, "chat", model_ref(tiny_internvl), items, params)["results"]
    again = run_batch(core, "chat", model_ref(tiny_internvl), items, params)["results"]
    alone = run_batch(core, "chat", model_ref(tiny_internvl), items[1:], params)["results"]
    assert [first[k]["output"] for k in "ab"] == [again[k]["output"] for k in "ab"]
    assert alone["b"]["output"] == first["b"]["output"]
    greedy = [run_batch(core, "chat", model_ref(tiny_internvl), items, {"max_new_tokens": 6})["results"]
              for _ in range(2)]
    assert [greedy[0][k]["output"] for k in "ab"] == [greedy[1][k]["output"] for k in "ab"]


def test_both_chat_apis_stay_cached_apart(tmp_path, tiny_internvl, tiny_vlm, run_batch):
    from judgekit_local.worker import WorkerCore

    core = WorkerCore(tmp_path, device="cpu")
    items = [{"item_id": "a", "inputs": {"messages": [user(text("a cat"))]}}]
    assert run_batch(core, "chat", model_ref(tiny_internvl), items, {"max_new_tokens": 2})["results"]["a"]["ok"]
    assert run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 2})["results"]["a"]["ok"]
    keys = [m["key"] for m in core.loaded_models()]
    assert len(keys) == 2 and {k[-1] for k in keys} == {"internvl", "transformers"}


def test_the_system_message_goes_to_the_model_attribute(tiny_internvl, put_image, core):
    loaded = internvl.load(model_ref(tiny_internvl), "cpu", torch.float32)
    seen = []
    chat = loaded.model.chat

    def spy(tokenizer, pixel_values, question, generation_config, **kw):
        seen.append((loaded.model.system_message, question, kw["num_patches_list"]))
        return chat(tokenizer, pixel_values, question, generation_config, **kw)

    loaded.model.chat = spy
    messages = prepare({"messages": [{"role": "system", "content": "be brief"},
                                     user(img(put_image(size=(896, 448))), text("what"))]}, core.store)
    [out] = internvl.run(loaded, [messages], {"max_new_tokens": 3, "do_sample": False}, model_ref(tiny_internvl), None)
    assert seen == [("be brief", "<image>\nwhat", [3])]
    assert loaded.model.system_message == ""  # restored after the item
    assert out["output_tokens"] <= 3


def test_tiny_internvl_is_registered():
    from judgekit_local import testing, tiny

    assert tiny.TINY_MODELS["internvl"][0] is testing.build_tiny_internvl


# -- from the core --------------------------------------------------------------------------


def test_spec_settings_reach_the_model_ref_and_the_cache_identity():
    from judgekit.config import LocalSettings, ModelSpec
    from judgekit.providers import create_provider

    def provider(**local):
        return create_provider("a", ModelSpec(provider="local", model="m", local={"task": "chat", **local}))

    assert LocalSettings(task="chat").chat_api == "transformers" and LocalSettings(task="chat").max_tiles == 12
    with pytest.raises(ValueError, match="chat_api is for task 'chat'"):
        LocalSettings(task="embed_image", chat_api="internvl")
    with pytest.raises(ValueError):
        LocalSettings(task="chat", chat_api="internvl", max_tiles=0)
    plain = provider()
    # the default sends nothing new, so keys of earlier runs stay valid
    assert "chat_api" not in plain.model_ref and "max_tiles" not in plain.model_ref
    ivl = provider(chat_api="internvl", trust_remote_code=True)
    assert (ivl.model_ref["chat_api"], ivl.model_ref["max_tiles"]) == ("internvl", 12)
    assert len({plain.identity, ivl.identity, provider(chat_api="internvl", max_tiles=6).identity}) == 3


async def test_the_subprocess_worker_runs_it_from_the_core(tmp_path, monkeypatch, tiny_internvl, png_bytes):
    from judgekit.blobs import BlobStore
    from judgekit.cache.store import CacheStore
    from judgekit.config import ModelSpec
    from judgekit.engine import Engine
    from judgekit.providers import local as local_provider
    from judgekit.types import ChatRequest, GenParams, ImagePart, Message

    monkeypatch.delenv(local_provider.WORKER_ENV, raising=False)
    cache = await CacheStore.open(tmp_path / "cache.duckdb", run_id="t")
    local = {"task": "chat", "chat_api": "internvl", "trust_remote_code": True, "device": "cpu", "max_tiles": 4}
    engine = Engine({"scorer": ModelSpec(provider="local", model=tiny_internvl, local=local)}, cache,
                    blobs=BlobStore(tmp_path / "blobs"))
    question = Message.user("Image-1: <image>\nImage-2: <image>\nwhich is the cat ?",
                            ImagePart(png_bytes(size=(896, 448), pattern=1)), ImagePart(png_bytes(pattern=2)))
    request = ChatRequest("scorer", (Message.system("answer short"), question), GenParams(max_tokens=4, temperature=0))
    try:
        await engine.start()
        r = await engine.call(request)
        assert r.ok, r.error
        assert 0 < r.response.usage.output_tokens <= 4 and r.response.usage.input_tokens > 4 * 4
        assert r.response.finish_reason in ("stop", "length")
        again = await engine.call(request)
        assert again.response.cached and again.text == r.text
    finally:
        await engine.close()
        await cache.close()
