"""Reading delimited text tables (TSV/CSV) with errors that name the file and the row.

:func:`read_rows` opens the file, reads the header (stripped, a UTF-8 byte-order mark dropped) and
returns the data rows numbered from 1 after the header, blank lines skipped.  A missing file, an
empty file, a folder, a file that is not UTF-8 (:func:`not_utf8` names the line and byte), a
malformed line and a row whose field count differs from the header's are
:class:`~judgekit.errors.DataError`\\ s; what the columns mean is the caller's business.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from .errors import DataError

__all__ = ["read_rows", "not_utf8", "read_text", "read_json", "loads_json"]


def not_utf8(path: str | Path) -> DataError:
    """The error for a text file that does not decode as UTF-8, naming the line and the byte of
    the first bad sequence (found by reading the file again, a line at a time)."""
    offset = 0
    try:
        with open(path, "rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as e:
                    return DataError(str(path), f"not UTF-8: line {lineno}, byte {offset + e.start} "
                                                f"(0x{line[e.start]:02x}); save the file as UTF-8")
                offset += len(line)
    except OSError as e:
        return DataError(str(path), f"cannot read: {e.strerror or e}")
    return DataError(str(path), "not UTF-8")


def read_text(path: str | Path) -> str:
    """A UTF-8 text file (a byte-order mark dropped); unreadable or not UTF-8 is a DataError."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise DataError(str(path), f"cannot read: {e.strerror or e}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_utf8(path) from None


def loads_json(text: str, path: str | Path, *, row: object = None) -> Any:
    """``json.loads`` whose every failure is a DataError naming the file (and ``row``): bad
    syntax (line and column), nesting too deep for the parser, an integer too long to read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(str(path), f"bad JSON at line {e.lineno}, column {e.colno}: {e.msg}", row=row) from None
    except RecursionError:
        raise DataError(str(path), "bad JSON: nested too deeply to read", row=row) from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        raise DataError(str(path), f"bad JSON: {e}", row=row) from None


def read_json(path: str | Path) -> Any:
    """A UTF-8 JSON file, parsed; every failure is a DataError naming the file."""
    return loads_json(read_text(path), path)


def read_rows(path: str | Path, *, delimiter: str = ",", kind: str = "CSV",
              strict: bool = False) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """``(header, [(row number, cells), ...])`` of a delimited file."""
    p = Path(path)
    try:
        fh = p.open("r", encoding="utf-8-sig", newline="")
    except OSError as e:
        raise DataError(str(p), f"cannot open: {e.strerror or e}") from None
    with fh:
        try:
            return _read(p, fh, delimiter, kind, strict)
        except UnicodeDecodeError:
            raise not_utf8(p) from None
        except OSError as e:  # a folder opens on some systems and fails on the first read
            raise DataError(str(p), f"cannot read: {e.strerror or e}") from None


def _read(p: Path, fh, delimiter: str, kind: str, strict: bool) -> tuple[list[str], list[tuple[int, list[str]]]]:
    rows: list[tuple[int, list[str]]] = []
    reader = csv.reader(fh, delimiter=delimiter, strict=strict)
    try:
        header = next(reader)
    except StopIteration:
        raise DataError(str(p), "empty file (no header row)") from None
    except csv.Error as e:
        raise DataError(str(p), f"unreadable header: {e}", row=0) from None
    header = [h.strip() for h in header]
    n = 0
    try:
        for n, cells in enumerate(reader, start=1):
            if all(not c.strip() for c in cells):
                continue  # a blank line
            if len(cells) != len(header):
                raise DataError(str(p), f"{len(cells)} fields, header has {len(header)}", row=n)
            rows.append((n, cells))
    except csv.Error as e:
        raise DataError(str(p), f"malformed {kind}: {e}", row=n + 1) from None
    return header, rows
