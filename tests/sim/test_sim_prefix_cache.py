"""The simulator's automatic prompt cache (judgekit.sim.prefix_cache) on the OpenAI-compatible chat
endpoint and Gemini's generateContent, through the real openai and google-genai SDKs: a hit after a
first request, 128-token steps of the longest shared prefix, the minimums, the lifetime on an
injected clock, images that must match, never more than the prompt, batches; hypothesis: the
cached count is exactly the largest step within the shared prefix (so at most the prompt and
monotone in the shared prefix)."""

from __future__ import annotations

import base64
import json

from google.genai import types as gtypes
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_clients import gm, oa

from judgekit.sim.prefix_cache import PrefixCache, boundaries
from judgekit.sim.protocol import _parse_openai
from judgekit.sim.server import BATCHES_KEY

WORDS = "wxyz" * 8000  # four characters a token: a text of n tokens is WORDS[:4 * n]


def text_tokens(n: int, salt: str = "") -> str:
    """n simulated tokens of text (4n characters), differing from another salt's from the start."""
    return (salt + WORDS)[: 4 * n]


def img(tag: str) -> dict:
    data = base64.b64encode(f"not really an image {tag}".encode() * 20).decode()
    return {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}}


def user(*parts) -> list[dict]:
    content = [p if isinstance(p, dict) else {"type": "text", "text": p} for p in parts]
    return [{"role": "user", "content": content}]


async def ask(client, messages, model: str = "gpt-4o"):
    r = await client.chat.completions.create(model=model, messages=messages, max_tokens=50)
    return r.usage.prompt_tokens, r.usage.prompt_tokens_details.cached_tokens


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def clocked(server) -> Clock:
    clock = Clock()
    server._core.prefix_cache.clock = clock
    return clock


# ------------------------------------------------------------------------------ OpenAI, live


async def test_a_repeated_prefix_is_cached_in_128_token_steps_after_the_first_answer(sim_factory):
    server = await sim_factory()
    client = oa(server)
    shared = text_tokens(1300)
    first = await ask(client, user(shared + "Question one?"))
    assert first[1] == 0  # nothing seen before
    prompt, cached = await ask(client, user(shared + "And another question, a longer one?"))
    assert cached == 1280  # 1,300 shared tokens: ten steps of 128
    assert cached <= prompt
    prompt, cached = await ask(client, user(shared + "Question one?"))  # the very same prompt again
    assert prompt == first[0] == 1304 and cached == 1280  # the last step within the prompt
    s = server.stats()
    assert (s["prefix_cache_hits"], s["prefix_cache_tokens"]) == (2, 2560)


async def test_the_longest_prefix_seen_before_counts_in_steps(sim_factory):
    client = oa(await sim_factory())
    base = text_tokens(3000)
    await ask(client, user(base[: 4 * 1100] + "!" + base[4 * 1100:]))  # 1,100 tokens shared with base
    await ask(client, user(base[: 4 * 2000] + "?" + base[4 * 2000:]))  # 2,000 shared with base
    assert (await ask(client, user(base)))[1] == 1920  # the longest: 15 steps
    assert (await ask(client, user(base[: 4 * 1100] + "#")))[1] == 1024


async def test_under_1024_tokens_nothing_is_cached(sim_factory):
    client = oa(await sim_factory())
    short = user(text_tokens(1000))
    assert [(await ask(client, short))[1] for _ in range(3)] == [0, 0, 0]
    # 1,024 tokens exactly: the first step
    exact = user(text_tokens(1024))
    assert [(await ask(client, exact))[1] for _ in range(2)] == [0, 1024]


async def test_roles_are_part_of_the_prefix(sim_factory):
    client = oa(await sim_factory())
    long = text_tokens(1500)
    await ask(client, [{"role": "system", "content": long}, {"role": "user", "content": "Hi?"}])
    assert (await ask(client, [{"role": "user", "content": long}, {"role": "user", "content": "Hi?"}]))[1] == 0
    assert (await ask(client, [{"role": "system", "content": long}, {"role": "user", "content": "Bye?"}]))[1] == 1408


