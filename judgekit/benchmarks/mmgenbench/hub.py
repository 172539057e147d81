"""MMGenBench from the Hugging Face hub: ``data = "hf:lerogo/MMGenBench"``.

The authors' dataset repository is a set of files, not a ``datasets`` table:
``MMGenBench-Test.tsv`` (VLMEvalKit's TSV, images as base64) with
``MMGenBench-Test-label-index.json``, and ``MMGenBench-Domain.tsv``.  ``data_config`` names the
TSV (default ``MMGenBench-Test``); only that TSV and its label index are fetched
(:func:`judgekit.hub.hub_files`), then read by :func:`~.data.load_data` as a local copy would be.
The hub's cache keeps each file as a link into its blob store, so the label index is passed on
by its resolved path rather than looked up beside the TSV.
"""

from __future__ import annotations

from pathlib import Path

from judgekit.errors import SpecError
from judgekit.hub import hub_files, hub_repo

from .data import LABEL_INDEX_SUFFIX

__all__ = ["HUB_DATASET", "HUB_TABLES", "hub_table"]

HUB_DATASET = "lerogo/MMGenBench"
#: the TSVs of the release; the first is the default
HUB_TABLES = ("MMGenBench-Test", "MMGenBench-Domain")


def hub_table(spec) -> tuple[Path, Path | None]:
    """The TSV ``data_config`` names in the dataset ``spec.data`` and its label index (None when
    the release has none for it, as for MMGenBench-Domain)."""
    repo = hub_repo(spec)
    if spec.data_split is not None:
        raise SpecError(f"{spec.source_path or '<spec>'}: data_split = {spec.data_split!r}: hf:{repo} is a set of "
                        f"TSV files, not splits; name the file with data_config (one of: {', '.join(HUB_TABLES)})")
    name = spec.data_config or HUB_TABLES[0]
    folder = hub_files(spec, patterns=[f"{name}.tsv", f"{name}{LABEL_INDEX_SUFFIX}"])
    tsv = folder / f"{name}.tsv"
    if not tsv.is_file():
        have = sorted(p.stem for p in folder.glob("*.tsv")) or list(HUB_TABLES)
        raise SpecError(f"{spec.source_path or '<spec>'}: data_config = {name!r}: hf:{repo} has no {name}.tsv "
                        f"(its TSVs: {', '.join(have)})")
    labels = folder / f"{name}{LABEL_INDEX_SUFFIX}"
    return tsv, (labels.resolve() if labels.is_file() else None)
