"""Counted nouns in what judgekit tells a user: ``plural(1, "image")`` is '1 image',
``plural(3, "image")`` '3 images', ``plural(2, "reply")`` '2 replies'.  Every message that puts
a count before a noun goes through it, so no message reads '1 images'."""

from __future__ import annotations

__all__ = ["plural", "plural_word"]


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` (with thousands separators) and ``word``, in its plural form unless ``n`` is 1: ``many``
    where given, else the regular form of the phrase's last word (:func:`plural_word`)."""
    return f"{n:,} {plural_word(n, word, many)}"


def plural_word(n: int, word: str, many: str | None = None) -> str:
    """``word`` as it goes after the count ``n``: itself for 1, else ``many`` or the regular plural
    of its last word (reply -> replies, batch -> batches, decisive verdict -> decisive verdicts)."""
    if n == 1:
        return word
    if many is not None:
        return many
    head, _, last = word.rpartition(" ")
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}" if head else last
