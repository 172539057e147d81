"""Deterministic, benchmark-shaped replies of the simulator.

Every reply is a pure function of a 32-byte request digest (sha256 of the seed and the
canonical request, see ``judgekit.sim.protocol``) and the request's text, so the same request
always gets the same reply.

Kinds of request, recognised from the prompt text (:func:`classify`):

``pairwise``, ``vfs``
    Creation-MMBench's pairwise judge and visual factuality prompts: see
    :mod:`judgekit.sim.judge_replies` (the replies) and :mod:`judgekit.sim.judge_style` (how a
    judge's verdict is drawn, and the per-judge styles of ``SimConfig.judge_styles``).
``guess``, ``extract``, ``self_refine``, ``retrieval_check``
    GuessBench: a guess at a Minecraft build, the answer-extraction judge, and the two review
    turns (self-refine, image retrieval); see :mod:`judgekit.sim.guess`, which "sees" the
    builds through the PNG text labels the request parser collects.
``caption``
    MMGenBench's caption prompt (``prompts/mmgenbench/caption.txt``: "image caption-prompt" and
    "Text-to-Image model").  With an image whose PNG carries a ``judgekit-scene`` chunk, the
    reply is :func:`judgekit.sim.scenes.describe` of that scene at the model's quality; without
    one, a generic caption from the word list.  About 5 % of captions leak the way real models
    do (wrapped in quotes, a trailing ``</s>`` or ``<|im_end|>``) and about 3 % run past 70
    words, which MMGenBench's clean-up must handle.
``generic_pairwise``, ``generic_single``
    The generic benchmarks' judge prompts (``benchmark = "pairwise"`` / ``"rubric"``), recognised
    by their answer markers (Arena-Hard's, MT-Bench's, ``[ASSISTANT A]`` when the prompt is not
    Creation-MMBench's); the reply's format follows what the prompt asks for.  See
    :mod:`judgekit.sim.generic_judge`.
``answer``
    Anything else: free prose from a fixed word list mixed with words of the prompt.

How judges favour better models without knowing who wrote an answer: a candidate model of
quality ``q`` (``SimConfig.model_quality``) writes longer answers drawn from a larger
vocabulary, and the simulated judge scores each answer by those same surface features
(:func:`answer_quality`); a judge model's :class:`~judgekit.sim.judge_style.JudgeStyle` adds
its position bias, verbosity bias, noise, tie readiness and leniency.

Token accounting is simulated too: about 0.75 words per token when cutting at ``max_tokens``,
and ``completion_tokens = round(words * 1.3)``.
"""

from __future__ import annotations

import random
import re
import sys
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgekit.sim.generic_judge import (
    GENERIC_KINDS,
    KIND_GENERIC_PAIRWISE,
    KIND_GENERIC_SINGLE,
    generic_kind,
    generic_reply,
    wants_generic_format,
)
from judgekit.sim.guess import (
    GUESS_KINDS,
    KIND_EXTRACT,
    KIND_GUESS,
    KIND_RETRIEVAL_CHECK,
    KIND_SELF_REFINE,
    guess_kind,
    guess_reply,
)
from judgekit.sim.judge_replies import (
    KIND_PAIRWISE,
    KIND_VFS,
    PUNCT_TABLE,
    VERDICTS,
    answer_quality,
    extract_answers,
    pairwise_text,
    vfs_text,
)
from judgekit.sim.judge_style import JudgeStyle, verdict_probabilities
from judgekit.sim.mmie import MMIE_JUDGE_KINDS, MMIE_KINDS, mmie_kind, mmie_reply

__all__ = [
    "Reply",
    "VERDICTS",
    "KIND_PAIRWISE",
    "KIND_VFS",
    "KIND_ANSWER",
    "KIND_CAPTION",
    "KIND_GUESS",
    "KIND_EXTRACT",
    "KIND_SELF_REFINE",
    "KIND_RETRIEVAL_CHECK",
    "GUESS_KINDS",
    "KIND_GENERIC_PAIRWISE",
    "KIND_GENERIC_SINGLE",
    "GENERIC_KINDS",
    "classify",
    "extract_answers",
    "answer_quality",
    "verdict_probabilities",
    "JudgeStyle",
    "make_reply",
    "completion_tokens_for",
]