async def test_images_must_match_exactly(sim_factory):
    client = oa(await sim_factory())
    long = text_tokens(1500)
    await ask(client, user(img("a"), long, "one?"))
    prompt, cached = await ask(client, user(img("a"), long, "two?"))
    assert cached == 1536 and prompt == 85 + 1500 + 2  # the image's 85 tokens, the text, its newlines
    assert (await ask(client, user(img("b"), long, "one?")))[1] == 0  # another image first: no prefix
    # the same texts with the image later: a prefix up to the image
    await ask(client, user(long, img("a"), "one?"))
    assert (await ask(client, user(long, img("b"), "one?")))[1] == 1408


async def test_a_prefix_lives_its_ttl_after_its_last_use(sim_factory):
    server = await sim_factory(prefix_cache_ttl_s=300)
    clock = clocked(server)
    client = oa(server)
    prompt = user(text_tokens(1200))
    assert (await ask(client, prompt))[1] == 0
    clock.t += 299
    assert (await ask(client, prompt))[1] == 1152  # still there; its lifetime starts again
    clock.t += 299
    assert (await ask(client, prompt))[1] == 1152
    clock.t += 301
    assert (await ask(client, prompt))[1] == 0  # evicted, written again
    assert (await ask(client, prompt))[1] == 1152


async def test_the_setting_turns_it_off_and_cached_prompt_share_overrides_it(sim_factory):
    prompt = user(text_tokens(1200))
    off = oa(await sim_factory(prefix_cache=False))
    assert [(await ask(off, prompt))[1] for _ in range(2)] == [0, 0]
    shared = oa(await sim_factory(cached_prompt_share={"gpt-4o": 0.25}))
    assert [(await ask(shared, prompt))[1] for _ in range(2)] == [300, 300]
    small = oa(await sim_factory(prefix_cache_min_tokens={"gpt-4o": 256}, prefix_cache_step=64))
    short = user(text_tokens(300))
    assert [(await ask(small, short))[1] for _ in range(2)] == [0, 256]


async def test_models_and_apis_have_caches_of_their_own(sim_factory):
    server = await sim_factory()
    client = oa(server)
    prompt = user(text_tokens(1200))
    await ask(client, prompt, model="gpt-4o")
    assert (await ask(client, prompt, model="gpt-4o-mini"))[1] == 0
    assert (await ask(client, prompt, model="gpt-4o"))[1] == 1152


async def test_reset_empties_the_cache(sim_factory):
    server = await sim_factory()
    client = oa(server)
    prompt = user(text_tokens(1200))
    await ask(client, prompt)
    server.reset()
    assert (await ask(client, prompt))[1] == 0


def test_two_requests_in_flight_together_both_miss():
    """A request reads the cache as it starts; a prefix is there once its first request is answered."""
    clock = Clock()
    cache = PrefixCache(ttl_s=300, step=128, clock=clock)
    sreq = _parse_openai({"model": "m", "messages": user(text_tokens(1200))}, b"0")
    started_a = started_b = clock.t
    clock.t += 1  # both answered after both started
    assert cache.use("openai", "m", sreq.content, minimum=1024, started=started_a).cached_tokens == 0
    assert cache.use("openai", "m", sreq.content, minimum=1024, started=started_b).cached_tokens == 0
    started_c = clock.t  # a third one starts after the first answer
    assert cache.use("openai", "m", sreq.content, minimum=1024, started=started_c).cached_tokens == 1152


# ------------------------------------------------------------------------------ Gemini


async def gemini_ask(client, model: str, contents):
    r = await client.aio.models.generate_content(model=model, contents=contents,
                                                 config=gtypes.GenerateContentConfig(max_output_tokens=50))
    return r.usage_metadata.prompt_token_count, r.usage_metadata.cached_content_token_count


