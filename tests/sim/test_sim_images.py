"""The simulator's Images API through the real openai SDK over real HTTP."""

from __future__ import annotations

import base64
import io
import json
import urllib.request

import openai
import pytest
from PIL import Image

from judgekit.cost.images import generation_output_tokens
from judgekit.sim import SimServer
from judgekit.sim.scenes import Scene, SceneObject, parse, render, scene_from_png

PROMPT = "A flat illustration of three large red circles at the top left and a small blue star in the center " \
         "on a yellow background."

_OPEN: list[openai.AsyncOpenAI] = []


@pytest.fixture(autouse=True)
async def _close_clients():
    yield
    while _OPEN:
        await _OPEN.pop().close()


def client(server: SimServer, key: str = "k") -> openai.AsyncOpenAI:
    c = openai.AsyncOpenAI(base_url=server.base_url, api_key=key, max_retries=0)
    _OPEN.append(c)
    return c


async def generate(server: SimServer, **kw):
    kw.setdefault("model", "gpt-image-1")
    kw.setdefault("prompt", PROMPT)
    kw.setdefault("size", "256x256")
    seed = kw.pop("seed", None)
    if seed is not None:
        kw["extra_body"] = {"seed": seed}
    return await client(server).images.generate(**kw)


def png_of(resp, k: int = 0) -> bytes:
    return base64.b64decode(resp.data[k].b64_json)


async def test_b64_image_is_the_prompts_scene_drawn_with_the_seed(sim_factory):
    server = await sim_factory()
    resp = await generate(server, seed=5, quality="low")
    png = png_of(resp)
    assert png == render(parse(PROMPT), 256, seed=5, label=True)
    scene = scene_from_png(png)
    assert scene is not None and scene.background == "yellow"
    assert scene.objects.count(SceneObject("circle", "red", "large", "top left")) == 3
    with Image.open(io.BytesIO(png)) as im:
        assert im.size == (256, 256)
    assert resp.data[0].revised_prompt == PROMPT
    assert resp.usage.output_tokens == generation_output_tokens("gpt-image-1", "256x256", "low")
    assert resp.usage.total_tokens == resp.usage.input_tokens + resp.usage.output_tokens
    assert resp.usage.input_tokens_details.text_tokens == resp.usage.input_tokens
    st = server.stats()
    assert st["served_by_kind"] == {"image": 1} and st["images_generated"] == 1


async def test_same_prompt_and_seed_same_bytes_other_seed_other_bytes(sim_factory):
    server = await sim_factory()
    a, b, c = [png_of(await generate(server, seed=s)) for s in (1, 1, 2)]
    assert a == b and a != c
    other_sim = await sim_factory(seed=9)  # the simulator's own seed draws other images too
    assert png_of(await generate(other_sim, seed=1)) != a
    assert png_of(await generate(server)) == render(parse(PROMPT), 256, seed=0, label=True)  # no seed: 0


async def test_n_images_sizes_and_usage_table(sim_factory):
    server = await sim_factory()
    resp = await generate(server, n=3, size="1536x1024", quality="medium", seed=1)
    assert len(resp.data) == 3 and len({d.b64_json for d in resp.data}) == 3
    with Image.open(io.BytesIO(png_of(resp, 2))) as im:
        assert im.size == (1536, 1024)
    assert resp.usage.output_tokens == 3 * 1568
    dalle = await generate(server, model="dall-e-3", size="1024x1024", prompt="a heart")
    assert dalle.usage is None  # billed per image


async def test_url_response_serves_the_png(sim_factory):
    server = await sim_factory()
    resp = await generate(server, response_format="url", seed=3)
    url = resp.data[0].url
    assert url.startswith(server.root_url + "/sim/generated/") and url.endswith(".png")
    def fetch(u: str) -> tuple[str, bytes]:
        with urllib.request.urlopen(u) as r:
            return r.headers["Content-Type"], r.read()

    assert await _in_thread(fetch, url) == ("image/png", render(parse(PROMPT), 256, seed=3, label=True))
    with pytest.raises(urllib.error.HTTPError) as e:
        await _in_thread(fetch, server.root_url + "/sim/generated/nothing.png")
    assert e.value.code == 404
    st = server.stats()
    assert st["generated_fetches"] == 1 and st["generated_not_found"] == 1


