"""How the simulated GuessBench models read their prompts and each other's replies.

The prompts are the authors' (``prompts/guessbench/``); their marks are below.  A dynamic turn's
request holds every earlier turn's messages, so what a turn is about is read from the end: the
hint is the last one in the text, and the build the last image with a stage chunk, except that a
one-shot request's last user message puts the task first and the worked example after it (the
task's text before :data:`ONE_SHOT_MARK`, and the example's images carry the example's answer,
which :func:`task_view` leaves out).  The previous guess comes back as the reference inserts it,
the extractor's whole lower-cased reply (``answer: cat``), and is read with :func:`read_guess`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from judgekit.benchmarks.guessbench.hints import HintInfo
from judgekit.pngtext import KIND_KEY, LABEL_KEY, STAGE_KEY
from judgekit.sim.text import block_span

__all__ = ["WELL_DONE", "EXTRACT_MARK", "RESPONSE_MARK", "SELF_REFINE_MARK", "SELF_REFINE_RESPONSE",
           "RETRIEVAL_MARK", "GAME_MARK", "BUILD_MARK", "ASK_MARK", "NO_COT_MARK", "PREV_END", "ONE_SHOT_MARK",
           "BARE_MAX_WORDS", "extract_reply", "read_guess", "clean", "is_signal", "previous_guesses",
           "retrieval_previous",
           "between", "block_span", "build_of", "photo_label", "pattern", "task_view"]

WELL_DONE = "$Well done!$"

# marks of the prompts (prompts/guessbench/*.txt)
EXTRACT_MARK = "Identify and extract the model's guessed answer"
RESPONSE_MARK = "Language model's response:"
SELF_REFINE_MARK = "Please review your answer to check if it aligns with the given hint"
SELF_REFINE_RESPONSE = "Here is your response:"
RETRIEVAL_MARK = "Please compare the provided Minecraft build with the real image of your guess"
_RETRIEVAL_PREV = "Previously, your guess was:"
_RETRIEVAL_PREV_END = "Now, I have searched"
GAME_MARK = "Guess the Build"
BUILD_MARK = "Minecraft build"
ASK_MARK = "determine what it represents"  # every initial instruction, the hint-only one included
NO_COT_MARK = "You must output the final answer directly"
_PREV_MARK = "Your previous guess is: "
PREV_END = ". This guess is incorrect"
ONE_SHOT_MARK = "I will give you an example to help you guess the build."
_EXAMPLE_ANSWER = "Answer: The build represents "

#: a reply of one line and at most this many words is read as a bare answer
BARE_MAX_WORDS = 6


#: lower-cased openers of the guess shapes, and whether a leading "a"/"an" is the writer's
_OPENERS: tuple[tuple[str, bool], ...] = (
    ("the build represents ", False),
    ("final guess:", False),
    ("my best guess is ", False),
    ("i think this build is ", True),
    ("my improved guess is ", False),
    ("answer:", False),
)
_CLEAN_STRIP = " \t\r\n*\"'`[]"


def clean(s: str) -> str:
    prev = None
    while s != prev:
        prev = s
        s = s.strip(_CLEAN_STRIP)
        if s.endswith("."):
            s = s[:-1]
    return s


def is_signal(s: str) -> bool:
    return WELL_DONE.lower() in s.lower() or s.strip(" \t\r\n$*\"'`").lower() in ("well done!", "well done")


def read_guess(response: str) -> str | None:
    """The guess in a response written in one of the simulated guesser's shapes, or the whole
    response when it is one line of at most 6 words; None when there is no guess (including a
    bare ``$Well done!$``)."""
    resp = response.strip()
    if not resp or is_signal(resp):
        return None
    low = resp.lower()
    best, best_at, article = -1, -1, False
    for k, (mark, art) in enumerate(_OPENERS):
        at = low.rfind(mark)
        if at > best_at:
            best, best_at, article = k, at, art
    if best >= 0:
        start = best_at + len(_OPENERS[best][0])
        line = resp[start:].split("\n", 1)[0]
        cut = line.find(". ")
        if cut >= 0:
            line = line[:cut]
        guess = clean(line)
        if article:
            for a in ("a ", "an "):
                if guess.lower().startswith(a):
                    guess = guess[len(a):]
                    break
        if guess and guess.lower() != "no answering":
            return guess
        return None
    if "\n" not in resp and len(resp.split()) <= BARE_MAX_WORDS:
        guess = clean(resp)
        return guess or None
    return None


def _guess_or_text(text: str) -> str:
    got = read_guess(text)
    return got if got is not None else text.strip()


def previous_guesses(text: str) -> list[str]:
    """Every guess X of "Your previous guess is: X. This guess is incorrect" in ``text``, read
    from the extractor reply inserted there (``answer: cat`` -> ``cat``; ``no answering`` stays)."""
    out: list[str] = []
    i = text.find(_PREV_MARK)
    while i >= 0:
        start = i + len(_PREV_MARK)
        j = text.find(PREV_END, start)
        if j < 0:
            break
        out.append(_guess_or_text(text[start:j]))
        i = text.find(_PREV_MARK, j)
    return out


def retrieval_previous(last_user: str) -> str | None:
    """The guess an image-retrieval review names ("Previously, your guess was: X."), cleaned."""
    got = between(last_user, _RETRIEVAL_PREV, _RETRIEVAL_PREV_END)
    if got is None:
        return None
    return clean(got.split("\n", 1)[0]) or None


def between(text: str, start_mark: str, end_mark: str) -> str | None:
    """The text between the last ``end_mark`` and the ``start_mark`` before it, stripped."""
    span = block_span(text, start_mark, end_mark)
    return None if span is None else text[span[0] : span[1]].strip()


def task_view(text: str, last_user: str) -> tuple[str, str | None]:
    """(the text the task's hint is read from, the worked example's answer or None).

    A one-shot request's last user message holds the task before :data:`ONE_SHOT_MARK` and the
    example after it, ending ``Answer: The build represents X.``; any other request is read whole."""
    k = last_user.rfind(ONE_SHOT_MARK)
    if k < 0:
        return text, None
    example = last_user[k:]
    a = example.rfind(_EXAMPLE_ANSWER)
    label = clean(example[a + len(_EXAMPLE_ANSWER):]) if a >= 0 else None
    return last_user[:k], label or None


def build_of(images: Sequence[Mapping[str, str]], skip_label: str | None = None) -> tuple[str, int] | None:
    """(label, stage) of the last image with a stage chunk and a label other than ``skip_label``
    (a one-shot example's); None if there is none."""
    skip = skip_label.strip().lower() if skip_label else None
    for meta in reversed(images):
        if STAGE_KEY in meta and meta.get(LABEL_KEY):
            label = meta[LABEL_KEY].strip()
            if skip is not None and label.lower() == skip:
                continue
            try:
                stage = int(meta[STAGE_KEY].strip())
            except ValueError:
                stage = 3
            return label, stage
    return None


def photo_label(images: Sequence[Mapping[str, str]]) -> str | None:
    """The label of the last retrieved "photo" image, if any."""
    for meta in reversed(images):
        if meta.get(KIND_KEY, "").strip().lower() == "photo" and meta.get(LABEL_KEY):
            return meta[LABEL_KEY].strip()
    return None


def pattern(hint: HintInfo) -> str:
    """The hint as a compact letter pattern, e.g. ``_______ _ha__``."""
    words = []
    for wi, n in enumerate(hint.word_lengths):
        words.append("".join(hint.revealed.get((wi, li), "_") for li in range(n)))
    return " ".join(words)


_GARBAGE_WITH = (
    "The model's guess appears to be {g}.",
    "Extracted guess - {g}",
    "The guessed concept is {g}, as stated at the end of the response.",
)
_GARBAGE_WITHOUT = (
    "The response does not state a single clear guess.",
    "I could not find a guess in this response.",
)


def extract_reply(text: str, rng: random.Random, garbage: bool) -> str:
    """The simulated extractor's reply to an extraction request: ``Answer: <guess>`` for a guess
    the response holds in a shape the simulated guesser writes, else ``No Answering``; with
    ``garbage``, a paraphrase the format does not cover, or ``No Answering``."""
    i = text.find(EXTRACT_MARK)
    j = text.find(RESPONSE_MARK, max(i, 0))
    response = text[j + len(RESPONSE_MARK):] if j >= 0 else ""
    guess = read_guess(response)
    if garbage:
        u = rng.random()
        if u < 0.25:
            return "No Answering"
        if guess:
            return rng.choice(_GARBAGE_WITH).format(g=guess)
        return rng.choice(_GARBAGE_WITHOUT)
    if guess is None:
        return "No Answering"
    return f"Answer: {guess}"
