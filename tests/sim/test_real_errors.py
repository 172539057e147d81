"""The simulator's real-API error shapes, through the official SDKs: quota, rate-limit headers,
x-should-retry, parameters a model family rejects, Azure's paths and errors, large bodies."""

from __future__ import annotations

import base64
import os
import re

import openai
import pytest
from google.genai import errors as genai_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from judgekit.sim import SimConfig, SimProcess
from judgekit.sim.api_errors import check_openai_params, is_reasoning_model
from judgekit.sim.protocol import _BadRequest

from sdk_clients import azure, gm, oa  # noqa: E402


def msgs(text: str = "hi") -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def by_type(details: list[dict]) -> dict[str, dict]:
    return {d["@type"].rsplit(".", 1)[-1]: d for d in details}


def go_seconds(text: str) -> float:
    """Seconds of a Go duration such as ``6m0s``, ``1h2m3s`` or ``120ms``."""
    total = 0.0
    for num, unit in re.findall(r"([\d.]+)(h|ms|m|s)", text):
        total += float(num) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
    return total


# ------------------------------------------------------------------------------- quota


@pytest.mark.parametrize("kind", ["insufficient_quota", "credit_balance_exhausted",
                                  "organization_spend_limit_exceeded", "project_spend_limit_exceeded"])
async def test_openai_quota_is_a_429_that_names_its_code(sim_factory, kind):
    s = await sim_factory(quota_exhausted_models={"gpt-4o": kind}, quota_free_requests=2)
    c = oa(s)
    for i in range(2):  # the quota lasts two requests
        await c.chat.completions.create(model="gpt-4o", messages=msgs(f"q{i}"), max_tokens=5)
    with pytest.raises(openai.RateLimitError) as ei:
        await c.chat.completions.create(model="gpt-4o", messages=msgs("q2"), max_tokens=5)
    assert ei.value.code == kind and ei.value.type == "insufficient_quota"
    assert "retry-after" not in ei.value.response.headers
    if kind == "insufficient_quota":
        assert ei.value.body["message"].startswith("You exceeded your current quota")
    await c.chat.completions.create(model="other", messages=msgs("q3"), max_tokens=5)  # other models work
    st = s.stats()
    assert st["quota_exhausted"] == 1 and st["rate_limited"] == 0 and st["served"] == 3
    s.reset()  # a reset refills the quota
    await c.chat.completions.create(model="gpt-4o", messages=msgs("q4"), max_tokens=5)


async def test_openai_sdk_retries_quota_unless_told_not_to(sim_factory):
    s = await sim_factory(quota_exhausted_models={"gpt-4o": "insufficient_quota"})
    with pytest.raises(openai.RateLimitError):
        await oa(s, max_retries=1).chat.completions.create(model="gpt-4o", messages=msgs(), max_tokens=5)
    assert s.stats()["requests"] == 2  # the SDK retried a 429 that can never succeed
    s2 = await sim_factory(quota_exhausted_models={"gpt-4o": "insufficient_quota"}, should_retry_false=["quota"])
    with pytest.raises(openai.RateLimitError) as ei:
        await oa(s2, max_retries=3).chat.completions.create(model="gpt-4o", messages=msgs(), max_tokens=5)
    assert ei.value.response.headers["x-should-retry"] == "false"
    assert s2.stats()["requests"] == 1


