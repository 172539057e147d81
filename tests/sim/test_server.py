"""End-to-end tests of the simulator with the real openai and google-genai SDKs."""

from __future__ import annotations

import asyncio
import base64
import json
import time
import urllib.request

import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from judge_parsing import parse_verdict, parse_vfs
from judgekit.sim import SimConfig, SimProcess, SimServer, SimStartError, SimThread, estimate_prompt_tokens

PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG_1x1).decode()


_OPEN_CLIENTS: list[openai.AsyncOpenAI] = []


@pytest.fixture(autouse=True)
async def _close_clients():
    yield
    while _OPEN_CLIENTS:
        await _OPEN_CLIENTS.pop().close()


def client(server: SimServer, key: str = "k", **kw: object) -> openai.AsyncOpenAI:
    c = openai.AsyncOpenAI(base_url=server.base_url, api_key=key, max_retries=0, **kw)
    _OPEN_CLIENTS.append(c)
    return c


def gclient(server: SimServer, key: str = "k") -> genai.Client:
    return genai.Client(api_key=key, http_options=genai.types.HttpOptions(base_url=server.root_url))


def pairwise_prompt(answer_a: str, answer_b: str, question: str = "Write a poem about the lake.") -> str:
    return (
        "Please act as an impartial judge. Mark the reply [ASSISTANT A] or [ASSISTANT B].\n"
        "Verdicts: [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]].\n\n"
        f"[INSTRUCTIONS]\n{question}\n[END INSTRUCTIONS]\n\n"
        f"[ASSISTANT A]\n{answer_a}\n[END ASSISTANT A]\n\n"
        "[CRITERIA]\nCreativity and faithfulness.\n[END CRITERIA]\n\n"
        f"[ASSISTANT B]\n{answer_b}\n[END ASSISTANT B]\n\n"
        "Your output must end with: Final Verdict is: [[VERDICT]]"
    )


def vfs_prompt(answer_a: str, answer_b: str) -> str:
    return (
        "Evaluate the Visual Factuality of two responses.\n\n"
        f"[ASSISTANT A]\n{answer_a}\n[END ASSISTANT A]\n\n"
        "[VISUAL FACTUALITY CRITERIA]\nThe lake is blue.\n[END CRITERIA]\n\n"
        f"[ASSISTANT B]\n{answer_b}\n[END ASSISTANT B]\n\n"
        "End like this:\nResponse A Visual Factuality Score: X/10\n"
        "Response B Visual Factuality Score: Y/10\n"
    )


async def ask(c: openai.AsyncOpenAI, text: str, model: str = "m", **kw: object) -> str:
    r = await c.chat.completions.create(model=model, messages=[{"role": "user", "content": text}], **kw)
    return r.choices[0].message.content or ""


# ---------------------------------------------------------------------------- openai shape


async def test_free_text_answer_shape_and_usage(sim_factory):
    s = await sim_factory()
    c = client(s)
    text = "Describe the picture of the harbor at dawn."
    raw = await c.chat.completions.with_raw_response.create(
        model="cand", messages=[{"role": "user", "content": text}]
    )
    r = raw.parse()
    assert raw.headers["x-request-id"].startswith("req_")
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-")
    assert r.model == "cand"
    content = r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].message.role == "assistant"
    words = len(content.split())
    assert words >= 100  # quality 0.5: a few hundred words
    assert r.usage.prompt_tokens == estimate_prompt_tokens(len(text), 0)
    assert r.usage.completion_tokens == round(words * 1.3)
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    # no rate limits configured: no rate-limit headers
    assert "x-ratelimit-limit-requests" not in raw.headers


async def test_max_tokens_cuts_with_length(sim_factory):
    s = await sim_factory()
    r = await client(s).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Tell a long story."}], max_tokens=40
    )
    assert r.choices[0].finish_reason == "length"
    assert len(r.choices[0].message.content.split()) == 30  # 0.75 words per token
    assert r.usage.completion_tokens <= 40


