"""Judgment records as NumPy columns, read once and shared by every stage of the statistics pass.

A run's results read the same judgment records (a list of dicts per judge and for the ensemble) in
many places: the rows, the per-item sums of the intervals, the repeats' spread, the controlled
figures, the honesty pass.  Each used to walk the list of dicts itself; at 765 items x 20
candidates x 3 judges x 3 repeats that walking was most of the pass's time.  :func:`columns`
gives one :class:`Columns` per list: each field is read from the records the first time a stage
asks for it (a lazy property) and kept, so the next stage pays nothing for it.

Each field is read with one ``r[name]`` per record in C (:func:`read`; the ``get`` of each only when
a record lacks the key), and lists of integers, floats and None become arrays in one NumPy call,
with the per-record checks kept for anything else.  A list may lend its fields instead of being
read (a mean ensemble's records, built only when read as records: :mod:`.ensemble_mean`).

The columns hold exactly what the record-walking code read (the same ``str()`` of a name, the
same checked score, the same ``float()`` of a VFS value), so figures computed from them are the
same numbers.  The cache is keyed on the list object (its identity and length, the first and the
last record): a list changed in place after its columns were read (records replaced or appended)
is read again; a record dict edited in place is not noticed, which no stage does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from operator import itemgetter
from typing import Any

import numpy as np

from .keys import packed

__all__ = ["NO_VFS", "Columns", "columns", "codes", "subset", "first_order"]

#: a record's ``vfs`` set to this (or left out) means "no VFS judgment for this item", which is
#: neither a value nor a failure (items without visual factuality criteria; a ``kind="vfs"``
#: judgment whose reply was empty, which the reference leaves out)
NO_VFS = "n/a"


def _check_score(s: Any, averaged: bool = False) -> float | None:
    """``s`` checked: a verdict -2..2 (an int), or with ``averaged`` any number in [-2, 2] (a
    panel's mean verdict, :mod:`.ensemble`); None stays None (a failure)."""
    if s is None:
        return None
    if type(s) is int and -2 <= s <= 2:  # the hot path: a verdict as the parsers give it
        return s
    if averaged and not isinstance(s, (bool, str)) and isinstance(s, (int, float)) and -2 <= s <= 2:
        return s
    if isinstance(s, bool) or s not in (2, 1, 0, -1, -2):
        raise ValueError(f"pairwise score must be one of -2..2 or None, not {s!r}")
    return int(s)


_MISSING = object()
#: lists whose columns are kept: id -> (the list, its Columns); the list is held so its id stays its own
_CACHE: dict[int, tuple[Sequence[Mapping[str, Any]], "Columns"]] = {}
_CACHE_SIZE = 16


def read(records: Sequence[Mapping[str, Any]], name: str, default: Any = None, *, required: bool = False
         ) -> list[Any]:
    """``r.get(name, default)`` of every record (``required``: ``r[name]``, KeyError where one lacks
    it): one ``r[name]`` each (in C) while every record has the key, the ``get`` of each when one
    lacks it; from a list that holds its records' fields until they are read as records (a mean
    ensemble's, :class:`.ensemble_mean.EnsembleRecords`), those fields."""
    fields = getattr(records, "field_values", None)
    if fields is not None:
        got = fields(name, default)
        if got is not None:
            return got
    try:
        return list(map(itemgetter(name), records))
    except KeyError:
        if required:
            raise
        return [r.get(name, default) for r in records]


def _built(records: Sequence[Any]) -> bool:
    """False for a list whose records are not built yet (:func:`read`): unchanged since its columns."""
    return getattr(records, "built", True)


def text_codes(values: Sequence[Any]) -> tuple[np.ndarray, list[str]]:
    """(code, names) of ``str(v)`` of each value (the values' own codes when all are text)."""
    code, distinct = codes(values)
    if all(type(v) is str for v in distinct):  # str() of each is itself: the same codes
        return code, distinct
    return codes([str(v) for v in values])


def floats(values: Sequence[Any], where: np.ndarray | None = None, kinds: set[type] | None = None) -> np.ndarray:
    """``float(v)`` of each value at ``where`` (every value without it) that is not None; NaN
    elsewhere.  A value ``float()`` refuses raises as ``float()`` does.  ``kinds``: the values'
    types, where the caller has them."""
    n = len(values)
    out = np.full(n, np.nan)
    if not n:
        return out
    kinds = set(map(type, values)) if kinds is None else kinds
    if kinds <= _FLOAT_TYPES:  # float() of each, None as NaN: the whole list at once
        got = np.array(values, dtype=float).reshape(n)
        if where is None:
            return got
        out[where] = got[where]
        return out
    sel = np.arange(n) if where is None else np.flatnonzero(where)
    picked = np.array(values, dtype=object).reshape(n)[sel] if kinds <= _SCALAR_TYPES else \
        np.array([values[i] for i in sel.tolist()] + [None], dtype=object)[:-1]  # (kept one-dimensional)
    if set(map(type, picked.tolist())) <= _FLOAT_TYPES:
        out[sel] = picked.astype(float)
        return out
    for i, v in zip(sel.tolist(), picked.tolist()):
        if v is not None:
            out[i] = float(v)
    return out


_FLOAT_TYPES = {int, float, type(None)}
#: values NumPy keeps whole in an object array (no sequence among them)
_SCALAR_TYPES = {int, float, str, bool, type(None)}


def ints(values: Sequence[Any], convert: bool = True) -> np.ndarray:
    """Each value as an integer (``int(v)`` with ``convert``; else as ``np.fromiter`` takes it)."""
    if set(map(type, values)) <= {int}:
        return np.array(values, dtype=np.intp).reshape(len(values))
    gen = (int(v) for v in values) if convert else iter(values)
    return np.fromiter(gen, dtype=np.intp, count=len(values))


def is_no_vfs(values: Sequence[Any], kinds: set[type] | None = None) -> np.ndarray:
    """``isinstance(v, str) and v == NO_VFS`` of each value (``kinds``: their types, if known)."""
    if (set(map(type, values)) if kinds is None else kinds) <= {int, float, str, type(None)}:  # == is the test
        if not values.count(NO_VFS):  # (list.count: the same ==, in C)
            return np.zeros(len(values), dtype=bool)
        return np.asarray(np.array(values, dtype=object) == NO_VFS, dtype=bool).reshape(len(values))
    return np.fromiter((isinstance(v, str) and v == NO_VFS for v in values), dtype=bool, count=len(values))


def codes(values: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """(each value's code, the distinct values in order of first appearance)."""
    distinct = list(dict.fromkeys(values))
    lookup = {v: i for i, v in enumerate(distinct)}
    return np.fromiter(map(lookup.__getitem__, values), dtype=np.intp, count=len(values)), distinct


def first_order(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each key's number, the keys numbered in order of first appearance; each number's first
    position).  ``key``: one integer per position, or rows of integers (positions x columns); any
    other sortable values (text, floats) one per position."""
    n = key.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if key.dtype.kind == "b" or (key.dtype.kind == "u" and key.dtype.itemsize < 8):
        key = key.astype(np.int64)
    small = key.dtype.kind == "i"  # (a uint64, text or float key takes the general sorts)
    if small and key.ndim == 2:  # rows of small integers: one integer each (mixed radix), when it fits
        key = packed(list(key.T))
    if small and key.ndim == 1 and int(key.max()) - int(key.min()) < 2 ** 32:
        # a stable sort on two 16-bit halves (NumPy's radix sort), lowest half first
        k = (key - key.min()).astype(np.int64)
        low, high = (k & 0xFFFF).astype(np.uint16), (k >> 16).astype(np.uint16)
        order = np.argsort(low, kind="stable")
        if high.any():
            order = order[np.argsort(high[order], kind="stable")]
        s = k[order]
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = s[1:] != s[:-1]
        inverse = np.empty(n, dtype=np.intp)
        inverse[order] = np.cumsum(new) - 1
        first = order[new]
    elif key.ndim == 1:
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
    else:
        order = np.lexsort(key.T[::-1])
        s = key[order]
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = np.any(s[1:] != s[:-1], axis=1)
        inverse = np.empty(n, dtype=np.intp)
        inverse[order] = np.cumsum(new) - 1
        first = order[new]
    by_first = np.argsort(first, kind="stable")
    renumber = np.empty(by_first.size, dtype=np.intp)
    renumber[by_first] = np.arange(by_first.size)
    return renumber[inverse], first[by_first]


class Columns:
    """The columns of one list of judgment records (see the module docstring); every attribute is
    read on first use."""

    def __init__(self, records: Sequence[Mapping[str, Any]]):
        self.records = records
        self.n = len(records)

    def _read(self, name: str, default: Any = None, *, required: bool = False) -> list[Any]:
        """:func:`read` of the records' field ``name``, or what :meth:`prefetch` read of it (handed
        over once: the property that asked keeps what it makes of it)."""
        got = self.__dict__.pop(f"pre:{name}", None)
        if got is not None:
            return got
        return read(self.records, name, default, required=required)

    def prefetch(self, names: Sequence[str]) -> None:
        """Read the fields ``names`` of every record in one pass over the records (a tuple of them
        each, in C), for the properties that will ask for them: one pass over hundreds of
        thousands of dicts costs about two thirds of one pass per field.  Only when every record
        has every one of the fields (else each is read on its own when asked, as without this),
        and not for a list that holds its fields already (:func:`read`)."""
        names = [k for k in dict.fromkeys(names) if f"pre:{k}" not in self.__dict__]
        recs = self.records
        if len(names) < 2 or not self.n or getattr(recs, "field_values", None) is not None:
            return
        if not all(k in recs[0] and k in recs[-1] for k in names):
            return
        try:
            rows = list(map(itemgetter(*names), recs))
        except KeyError:
            return
        for j, k in enumerate(names):  # (a pass over the tuples per field beats zip(*rows) and list())
            self.__dict__[f"pre:{k}"] = list(map(itemgetter(j), rows))

    # -- raw fields -------------------------------------------------------------------------------
    @cached_property
    def kind(self) -> list[Any]:
        """Each record's ``kind``; a record without one holds :data:`_MISSING`."""
        return self._read("kind", _MISSING)

    @cached_property
    def kind_code(self) -> tuple[np.ndarray, list[Any]]:
        """(code, kinds) of :attr:`kind` (a few distinct kinds: a mask of them is a lookup)."""
        return codes(self.kind)

    def _kind_mask(self, test) -> np.ndarray:
        code, kinds = self.kind_code
        return np.array([bool(test(k)) for k in kinds], dtype=bool)[code] if self.n else np.zeros(0, dtype=bool)

    @cached_property
    def is_pairwise(self) -> np.ndarray:
        """``r.get("kind", "pairwise") == "pairwise"``."""
        return self._kind_mask(lambda k: k is _MISSING or k == "pairwise")

    @cached_property
    def has_kind(self) -> np.ndarray:
        return self._kind_mask(lambda k: k is not _MISSING)

    def _coded(self, name: str, default: Any = "") -> tuple[np.ndarray, list[str]]:
        return text_codes(self._read(name, default))

    @cached_property
    def model(self) -> tuple[np.ndarray, list[str]]:
        """(code, names) of ``str(r.get("model", ""))``."""
        return self._coded("model")

    @cached_property
    def index(self) -> tuple[np.ndarray, list[str]]:
        """(code, names) of ``str(r["index"])`` (a record without an index raises KeyError)."""
        return text_codes(self._read("index", required=True))

    @cached_property
    def task(self) -> tuple[np.ndarray, list[str]]:
        return self._coded("task")

    @cached_property
    def category(self) -> tuple[np.ndarray, list[str]]:
        return self._coded("category")

    def level(self, name: str) -> tuple[np.ndarray, list[str]]:
        """(code, names) of the record's group at a level: ``task``, ``category`` (``str(r.get(level,
        ""))``) or ``overall`` (one group, ``"overall"``)."""
        if name == "overall":
            return np.zeros(self.n, dtype=np.intp), ["overall"]
        if name == "task":
            return self.task
        if name == "category":
            return self.category
        return self._coded(name)

    @cached_property
    def judge(self) -> tuple[np.ndarray, list[Any]]:
        """(code, values) of ``r.get("judge")`` (the values as they are, not as text)."""
        return codes(self._read("judge"))

    @cached_property
    def repeat(self) -> np.ndarray:
        """``r.get("repeat", 0)`` as an integer."""
        return ints(self._read("repeat", 0), convert=False)

    @cached_property
    def order(self) -> np.ndarray:
        """``int(r.get("order", 0))``."""
        return ints(self._read("order", 0))

    @cached_property
    def raw_score(self) -> list[Any]:
        return self._read("score")

    def raw(self, name: str) -> list[Any]:
        """``r.get(name)`` of every record."""
        if name == "score":
            return self.raw_score
        got = self.__dict__.get(f"raw:{name}")
        if got is None:
            got = self.__dict__[f"raw:{name}"] = self._read(name)
        return got

    def types(self, name: str) -> set[type]:
        """The types of :meth:`raw` ``name``'s values."""
        got = self.__dict__.get(f"types:{name}")
        if got is None:
            got = self.__dict__[f"types:{name}"] = set(map(type, self.raw(name)))
        return got

    def kind_is(self, kind: str) -> np.ndarray:
        """``r.get("kind") == kind``."""
        got = self.__dict__.get(f"kind_is:{kind}")
        if got is None:
            got = self.__dict__[f"kind_is:{kind}"] = self._kind_mask(lambda k: k is not _MISSING and k == kind)
        return got

    @cached_property
    def float_score(self) -> np.ndarray:
        """``float(r["score"])`` of the pairwise records (NaN where it is None and for every other
        record); a score ``float()`` refuses is NaN here too (a reader that must refuse it checks
        the NaNs whose raw score is not None)."""
        try:
            return floats(self.raw_score, self.is_pairwise, self.types("score"))
        except (TypeError, ValueError):
            pass
        out = np.full(self.n, np.nan)
        raw = self.raw_score
        for i in np.flatnonzero(self.is_pairwise).tolist():
            s = raw[i]
            if s is not None:
                try:
                    out[i] = float(s)
                except (TypeError, ValueError):
                    pass
        return out

    @cached_property
    def length_diff(self) -> np.ndarray:
        """``float(r["length_diff"])``, NaN where it is None or absent."""
        return floats(self._read("length_diff"))

    @cached_property
    def error_kind(self) -> list[Any]:
        return self._read("error_kind")

    # -- checked values ----------------------------------------------------------------------------
    @cached_property
    def score(self) -> np.ndarray:
        """The pairwise records' checked scores (:func:`.pairwise._score`: a verdict, or a mean
        ensemble's averaged verdict; ValueError for anything else); NaN for a failure and for a
        record that is not a pairwise judgment."""
        pw = self.is_pairwise
        raw = self.raw_score
        if self.types("score") <= {int, type(None)}:  # the hot path: verdicts and failures
            out = floats(raw, pw, self.types("score"))  # None as NaN
            if not (np.abs(out) > 2).any():  # else the check below raises
                return out
        out = np.full(self.n, np.nan)
        recs = self.records
        for i in np.flatnonzero(pw).tolist():
            s = raw[i]
            if s is None:
                continue
            if type(s) is int and -2 <= s <= 2:
                out[i] = s
            else:
                out[i] = _check_score(s, bool(recs[i].get("averaged")))
        return out

    @cached_property
    def is_vfs(self) -> np.ndarray:
        """:func:`.pairwise._is_vfs`: a VFS judgment (with ``kind``: ``"vfs"``; without: any ``vfs``
        key), not left out (:data:`NO_VFS`)."""
        out = np.zeros(self.n, dtype=bool)
        if not self.n:
            return out
        recs = self.records
        out = self.kind_is("vfs") & ~is_no_vfs(self.raw("vfs"), self.types("vfs"))  # a kind "vfs": any value but NO_VFS
        for i in np.flatnonzero(~self.has_kind).tolist():  # no kind: a ``vfs`` key, not NO_VFS
            v = recs[i].get("vfs", _MISSING)
            out[i] = v is not _MISSING and not (isinstance(v, str) and v == NO_VFS)
        return out

    @cached_property
    def vfs(self) -> np.ndarray:
        """``float(r["vfs"])`` of the VFS judgments (:attr:`is_vfs`); NaN for a failure (None) and
        for every other record."""
        return floats(self.raw("vfs"), self.is_vfs, self.types("vfs"))

    @cached_property
    def vfs_ref(self) -> np.ndarray:
        """``float(r["vfs_ref"])`` where the VFS value is valid and the baseline's is not None; NaN
        elsewhere."""
        return floats(self.raw("vfs_ref"), ~np.isnan(self.vfs), self.types("vfs_ref"))

    @cached_property
    def sums(self) -> np.ndarray:
        """Each record's :func:`.pairwise.record_sums` (n x 6, :data:`.pairwise.SUM_COLUMNS`)."""
        out = np.zeros((self.n, 6))
        s = self.score
        ok = ~np.isnan(s)  # only pairwise records have a score
        out[ok, 0] = 50.0 * s[ok]
        out[ok, 1] = 100.0 * (s[ok] > 0)
        out[ok, 2] = 1.0
        # the VFS part: a kind "vfs" record, or one without a kind (a pairwise judgment with its kind
        # carries no VFS)
        v = self.vfs
        vok = ~np.isnan(v) & ~(self.has_kind & self.is_pairwise)
        out[vok, 3] = v[vok]
        ref = self.vfs_ref[vok]
        out[vok, 4] = np.where(np.isnan(ref), 0.0, ref)
        out[vok, 5] = 1.0
        return out

    # -- what the behaviour figures read ---------------------------------------------------------
    @cached_property
    def called(self) -> np.ndarray:
        """``r.get("error_kind") != "candidate_failed"``: a judgment the judge was asked (a failed
        candidate's has no judge call and says nothing about the judge)."""
        from itertools import repeat
        from operator import ne

        values = self.error_kind
        if not values.count("candidate_failed"):  # (list.count: the same ==, in C)
            return np.ones(self.n, dtype=bool)
        return np.fromiter(map(ne, values, repeat("candidate_failed")), dtype=bool, count=self.n)

    @cached_property
    def plain_scores(self) -> bool:
        """Every ``r.get("score")`` is None, an int or a float (by type: no bool, str or NumPy
        number), so :attr:`float_score` is ``float()`` of every pairwise record's score."""
        return self.types("score") <= _FLOAT_TYPES


def columns(records: Sequence[Mapping[str, Any]]) -> Columns:
    """The :class:`Columns` of ``records``, the same object for the same unchanged list."""
    key = id(records)
    got = _CACHE.get(key)
    n = len(records)
    if got is not None and got[0] is records and got[1].n == n and (
            n == 0 or not _built(records) or (got[1].first is records[0] and got[1].last is records[-1])):
        return got[1]
    col = Columns(records)
    _register(records, col)
    return col


def _register(records: Sequence[Mapping[str, Any]], col: Columns) -> None:
    n = len(records)
    if _built(records):
        col.first, col.last = (records[0], records[-1]) if n else (None, None)
    else:  # the list sets them when it builds its records
        col.first = col.last = None
        records.registered(col)
    key = id(records)
    _CACHE.pop(key, None)
    while len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (records, col)


def subset(records: list, pos: np.ndarray) -> list:
    """The records at positions ``pos`` (in that order) as a new list whose columns are the
    parent's, sliced: every field the parent has read already costs the subset nothing."""
    parent = columns(records)
    plist = pos.tolist()
    # runs of consecutive positions (one per judge and repeat, as records are written): taken as slices
    cut = (np.flatnonzero(np.diff(pos) != 1) + 1).tolist()
    runs = list(zip([0, *cut], [*cut, len(plist)])) if plist and len(cut) < len(plist) // 8 else None

    def take(values: list) -> list:
        if runs is None:
            return [values[i] for i in plist]
        out: list = []
        for a, b in runs:
            out += values[plist[a]:plist[b - 1] + 1]
        return out

    sub = take(records) if _built(records) else records.taken(take)
    col = Columns(sub)
    for name, value in parent.__dict__.items():
        if name in ("records", "n", "first", "last"):
            continue
        if isinstance(value, np.ndarray):
            col.__dict__[name] = value[pos]
        elif isinstance(value, tuple):  # (codes, names): the names kept whole
            col.__dict__[name] = (value[0][pos], value[1])
        elif isinstance(value, list):
            col.__dict__[name] = take(value)
    _register(sub, col)
    return sub
