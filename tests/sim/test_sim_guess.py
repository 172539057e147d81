"""The simulator's GuessBench replies: guesses, extraction, self-refine and retrieval reviews."""

from __future__ import annotations

import base64
import hashlib
import io
import os

import openai
from PIL import Image, PngImagePlugin

from judgekit.benchmarks.guessbench.hints import format_hint, generate_hints, parse_hint
from judgekit.pngtext import KIND_KEY, LABEL_KEY, STAGE_KEY
from judgekit.parsers.guess import is_correct, is_well_done, parse_extraction
from judgekit.resources import load_prompt
from judgekit.benchmarks.guessbench.sim.guess import VOCABULARY, read_guess, right_probability
from judgekit.sim.protocol import _parse_gemini, _parse_openai
from judgekit.sim.replies import classify, make_reply

SYSTEM = load_prompt("guessbench/system.txt").text
INITIAL = load_prompt("guessbench/initial_guess.txt")
NO_COT = load_prompt("guessbench/initial_guess_no_cot.txt")
HINT_ONLY = load_prompt("guessbench/initial_guess_hint_only.txt")
REFINE = load_prompt("guessbench/refine_guess.txt")
SELF_REFINE = load_prompt("guessbench/self_refine.txt")
RETRIEVAL = load_prompt("guessbench/image_retrieval.txt")
EXTRACT = load_prompt("guessbench/extract.txt")

CHAIR = "rocking chair"
CHAIR_HINTS = generate_hints(CHAIR, seed=7)


def digest(*parts: object) -> bytes:
    return hashlib.sha256(repr(parts).encode()).digest()


def build(label: str, stage: int = 3) -> dict[str, str]:
    return {LABEL_KEY: label, STAGE_KEY: str(stage), KIND_KEY: "build"}


def photo(label: str) -> dict[str, str]:
    return {LABEL_KEY: label, KIND_KEY: "photo"}


def guess(user: str, i: object, images=(build(CHAIR),), q: float = 0.5, max_tokens: int | None = 1000):
    """A guess request as the pipeline sends it: system prompt, then the user message."""
    return make_reply(SYSTEM + "\n" + user, digest(user, i, q), quality=q, images=images,
                      last_user_text=user, max_tokens=max_tokens)


def extract(response: str, i: object = 0, garbage: bool = False):
    return make_reply(EXTRACT.render(response=response), digest("extract", response, i), garbage=garbage)


def guessed(reply_text: str) -> str | None:
    """The guess as the benchmark reads it: the simulated extractor, then the parser."""
    return parse_extraction(extract(reply_text).text).guess


# ---------------------------------------------------------------------------- classification


def test_classify_guessbench_kinds():
    user = INITIAL.render(hint=CHAIR_HINTS[2])
    assert classify(SYSTEM + "\n" + user, user) == "guess"
    assert classify(NO_COT.render(hint=CHAIR_HINTS[2])) == "guess"
    assert classify(HINT_ONLY.render(hint=CHAIR_HINTS[0])) == "guess"
    assert classify(REFINE.render(previous_guess="house", hint=CHAIR_HINTS[1])) == "guess"
    assert classify(EXTRACT.render(response="Answer: The build represents a house.")) == "extract"
    review = SELF_REFINE.render(response="My best guess is a house.")
    conversation = SYSTEM + "\n" + user + "\nMy best guess is a house.\n" + review
    assert classify(conversation, review) == "self_refine"
    check = RETRIEVAL.render(previous_guess="house", source="Google Images")
    assert classify(SYSTEM + "\n" + user + "\n" + check, check) == "retrieval_check"
    # a review prompt earlier in the conversation does not make the last turn a review
    assert classify(review + "\n" + user, user) == "guess"


def test_classify_keeps_existing_kinds():
    judge = (
        "[ASSISTANT A]\nx\n[END ASSISTANT A]\n[ASSISTANT B]\ny\n[END ASSISTANT B]\n"
        "Final Verdict is: [[A>B]]"
    )
    assert classify(judge) == "pairwise"
    assert classify("Visual Factuality Score please") == "vfs"
    assert classify("Describe this picture of a Minecraft castle.") == "answer"
    assert make_reply("hello", digest(1)).kind == "answer"


