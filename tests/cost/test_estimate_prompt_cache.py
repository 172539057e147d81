"""The estimate plans Claude's prompt-cache writes as the API bills them: a request's longest
marked prefix that reaches the model's minimum (4,096 tokens for Opus 4.5 and Haiku 4.5, 2,048 for
Haiku 3 and 3.5, 1,024 for the others) is a write at 1.25x input in the bound of every call, and in
the expected figure a write in the first call of an alias to carry it and a read (0.1x) in the
others; a shorter prefix costs nothing more.  The simulator agrees: over HTTP, through the
anthropic provider, it writes a request's prefix exactly when the estimate plans a write."""

from __future__ import annotations

import io

import pytest

from judgekit.config import ModelSpec
from judgekit.cost.estimate import EstimateBuilder, price_lookup_for
from judgekit.cost.prices import PriceOverride
from judgekit.cost.tokens import RequestTokens, count_request
from judgekit.providers.anthropic_wire import marked_prefixes, prompt_cache_min_tokens, written_prefix
from judgekit.types import ChatRequest, GenParams, ImagePart, Message

CLAUDE = PriceOverride(input_per_mtok=3.0, output_per_mtok=15.0)
LOOKUP = price_lookup_for({"judge": CLAUDE})


def test_the_bound_writes_every_prefix_and_the_expectation_reads_after_the_first():
    b = EstimateBuilder()
    for item in range(4):  # 5,000 input tokens, 2,000 of them a marked prefix shared by all four
        b.add_call("pairwise", "judge", "anthropic", "my-claude", RequestTokens(5_000, False), 400, False, 100,
                   cache_prefix_tokens=2_000, cache_prefix=("same",))
    b.add_call("pairwise", "judge", "anthropic", "my-claude", RequestTokens(5_000, False), 400, False, 100,
               copies=3, cache_prefix_tokens=2_000, cache_prefix=("other",))
    b.add_call("pairwise", "judge", "anthropic", "my-claude", RequestTokens(5_000, False), 400, False, 100)
    line = b.finish(LOOKUP).lines[0]
    write, read, plain = 2_000 * 3.75, 2_000 * 0.3, 3_000 * 3.0
    assert line.calls_to_make == 8
    assert line.cost_max_usd == pytest.approx((7 * (plain + write + 400 * 15) + 5_000 * 3 + 400 * 15) / 1e6)
    # two prefixes: each written once and read by the other calls that carry it
    assert line.cost_expected_usd == pytest.approx(
        (2 * (plain + write) + 5 * (plain + read) + 5_000 * 3 + 8 * 100 * 15) / 1e6)
    # a cached call does not write: the first call to make does
    b = EstimateBuilder()
    b.add_call("s", "judge", "anthropic", "m", RequestTokens(5_000, True), 400, True, 100,
               cache_prefix_tokens=2_000, cache_prefix=("p",))
    b.add_call("s", "judge", "anthropic", "m", RequestTokens(5_000, True), 400, False, 100,
               cache_prefix_tokens=2_000, cache_prefix=("p",))
    assert b.finish(LOOKUP).lines[0].cost_expected_usd == pytest.approx((plain + write + 100 * 15) / 1e6)


def png(size: tuple[int, int]) -> ImagePart:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, (20, 40, 60)).save(buf, "PNG")
    return ImagePart(buf.getvalue())


SYSTEM = "You judge answers to creative writing tasks with care, citing the rubric line by line. " * 110
IMAGE = png((1092, 1092))  # 1,590 tokens by Claude's rule


def request(question: str) -> tuple[Message, ...]:
    return (Message.system(SYSTEM), Message.user(IMAGE, question, "Assistant A: ...", "Assistant B: ..."))


def count(model: str):
    return lambda ms: count_request("anthropic", model, ms, GenParams()).input


def test_marked_prefixes_follow_the_marks():
    system, image = marked_prefixes(request("Which is better?"))
    assert system == (Message.system(SYSTEM),)
    assert image[:1] == system and image[1].parts == (IMAGE,)  # the first user turn cut after its image
    assert marked_prefixes((Message.user("no image, no system"),)) == []
    assert len(marked_prefixes((Message.user("text first", IMAGE),))) == 0  # no text after the image


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-3-5-haiku-20241022", "claude-haiku-4-5",
                                   "claude-opus-4-5", "claude-3-5-sonnet-20241022"])
