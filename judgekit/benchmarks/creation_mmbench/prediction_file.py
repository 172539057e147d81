"""What the reference's prediction file does to an answer before its judge reads it.

VLMEvalKit stores the candidate's answers, next to the dataset's columns (the GPT-4o baseline
answer among them), in an ``.xlsx`` file (``pandas.DataFrame.to_excel`` through xlsxwriter with
its default options) and reads that file back with ``pandas.read_excel`` (openpyxl) before it
builds the judge prompts.  The swapped order of the dual evaluation writes the swapped columns
to a second ``.xlsx`` file and reads that one back too, so its answers make the trip twice.
:func:`round_trip` is one trip, text in, the text the judge prompt receives out:

* an empty answer is an empty cell, read back as NaN, and the prompt says ``nan``; so does an
  answer that is exactly one of pandas' NA spellings (``NA``, ``None``, ``null``, ``N/A`` ...);
* an answer starting with ``=`` (or ``{=`` and ending with ``}``) is written as a formula whose
  stored value is 0: the prompt says ``0``;
* an answer starting with ``http://``, ``https://``, ``ftp://``, ``ftps://``, ``mailto:``,
  ``internal:`` or ``external:`` and holding a ``:`` is written as a hyperlink: its shown text
  loses every ``mailto:`` (and the ``internal:``/``external:`` prefix; ``external:`` links turn
  ``/`` into ``\\``), and a link Excel can't hold (an escaped address or anchor over 2,079
  characters, a text over 32,767) is not written at all: ``nan``;
* any other answer longer than 32,767 characters (Excel's cell limit, counted in code points)
  is cut there;
* a control character (``\\r``, ``\\x01`` ...; not ``\\t`` or ``\\n``) comes back as its
  ``_x000D_``-style escape, and every ``x005F_`` in the text is dropped (openpyxl's reading of
  the escape xlsxwriter puts before a literal ``_xHHHH_``).

Measured on xlsxwriter 3.2.0, openpyxl 3.1.5 and pandas 2.2.3 (the versions of early 2025).  A
column-wide conversion pandas makes when *every* answer of the file reads as a number (or a
boolean) is not reproduced: with hundreds of written answers it does not happen.
"""

from __future__ import annotations

import re

__all__ = ["FAIL_MSG", "CELL_MAX", "URL_MAX", "NA_STRINGS", "NAN_TEXT", "round_trip", "as_judged"]

#: the answer the reference's API wrapper returns when a call failed after its retries; its
#: judge is then asked about this text like any other answer
FAIL_MSG = "Failed to obtain answer via API."

#: the longest text an Excel cell holds
CELL_MAX = 32767
#: the longest hyperlink address (or anchor) xlsxwriter writes
URL_MAX = 2079

#: the cell texts ``pandas.read_excel`` reads as NaN (pandas' default NA spellings)
NA_STRINGS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})

_NAN = NAN_TEXT = "nan"  # what str.format makes of NaN
_LINK = re.compile(r"(?:ftp|http)s?://|mailto:|(?:in|ex)ternal:")
_ESCAPE_LIKE = re.compile(r"(_x[0-9a-fA-F]{4}_)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
_ALREADY_ESCAPED = re.compile(r"%[0-9a-fA-F]{2}")
# xlsxwriter's own percent-escapes of an address ("%" first, so no escape is escaped again)
_URL_ESCAPES = (("%", "%25"), ('"', "%22"), (" ", "%20"), ("<", "%3c"), (">", "%3e"), ("[", "%5b"),
                ("]", "%5d"), ("^", "%5e"), ("`", "%60"), ("{", "%7b"), ("}", "%7d"))


def _escape_url(url: str) -> str:
    if _ALREADY_ESCAPED.search(url):
        return url
    for char, escape in _URL_ESCAPES:
        url = url.replace(char, escape)
    return url


def _link_text(text: str) -> str | None:
    """The text a hyperlink cell shows for ``text``, or None when xlsxwriter writes no cell."""
    address, shown = text, text
    internal = address.startswith("internal:")
    if internal:
        address, shown = address.replace("internal:", ""), shown.replace("internal:", "")
    external = address.startswith("external:")
    if external:
        address = address.replace("external:", "").replace("/", "\\")
        shown = shown.replace("external:", "").replace("/", "\\")
    shown = shown.replace("mailto:", "")
    if len(shown) > CELL_MAX:
        return None
    anchor: str | None = shown
    if not internal:
        address, sep, rest = address.partition("#")
        anchor = rest if sep else None
        address = _escape_url(address)
        if anchor is not None and not external:
            anchor = _escape_url(anchor)
        if re.match(r"\w:", address) or address.startswith("\\"):
            address = "file:///" + address
        address = re.sub(r"^\.\\", "", address)
    if len(address) > URL_MAX or len(anchor or "") > URL_MAX:
        return None
    return shown


def _stored_and_read(cell: str) -> str:
    """A string cell as xlsxwriter stores it and openpyxl reads it back."""
    stored = _ESCAPE_LIKE.sub(r"_x005F\1", cell)
    stored = _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", stored)
    stored = stored.replace("\ufffe", "_xFFFE_").replace("\uffff", "_xFFFF_")
    return stored.replace("x005F_", "")


def round_trip(text: str) -> str:
    """``text`` after one trip through the reference's ``.xlsx`` file, as its prompt shows it."""
    if text == "":
        return _NAN
    if text.startswith("=") or (text.startswith("{=") and text.endswith("}")):
        return "0"
    if ":" in text and _LINK.match(text):
        cell = _link_text(text)
        if cell is None:
            return _NAN
    else:
        cell = text[:CELL_MAX]
    read = _stored_and_read(cell)
    return _NAN if read in NA_STRINGS else read


def as_judged(text: str, order: int) -> str:
    """An answer as the reference's judge reads it in ``order`` 0 (one trip through the
    prediction file) or 1 (the swapped file: a second trip)."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, not {order!r}")
    once = round_trip(text)
    return once if order == 0 else round_trip(once)
