"""Reading delimited text tables (TSV/CSV) with errors that name the file and the row.

:func:`open_rows` opens the file, reads the header (stripped, a UTF-8 byte-order mark dropped) and
returns it with an iterator over the data rows, numbered from 1 after the header, blank lines
skipped; :func:`read_rows` is the same as one list.  A missing file, an empty file, a folder, a
file that is not UTF-8 (:func:`not_utf8` names the line and byte), a malformed line and a row
whose field count differs from the header's are :class:`~judgekit.errors.DataError`\\ s; what
the columns mean is the caller's business.

What is read is exactly what Python's :mod:`csv` module reads (``delimiter``, ``"`` quotes,
doubled quotes inside them, ``strict`` as given, no limit on a field's size), but fast: the
benchmarks' files are written by pandas (``to_csv``: a field holding the delimiter, a quote or a
line break is quoted and its quotes doubled) and the Creation-MMBench TSV is hundreds of
megabytes of base64 images, which the csv module reads a character at a time.  Records are cut
from the file's bytes with the C-speed ``bytes`` and ``str`` methods (a record ends at a line
break outside quotes: an even count of ``"`` so far), and each field is either unquoted (no
quote, no carriage return) or quoted from its first character to a closing quote followed by the
delimiter or the end of the record.  Anything else (a quote inside an unquoted field, text after
a closing quote, a carriage return outside quotes other than a ``\\r\\n`` line end, a quote left
open at the end of the file) is read by the csv module from there on, so the answer is always the
csv module's.  Rows stream: the file is never held whole in memory.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import DataError

__all__ = ["open_rows", "read_rows", "not_utf8", "read_text", "read_json", "loads_json"]

_BOM = b"\xef\xbb\xbf"
#: a record this long without its quotes closing is left to the csv module (a stray quote early in
#: a big file would otherwise gather the rest of the file into one record before it is noticed)
_MAX_OPEN_RECORD = 1 << 28


def not_utf8(path: str | Path, *, row: int | None = None) -> DataError:
    """The error for a text file that does not decode as UTF-8, naming the line and the byte of
    the first bad sequence (found by reading the file again, a line at a time), and the data row
    (numbered as :func:`open_rows` numbers them, 0 for the header) when the caller knows it."""
    offset = 0
    where = "" if row is None else (" (the header)" if row == 0 else f" (data row {row})")
    try:
        with open(path, "rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as e:
                    return DataError(str(path), f"not UTF-8: line {lineno}, byte {offset + e.start} "
                                                f"(0x{line[e.start]:02x}){where}; save the file as UTF-8")
                offset += len(line)
    except OSError as e:
        return DataError(str(path), f"cannot read: {e.strerror or e}")
    return DataError(str(path), f"not UTF-8{where}")


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
    """``(header, [(row number, cells), ...])`` of a delimited file (see :func:`open_rows`)."""
    header, rows = open_rows(path, delimiter=delimiter, kind=kind, strict=strict)
    return header, list(rows)


def open_rows(path: str | Path, *, delimiter: str = ",", kind: str = "CSV",
              strict: bool = False) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """``(header, iterator of (row number, cells))`` of a delimited file, read as it is iterated.

    The header is read (and its errors raised) before this returns; a later row's error is raised
    when the iteration reaches it.  The file is closed when the iterator ends or is closed.
    """
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise ValueError(f"unsupported delimiter {delimiter!r}")
    p = Path(path)
    try:
        fh = p.open("rb", buffering=1 << 20)
    except OSError as e:
        raise DataError(str(p), f"cannot open: {e.strerror or e}") from None
    rows = _rows(p, fh, delimiter, kind, strict)
    try:
        header = next(rows)
    except BaseException:
        rows.close()
        raise
    assert isinstance(header, list)
    return header, rows  # type: ignore[return-value]


def _rows(p: Path, fh: IO[bytes], delimiter: str, kind: str, strict: bool) -> Iterator[Any]:
    """Yields the stripped header, then ``(n, cells)`` for each row that is not blank."""
    with fh:
        records = _records(p, fh, delimiter, kind, strict)
        try:
            header = next(records)
        except StopIteration:
            raise DataError(str(p), "empty file (no header row)") from None
        header = [h.strip() for h in header]
        yield header
        for n, cells in enumerate(records, start=1):
            if all(not c.strip() for c in cells):
                continue  # a blank line
            if len(cells) != len(header):
                raise DataError(str(p), f"{len(cells)} fields, header has {len(header)}", row=n)
            yield n, cells


class _Irregular(Exception):
    """The fast reader met something only the csv module reads exactly."""


def _records(p: Path, fh: IO[bytes], delimiter: str, kind: str, strict: bool) -> Iterator[list[str]]:
    """Every record of the file (the header first), as the csv module reads them."""
    done = 0  # records yielded (the header is record 0)
    delim = delimiter.encode("ascii")
    try:
        for raw in _raw_records(fh):
            fields = _split(raw, delim)
            if fields is None:
                raise _Irregular
            try:
                cells = [f.decode("utf-8") for f in fields]
            except UnicodeDecodeError:
                raise not_utf8(p, row=done) from None
            yield cells
            done += 1
        return
    except _Irregular:
        pass
    except OSError as e:  # a folder opens on some systems and fails on the first read
        raise DataError(str(p), f"cannot read: {e.strerror or e}") from None
    yield from _csv_records(p, delimiter, kind, strict, skip=done)


def _raw_records(fh: IO[bytes]) -> Iterator[bytes]:
    """The file's records as bytes, line end removed: a record ends at a line break after an even
    number of quotes.  Raises _Irregular for a quote still open at the end of the file."""
    pending: list[bytes] = []
    size = quotes = 0
    first = True
    for line in fh:
        if first:
            first = False
            if line.startswith(_BOM):
                line = line[len(_BOM):]
                if not line:  # the file is a byte-order mark and nothing else
                    return
        quotes += line.count(b'"')
        if quotes & 1:
            pending.append(line)
            size += len(line)
            if size > _MAX_OPEN_RECORD:
                raise _Irregular
            continue
        if pending:
            pending.append(line)
            line = b"".join(pending)
            pending, size = [], 0
        quotes = 0
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        yield line
    if pending:
        raise _Irregular


def _split(record: bytes, delimiter: bytes) -> list[bytes] | None:
    """The fields of one record (bytes: the delimiter, the quote and the line breaks are ASCII, so
    they never occur inside a UTF-8 sequence), or None when it holds anything but plain unquoted
    fields and well-formed quoted ones (see the module docstring)."""
    if b'"' not in record:
        if b"\r" in record or b"\n" in record:
            return None
        return record.split(delimiter) if record else []
    cells: list[bytes] = []
    i, n = 0, len(record)
    while True:
        if record.startswith(b'"', i):
            parts = []
            j = i + 1
            while True:
                k = record.find(b'"', j)
                if k < 0:
                    return None
                parts.append(record[j:k])
                if record.startswith(b'"', k + 1):  # a doubled quote
                    parts.append(b'"')
                    j = k + 2
                    continue
                break
            cells.append(parts[0] if len(parts) == 1 else b"".join(parts))
            i = k + 1
            if i == n:
                return cells
            if not record.startswith(delimiter, i):
                return None
            i += 1
        else:
            k = record.find(delimiter, i)
            field = record[i:] if k < 0 else record[i:k]
            if b'"' in field or b"\r" in field or b"\n" in field:
                return None
            cells.append(field)
            if k < 0:
                return cells
            i = k + 1


def _raise_field_limit() -> None:
    limit = sys.maxsize
    while True:  # C long may be 32-bit on some platforms
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def _csv_records(p: Path, delimiter: str, kind: str, strict: bool, *, skip: int) -> Iterator[list[str]]:
    """The records from the csv module, the first ``skip`` (already read) left out."""
    _raise_field_limit()
    try:
        fh = p.open("r", encoding="utf-8-sig", newline="")
    except OSError as e:
        raise DataError(str(p), f"cannot open: {e.strerror or e}") from None
    n = -1  # the last record read: -1 none, 0 the header, then the data rows
    with fh:
        reader = csv.reader(fh, delimiter=delimiter, strict=strict)
        try:
            for n, cells in enumerate(reader):
                if n >= skip:
                    yield cells
        except csv.Error as e:
            if n < 0:
                raise DataError(str(p), f"unreadable header: {e}", row=0) from None
            raise DataError(str(p), f"malformed {kind}: {e}", row=n + 1) from None
        except UnicodeDecodeError:
            raise not_utf8(p) from None
        except OSError as e:
            raise DataError(str(p), f"cannot read: {e.strerror or e}") from None