def test_a_write_is_planned_only_from_the_models_minimum(model):
    tokens, ident = written_prefix(model, request("Which is better?"), count(model))
    system_only = count(model)((Message.system(SYSTEM),))
    longest = count(model)(marked_prefixes(request("Q"))[-1])
    assert 1_024 < system_only < 2_048 < longest < 4_096  # the sizes this test relies on
    if prompt_cache_min_tokens(model) == 4_096:
        assert (tokens, ident) == (0, ())
    else:
        assert tokens == longest
        assert written_prefix(model, request("Another question"), count(model))[1] == ident  # shared
    # under a minimum of 2,048 the system prompt alone would be written
    short = (Message.system(SYSTEM), Message.user("Which is better?"))
    assert written_prefix(model, short, count(model))[0] == (system_only if prompt_cache_min_tokens(model) == 1_024
                                                            else 0)


MODELS = ["claude-sonnet-4-5", "claude-3-5-haiku-20241022", "claude-haiku-4-5", "claude-opus-4-5"]


async def test_the_simulator_writes_what_the_estimate_plans(tmp_path, monkeypatch):
    """Through the anthropic provider over HTTP: each model's first request writes exactly when
    :func:`written_prefix` plans a write, and a second request sharing the prefix reads it."""
    from judgekit.providers import create_provider
    from judgekit.sim import SimConfig, SimServer

    async with SimServer(SimConfig(seed=5, models=MODELS)) as server:
        for model in MODELS:
            prov = create_provider("j", ModelSpec(provider="anthropic", model=model, base_url=server.root_url,
                                                  params={"max_tokens": 100}))
            await prov.start()
            try:
                first = await prov.generate(ChatRequest("j", request("Which is better?"), GenParams(max_tokens=100)))
                second = await prov.generate(ChatRequest("j", request("And now?"), GenParams(max_tokens=100)))
            finally:
                await prov.close()
            planned = written_prefix(model, request("Which is better?"), count(model))[0]
            assert (first.usage.cache_write_tokens > 0) == (planned > 0), model
            assert (second.usage.cached_input_tokens > 0) == (planned > 0), model
            if planned:  # the simulator's own count (4 characters a token) is near judgekit's
                assert first.usage.cache_write_tokens == pytest.approx(planned, rel=0.25)


@pytest.mark.parametrize("setting, words", [
    ("models.judge.price.cache_write_1h_per_mtok=-1", ["models.judge.price.cache_write_1h_per_mtok", "-1"]),
    ("models.judge.price.cache_write_per_mtok='2'", ["models.judge.price.cache_write_per_mtok"]),
    ("models.judge.price.cache_write_5m_per_mtok=1", ["models.judge.price.cache_write_5m_per_mtok"]),
])
def test_a_bad_cache_price_is_one_line(setting, words, tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from oneline import assert_user_error, invoke

    r = invoke("estimate", "quickstart", "--set", "models.judge.price={input_per_mtok = 3, output_per_mtok = 15}",
               "--set", setting, "--cache", tmp_path / "c.duckdb")
    assert_user_error(r, *words)


async def test_the_runs_estimate_plans_writes_only_past_the_minimum(tmp_path, monkeypatch):
    """The quickstart with a Claude judge: its marked prefixes (the items' drawings) are under
    Claude 3.5 Sonnet's 1,024 tokens, so the estimate is the same with the marks on and off (the
    simulator writes none of them either: perf/override_prices.py); with a minimum of 50 tokens
    the bound with the marks on is dearer, by the writes."""
    from judgekit.config import load_spec
    from judgekit.providers import anthropic_wire
    from judgekit.runner import RunOptions, estimate_spec

    async def judge_line(prompt_cache: bool, name: str):
        d = load_spec("quickstart").model_dump(exclude_none=True)
        old = d["models"]["judge"]
        d["models"]["judge"] = {"provider": "anthropic", "model": "claude-3-5-sonnet-20241022",
                                "base_url": "http://127.0.0.1:9", "params": old["params"],
                                "prompt_cache": prompt_cache}
        d["roles"]["judges"] = ["judge"]
        spec = type(load_spec("quickstart")).model_validate(d)
        out = await estimate_spec(spec, RunOptions(out_dir=tmp_path / name, cache_path=tmp_path / f"{name}.duckdb"))
        lines = [ln for ln in out.estimate.lines if ln.alias == "judge"]
        return sum(ln.cost_max_usd for ln in lines), sum(ln.cost_expected_usd for ln in lines)

    on, off = await judge_line(True, "on"), await judge_line(False, "off")
    assert on == off
    monkeypatch.setattr(anthropic_wire, "prompt_cache_min_tokens", lambda model: 50)
    small_on, small_off = await judge_line(True, "on50"), await judge_line(False, "off50")
    assert small_off == off and small_on[0] > off[0]
    assert small_on[1] < small_on[0]  # the expectation reads what the bound writes again
