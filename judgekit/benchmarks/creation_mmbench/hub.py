"""Creation-MMBench from the Hugging Face hub: ``data = "hf:opencompass/Creation-MMBench"``.

The dataset (one configuration, ``default``; one split, ``test``) holds the TSV's columns, every
one a string but ``image``, a list of images (the ``datasets`` ``Image`` feature).  The rows come
from :func:`judgekit.hub.iter_hub_rows` (``data_split`` defaults to ``test``) and go through the
same checks as the TSV's and the parquet's (:func:`~.data.resolve_rows`): an image as its
``{"bytes", "path"}`` (one, or a list), raw bytes, or the TSV's base64 text (pointers too).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from judgekit.errors import DataError
from judgekit.hub import hub_repo, iter_hub_rows

from .data import REQUIRED_COLUMNS, LoadedData, RawImage, _make_items, resolve_rows

__all__ = ["HUB_DATASET", "HUB_SPLIT", "load_hub"]

#: where the authors released it on the hub
HUB_DATASET = "opencompass/Creation-MMBench"
HUB_SPLIT = "test"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _image(label: str, n: int, index: str, value: Any) -> RawImage:
    if value is None or isinstance(value, str):
        return value
    items = value if isinstance(value, list) else [value]
    out = []
    for k, item in enumerate(items):
        data = item.get("bytes") if isinstance(item, dict) else item
        if not isinstance(data, (bytes, bytearray)):
            where = f"image {k + 1} of {len(items)}" if len(items) > 1 else "the image"
            ref = item.get("path") if isinstance(item, dict) else None
            what = f"only a path, {ref!r}" if ref else f"a {type(data).__name__}"
            raise DataError(label, f"{where} has no bytes ({what})", row=f"{n} (index {index.strip()})",
                            column="image")
        out.append(bytes(data))
    return tuple(out)


def _rows(label: str, rows: Iterator[dict[str, Any]]) -> Iterator[tuple[int, dict[str, str], RawImage]]:
    for n, row in enumerate(rows, 1):
        if n == 1:
            missing = [c for c in REQUIRED_COLUMNS if c not in row]
            if missing:
                raise DataError(label, f"missing required column {missing[0]!r} (columns: {list(row)})",
                                column=missing[0])
        fields = {k: _text(v) for k, v in row.items() if k != "image"}
        yield n, fields, _image(label, n, fields["index"], row["image"])


def load_hub(spec, *, task_categories: Mapping[str, str] | None = None, na_text: bool = False,
             blank_ground_truth: bool = False) -> LoadedData:
    """Creation-MMBench from ``spec.data = "hf:org/name"`` (the released set is
    :data:`HUB_DATASET`; a copy under another name loads the same way)."""
    label = f"hf:{hub_repo(spec)} (split {spec.data_split or HUB_SPLIT})"
    resolved, data = resolve_rows(label, _rows(label, iter_hub_rows(spec, default_split=HUB_SPLIT)))
    if not resolved:
        raise DataError(label, "no rows")
    _make_items(data, resolved, task_categories, na_text=na_text, blank_ground_truth=blank_ground_truth)
    return data