KIND_ANSWER = "answer"
KIND_CAPTION = "caption"
#: markers of MMGenBench's caption prompt (prompts/mmgenbench/caption.txt)
_CAPTION_MARKS = ("image caption-prompt", "Text-to-Image model")

_WORDS_PER_TOKEN = 0.75
_TOKENS_PER_WORD = 1.3


@dataclass(slots=True)
class Reply:
    """One generated reply.

    ``kind`` is ``pairwise``, ``vfs``, ``answer`` or one of :data:`GUESS_KINDS`; ``garbage``
    tells whether a judge reply (pairwise, vfs, extract) was deliberately made unparseable.
    """

    text: str
    kind: str
    finish_reason: str = "stop"
    completion_tokens: int = 0
    garbage: bool = False


# ----------------------------------------------------------------------------------------
# vocabulary
# ----------------------------------------------------------------------------------------

_BASE_WORDS = """
light color shape story scene image detail moment person city river mountain garden window
street market morning evening season memory journey voice music rhythm texture surface
shadow pattern corner table chair door path bridge tower harbor forest meadow valley coast
island village kitchen recipe flavor spice bread coffee market ticket museum gallery painting
sculpture poster design layout screen button menu feature product customer service team
project plan schedule budget report email letter invitation greeting card review experience
visit guest host family friend neighbor teacher student lesson class chapter poem verse
line stanza metaphor image tone mood theme idea concept method process system structure
diagram chart table figure result insight reason evidence context background purpose goal
audience reader viewer listener message signal brand campaign slogan video script frame
shot camera lens focus angle contrast balance harmony symmetry space distance height width
weather rain snow wind cloud sun moon star night dawn dusk autumn winter spring summer
flower tree leaf branch stone water wave sand shell bird horse cat dog child elder crowd
festival holiday dinner lunch breakfast table plate glass cup bottle lamp candle fabric
style fashion jacket shirt dress shoe hat scarf pocket button thread stitch pattern
history tradition culture heritage custom ritual ceremony language symbol sign note
building room floor wall ceiling stair garden yard fence gate roof kitchen bedroom office
energy warmth comfort calm quiet noise laughter smile gesture glance promise surprise
challenge solution option choice benefit value quality safety health nutrition balance
"""

_ADJECTIVES = """
bright gentle vivid quiet careful warm subtle bold clear precise rich simple elegant
thoughtful practical lively calm steady fresh crisp soft sharp deep open modern classic
rustic urban rural golden silver pale dark colorful layered balanced focused honest
"""

_CONNECTORS = "and with while because through across toward beside within beyond".split()


def _build_vocab() -> tuple[str, ...]:
    """A fixed, ordered vocabulary: common words first, rarer derived forms later.

    Lower-quality models draw from a short prefix of it, better ones from more of it.
    """
    base = list(dict.fromkeys(_BASE_WORDS.split()))
    adjectives = list(dict.fromkeys(_ADJECTIVES.split()))
    rng = random.Random(20240611)  # fixed: the vocabulary never changes between runs
    first = base[:]
    rng.shuffle(first)
    derived: list[str] = []
    for w in base:
        if w.endswith(("s", "sh", "ch", "x")):
            derived.append(w + "es")
        elif w.endswith("y") and w[-2:-1] not in ("a", "e", "o", "u"):
            derived.append(w[:-1] + "ies")
        else:
            derived.append(w + "s")
    for a in adjectives:
        if a.endswith("le"):
            derived.append(a[:-1] + "y")
        elif a.endswith("y"):
            derived.append(a[:-1] + "ily")
        else:
            derived.append(a + "ly")
        derived.append(a + "ness")
    rng.shuffle(derived)
    vocab = list(dict.fromkeys(first + adjectives + _CONNECTORS + derived))
    return tuple(vocab)


_VOCAB = _build_vocab()

_WORD_RE = re.compile(r"\S+")


# ----------------------------------------------------------------------------------------
# classification
# ----------------------------------------------------------------------------------------


