"""The simulator's MMGenBench captions: it "sees" a scene through the PNG's judgekit-scene chunk."""

from __future__ import annotations

import base64
import hashlib
import random
from collections import Counter

import openai

from judgekit.resources import load_prompt
from judgekit.benchmarks.mmgenbench.sim import KIND_CAPTION
from judgekit.sim.replies import classify, make_reply
from judgekit.sim.scenes import describe, parse, random_scene, render

PROMPT = load_prompt("mmgenbench/caption.txt").text
SCENE = random_scene(random.Random(3), "Count")


def _digest(i: int) -> bytes:
    return hashlib.sha256(f"caption-{i}".encode()).digest()


def test_the_caption_prompt_is_the_papers_and_classifies_as_caption():
    # VLMEvalKit's literal starts with a newline (tests/benchmarks/test_mmgenbench_caption_rule.py: byte for byte)
    assert PROMPT.startswith("\n# Role\nYou are an expert in the field of image understanding")
    assert PROMPT.rstrip().endswith("# Output Format\nA string, that is the image caption-prompt. No extra output needed.")
    assert "between 20 to 60 words" in PROMPT
    assert classify(PROMPT) == KIND_CAPTION
    assert classify("Describe this picture.") == "answer"
    assert classify(PROMPT + "\n[ASSISTANT A]\nx\n[END ASSISTANT A]\n[ASSISTANT B]\ny\n[END ASSISTANT B]\n"
                    "Final Verdict") == "pairwise"


def test_caption_describes_the_scene_at_the_models_quality():
    meta = [{"judgekit-scene": SCENE.to_json()}]
    r = make_reply(PROMPT, _digest(0), quality=1.0, images=meta)
    assert r.kind == KIND_CAPTION and r.completion_tokens > 0
    expected = describe(SCENE, quality=1.0, rng=random.Random(int.from_bytes(_digest(0)[:16], "big")))
    assert r.text.lstrip('"').startswith(expected)  # the rng of the request digest; maybe wrapped after

    def recovered(q: float) -> int:
        hits = 0
        for i in range(60):
            got = parse(make_reply(PROMPT, _digest(i), quality=q, images=meta).text)
            hits += sum((Counter(got.objects) & Counter(SCENE.objects)).values())
        return hits

    assert recovered(1.0) > recovered(0.5) > recovered(0.05)


def test_captions_sometimes_leak_template_text_or_ramble():
    meta = [{"judgekit-scene": SCENE.to_json()}]
    texts = [make_reply(PROMPT, _digest(i), quality=0.7, images=meta).text for i in range(1500)]
    quoted = sum(t.startswith('"') and t.endswith('"') for t in texts)
    leaked = sum(t.endswith(("</s>", "<|im_end|>")) for t in texts)
    long = sum(len(t.split()) > 70 for t in texts)
    assert 10 <= quoted <= 60 and 20 <= leaked <= 90 and 15 <= long <= 90
    assert sum(20 <= len(t.split()) <= 60 for t in texts) > 0.9 * len(texts)


def test_without_a_scene_the_caption_is_generic():
    r = make_reply(PROMPT, _digest(1), quality=0.5, images=[{}])
    assert r.kind == KIND_CAPTION and 15 <= len(r.text.split()) <= 80
    assert make_reply(PROMPT, _digest(1), quality=0.5, images=[{}]).text == r.text
    assert make_reply(PROMPT, _digest(1), quality=0.5, images=[{"judgekit-scene": "{broken"}]).kind == KIND_CAPTION


async def test_caption_over_http_with_a_labelled_png(sim_factory):
    server = await sim_factory(model_quality={"good": 1.0})
    png = render(SCENE, 64, label=True)
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    c = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    try:
        resp = await c.chat.completions.create(model="good", messages=[{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": PROMPT}]}])
    finally:
        await c.close()
    text = resp.choices[0].message.content.strip('"').removesuffix("</s>").removesuffix("<|im_end|>")
    got = parse(text)
    assert Counter(got.objects) == Counter(SCENE.objects) and got.background == SCENE.background
    assert server.stats()["served_by_kind"] == {"caption": 1}
