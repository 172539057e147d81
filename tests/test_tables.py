"""judgekit.tables: the fast TSV/CSV reader reads exactly what the csv module reads (the rows, or the
same error), on files pandas would write (VLMEvalKit's ``to_csv(sep='\\t')``, minimal or full
quoting) and on any text at all; files that are not UTF-8 name the line, the byte and the row."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.errors import DataError
from judgekit.tables import open_rows, read_rows

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def csv_module_rows(path: Path, *, delimiter: str, strict: bool, kind: str = "TSV"):
    """The rule read_rows had before the fast reader: csv.reader over the decoded text, the header
    stripped, blank rows skipped, a row of another width an error."""
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter, strict=strict)
        try:
            header = next(reader)
        except StopIteration:
            return ("error", "empty file (no header row)")
        except csv.Error as e:
            return ("error", f"row 0: unreadable header: {e}")
        header = [h.strip() for h in header]
        rows, n = [], 0
        try:
            for n, cells in enumerate(reader, start=1):
                if all(not c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    return ("error", f"row {n}: {len(cells)} fields, header has {len(header)}")
                rows.append((n, cells))
        except csv.Error as e:
            return ("error", f"row {n + 1}: malformed {kind}: {e}")
    return ("ok", header, rows)


def fast_rows(path: Path, *, delimiter: str, strict: bool, kind: str = "TSV"):
    try:
        header, rows = read_rows(path, delimiter=delimiter, kind=kind, strict=strict)
    except DataError as e:
        message = str(e).split(f"{path}", 1)[1].lstrip(", :")
        return ("error", message)
    return ("ok", header, rows)


# --------------------------------------------------------------------------- written by pandas / csv

CELL = st.lists(st.sampled_from(list('ab "\t\n\r,;é日\x00\ufeff\\\'') + ["ab", '""', "\r\n"]),
                max_size=12).map("".join)


@FAST
@given(rows=st.lists(st.lists(CELL, min_size=3, max_size=3), max_size=6),
       delimiter=st.sampled_from(["\t", ","]), quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
       newline=st.sampled_from(["\n", "\r\n"]), strict=st.booleans())
def test_written_tables_round_trip(tmp_path_factory, rows, delimiter, quoting, newline, strict):
    path = tmp_path_factory.mktemp("t") / "t.tsv"
    buf = io.StringIO(newline="")
    w = csv.writer(buf, delimiter=delimiter, quoting=quoting, lineterminator=newline)
    w.writerow(["index", "text", "image"])
    w.writerows(rows)
    path.write_bytes(buf.getvalue().encode("utf-8"))
    got = fast_rows(path, delimiter=delimiter, strict=strict)
    assert got == csv_module_rows(path, delimiter=delimiter, strict=strict)
    # what was written is what is read, but for the rows read_rows skips as blank, and a carriage
    # return the writer left unquoted (it quotes only the characters of its line terminator; the
    # csv module, and pandas' reader, then end the record there)
    if quoting == csv.QUOTE_ALL or newline == "\r\n" or not any("\r" in c for r in rows for c in r):
        expected = [(n, r) for n, r in enumerate(rows, start=1) if not all(not c.strip() for c in r)]
        assert got == ("ok", ["index", "text", "image"], expected)


# --------------------------------------------------------------------------- any text at all

RAW = st.lists(st.sampled_from(list('a "\t\n\r,x') + ['"\t', '\t"', '""', "\r\n", '"\n', "é"]),
               max_size=40).map("".join)


@FAST
@given(text=RAW, delimiter=st.sampled_from(["\t", ","]), strict=st.booleans(), bom=st.booleans())
def test_any_text_reads_as_the_csv_module_reads_it(tmp_path_factory, text, delimiter, strict, bom):
    path = tmp_path_factory.mktemp("t") / "t.tsv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    assert fast_rows(path, delimiter=delimiter, strict=strict) == csv_module_rows(path, delimiter=delimiter,
                                                                                   strict=strict)


@pytest.mark.parametrize("body", [
    'a\tb\n1\t"x"y\n',  # text after a closing quote: strict error, else 'xy'
    'a\tb\n1\tx"y\n',  # a quote inside an unquoted field: literal
    'a\tb\n1\t2\r3\t4\n',  # a bare carriage return ends a record
    'a\tb\n1\t"open\n',  # a quote left open at the end
    'a\tb\r\n1\t"x\r\ny"\r\n\r\n2\t""""\r\n',  # Windows line ends, one inside quotes, a blank line
    '\ufeffa \t b\n1\t2\n',  # a byte-order mark and a header to strip
    'a\tb\n\n \t \n1\t2\n',  # blank and white-space rows are skipped, their numbers kept
    'a\tb\n1\t2\n3\n',  # a short row
    '',  # empty
])
@pytest.mark.parametrize("strict", [False, True])
def test_tricky_files(tmp_path, body, strict):
    path = tmp_path / "t.tsv"
    path.write_bytes(body.encode("utf-8"))
    assert fast_rows(path, delimiter="\t", strict=strict) == csv_module_rows(path, delimiter="\t", strict=strict)