def classify(text: str, last_user_text: str | None = None) -> str:
    """The kind of request: ``pairwise``, ``vfs``, ``generic_pairwise``, ``generic_single``, an MMIE kind (:mod:`judgekit.sim.mmie`: the scoring
    judge, an integrated answer), ``caption``, a GuessBench kind or ``answer``.

    ``last_user_text`` is the text of the last user message (the GuessBench review turns are
    recognised there); None takes the whole ``text``.
    """
    if "[ASSISTANT A]" in text and "[ASSISTANT B]" in text:
        low = text.lower()
        if "visual factuality score" in low:
            return KIND_VFS
        if "final verdict" in low and not wants_generic_format(text):
            return KIND_PAIRWISE
    elif "Visual Factuality Score" in text:
        return KIND_VFS
    generic = generic_kind(text)
    if generic is not None:
        return generic
    mmie = mmie_kind(text, last_user_text)
    if mmie is not None:
        return mmie
    if all(m in text for m in _CAPTION_MARKS):
        return KIND_CAPTION
    return guess_kind(text, text if last_user_text is None else last_user_text) or KIND_ANSWER


# ----------------------------------------------------------------------------------------
# free-text answers
# ----------------------------------------------------------------------------------------


def _prompt_words(text: str, limit: int = 40) -> list[str]:
    """Distinct alphabetic words (4+ letters) of the prompt's tail, in order of appearance."""
    seen: dict[str, None] = {}
    for w in text[-4000:].translate(PUNCT_TABLE).split():
        if len(w) >= 4 and w.isalpha():
            seen.setdefault(w.lower(), None)
            if len(seen) >= limit:
                break
    return list(seen)


def _u16(rng: random.Random, n: int) -> array:
    """``n`` pseudo-random 16-bit integers (endian-independent), drawn in one C call."""
    arr = array("H", rng.randbytes(2 * n))
    if sys.byteorder == "big":
        arr.byteswap()
    return arr


