"""Run every shipped runner offline and reduce what it writes to a comparable, compact snapshot.

The golden test (``test_golden.py``) and the script that records the goldens (``record.py``) share
this module, so a snapshot is made one way whether it is recorded or checked.

What a run writes and what the snapshot keeps:

- ``summary.json``, ``report.json``: parsed, then :func:`fingerprint`-ed;
- every ``*.csv``: read as rows of strings, fingerprinted column by column (the rows of the few
  CSVs whose order is not deterministic, :data:`UNORDERED_CSV`, sorted first);
- ``results.parquet``: read through duckdb (``select * ... order by all``), rows as JSON values,
  fingerprinted column by column.

Before fingerprinting, what changes from run to run and machine to machine is masked: the run id,
the run's output folder, the temporary root, the repository root (where the shipped samples
are read from) and the simulator's address (a free port) become ``<RUN_ID>``, ``<OUT>``,
``<TMP>``, ``<REPO>``, ``http://<SIM>``.  Requests- and tokens-per-minute limits are lifted for
these runs: they set how fast the calls go, not which calls or what comes back.  Nothing else is masked: the
runs are deterministic (the simulator is seeded and answers with no latency; local models are the
tests' fake worker, which answers from a hash of its input).

A fingerprint keeps a value as it is when its canonical JSON is short; a longer dict keeps its
keys, each fingerprinted; a longer list of records (rows) becomes one entry per column; any other
long value becomes its length and sha256.  :func:`differences` walks two fingerprints and names
the file and the key path (``report.json: items[rows].score``) where they part.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import duckdb

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
RECORDED = HERE / "recorded"

sys.path.insert(0, str(TESTS / "benchmarks"))
from offline_runners import SHIPPED, offline_spec  # noqa: E402

#: the tests' stand-in for the local worker (no torch; deterministic)
FAKE_WORKER = TESTS / "local_core" / "fake_worker.py"
#: a value whose canonical JSON is at most this long is kept as it is
SMALL = 240
#: a golden whose canonical JSON is longer than this is an error (keep the goldens compact)
MAX_GOLDEN_BYTES = 400_000
#: CSVs whose row order is not deterministic, compared as sorted rows (none now: MMGenBench's
#: captions.csv and generations.csv used to list an image's rows in the order its candidates' calls
#: completed; they follow the spec's order of candidates and generators since, and are compared
#: row by row like every other CSV)
UNORDERED_CSV: frozenset[str] = frozenset()

__all__ = ["SHIPPED", "differences", "snapshot_differences", "fingerprint", "run_runner", "snapshot", "canonical"]


def canonical(value: Any) -> str:
    """The one JSON spelling of ``value`` (sorted keys, no spaces, no NaN surprises)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _sha(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode()).hexdigest()


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 1 and all(isinstance(r, dict) for r in value)


def fingerprint(value: Any) -> Any:
    """A compact stand-in for ``value``: equal values, equal fingerprints; unequal ones differ
    where the values differ (up to a sha256 collision)."""
    if len(canonical(value)) <= SMALL:
        return value
    if isinstance(value, dict):
        return {"#dict": {str(k): fingerprint(v) for k, v in value.items()}}
    if _is_rows(value):
        columns: dict[str, None] = {}
        for row in value:
            columns.update(dict.fromkeys(row))
        return {"#rows": len(value),
                "#columns": {c: fingerprint([row.get(c, "#absent") for row in value]) for c in columns}}
    if isinstance(value, list):
        return {"#list": len(value), "#sha256": _sha(value), "#head": canonical(value)[:80]}
    return {"#len": len(canonical(value)), "#sha256": _sha(value), "#head": canonical(value)[:80]}


_MARKERS = {"#dict", "#rows", "#columns", "#list", "#len", "#sha256", "#head"}


def _short(value: Any) -> str:
    text = canonical(value)
    return text if len(text) <= 160 else text[:157] + "..."


