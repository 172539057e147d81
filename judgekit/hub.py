"""Datasets from the Hugging Face hub: ``data = "hf:org/name"``.

Two ways in, by how the dataset repository is laid out:

:func:`hub_rows`
    A dataset the ``datasets`` library loads (parquet shards, a ``configs:`` header in its
    README.md, CSV/JSON files it recognises): ``datasets.load_dataset`` with the spec's
    ``data_config`` (the configuration, or subset), ``data_split`` and ``data_revision``.  The
    rows come back as plain dicts; an image (the ``Image`` feature, alone or in a list) as
    ``{"bytes": ..., "path": ...}``, never decoded, so a loader sees the file's own bytes; a
    ``ClassLabel`` as its name.  The generic benchmarks and Creation-MMBench read this way.
:func:`hub_files`
    A repository of plain files (a TSV, a JSON and a tarball of images): the repository's files
    in a local folder (``huggingface_hub.snapshot_download``), for a benchmark whose loader reads
    the released files (MMGenBench, MMIE).  :func:`extracted` unpacks a ``.tar.gz`` from it once,
    into judgekit's cache.

Both need the ``datasets`` library (it brings ``huggingface_hub``), an optional extra
(``pip install 'judgekit[hf]'``), imported only when a spec names ``hf:``: ``judgekit --help`` and
every other data source never import it.

Offline
    ``JUDGEKIT_HF_MIRROR=DIR`` maps ``hf:org/name`` to the folder ``DIR/org/name``, a copy of the
    dataset repository as the hub lays it out (README.md with its ``configs:`` header,
    ``data/<split>-00000-of-00001.parquet`` or ``<config>/<split>-*.parquet``; or the plain files).
    Nothing is downloaded then; with ``data_revision = "R"`` the folder is ``DIR/org/name@R``.
    Without a mirror, ``HF_HUB_OFFLINE=1`` / ``HF_DATASETS_OFFLINE=1`` make both libraries use only
    what their caches already hold, as they do for any caller.

Every failure is one :class:`~judgekit.errors.SpecError` line naming the spec, ``data`` and the
setting at fault, and what exists (``data_split = 'val': ... has the splits: test, train``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .errors import SpecError

__all__ = ["MIRROR_ENV", "INSTALL_HINT", "is_hub", "hub_repo", "mirror_dir", "hub_rows", "iter_hub_rows",
           "hub_files", "extracted"]

MIRROR_ENV = "JUDGEKIT_HF_MIRROR"
INSTALL_HINT = "pip install 'judgekit[hf]'"
_PREFIX = "hf:"
_BATCH = 64  # rows converted at a time (a row may hold several photographs)


def is_hub(data: str) -> bool:
    """Whether ``data`` names a dataset on the hub (``hf:org/name``)."""
    return data.startswith(_PREFIX)


def _where(spec) -> str:
    return f"{spec.source_path or '<spec>'}: data = {spec.data!r}"


def hub_repo(spec) -> str:
    """``org/name`` of the spec's ``data = "hf:org/name"`` (SpecError for any other form)."""
    repo = spec.data[len(_PREFIX):] if is_hub(spec.data) else ""
    parts = repo.split("/")
    if len(parts) != 2 or not all(p.strip() and p not in (".", "..") and p == p.strip() for p in parts):
        raise SpecError(f"{_where(spec)}: name a dataset on the hub as hf:org/name (e.g. hf:opencompass/Creation-MMBench)")
    return repo


def mirror_dir(spec) -> Path | None:
    """The local copy ``$JUDGEKIT_HF_MIRROR/org/name`` (``...@REVISION`` with data_revision), or None
    when no mirror is set.  A mirror without the dataset is an error, never a download."""
    root = os.environ.get(MIRROR_ENV)
    if not root:
        return None
    repo = hub_repo(spec)
    folder = Path(os.path.expanduser(root)) / (f"{repo}@{spec.data_revision}" if spec.data_revision else repo)
    if not folder.is_dir():
        what = f"data_revision = {spec.data_revision!r}: " if spec.data_revision else ""
        raise SpecError(f"{_where(spec)}: {what}{MIRROR_ENV} is set and {folder} is not a folder (copy the dataset "
                        f"repository there, or unset {MIRROR_ENV} to use the hub)")
    return folder


