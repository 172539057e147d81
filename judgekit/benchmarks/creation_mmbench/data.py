"""Reading Creation-MMBench as released: the VLMEvalKit TSV or the Hugging Face parquet.

:func:`load_data` takes either file (or the folder of the Hugging Face dataset, read from its
``data/test-*.parquet``) and reads it as the reference evaluation (VLMEvalKit's
``ImageBaseDataset`` and ``CreationMMBenchDataset``) reads its TSV:

The TSV (765 rows) is written by pandas ``to_csv(sep='\\t')``: a header, one row per item, fields
quoted with ``"`` when they hold a tab, a quote or a line break (:mod:`judgekit.tables` reads it
exactly as the csv module does, streaming).  The parquet (``opencompass/Creation-MMBench``) has the
same columns as strings, but ``image`` is a sequence of images (``{bytes, path}`` structs).

``image``
    TSV: base64 of one image, or a string holding a Python list of base64 strings (a cell that
    starts with ``[`` and ends with ``]``).  A cell of 64 characters or fewer is a *pointer*: the
    ``index`` of another row whose images to reuse.  Pointers are resolved in file order, each
    taking the images its target has at that moment, as the reference's in-place pass does: a
    pointer to an earlier pointer row works, one to a later pointer row (or to itself) is an
    error.  A row with no image (an empty cell, pandas' NA spellings, an empty sequence) is left
    out with a warning, as the reference's ``skip_noimg`` drops it.
``image_path``
    the file name(s), one string or a list literal.  The reference pairs a list of images with a
    list of names with ``zip``, so images beyond the names are never sent: they are dropped here
    too (with a warning).
``criteria``
    parsed as the reference does (``eval``, here :func:`ast.literal_eval`, never ``eval``): a dict
    maps keys containing "subjective" (any case) to the General Subjective Criteria and every
    other key to the Visual Factuality Criteria, the last key of each kind winning, each value
    as ``str.format`` writes it; a text that is not a literal, or a string literal, is subjective
    criteria only.
``question``, ``reference_answer_by_gpt4o``, ``ground_truth``
    read as ``pandas.read_csv(sep='\\t')`` reads them: a cell that is exactly one of pandas'
    missing-value spellings (:data:`PANDAS_NA`: ``NA``, ``N/A``, ``NULL``, ``None``, ``nan``, ...;
    matched as written, no white space stripped, quoted or not) is NaN there, which the
    reference's prompts write as ``nan``: the question and the baseline answer are ``nan`` here
    too, and such a ``ground_truth`` is "no ground truth" (``pd.isna``).  A ``ground_truth`` of
    white space only is kept (pandas keeps ``' '``, so the reference uses the with-ground-truth
    VFS prompt).  ``na_text=True`` keeps a spelled cell's text; ``blank_ground_truth=True`` makes a
    white-space-only ground truth none (two options of the benchmark, off by default).  How many
    cells of each kind the file holds is one line of :attr:`LoadedData.warnings` each.

Every malformed thing raises :class:`~judgekit.errors.DataError` naming the file, the row (its
1-based data row number and ``index``) and the column.  Oddities that do not stop the run are in
:attr:`LoadedData.warnings`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.errors import DataError
from judgekit.tables import open_rows
from judgekit.types import ImagePart

from ...image_cells import decode_image_cell, image_mime, image_part
from ...plural import plural
from .parquet import parquet_files, parquet_rows
from .ratings import read_human_rating_table, read_human_ratings
from .tasks import UNCATEGORIZED, resolve_category

__all__ = [
    "CreationItem",
    "LoadedData",
    "REQUIRED_COLUMNS",
    "POINTER_MAX_LEN",
    "PANDAS_NA",
    "load_data",
    "load_tsv",
    "parse_criteria",
    "image_mime",
    "read_human_ratings",
    "read_human_rating_table",
]

#: columns without which the file cannot be judged
REQUIRED_COLUMNS = ("index", "question", "task_name", "criteria", "reference_answer_by_gpt4o", "image")
#: an ``image`` field this short is the index of another row, not base64
POINTER_MAX_LEN = 64

#: pandas' default missing-value spellings (``read_csv``'s ``na_values``; the tests check the list
#: against pandas): a cell written exactly as one of these is NaN for the reference, which reads
#: the file with pandas and tests ``pd.isna``.  ``#N/A N/A`` is one spelling.
PANDAS_NA = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})
_NA_STRINGS = PANDAS_NA - {""}
_NA_MAX_LEN = max(map(len, _NA_STRINGS))  # (an image cell is not hashed to be looked up)
_NAN = "nan"  # what str.format writes for NaN

#: an ``image`` value as a reader gives it: a TSV cell (base64, list literal or pointer), the bytes
#: of the parquet's images, or None (no image)
RawImage = str | tuple[bytes, ...] | None


@dataclass(frozen=True, slots=True)
class CreationItem:
    """One benchmark item: the query, its criteria, its images and the GPT-4o baseline answer."""

    index: str
    """The row's ``index`` as written in the file (the key of records and of image pointers)."""
    question: str
    """The composed query (role / background / instruction / requirement, Fig. 30)."""
    task_name: str
    """The task as written in the file (e.g. ``story_continue``)."""
    category: str
    """Category name (e.g. ``Literary Writing``), or ``Uncategorized``."""
    role: str
    background: str
    instruction: str
    requirement: str
    ground_truth: str
    """'' when the file has none; selects the with-GT visual factuality prompt otherwise."""
    source: str
    subjective_criteria: str
    """The General Subjective Criteria, as the reference puts them in the prompt."""
    vf_criteria: str | None
    """The Visual Factuality Criteria as text; None when the item has none (no VFS judgment)."""
    image_paths: tuple[str, ...]
    """File names from ``image_path`` (metadata; they also bound how many images are sent)."""
    images: tuple[ImagePart, ...]
    """The decoded images, in order; a pointer row shares the images of the row it names."""
    reference_answer: str
    """The baseline answer (``reference_answer_by_gpt4o``), Assistant A in the forward order."""


