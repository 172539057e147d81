"""GuessBench replies of the simulator (drawn here, registered in :mod:`judgekit.benchmarks.guessbench.sim`):
a guesser that "sees" labelled builds, and its judge.

The sample's build images are PNGs whose ``tEXt`` chunks name the answer (``judgekit-label``)
and how complete the build is (``judgekit-stage``: 1, 2, 3); a retrieved "real photo" carries
``judgekit-label`` (what it shows) and ``judgekit-kind = photo``.  The request parser
(:mod:`judgekit.sim.protocol`) hands over those labels, one dict per image in order, and the text
of the last user message; from them and the prompt this module answers four kinds of request
(:func:`guess_kind`):

``extract``
    The answer-extraction judge (paper Table 4, "Identify and extract the model's guessed
    answer").  It reads the response after ``Language model's response:`` and replies
    ``Answer: <guess>`` when it finds a guess in one of the shapes the simulated guesser writes
    (or the whole response is a bare answer of at most 6 words), else ``No Answering``.  A
    garbage request gets an unparseable paraphrase or ``No Answering``.
``self_refine``
    The review turn ("Please review your answer to check if it aligns with the given hint"): a
    right previous guess gets ``$Well done!$`` (85 %) or is restated; a wrong one gets
    ``$Well done!$`` anyway (30 %, overconfidence) or a new guess, right with
    ``0.4 * q * completeness``.
``retrieval_check``
    The image-retrieval review ("Please compare the provided Minecraft build with the real
    image of your guess"): the photo's label (the last ``photo`` image) is compared with the
    build's; a match gets ``$Well done!$`` (90 %) or a restatement; a mismatch gets a new guess
    (right with ``0.3 * q * completeness``), or ``$Well done!$`` (20 %).
``guess``
    Any other GuessBench prompt: the system prompt, an instruction to "determine what it
    represents", or a refinement ("Your previous guess is: X. This guess is incorrect.", X the
    extractor's lower-cased reply, ``answer: cat``, as the authors' code inserts it).

How the prompt is read (:mod:`judgekit.benchmarks.guessbench.sim.read`).  A dynamic turn's request holds the
earlier turns' messages too, so the build is the last image with a stage chunk and the hint the
last one in the text (:func:`~judgekit.benchmarks.guessbench.hints.parse_hint`); a one-shot
request puts its worked example after the task, so there the hint is read from the text before
the example and the example's images (labelled with its answer) are passed over.
The guess is right with probability (:func:`right_probability`)::

    q * completeness[stage] * hint factor * difficulty(answer), at most 0.97

with completeness 0.25 / 0.6 / 1.0 for stages 1 / 2 / 3; hint factor 0.4 without a hint (image
only), ``0.75 + revealed letters / letters`` with a hint that fits the answer (0.75 for Hint_1,
about 1.0 for Hint_3), 0.75 with one that does not; and a per-answer difficulty in [0.2, 1.8]
(mean 1) drawn from the answer's hash, so the same concept is hard for every model and at every
turn (as in the paper, where a set missed at turn 1 tends to be missed later).  Over many
answers, ``q = 0.6`` lands near the paper's GPT-4o: static about 60 % (paper 57.8), dynamic
10 / 40 / 71 % (11.4 / 42.2 / 66.0), image only 24 % (22.6).

A wrong guess is a vocabulary concept (:data:`VOCABULARY`, about 300 common "Guess the Build"
themes and near misses such as "rocking horse") that fits the hint, else one with the hint's word
lengths (the letters ignored, as models often do), else a phrase built word by word to fit, else
a concept of similar length; it never contains the answer and never repeats a guess the prompt
called incorrect ("Your previous guess is: X. This guess is incorrect.").  Without a labelled
image (hint only, or unlabelled real images) the guesser cannot know the answer: each concept
that fits the hint comes to mind with probability ``0.05 + 0.15 q`` and it names one of those,
else a phrase built word by word from common nouns to fit the hint (it fits in about 4 cases
of 5 and always has the hint's word lengths).  It is right only by chance: about 15 % static
over the vocabulary at ``q = 0.6``, 4 / 15 / 28 % dynamic (paper, hint only: 17.6; 1.0 / 9.8 / 24.4).

Reply shapes: with chain of thought, 2-5 sentences about blocks, colours and the hint's letter
pattern, then ``Answer: The build represents X.``, ``**Final guess:** X``, ``My best guess is
X.`` or ``I think this build is a X.``; without ("You must output the final answer directly"),
``X``, ``X.`` or ``Answer: X``.  About 2 % of guesses commit to nothing ("It is hard to tell what
this build is ..."), which the extractor reads as ``No Answering``.

Everything is drawn from the caller's ``random.Random`` (seeded by the request digest), so a
reply is a pure function of the request; nothing here decodes pixels.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence

from judgekit.benchmarks.guessbench.hints import HintInfo, parse_hint
from judgekit.benchmarks.guessbench.sim.read import (ASK_MARK, BARE_MAX_WORDS, BUILD_MARK, EXTRACT_MARK, GAME_MARK,
                                     NO_COT_MARK, PREV_END, RETRIEVAL_MARK, SELF_REFINE_MARK,
                                     SELF_REFINE_RESPONSE, WELL_DONE, between, build_of, extract_reply, pattern,
                                     photo_label, previous_guesses, read_guess, retrieval_previous, task_view)
from judgekit.benchmarks.guessbench.sim.words import (BLOCKS, BUILD_SHAPES, BY_SHAPE, COLOURS, FILLER_BY_LEN, VOCABULARY,
                                      WORDS_BY_LEN)

__all__ = [
    "KIND_GUESS",
    "KIND_EXTRACT",
    "KIND_SELF_REFINE",
    "KIND_RETRIEVAL_CHECK",
    "GUESS_KINDS",
    "VOCABULARY",
    "WELL_DONE",
    "guess_kind",
    "guess_reply",
    "read_guess",
    "right_probability",
    "completeness",
    "difficulty",
    "is_right",
]

KIND_GUESS = "guess"
KIND_EXTRACT = "extract"
KIND_SELF_REFINE = "self_refine"
KIND_RETRIEVAL_CHECK = "retrieval_check"
GUESS_KINDS: tuple[str, ...] = (KIND_GUESS, KIND_EXTRACT, KIND_SELF_REFINE, KIND_RETRIEVAL_CHECK)

#: how much of the concept a build at each stage shows
_COMPLETENESS = {1: 0.25, 2: 0.6, 3: 1.0}
_NO_HINT_FACTOR = 0.4
_HINT_BASE = 0.75
_MAX_RIGHT = 0.97
_NO_GUESS_RATE = 0.02
_D_LO, _D_HI = 0.2, 1.8  # the range of the per-answer difficulty multiplier
#: no labelled build: each concept that fits the hint comes to mind with base + gain * q
_RECALL_BASE, _RECALL_GAIN = 0.05, 0.15

_SELF_REFINE_KEEP = 0.85  # "$Well done!$" after a right guess
_SELF_REFINE_OVERCONFIDENT = 0.3  # "$Well done!$" after a wrong guess
_SELF_REFINE_FIX = 0.4  # times q * completeness: a new guess is right
_RETRIEVAL_KEEP = 0.9
_RETRIEVAL_OVERCONFIDENT = 0.2
_RETRIEVAL_FIX = 0.3
_UNSEEN_KEEP_FITS = 0.7  # no labelled build: "$Well done!$" when the guess fits the hint
_UNSEEN_KEEP = 0.3  # ... when it does not


# ----------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------


def _squash(s: str) -> str:
    return s.lower().replace(" ", "")


def _gold(label: str) -> str:
    label = label.strip()
    if label.endswith((".", "\u3002", "\uff0e", "\uff61")):
        label = label[:-1]
    return _squash(label)


def is_right(label: str, guess: str | None) -> bool:
    """Whether ``guess`` hits ``label`` the way GuessBench scores: the label, lower-cased and
    without spaces (and one trailing period), is a substring of the guess so squashed."""
    if not guess:
        return False
    g = _gold(label)
    return bool(g) and g in _squash(guess)


def _unit(*parts: str) -> float:
    h = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(h[:8], "big") / float(1 << 64)


def completeness(stage: int) -> float:
    """How much of the concept a build at ``stage`` (1, 2, 3) shows: 0.25, 0.6, 1.0."""
    return _COMPLETENESS.get(stage, 1.0)


def difficulty(label: str) -> float:
    """A per-answer multiplier in [0.6, 1.4] (mean 1), fixed by the answer's text."""
    return _D_LO + (_D_HI - _D_LO) * _unit("guessbench-difficulty/1", _squash(label))