def _need_datasets(spec):
    try:
        import datasets
    except ImportError:
        raise SpecError(f"{_where(spec)}: needs the datasets library: {INSTALL_HINT}") from None
    return datasets


@contextlib.contextmanager
def _quiet(datasets):
    """No progress bars on the terminal while judgekit draws its own; restored afterwards."""
    from huggingface_hub import utils as hub_utils

    was = (datasets.utils.are_progress_bars_disabled(), hub_utils.are_progress_bars_disabled())
    datasets.utils.disable_progress_bars()
    hub_utils.disable_progress_bars()
    try:
        yield
    finally:
        if not was[0]:
            datasets.utils.enable_progress_bars()
        if not was[1]:
            hub_utils.enable_progress_bars()


def _failures(datasets) -> tuple[type[BaseException], ...]:
    from huggingface_hub import errors as hub_errors

    return (ValueError, OSError, datasets.exceptions.DatasetsError, hub_errors.HfHubHTTPError,
            hub_errors.OfflineModeIsEnabled, hub_errors.HFValidationError)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _unreachable(spec, e: BaseException) -> SpecError:
    hint = ("" if os.environ.get(MIRROR_ENV) else
            f" (a gated dataset needs its terms accepted on the hub and `hf auth login` or HF_TOKEN; without a "
            f"network, HF_HUB_OFFLINE=1 reads what the hub cache holds, {MIRROR_ENV}=DIR a local copy)")
    return SpecError(f"{_where(spec)}: cannot load it: {_first_line(e)}{hint}")


def _builder(spec, datasets, path: str, revision: str | None):
    """The dataset's builder for data_config, or a SpecError listing the configurations."""
    fail = _failures(datasets)
    try:
        return datasets.load_dataset_builder(path, name=spec.data_config, revision=revision)
    except fail as e:
        try:
            configs = datasets.get_dataset_config_names(path, revision=revision)
        except fail:
            raise _unreachable(spec, e) from None
        have = ", ".join(configs)
        if spec.data_config is not None and spec.data_config not in configs:
            raise SpecError(f"{_where(spec)}: data_config = {spec.data_config!r}: no such configuration "
                            f"(it has: {have})") from None
        if spec.data_config is None and len(configs) > 1:
            raise SpecError(f"{_where(spec)}: the dataset has several configurations: set data_config to one of: "
                            f"{have}") from None
        raise _unreachable(spec, e) from None


def _splits(builder) -> list[str]:
    if builder.info.splits:
        return list(builder.info.splits)
    return list(builder.config.data_files or {})


def _pick_split(spec, builder, default_split: str | None) -> str:
    have = _splits(builder)
    config = f" (configuration {builder.config.name!r})" if spec.data_config else ""
    if spec.data_split is not None:
        if have and spec.data_split not in have:
            raise SpecError(f"{_where(spec)}: data_split = {spec.data_split!r}: no such split{config} "
                            f"(it has: {', '.join(have)})")
        return spec.data_split
    want = default_split or "train"
    if not have or want in have:
        return want
    if len(have) == 1:  # the dataset's only split, when the spec names none
        return have[0]
    raise SpecError(f"{_where(spec)}: data_split is not set and the dataset{config} has no {want!r} split: set "
                    f"data_split to one of: {', '.join(have)}")


