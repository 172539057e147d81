"""Where the shipped prompts, run specs and samples are, installed or in a checkout.

In a checkout they are the repository's ``prompts/``, ``runners/`` and ``data/`` folders, reached
through the symlinks ``judgekit/_prompts``, ``judgekit/_runners`` and ``judgekit/_samples``; an
installed wheel holds copies of them under the same names (see pyproject.toml).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["prompts_dir", "runners_dir", "samples_dir", "load_prompt", "Prompt"]

_HERE = Path(__file__).resolve().parent


def prompts_dir() -> Path:
    return _HERE / "_prompts"


def runners_dir() -> Path:
    return _HERE / "_runners"


def samples_dir() -> Path:
    return _HERE / "_samples"


class Prompt:
    """A prompt template file: its text and the hash that goes into every cache key it makes.

    Placeholders are ``{name}`` fields filled by :meth:`render`; the template's other braces are
    left alone, so prompt files can hold literal JSON or ``[[A>B]]``.
    """

    def __init__(self, name: str, text: str):
        self.name = name
        self.text = text
        self.hash = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def render(self, **fields: str) -> str:
        """Fill ``{name}`` fields in one pass, so a value that itself contains ``{other}`` (a
        candidate's answer, say) is never expanded."""
        if not fields:
            return self.text
        pattern = re.compile("|".join(re.escape("{" + k + "}") for k in fields))
        return pattern.sub(lambda m: fields[m.group(0)[1:-1]], self.text)


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    """Load ``prompts/<name>`` (e.g. ``creation_mmbench/pairwise_judge.txt``)."""
    path = prompts_dir() / name
    return Prompt(name, path.read_text(encoding="utf-8"))