@pytest.mark.parametrize("kind, quota_id", [
    ("free_tier_daily", "GenerateRequestsPerDayPerProjectPerModel-FreeTier"),
    ("daily", "GenerateRequestsPerDayPerProjectPerModel"),
    ("insufficient_quota", "GenerateRequestsPerDayPerProjectPerModel"),
])
async def test_gemini_quota_names_a_per_day_metric_and_still_says_retry(sim_factory, kind, quota_id):
    s = await sim_factory(quota_exhausted_models={"gemini-2.5-pro": kind}, quota_free_requests=1)
    g = gm(s)
    await g.aio.models.generate_content(model="gemini-2.5-pro", contents="one")
    with pytest.raises(genai_errors.ClientError) as ei:
        await g.aio.models.generate_content(model="gemini-2.5-pro", contents="two")
    e = ei.value
    assert e.code == 429 and e.status == "RESOURCE_EXHAUSTED"
    assert "retry-after" not in e.response.headers
    d = by_type(e.details["error"]["details"])
    violation = d["QuotaFailure"]["violations"][0]
    assert violation["quotaId"] == quota_id and "PerDay" in violation["quotaId"]
    assert violation["quotaDimensions"]["model"] == "gemini-2.5-pro" and violation["quotaValue"] == "1"
    assert d["RetryInfo"]["retryDelay"] == "37s"  # tens of seconds, though the quota resets at midnight
    assert s.stats()["quota_exhausted"] == 1


# ------------------------------------------------------------------------------- rate limits


async def test_gemini_429_carries_only_retry_info(sim_factory):
    s = await sim_factory(rpm=60)
    g = gm(s)
    await g.aio.models.generate_content(model="gemini-x", contents="a")
    with pytest.raises(genai_errors.ClientError) as ei:
        await g.aio.models.generate_content(model="gemini-x", contents="b")
    h = ei.value.response.headers
    assert "retry-after" not in h and "retry-after-ms" not in h
    assert not [k for k in h if k.lower().startswith("x-ratelimit")]
    d = by_type(ei.value.details["error"]["details"])
    assert list(d) == ["QuotaFailure", "Help", "RetryInfo"]
    assert d["QuotaFailure"]["violations"][0]["quotaId"] == "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    assert "You exceeded your current quota" in ei.value.message  # same words as a spent quota
    # the old behaviour, on request
    s2 = await sim_factory(rpm=60, gemini_retry_after=True, gemini_free_tier=False)
    g2 = gm(s2)
    await g2.aio.models.generate_content(model="gemini-x", contents="a")
    with pytest.raises(genai_errors.ClientError) as ei:
        await g2.aio.models.generate_content(model="gemini-x", contents="b")
    assert ei.value.response.headers["retry-after"] == "1"
    quota_id = by_type(ei.value.details["error"]["details"])["QuotaFailure"]["violations"][0]["quotaId"]
    assert quota_id == "GenerateRequestsPerMinutePerProjectPerModel"


async def test_openai_429_without_retry_after_and_long_resets(sim_factory):
    s = await sim_factory(rpm=60, openai_retry_after=False, reset_header_scale=360)
    c = oa(s)
    raw = await c.chat.completions.with_raw_response.create(model="m", messages=msgs(), max_tokens=5)
    assert raw.headers["x-ratelimit-reset-requests"] == "6m0s"  # a 1 s refill, reported as the docs' 6m0s
    with pytest.raises(openai.RateLimitError) as ei:
        await c.chat.completions.create(model="m", messages=msgs("again"), max_tokens=5)
    h = ei.value.response.headers
    assert "retry-after" not in h and "retry-after-ms" not in h
    assert 300 < go_seconds(h["x-ratelimit-reset-requests"]) <= 360
    assert h["x-ratelimit-remaining-requests"] == "0"
    assert ei.value.code == "rate_limit_exceeded"
    assert "Please try again in" in ei.value.message

    s2 = await sim_factory(rpm=60, tpm=100_000, reset_requests_s=3723, reset_tokens_s=0.02)
    raw = await oa(s2).chat.completions.with_raw_response.create(model="m", messages=msgs(), max_tokens=5)
    assert raw.headers["x-ratelimit-reset-requests"] == "1h2m3s"
    assert raw.headers["x-ratelimit-reset-tokens"] == "20ms"


@pytest.mark.parametrize("option, settings_", [
    ("rate_limit", {"rpm": 60}),
    ("server_error", {"error_rate": 1.0}),
])
async def test_x_should_retry_false_is_obeyed_by_the_sdk(sim_factory, option, settings_):
    s = await sim_factory(should_retry_false=[option], **settings_)
    c = oa(s, max_retries=3)
    if option == "rate_limit":
        await c.chat.completions.create(model="m", messages=msgs(), max_tokens=5)
    with pytest.raises(openai.APIStatusError) as ei:
        await c.chat.completions.create(model="m", messages=msgs("second"), max_tokens=5)
    assert ei.value.response.headers["x-should-retry"] == "false"
    assert s.stats()["requests"] == (2 if option == "rate_limit" else 1)


