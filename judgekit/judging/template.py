"""A prompt file the user names for a generic benchmark, and how it is filled in.

A placeholder is ``{name}`` with ``name`` an identifier (letters, digits, ``_``; not starting with a
digit).  ``{{`` and ``}}`` are literal braces; any other brace is left alone, so a prompt may hold
JSON (``{"score": 1}``) or ``[[A>B]]`` as it is.  :meth:`Template.render` fills every placeholder
in one pass, so a value (an answer that itself says ``{question}``) is never expanded.
``{images}`` marks where the item's images go, in order; a prompt without it gets the images
before its text (as Creation-MMBench sends them).  The hash of the text goes into every request's
cache key, so editing the prompt file asks the judge again.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from judgekit.errors import DataError, SpecError
from judgekit.tables import read_text
from judgekit.types import ImagePart, Message, Part, TextPart

__all__ = ["IMAGES", "Template", "read_template", "load_template", "checked_template", "text_or_file"]

#: the placeholder that places the images
IMAGES = "images"

#: a token of a template: an escaped brace, or a placeholder
_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Template:
    """A prompt template: its text, where it came from and the hash for cache keys."""

    def __init__(self, path: str, text: str):
        self.path = str(path)
        self.text = text
        self.hash = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        #: (start, end, name or None for an escaped brace) of every token, in order
        self._tokens = [(m.start(), m.end(), m.group(1)) for m in _TOKEN.finditer(text)]
        names = [name for _, _, name in self._tokens if name is not None]
        #: the placeholders it uses, each once, in order of first use
        self.placeholders: list[str] = list(dict.fromkeys(names))
        if names.count(IMAGES) > 1:
            second = [s for s, _, name in self._tokens if name == IMAGES][1]
            raise SpecError(f"{self.path} line {self._line(second)}: {{{IMAGES}}} appears more than once; "
                            f"it marks the one place the item's images go")

    def __repr__(self) -> str:
        return f"Template({self.path!r}, hash={self.hash!r}, placeholders={self.placeholders!r})"

    def _line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def check(self, allowed: set[str]) -> None:
        """SpecError naming the file, the line and the first placeholder not in ``allowed``
        (``{images}`` is always allowed)."""
        known = set(allowed) | {IMAGES}
        for start, _, name in self._tokens:
            if name is not None and name not in known:
                raise SpecError(f"{self.path} line {self._line(start)}: unknown placeholder {{{name}}} "
                                f"(known: {', '.join('{' + k + '}' for k in sorted(known))}; write {{{{ and }}}} "
                                f"for a literal brace)")

    def fill(self, values: dict[str, str]) -> list[str]:
        """The text filled in, cut at ``{images}``: one piece, or the pieces before and after it."""
        pieces: list[str] = []
        out: list[str] = []
        pos = 0
        for start, end, name in self._tokens:
            out.append(self.text[pos:start])
            pos = end
            if name is None:
                out.append(self.text[start])  # "{{" -> "{", "}}" -> "}"
            elif name == IMAGES:
                pieces.append("".join(out))
                out = []
            elif name in values:
                out.append(values[name])
            else:
                raise SpecError(f"{self.path} line {self._line(start)}: no value for placeholder {{{name}}}")
        out.append(self.text[pos:])
        pieces.append("".join(out))
        return pieces

    def render(self, values: dict[str, str], images: list[ImagePart]) -> Message:
        """One user message: the text filled in, the images at ``{images}`` (else before the text)."""
        pieces = self.fill(values)
        parts: list[Part]
        if len(pieces) == 1 or not images:
            parts = [*images, TextPart("".join(pieces))]
        else:
            before, after = pieces
            parts = [*([TextPart(before)] if before else []), *images, *([TextPart(after)] if after else [])]
            if not parts:
                parts = [TextPart("")]
        return Message("user", tuple(parts))


def read_template(path: str | Path, allowed: set[str] | None = None) -> Template:
    """The template in file ``path`` (a prompt a benchmark ships beside its code, read when it is
    imported), its placeholders checked against ``allowed`` when given (:meth:`Template.check`).
    A file that is missing or not UTF-8 is a SpecError naming it."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"prompt file not found: {path}")
    try:
        t = Template(str(path), read_text(path))
    except DataError as e:
        raise SpecError(str(e)) from None
    if allowed is not None:
        t.check(allowed)
    return t


def load_template(spec: Any, ref: str, *, option: str = "options.judge_prompt") -> Template:
    """The template ``ref`` names: a path relative to the spec file, ``samples:REL`` (a shipped
    sample) or ``prompts:REL`` (a prompt shipped with judgekit, e.g. ``prompts:pairwise/arena_hard.txt``).
    A file that is missing or not UTF-8 is a SpecError naming ``option``."""
    if not isinstance(ref, str) or not ref.strip():
        raise SpecError(f"{option}: must name a prompt file")
    if ref.startswith("prompts:"):
        from judgekit.resources import prompts_dir

        path = prompts_dir() / ref.split(":", 1)[1]
    else:
        path = Path(spec.resolve_path(ref))
    if not path.is_file():
        what = "is a folder, not a prompt file" if path.is_dir() else "file not found"
        raise SpecError(f"{option}: {what}: {path}")
    try:
        text = read_text(path)
    except DataError as e:
        raise SpecError(f"{option}: {e}") from None
    return Template(str(path), text)


def checked_template(spec: Any, ref: str, option: str, allowed: set[str]) -> Template:
    """:func:`load_template`, its placeholders checked against ``allowed`` (:meth:`Template.check`)."""
    t = load_template(spec, ref, option=option)
    t.check(allowed)
    return t


_FILE_SUFFIXES = (".txt", ".md", ".text", ".markdown", ".prompt")


def text_or_file(spec: Any, value: str, what: str) -> tuple[str, str]:
    """(text, hash) of an option that is a file or literal text (``options.WHAT``): ``samples:`` /
    ``prompts:`` names and a path to an existing file are read; a single line ending in .txt or .md
    that names no file is a SpecError (a typo must not become the text); anything else is the text
    itself."""
    if value.startswith("prompts:"):
        t = load_template(spec, value, option=f"options.{what}")
        return t.text, t.hash
    one_line = "\n" not in value.strip()
    path = spec.resolve_path(value) if one_line else None
    if path is not None and path.is_file():
        text = path.read_text(encoding="utf-8")
    elif one_line and (value.startswith("samples:") or Path(value.strip()).suffix.lower() in _FILE_SUFFIXES):
        raise SpecError(f"{spec.source_path}: options.{what}: no such file {path}")
    else:
        text = value
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
