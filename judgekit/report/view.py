"""Opening results: ``judgekit view [RUN_DIR]`` and ``judgekit view --serve [FOLDER]``.

* :func:`find_report` -- the report.html a path names: a run folder's, the file itself, or, for a
  folder of runs (``judgekit-out``), the latest run's (by the time its report.json was written).
* :func:`open_report` -- open it with :mod:`webbrowser`, or say there is no browser: on Linux
  without a display (no ``DISPLAY``, no ``WAYLAND_DISPLAY``) and no ``BROWSER`` set, or where
  :func:`webbrowser.open` says it opened nothing.
* :func:`make_server` -- a folder of runs served on localhost: ``/`` is an index page with a row
  per run (benchmark, date, headline figures) linking to its report; everything else is the
  folder's files as they are (each run's report.html with its thumbnails, leaderboard.html).
"""

from __future__ import annotations

import html
import http.server
import json
import math
import os
import sys
import urllib.parse
import webbrowser
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["RunEntry", "find_report", "latest_run", "list_runs", "has_browser", "open_report", "index_html",
           "make_server", "DEFAULT_ROOT", "DEFAULT_PORT"]

DEFAULT_ROOT = Path("judgekit-out")
DEFAULT_PORT = 7600
REPORT = "report.html"


@dataclass
class RunEntry:
    """A run folder as the index lists it."""

    path: Path
    benchmark: str
    spec: str
    date: str
    headline: str
    status: str
    mtime: float


def _read_json(p: Path) -> dict[str, Any]:
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return d if isinstance(d, dict) else {}


def _is_run(p: Path) -> bool:
    return p.is_dir() and (p / REPORT).is_file()


def _mtime(p: Path) -> float:
    for name in ("report.json", REPORT):
        try:
            return (p / name).stat().st_mtime
        except OSError:
            continue
    return 0.0


def _headline(report: dict[str, Any]) -> str:
    """The first headline figure of each candidate: ``Reward: a 71.4, b -25`` (at most 4)."""
    heads = [h for h in report.get("headline", []) or [] if isinstance(h, dict)]
    if not heads:
        return ""
    fig, judge = heads[0].get("figure"), heads[0].get("judge")
    cells = []
    for h in heads:
        if h.get("figure") == fig and h.get("judge") == judge:
            v = h.get("value")
            shown = f"{v:.4g}" if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else "–"
            cells.append(f"{h.get('candidate')} {shown}")
    more = f", +{len(cells) - 4} more" if len(cells) > 4 else ""
    return f"{fig}: " + ", ".join(cells[:4]) + more


def _entry(p: Path) -> RunEntry:
    report, summary = _read_json(p / "report.json"), _read_json(p / "summary.json")
    meta = report.get("meta") if isinstance(report.get("meta"), dict) else {}
    mtime = _mtime(p)
    return RunEntry(path=p, benchmark=str(report.get("benchmark") or summary.get("benchmark") or ""),
                    spec=str(summary.get("spec") or meta.get("spec") or ""),
                    date=datetime.fromtimestamp(mtime).strftime("%Y-%m-%d %H:%M") if mtime else "",
                    headline=_headline(report), status=str(summary.get("status") or meta.get("status") or ""),
                    mtime=mtime)


def list_runs(folder: Path) -> list[RunEntry]:
    """The run folders (with report.html) in ``folder``: itself where it is one, else its
    subfolders and theirs (two levels: ``judgekit-out/<spec>``, ``runs/<group>/<spec>``), the
    newest first."""
    folder = Path(folder)
    if _is_run(folder):
        return [_entry(folder)]
    found = []
    try:
        level1 = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    for p in level1:
        if _is_run(p):
            found.append(p)
            continue
        try:
            found.extend(sorted(q for q in p.iterdir() if _is_run(q)))
        except OSError:
            continue
    entries = [_entry(p) for p in found]
    entries.sort(key=lambda e: -e.mtime)
    return entries


def latest_run(folder: Path) -> Path | None:
    runs = list_runs(folder)
    return runs[0].path if runs else None