def right_probability(quality: float, stage: int, hint: HintInfo | None, label: str) -> float:
    """The probability that a guesser of ``quality`` names ``label`` (see the module docstring)."""
    p = quality * completeness(stage)
    if hint is None:
        p *= _NO_HINT_FACTOR
    elif hint.fits(label):
        letters = sum(hint.word_lengths) or 1
        p *= _HINT_BASE + len(hint.revealed) / letters
    else:
        p *= _HINT_BASE
    p *= difficulty(label)
    return min(_MAX_RIGHT, max(0.0, p))


# ----------------------------------------------------------------------------------------
# drawing guesses
# ----------------------------------------------------------------------------------------


def _phrase_for(
    hint: HintInfo, rng: random.Random, words_by_len: dict[int, tuple[str, ...]] = WORDS_BY_LEN
) -> str | None:
    """A phrase with the hint's word lengths, each word one of ``words_by_len`` that carries the
    revealed letters (or, failing that, any of the length); None if a length has no word."""
    words = []
    for wi, n in enumerate(hint.word_lengths):
        pool = words_by_len.get(n, ())
        if not pool:
            return None
        need = [(li, ch) for (w, li), ch in hint.revealed.items() if w == wi]
        fit = [w for w in pool if all(w[li] == ch for li, ch in need)] if need else list(pool)
        words.append(rng.choice(fit or pool))
    return " ".join(words)