# ------------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("model", ["o1", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini-2025-08-07"])
async def test_reasoning_families_reject_what_the_real_api_rejects(sim_factory, model):
    s = await sim_factory()
    c = oa(s)
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model=model, messages=msgs(), max_tokens=50)
    e = ei.value
    assert (e.code, e.param, e.type) == ("unsupported_parameter", "max_tokens", "invalid_request_error")
    assert e.message.endswith("Use 'max_completion_tokens' instead.")
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model=model, messages=msgs(), temperature=0, max_completion_tokens=50)
    assert (ei.value.code, ei.value.param) == ("unsupported_value", "temperature")
    assert "does not support 0 with this model. Only the default (1) value is supported." in ei.value.message
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model=model, messages=msgs(), top_p=0.9, max_completion_tokens=50)
    assert (ei.value.code, ei.value.param) == ("unsupported_parameter", "top_p")
    r = await c.chat.completions.create(model=model, messages=msgs(), temperature=1, max_completion_tokens=50,
                                        reasoning_effort="low")
    assert r.choices[0].message.content
    st = s.stats()
    assert st["unsupported_params"] == {"max_tokens": 1, "temperature": 1, "top_p": 1}
    assert st["bad_requests"] == 3 and st["served"] == 1


async def test_chat_models_reject_reasoning_effort_and_sim_names_take_anything(sim_factory):
    s = await sim_factory()
    c = oa(s)
    with pytest.raises(openai.BadRequestError) as ei:
        await c.chat.completions.create(model="gpt-4o-mini", messages=msgs(), reasoning_effort="low")
    assert ei.value.param == "reasoning_effort"
    await c.chat.completions.create(model="gpt-4o-mini", messages=msgs(), temperature=0, max_tokens=5)
    await c.chat.completions.create(model="sim-judge", messages=msgs(), temperature=0, top_p=0.5, max_tokens=5)
    off = await sim_factory(model_param_rules=False)
    await oa(off).chat.completions.create(model="o3", messages=msgs(), temperature=0, max_tokens=5)


_NOT_REASONING = hs.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=20).filter(
    lambda m: not re.match(r"(?i)^(o1|o3|o4|gpt-5)", m))


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.filter_too_much])
@given(prefix=hs.sampled_from(["o1", "o3", "o4-mini", "gpt-5", "O3", "gpt-5.1"]),
       suffix=hs.sampled_from(["", "-mini", "-2025-04-16", "-pro", ".2"]),
       other=_NOT_REASONING,
       temperature=hs.one_of(hs.none(), hs.floats(0, 2)), max_tokens=hs.one_of(hs.none(), hs.integers(1, 9999)))
def test_parameter_guard_property(prefix, suffix, other, temperature, max_tokens):
    """A reasoning-family name always refuses max_tokens and temperature != 1; a name outside the
    families never refuses them."""
    name = prefix + suffix
    assert is_reasoning_model(name) and not is_reasoning_model(other)
    body = {"max_tokens": max_tokens, "temperature": temperature}
    check_openai_params(body, other)  # never raises
    bad = max_tokens is not None or (temperature is not None and temperature != 1)
    try:
        check_openai_params(body, name)
        refused = None
    except _BadRequest as e:
        refused = e.param
    assert (refused is not None) == bad
    if max_tokens is not None:
        assert refused == "max_tokens"


# ------------------------------------------------------------------------------- Azure


