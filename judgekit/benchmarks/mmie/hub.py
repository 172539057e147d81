"""MMIE from the Hugging Face hub: ``data = "hf:MMIE/MMIE"``.

The authors' dataset repository (gated: accept its terms on the hub, then ``hf auth login`` or
``HF_TOKEN``) is a set of files: the questions as a JSON file in the released format (see
:mod:`.data`), ``overview.json`` (a few rows showing the format) and ``images.tar.gz``.  The
repository is fetched whole (:func:`judgekit.hub.hub_files`; the images are most of it), the
tarball unpacked once into judgekit's cache (:func:`judgekit.hub.extracted`), and the JSON read by
:func:`~.data.load_items` as a local copy would be.

Which JSON: the one file in the repository's top folder (``.json`` / ``.jsonl``) other than
``overview.json``; ``data_config`` names one by its stem when there are several (``overview``
included).  Image paths are relative to the unpacked folder, or to its ``images/`` when the
paths name files inside it (whichever holds the first image the data names); an ``images/``
folder in the repository itself is used as it is.  ``options.images_dir`` overrides both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgekit.errors import SpecError
from judgekit.hub import extracted, hub_files, hub_repo

from .data import _read_rows

__all__ = ["HUB_DATASET", "EXAMPLE_FILE", "IMAGES_ARCHIVE", "hub_data"]

HUB_DATASET = "MMIE/MMIE"
EXAMPLE_FILE = "overview.json"
IMAGES_ARCHIVE = "images.tar.gz"
_PEEK_ROWS = 50


def _where(spec) -> str:
    return f"{spec.source_path or '<spec>'}: data = {spec.data!r}"


def _data_file(spec, folder: Path) -> Path:
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".json", ".jsonl") and p.is_file())
    if spec.data_config is not None:
        for p in files:
            if p.stem == spec.data_config:
                return p
        raise SpecError(f"{_where(spec)}: data_config = {spec.data_config!r}: no such JSON file in the dataset "
                        f"(it has: {', '.join(p.stem for p in files) or 'none'})")
    data = [p for p in files if p.name != EXAMPLE_FILE]
    if len(data) == 1:
        return data[0]
    if not data:
        raise SpecError(f"{_where(spec)}: the dataset holds no JSON file of questions besides {EXAMPLE_FILE} "
                        f"(its files: {', '.join(sorted(p.name for p in folder.iterdir())) or 'none'})")
    raise SpecError(f"{_where(spec)}: the dataset holds several JSON files: set data_config to one of: "
                    f"{', '.join(p.stem for p in data)}")


def _first_image(value: Any) -> str | None:
    """The first image path named anywhere in a row (depth first, in order)."""
    if isinstance(value, Mapping):
        image = value.get("image")
        if isinstance(image, str) and image.strip():
            return image.strip()
        values = value.values()
    elif isinstance(value, list):
        values = value
    else:
        return None
    for v in values:
        found = _first_image(v)
        if found:
            return found
    return None


def _images_dir(root: Path, data_file: Path) -> Path:
    inner = root / "images"
    if not inner.is_dir():
        return root
    for _, _, row in _read_rows(data_file)[:_PEEK_ROWS]:
        ref = _first_image(row)
        if ref:
            return root if (root / ref).exists() else inner
    return root


def hub_data(spec) -> tuple[Path, Path]:
    """``(the questions' JSON file, the folder its image paths are relative to)`` of the dataset
    ``spec.data = "hf:MMIE/MMIE"`` (or a copy of it under another name)."""
    repo = hub_repo(spec)
    if spec.data_split is not None:
        raise SpecError(f"{spec.source_path or '<spec>'}: data_split = {spec.data_split!r}: hf:{repo} is a set of "
                        f"files, not splits; name its JSON file with data_config if it has several")
    folder = hub_files(spec)
    data_file = _data_file(spec, folder)
    if (folder / "images").is_dir():
        root = folder
    elif (folder / IMAGES_ARCHIVE).is_file():
        root = extracted(folder / IMAGES_ARCHIVE)
    else:
        root = folder
    return data_file, _images_dir(root, data_file)
