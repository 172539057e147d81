"""The Brave image search retriever against the simulator's copy of the API, over real HTTP, and
against a mock transport for what the simulator does not do."""

from __future__ import annotations

import io
import json

import httpx
import pytest
from PIL import Image

from judgekit.blobs import BlobStore
from judgekit.config import ModelSpec
from judgekit.errors import AuthError, BadRequest, RateLimited, TransientError
from judgekit.providers import create_provider
from judgekit.retrieval import BraveImageSearch, Retrieved
from judgekit.retrieval.brave import MAX_RETRY_AFTER_S, brave_reset_seconds, classify_response
from judgekit.sim import SimConfig, SimThread
from judgekit.types import ChatRequest, Message, Usage


@pytest.fixture
def sim():
    started: list[SimThread] = []

    def make(**kw) -> SimThread:
        t = SimThread(SimConfig(**kw)).start()
        started.append(t)
        return t

    yield make
    for t in started:
        t.stop()


@pytest.fixture
async def retriever():
    made: list[BraveImageSearch] = []

    async def make(base_url: str, key: str | None = "k", **kw) -> BraveImageSearch:
        r = BraveImageSearch(api_key=key, base_url=base_url, timeout_s=10, **kw)
        await r.start()
        made.append(r)
        return r

    yield make
    for r in made:
        await r.close()


def png_text(data: bytes) -> dict[str, str]:
    with Image.open(io.BytesIO(data)) as im:
        return dict(im.text)


async def test_ok_result_is_a_png_labelled_with_the_query(sim, retriever):
    t = sim(seed=5, api_keys=["secret"])
    r = await retriever(t.root_url, key="secret")
    got = await r.search("  Rocking Chair ")
    assert got.status == "ok" and got.query == "Rocking Chair" and got.source == "brave"
    assert got.mime == "image/png" and got.data is not None
    assert png_text(got.data) == {"judgekit-label": "rocking chair", "judgekit-kind": "photo"}
    assert got.url.startswith(t.root_url + "/sim/images/rocking-chair.png?") and got.url.endswith("n=1")
    assert got.page_url and got.title and got.error is None
    again = await r.search("rocking chair")
    assert again.sha256 == got.sha256  # deterministic bytes
    st = t.stats()
    assert (st["search_requests"], st["searches_served"], st["images_served"]) == (2, 2, 2)
    assert "served" in st  # merged with the chat counters


async def test_zero_results_is_no_result(sim, retriever):
    t = sim(search_no_result_rate=1.0)
    got = await (await retriever(t.root_url)).search("unicorn")
    assert got.status == "no_result" and got.sha256 is None and got.data is None
    assert t.stats()["search_no_results"] == 1


async def test_server_error_raises_transient(sim, retriever):
    t = sim(search_error_rate=1.0)
    with pytest.raises(TransientError) as e:
        await (await retriever(t.root_url)).search("cat")
    assert e.value.status in (500, 503)
    assert t.stats()["search_errors_injected"] == 1


async def test_faults_are_deterministic_per_query_and_attempt(sim, retriever):
    outcomes = []
    for _ in range(2):
        t = sim(seed=9, search_error_rate=0.5)
        r = await retriever(t.root_url)
        row = []
        for q in [f"thing {i}" for i in range(12)] * 2:  # the second round is every query's attempt 2
            try:
                row.append((await r.search(q)).status)
            except TransientError:
                row.append("error")
        outcomes.append(row)
    assert outcomes[0] == outcomes[1] and "error" in outcomes[0] and "ok" in outcomes[0]


async def test_wrong_key_raises_auth_error(sim, retriever):
    t = sim(api_keys=["right"])
    with pytest.raises(AuthError) as e:
        await (await retriever(t.root_url, key="wrong")).search("cat")
    assert e.value.status == 401 and "SUBSCRIPTION_TOKEN_INVALID" in str(e.value)
    assert t.stats()["search_auth_failures"] == 1


async def test_rate_limit_raises_rate_limited_with_retry_after(sim, retriever):
    t = sim(rpm=1)
    r = await retriever(t.root_url)
    assert (await r.search("cat")).status == "ok"
    with pytest.raises(RateLimited) as e:
        await r.search("dog")
    assert e.value.status == 429 and e.value.retry_after is not None and 1 <= e.value.retry_after <= 60
    assert t.stats()["search_rate_limited"] == 1


