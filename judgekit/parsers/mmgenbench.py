"""MMGenBench's caption clean-up, between the candidate's reply and the text-to-image model.

Two rules; the raw reply and the cleaned caption are both kept by the benchmark, and
:class:`Caption` says what the clean-up did.

:func:`reference_caption` (the default) is the authors' rule: the model's reply goes through
VLMEvalKit's prediction spreadsheet (``pd.read_excel``, then ``str``: a reply that is exactly one
of pandas' missing-value strings, such as ``""``, ``"None"`` or ``"NA"``, comes back as
``"nan"``), then MMGenBench's ``generate/run.py`` strips double quotes at both ends, and
``generate/tools.py::pre_caption`` drops a final ``</s>``, removes every ``<|im_end|>`` when the
caption ends with one, strips double quotes at both ends again, newlines at the end, spaces at both
ends, and keeps the first 70 pieces of ``split(' ')`` re-joined with single spaces.  Nothing else:
a ``</s>`` or ``<|im_end|>`` inside the caption stays, inner quotes stay, runs of spaces stay (and
count as pieces), newlines inside stay.

:func:`clean_caption` is judgekit's rule (``options.clean_captions``): every chat-template leftover
anywhere, straight and curly double quotes anywhere (models wrap prompts in them, and a
text-to-image model would draw them), single quotes only where they wrap the whole caption
(inside, they are apostrophes), whitespace runs made single spaces, cut to 70 whitespace-separated
words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Caption", "clean_caption", "reference_caption", "MAX_WORDS", "LEFTOVERS", "PANDAS_NA_STRINGS"]

MAX_WORDS = 70
#: chat-template tokens a model may leave in its reply
LEFTOVERS = ("</s>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")
_DOUBLE_QUOTES = re.compile('["\u201c\u201d\u201e\u00ab\u00bb]')
_SINGLE_WRAP = (("'", "'"), ("\u2018", "\u2019"), ("`", "`"))
#: the strings pandas (2.x) reads as a missing value by default; ``str`` of that NaN is ``"nan"``
PANDAS_NA_STRINGS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                               "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


@dataclass(frozen=True)
class Caption:
    text: str
    """What goes to the text-to-image model."""
    words: int
    """Words in ``text``: pieces of ``split(' ')`` under the reference rule (two spaces in a row
    make an empty piece, which counts), whitespace-separated words under judgekit's; 0 when empty."""
    words_before_cut: int
    """The same count before the cut."""
    leftovers_removed: bool
    """A chat-template leftover was removed."""

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


def reference_caption(raw: str, max_words: int = MAX_WORDS) -> Caption:
    """The caption the authors' code draws from a candidate's raw reply (see the module's doc)."""
    text = "nan" if raw in PANDAS_NA_STRINGS else raw  # VLMEvalKit's .xlsx, read back by pandas
    text = text.strip('"')  # generate/run.py, before pre_caption
    removed = False
    if text.endswith("</s>"):
        text, removed = text[:-4], True
    if text.endswith("<|im_end|>"):
        text, removed = text.replace("<|im_end|>", ""), True
    text = text.strip('"').rstrip("\n").strip(" ")
    pieces = text.split(" ")
    before = len(pieces) if text else 0
    if len(pieces) > max_words:
        text = " ".join(pieces[:max_words])
    return Caption(text, min(before, max_words), before, removed)
