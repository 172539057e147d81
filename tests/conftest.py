"""Fixtures every test folder shares.

``chromium``: headless Chromium for the report pages (report.html, leaderboard.html); the test
skips where Chromium is not installed (.ci/run installs it).  ``chromium.run(url, *args)`` runs
it once with a fresh profile and returns what it printed (``--dump-dom``: the page as drawn);
``chromium.dom(url)`` dumps the DOM after the page's scripts ran (``#check`` pages wait for
their images); ``chromium.screenshot(url, path)``.

``data/build`` goes on ``sys.path``: the sample build scripts are importable by name.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# the scripts that draw the shipped samples (data/build/: not part of the package) are imported by
# the tests of the samples as top-level modules (``import mmie_sample``)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data" / "build"))
# the golden runner (tests/golden/golden.py) is importable as ``golden``: golden_runs below uses it
sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))

_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--disable-dev-shm-usage")


def _find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class Chromium:
    def __init__(self, exe: str, profiles: Path):
        self.exe, self._profiles, self._n = exe, profiles, itertools.count()

    def run(self, url: str, *args: str, window: str = "1280,900") -> str:
        profile = self._profiles / f"profile-{next(self._n)}"
        profile.mkdir(parents=True)
        cmd = [self.exe, *_FLAGS, f"--user-data-dir={profile}", f"--window-size={window}", *args, url]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, HOME=str(profile)))
        assert proc.returncode == 0, f"chromium exited {proc.returncode}: {proc.stderr[-3000:]}"
        return proc.stdout

    def dom(self, url: str, *, budget_ms: int = 10000, window: str = "1280,900") -> str:
        return self.run(url, "--dump-dom", f"--virtual-time-budget={budget_ms}", window=window)

    def screenshot(self, url: str, path: Path, *, budget_ms: int = 5000, window: str = "1280,900") -> Path:
        self.run(url, f"--screenshot={path}", f"--virtual-time-budget={budget_ms}", window=window)
        assert path.is_file(), f"chromium wrote no screenshot at {path}"
        return path


@pytest.fixture(scope="session")
def chromium(tmp_path_factory) -> Chromium:
    exe = _find_chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
    return Chromium(exe, tmp_path_factory.mktemp("chromium"))


class GoldenRuns:
    """``runs(NAME)``: the output folder of shipped runner NAME, run once per session, on first
    use, offline (tests/golden/golden.py); ``runs.outcome(NAME)``: what that run handed its UI at
    the end (the ``RunOutcome``: the results' tables, the summary, the files), so the terminal's
    views of it can be drawn again at any width without running it again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._out: dict[str, Path] = {}
        self._outcome: dict[str, object] = {}

    def __call__(self, name: str) -> Path:
        if name not in self._out:
            from golden import run_runner
            from judgekit.runner import _NullUI

            outcomes = self._outcome

            class _Keep(_NullUI):  # shows nothing, keeps the outcome
                def show_results(self, outcome):
                    outcomes[name] = outcome

            self._out[name] = run_runner(name, self.root, _Keep())
        return self._out[name]

    def outcome(self, name: str):
        self(name)
        return self._outcome[name]


@pytest.fixture(scope="session")
def golden_runs(tmp_path_factory) -> GoldenRuns:
    """Each shipped runner run once per session (:class:`GoldenRuns`).  Shared by the golden test
    and the tests that check every shipped runner's report and terminal."""
    return GoldenRuns(tmp_path_factory.mktemp("golden"))
