"""Simulated judges that differ (SimConfig.judge_styles, judgekit/sim/judge_style.py): each style
knob changes verdicts and scores the way its docstring says, the default style changes nothing
(replies pinned from before the styles existed), and the styles reach the served replies and the
simulated model's cache identity."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from judge_parsing import parse_verdict, parse_vfs
from judgekit.judging.behaviour import pairwise_behaviour
from judgekit.sim import SimConfig
from judgekit.sim.judge_style import DEFAULT_STYLE, STRONG, JudgeStyle, pairwise_logit, verdict_band
from judgekit.benchmarks.mmie.sim import score_centre
from judgekit.sim.replies import VERDICTS, answer_quality, make_reply, verdict_probabilities

_SCORE = {"A>>B": 2, "A>B": 1, "A=B": 0, "B>A": -1, "B>>A": -2}


def digest(*parts: object) -> bytes:
    return hashlib.sha256(repr(parts).encode()).digest()


def judge(a: str, b: str, vfs: bool = False) -> str:
    tail = "Response A Visual Factuality Score: X/10" if vfs else "Final Verdict is: [[VERDICT]]"
    return ("Use the tags [ASSISTANT A] and [ASSISTANT B] in your evaluation.\n"
            f"[ASSISTANT A]\n{a}\n[END ASSISTANT A]\n[ASSISTANT B]\n{b}\n[END ASSISTANT B]\n{tail}")


def _fingerprint(r) -> str:
    return hashlib.sha256(repr((r.text, r.kind, r.finish_reason, r.completion_tokens, r.garbage)).encode()).hexdigest()[:16]


# answers close in quality (the candidates of the sample runners against each other), so that
# verdicts are not all saturated and a bias has room to show
_PAIRS = [(make_reply(f"topic {i}", digest("a", i), quality=0.15).text,
           make_reply(f"topic {i}", digest("b", i), quality=0.2).text) for i in range(150)]


def _behaviour(style: JudgeStyle | None) -> dict:
    """pairwise_behaviour of a judge over _PAIRS in both orders, from the second answer's point of
    view (order 0: it is Assistant B; order 1: Assistant A), as the pipelines record it."""
    rows = []
    for i, (base, cand) in enumerate(_PAIRS):
        v0 = parse_verdict(make_reply(judge(base, cand), digest("f", i), style=style).text)
        v1 = parse_verdict(make_reply(judge(cand, base), digest("s", i), style=style).text)
        rows.append({"item": i, "order": 0, "score": -_SCORE[v0], "length_diff": len(cand) - len(base)})
        rows.append({"item": i, "order": 1, "score": _SCORE[v1], "length_diff": len(cand) - len(base)})
    return pairwise_behaviour(rows)


# --------------------------------------------------------------------------- the default is unchanged


def test_default_replies_are_byte_identical_to_before_the_styles():
    """Fingerprints of replies computed with the simulator before judge styles existed (commit
    77228e0): no style, and the default style given explicitly, give the same bytes."""
    rich = make_reply("topic", digest("rich"), quality=0.8).text
    thin = make_reply("topic", digest("thin"), quality=0.2).text
    mmie = "### Question\nWhat next?\n### Answer\n" + thin[:400] + "\nImage-1: a red circle\n### Feedback\n### Score\n"
    for style in (None, JudgeStyle(), JudgeStyle(first_slot_bias=0.0, noise=1.0, length_weight=0.0, tie_width=0.5)):
        cases = {
            "answer": make_reply("Describe a garden.", digest("a"), quality=0.4, style=style),
            "pairwise": make_reply(judge(rich, thin), digest("p"), style=style),
            "pairwise_swapped": make_reply(judge(thin, rich), digest("p2"), max_tokens=4096, style=style),
            "vfs": make_reply(judge(rich, thin, vfs=True), digest("v"), style=style),
            "mmie_score": make_reply(mmie, digest("m"), quality=0.7, style=style),
            "garbage": make_reply(judge(rich, thin), digest("g"), garbage=True, style=style),
        }
        assert {k: _fingerprint(r) for k, r in cases.items()} == {
            "answer": "e89dae7c8f034782", "pairwise": "563529937b6bf2a2", "pairwise_swapped": "cdb652282bf46db9",
            "vfs": "08ae731001c1e129", "mmie_score": "4aaf28f0399be454", "garbage": "66b3b70d32b26164",
        }
        many = {
            "pairwise": "".join(make_reply(judge(rich, thin), digest("many", i), style=style).text for i in range(200)),
            "vfs": "".join(make_reply(judge(thin, rich, vfs=True), digest("manyv", i), style=style).text
                           for i in range(200)),
            "mmie": "".join(make_reply(mmie, digest("manym", i), quality=0.3, style=style).text for i in range(200)),
        }
        assert {k: hashlib.sha256(t.encode()).hexdigest()[:16] for k, t in many.items()} == {
            "pairwise": "dda1e550977f8728", "vfs": "5cd3dbbe551adf42", "mmie": "a27c8da595799cb9"}


def test_default_probabilities_are_the_ordered_logit_of_before():
    """The usual judge: slope 2.5 on the quality difference, thresholds +-0.5 and +-2 (worked out
    here from the formula, not from the module)."""
    s = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    for qa, qb in ((5.0, 5.0), (5.3, 4.9), (4.1, 5.6)):
        z = 2.5 * (qa - qb)
        want = (s(z - 2), s(z - 0.5) - s(z - 2), s(z + 0.5) - s(z - 0.5), s(z + 2) - s(z + 0.5), 1 - s(z + 2))
        assert verdict_probabilities(qa, qb) == pytest.approx(want, abs=1e-12)
        assert verdict_probabilities(qa, qb, DEFAULT_STYLE) == verdict_probabilities(qa, qb)


# --------------------------------------------------------------------------- position bias, noise


def test_a_strong_first_slot_bias_prefers_the_first_slot_and_dual_evaluation_sees_it():
    plain = _behaviour(None)
    biased = _behaviour(JudgeStyle(first_slot_bias=1.5))
    assert 0.4 <= plain["first_slot_preference"] <= 0.6
    assert biased["first_slot_preference"] > 0.75
    # the bias flips the second order's verdicts: fewer items agree after the swap
    assert biased["swap_consistency"] < plain["swap_consistency"]


def test_a_bias_toward_the_second_slot_is_a_negative_first_slot_bias():
    assert _behaviour(JudgeStyle(first_slot_bias=-1.5))["first_slot_preference"] < 0.25


def test_noise_zero_without_bias_is_swap_consistent_on_the_answers_quality():
    b = _behaviour(JudgeStyle(noise=0))
    assert b["items_both_orders"] == len(_PAIRS)
    assert b["swap_consistency"] == 1.0 and b["swap_exact"] == 1.0
    # and every verdict is the band of the quality difference (the same for any digest)
    for i, (x, y) in enumerate(_PAIRS[:20]):
        want = VERDICTS[verdict_band(2.5 * (answer_quality(x) - answer_quality(y)))]
        for salt in range(3):
            assert parse_verdict(make_reply(judge(x, y), digest("n", i, salt), style=JudgeStyle(noise=0)).text) == want


def test_less_noise_agrees_more_with_the_noiseless_verdict():
    truth = [verdict_band(2.5 * (answer_quality(a) - answer_quality(b))) for a, b in _PAIRS]

    def agreement(noise: float) -> float:
        style = JudgeStyle(noise=noise)
        got = [VERDICTS.index(parse_verdict(make_reply(judge(a, b), digest("q", i), style=style).text))
               for i, (a, b) in enumerate(_PAIRS)]
        return sum(g == t for g, t in zip(got, truth)) / len(truth)

    quiet, usual, loud = agreement(0.2), agreement(1.0), agreement(2.5)
    assert quiet > usual > loud and quiet > 0.7


@settings(max_examples=80, deadline=None)
@given(z=st.floats(-10, 10, allow_nan=False), tie=st.floats(0, 1.99))
def test_the_noiseless_band_is_symmetric(z, tie):
    assert verdict_band(-z, tie) == 4 - verdict_band(z, tie)
    assert (verdict_band(z, tie) == 2) == (abs(z) <= tie)
    assert (verdict_band(z, tie) in (0, 4)) == (abs(z) > STRONG)


@settings(max_examples=80, deadline=None)
@given(qa=st.floats(0, 8), qb=st.floats(0, 8), bias=st.floats(-3, 3), noise=st.floats(0, 3),
       tie=st.floats(0, 1.9), wa=st.integers(0, 2000), wb=st.integers(0, 2000), lw=st.floats(-2, 2))
def test_probabilities_are_a_distribution_and_the_bias_moves_them_toward_a(qa, qb, bias, noise, tie, wa, wb, lw):
    style = JudgeStyle(first_slot_bias=bias, noise=noise, tie_width=tie, length_weight=lw)
    p = verdict_probabilities(qa, qb, style, wa, wb)
    assert len(p) == 5 and all(x >= -1e-12 for x in p) and sum(p) == pytest.approx(1.0)
    more = verdict_probabilities(qa, qb, style.model_copy(update={"first_slot_bias": bias + 0.5}), wa, wb)
    # P(A wins) and P(A wins or tie) never fall when the bias toward A grows
    assert more[0] + more[1] >= p[0] + p[1] - 1e-12
    assert more[0] + more[1] + more[2] >= p[0] + p[1] + p[2] - 1e-12
    if noise == 0:
        assert p[verdict_band(pairwise_logit(qa, qb, style, wa, wb), tie)] == 1.0


def test_a_wider_tie_band_calls_more_ties():
    for z_gap in (0.0, 0.1, 0.3):
        narrow = verdict_probabilities(5.0 + z_gap, 5.0, JudgeStyle(tie_width=0.2))[2]
        usual = verdict_probabilities(5.0 + z_gap, 5.0)[2]
        wide = verdict_probabilities(5.0 + z_gap, 5.0, JudgeStyle(tie_width=1.2))[2]
        assert narrow < usual < wide


def test_length_weight_favours_the_longer_answer_beyond_its_quality():
    # equal quality, A twice as long: ln(1 + 200) - ln(1 + 100) ~ 0.688 logits per unit weight
    p = verdict_probabilities(5.0, 5.0, JudgeStyle(length_weight=1.0), 200, 100)
    q = verdict_probabilities(5.0, 5.0, JudgeStyle(length_weight=1.0), 100, 200)
    assert p[0] + p[1] > 0.5 > p[3] + p[4] and p == pytest.approx(q[::-1])
    assert pairwise_logit(5.0, 5.0, JudgeStyle(length_weight=1.0), 200, 100) == pytest.approx(math.log(201 / 101))
    # through the replies: the length correlation of the verdicts grows with the weight
    plain = _behaviour(None)["length_correlation"]
    wordy = _behaviour(JudgeStyle(length_weight=3.0))["length_correlation"]
    assert wordy > plain


# --------------------------------------------------------------------------- scores


def _vfs(style: JudgeStyle | None, a: str, b: str, n: int = 60) -> tuple[float, float, set]:
    got = [parse_vfs(make_reply(judge(a, b, vfs=True), digest("vfs", i), style=style).text) for i in range(n)]
    return sum(x for x, _ in got) / n, sum(y for _, y in got) / n, set(got)


def test_vfs_position_bias_leniency_and_noise():
    a, b = _PAIRS[0]
    ua, ub, _ = _vfs(None, a, b)
    ba, bb, _ = _vfs(JudgeStyle(first_slot_bias=2.0), a, b)
    assert ba - ua == pytest.approx(2.0, abs=0.3) and bb == pytest.approx(ub, abs=0.05)
    la, lb, _ = _vfs(JudgeStyle(score_offset=-1.5), a, b)
    assert la - ua == pytest.approx(-1.5, abs=0.3) and lb - ub == pytest.approx(-1.5, abs=0.3)
    # noiseless: the score is fixed; only its spelling (one decimal or a whole number) varies
    _, _, shown = _vfs(JudgeStyle(noise=0), a, b)
    centre = 10 / (1 + math.exp(-1.2 * (answer_quality(a) - 5.0)))
    assert {x for x, _ in shown} <= {round(centre, 1), float(round(centre))}


def test_mmie_scores_follow_the_scorers_noise_and_leniency():
    answer = " ".join(f"word{i % 37}" for i in range(60)) + "\nImage-1: a red circle"
    prompt = f"### Question\nWhat next?\n### Answer\n{answer}\n### Feedback\n### Score\n"
    centre = score_centre(answer + "\n")

    def scores(style: JudgeStyle | None) -> list[int]:
        out = []
        for i in range(80):
            text = make_reply(prompt, digest("mm", i), quality=0.3, style=style).text
            out.append(int(text.rsplit("### Score", 1)[1].strip(": \n").split("/")[0]))
        return out

    assert set(scores(JudgeStyle(noise=0))) == {round(centre)}
    assert set(scores(JudgeStyle(noise=0, score_offset=-1.0))) == {round(centre - 1.0)}
    usual, loud = Counter(scores(None)), Counter(scores(JudgeStyle(noise=2.0)))
    assert len(loud) >= len(usual) > 1
    assert sum(scores(JudgeStyle(score_offset=1.0))) > sum(scores(None))


# --------------------------------------------------------------------------- configuration and plumbing


def test_judge_styles_in_the_config():
    cfg = SimConfig.model_validate({"judge_styles": {"sim-judge-b": {"first_slot_bias": 0.4, "noise": 0}}},
                                   strict=True)
    assert cfg.style_of("sim-judge-b") == JudgeStyle(first_slot_bias=0.4, noise=0.0)
    assert cfg.style_of("sim-judge") is None
    assert SimConfig.model_validate_json(cfg.model_dump_json()) == cfg  # how a subprocess gets it
    for bad in ({"first_slot_bias": 0.4, "position_bias": 1}, {"noise": -1}, {"tie_width": 2.0}):
        with pytest.raises(ValidationError):
            SimConfig.model_validate({"judge_styles": {"j": bad}}, strict=True)


def test_judge_styles_are_part_of_a_sim_models_cache_identity_only_when_set():
    from judgekit.providers.sim import _RESPONSE_FIELDS, sim_settings_hash

    base = {"seed": 7, "model_quality": {"sim-vlm": 0.3}}
    before = sim_settings_hash(base, tuple(f for f in _RESPONSE_FIELDS if f != "judge_styles"))
    assert sim_settings_hash(base, _RESPONSE_FIELDS) == before
    styled = {sim_settings_hash({**base, "judge_styles": s}, _RESPONSE_FIELDS)
              for s in ({"j": {"noise": 0.5}}, {"j": {"noise": 0.6}}, {"k": {"noise": 0.5}})}
    assert len(styled) == 3 and before not in styled


async def test_served_replies_follow_the_models_style(sim_factory):
    """Through the OpenAI-compatible endpoint and the Messages API: a noiseless judge with the
    largest first-slot bias calls equal answers A>>B every time; another model on the same server
    keeps the usual judge (its replies are make_reply's without a style)."""
    import httpx

    server = await sim_factory(judge_styles={"sim-judge-first": {"first_slot_bias": 5, "noise": 0}})
    same = _PAIRS[3][0]
    async with httpx.AsyncClient(timeout=10) as http:
        for n in range(3):
            prompt = judge(same, same) + f"\n(request {n})"
            body = {"model": "sim-judge-first", "messages": [{"role": "user", "content": prompt}]}
            r = await http.post(f"{server.base_url}/chat/completions", json=body, headers={"authorization": "Bearer k"})
            assert parse_verdict(r.json()["choices"][0]["message"]["content"]) == "A>>B"
            r = await http.post(f"{server.root_url}/v1/messages", json={**body, "max_tokens": 1024},
                                headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
            assert parse_verdict(r.json()["content"][0]["text"]) == "A>>B"
        verdicts = set()
        for n in range(12):
            body = {"model": "sim-judge", "messages": [{"role": "user", "content": judge(same, same) + f"\n({n})"}]}
            r = await http.post(f"{server.base_url}/chat/completions", json=body, headers={"authorization": "Bearer k"})
            verdicts.add(parse_verdict(r.json()["choices"][0]["message"]["content"]))
    assert len(verdicts) > 1 and verdicts <= set(VERDICTS)
