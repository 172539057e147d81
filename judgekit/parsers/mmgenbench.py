"""MMGenBench's caption clean-up, between the candidate's reply and the text-to-image model.

As the reference pipeline: chat-template leftovers (``</s>``, ``<|im_end|>``) and quotes are
removed, then the caption is cut to its first 70 whitespace-separated words.  Which quotes: the
straight and curly double quotes anywhere (models wrap prompts in them, and a text-to-image
model would draw them), and single quotes only where they wrap the whole caption (inside, they
are apostrophes).  Whitespace runs become single spaces, since the words are re-joined.

The raw reply and the cleaned caption are both kept by the benchmark; :class:`Caption` says what
the clean-up did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Caption", "clean_caption", "MAX_WORDS", "LEFTOVERS"]

MAX_WORDS = 70
#: chat-template tokens a model may leave in its reply
LEFTOVERS = ("</s>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")
_DOUBLE_QUOTES = re.compile('["\u201c\u201d\u201e\u00ab\u00bb]')
_SINGLE_WRAP = (("'", "'"), ("\u2018", "\u2019"), ("`", "`"))


@dataclass(frozen=True)
class Caption:
    text: str  # what goes to the text-to-image model
    words: int  # words in ``text``
    words_before_cut: int
    leftovers_removed: bool

    @property
    def cut(self) -> bool:
        return self.words_before_cut > self.words


def clean_caption(raw: str, max_words: int = MAX_WORDS) -> Caption:
    """The caption a text-to-image model gets from a candidate's raw reply."""
    text = raw or ""
    removed = False
    for token in LEFTOVERS:
        if token in text:
            text = text.replace(token, " ")
            removed = True
    text = _DOUBLE_QUOTES.sub("", text).strip()
    for left, right in _SINGLE_WRAP:
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            text = text[1:-1].strip()
    words = text.split()
    kept = words[:max_words] if max_words > 0 else words
    return Caption(" ".join(kept), len(kept), len(words), removed)