async def test_multimodal_parts_and_image_tokens(sim_factory):
    s = await sim_factory()
    r = await client(s).chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": "You are a writer."},
            {"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
                {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
                {"type": "text", "text": "What is in these images?"},
            ]},
        ],
    )
    chars = len("You are a writer.") + 1 + len("What is in these images?")
    assert r.usage.prompt_tokens == estimate_prompt_tokens(chars, 2)
    assert r.usage.prompt_tokens >= 170


async def test_deterministic_and_seeded(sim_factory):
    s = await sim_factory(seed=1)
    c = client(s)
    a1 = await ask(c, "Write about autumn.", temperature=0)
    a2 = await ask(c, "Write about autumn.", temperature=0)
    other = await ask(c, "Write about winter.", temperature=0)
    assert a1 == a2
    assert a1 != other
    s2 = await sim_factory(seed=2)
    assert await ask(client(s2), "Write about autumn.", temperature=0) != a1
    s3 = await sim_factory(seed=1)
    assert await ask(client(s3), "Write about autumn.", temperature=0) == a1


async def test_bad_request_400(sim_factory):
    s = await sim_factory()
    with pytest.raises(openai.BadRequestError):
        await client(s).chat.completions.create(model="m", messages=[])
    with pytest.raises(openai.BadRequestError):
        await client(s).chat.completions.create(
            model="m", messages=[{"role": "user", "content": [{"type": "audio", "x": 1}]}]
        )
    assert s.stats()["bad_requests"] == 2


# ---------------------------------------------------------------------------- judges


async def test_pairwise_reply_parses_and_favours_better_model(sim_factory):
    s = await sim_factory(model_quality={"good": 0.95, "bad": 0.15})
    c = client(s)
    scores = []
    for i in range(30):
        q = f"Write a travel journal entry about city number {i}."
        good, bad = await asyncio.gather(ask(c, q, model="good"), ask(c, q, model="bad"))
        assert len(set(good.split())) > len(set(bad.split()))
        # bad model as A (the baseline slot), good model as B
        reply = await ask(c, pairwise_prompt(bad, good, q), model="judge", max_tokens=4096)
        assert reply.rstrip().splitlines()[-1].startswith("Final Verdict is: [[")
        v = parse_verdict(reply)
        assert v is not None, reply
        scores.append({"A>>B": -2, "A>B": -1, "A=B": 0, "B>A": 1, "B>>A": 2}[v])
    assert sum(scores) / len(scores) > 0.8
    assert s.stats()["served_by_kind"] == {"answer": 60, "pairwise": 30}


async def test_pairwise_equal_answers_mix_verdicts(sim_factory):
    s = await sim_factory()
    c = client(s)
    verdicts = set()
    for i in range(40):
        q = f"Describe scene {i}."
        a, b = await asyncio.gather(ask(c, q, model="x"), ask(c, q + " ", model="x"))
        v = parse_verdict(await ask(c, pairwise_prompt(a, b), model="judge"))
        assert v is not None
        verdicts.add(v)
    assert len(verdicts) >= 3  # ties and both directions


async def test_vfs_reply_parses(sim_factory):
    s = await sim_factory(model_quality={"good": 0.9, "bad": 0.1})
    c = client(s)
    diffs = []
    for i in range(10):
        q = f"Explain the diagram {i}."
        good, bad = await asyncio.gather(ask(c, q, model="good"), ask(c, q, model="bad"))
        reply = await ask(c, vfs_prompt(good, bad), model="judge")
        parsed = parse_vfs(reply)
        assert parsed is not None, reply
        a, b = parsed
        assert 0 <= a <= 10 and 0 <= b <= 10
        diffs.append(a - b)
    assert sum(diffs) / len(diffs) > 2
    assert s.stats()["served_by_kind"]["vfs"] == 10


