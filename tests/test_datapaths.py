"""judgekit.datapaths: whatever a data file names, a loader reads inside its folder or refuses
with a PathRefused (never another exception, never a file outside)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.datapaths import NAME_MAX_BYTES, PathRefused, resolve_inside, resolve_ref


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A data folder with files, a sub-folder, symlinks inside, out, and in a loop."""
    top = tmp_path_factory.mktemp("dp")
    (top / "secret.txt").write_text("outside")
    root = top / "data"
    (root / "images" / "sub").mkdir(parents=True)
    (root / "images" / "a.png").write_bytes(b"a")
    (root / "images" / "sub" / "b.png").write_bytes(b"b")
    os.symlink("a.png", root / "images" / "in.png")
    os.symlink(top / "secret.txt", root / "images" / "out.png")
    os.symlink("..", root / "images" / "up")
    os.symlink("loop2", root / "images" / "loop1")
    os.symlink("loop1", root / "images" / "loop2")
    return root.resolve()


@pytest.mark.parametrize("ref, why", [
    ("images/out.png", "resolves outside the data folder"),
    ("images/up/../secret.txt", "escapes"),
    ("images/up/data/../../secret.txt", "escapes"),
    ("images/loop1", "symlink loop"),
    ("images/loop1/x.png", "symlink loop"),
    ("images/a\0.png", "NUL byte"),
    ("images/" + "x" * 5000 + ".png", "5004 characters"),
    ("/etc/passwd", "absolute"),
    ("C:\\x.png", "absolute"),
    ("", "empty"),
])
def test_refused(tree, ref, why):
    with pytest.raises(PathRefused, match=why) as e:
        resolve_ref(tree, ref)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400  # one line, short even for a 5,000-char name


def test_inside_links_are_fine(tree):
    assert resolve_ref(tree, "images/in.png") == tree / "images" / "a.png"
    assert resolve_ref(tree, "images/sub/b.png") == tree / "images" / "sub" / "b.png"
    assert resolve_inside(tree, tree / "images" / "in.png") == tree / "images" / "a.png"


def test_listing_side_check_says_the_same(tree):
    with pytest.raises(PathRefused, match="resolves outside the data folder .*a symlink may not lead out of it"):
        resolve_inside(tree, tree / "images" / "out.png")
    with pytest.raises(PathRefused, match="symlink loop"):
        resolve_inside(tree, tree / "images" / "loop1")


_PARTS = st.sampled_from(["images", "sub", "a.png", "b.png", "in.png", "out.png", "up", "loop1", "loop2", "..",
                          ".", "", "x" * 300, "a\0b", "C:", "~", "\\", "data", "secret.txt"])


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_PARTS, min_size=1, max_size=6), sep=st.sampled_from(["/", "\\"]),
       lead=st.sampled_from(["", "/", "\\", "./"]))
def test_any_ref_is_inside_or_refused(tree, parts, sep, lead):
    ref = lead + sep.join(parts)
    try:
        got = resolve_ref(tree, ref)
    except PathRefused as e:
        assert "\n" not in str(e)
        return
    assert got.is_relative_to(tree), (ref, got)
    assert got == got.resolve()
    assert "\0" not in ref and all(len(p.encode()) <= NAME_MAX_BYTES for p in ref.replace("\\", "/").split("/"))