# ---------------------------------------------------------------------------- guesses


def test_guess_is_deterministic_and_varies_with_digest():
    user = INITIAL.render(hint=CHAIR_HINTS[2])
    a, b = guess(user, 1), guess(user, 1)
    assert a.text == b.text and a.kind == "guess" and not a.garbage
    assert len({guess(user, i).text for i in range(10)}) > 5


def test_right_rate_tracks_quality_and_stage():
    user = INITIAL.render(hint=CHAIR_HINTS[2])
    hint = parse_hint(user)
    n = 400

    def rate(q: float, stage: int) -> float:
        replies = (guess(user, i, (build(CHAIR, stage),), q).text for i in range(n))
        return sum(is_correct(CHAIR, read_guess(t)) for t in replies) / n

    hi, lo = rate(0.9, 3), rate(0.1, 3)
    assert abs(hi - 0.98 * right_probability(0.9, 3, hint, CHAIR)) < 0.08  # 2 % give no guess
    assert abs(lo - 0.98 * right_probability(0.1, 3, hint, CHAIR)) < 0.05
    assert hi - lo > 0.3
    assert rate(0.9, 1) < rate(0.9, 2) < hi


def test_hint_raises_and_missing_hint_lowers_the_rate():
    hint1, hint3 = parse_hint(CHAIR_HINTS[0]), parse_hint(CHAIR_HINTS[2])
    p_none = right_probability(0.6, 3, None, CHAIR)
    p1 = right_probability(0.6, 3, hint1, CHAIR)
    p3 = right_probability(0.6, 3, hint3, CHAIR)
    assert p_none < p1 < p3
    assert p_none / p3 < 0.5


def test_the_build_is_the_last_staged_image():
    ex = build("Glass of Milk")
    hint = generate_hints("apple", seed=1)[2]
    user = INITIAL.render(hint=hint)
    got = [read_guess(guess(user, i, (ex, {}, build("apple")), q=1.0).text) for i in range(100)]
    assert sum(is_correct("apple", g) for g in got) > 80
    assert not any(g and "milk" in g.lower() for g in got)


def test_one_shot_reads_the_task_before_the_example():
    # the reference's layout: the task's build and instruction first, the worked example after
    milk = generate_hints("Glass of Milk", seed=3)
    task = load_prompt("guessbench/one_shot_task.txt").render(prompt=INITIAL.render(hint=CHAIR_HINTS[2]))
    intro = load_prompt("guessbench/one_shot_intro.txt").text
    shot = [load_prompt("guessbench/one_shot_hint.txt").render(n=str(k), hint=milk[k - 1]) for k in (1, 2, 3)]
    answer = load_prompt("guessbench/one_shot_answer.txt").render(answer="Glass of Milk")
    user = "\n".join([task, intro, *shot, answer])
    images = (build(CHAIR), build("Glass of Milk", 1), build("Glass of Milk", 2), build("Glass of Milk"))
    got = [read_guess(guess(user, i, images, q=1.0).text) for i in range(200)]
    p = 0.98 * right_probability(1.0, 3, parse_hint(CHAIR_HINTS[2]), CHAIR)  # the task's build and hint
    assert abs(sum(is_correct(CHAIR, g) for g in got) / 200 - p) < 0.1
    assert not any(g and "milk" in g.lower() for g in got)
    # its wrong guesses fit the task's hint (two words), not the example's (three)
    wrong = [read_guess(guess(user, i, images, q=0.0).text) for i in range(60)]
    assert all(g is None or len(g.split()) == 2 for g in wrong)


def test_a_previous_guess_inserted_as_the_extractor_reply_is_not_repeated():
    # the reference inserts the extractor's whole lower-cased reply: "answer: rocking horse"
    hint = format_hint(CHAIR, frozenset({(0, 3), (0, 5)}))
    user = REFINE.render(previous_guess="answer: rocking horse", hint=hint)
    for i in range(60):
        g = read_guess(guess(user, i, q=0.0).text)
        assert g is None or g.lower() != "rocking horse"


