"""Parameters per model family (o-series / gpt-5 / Gemini thinking), read from the model a spec
serves: what is sent, what is refused before the first call, what drop_unsupported_params drops;
Azure deployments (``serves``, the missing key); request sizes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.config import ModelSpec, RunSpec
from judgekit.errors import (FATAL_ERRORS, AuthError, ProviderError, RequestTooLarge, SpecError,
                             UnsupportedParameter)
from judgekit.providers import create_provider
from judgekit.providers.params import check_models, family_of, openai_params, unsupported
from judgekit.providers.sizes import GEMINI_INLINE_MAX, OPENAI_IMAGE_MAX, check_gemini_size, check_openai_size
from judgekit.sim import SimConfig, SimServer
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from offline_runners import SHIPPED, offline_spec  # noqa: E402

KEY_ENV = "JK_PARAMS_KEY"
FAKE_WORKER = Path(__file__).resolve().parents[1] / "local_core" / "fake_worker.py"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    from judgekit.providers import local as local_provider

    monkeypatch.setenv(KEY_ENV, "k-params-0123456")
    monkeypatch.setenv(local_provider.WORKER_ENV, f"{sys.executable} {FAKE_WORKER}")


def ms(model: str, provider: str = "openai", **kw) -> ModelSpec:
    if provider == "azure":
        kw.setdefault("base_url", "https://example.openai.azure.com")
    return ModelSpec(provider=provider, model=model, **kw)


# ------------------------------------------------------------------------------- families

@pytest.mark.parametrize("spec, family", [
    (ms("o3"), "openai_reasoning"), (ms("o4-mini-2025-04-16"), "openai_reasoning"), (ms("gpt-5"), "openai_reasoning"),
    (ms("gpt-5-mini"), "openai_reasoning"), (ms("openai/o1"), "openai_reasoning"), (ms("o3", "sim"), "openai_reasoning"),
    (ms("gpt-4o-2024-08-06"), "openai_chat"), (ms("gpt-4.1-mini"), "openai_chat"), (ms("gpt-3.5-turbo"), "openai_chat"),
    (ms("sim-judge", "sim"), ""), (ms("llama-3-70b"), ""), (ms("omni-moderation"), ""),
    # an Azure deployment's name says nothing: only `serves` does
    (ms("o3-prod", "azure"), ""), (ms("my-judge", "azure", serves="o3"), "openai_reasoning"),
    (ms("gpt-4o", "azure"), ""), (ms("x", "azure", serves="gpt-4o-mini"), "openai_chat"),
    (ms("gemini-2.5-pro", "gemini"), "gemini"),
])
def test_family_of_the_model_served(spec, family):
    assert family_of(spec) == family


def test_reasoning_models_get_max_completion_tokens_and_effort():
    p = GenParams(max_tokens=900, seed=3, reasoning_effort="low")
    assert openai_params("j", ms("o3"), p) == {"max_completion_tokens": 900, "seed": 3, "reasoning_effort": "low"}
    assert openai_params("j", ms("gpt-4o"), GenParams(max_tokens=900, temperature=0)) == {
        "max_tokens": 900, "temperature": 0}
    # an unknown family (a local server, the simulator's sim-*) gets what the spec says
    assert openai_params("j", ms("sim-judge", "sim"), GenParams(max_tokens=9, temperature=0.5, top_p=0.9,
                                                                 reasoning_effort="high")) == {
        "max_tokens": 9, "temperature": 0.5, "top_p": 0.9, "reasoning_effort": "high"}


efforts = st.none() | st.sampled_from(["minimal", "low", "medium", "high"])
gen_params = st.builds(GenParams, temperature=st.none() | st.floats(0, 2), max_tokens=st.none() | st.integers(1, 10**6),
                       top_p=st.none() | st.floats(0.01, 1), seed=st.none() | st.integers(0, 99),
                       reasoning_effort=efforts, thinking_budget=st.none() | st.integers(0, 30000))
specs = st.sampled_from([ms("o3"), ms("gpt-5-nano"), ms("j", "azure", serves="o4-mini"), ms("gpt-4o"),
                         ms("sim-judge", "sim"), ms("o1", "sim"), ms("j", "azure")])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(spec=specs, params=gen_params, drop=st.booleans())
def test_nothing_a_family_rejects_is_ever_sent(spec, params, drop):
    """Whatever the spec sets, the body either holds nothing the family rejects, or the call is
    refused before sending with an error that names the parameter (never silently changed)."""
    spec = spec.model_copy(update={"drop_unsupported_params": drop})
    bad = unsupported(spec, params)
    try:
        body = openai_params("j", spec, params)
    except UnsupportedParameter as e:
        assert bad and not drop and f"rejects {bad[0][0]} = " in str(e) and "drop_unsupported_params" in str(e)
        return
    assert drop or not bad
    if family_of(spec) == "openai_reasoning":
        assert "max_tokens" not in body and "top_p" not in body and body.get("temperature", 1) == 1
        assert body.get("max_completion_tokens") == params.max_tokens or params.max_tokens is None
    if family_of(spec) == "openai_chat":
        assert "reasoning_effort" not in body
    assert "thinking_budget" not in body
    kept = {k for k in ("temperature", "top_p", "seed", "reasoning_effort") if getattr(params, k) is not None}
    dropped = {name for name, _, _ in bad}
    assert {k for k in kept if k not in dropped} <= set(body)


def test_new_params_are_in_the_cache_key_only_when_set():
    from judgekit.cache.keys import cache_key

    def key(**kw):
        return cache_key(model="o3", provider="openai", base_url="", messages=(Message.user("hi"),),
                         params=GenParams(max_tokens=5, **kw), sample_index=0, prompt_hash="")

    assert GenParams(max_tokens=5).key_dict() == {"max_tokens": 5}  # old keys unchanged
    base, low, think = key(), key(reasoning_effort="low"), key(thinking_budget=0)
    assert len({base, low, think}) == 3


# ------------------------------------------------------------------- what goes over the wire

async def test_o3_and_gemini_requests_as_sent():
    from odd_server import OddServer, Reply, completion, gemini_reply

    async with OddServer(Reply(200, completion("ok"))) as server:
        prov = create_provider("j", ms("o3", base_url=server.url + "/v1", api_key_env=KEY_ENV,
                                       drop_unsupported_params=True))
        await prov.start()
        await prov.generate(ChatRequest("j", (Message.user("hi"),),
                                        GenParams(temperature=0, top_p=0.5, max_tokens=700, reasoning_effort="high")))
        await prov.close()
        body = json.loads(server.seen[-1][2])
    assert body["max_completion_tokens"] == 700 and body["reasoning_effort"] == "high"
    assert not {"max_tokens", "temperature", "top_p"} & set(body)

    async with OddServer(Reply(200, gemini_reply())) as server:
        prov = create_provider("g", ms("gemini-2.5-flash", "gemini", base_url=server.url, api_key_env=KEY_ENV))
        await prov.start()
        await prov.generate(ChatRequest("g", (Message.user("hi"),), GenParams(max_tokens=300, thinking_budget=512)))
        await prov.close()
        body = json.loads(server.seen[-1][2])
    # the SDK writes the field as thinking_budget (proto JSON takes either spelling)
    assert body["generationConfig"]["thinkingConfig"] in ({"thinkingBudget": 512}, {"thinking_budget": 512})
    assert body["generationConfig"]["maxOutputTokens"] == 300


async def test_a_request_parameter_the_model_rejects_stops_before_sending():
    """GuessBench's self-consistency sets its own temperature: checked when sent, and fatal (every
    call would fail alike), with nothing sent."""
    async with SimServer(SimConfig()) as s:
        prov = create_provider("j", ms("o3", base_url=s.base_url, api_key_env=KEY_ENV))
        await prov.start()
        with pytest.raises(UnsupportedParameter) as e:
            await prov.generate(ChatRequest("j", (Message.user("hi"),), GenParams(temperature=0.7, max_tokens=50)))
        await prov.close()
        assert s.stats()["requests"] == 0  # nothing reached the server
    assert isinstance(e.value, FATAL_ERRORS)
    assert prov.describe_error(e.value).startswith("model 'j': o3 (an o-series / gpt-5 reasoning model) rejects "
                                                   "temperature = 0.7")


# ---------------------------------------------------------------------------------- Azure

async def test_azure_deployment_serves_o3():
    async with SimServer(SimConfig(azure_deployments={"judge-prod": "o3"})) as s:
        params = dict(temperature=0, max_tokens=300)
        ok = ms("judge-prod", "azure", base_url=s.root_url, api_key_env=KEY_ENV, api_version="2024-10-21",
                serves="o3", drop_unsupported_params=True, params=params)
        prov = create_provider("j", ok)
        await prov.start()
        r = await prov.generate(ChatRequest("j", (Message.user("Tell me about the harbour."),), ok.params.gen_params()))
        await prov.close()
        assert r.text
        # without `serves` nothing is guessed from the name: max_tokens is sent, the API refuses it,
        # and the error stops the run naming the parameter and `serves`
        plain = ms("judge-prod", "azure", base_url=s.root_url, api_key_env=KEY_ENV, api_version="2024-10-21",
                   params={"max_tokens": 300})
        prov = create_provider("j", plain)
        await prov.start()
        with pytest.raises(UnsupportedParameter) as e:
            await prov.generate(ChatRequest("j", (Message.user("hi"),), plain.params.gen_params()))
        await prov.close()
    assert isinstance(e.value, FATAL_ERRORS) and "'max_tokens'" in str(e.value) and "serves" in str(e.value)


async def test_azure_without_a_key_names_the_env_var(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    prov = create_provider("j", ms("judge-prod", "azure"))
    with pytest.raises(AuthError) as e:
        await prov.start()
    assert "AZURE_OPENAI_API_KEY" in str(e.value) and e.value.status is None


def test_azure_without_a_key_is_one_line_exit_2(tmp_path, monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from oneline import assert_user_error, invoke

    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    sets = ["models.judge.provider=azure", "models.judge.model=judge-prod", "models.judge.serves=gpt-4o",
            "models.judge.base_url=http://127.0.0.1:9", "models.judge.sim={}"]
    args = [a for s in sets for a in ("--set", s)]
    assert_user_error(invoke("run", "quickstart", *args, "--cache", tmp_path / "c.duckdb", "--out", tmp_path / "o",
                             "--limit", "1", "--yes", env={"AZURE_OPENAI_API_KEY": None}),
                      "AZURE_OPENAI_API_KEY", "'judge'")


# ---------------------------------------------------------------- the shipped runners with o3

def _chat_alias(spec: RunSpec) -> str:
    """The runner's judge when it is an API chat model (offline: the simulator) that sets a
    temperature, else its first such candidate (GuessBench's extractor sends no parameters, as
    the authors' code)."""
    judge = spec.roles.judge
    if judge and spec.models[judge].provider == "sim" and spec.models[judge].params.temperature is not None:
        return judge
    return next(a for a in spec.roles.candidates if spec.models[a].provider == "sim")


def _with_o3(name: str, drop: bool) -> tuple[RunSpec, str]:
    spec, _ = offline_spec(name)
    alias = _chat_alias(spec)
    data = spec.model_dump(exclude_none=True)
    data["models"][alias].update(model="o3", drop_unsupported_params=drop)
    return RunSpec.model_validate(data), alias


@pytest.mark.parametrize("name", SHIPPED)
async def test_every_shipped_runner_with_an_o3_judge_is_refused_before_any_call(name, tmp_path):
    from judgekit.runner import RunOptions, estimate_spec, run_spec

    spec, alias = _with_o3(name, drop=False)
    temp = spec.models[alias].params.temperature
    assert temp is not None and temp != 1  # every shipped runner's judge or candidates set temperature 0
    opts = RunOptions(out_dir=tmp_path / "o", cache_path=tmp_path / "c.duckdb", limit=1, yes=True)
    for fn in (run_spec, estimate_spec):
        with pytest.raises(SpecError) as e:
            await fn(spec, opts)
        assert str(e.value).startswith(f"models.{alias}.params.temperature = ")
        assert "drop_unsupported_params" in str(e.value)
    assert not (tmp_path / "c.duckdb").exists()  # refused before the cache was even opened


@pytest.mark.parametrize("name", SHIPPED)
async def test_every_shipped_runner_with_an_o3_judge_works_with_drop_unsupported_params(name, tmp_path):
    from judgekit.runner import RunOptions, run_spec

    spec, alias = _with_o3(name, drop=True)
    notes = check_models(spec.models, [alias])
    assert any(n.startswith(f"model '{alias}': temperature = ") and "left out" in n for n in notes), notes
    out = await run_spec(spec, RunOptions(out_dir=tmp_path / "o", cache_path=tmp_path / "c.duckdb", limit=1,
                                          yes=True))
    assert out.exit_code == 0, out.message
    assert not sum(s.failures for s in out.stats.stages.values())
    import duckdb

    con = duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True)
    try:  # the o3 model answered (the simulator refuses max_tokens and temperature 0 for it)
        assert con.execute("select count(*) from responses where model = 'o3'").fetchone()[0] > 0
    finally:
        con.close()
    dropped = [{"kind": "dropped parameter", "note": n} for n in notes]
    assert [d for d in out.summary["deviations"] if d["kind"] == "dropped parameter"] == dropped
    saved = json.loads((tmp_path / "o" / "summary.json").read_text())["deviations"]
    assert [d for d in saved if d["kind"] == "dropped parameter"] == dropped