def _pick(cands: Sequence[str], rng: random.Random, label: str | None, exclude: set[str]) -> str | None:
    ok = [c for c in cands if _squash(c) not in exclude and not (label and is_right(label, c))]
    return rng.choice(ok) if ok else None


def _wrong_guess(label: str | None, hint: HintInfo | None, rng: random.Random, exclude: set[str]) -> str:
    """A guess that misses ``label`` (when given) and is not in ``exclude`` (squashed)."""
    if hint is not None:
        fits = [c for c in BY_SHAPE.get(hint.word_lengths, ()) if hint.fits(c)]
        same_shape = BY_SHAPE.get(hint.word_lengths, ())
        got = _pick(fits, rng, label, exclude) or _pick(same_shape, rng, label, exclude)
        if got:
            return got
        for _ in range(4):
            phrase = _phrase_for(hint, rng)
            if phrase and _squash(phrase) not in exclude and not (label and is_right(label, phrase)):
                return phrase
        n = sum(hint.word_lengths)
    else:
        n = len(_gold(label)) if label else rng.randint(3, 10)
    for spread in (2, 4, 99):
        near = [c for c in VOCABULARY if abs(len(_squash(c)) - n) <= spread]
        got = _pick(near, rng, label, exclude)
        if got:
            return got
    return "mystery object"


def _unseen_guess(hint: HintInfo | None, quality: float, rng: random.Random, exclude: set[str]) -> str:
    """A guess without seeing a labelled build.

    The guesser thinks of each vocabulary concept that fits the hint with probability
    ``0.05 + 0.15 q`` and names one of those at random; thinking of none, it names a phrase built
    word by word to fit the hint.  So it is right only by chance, about as often as the paper's
    hint-only GPT-4o (17.6 % static) when the answer is a vocabulary concept.
    """
    if hint is None:
        return _pick(VOCABULARY, rng, None, exclude) or "mystery object"
    recall = _RECALL_BASE + _RECALL_GAIN * quality
    fits = [c for c in BY_SHAPE.get(hint.word_lengths, ()) if hint.fits(c) and rng.random() < recall]
    got = _pick(fits, rng, None, exclude)
    if got:
        return got
    for _ in range(4):
        phrase = _phrase_for(hint, rng, FILLER_BY_LEN)
        if phrase and _squash(phrase) not in exclude:
            return phrase
    return _wrong_guess(None, hint, rng, exclude)


def _draw_guess(
    quality: float,
    build: tuple[str, int] | None,
    hint: HintInfo | None,
    rng: random.Random,
    exclude: set[str],
) -> str:
    if build is None:
        return _unseen_guess(hint, quality, rng, exclude)
    label, stage = build
    if rng.random() < right_probability(quality, stage, hint, label) and _squash(label) not in exclude:
        return label
    return _wrong_guess(label, hint, rng, exclude)


# ----------------------------------------------------------------------------------------
# writing replies
# ----------------------------------------------------------------------------------------


def _article(x: str) -> str:
    return "an" if x[:1].lower() in "aeiou" else "a"