def test_retrieval_check_reads_the_guess_with_the_references_leading_space():
    # the reference inserts the text after "Answer:" as it is: " armchair"
    rs = [_check(" armchair", (build(CHAIR), photo("armchair")), i, q=0.0) for i in range(40)]
    assert any("The real image of armchair does not match" in r.text for r in rs)


def test_wrong_guesses_fit_the_hint_and_miss():
    hint = format_hint(CHAIR, frozenset({(0, 3), (0, 5)}))  # ___k_n_ _____: "rocking horse" fits
    info = parse_hint(hint)
    user = INITIAL.render(hint=hint)
    wrong = [read_guess(guess(user, i, q=0.0).text) for i in range(100)]
    wrong = [g for g in wrong if g is not None]
    assert len(wrong) > 90
    assert all(info.fits(g) and not is_correct(CHAIR, g) for g in wrong)
    # without letters, any concept of the right word lengths
    user1 = INITIAL.render(hint=CHAIR_HINTS[0])
    for i in range(50):
        g = read_guess(guess(user1, i, q=0.0).text)
        assert g is None or (parse_hint(user1).fits(g) and not is_correct(CHAIR, g))


def test_hint_only_guesses_fit_the_hint():
    fits = total = 0
    for k, answer in enumerate(("apple", "sword", "caterpillar", "fish tank", "lighthouse")):
        for level, hint in enumerate(generate_hints(answer, seed=k)):
            info = parse_hint(hint)
            user = HINT_ONLY.render(hint=hint)
            for i in range(20):
                g = read_guess(guess(user, (k, i), images=()).text)
                if g is None:
                    continue
                total += 1
                assert tuple(len(w) for w in g.split()) == info.word_lengths
                fits += info.fits(g)
                if level == 0:  # no letters: every guess fits
                    assert info.fits(g)
    assert fits / total > 0.75


def test_hint_only_is_right_only_by_chance():
    right = total = 0
    for k, answer in enumerate(VOCABULARY[::5]):
        user = HINT_ONLY.render(hint=generate_hints(answer, seed=k)[2])
        for i in range(4):
            total += 1
            right += is_correct(answer, read_guess(guess(user, (k, i), images=(), q=0.6).text))
    assert 0.05 < right / total < 0.45


def test_refinement_never_repeats_the_previous_guess():
    hint = format_hint(CHAIR, frozenset({(0, 3), (0, 5)}))
    for prev in ("rocking horse", CHAIR):
        user = REFINE.render(previous_guess=prev, hint=hint)
        for q in (0.0, 1.0):
            for i in range(60):
                g = read_guess(guess(user, i, q=q).text)
                assert g is None or " ".join(g.lower().split()) != prev
    # earlier turns' guesses are excluded too
    two = "\n".join(REFINE.render(previous_guess=p, hint=hint) for p in ("rocking horse", "picture frame"))
    for i in range(60):
        g = read_guess(guess(two, i, q=0.0).text)
        assert g is None or g.lower() not in ("rocking horse", "picture frame")


def test_cot_reply_shape():
    user = INITIAL.render(hint=CHAIR_HINTS[2])
    endings = set()
    for i in range(200):
        r = guess(user, i)
        body, _, last = r.text.rpartition("\n\n")
        if not body:  # no clear guess
            continue
        sentences = body.count(". ") + 1
        assert 2 <= sentences <= 6
        assert "`" in body and "letters" in body  # the hint's pattern is discussed
        endings.add(last.split()[0])
    assert {"Answer:", "**Final", "My", "I"} <= endings


def test_no_cot_reply_is_direct():
    user = NO_COT.render(hint=CHAIR_HINTS[2])
    for i in range(50):
        r = guess(user, i)
        # one line: a bare guess, or one of the sentences that commit to nothing
        assert "\n" not in r.text and (len(r.text.split()) <= 8 or read_guess(r.text) is None)
    assert any(guess(user, i).text.startswith("Answer: ") for i in range(50))


