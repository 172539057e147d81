"""Reading delimited text tables (TSV/CSV) with errors that name the file and the row.

:func:`read_rows` opens the file, reads the header (stripped, a UTF-8 byte-order mark dropped) and
returns the data rows numbered from 1 after the header, blank lines skipped.  A missing file, an
empty file, a malformed line and a row whose field count differs from the header's are
:class:`~judgekit.errors.DataError`\\ s; what the columns mean is the caller's business.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .errors import DataError

__all__ = ["read_rows"]


def read_rows(path: str | Path, *, delimiter: str = ",", kind: str = "CSV",
              strict: bool = False) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """``(header, [(row number, cells), ...])`` of a delimited file."""
    p = Path(path)
    try:
        fh = p.open("r", encoding="utf-8-sig", newline="")
    except OSError as e:
        raise DataError(str(p), f"cannot open: {e.strerror or e}") from None
    rows: list[tuple[int, list[str]]] = []
    with fh:
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
