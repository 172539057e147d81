"""chat: a tiny LLaVA through AutoModelForImageTextToText, its processor and chat template."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("judgekit_local")

from judgekit_local.tasks.chat import split_generation  # noqa: E402


def user(*parts):
    return {"messages": [{"role": "user", "content": list(parts)}]}


def text(t):
    return {"type": "text", "text": t}


def test_batch_with_and_without_images(core, tiny_vlm, put_image, run_batch):
    image = {"type": "image", **put_image(pattern=3)}
    items = [
        {"item_id": "img", "inputs": {"messages": [
            {"role": "system", "content": [text("answer short")]},
            {"role": "user", "content": [image, text("describe the image")]},
        ]}},
        {"item_id": "txt", "inputs": user(text("describe the image"))},
        {"item_id": "str", "inputs": {"messages": [{"role": "user", "content": "what is a cat ?"}]}},
    ]
    out = run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 5})["results"]
    for r in out.values():
        assert r["ok"], r.get("error")
        o = r["output"]
        assert o["text"].strip() and 0 < o["output_tokens"] <= 5 and o["input_tokens"] > 0
        assert o["finish_reason"] in ("stop", "length")
        if o["finish_reason"] == "length":
            assert o["output_tokens"] == 5
    # the image became 16 <image> tokens (4x4 patches): the same text with the image is longer
    assert out["img"]["output"]["input_tokens"] >= out["txt"]["output"]["input_tokens"] + 16


def test_greedy_is_deterministic_and_batch_independent(core, tiny_vlm, put_image, run_batch):
    image = {"type": "image", **put_image(pattern=1)}
    items = [
        {"item_id": "a", "inputs": user(image, text("what color is the sky ?"))},
        {"item_id": "b", "inputs": user(text("write a short caption"))},
    ]
    first = run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 6})["results"]
    again = run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 6})["results"]
    alone = run_batch(core, "chat", {"id": tiny_vlm}, items[1:], {"max_new_tokens": 6})["results"]
    assert [first[k]["output"] for k in "ab"] == [again[k]["output"] for k in "ab"]
    assert alone["b"]["output"] == first["b"]["output"]  # left padding does not change the reply


def test_sampling_with_a_seed_repeats(core, tiny_vlm, run_batch):
    items = [{"item_id": "a", "inputs": user(text("describe a red house"))}]
    params = {"max_new_tokens": 8, "do_sample": True, "temperature": 1.5, "top_p": 1.0, "seed": 7}
    one = run_batch(core, "chat", {"id": tiny_vlm}, items, params)["results"]["a"]["output"]
    two = run_batch(core, "chat", {"id": tiny_vlm}, items, params)["results"]["a"]["output"]
    assert one == two


def test_bad_items_fail_alone(core, tiny_vlm, run_batch):
    items = [
        {"item_id": "ok", "inputs": user(text("a cat"))},
        {"item_id": "missing-image", "inputs": user({"type": "image", "sha256": "f" * 64}, text("what"))},
        {"item_id": "bad-role", "inputs": {"messages": [{"role": "robot", "content": "hi"}]}},
        {"item_id": "no-messages", "inputs": {}},
        {"item_id": "bad-part", "inputs": user({"type": "video", "url": "x"})},
    ]
    out = run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 2})["results"]
    assert out["ok"]["ok"]
    for k in ("missing-image", "bad-role", "no-messages", "bad-part"):
        assert out[k]["error_kind"] == "bad_input", out[k]


def test_bad_params_fail_every_item(core, tiny_vlm, run_batch):
    items = [{"item_id": "a", "inputs": user(text("a cat"))}]
    out = run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 0})
    assert out["results"]["a"]["error_kind"] == "bad_input" and "max_new_tokens" in out["results"]["a"]["error"]


def test_split_generation():
    eos = frozenset({2, 9})
    assert split_generation([5, 6, 2, 0, 0], eos, 5) == ([5, 6], 3, "stop")
    assert split_generation([5, 9], eos, 5) == ([5], 2, "stop")
    assert split_generation([5, 6, 7], eos, 3) == ([5, 6, 7], 3, "length")
    assert split_generation([2], eos, 1) == ([], 1, "stop")


def test_temperature_zero_is_greedy(core, tiny_vlm, run_batch):
    items = [{"item_id": "a", "inputs": user(text("describe a blue car"))}]
    greedy = run_batch(core, "chat", {"id": tiny_vlm}, items, {"max_new_tokens": 4})["results"]["a"]["output"]
    params = {"max_new_tokens": 4, "do_sample": True, "temperature": 0}
    zero = run_batch(core, "chat", {"id": tiny_vlm}, items, params)["results"]["a"]["output"]
    assert zero == greedy


def test_finish_reason_stop(tmp_path, tiny_vlm, run_batch):
    """Every token ends the sequence in this copy: one token out, finish_reason "stop"."""
    import json
    import shutil

    from judgekit_local.worker import WorkerCore

    copy = shutil.copytree(tiny_vlm, tmp_path / "vlm-stops")
    config_path = copy / "generation_config.json"
    config = json.loads(config_path.read_text())
    config["eos_token_id"] = list(range(json.loads((copy / "config.json").read_text())["text_config"]["vocab_size"]))
    config_path.write_text(json.dumps(config))
    core = WorkerCore(tmp_path / "blobs", device="cpu")
    out = run_batch(core, "chat", {"id": str(copy)}, [{"item_id": "a", "inputs": user(text("a cat"))}],
                    {"max_new_tokens": 8})["results"]["a"]["output"]
    assert out["finish_reason"] == "stop" and out["output_tokens"] == 1 and out["text"] == ""