@dataclass(slots=True)
class LoadedData:
    """What :func:`load_data` returns."""

    path: str
    items: list[CreationItem]
    unknown_tasks: set[str] = field(default_factory=set)
    """Task names (as written) that no table, override or ``category`` cell placed: these items
    have category ``Uncategorized``."""
    warnings: list[str] = field(default_factory=list)
    """Oddities that do not stop the run (a row left out for having no image, images beyond the
    file names that the reference never sends)."""

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[CreationItem]:
        return iter(self.items)

    def by_index(self) -> dict[str, CreationItem]:
        return {it.index: it for it in self.items}


def load_data(path: str | Path, *, task_categories: Mapping[str, str] | None = None, na_text: bool = False,
              blank_ground_truth: bool = False) -> LoadedData:
    """Read Creation-MMBench from the VLMEvalKit TSV, the Hugging Face parquet (a ``.parquet``
    file), or the Hugging Face dataset's folder (its ``data/test-*.parquet`` shards).

    ``task_categories`` (task -> category, names matched after normalising) overrides both the
    shipped table and a ``category`` column.  Tasks nothing places get ``Uncategorized`` and are
    listed in :attr:`LoadedData.unknown_tasks`.  ``na_text`` and ``blank_ground_truth``: see the
    module's docstring (both off: as the reference's pandas reads the cells).
    """
    p = Path(path)
    files = parquet_files(p)
    if files is not None:
        _, rows = parquet_rows(files, REQUIRED_COLUMNS)
        label = str(files[0]) if len(files) == 1 else str(p)  # errors name the shard when there is one
    else:
        _, rows = _tsv_rows(p)
        label = str(p)
    resolved, data = resolve_rows(label, rows)
    _make_items(data, resolved, task_categories, na_text=na_text, blank_ground_truth=blank_ground_truth)
    return data


#: the name the pipeline calls; it reads every released layout
load_tsv = load_data


def _tsv_rows(p: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, str], RawImage]]]:
    header, rows = open_rows(p, delimiter="\t", kind="TSV", strict=True)
    for col in REQUIRED_COLUMNS:
        if col not in header:
            rows.close()  # type: ignore[attr-defined]
            raise DataError(str(p), f"missing required column {col!r} (columns: {header})", column=col)
    pos = {name: i for i, name in enumerate(header)}
    img = pos["image"]

    def gen() -> Iterator[tuple[int, dict[str, str], RawImage]]:
        for n, cells in rows:
            fields = {name: cells[i] for name, i in pos.items() if i != img}
            yield n, fields, cells[img]

    return header, gen()


def _where(n: int, index: str) -> str:
    return f"{n} (index {index})"


@dataclass(slots=True)
class _Row:
    n: int
    index: str
    fields: dict[str, str]
    images: tuple[ImagePart, ...] | None
    """None: the row has no image (left out of the items)."""