def iter_hub_rows(spec, *, default_split: str | None = None) -> Iterator[dict[str, Any]]:
    """The rows of ``data = "hf:org/name"`` (split: data_split, else ``default_split``, else
    ``"train"``, else the dataset's only split), a few at a time.  The dataset is loaded (and
    cached by ``datasets``) before the first row comes back."""
    hub_repo(spec)
    datasets = _need_datasets(spec)
    mirror = mirror_dir(spec)
    path = str(mirror) if mirror is not None else spec.data[len(_PREFIX):]
    revision = None if mirror is not None else spec.data_revision
    if mirror is None and os.path.exists(path):  # datasets would read it, silently, instead of the hub's
        raise SpecError(f"{_where(spec)}: ./{path} exists in the current folder and the datasets library would "
                        f"load it instead of the hub's dataset: run from another folder, or point "
                        f"{MIRROR_ENV} at the folder holding {path.split('/')[0]}/ to use that copy")
    with _quiet(datasets):
        builder = _builder(spec, datasets, path, revision)
        split = _pick_split(spec, builder, default_split)
        try:
            builder.download_and_prepare()
            ds = builder.as_dataset(split=split)
        except _failures(datasets) as e:
            raise _unreachable(spec, e) from None
    features = ds.features
    for batch in ds.with_format("arrow").iter(batch_size=_BATCH):
        for row in batch.to_pylist():
            yield {name: _plain(features.get(name), value) for name, value in row.items()}


def hub_rows(spec, *, default_split: str | None = None) -> list[dict[str, Any]]:
    """Every row of ``data = "hf:org/name"`` (see :func:`iter_hub_rows`)."""
    return list(iter_hub_rows(spec, default_split=default_split))


def _plain(feature: Any, value: Any) -> Any:
    """``value`` as stored (arrow), with images as ``{"bytes", "path"}`` (bytes read from the
    path when only a local path is stored) and class labels as their names."""
    if value is None or feature is None:
        return value
    kind = type(feature).__name__
    if kind == "Image":
        if isinstance(value, dict):
            data, ref = value.get("bytes"), value.get("path")
            if data is None and ref and os.path.isfile(ref):
                data = Path(ref).read_bytes()
            return {"bytes": data, "path": ref}
        return value
    if kind == "ClassLabel":
        return feature.int2str(value) if isinstance(value, int) and value >= 0 else value
    if isinstance(feature, dict) and isinstance(value, dict):
        return {k: _plain(feature.get(k), v) for k, v in value.items()}
    inner = getattr(feature, "feature", None)
    if inner is not None and isinstance(value, list):
        return [_plain(inner, v) for v in value]
    return value


def hub_files(spec, *, patterns: Sequence[str] | None = None) -> Path:
    """A local folder holding the files of the dataset repository ``hf:org/name`` at
    data_revision: the mirror's folder, or ``huggingface_hub``'s snapshot (downloaded once, then
    read from its cache; only the files matching ``patterns`` when given)."""
    mirror = mirror_dir(spec)
    if mirror is not None:
        return mirror
    datasets = _need_datasets(spec)
    from huggingface_hub import snapshot_download

    with _quiet(datasets):
        try:
            return Path(snapshot_download(hub_repo(spec), repo_type="dataset", revision=spec.data_revision,
                                          allow_patterns=list(patterns) if patterns else None))
        except _failures(datasets) as e:
            raise _unreachable(spec, e) from None


def cache_root() -> Path:
    """judgekit's own cache folder (``$JUDGEKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/judgekit``,
    else ``~/.cache/judgekit``)."""
    if os.environ.get("JUDGEKIT_CACHE_DIR"):
        return Path(os.path.expanduser(os.environ["JUDGEKIT_CACHE_DIR"]))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "judgekit"


def extracted(archive: Path) -> Path:
    """The folder ``archive`` (a tarball) unpacks into, in judgekit's cache under the hash of
    the archive's path, size and time: unpacked on first use (members that would land outside
    the folder, links and devices refused: the ``data`` filter), reused afterwards."""
    st = archive.stat()
    key = hashlib.sha256(f"{archive.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:16]
    out = cache_root() / "hub" / f"{archive.name}-{key}"
    done = out / ".complete"
    if done.exists():
        return out
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
    except (tarfile.TarError, OSError) as e:
        raise SpecError(f"{archive}: cannot unpack: {_first_line(e)}") from None
    (tmp / ".complete").touch()
    try:
        tmp.rename(out)
    except OSError:  # another process unpacked it first
        shutil.rmtree(tmp, ignore_errors=True)
        if not done.exists():
            raise
    return out