def snapshot_differences(golden: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Where two snapshots differ, each line starting with the file: ``report.json: .items...``."""
    out = [f"{f}: written before, not now" for f in golden if f not in now]
    out += [f"{f}: written now, not before" for f in now if f not in golden]
    for f in golden:
        if f in now:
            out += [f"{f}: {d}" for d in differences(golden[f], now[f])]
    return out


def differences(golden: Any, now: Any, path: str = "") -> list[str]:
    """Where two fingerprints differ: one line per place, ``path: golden ... now ...``."""
    if canonical(golden) == canonical(now):  # (NaN == NaN here)
        return []
    where = path or "(whole file)"
    for kind in ("#dict", "#columns"):
        if isinstance(golden, dict) and isinstance(now, dict) and kind in golden and kind in now:
            out = []
            if kind == "#columns" and golden["#rows"] != now["#rows"]:
                out.append(f"{where}: {golden['#rows']} rows recorded, {now['#rows']} now")
            g, n = golden[kind], now[kind]
            sep = "[col " if kind == "#columns" else "."
            end = "]" if kind == "#columns" else ""
            for key in g:
                if key not in n:
                    out.append(f"{path}{sep}{key}{end}: recorded, missing now")
            for key in n:
                if key not in g:
                    out.append(f"{path}{sep}{key}{end}: new now (not recorded): {_short(n[key])}")
            for key in g:
                if key in n:
                    out.extend(differences(g[key], n[key], f"{path}{sep}{key}{end}"))
            return out or [f"{where}: differs"]
    if isinstance(golden, dict) and isinstance(now, dict) and not _MARKERS & (golden.keys() | now.keys()):
        out = [f"{path}.{k}: recorded, missing now" for k in golden if k not in now]
        out += [f"{path}.{k}: new now (not recorded): {_short(now[k])}" for k in now if k not in golden]
        out += [d for k in golden if k in now for d in differences(golden[k], now[k], f"{path}.{k}")]
        return out or [f"{where}: differs"]
    if isinstance(golden, list) and isinstance(now, list) and len(golden) == len(now):
        return [d for i, (g, n) in enumerate(zip(golden, now)) for d in differences(g, n, f"{path}[{i}]")]
    return [f"{where}: recorded {_short(golden)}, now {_short(now)}"]


# ---------------------------------------------------------------- running and reading


def _unthrottled(spec):
    """``spec`` with no requests- or tokens-per-minute limit: those set how fast the calls go,
    never which calls or what they answer, and the simulator answers at once."""
    from judgekit.config import RunSpec

    data = spec.model_dump(exclude_none=True)
    for model in data["models"].values():
        for key in ("requests_per_minute", "tokens_per_minute"):
            model.get("limits", {}).pop(key, None)
        if "sim" in model:
            model["sim"].pop("rpm", None)
    return RunSpec.model_validate(data)


def run_runner(name: str, root: Path, ui=None) -> Path:
    """Run shipped runner ``name`` offline under ``root``; the output folder it wrote.  ``ui``: what
    the run shows its progress and results to (none: nothing is shown)."""
    from judgekit.providers import local as local_provider
    from judgekit.runner import RunOptions, run_spec

    spec = _unthrottled(offline_spec(name)[0])
    out = root / name / "out"
    previous = os.environ.get(local_provider.WORKER_ENV)
    os.environ[local_provider.WORKER_ENV] = f"{sys.executable} {FAKE_WORKER}"
    try:
        outcome = asyncio.run(run_spec(spec, RunOptions(out_dir=out, cache_path=root / name / "cache.duckdb",
                                                        yes=True), ui))
    finally:
        if previous is None:
            os.environ.pop(local_provider.WORKER_ENV, None)
        else:
            os.environ[local_provider.WORKER_ENV] = previous
    # a run may end with failed calls and still write its results (that is behaviour too)
    (out / ".golden_run.json").write_text(canonical({"exit_code": outcome.exit_code,
                                                     "run_id": (outcome.summary or {}).get("run_id")}))
    return out


def _masks(out: Path, run_id: str | None) -> list[tuple[str, str]]:
    import judgekit

    repo = Path(judgekit.__file__).resolve().parents[1]
    pairs = [(str(out.resolve()), "<OUT>"), (str(out), "<OUT>"),
             (str(out.parent.parent.resolve()), "<TMP>"), (str(repo), "<REPO>")]
    if run_id:
        pairs.append((run_id, "<RUN_ID>"))
    return pairs


#: the simulator listens on a free port of the day
_SIM_URL = re.compile(r"http://127\.0\.0\.1:\d+")


def _masked(text: str, masks: list[tuple[str, str]]) -> str:
    for old, new in masks:
        text = text.replace(old, new)
    return _SIM_URL.sub("http://<SIM>", text)


def _mask_value(value: Any, masks: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        return _masked(value, masks)
    if isinstance(value, dict):
        return {_masked(str(k), masks): _mask_value(v, masks) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask_value(v, masks) for v in value]
    return value


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    con = duckdb.connect()
    try:
        rel = con.execute(f"select * from read_parquet('{path}') order by all")
        cols = [d[0] for d in rel.description]
        types = {d[0]: str(d[1]) for d in rel.description}
        rows = [dict(zip(cols, r)) for r in rel.fetchall()]
    finally:
        con.close()
    # the column types are part of what a reader sees
    return [{"#types": types}, *rows] if rows else [{"#types": types}]


def snapshot(out: Path) -> dict[str, Any]:
    """The fingerprints of what run ``out`` wrote: ``{file name: fingerprint}`` and ``#run``."""
    run = json.loads((out / ".golden_run.json").read_text())
    masks = _masks(out, run["run_id"])
    snap: dict[str, Any] = {"#run": {"exit_code": run["exit_code"]}}
    for path in sorted(out.iterdir()):
        name = path.name
        if name in ("summary.json", "report.json"):
            value = json.loads(_masked(path.read_text(encoding="utf-8"), masks))
        elif name.endswith(".csv"):
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
            value = [dict(zip(rows[0], r)) for r in rows[1:]] if rows else []
            if name in UNORDERED_CSV:
                value.sort(key=canonical)
            value = {"header": rows[0] if rows else [], "rows": _mask_value(value, masks)}
        elif name == "results.parquet":
            value = _mask_value(json.loads(canonical(_parquet_rows(path))), masks)
        else:
            continue
        snap[name] = fingerprint(value)
    return snap


def golden_path(name: str) -> Path:
    return RECORDED / f"{name}.json"