async def test_azure_deployment_path_and_api_key(sim_factory):
    s = await sim_factory(api_keys=["az"], azure_deployments={"my-dep": "gpt-4o-mini", "reasoner": "o3"})
    r = await azure(s, key="az").chat.completions.create(model="my-dep", messages=msgs(), max_tokens=20)
    assert r.model == "gpt-4o-mini" and r.choices[0].message.content
    assert r.model_extra["prompt_filter_results"][0]["content_filter_results"]["hate"]["filtered"] is False
    r = await azure(s, key="az", deployment="my-dep").chat.completions.create(model="ignored", messages=msgs("x"))
    assert r.model == "gpt-4o-mini"
    with pytest.raises(openai.AuthenticationError) as ei:
        await azure(s, key="wrong").chat.completions.create(model="my-dep", messages=msgs())
    assert ei.value.body["code"] == "401" and "type" not in ei.value.body
    with pytest.raises(openai.NotFoundError) as ei:
        await azure(s, key="az").chat.completions.create(model="nope", messages=msgs())
    assert ei.value.code == "DeploymentNotFound"
    with pytest.raises(openai.BadRequestError) as ei:  # the rules follow the model, not the deployment name
        await azure(s, key="az").chat.completions.create(model="reasoner", messages=msgs(), temperature=0)
    assert ei.value.param == "temperature"
    st = s.stats()
    assert st["served_by_api"] == {"azure": 2} and st["served_by_model"] == {"gpt-4o-mini": 2}
    assert st["auth_failures"] == 1 and st["not_found"] == 1 and st["unsupported_params"] == {"temperature": 1}


async def test_azure_content_filter_and_rate_limit(sim_factory):
    s = await sim_factory(reply_fault_models={"gpt-4o": "content_filter"}, rpm=60)
    c = azure(s)
    r = await c.chat.completions.create(model="gpt-4o", messages=msgs(), max_tokens=20)
    ch = r.choices[0]
    assert ch.finish_reason == "content_filter" and ch.message.content is None
    assert any(v["filtered"] for v in ch.model_extra["content_filter_results"].values())
    with pytest.raises(openai.RateLimitError) as ei:
        await c.chat.completions.create(model="gpt-4o", messages=msgs("again"), max_tokens=20)
    assert ei.value.body["code"] == "429" and "Please retry after 1 seconds" in ei.value.body["message"]
    assert ei.value.response.headers["retry-after"] == "1"


# ------------------------------------------------------------------------------- body size


async def test_bodies_over_one_mebibyte_are_read(sim_factory):
    s = await sim_factory()
    blob = base64.b64encode(os.urandom(3 << 20)).decode()  # 4 MiB of base64, like a large photo
    content = [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + blob}},
               {"type": "text", "text": "Describe it."}]
    r = await oa(s).chat.completions.create(model="m", messages=[{"role": "user", "content": content}],
                                            max_tokens=10)
    assert r.choices[0].message.content
    small = await sim_factory(max_body_mb=1)
    with pytest.raises(openai.APIStatusError) as ei:
        await oa(small).chat.completions.create(model="m", messages=[{"role": "user", "content": content}])
    assert ei.value.status_code == 413


# ------------------------------------------------------------------------------- subprocess


def test_real_shape_options_travel_to_a_subprocess():
    cfg = SimConfig(quota_exhausted_models={"gpt-4o": "credit_balance_exhausted"},
                    reply_fault_models={"judge": "refusal"}, reasoning_tokens={"judge": 7},
                    azure_deployments={"d": "judge"}, reset_requests_s=60, should_retry_false=["quota"])
    assert SimConfig.model_validate_json(cfg.model_dump_json()) == cfg
    with SimProcess(cfg) as p:
        c = openai.OpenAI(base_url=p.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError) as ei:
            c.chat.completions.create(model="gpt-4o", messages=msgs())
        assert ei.value.code == "credit_balance_exhausted"
        r = c.chat.completions.create(model="judge", messages=msgs(), max_tokens=50)
        assert r.choices[0].message.refusal and r.choices[0].message.content is None
        assert r.usage.completion_tokens_details.reasoning_tokens == 7
        st = p.stats()
        assert st["quota_exhausted"] == 1 and st["served_by_fault"] == {"refusal": 1}