# -------------------------------------------------------------------------- request sizes

def _image(n: int) -> ImagePart:
    return ImagePart(b"\x89PNG\r\n\x1a\n" + b"\0" * (n - 8), width=10, height=10)


def test_request_sizes():
    check_openai_size((Message.user("x", _image(OPENAI_IMAGE_MAX)),))  # at the limit: fine
    with pytest.raises(RequestTooLarge, match=r"image 2 of the request is 20\.0 MB .*at most 20\.0 MB per image"):
        check_openai_size((Message.user("x", _image(10), _image(OPENAI_IMAGE_MAX + 1)),))
    with pytest.raises(RequestTooLarge, match=r"3 images are 54\.0 MB in all; .*at most 50\.0 MB of images"):
        check_openai_size((Message.user(*[_image(18_000_000)] * 3),))
    check_gemini_size((Message.user("x", _image(14_000_000)),))  # 18.7 MB base64: under 20
    with pytest.raises(RequestTooLarge, match=r"under 20\.0 MB"):
        check_gemini_size((Message.user("x", _image(GEMINI_INLINE_MAX * 3 // 4 + 3)),))


async def test_an_oversized_request_is_refused_before_sending():
    async with SimServer(SimConfig()) as s:
        prov = create_provider("c", ms("gpt-4o", "sim", sim={"url": s.base_url}))
        await prov.start()
        with pytest.raises(RequestTooLarge) as e:
            await prov.generate(ChatRequest("c", (Message.user("x", _image(OPENAI_IMAGE_MAX + 1)),), GenParams()))
        await prov.close()
        assert s.stats()["requests"] == 0
    assert not e.value.retryable and e.value.kind == "too_large" and not isinstance(e.value, FATAL_ERRORS)
    assert isinstance(e.value, ProviderError)


def test_an_o3_judge_through_the_cli_is_one_line_exit_2(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from oneline import assert_user_error, invoke

    common = ["quickstart", "--set", "models.judge.model=o3", "--cache", tmp_path / "c.duckdb", "--limit", "1"]
    for args in (["run", *common, "--out", tmp_path / "o", "--yes"], ["estimate", *common]):
        assert_user_error(invoke(*args), "models.judge.params.temperature = 0", "o3", "drop_unsupported_params = true")
    assert not (tmp_path / "c.duckdb").exists()