async def test_garbage_replies(sim_factory):
    s = await sim_factory(garbage_rate=1.0)
    c = client(s)
    a = await ask(c, "Write a poem.")
    assert len(a.split()) > 20  # free-text answers are never garbage
    for i in range(5):
        assert parse_verdict(await ask(c, pairwise_prompt(a, a + f" {i}"), model="judge")) is None
        assert parse_vfs(await ask(c, vfs_prompt(a, a + f" {i}"), model="judge")) is None
    st = s.stats()
    assert st["garbage"] == 10 and st["served"] == 11


async def test_garbage_rate_partial(sim_factory):
    s = await sim_factory(garbage_rate=0.3, seed=5)
    c = client(s)
    bad = 0
    for i in range(60):
        bad += parse_verdict(await ask(c, pairwise_prompt("one two", f"three four {i}"))) is None
    assert 8 <= bad <= 30
    assert s.stats()["garbage"] == bad


# ---------------------------------------------------------------------------- faults


async def test_rate_limit_429_with_headers(sim_factory):
    s = await sim_factory(rpm=60)  # bucket of 1 request, refilled at 1/s
    c = client(s)
    raw = await c.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert raw.headers["x-ratelimit-limit-requests"] == "60"
    assert raw.headers["x-ratelimit-remaining-requests"] == "0"
    assert raw.headers["x-ratelimit-reset-requests"].endswith(("ms", "s"))
    with pytest.raises(openai.RateLimitError) as ei:
        await ask(c, "hi again")
    h = ei.value.response.headers
    assert int(h["retry-after"]) == 1
    ms = float(h["retry-after-ms"])
    assert 900 < ms <= 1000
    assert h["x-ratelimit-limit-requests"] == "60"
    assert h["x-ratelimit-remaining-requests"] == "0"
    assert h["x-ratelimit-reset-requests"].endswith("ms")
    assert ei.value.code == "rate_limit_exceeded"
    # another model has its own bucket
    await ask(c, "hi", model="other")
    st = s.stats()
    assert st["rate_limited"] == 1 and st["served"] == 2 and st["requests"] == 3


async def test_rate_limit_refills(sim_factory):
    s = await sim_factory(rpm=600, burst_s=0.1)  # 10/s, bucket of 1 request
    c = client(s)
    await ask(c, "a")
    with pytest.raises(openai.RateLimitError) as ei:
        await ask(c, "b")
    await asyncio.sleep(float(ei.value.response.headers["retry-after-ms"]) / 1000 + 0.01)
    await ask(c, "b")


async def test_token_limit(sim_factory):
    s = await sim_factory(tpm=60, burst_s=100)  # 1 token/s, bucket of 100 tokens
    c = client(s)
    raw = await c.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "x" * 40}], max_tokens=50
    )
    assert raw.headers["x-ratelimit-limit-tokens"] == "60"
    assert raw.headers["x-ratelimit-remaining-tokens"] == "40"  # 100 - (10 + 50)
    assert "x-ratelimit-limit-requests" not in raw.headers
    with pytest.raises(openai.RateLimitError) as ei:
        await ask(c, "y" * 400, max_tokens=50)  # needs 150 > capacity: waits for a full bucket
    h = ei.value.response.headers
    assert h["x-ratelimit-remaining-tokens"] == "40"
    assert 59_000 < float(h["retry-after-ms"]) <= 60_000
    assert h["retry-after"] == "60"
    assert ei.value.body["type"] == "tokens"


async def test_injected_errors_at_rate_and_retry_succeeds(sim_factory):
    s = await sim_factory(error_rate=0.3, seed=3)
    c = client(s)
    failed: list[str] = []
    statuses = set()
    for i in range(150):
        q = f"question {i}"
        try:
            await ask(c, q, max_tokens=5)
        except openai.InternalServerError as e:
            failed.append(q)
            statuses.add(e.status_code)
            body = e.response.json()
            assert body["error"]["type"] == "server_error"
    assert 25 <= len(failed) <= 70
    assert statuses <= {500, 502, 503} and len(statuses) >= 2
    assert s.stats()["errors_injected"] == len(failed)
    # retrying a failed request draws a new fault: within a few attempts it succeeds
    for q in failed[:5]:
        for _ in range(10):
            try:
                await ask(c, q, max_tokens=5)
                break
            except openai.InternalServerError:
                pass
        else:
            pytest.fail("retries never succeeded")