async def test_gemini_reports_cached_content_tokens_from_its_minimums(sim_factory):
    server = await sim_factory()
    client = gm(server)
    long = text_tokens(2000)
    assert (await gemini_ask(client, "gemini-2.5-flash", long + "one?"))[1] is None  # omitted when 0, as the API
    prompt, cached = await gemini_ask(client, "gemini-2.5-flash", long + "two?")
    assert cached == 1920 and prompt == 2001
    # Pro: 4,096 tokens at least
    assert [(await gemini_ask(client, "gemini-2.5-pro", long))[1] for _ in range(2)] == [None, None]
    longer = text_tokens(5000)
    assert [(await gemini_ask(client, "gemini-2.5-pro", longer))[1] for _ in range(2)] == [None, 4992]
    png = gtypes.Part.from_bytes(data=b"\x89PNG fake image bytes", mime_type="image/png")
    await gemini_ask(client, "gemini-2.5-flash", [png, long, "one?"])
    assert (await gemini_ask(client, "gemini-2.5-flash", [png, long, "two?"]))[1] == 2048  # 85 + 2,000 tokens


# ------------------------------------------------------------------------------ batches


async def test_batch_requests_read_and_write_the_cache_as_they_are_answered(sim_factory):
    server = await sim_factory(batch_turnaround_s=0)
    client = oa(server)
    long = text_tokens(1300)
    lines = b"".join(json.dumps({"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions",
                                 "body": {"model": "gpt-4o", "messages": user(long + f"question {i}?"),
                                          "max_tokens": 50}}).encode() + b"\n" for i in range(3))
    clock = Clock(1_800_000_000.0)
    server.app[BATCHES_KEY].clock = clock
    f = await client.files.create(file=("in.jsonl", lines, "application/jsonl"), purpose="batch")
    b = await client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h")
    clock.t += 10  # done
    b = await client.batches.retrieve(b.id)
    assert b.status == "completed"
    out = [json.loads(x) for x in (await client.files.content(b.output_file_id)).content.splitlines()]
    cached = sorted(o["response"]["body"]["usage"]["prompt_tokens_details"]["cached_tokens"] for o in out)
    assert cached == [0, 1280, 1280]  # the first one answered writes, the others read


# ------------------------------------------------------------------------------ properties

_text = st.text(alphabet="ab\n", max_size=60)
_part = st.one_of(_text.map(lambda t: ("t", t)), st.sampled_from("PQ").map(lambda tag: ("i", tag)))
_parts = st.lists(_part, min_size=1, max_size=6)


def _body(parts) -> dict:
    content = [{"type": "text", "text": v} if k == "t" else img(v) for k, v in parts]
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


def _atoms(parts) -> list[tuple]:
    """The prompt as the simulator counts it: where a text part starts (no tokens: the parts are
    part of the prefix, an empty one too), every character, the newline before each text but the
    first, every image (85 tokens)."""
    out: list[tuple] = []
    texts = 0
    for k, v in parts:
        if k == "t":
            out.append(("part",))
            if texts:
                out.append(("sep",))
            texts += 1
            out.extend(("c", ch) for ch in v)
        else:
            out.append(("i", v))
    return out


def _position(atoms) -> int:
    chars = sum(1 for a in atoms if a[0] in ("c", "sep"))
    return chars // 4 + 85 * sum(1 for a in atoms if a[0] == "i")


def _shared_position(a, b) -> int:
    x, y = _atoms(a), _atoms(b)
    n = 0
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    return _position(x[:n])


