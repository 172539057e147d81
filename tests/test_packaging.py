"""Every shipped file (the samples, prompts and runners behind judgekit/_samples, _prompts and
_runners) is matched by a pattern of pyproject.toml's package-data, so a non-editable install
(a wheel) holds what the shipped runners read; the sample build scripts (``data/build/``) stay out
of it."""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _patterns() -> list[str]:
    return _setuptools()["package-data"]["judgekit"]


def _excluded() -> list[str]:
    return _setuptools().get("exclude-package-data", {}).get("judgekit", [])


def _matches(rel: str, pattern: str) -> bool:
    # setuptools globs: "**" any folders (none included), "*" within one name
    path = PurePosixPath(rel)
    if "/**/" in pattern:
        head, tail = pattern.split("/**/", 1)
        return rel.startswith(head + "/") and path.match(tail) and path.parts[0] == head
    return path.match(pattern) and len(path.parts) == len(PurePosixPath(pattern).parts)


def test_every_shipped_file_is_in_the_wheel():
    missing = []
    for link, folder in (("_samples", "data"), ("_prompts", "prompts"), ("_runners", "runners")):
        for f in sorted((ROOT / folder).rglob("*")):
            if f.is_file() and not f.name.startswith("."):
                rel = f"{link}/{f.relative_to(ROOT / folder).as_posix()}"
                if rel.startswith("_samples/build/"):
                    continue  # build scripts, not shipped (test below)
                if not any(_matches(rel, p) for p in _patterns()):
                    missing.append(rel)
    assert not missing, f"not in pyproject.toml's package-data (a wheel would lack them): {missing[:10]}"


def test_the_matcher_tells_shipped_from_left_out():
    assert _matches("_samples/pairwise/questions.jsonl", "_samples/**/*.jsonl")
    assert _matches("_samples/q.jsonl", "_samples/**/*.jsonl")
    assert not _matches("_samples/pairwise/questions.jsonl", "_samples/**/*.json")
    assert _matches("_runners/quickstart.toml", "_runners/*.toml")
    assert not _matches("_runners/x/quickstart.toml", "_runners/*.toml")


def test_the_sample_build_scripts_are_left_out_of_the_wheel():
    build = sorted(f for f in (ROOT / "data" / "build").iterdir() if f.is_file())
    assert build, "data/build/ holds the sample build scripts"
    for f in build:
        assert any(_matches(f"_samples/build/{f.name}", p) for p in _excluded()), f.name
    # and nothing shipped is excluded by those patterns
    for f in (ROOT / "data").rglob("*"):
        rel = f"_samples/{f.relative_to(ROOT / 'data').as_posix()}"
        if f.is_file() and not rel.startswith("_samples/build/"):
            assert not any(_matches(rel, p) for p in _excluded()), rel
    assert "judgekit._samples.build*" in _setuptools()["packages"]["find"]["exclude"]
