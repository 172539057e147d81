"""The report on disk: thumbnails, ``report.json`` and ``report.html`` in a run folder.

:func:`write_report` makes a thumbnail of every image of the document (at most 384 px a side,
JPEG, named by the sha256 of the source bytes so an image shown twice is stored once and a rerun
rewrites nothing), drops the thumbnails the report no longer shows, then writes ``report.json``
and ``report.html`` (each atomically).  :func:`rebuild_report` renders the page again from
``report.json`` alone: a run folder copied elsewhere, with no cache, keeps its whole report.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import DataError
from .doc import Image, ReportDoc
from .render import clean_text, dumps, finite, render_html

__all__ = ["write_report", "rebuild_report", "FILES_DIR", "THUMB_SIDE"]

FILES_DIR = "report_files"
THUMB_SIDE = 384
JPEG_QUALITY = 80
_THUMB_NAME = re.compile(r"^[0-9a-f]{20}\.jpg$")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _thumbnail(raw: bytes, dest: Path) -> tuple[int, int]:
    """Write ``dest`` (unless it is there) from the encoded image ``raw``; the original's size."""
    from io import BytesIO

    from PIL import Image as PIL

    with PIL.open(BytesIO(raw)) as im:
        size = im.size
        if dest.exists():
            return size
        if im.format == "JPEG":
            im.draft("RGB", (THUMB_SIDE, THUMB_SIDE))  # decode at 1/2, 1/4 or 1/8 scale: far faster
        im.load()
        if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
            rgba = im.convert("RGBA")
            flat = PIL.new("RGB", rgba.size, (255, 255, 255))
            flat.paste(rgba, mask=rgba.getchannel("A"))
        elif im.mode in ("I;16", "I;16B", "I;16L", "I"):
            flat = im.point(lambda v: v / 256).convert("L").convert("RGB")
        else:
            flat = im.convert("RGB")
        flat.thumbnail((THUMB_SIDE, THUMB_SIDE), PIL.Resampling.LANCZOS, reducing_gap=1.0)  # box-reduce first: half the time
        buf = BytesIO()
        flat.save(buf, "JPEG", quality=JPEG_QUALITY, optimize=False)
    _atomic_write(dest, buf.getvalue())
    return size


def _source_name(img: Image) -> str:
    return img.path.name if img.path is not None else "image data"


def _make(img: Image, files: Path) -> tuple[str | None, tuple[int, int] | None, str | None]:
    """(thumbnail name, original size, None) or (None, None, why not)."""
    try:
        raw = img.data if img.data is not None else Path(img.path).read_bytes()  # type: ignore[arg-type]
    except FileNotFoundError:
        return None, None, f"{_source_name(img)}: file not found"
    except OSError as e:
        return None, None, f"{_source_name(img)}: cannot read ({e.strerror or type(e).__name__})"
    name = hashlib.sha256(raw).hexdigest()[:20] + ".jpg"
    try:
        size = _thumbnail(raw, files / name)
    except Exception as e:  # noqa: BLE001 - any bytes may come in; Pillow raises many kinds
        why = "not an image Pillow can read" if type(e).__name__ == "UnidentifiedImageError" else (
            f"cannot decode ({type(e).__name__}: {str(e)[:80]})")
        return None, None, f"{_source_name(img)}: {why}"
    return name, size, None


def _thumbnails(doc: ReportDoc, files: Path) -> set[str]:
    """Fill ``src``/``width``/``height`` (or ``missing``) of every image; the names in use."""
    todo: dict[Any, list[Image]] = {}
    for img in doc.images():
        if img.path is None and img.data is None:
            continue  # a placeholder, or an image already written (from report.json)
        key = ("path", str(Path(img.path).resolve())) if img.data is None else ("data", hashlib.sha256(img.data).digest())
        todo.setdefault(key, []).append(img)
    used = {Path(i.src).name for i in doc.images() if i.src and i.path is None and i.data is None}
    if todo:
        files.mkdir(parents=True, exist_ok=True)
        firsts = [imgs[0] for imgs in todo.values()]
        workers = min(len(firsts), max(1, (os.cpu_count() or 2)))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:  # Pillow decodes, resizes and encodes without the GIL
                results = list(pool.map(lambda i: _make(i, files), firsts))
        else:
            results = [_make(i, files) for i in firsts]
        for imgs, (name, size, why) in zip(todo.values(), results):
            for img in imgs:
                if name is None:
                    img.src, img.width, img.height, img.missing = None, None, None, why
                else:
                    img.src = f"{FILES_DIR}/{name}"
                    img.width, img.height = size
                    img.missing = None
                    used.add(name)
    return used


def _prune(files: Path, used: set[str]) -> None:
    if not files.is_dir():
        return
    for p in files.iterdir():
        if _THUMB_NAME.match(p.name) and p.name not in used:
            try:
                p.unlink()
            except OSError:
                pass


def _dump(doc_json: dict[str, Any]) -> bytes:
    return clean_text(dumps(doc_json)).encode("utf-8")


def write_report(out_dir: Path, doc: ReportDoc) -> Path:
    """Thumbnails under ``out_dir/report_files/``, then ``report.json`` and ``report.html``;
    returns the page's path.  An image that cannot be read or decoded becomes a placeholder
    saying why (``Image.missing``); nothing here raises for a bad image."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = out_dir / FILES_DIR
    used = _thumbnails(doc, files)
    _prune(files, used)
    doc_json = finite(doc.to_json())  # NaN and infinities as None: report.json is strict JSON
    _atomic_write(out_dir / "report.json", _dump(doc_json))
    page = out_dir / "report.html"
    _atomic_write(page, render_html(doc_json).encode("utf-8"))
    return page


def rebuild_report(run_dir: Path) -> Path:
    """Render ``run_dir/report.html`` again from ``run_dir/report.json``; returns the page's path.
    A missing or invalid ``report.json`` is a :class:`~judgekit.errors.DataError` naming it."""
    run_dir = Path(run_dir)
    src = run_dir / "report.json"
    try:
        text = src.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(str(src), "no report.json here (a run of this judgekit writes one)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(str(src), f"cannot read it ({getattr(e, 'strerror', None) or e})") from None
    try:
        doc_json = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(str(src), f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    if not isinstance(doc_json, dict) or "title" not in doc_json:
        raise DataError(str(src), "not a report document (a JSON object with a title)")
    try:
        doc_json = ReportDoc.from_json(doc_json).to_json()  # the same shape as write_report's
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise DataError(str(src), f"not a report document ({type(e).__name__}: {e})") from None
    page = run_dir / "report.html"
    _atomic_write(page, render_html(doc_json).encode("utf-8"))
    return page