def find_report(path: Path | None) -> Path:
    """The report.html that ``path`` names (None: the latest run in ``judgekit-out/``); a path
    with no report is a :class:`UsageError` saying what to give."""
    given = path is not None
    path = Path(path) if given else DEFAULT_ROOT
    if not path.exists():
        if not given:
            raise UsageError(f"no {DEFAULT_ROOT}/ here: give a run folder (judgekit view RUN_DIR), or run a spec first")
        raise UsageError(f"{path}: no such file or folder")
    if path.is_file():
        if path.suffix.lower() in (".html", ".htm"):
            return path
        raise UsageError(f"{path}: not a run folder or a report page")
    if (path / REPORT).is_file():
        return path / REPORT
    latest = latest_run(path)
    if latest is None:
        raise UsageError(f"{path}: no report.html there or in its run folders (give a run's results folder, e.g. "
                         f"{DEFAULT_ROOT}/quickstart)")
    return latest / REPORT


def has_browser() -> bool:
    """Whether a browser can be shown: ``BROWSER`` set, or not Linux/BSD, or a display there."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def open_report(report: Path, *, print_only: bool = False) -> tuple[bool, str]:
    """Open ``report`` in the browser unless ``print_only`` or no browser is there; returns
    (whether it was opened, its file:// URL)."""
    url = Path(os.path.abspath(report)).as_uri()
    if print_only or not has_browser():
        return False, url
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    return bool(opened), url


def _esc(s: Any) -> str:
    return html.escape(str(s), quote=True)


def index_html(folder: Path) -> str:
    """The index page of a served folder: a row per run linking to its report, and the folder's
    leaderboard.html when there is one."""
    folder = Path(folder)
    runs = list_runs(folder)
    rows = []
    for e in runs:
        rel = e.path.relative_to(folder).as_posix() if e.path != folder else "."
        href = urllib.parse.quote(f"{rel}/{REPORT}" if rel != "." else REPORT, safe="/")
        rows.append(f'<tr><td><a href="{_esc(href)}">{_esc(rel if rel != "." else e.path.name)}</a></td>'
                    f"<td>{_esc(e.benchmark)}</td><td>{_esc(e.spec)}</td><td>{_esc(e.date)}</td>"
                    f"<td>{_esc(e.status)}</td><td>{_esc(e.headline)}</td></tr>")
    extra = ""
    if (folder / "leaderboard.html").is_file():
        extra = '<p><a href="leaderboard.html">leaderboard.html</a> (the comparison of runs)</p>'
    body = ("<table><thead><tr><th>run</th><th>benchmark</th><th>spec</th><th>date</th><th>status</th>"
            f"<th>headline</th></tr></thead><tbody>{''.join(rows)}</tbody></table>" if rows else
            "<p>No run folder with a report.html here.</p>")
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content=\"width=device-width, initial-scale=1\">"
            f"<title>judgekit runs: {_esc(folder.resolve().name)}</title><style>"
            "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330}"
            "table{border-collapse:collapse}th,td{border-bottom:1px solid #d8dde6;padding:4px 10px;text-align:left}"
            "thead th{background:#f5f7fa}a{color:#0072B2}</style></head><body>"
            f"<h1>judgekit runs</h1><p>{_esc(folder.resolve())} · {len(runs)} run{'s' if len(runs) != 1 else ''}, "
            f"newest first</p>{extra}{body}</body></html>\n")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """The folder's files, and the index page at ``/`` (unless the folder has its own index.html)."""

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        path = urllib.parse.urlsplit(self.path).path
        if path in ("/", "/index.html") and not (Path(self.directory) / "index.html").is_file():
            data = index_html(Path(self.directory)).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (quiet: no line per request)
        pass


def make_server(folder: Path, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> http.server.ThreadingHTTPServer:
    """A server of ``folder`` on ``host:port`` (port 0: a free one; ``server.server_address``
    says which), not yet serving: call ``serve_forever()`` and, to stop, ``shutdown()`` from
    another thread (or Ctrl-C), then ``server_close()``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a folder (give a folder of runs, e.g. {DEFAULT_ROOT})")
    try:
        return http.server.ThreadingHTTPServer((host, port), partial(_Handler, directory=str(folder.resolve())))
    except OSError as e:
        raise UsageError(f"cannot serve on {host}:{port}: {e.strerror or e}") from None