async def test_faults_are_reproducible(sim_factory):
    outcomes = []
    for _ in range(2):
        s = await sim_factory(error_rate=0.5, seed=9)
        c = client(s)
        res = []
        for i in range(20):
            try:
                await ask(c, f"q{i}", max_tokens=5)
                res.append(200)
            except openai.InternalServerError as e:
                res.append(e.status_code)
        outcomes.append(res)
    assert outcomes[0] == outcomes[1]
    assert 200 in outcomes[0] and len(set(outcomes[0])) > 1


async def test_hang_exercises_client_timeout(sim_factory):
    s = await sim_factory(hang_rate=1.0, hang_s=5)
    c = client(s, timeout=0.3)
    t = time.perf_counter()
    with pytest.raises(openai.APITimeoutError):
        await ask(c, "hello")
    assert time.perf_counter() - t < 2
    assert s.stats()["hangs"] == 1


async def test_latency(sim_factory):
    s = await sim_factory(latency_ms=120, latency_jitter_ms=20)
    c = client(s)
    t = time.perf_counter()
    await ask(c, "hello", max_tokens=5)
    assert 0.095 <= time.perf_counter() - t < 1.0


async def test_wrong_key_401(sim_factory):
    s = await sim_factory(api_keys=["good"])
    with pytest.raises(openai.AuthenticationError) as ei:
        await ask(client(s, key="bad"), "hi")
    err = ei.value.response.json()["error"]
    assert err["code"] == "invalid_api_key" and err["type"] == "invalid_request_error"
    assert await ask(client(s, key="good"), "hi", max_tokens=5)
    st = s.stats()
    assert st["auth_failures"] == 1 and st["served"] == 1


async def test_unknown_model_404(sim_factory):
    s = await sim_factory(models=["known"])
    with pytest.raises(openai.NotFoundError) as ei:
        await ask(client(s), "hi", model="unknown")
    assert ei.value.code == "model_not_found"
    await ask(client(s), "hi", model="known", max_tokens=5)
    ids = [m.id async for m in client(s).models.list()]
    assert ids == ["known"]
    assert s.stats()["not_found"] == 1


# ---------------------------------------------------------------------------- stats