async def test_broken_first_image_falls_back_to_the_second_result(sim, retriever):
    t = sim(search_broken_image_rate=1.0)
    got = await (await retriever(t.root_url)).search("teapot")
    assert got.status == "ok" and got.url.endswith("n=2")
    assert png_text(got.data)["judgekit-label"] == "teapot"
    assert t.stats()["images_not_found"] == 2  # the first result's image and its thumbnail


async def test_no_fetchable_image_is_image_error(sim, retriever):
    t = sim(search_broken_image_rate=1.0, search_results=1)
    got = await (await retriever(t.root_url)).search("teapot")
    assert got.status == "image_error" and got.data is None
    assert "result 1: HTTP 404" in got.error


async def test_simulator_validates_parameters(sim):
    t = sim()
    async with httpx.AsyncClient() as c:
        resp = await c.get(t.root_url + "/res/v1/images/search", params={"q": "cat", "count": "0"})
    assert resp.status_code == 422
    assert resp.json()["error"]["code"] == "VALIDATION"
    err = classify_response(resp.status_code, resp.headers, resp.content)
    assert isinstance(err, BadRequest)


async def test_empty_query_is_a_bad_request(retriever):
    r = await retriever("http://127.0.0.1:9")
    with pytest.raises(BadRequest):
        await r.search("   ")


async def test_connection_refused_is_transient(retriever):
    r = await retriever("http://127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(TransientError):
        await r.search("cat")


# -- the provider ------------------------------------------------------------------------------


async def test_provider_stores_the_image_and_the_json_round_trips(sim, tmp_path, monkeypatch):
    t = sim(api_keys=["brave-key"])
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "brave-key")
    prov = create_provider("img", ModelSpec(provider="brave", model="images", base_url=t.root_url))
    await prov.start()
    try:
        assert prov.identity == f"{t.root_url}/res/v1/images/search?count=5&safesearch=strict"
        store = BlobStore(tmp_path / "blobs")
        prov.blobs = store
        resp = await prov.generate(ChatRequest("img", (Message.user("ignored"), Message.user(" a red apple \n"))))
        assert resp.usage == Usage(0, 0) and resp.finish_reason == "ok" and resp.latency_s > 0
        got = Retrieved.from_json(resp.text)
        assert got.status == "ok" and got.query == "a red apple" and got.data is None
        assert store.has(got.sha256) and store.mime(got.sha256) == "image/png"
        assert png_text(store.get(got.sha256))["judgekit-label"] == "a red apple"
        assert Retrieved.from_json(got.to_json()) == got
        assert list(json.loads(resp.text)) == ["status", "query", "sha256", "mime", "url", "page_url", "title",
                                               "source", "error"]
    finally:
        await prov.close()


async def test_provider_needs_the_key_and_a_blob_store(sim, monkeypatch):
    t = sim()
    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    prov = create_provider("img", ModelSpec(provider="brave", model="images", base_url=t.root_url))
    with pytest.raises(AuthError, match="BRAVE_SEARCH_API_KEY"):
        await prov.start()
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "x")
    await prov.start()
    try:
        with pytest.raises(RuntimeError, match="blob store"):
            await prov.generate(ChatRequest("img", (Message.user("cat"),)))
        assert t.stats()["search_requests"] == 0  # nothing was spent
    finally:
        await prov.close()


# -- against a mock transport --------------------------------------------------------------------


def _png(colour: str = "red") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), colour).save(buf, format="PNG")
    return buf.getvalue()


def _search_body(*results: dict) -> dict:
    return {"type": "images", "results": list(results)}


def _result(url: str | None, thumb: str | None, title: str = "t") -> dict:
    r: dict = {"title": title, "url": "https://page.example/" + title, "source": "page.example"}
    if url is not None:
        r["properties"] = {"url": url}
    if thumb is not None:
        r["thumbnail"] = {"src": thumb}
    return r


async def _mock_retriever(handler, **kw) -> BraveImageSearch:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    r = BraveImageSearch(api_key="key", client=client, **kw)
    await r.start()
    return r