@settings(max_examples=300, deadline=None)
@given(first=_parts, second=_parts, step=st.sampled_from([4, 8, 16]), minimum=st.sampled_from([1, 8, 20, 90]))
def test_the_cached_count_is_the_largest_step_within_the_shared_prefix(first, second, step, minimum):
    cache = PrefixCache(ttl_s=300, step=step, clock=Clock())
    a, b = _parse_openai(_body(first), b"0"), _parse_openai(_body(second), b"0")
    cache.use("openai", "m", a.content, minimum=minimum)
    got = cache.use("openai", "m", b.content, minimum=minimum).cached_tokens
    shared = _shared_position(first, second)
    first_step = max(step, -(-minimum // step) * step)
    want = shared // step * step if shared >= first_step else 0
    assert got == want
    assert got <= b.prompt_tokens and got % step == 0


@settings(max_examples=200, deadline=None)
@given(parts=_parts, i=st.integers(0, 6), j=st.integers(0, 6), k=st.integers(0, 500), m=st.integers(0, 500))
def test_more_shared_prefix_never_caches_less(parts, i, j, k, m):
    """Followers of one prompt: its first n parts and c characters of the next, then text of their
    own; one that shares more of the prompt never gets fewer cached tokens."""
    whole = [(kind, v * 8) if kind == "t" else (kind, v) for kind, v in parts]  # long enough for steps

    def follower(n: int, cut: int) -> list[tuple[str, str]]:
        if n < len(whole) and whole[n][0] == "t":
            return whole[:n] + [("t", whole[n][1][:cut] + "#")]
        return whole[:n] + [("t", "#")]

    got = []
    for n, cut in sorted([(min(i, len(whole)), k), (min(j, len(whole)), m)]):
        cache = PrefixCache(ttl_s=300, step=8, clock=Clock())
        cache.use("openai", "m", _parse_openai(_body(whole), b"0").content, minimum=8)
        b = _parse_openai(_body(follower(n, cut)), b"0")
        got.append(cache.use("openai", "m", b.content, minimum=8).cached_tokens)
        assert got[-1] <= b.prompt_tokens
    assert got[0] <= got[1]


def test_boundaries_are_keyed_by_the_content_up_to_them():
    a = _parse_openai(_body([("t", "ab" * 40), ("i", "P"), ("t", "x" * 30)]), b"0").content
    b = _parse_openai(_body([("t", "ab" * 40), ("i", "Q"), ("t", "x" * 30)]), b"0").content
    ka, kb = boundaries(b"ns", a, step=16, first=16), boundaries(b"ns", b, step=16, first=16)
    # 80 characters (20 tokens), an image (85), 31 characters: boundaries 16 (in the text), 32..96 (in
    # the image: keys differ), 112 (after it: differ too)
    assert [t for t, _ in ka] == [t for t, _ in kb] == [16, 32, 48, 64, 80, 96, 112]
    assert ka[0] == kb[0] and all(x != y for x, y in zip(ka[1:], kb[1:]))
    assert boundaries(b"other", a, step=16, first=16)[0][1] != ka[0][1]  # another model or API


def test_claudes_marked_prefixes_follow_the_same_rule_for_requests_in_flight():
    from judgekit.sim.anthropic_api import AnthropicSim

    sim = AnthropicSim(core=None)
    clock = Clock()
    sim.clock = clock
    prefix = ((b"p" * 32, 1500),)
    started = clock.t
    clock.t += 1
    assert sim.prefix_cache("claude-x", prefix, started) == (0, 1500)  # both in flight: both write
    assert sim.prefix_cache("claude-x", prefix, started) == (0, 1500)
    assert sim.prefix_cache("claude-x", prefix, clock.t) == (1500, 0)  # started after: reads
    assert sim.prefix_cache("claude-x", prefix) == (1500, 0)  # a batch's request: answered at once


def test_the_prefix_cache_settings_are_part_of_a_sim_models_cache_identity():
    """Turning the simulator's prefix cache off or changing its steps changes the usage it reports,
    so a judgekit cache made one way is not reused the other way; a spec that sets none of them
    keeps the identity it had before these settings existed."""
    from judgekit.providers.sim import _RESPONSE_FIELDS, sim_settings_hash

    base = {"seed": 7, "latency_ms": 0}
    before = sim_settings_hash(base, tuple(f for f in _RESPONSE_FIELDS if not f.startswith("prefix_cache")))
    assert sim_settings_hash(base, _RESPONSE_FIELDS) == before
    idents = {sim_settings_hash({**base, **extra}, _RESPONSE_FIELDS)
              for extra in ({}, {"prefix_cache": False}, {"prefix_cache_step": 64},
                            {"prefix_cache_min_tokens": {"sim-judge": 2048}})}
    assert len(idents) == 4
    # latency and TTL change no answer: same identity
    assert sim_settings_hash({**base, "latency_ms": 30, "prefix_cache_ttl_s": 60}, _RESPONSE_FIELDS) == before