def _final_line(guess: str, rng: random.Random) -> str:
    starts_with_article = guess.lower().split(" ", 1)[0] in ("a", "an", "the")
    k = rng.randrange(3 if starts_with_article else 4)
    if k == 0:
        return f"Answer: The build represents {guess}."
    if k == 1:
        return f"**Final guess:** {guess}"
    if k == 2:
        return f"My best guess is {guess}."
    return f"I think this build is {_article(guess)} {guess}."


def _hint_sentence(hint: HintInfo, rng: random.Random) -> str:
    n = len(hint.word_lengths)
    lengths = ", ".join(str(x) for x in hint.word_lengths)
    pat = pattern(hint)
    what = f"a single word of {lengths} letters" if n == 1 else f"{n} words of {lengths} letters"
    s = f"The hint's pattern `{pat}` means the answer is {what}"
    if hint.revealed:
        letters = ", ".join(sorted(set(hint.revealed.values())))
        s += rng.choice((f", and the revealed letters ({letters}) narrow it down.",
                         f"; the letters {letters} are already given."))
    else:
        s += ", but no letters are revealed yet."
    return s


def _reasoning(
    images: Sequence[Mapping[str, str]], hint: HintInfo | None, stage: int | None,
    previous: str | None, rng: random.Random,
) -> list[str]:
    out: list[str] = []
    if images:
        c1, c2 = rng.sample(COLOURS, 2)
        b1, b2 = rng.sample(BLOCKS, 2)
        out.append(f"The build is made mostly of {c1} {b1}, with {c2} {b2} for the details.")
    else:
        out.append("I cannot see the build, so I have to rely on the hint alone.")
    extra: list[str] = []
    if images:
        extra.append(f"Its overall shape is {rng.choice(BUILD_SHAPES)}.")
        if stage == 1:
            extra.append("Only part of it is built so far, so the outline is still unclear.")
        elif stage == 2:
            extra.append("More of it is finished now, and its main parts are recognisable.")
        elif stage == 3:
            extra.append("It looks complete, with the main features clearly visible.")
    if previous:
        extra.append(f"Since {previous} was wrong, I should look for something else.")
    rng.shuffle(extra)
    out += extra[: rng.randint(0, 2)]
    if hint is not None:
        out.append(_hint_sentence(hint, rng))
    if len(out) < 2 or rng.random() < 0.5:
        out.append("Comparing it with common Guess the Build themes, one option fits best.")
    return out[:5]


_NO_GUESS_COT = (
    "It is hard to tell what this build is; the shape is too ambiguous to commit to one idea.",
    "I am not able to identify this build with any confidence from what is shown.",
)
_NO_GUESS_DIRECT = (
    "I cannot tell what this build represents.",
    "It is hard to tell what this build is.",
)


def _guess_text(
    text: str, last_user: str, images: Sequence[Mapping[str, str]], quality: float, rng: random.Random
) -> str:
    task, example = task_view(text, last_user)
    hint = parse_hint(task)
    build = build_of(images, skip_label=example)
    previous = previous_guesses(text)
    exclude = {_squash(p) for p in previous if p}
    no_cot = NO_COT_MARK in last_user
    if rng.random() < _NO_GUESS_RATE:
        if no_cot:
            return rng.choice(_NO_GUESS_DIRECT)
        c1, b1 = rng.choice(COLOURS), rng.choice(BLOCKS)
        return f"The build mixes {c1} {b1} with a few other blocks. " + rng.choice(_NO_GUESS_COT)
    guess = _draw_guess(quality, build, hint, rng, exclude)
    if rng.random() < 0.15:
        guess = guess[:1].upper() + guess[1:]
    if no_cot:
        if len(guess.split()) > BARE_MAX_WORDS:
            return f"Answer: {guess}"
        return rng.choice((guess, f"{guess}.", f"Answer: {guess}"))
    last_prev = previous[-1] if previous and previous[-1].lower() != "no answering" else None
    sentences = _reasoning(images, hint, build[1] if build else None, last_prev, rng)
    return " ".join(sentences) + "\n\n" + _final_line(guess, rng)