async def test_each_result_tries_the_image_then_the_thumbnail_then_the_next_result():
    seen: list[tuple[str, str | None]] = []
    big = _png("blue") + b"\0" * 2000

    def handler(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        seen.append((request.url.host, request.headers.get("X-Subscription-Token")))
        if request.url.path == "/res/v1/images/search":
            assert request.url.params["safesearch"] == "strict" and request.url.params["q"] == "cat"
            return httpx.Response(200, json=_search_body(
                _result("https://a.example/page.html", "https://imgs.example/huge.png", "one"),
                _result(None, None, "two"),
                _result("https://b.example/moved.png", None, "three"),
            ))
        if url == "https://a.example/page.html":
            return httpx.Response(200, text="<html>not an image</html>", headers={"content-type": "image/png"})
        if url == "https://imgs.example/huge.png":
            return httpx.Response(200, content=big)
        if url == "https://b.example/moved.png":
            return httpx.Response(302, headers={"location": "https://c.example/final.png"})
        if url == "https://c.example/final.png":
            return httpx.Response(200, content=_png())
        return httpx.Response(404)

    r = await _mock_retriever(handler, max_image_bytes=1000)
    got = await r.search("cat")
    await r.close()
    assert got.status == "ok" and got.title == "three" and got.url == "https://b.example/moved.png"
    assert got.data == _png() and got.page_url == "https://page.example/three"
    # the key goes to the search API only, never to image hosts
    assert [k for host, k in seen if host == "api.search.brave.com"] == ["key"]
    assert all(k is None for host, k in seen if host != "api.search.brave.com")


async def test_only_three_results_are_tried():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/res/v1/images/search":
            return httpx.Response(200, json=_search_body(*(_result(f"https://x.example/{i}.png", None, str(i))
                                                           for i in range(5))))
        if request.url.path == "/3.png":
            return httpx.Response(200, content=_png())
        return httpx.Response(500)

    r = await _mock_retriever(handler)
    got = await r.search("cat")
    await r.close()
    assert got.status == "image_error"
    assert [part.split(":")[0] for part in got.error.split("; ")] == ["result 1", "result 2", "result 3"]


@pytest.mark.parametrize("status, headers, body, cls, retry_after", [
    (429, {"retry-after": "2"}, b"", RateLimited, 2.0),
    (429, {"x-ratelimit-remaining": "0, 900", "x-ratelimit-reset": "1, 1419704"}, b"", RateLimited, 1.0),
    (429, {"x-ratelimit-remaining": "1, 0", "x-ratelimit-reset": "1, 1419704"}, b"", RateLimited, MAX_RETRY_AFTER_S),
    (401, {}, b"", AuthError, None),
    (403, {}, b"", AuthError, None),
    (422, {}, json.dumps({"type": "ErrorResponse", "error": {"status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID",
                                                             "detail": "bad token"}}).encode(), AuthError, None),
    (422, {}, b'{"error": {"code": "VALIDATION", "detail": "bad q"}}', BadRequest, None),
    (400, {}, b"", BadRequest, None),
    (404, {}, b"", BadRequest, None),
    (500, {}, b"", TransientError, None),
    (502, {}, b"<html>bad gateway</html>", TransientError, None),
    (503, {"retry-after": "5"}, b"", TransientError, 5.0),
])
def test_classify_response(status, headers, body, cls, retry_after):
    err = classify_response(status, httpx.Headers(headers), body)
    assert type(err) is cls and err.status == status and err.retry_after == retry_after


def test_brave_reset_seconds():
    assert brave_reset_seconds({}) is None
    assert brave_reset_seconds({"x-ratelimit-reset": "1, 100"}) == 1.0
    assert brave_reset_seconds({"x-ratelimit-reset": "1, 100", "x-ratelimit-remaining": "0, 0"}) == 100.0


async def test_malformed_answers_and_timeouts_are_transient():
    async def run(handler) -> Exception:
        r = await _mock_retriever(handler)
        try:
            await r.search("cat")
        except Exception as e:  # noqa: BLE001 - the test inspects it
            return e
        finally:
            await r.close()
        raise AssertionError("no error")

    def timeout(request):
        raise httpx.ReadTimeout("slow", request=request)

    assert isinstance(await run(lambda req: httpx.Response(200, text="<html>")), TransientError)
    assert isinstance(await run(lambda req: httpx.Response(200, json={"unexpected": 1})), TransientError)
    assert isinstance(await run(timeout), TransientError)
    r = await _mock_retriever(lambda req: httpx.Response(200, json={"type": "images"}))
    assert (await r.search("cat")).status == "no_result"
    await r.close()


def test_retrieved_json():
    r = Retrieved(status="ok", query="q", data=_png(), url="u", source="s")
    assert r.sha256 and r.mime == "image/png"
    back = Retrieved.from_json(r.to_json())
    assert back == r and back.data is None
    assert r.to_json() == Retrieved.from_json(r.to_json()).to_json()
    with pytest.raises(ValueError):
        Retrieved.from_json('{"status": "maybe", "query": "q", "source": "s"}')
    with pytest.raises(ValueError):
        Retrieved.from_json('{"status": "ok"}')
    with pytest.raises(ValueError):
        Retrieved.from_json("[1]")
