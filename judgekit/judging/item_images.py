"""A data row's image cell to image parts.

A cell holds one value or a list of them (a JSON or Python list written as text in a CSV cell is
read as a list).  Each value is one of: a path relative to the data file's folder (read inside it,
by :func:`judgekit.datapaths.resolve_ref`'s rule), a base64 string (strict), a ``data:`` URL, raw
bytes, or a hub image ``{"bytes": ..., "path": ...}`` (the bytes win; a bytes-less one is read by
its path).  An empty cell (None, "", NaN, an empty list) holds no images.  Every image is checked
to be a picture of a known type with a readable size; anything else is a DataError naming the file,
row and column.
"""

from __future__ import annotations

import ast
import binascii
import json
import math
import re
import urllib.parse
from pathlib import Path
from typing import Any

from judgekit.image_cells import (
    image_mime,
    jpeg_size,
    strict_b64decode,
)
from judgekit.datapaths import PathRefused, resolve_ref, shown_path
from judgekit.errors import DataError
from judgekit.types import ImagePart

__all__ = ["ImageReader", "is_empty"]

#: text that may be base64 (white space allowed between the pieces)
_B64_TEXT = re.compile(r"[A-Za-z0-9+/\s]+={0,2}\s*")
_WS = re.compile(r"\s+")


def is_empty(value: Any) -> bool:
    """None, NaN, blank text, an empty list: a cell that holds nothing."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple, bytes, bytearray)):
        return len(value) == 0
    return False


class ImageReader:
    """Decodes the image cells of one data file; an image file named twice is read once.

    ``folder`` is the data file's folder (paths are relative to it), None for hub rows, whose
    images come as bytes: a path there is a DataError.
    """

    def __init__(self, source: str, folder: Path | None):
        self.source = source
        self.root = folder.resolve() if folder is not None else None
        self._files: dict[Path, ImagePart] = {}

    def cell(self, value: Any, *, row: int, column: str) -> list[ImagePart]:
        """The images of one cell, in order."""
        if is_empty(value):
            return []
        values = self._as_list(value, row=row, column=column)
        n = len(values)
        return [self._one(v, row=row, column=column, label=f"image {k + 1} of {n}: " if n > 1 else "")
                for k, v in enumerate(values)]

    def _error(self, message: str, row: int, column: str) -> DataError:
        return DataError(self.source, message, row=row, column=column)

    def _as_list(self, value: Any, *, row: int, column: str) -> list[Any]:
        if isinstance(value, (list, tuple)):
            return [v for v in value if not is_empty(v)]
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("[") and text.endswith("]"):
                try:
                    parsed = json.loads(text)
                except (ValueError, RecursionError):
                    try:
                        parsed = ast.literal_eval(text)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        raise self._error("a cell that starts with '[' must be a JSON list of images",
                                          row, column) from None
                if not isinstance(parsed, list):
                    raise self._error("a cell that starts with '[' must be a JSON list of images", row, column)
                return [v for v in parsed if not is_empty(v)]
        return [value]

    def _one(self, value: Any, *, row: int, column: str, label: str) -> ImagePart:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._part(bytes(value), row=row, column=column, label=label)
        if isinstance(value, dict):
            data, path = value.get("bytes"), value.get("path")
            if isinstance(data, (bytes, bytearray, memoryview)) and data:
                return self._part(bytes(data), row=row, column=column, label=label)
            if isinstance(data, str) and data.strip():
                return self._text(data, row=row, column=column, label=label, base64_only=True)
            if isinstance(path, str) and path.strip():
                return self._file(path, row=row, column=column, label=label)
            raise self._error(f"{label}an image object needs 'bytes' or 'path'", row, column)
        if isinstance(value, str):
            return self._text(value, row=row, column=column, label=label)
        raise self._error(f"{label}an image must be a path, base64 text, a data: URL or bytes, "
                          f"not {type(value).__name__}", row, column)

    def _text(self, text: str, *, row: int, column: str, label: str, base64_only: bool = False) -> ImagePart:
        text = text.strip()
        if text.startswith("data:"):
            return self._part(self._data_url(text, row=row, column=column, label=label),
                              row=row, column=column, label=label)
        data = b""
        if _B64_TEXT.fullmatch(text) and len(text) >= 16:
            try:
                data = strict_b64decode(_WS.sub("", text))
            except (binascii.Error, ValueError):
                pass
            if data and (base64_only or image_mime(data) is not None):
                return self._part(data, row=row, column=column, label=label)
        if base64_only:
            raise self._error(f"{label}'bytes' is text that is not base64", row, column)
        if text.lower().startswith(("http://", "https://")):
            raise self._error(f"{label}{shown_path(text)}: image URLs are not fetched; download the images and "
                              f"name the files (relative to the data file), or give base64", row, column)
        return self._file(text, row=row, column=column, label=label, decoded=len(data))

    def _data_url(self, text: str, *, row: int, column: str, label: str) -> bytes:
        head, sep, payload = text.partition(",")
        if not sep:
            raise self._error(f"{label}a data: URL without ',' before its data", row, column)
        if head.endswith(";base64"):
            try:
                return strict_b64decode(_WS.sub("", payload))
            except (binascii.Error, ValueError) as e:
                raise self._error(f"{label}bad base64 in a data: URL ({e})", row, column) from None
        return urllib.parse.unquote_to_bytes(payload)

    def _file(self, ref: str, *, row: int, column: str, label: str, decoded: int = 0) -> ImagePart:
        if decoded and (self.root is None or len(ref) > 255):
            raise self._error(f"{label}base64 text whose {decoded} bytes are not an image (PNG, JPEG, GIF, WebP, "
                              f"BMP or TIFF)", row, column)
        if self.root is None:
            raise self._error(f"{label}{shown_path(ref)} is neither base64 nor a data: URL, and rows from the "
                              f"hub have no folder for a relative path", row, column)
        try:
            resolved = resolve_ref(self.root, ref, folder="data file's folder")
        except PathRefused as e:
            raise self._error(f"{label}image path {e}", row, column) from None
        if resolved in self._files:
            return self._files[resolved]
        if not resolved.is_file():
            hint = f"; as base64 it is {decoded} bytes that are not an image" if decoded else ""
            raise self._error(f"{label}image file not found: {shown_path(ref)} in the data file's folder "
                              f"{self.root}{hint}", row, column)
        try:
            data = resolved.read_bytes()
        except OSError as e:
            raise self._error(f"{label}cannot read image {resolved}: {e.strerror or e}", row, column) from None
        part = self._part(data, row=row, column=column, label=f"{label}{shown_path(ref)}: ")
        self._files[resolved] = part
        return part

    def _part(self, data: bytes, *, row: int, column: str, label: str) -> ImagePart:
        mime = image_mime(data)
        if mime is None:
            raise self._error(f"{label}not an image (PNG, JPEG, GIF, WebP, BMP or TIFF)", row, column)
        size = jpeg_size(data) if mime == "image/jpeg" else None
        part = (ImagePart(data=data, mime=mime, width=size[0], height=size[1]) if size
                else ImagePart(data=data, mime=mime))
        if not (part.width and part.height):
            raise self._error(f"{label}a {mime} that cannot be decoded", row, column)
        return part