def resolve_rows(path: str, rows: Iterable[tuple[int, dict[str, str], RawImage]]) -> tuple[list[_Row], LoadedData]:
    """Every row, in file order, with all of its images (pointers resolved, nothing dropped yet;
    None for a row without images), and the LoadedData to fill (its warnings so far).  Images
    are decoded as the rows stream in, so the base64 text is never held whole."""
    data = LoadedData(path=path, items=[])
    seen: dict[str, int] = {}
    out: list[_Row] = []
    pointers: list[tuple[_Row, str]] = []
    by_index: dict[str, _Row] = {}
    left_out: set[str] = set()
    for n, fields, raw in rows:
        idx = fields["index"].strip()
        if not idx:
            raise DataError(path, "empty index", row=n, column="index")
        if idx in seen:
            raise DataError(path, f"duplicate index (also on row {seen[idx]})", row=_where(n, idx), column="index")
        seen[idx] = n
        where = _where(n, idx)
        row = _Row(n, idx, fields, ())
        if isinstance(raw, str):
            cell = raw.strip()
            if not cell or (len(cell) <= _NA_MAX_LEN and cell in _NA_STRINGS):
                raw = None
            elif len(cell) <= POINTER_MAX_LEN:
                pointers.append((row, cell))
            else:
                row.images = decode_image_cell(cell, path=path, where=where)
        elif raw:
            row.images = tuple(image_part(b, path=path, where=where,
                                          label=f"image {k + 1} of {len(raw)}: " if len(raw) > 1 else "")
                               for k, b in enumerate(raw))
        out.append(row)
        if raw is None or raw == ():
            row.images = None
            left_out.add(idx)
            data.warnings.append(f"row {where}: no image; left out, as the reference leaves out rows without one")
            continue
        by_index[idx] = row
    waiting = {id(r) for r, _ in pointers}
    for row, target in pointers:  # in file order, each taking what its target has now
        where = _where(row.n, row.index)
        if target in left_out:
            raise DataError(path, f"image pointer to index {target!r}, which has no image", row=where, column="image")
        if target not in by_index:
            raise DataError(path, f"image pointer to index {target!r}, which is not in the file", row=where,
                            column="image")
        source = by_index[target]
        if id(source) in waiting:
            raise DataError(path, f"image pointer to index {target!r}, whose image is itself a pointer "
                                  "not resolved before this row", row=where, column="image")
        row.images = source.images
        waiting.discard(id(row))
    return out, data


def tsv_to_parquet(tsv: str | Path, out: str | Path) -> Path:
    """Write the rows of a Creation-MMBench TSV in the Hugging Face layout: the same text columns,
    ``image`` the row's images (a pointer row's from the row it names; none for a row without
    images), each named by ``image_path`` when it names as many files."""
    from .parquet import HF_COLUMNS, write_parquet

    _, rows = _tsv_rows(Path(tsv))
    resolved, _ = resolve_rows(str(tsv), rows)
    records = []
    for r in resolved:
        images = r.images or ()
        names = _parse_paths(str(tsv), _where(r.n, r.index), r.fields.get("image_path", ""))
        if len(names) != len(images):
            names = (None,) * len(images)
        record: dict[str, Any] = {c: r.fields.get(c, "") for c in HF_COLUMNS if c != "image"}
        record["image"] = [(name, im.data) for name, im in zip(names, images, strict=True)]
        records.append(record)
    return write_parquet(out, records)


#: the text cells read as pandas reads them (what the reference's prompts show)
_PANDAS_READ = ("question", "reference_answer_by_gpt4o", "ground_truth")


def _make_items(data: LoadedData, rows: list[_Row], overrides: Mapping[str, str] | None, *, na_text: bool = False,
                blank_ground_truth: bool = False) -> None:
    path = data.path
    spelled = dict.fromkeys(_PANDAS_READ, 0)  # cells spelled like a pandas missing value, per column
    blank_gt = 0
    for r in rows:
        if r.images is None:
            continue
        where, f = _where(r.n, r.index), r.fields
        question = f["question"]
        if not question.strip():
            raise DataError(path, "empty question", row=where, column="question")
        baseline = f["reference_answer_by_gpt4o"]
        for column in _PANDAS_READ:
            if f.get(column, "") in _NA_STRINGS:
                spelled[column] += 1
        if not na_text:  # NaN for pandas; str.format writes it 'nan'
            question = _NAN if question in _NA_STRINGS else question
            baseline = _NAN if baseline in PANDAS_NA else baseline
        subjective, vf = parse_criteria(f["criteria"], path=path, row=where)
        task = f["task_name"].strip()
        if not task:
            raise DataError(path, "empty task_name", row=where, column="task_name")
        category = resolve_category(task, tsv_category=f.get("category"), overrides=overrides)
        if category is None:
            category = UNCATEGORIZED
            data.unknown_tasks.add(task)
        images = r.images
        paths = _parse_paths(path, where, f.get("image_path", ""))
        if len(images) > 1 and len(paths) > 1 and len(paths) < len(images):
            data.warnings.append(f"row {where}: image_path names {plural(len(paths), 'file')} for "
                                 f"{plural(len(images), 'image')}; the last {len(images) - len(paths)} "
                                 f"{'is' if len(images) - len(paths) == 1 else 'are'} left out, as the reference "
                                 "never sends them")
            images = images[:len(paths)]
        elif paths and len(paths) != len(images):
            data.warnings.append(f"row {where}: image_path names {plural(len(paths), 'file')} but the row has "
                                 f"{plural(len(images), 'image')}")
        gt = f.get("ground_truth", "")
        if gt and not gt.strip():
            blank_gt += 1
            if blank_ground_truth:
                gt = ""
        elif gt == "" or (gt in _NA_STRINGS and not na_text):
            gt = ""  # pd.isna: no ground truth
        data.items.append(
            CreationItem(
                index=r.index,
                question=question,
                task_name=task,
                category=category,
                role=f.get("role", ""),
                background=f.get("background", ""),
                instruction=f.get("instruction", ""),
                requirement=f.get("requirement", ""),
                ground_truth=gt,
                source=f.get("source", ""),
                subjective_criteria=subjective,
                vf_criteria=vf,
                image_paths=paths,
                images=images,
                reference_answer=baseline,
            )
        )
    data.warnings.extend(_pandas_notes(spelled, blank_gt, na_text=na_text, blank_ground_truth=blank_ground_truth))