def _answer_text(
    text: str, quality: float, rng: random.Random, word_budget: int | None
) -> tuple[str, int, bool]:
    """Free prose: ``(text, word count, cut by the budget)``.

    Length ~ ``40 + 560 q`` words (+-20 %), drawn from the first ``60 + 540 q`` words of the
    vocabulary, about one word in ten taken from the prompt; sentences of 7-16 words,
    paragraphs of 3-6 sentences.
    """
    n = max(8, int((40 + 560 * quality) * (0.8 + 0.4 * rng.random())))
    cut = word_budget is not None and n > word_budget
    if cut and word_budget is not None:
        n = word_budget
    pool = _VOCAB[: min(int(60 + 540 * quality), len(_VOCAB))]
    size = len(pool)
    words = [pool[i % size] for i in _u16(rng, n)]
    pw = _prompt_words(text)
    if pw and n >= 10:
        m = len(pw)
        r = _u16(rng, 2 * (n // 10))
        for k in range(0, len(r), 2):
            words[r[k] % n] = pw[r[k + 1] % m]
    shape = _u16(rng, n // 7 + 2)
    out: list[str] = []
    i = j = in_par = 0
    par_len = 3 + shape[0] % 4
    while i < n:
        j += 1
        k = 7 + shape[j % len(shape)] % 10
        s = " ".join(words[i : i + k])
        i += k
        out.append(s[:1].upper() + s[1:] + ".")
        in_par += 1
        if i < n:
            if in_par >= par_len:
                out.append("\n\n")
                in_par = 0
                par_len = 3 + shape[(j + 1) % len(shape)] % 4
            else:
                out.append(" ")
    return "".join(out), n, cut


_CAPTION_TAILS = (
    "Rendered in high resolution with crisp details and a clean, uncluttered composition.",
    "Highly detailed, sharp focus, balanced framing, professional quality, no watermark, no extra "
    "elements, soft even lighting, trending digital art style.",
)


def _generic_caption(quality: float, rng: random.Random) -> str:
    """A caption of an image the simulator cannot see: vocabulary words in a caption's frame."""
    pool = _VOCAB[: min(int(60 + 540 * quality), len(_VOCAB))]
    adjectives = _ADJECTIVES.split()
    n = rng.randint(20, 45)
    words = [rng.choice(pool) for _ in range(n - 6)]
    return (f"A {rng.choice(adjectives)} image of a {words[0]} with {' '.join(words[1:4])}, "
            f"{' '.join(words[4:])}, {rng.choice(adjectives)} and detailed.")


def _caption_text(images: Sequence[Mapping[str, str]], quality: float, rng: random.Random) -> str:
    from judgekit.pngtext import SCENE_KEY
    from judgekit.sim.scenes import Scene, describe

    scene = None
    for meta in images:
        if SCENE_KEY in meta:
            try:
                scene = Scene.from_json(meta[SCENE_KEY])
            except (ValueError, TypeError, KeyError):
                continue
            break
    out = describe(scene, quality=quality, rng=rng) if scene is not None else _generic_caption(quality, rng)
    if rng.random() < 0.03:  # a rambling caption, past the 70 words the clean-up keeps
        while len(out.split()) <= 70:
            out += " " + rng.choice(_CAPTION_TAILS)
    u = rng.random()
    if u < 0.02:
        out = f'"{out}"'
    elif u < 0.035:
        out += "</s>"
    elif u < 0.05:
        out += "<|im_end|>"
    return out


def completion_tokens_for(text: str) -> int:
    """Simulated completion tokens of a reply: ``round(words * 1.3)``, at least 1."""
    return max(1, round(len(text.split()) * _TOKENS_PER_WORD))


def _cut(text: str, max_tokens: int | None) -> tuple[str, str]:
    """Cut ``text`` to ``max_tokens * 0.75`` words; returns (text, finish_reason)."""
    if not max_tokens:
        return text, "stop"
    budget = max(1, int(max_tokens * _WORDS_PER_TOKEN))
    for i, m in enumerate(_WORD_RE.finditer(text), 1):
        if i == budget:
            rest = text[m.end() :]
            if rest.strip():
                return text[: m.end()], "length"
            break
    return text, "stop"


def make_reply(
    text: str,
    digest: bytes,
    *,
    quality: float = 0.5,
    max_tokens: int | None = None,
    garbage: bool = False,
    images: Sequence[Mapping[str, str]] = (),
    last_user_text: str | None = None,
    style: JudgeStyle | None = None,
) -> Reply:
    """The reply to a request whose prompt text is ``text``.

    ``digest`` (the request hash) seeds every draw; ``quality`` (0..1) is the answering
    model's quality, used for free-text answers and GuessBench guesses; ``garbage`` makes a
    judge reply unparseable (ignored for free-text answers and guesses, whose
    ``Reply.garbage`` stays False).  ``images`` holds one dict of PNG text labels per image of
    the request, in order (empty for an unlabelled image), and ``last_user_text`` the text of
    the last user message (None: ``text``); both only matter to GuessBench requests.
    ``style`` is the judging model's :class:`~judgekit.sim.judge_style.JudgeStyle` (None: the
    usual judge), read by pairwise, visual factuality and MMIE scoring requests.
    """
    rng = random.Random(int.from_bytes(digest[:16], "big"))
    last_user = text if last_user_text is None else last_user_text
    kind = classify(text, last_user)
    if kind in GUESS_KINDS:
        out, garbage = guess_reply(kind, text, last_user, images, rng, quality=quality, garbage=garbage)
    elif kind == KIND_PAIRWISE:
        out = pairwise_text(text, rng, garbage, style)
    elif kind == KIND_VFS:
        out = vfs_text(text, rng, garbage, style)
    elif kind in GENERIC_KINDS:
        out = generic_reply(kind, text, last_user, rng, garbage=garbage, style=style)
    elif kind == KIND_CAPTION:
        out = _caption_text(images, quality, rng)
    elif kind in MMIE_KINDS:
        out = mmie_reply(kind, text, rng, quality=quality, garbage=garbage, style=style)
        garbage = garbage and kind in MMIE_JUDGE_KINDS
    else:
        budget = max(1, int(max_tokens * _WORDS_PER_TOKEN)) if max_tokens else None
        out, n_words, cut = _answer_text(text, quality, rng, budget)
        tokens = max(1, round(n_words * _TOKENS_PER_WORD))
        return Reply(out, kind, "length" if cut else "stop", tokens, False)
    out, finish = _cut(out, max_tokens)
    return Reply(out, kind, finish, completion_tokens_for(out), garbage)