def test_some_replies_give_no_clear_guess():
    user = INITIAL.render(hint=CHAIR_HINTS[2])
    texts = [guess(user, i).text for i in range(1000)]
    none = sum(read_guess(t) is None for t in texts)
    assert 5 <= none <= 45


def test_max_tokens_cuts_a_guess():
    r = guess(INITIAL.render(hint=CHAIR_HINTS[2]), 3, max_tokens=10)
    assert r.finish_reason == "length" and len(r.text.split()) <= 8 and r.completion_tokens <= 11


# ---------------------------------------------------------------------------- extraction


def test_extractor_reads_every_shape():
    cases = {
        "Blocks and colours.\n\nAnswer: The build represents rocking chair.": "rocking chair",
        "Blocks.\n\n**Final guess:** Fish tank": "fish tank",
        "Blocks. My best guess is lighthouse.": "lighthouse",
        "Blocks.\n\nI think this build is an apple.": "apple",
        "On review, house does not fit `s____`. My improved guess is sword.": "sword",
        "The guess matches the build.\n\nAnswer: snowman": "snowman",
        "pumpkin": "pumpkin",
        "Answer: hot air balloon": "hot air balloon",
        "A red apple.": "a red apple",
    }
    for response, want in cases.items():
        r = extract(response)
        assert r.kind == "extract" and r.text.startswith("Answer: ") and not r.garbage
        assert parse_extraction(r.text).guess == want, response
    for response in ("$Well done!$", "It is hard to tell what this build is.",
                     "I cannot see much here and the colours are odd, so no idea at all today.", ""):
        assert extract(response).text == "No Answering"
        assert parse_extraction(extract(response).text).outcome == "no_answer"


def test_extractor_reads_what_the_guesser_wrote():
    user = INITIAL.render(hint=CHAIR_HINTS[2])
    for i in range(100):
        r = guess(user, i, q=0.7)
        g = guessed(r.text)
        assert g == (read_guess(r.text) or "").lower() or g is None


def test_garbage_extraction_does_not_parse_as_an_answer():
    outcomes = set()
    for i in range(40):
        r = extract("Blocks.\n\nMy best guess is lighthouse.", i, garbage=True)
        assert r.garbage
        outcomes.add(parse_extraction(r.text).outcome)
    assert outcomes <= {"unparsed", "no_answer"} and "unparsed" in outcomes


# ---------------------------------------------------------------------------- reviews


def _review(response: str, i: object, images, q: float = 0.6):
    base = INITIAL.render(hint=CHAIR_HINTS[2])
    ask = SELF_REFINE.render(response=response)
    text = "\n".join((SYSTEM, base, response, ask))
    return make_reply(text, digest("review", response, i, q), quality=q, images=images, last_user_text=ask)


def test_self_refine_keeps_a_right_guess():
    rs = [_review("Blocks.\n\nMy best guess is rocking chair.", i, (build(CHAIR),)) for i in range(300)]
    assert all(r.kind == "self_refine" for r in rs)
    done = sum(is_well_done(r.text) for r in rs) / len(rs)
    assert 0.75 < done < 0.95
    assert all(r.text == "$Well done!$" or guessed(r.text) == CHAIR for r in rs)


def test_self_refine_revises_a_wrong_guess():
    wrong = "Blocks.\n\nI think this build is a rocking horse."
    rs = [_review(wrong, i, (build(CHAIR),), q=1.0) for i in range(300)]
    done = sum(is_well_done(r.text) for r in rs) / len(rs)
    assert 0.2 < done < 0.4
    new = [guessed(r.text) for r in rs if not is_well_done(r.text)]
    assert None not in new and "rocking horse" not in new
    right = sum(is_correct(CHAIR, g) for g in new) / len(new)
    assert 0.25 < right < 0.55  # 0.4 * q


def _check(prev: str, images, i: object, q: float = 0.6):
    base = INITIAL.render(hint=CHAIR_HINTS[2])
    ask = RETRIEVAL.render(previous_guess=prev, source="Google Images")
    text = "\n".join((SYSTEM, base, f"My best guess is {prev}.", ask))
    return make_reply(text, digest("check", prev, i, q), quality=q, images=images, last_user_text=ask)