@pytest.mark.parametrize("body, needle", [
    ({"model": "gpt-image-1"}, "prompt"),
    ({"model": "gpt-image-1", "prompt": "   "}, "prompt"),
    ({"model": "gpt-image-1", "prompt": "a star", "size": "999x1"}, "999x1"),
    ({"model": "gpt-image-1", "prompt": "a star", "n": 5}, "'n'"),
    ({"model": "gpt-image-1", "prompt": "a star", "quality": "ultra"}, "ultra"),
    ({"model": "gpt-image-1", "prompt": "a star", "response_format": "jpeg"}, "jpeg"),
    ({"model": "gpt-image-1", "prompt": "a star", "seed": "7"}, "seed"),
])
async def test_validation_errors_are_400_in_openais_shape(sim_factory, body, needle):
    server = await sim_factory()
    req = urllib.request.Request(server.base_url + "/images/generations", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        await _in_thread(urllib.request.urlopen, req)
    assert e.value.code == 400
    err = json.loads(e.value.read())["error"]
    assert needle in err["message"] and err["type"] == "invalid_request_error"
    assert server.stats()["bad_requests"] == 1


async def _in_thread(fn, *args):
    import asyncio

    return await asyncio.to_thread(fn, *args)


async def test_key_model_and_rate_limits_are_the_chat_pipelines(sim_factory):
    server = await sim_factory(api_keys=["right"], models=["gpt-image-1"], rpm=60)
    with pytest.raises(openai.AuthenticationError):
        await client(server, key="wrong").images.generate(model="gpt-image-1", prompt="a star")
    with pytest.raises(openai.NotFoundError):
        await client(server, key="right").images.generate(model="dall-e-3", prompt="a star")
    ok = await client(server, key="right").images.with_raw_response.generate(model="gpt-image-1", prompt="a star",
                                                                             size="256x256")
    assert ok.headers["x-ratelimit-limit-requests"] == "60" and ok.headers["x-request-id"]
    with pytest.raises(openai.RateLimitError) as e:
        await client(server, key="right").images.generate(model="gpt-image-1", prompt="a moon", size="256x256")
    h = e.value.response.headers
    assert int(h["Retry-After"]) >= 1 and "x-ratelimit-remaining-requests" in h
    st = server.stats()
    assert (st["auth_failures"], st["not_found"], st["rate_limited"], st["served"]) == (1, 1, 1, 1)


async def test_injected_errors_and_garbage(sim_factory):
    failing = await sim_factory(error_rate=1.0)
    with pytest.raises(openai.InternalServerError):
        await generate(failing)
    assert failing.stats()["errors_injected"] == 1
    garbage = await sim_factory(garbage_rate=1.0)
    data = png_of(await generate(garbage))
    assert not data.startswith(b"\x89PNG")
    assert garbage.stats()["garbage"] == 1


async def test_a_caption_closer_to_the_scene_draws_a_closer_image():
    scene = Scene("white", (SceneObject("square", "red", "large", "top left"),
                            SceneObject("circle", "blue", "large", "bottom right")))

    def pixels(s: Scene):
        with Image.open(io.BytesIO(render(s, 96))) as im:
            return list(zip(*(iter(im.tobytes()),) * 3))

    def distance(a, b) -> int:
        return sum(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q))

    original = pixels(scene)
    good = pixels(parse("A flat illustration of a large red square at the top left and a large blue circle at "
                        "the bottom right on a white background."))
    half = pixels(parse("A flat illustration of a large red square at the top left on a white background."))
    bad = pixels(parse("A flat illustration of a small green star in the center on a black background."))
    assert distance(original, good) < distance(original, half) < distance(original, bad)
