"""The build scripts in ``data/build/`` write the shipped samples again, byte for byte, and stay
outside the installed package.

Every file of ``data/creation_mmbench``, ``data/guessbench``, ``data/mmgenbench`` and ``data/mmie``
is written by ``data/build/build_all.py`` (run as a person runs it, in a subprocess), except the
hand-written READMEs listed in :data:`HAND_WRITTEN`.  One exception in the comparison: the Hugging
Face parquet carries its writer's version (``created_by``, DuckDB's), which is masked before the
bytes are compared.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
BUILT = ("creation_mmbench", "guessbench", "mmgenbench", "mmie")
#: shipped files no script writes
HAND_WRITTEN = {"creation_mmbench/README.md"}


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _unstamped(path: Path) -> bytes:
    """The file's bytes, with a parquet writer's version stamp masked (same length)."""
    data = path.read_bytes()
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        stamp = pq.ParquetFile(path).metadata.created_by.encode()
        data = data.replace(stamp, b"#" * len(stamp))
    return data


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    proc = subprocess.run([sys.executable, str(DATA / "build" / "build_all.py"), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.parametrize("name", BUILT)
def test_the_build_script_writes_the_shipped_sample_byte_for_byte(name, rebuilt):
    shipped = [f for f in _files(DATA / name) if f"{name}/{f}" not in HAND_WRITTEN]
    assert _files(rebuilt / name) == shipped
    differ = [f for f in shipped if _unstamped(rebuilt / name / f) != _unstamped(DATA / name / f)]
    assert not differ, f"data/build writes otherwise than shipped: {name}/{differ[:10]}"


def test_the_package_imports_no_build_script():
    names = {p.stem for p in (DATA / "build").glob("*.py")}
    offenders = []
    for path in (ROOT / "judgekit").rglob("*.py"):
        if "_samples" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                      if f"import {n}" in text or f"from {n} " in text]
    assert not offenders, offenders