def test_retrieval_check_compares_photo_and_build():
    same = [_check(CHAIR, (build(CHAIR), photo("Rocking Chair")), i) for i in range(300)]
    assert all(r.kind == "retrieval_check" for r in same)
    assert 0.82 < sum(is_well_done(r.text) for r in same) / 300 < 0.97
    other = [_check("armchair", (build(CHAIR), photo("armchair")), i, q=1.0) for i in range(300)]
    assert 0.1 < sum(is_well_done(r.text) for r in other) / 300 < 0.3
    new = [guessed(r.text) for r in other if not is_well_done(r.text)]
    assert None not in new and "armchair" not in new
    assert 0.15 < sum(is_correct(CHAIR, g) for g in new) / len(new) < 0.45  # 0.3 * q


# ---------------------------------------------------------------------------- wire format


def png_with_text(**text: str) -> bytes:
    info = PngImagePlugin.PngInfo()
    for k, v in text.items():
        info.add_text(k.replace("_", "-"), v)
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (90, 140, 60)).save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


BUILD_PNG = png_with_text(judgekit_label=CHAIR, judgekit_stage="3", judgekit_kind="build")
PLAIN_PNG = png_with_text()


def test_parse_collects_labels_and_last_user_text():
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": data_url(PLAIN_PNG)}},
                {"type": "image_url", "image_url": {"url": data_url(BUILD_PNG)}},
                {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
                {"type": "text", "text": "first"},
                {"type": "text", "text": "second"},
            ]},
            {"role": "assistant", "content": "My best guess is a house."},
        ],
    }
    req = _parse_openai(body, b"0")
    assert req.images == 3
    assert req.images_meta == ({}, {LABEL_KEY: CHAIR, STAGE_KEY: "3", KIND_KEY: "build"}, {})
    assert req.last_user_text == "first\nsecond"
    g = _parse_gemini({
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(BUILD_PNG).decode()}},
            {"text": "look"},
        ]}, {"role": "model", "parts": [{"text": "a house"}]}],
    }, "m", b"0")
    assert g.images_meta == ({LABEL_KEY: CHAIR, STAGE_KEY: "3", KIND_KEY: "build"},)
    assert g.last_user_text == "look"


def test_large_png_labels_read_from_a_prefix():
    info = PngImagePlugin.PngInfo()
    info.add_text(LABEL_KEY, "apple")
    buf = io.BytesIO()
    Image.frombytes("RGB", (200, 200), os.urandom(200 * 200 * 3)).save(buf, format="PNG", pnginfo=info)
    body = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": data_url(buf.getvalue())}}]}]}
    assert _parse_openai(body, b"0").images_meta == ({LABEL_KEY: "apple"},)


async def test_end_to_end_guess_then_extract(sim_factory):
    s = await sim_factory(model_quality={"vlm": 1.0})
    c = openai.AsyncOpenAI(base_url=s.base_url, api_key="k", max_retries=0)
    try:
        hint = generate_hints(CHAIR, seed=7)[2]
        right = 0
        for seed in range(8):
            r = await c.chat.completions.create(
                model="vlm",
                messages=[
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": [
                        {"type": "image_url", "image_url": {"url": data_url(BUILD_PNG)}},
                        {"type": "text", "text": INITIAL.render(hint=hint)},
                    ]},
                ],
                temperature=0, max_tokens=1000, seed=seed,
            )
            reply = r.choices[0].message.content or ""
            assert r.usage.completion_tokens > 0
            e = await c.chat.completions.create(
                model="judge", messages=[{"role": "user", "content": EXTRACT.render(response=reply)}],
                temperature=0,
            )
            ext = parse_extraction(e.choices[0].message.content)
            assert ext.outcome in ("answer", "no_answer")
            right += is_correct(CHAIR, ext.guess)
        assert right >= 5  # q = 1 on a complete build with Hint_3
        assert s.stats()["served_by_kind"] == {"guess": 8, "extract": 8}
    finally:
        await c.close()