def _pandas_notes(spelled: Mapping[str, int], blank_gt: int, *, na_text: bool, blank_ground_truth: bool) -> list[str]:
    """One line per kind of cell the reference's pandas reads unlike its text, with the count."""
    notes = []
    for column, n in spelled.items():
        if not n:
            continue
        what = {"ground_truth": "no ground truth (pd.isna)"}.get(column, "'nan' in its prompts")
        now = ("kept as text here (keep_na_text)" if na_text else "the same here (options.keep_na_text = true keeps "
               "the text)")
        notes.append(f"{plural(n, f'{column} cell')} spelled like a pandas missing value "
                     "(NA, N/A, NULL, None, nan, ...): "
                     f"the reference reads them as NaN, {what}; {now}")
    if blank_gt:
        now = ("no ground truth here (blank_ground_truth_as_missing)" if blank_ground_truth else
               "the same here (options.blank_ground_truth_as_missing = true: no ground truth)")
        notes.append(f"{plural(blank_gt, 'ground_truth cell')} of white space only: a ground truth for the reference "
                     f"(pandas keeps the text; the with-ground-truth VFS prompt); {now}")
    return notes


def _parse_paths(path: str, where: str, raw: str) -> tuple[str, ...]:
    raw = (raw or "").strip()
    if not raw or raw in _NA_STRINGS:
        return ()
    if raw.startswith("[") and raw.endswith("]"):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise DataError(path, "unparseable list of file names", row=where, column="image_path") from None
        if not isinstance(value, list):
            raise DataError(path, "image_path list literal is not a list", row=where, column="image_path")
        return tuple(str(v) for v in value)
    return (raw,)


# --------------------------------------------------------------------------- criteria


def parse_criteria(raw: str, *, path: str = "<criteria>", row: object = None) -> tuple[str, str | None]:
    """``(subjective, visual_factuality or None)`` from a ``criteria`` cell, by the reference's
    rule (``build_prompt`` in VLMEvalKit's ``creation.py``).

    The cell is read as a Python literal (:func:`ast.literal_eval`; the reference ``eval``\\ s it).
    A dict: each key containing "subjective" (any case) sets the subjective criteria, every other
    key the visual factuality criteria, the last of each kind winning, the value as ``str.format``
    writes it (a string as it is, a list or dict as its ``repr``).  A string literal is the
    subjective criteria; a text that is not a literal at all is the subjective criteria as it
    stands.  A dict without a subjective key, a non-string key, or a literal of another type is
    an error (the reference stops on each).
    """
    if not raw.strip():
        raise DataError(path, "empty criteria", row=row, column="criteria")
    try:
        value: Any = ast.literal_eval(raw)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = raw
    if isinstance(value, str):
        return value, None
    if not isinstance(value, dict):
        raise DataError(path, f"criteria literal is a {type(value).__name__}, neither a dict nor text", row=row,
                        column="criteria")
    subjective: str | None = None
    visual: str | None = None
    for key, val in value.items():
        if not isinstance(key, str):
            raise DataError(path, f"criteria key {key!r} is not a string", row=row, column="criteria")
        if "subjective" in key.lower():
            subjective = f"{val}"
        else:
            visual = f"{val}"
    if subjective is None:
        raise DataError(path, f"criteria dict has no subjective key (keys: {list(value)})", row=row, column="criteria")
    return subjective, visual