async def test_stats_and_reset_over_http(sim_factory):
    s = await sim_factory()
    c = client(s)
    await ask(c, "one", model="m1", max_tokens=5)
    await ask(c, "two", model="m1", max_tokens=5)
    await ask(c, pairwise_prompt("a b", "c d"), model="j")

    def get(path: str, method: str = "GET") -> dict:
        req = urllib.request.Request(s.root_url + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    st = await asyncio.to_thread(get, "/sim/stats")
    assert st["served"] == 3 and st["requests"] == 3
    assert st["served_by_model"] == {"m1": 2, "j": 1}
    assert st["served_by_kind"] == {"answer": 2, "pairwise": 1}
    assert st == s.stats()
    zeroed = await asyncio.to_thread(get, "/sim/reset", "POST")
    assert zeroed["served"] == 0 and zeroed["served_by_model"] == {}
    assert s.stats()["requests"] == 0


# ---------------------------------------------------------------------------- gemini


async def test_gemini_generate_content(sim_factory):
    s = await sim_factory(api_keys=["k"])
    g = gclient(s)
    r = await g.aio.models.generate_content(
        model="gemini-test",
        contents=[genai.types.Part.from_bytes(data=PNG_1x1, mime_type="image/png"), "Describe the image."],
        config=genai.types.GenerateContentConfig(
            system_instruction="You are a writer.", temperature=0, max_output_tokens=2000
        ),
    )
    assert r.text and len(r.text.split()) > 50
    assert r.candidates[0].finish_reason == genai.types.FinishReason.STOP
    u = r.usage_metadata
    chars = len("You are a writer.") + 1 + len("Describe the image.")
    assert u.prompt_token_count == estimate_prompt_tokens(chars, 1)
    assert u.total_token_count == u.prompt_token_count + u.candidates_token_count
    assert r.response_id
    r2 = await g.aio.models.generate_content(
        model="gemini-test", contents="Tell a story.",
        config=genai.types.GenerateContentConfig(max_output_tokens=20),
    )
    assert r2.candidates[0].finish_reason == genai.types.FinishReason.MAX_TOKENS
    assert s.stats()["served_by_model"] == {"gemini-test": 2}


async def test_gemini_judge_and_v1beta_path(sim_factory):
    s = await sim_factory()
    g = genai.Client(
        api_key="k", http_options=genai.types.HttpOptions(base_url=s.root_url, api_version="v1beta")
    )
    r = await g.aio.models.generate_content(model="gemini-judge", contents=pairwise_prompt("a b c", "d e f g"))
    assert parse_verdict(r.text) is not None


async def test_gemini_errors_google_shape(sim_factory):
    s = await sim_factory(api_keys=["k"], rpm=60, models=["gemini-ok"])
    with pytest.raises(genai_errors.ClientError) as ei:
        await gclient(s, key="bad").aio.models.generate_content(model="gemini-ok", contents="hi")
    # the real Gemini API answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID
    assert ei.value.code == 400 and ei.value.status == "INVALID_ARGUMENT"
    info = ei.value.details["error"]["details"][0]
    assert info["@type"].endswith("google.rpc.ErrorInfo") and info["reason"] == "API_KEY_INVALID"
    with pytest.raises(genai_errors.ClientError) as ei:
        await gclient(s).aio.models.generate_content(model="gemini-nope", contents="hi")
    assert ei.value.code == 404 and ei.value.status == "NOT_FOUND"
    g = gclient(s)
    await g.aio.models.generate_content(model="gemini-ok", contents="hi")
    with pytest.raises(genai_errors.ClientError) as ei:
        await g.aio.models.generate_content(model="gemini-ok", contents="hi again")
    assert ei.value.code == 429 and ei.value.status == "RESOURCE_EXHAUSTED"
    assert "retry-after" not in ei.value.response.headers  # Gemini sends only RetryInfo
    details = {d["@type"].rsplit(".", 1)[-1]: d for d in ei.value.details["error"]["details"]}
    assert details["RetryInfo"]["retryDelay"] == "1s"
    assert details["QuotaFailure"]["violations"][0]["quotaId"].startswith("GenerateRequestsPerMinute")


async def test_same_request_both_apis_same_reply(sim_factory):
    s = await sim_factory()
    o = await ask(client(s), "Write about rivers.", model="same")
    r = await gclient(s).aio.models.generate_content(model="same", contents="Write about rivers.")
    assert r.text == o


# ---------------------------------------------------------------------------- runners


def test_sim_thread_sync_client():
    with SimThread(SimConfig(seed=4)) as t:
        c = openai.OpenAI(base_url=t.base_url, api_key="k", max_retries=0)
        r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
        assert r.choices[0].message.content
        assert t.stats()["served"] == 1
        t.reset()
        assert t.stats()["served"] == 0


def test_sim_process_start_stop():
    p = SimProcess(SimConfig(seed=7, rpm=6000))
    with p:
        assert p.port > 0 and p.base_url == f"http://127.0.0.1:{p.port}/v1"
        c = openai.OpenAI(base_url=p.base_url, api_key="k", max_retries=0)
        raw = c.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=5
        )
        assert raw.headers["x-ratelimit-limit-requests"] == "6000"
        st = p.stats()
        assert st["served"] == 1 and st["served_by_model"] == {"m": 1}
        proc = p.proc
    assert p.proc is None and proc.poll() is not None


def test_sim_process_start_failure_reports_stderr():
    p = SimProcess(SimConfig(), port=-5, startup_timeout=10)
    with pytest.raises(SimStartError) as ei:
        p.start()
    assert "exited with code" in str(ei.value)
    assert "Error" in str(ei.value)  # the child's traceback is quoted