def _new_guess_text(opening: str, guess: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{opening} My improved guess is {guess}."
    return f"{opening}\n\nAnswer: {guess}"


def _self_refine_text(
    text: str, last_user: str, images: Sequence[Mapping[str, str]], quality: float, rng: random.Random
) -> str:
    response = between(last_user, SELF_REFINE_RESPONSE, SELF_REFINE_MARK) or ""
    prev = read_guess(response)
    hint = parse_hint(text)
    exclude = {_squash(p) for p in previous_guesses(text) if p}
    if prev:
        exclude.add(_squash(prev))
    build = build_of(images)
    u = rng.random()
    if build is None:
        fits = prev is not None and (hint is None or hint.fits(prev))
        if prev is not None and u < (_UNSEEN_KEEP_FITS if fits else _UNSEEN_KEEP):
            return WELL_DONE
        guess = _unseen_guess(hint, quality, rng, exclude)
        return _new_guess_text("On review, the guess does not sit well with the hint.", guess, rng)
    label, stage = build
    if prev is not None and is_right(label, prev):
        if u < _SELF_REFINE_KEEP:
            return WELL_DONE
        return f"The guess matches the build and the hint, so I am keeping it.\n\nAnswer: {prev}"
    if prev is not None and u < _SELF_REFINE_OVERCONFIDENT:
        return WELL_DONE
    p = _SELF_REFINE_FIX * quality * completeness(stage)
    if rng.random() < p and _squash(label) not in exclude:
        guess = label
    else:
        guess = _wrong_guess(label, hint, rng, exclude)
    what = f"`{pattern(hint)}`" if hint is not None else "the build's shape"
    return _new_guess_text(f"On review, {prev or 'my answer'} does not fit {what} well.", guess, rng)


def _retrieval_text(
    text: str, last_user: str, images: Sequence[Mapping[str, str]], quality: float, rng: random.Random
) -> str:
    prev = retrieval_previous(last_user)
    photo = photo_label(images) or prev
    hint = parse_hint(text)
    exclude = {_squash(p) for p in previous_guesses(text) if p}
    if prev:
        exclude.add(_squash(prev))
    build = build_of(images)
    u = rng.random()
    if build is None:
        if u < 0.5:
            return WELL_DONE
        guess = _unseen_guess(hint, quality, rng, exclude)
        return _new_guess_text("The real image does not look like the build.", guess, rng)
    label, stage = build
    match = photo is not None and (is_right(label, photo) or is_right(photo, label))
    if match:
        if u < _RETRIEVAL_KEEP:
            return WELL_DONE
        return f"The real image and the build share the same shape and colours.\n\nAnswer: {prev or photo}"
    if u < _RETRIEVAL_OVERCONFIDENT:
        return WELL_DONE
    p = _RETRIEVAL_FIX * quality * completeness(stage)
    if rng.random() < p and _squash(label) not in exclude:
        guess = label
    else:
        guess = _wrong_guess(label, hint, rng, exclude)
    c = rng.choice(COLOURS)
    return _new_guess_text(
        f"The real image of {prev or 'my guess'} does not match the build: the {c} parts and the "
        f"proportions are different.", guess, rng)


# ----------------------------------------------------------------------------------------
# entry points
# ----------------------------------------------------------------------------------------


def guess_kind(text: str, last_user_text: str) -> str | None:
    """The GuessBench kind of a request (``extract``, ``self_refine``, ``retrieval_check``,
    ``guess``), or None when it is not a GuessBench request."""
    if EXTRACT_MARK in text:
        return KIND_EXTRACT
    if SELF_REFINE_MARK in last_user_text:
        return KIND_SELF_REFINE
    if RETRIEVAL_MARK in last_user_text:
        return KIND_RETRIEVAL_CHECK
    if GAME_MARK in text or ASK_MARK in text or (BUILD_MARK in text and "represents" in text) or PREV_END in text:
        return KIND_GUESS
    return None


def guess_reply(
    kind: str,
    text: str,
    last_user_text: str,
    images: Sequence[Mapping[str, str]],
    rng: random.Random,
    *,
    quality: float = 0.5,
    garbage: bool = False,
) -> tuple[str, bool]:
    """The reply text of a GuessBench request of ``kind`` and whether it is garbage.

    ``text`` is the whole prompt, ``last_user_text`` the last user message, ``images`` one dict
    of PNG text labels per image (empty for unlabelled ones), ``quality`` the model's quality;
    ``garbage`` makes an extraction unparseable and is ignored by the other kinds.
    """
    if kind == KIND_EXTRACT:
        return extract_reply(text, rng, garbage), garbage
    if kind == KIND_SELF_REFINE:
        return _self_refine_text(text, last_user_text, images, quality, rng), False
    if kind == KIND_RETRIEVAL_CHECK:
        return _retrieval_text(text, last_user_text, images, quality, rng), False
    if kind == KIND_GUESS:
        return _guess_text(text, last_user_text, images, quality, rng), False
    raise ValueError(f"not a GuessBench kind: {kind!r}")
