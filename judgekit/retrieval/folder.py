"""A local folder of labelled images as a retriever.

The folder holds ``.png``, ``.jpg``, ``.jpeg`` and ``.webp`` files (not sub-folders).  A file's
label is its entry in an optional ``labels.json`` (``{"file name": "label", ...}``), else its
name without the extension, ``_`` and ``-`` read as spaces and a trailing number dropped, so
``rocking_chair.png``, ``rocking-chair-2.jpg`` and ``rocking_chair_03.webp`` are all
"rocking chair".

A query is matched to the labels by :func:`similarity`; the best label wins (ties go to the
label whose first file sorts first) and its first file, by name, is returned.  Below
``min_similarity`` the answer is ``no_result``.  The index is built at ``start()``;
``identity`` holds the folder's path and a fingerprint of the index (names, labels, sizes,
modification times), so adding, removing, editing or relabelling a file changes the cache key
of every retrieval from the folder.  A file that is a symlink leading out of the folder, or a
symlink loop, is refused (the rule of :mod:`judgekit.datapaths`, shared by every loader).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..blobs import sniff_mime
from ..datapaths import PathRefused, resolve_inside
from ..errors import BadRequest, DataError, SpecError
from ..tables import read_json
from .base import MAX_IMAGE_BYTES, MAX_RESULTS_TRIED, Retrieved, Retriever

__all__ = ["ImageFolderRetriever", "similarity", "normalise_label", "label_from_name",
           "IMAGE_SUFFIXES", "LABELS_FILE", "DEFAULT_MIN_SIMILARITY"]

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp"})
LABELS_FILE = "labels.json"
DEFAULT_MIN_SIMILARITY = 0.5
#: files at least this large are read in a worker thread
_THREAD_READ_BYTES = 256 * 1024
#: indexes with more labels than this are searched in a worker thread
_THREAD_SEARCH_LABELS = 2000

_NON_WORD = re.compile(r"[\W_]+")
_ARTICLES = frozenset({"a", "an", "the"})
_TRAILING_NUMBER = re.compile(r"(?:[\s_-]+\d+|\s*\(\d+\))$")


def normalise_label(text: str) -> str:
    """Lower case, punctuation and underscores as spaces, single spaces, no edge spaces, and no
    leading English article ("a", "an", "the": guesses often start with one)."""
    words = _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower()).split()
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


def label_from_name(file_name: str) -> str:
    """``rocking_chair_2.png`` -> ``rocking chair``; a name that is only a number stays one."""
    stem = Path(file_name).stem
    base = _TRAILING_NUMBER.sub("", stem)
    return (base or stem).replace("_", " ").replace("-", " ").strip()


def _trigrams(norm: str) -> Counter[str]:
    padded = f"  {norm} "
    return Counter(padded[i : i + 3] for i in range(len(padded) - 2))


def _norm(vec: Counter[str]) -> float:
    return math.sqrt(sum(v * v for v in vec.values()))


def _score(q: str, q_vec: Counter[str], q_norm: float, label: str, l_vec: Counter[str], l_norm: float) -> float:
    if not q or not label:
        return 0.0
    if q == label or q.replace(" ", "") == label.replace(" ", ""):
        return 1.0
    small, large = (q_vec, l_vec) if len(q_vec) <= len(l_vec) else (l_vec, q_vec)
    dot = sum(n * large.get(g, 0) for g, n in small.items())
    cos = dot / (q_norm * l_norm) if q_norm and l_norm else 0.0
    if f" {label} " in f" {q} " or f" {q} " in f" {label} ":
        # one names the other as whole words ("a black cat" / "cat"): a match, however much
        # else the longer one says; "cat" inside "caterpillar" is not whole words
        return max(cos, 0.75 + 0.25 * cos)
    return cos


def similarity(query: str, label: str) -> float:
    """How well ``query`` names ``label``, in [0, 1].

    Both are normalised (:func:`normalise_label`, which also drops a leading article).  Equal texts, also when equal without
    spaces ("rockingchair"), score 1.  Otherwise the cosine of their character-trigram counts
    (words padded with spaces), raised to at least ``0.75 + 0.25 * cosine`` when one contains
    the other as whole words.
    """
    q, lab = normalise_label(query), normalise_label(label)
    qv, lv = _trigrams(q), _trigrams(lab)
    return _score(q, qv, _norm(qv), lab, lv, _norm(lv))


@dataclass(slots=True)
class _Entry:
    label: str  # as written (labels.json or derived from the name)
    norm: str
    vec: Counter[str]
    vec_norm: float
    files: list[Path] = field(default_factory=list)


class ImageFolderRetriever(Retriever):
    """Images from a local folder, matched to the query by their labels."""

    name = "image_folder"

    def __init__(self, path: str | Path, min_similarity: float = DEFAULT_MIN_SIMILARITY) -> None:
        if not 0.0 <= min_similarity <= 1.0:
            raise ValueError(f"min_similarity must be in [0, 1], not {min_similarity}")
        self.path = Path(path).expanduser()
        self.min_similarity = min_similarity
        self._entries: list[_Entry] = []
        self._sizes: dict[Path, int] = {}
        self._fingerprint: str | None = None

    @property
    def root(self) -> Path:
        return self.path.resolve()

    @property
    def identity(self) -> str:
        fp = self._fingerprint or "not-indexed"
        return f"image_folder:{self.root}#{fp}"

    @property
    def labels(self) -> dict[str, list[str]]:
        """Label -> file names, in index order (after ``start()``)."""
        return {e.label: [p.name for p in e.files] for e in self._entries}

    async def start(self) -> None:
        await asyncio.to_thread(self._build_index)

    def _build_index(self) -> None:
        root = self.root
        if not root.exists():
            raise SpecError(f"image folder {root}: does not exist")
        if not root.is_dir():
            raise SpecError(f"image folder {root}: is not a folder")
        try:
            listed = [p for p in root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")]
        except OSError as e:
            raise SpecError(f"image folder {root}: cannot list it ({e.strerror or e})") from None
        for p in [*listed, root / LABELS_FILE]:  # nothing is read from outside the folder
            try:
                if p.is_symlink():
                    resolve_inside(root, p, folder="image folder")
            except PathRefused as e:
                raise SpecError(f"image folder {root}: {e}") from None
        files = sorted((p for p in listed if p.is_file()), key=lambda p: p.name)
        if not files:
            raise SpecError(f"image folder {root}: no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        given = self._read_labels(root, {p.name for p in files})
        entries: dict[str, _Entry] = {}
        rows = []
        sizes: dict[Path, int] = {}
        for p in files:
            label = given.get(p.name) or label_from_name(p.name)
            norm = normalise_label(label)
            entry = entries.get(norm)
            if entry is None:
                vec = _trigrams(norm)
                entry = entries[norm] = _Entry(label, norm, vec, _norm(vec))
            entry.files.append(p)
            st = p.stat()
            sizes[p] = st.st_size
            rows.append([p.name, label, st.st_size, st.st_mtime_ns])
        digest = hashlib.sha256(json.dumps([self.min_similarity, rows], ensure_ascii=False).encode())
        self._entries = list(entries.values())
        self._sizes = sizes
        self._fingerprint = digest.hexdigest()[:16]

    @staticmethod
    def _read_labels(root: Path, names: set[str]) -> dict[str, str]:
        path = root / LABELS_FILE
        if not path.exists():
            return {}
        try:
            data = read_json(path)
        except DataError as e:
            raise SpecError(f"cannot read the labels: {e}") from None
        if not isinstance(data, dict):
            raise SpecError(f"{path}: expected an object {{\"file name\": \"label\", ...}}")
        out: dict[str, str] = {}
        for name, label in data.items():
            if not isinstance(label, str) or not normalise_label(label):
                raise SpecError(f"{path}: the label of '{name}' must be a non-empty string")
            if name not in names:
                raise SpecError(f"{path}: '{name}' is not an image in {root}")
            out[name] = label
        return out

    def best(self, query: str) -> tuple[_Entry | None, float]:
        """The best-matching label's entry and its score (None when the index is empty)."""
        q = normalise_label(query)
        qv = _trigrams(q)
        qn = _norm(qv)
        best: _Entry | None = None
        best_score = -1.0
        for e in self._entries:
            s = _score(q, qv, qn, e.norm, e.vec, e.vec_norm)
            if s > best_score:  # strict: ties keep the earlier label (file name order)
                best, best_score = e, s
        return best, max(best_score, 0.0)

    async def search(self, query: str) -> Retrieved:
        query = query.strip()
        if not query:
            raise BadRequest("empty image search query")
        if self._fingerprint is None:
            raise RuntimeError("ImageFolderRetriever.start() was not called")
        if len(self._entries) > _THREAD_SEARCH_LABELS:
            entry, score = await asyncio.to_thread(self.best, query)
        else:
            entry, score = self.best(query)
        if entry is None or score < self.min_similarity:
            note = f"best label '{entry.label}' scored {score:.2f}" if entry is not None else "no labels"
            return Retrieved(status="no_result", query=query, source=self.name,
                             error=f"no label matches with similarity >= {self.min_similarity:g} ({note})")
        reasons: list[str] = []
        for path in entry.files[:MAX_RESULTS_TRIED]:
            try:
                data = await self._read(path)
            except (OSError, ValueError) as e:
                reasons.append(f"{path.name}: {e}")
                continue
            return Retrieved(status="ok", query=query, data=data, url=str(path), title=entry.label, source=self.name)
        return Retrieved(status="image_error", query=query, title=entry.label, source=self.name,
                         error="; ".join(reasons))

    async def _read(self, path: Path) -> bytes:
        size = self._sizes.get(path, 0)
        if size > MAX_IMAGE_BYTES:
            raise ValueError(f"larger than {MAX_IMAGE_BYTES} bytes ({size})")
        data = await asyncio.to_thread(path.read_bytes) if size >= _THREAD_READ_BYTES else path.read_bytes()
        if sniff_mime(data) is None:
            raise ValueError("not an image")
        return data