def test_irregular_record_late_in_a_file_is_read_by_the_csv_module_from_there(tmp_path):
    lines = ["index\ttext\timage"] + [f'{i}\t"line ""{i}""\nmore"\t{"QUJD" * 50_000}' for i in range(5)]
    lines.insert(4, '9\tsay "hi" twice\tx')  # unquoted field with quotes: only the csv module reads it
    path = tmp_path / "t.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for strict in (False, True):
        ok, header, rows = fast_rows(path, delimiter="\t", strict=strict)
        assert (ok, header, rows) == csv_module_rows(path, delimiter="\t", strict=strict)
        assert [cells[0] for _, cells in rows] == ["0", "1", "2", "9", "3", "4"]
        assert rows[3][1][1] == 'say "hi" twice' and rows[0][1][1] == 'line "0"\nmore'
        assert len(rows[0][1][2]) == 200_000  # more than the csv module's default field limit


def test_rows_stream_and_a_later_error_comes_when_reached(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n5\n", encoding="utf-8")
    header, rows = open_rows(path)
    assert header == ["a", "b"]
    assert next(rows) == (1, ["1", "2"])
    assert next(rows) == (2, ["3", "4"])
    with pytest.raises(DataError, match=r"t\.csv, row 3: 1 fields, header has 2"):
        next(rows)


# --------------------------------------------------------------------------- not UTF-8


@pytest.mark.parametrize("body, line, byte, where", [
    (b"id,score\nq1,3\nq\xe92,4\n", 3, 15, "data row 2"),
    (b"i\xffd,score\nq1,3\n", 1, 1, "the header"),
    (b'id,text\n1,"multi\nline \xc3("\n', 3, 22, "data row 1"),  # inside a quoted field, a truncated sequence
    (b"\xef\xbb\xbfid,score\n1,\x80\n", 2, 14, "data row 1"),  # bytes counted from the file's start
])
def test_not_utf8_names_line_byte_and_row(tmp_path, body, line, byte, where):
    path = tmp_path / "t.csv"
    path.write_bytes(body)
    with pytest.raises(DataError) as ei:
        read_rows(path)
    msg = str(ei.value)
    assert msg.startswith(f"{path}: not UTF-8: line {line}, byte {byte} (0x{body[byte]:02x}) ({where})")
    assert "\n" not in msg


def test_not_utf8_after_an_irregular_record(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'id,text\n1,x"y\n2,\xff\n')  # the csv module reads from row 1 on
    with pytest.raises(DataError, match=r"not UTF-8: line 3, byte 16 \(0xff\)"):
        read_rows(path)


def test_missing_file_folder_and_bad_delimiter(tmp_path):
    with pytest.raises(DataError, match="cannot open"):
        read_rows(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="cannot"):
        read_rows(tmp_path)
    with pytest.raises(ValueError):
        read_rows(tmp_path / "x.csv", delimiter='"')
