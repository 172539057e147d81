"""GuessBench hints: from an answer and a seed, the three hints of a build set.

As the paper (section 2.2) and the shipped ``Hint_{1,2,3}.txt`` files describe, with N the
number of letters of the answer without spaces:

- Hint_1 reveals no letter (only the number of words and their lengths);
- Hint_2 reveals ceil(N/8) letters chosen at random;
- Hint_3 keeps Hint_2's letters and reveals more, ceil(N/4) in all.

("caterpillar", 11 letters: 0, 2, 3; "Glass of Milk", 11 letters: 0, 2, 3.)

A hint is a symbolic part and a sentence, laid out byte for byte as the released files
(``data/10/Hint_3.txt``, "rocking chair")::

    The answer format is as follows:·
                    c h a····
    _ _ _ _ _ _ _   _ _ _ _ _
    This means the answer consists of 2 words. The 1st word has 7 letters. The 2nd word has 5 letters. The 2nd word's 1st letter is c. The 2nd word's 2nd letter is h. The 2nd word's 3rd letter is a.·

(``·`` is a space.)  The header ends with a space; the blanks are one ``_`` per letter
separated by a space, words separated by three spaces; the line above them carries each revealed
letter (lower-cased) right above its blank and is as wide as the blanks line, and Hint_1, which
reveals none, has no such line; every sentence is followed by a space, the last one too, and the
file has no final line break.  For a one-word answer the sentence says "The 5th letter is r." as
in the paper (no released one-word hint was checked).
The reference's generator is not published; ours is seeded (``seed`` and the answer pick the
letters), so the same seed always gives the same hints.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

__all__ = ["generate_hints", "format_hint", "reveal_counts", "letter_count", "ordinal", "parse_hint",
           "HintInfo", "HEADER"]

HEADER = "The answer format is as follows:"
_WORD_GAP = "   "


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, 22nd, ..."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _words(answer: str) -> list[str]:
    words = answer.strip().split()
    if not words:
        raise ValueError("the answer is empty")
    return words


def letter_count(answer: str) -> int:
    """N: the letters of the answer without spaces."""
    return sum(len(w) for w in _words(answer))


def reveal_counts(answer: str) -> tuple[int, int, int]:
    """Letters revealed by Hint_1, Hint_2 and Hint_3: ``(0, ceil(N/8), ceil(N/4))``."""
    n = letter_count(answer)
    return 0, math.ceil(n / 8), math.ceil(n / 4)


def format_hint(answer: str, revealed: set[tuple[int, int]] | frozenset[tuple[int, int]]) -> str:
    """The hint text revealing the (word index, letter index) positions in ``revealed`` (0-based)."""
    words = _words(answer)
    blanks = _WORD_GAP.join(" ".join("_" * len(w)) for w in words)
    top = [" "] * len(blanks)
    col = 0
    for wi, w in enumerate(words):
        for li in range(len(w)):
            if (wi, li) in revealed:
                top[col + 2 * li] = w[li].lower()
        col += 2 * len(w) - 1 + len(_WORD_GAP)
    n_words = len(words)
    sentence = [f"This means the answer consists of {n_words} word{'s' if n_words != 1 else ''}."]
    sentence += [f"The {ordinal(i + 1)} word has {len(w)} letter{'s' if len(w) != 1 else ''}."
                 for i, w in enumerate(words)]
    for wi, li in sorted(revealed):
        letter = words[wi][li].lower()
        if n_words == 1:
            sentence.append(f"The {ordinal(li + 1)} letter is {letter}.")
        else:
            sentence.append(f"The {ordinal(wi + 1)} word's {ordinal(li + 1)} letter is {letter}.")
    letters = ["".join(top)] if revealed else []
    return "\n".join([HEADER + " ", *letters, blanks, "".join(f"{x} " for x in sentence)])


def generate_hints(answer: str, seed: int = 0) -> tuple[str, str, str]:
    """Hint_1, Hint_2, Hint_3 of ``answer``; the letters are drawn with ``seed``."""
    words = _words(answer)
    positions = [(wi, li) for wi, w in enumerate(words) for li in range(len(w))]
    _, k2, k3 = reveal_counts(answer)
    rng = random.Random(f"guessbench-hints/1\x1f{seed}\x1f{' '.join(words)}")
    order = rng.sample(positions, len(positions))  # a random order of every letter
    h2 = frozenset(order[:k2])
    h3 = frozenset(order[:k3])  # keeps Hint_2's letters
    return format_hint(answer, frozenset()), format_hint(answer, h2), format_hint(answer, h3)


@dataclass(frozen=True)
class HintInfo:
    """What a hint tells: word lengths and the revealed letters ((word, letter) 0-based -> char)."""

    word_lengths: tuple[int, ...]
    revealed: dict[tuple[int, int], str]

    def fits(self, guess: str) -> bool:
        """Whether ``guess`` has these word lengths and letters (case-insensitive)."""
        words = guess.lower().split()
        if tuple(len(w) for w in words) != self.word_lengths:
            return False
        return all(words[wi][li] == ch for (wi, li), ch in self.revealed.items())


_SENT_WORD = re.compile(r"The (\d+)(?:st|nd|rd|th) word has (\d+) letters?\.")
_SENT_LETTER = re.compile(r"The (?:(\d+)(?:st|nd|rd|th) word's )?(\d+)(?:st|nd|rd|th) letter is '?(\S)'?\.")


def parse_hint(text: str) -> HintInfo | None:
    """Read a hint back from its sentence (the last hint in ``text``); None when there is none."""
    start = text.rfind("This means the answer consists of")
    if start < 0:
        return None
    end = text.find("\n", start)
    sentence = text[start: end if end >= 0 else len(text)]
    lengths: dict[int, int] = {}
    for m in _SENT_WORD.finditer(sentence):
        lengths[int(m.group(1))] = int(m.group(2))
    if not lengths:
        return None
    revealed: dict[tuple[int, int], str] = {}
    for m in _SENT_LETTER.finditer(sentence):
        wi = int(m.group(1)) - 1 if m.group(1) else 0
        revealed[(wi, int(m.group(2)) - 1)] = m.group(3).lower()
    return HintInfo(tuple(lengths[k] for k in sorted(lengths)), revealed)
