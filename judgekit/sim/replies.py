"""Deterministic replies of the simulator: the benchmark-neutral core of what it answers.

Every reply is a pure function of a 32-byte request digest (sha256 of the seed and the
canonical request, see ``judgekit.sim.protocol``) and the request's text, so the same request
always gets the same reply.

What kind of request it is, and who answers it, is up to the simulated behaviours
(:mod:`judgekit.sim.behaviours`): each benchmark brings its own (a judge, a scorer, a guesser, a
captioner), the core brings the common judge formats (:mod:`judgekit.sim.generic_judge`).
:func:`classify` asks them in precedence order; a request none of them claims is an ``answer``:
free prose from a fixed word list (:data:`VOCAB`) mixed with words of the prompt.

How judges favour better models without knowing who wrote an answer: a candidate model of
quality ``q`` (``SimConfig.model_quality``) writes longer answers drawn from a larger
vocabulary, and a simulated judge scores each answer by those same surface features
(:func:`judgekit.sim.judge_replies.answer_quality`); a judge model's
:class:`~judgekit.sim.judge_style.JudgeStyle` adds its position bias, verbosity bias, noise, tie
readiness and leniency.

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

from judgekit.sim.behaviours import Behaviour, Request
from judgekit.sim.behaviours import load as load_behaviours
from judgekit.sim.judge_replies import PUNCT_TABLE, VERDICTS, answer_quality
from judgekit.sim.judge_style import JudgeStyle, verdict_probabilities

__all__ = [
    "Reply",
    "VERDICTS",
    "KIND_ANSWER",
    "VOCAB",
    "ADJECTIVES",
    "classify",
    "answer_quality",
    "verdict_probabilities",
    "JudgeStyle",
    "make_reply",
    "completion_tokens_for",
]

KIND_ANSWER = "answer"

_WORDS_PER_TOKEN = 0.75
_TOKENS_PER_WORD = 1.3


@dataclass(slots=True)
class Reply:
    """One generated reply.

    ``kind`` is ``answer`` or a kind of the behaviour that answered (``pairwise``, ``guess``,
    ``caption``...); ``garbage`` tells whether a judge reply was deliberately made unparseable.
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


#: the simulator's word list, common words first (free-text answers draw a prefix of it)
VOCAB = _build_vocab()
#: adjectives of the word list, in order
ADJECTIVES: tuple[str, ...] = tuple(_ADJECTIVES.split())

_WORD_RE = re.compile(r"\S+")


# ----------------------------------------------------------------------------------------
# classification
# ----------------------------------------------------------------------------------------


def classify(text: str, last_user_text: str | None = None,
             behaviours: Sequence[Behaviour] | None = None) -> str:
    """The kind of request: that of the first behaviour (in precedence order) that claims it, or
    ``answer``.

    ``last_user_text`` is the text of the last user message (GuessBench's review turns are
    recognised there); None takes the whole ``text``.  ``behaviours`` defaults to the built-in
    ones (:func:`judgekit.sim.behaviours.load`).
    """
    return _claim(text, text if last_user_text is None else last_user_text, behaviours)[1]


def _claim(text: str, last_user: str,
           behaviours: Sequence[Behaviour] | None) -> tuple[Behaviour | None, str]:
    for b in load_behaviours() if behaviours is None else behaviours:
        kind = b.classify(text, last_user)
        if kind is not None:
            return b, kind
    return None, KIND_ANSWER


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
    pool = VOCAB[: min(int(60 + 540 * quality), len(VOCAB))]
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
    behaviours: Sequence[Behaviour] | None = None,
) -> Reply:
    """The reply to a request whose prompt text is ``text``.

    ``digest`` (the request hash) seeds every draw; ``quality`` (0..1) is the answering
    model's quality; ``garbage`` asks for an unparseable judge reply (a behaviour's judge honours
    it; free-text answers and candidates' replies ignore it).  ``images`` holds one dict of PNG
    text labels per image of the request, in order (empty for an unlabelled image), and
    ``last_user_text`` the text of the last user message (None: ``text``).  ``style`` is the
    judging model's :class:`~judgekit.sim.judge_style.JudgeStyle` (None: the usual judge).
    ``behaviours`` are the simulated behaviours asked, in order (None: the built-in ones).
    """
    rng = random.Random(int.from_bytes(digest[:16], "big"))
    last_user = text if last_user_text is None else last_user_text
    behaviour, kind = _claim(text, last_user, behaviours)
    if behaviour is None:
        budget = max(1, int(max_tokens * _WORDS_PER_TOKEN)) if max_tokens else None
        out, n_words, cut = _answer_text(text, quality, rng, budget)
        tokens = max(1, round(n_words * _TOKENS_PER_WORD))
        return Reply(out, kind, "length" if cut else "stop", tokens, False)
    request = Request(text, last_user, images, quality, garbage, style)
    out, garbage = behaviour.reply(kind, request, rng)
    out, finish = _cut(out, max_tokens)
    return Reply(out, kind, finish, completion_tokens_for(out), garbage)
