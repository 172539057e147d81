"""Files inside a data folder: one rule, one message, for every loader.

A loader reads a data folder (MMIE's images folder, an MMGenBench folder, a GuessBench data
folder, an image folder a retriever searches) only inside it:

- a path written in a data file (:func:`resolve_ref`) must be relative and free of ``..``, NUL
  bytes and over-long names;
- every file read, whether named in a data file or found by listing the folder
  (:func:`resolve_inside`), must resolve, through symlinks, to a place inside the folder.  A
  symlink that leads out is refused, and so is a symlink loop.

Each refusal is a :class:`PathRefused` (a ``ValueError``) whose message says what is wrong
with the path; the loader puts it in its own error with the file, row and field.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath, PureWindowsPath

__all__ = ["PathRefused", "resolve_inside", "resolve_ref", "shown_path", "NAME_MAX_BYTES"]

#: the longest file name (one path component) the common file systems take, in bytes
NAME_MAX_BYTES = 255


class PathRefused(ValueError):
    """A path a loader will not read; ``str()`` says why (without the file/row context)."""


def shown_path(ref: str | os.PathLike[str], limit: int = 80) -> str:
    """``ref`` quoted for a one-line message, cut short when long."""
    text = os.fspath(ref)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text)} characters)"


def resolve_inside(root: Path, path: Path, *, folder: str = "data folder") -> Path:
    """``path`` (a path under ``root``, as listed or joined) fully resolved.

    ``root`` must already be resolved.  Raises :class:`PathRefused` for a symlink loop, a path
    the system cannot resolve, and one that resolves outside ``root`` (``folder`` names the
    folder in the message: "images folder", "data folder"...).
    """
    shown = shown_path(path.relative_to(root) if path.is_relative_to(root) else path)
    try:
        resolved = path.resolve()
    except RuntimeError:  # Python < 3.13 reports a loop this way
        raise PathRefused(f"{shown} is a symlink loop") from None
    except OSError as e:
        raise PathRefused(f"{shown} cannot be resolved ({e.strerror or e})") from None
    except ValueError:
        raise PathRefused(f"{shown} contains a NUL byte") from None
    if not resolved.is_relative_to(root):
        raise PathRefused(f"{shown} resolves outside the {folder} {root} (to {shown_path(resolved)}); "
                          f"a symlink may not lead out of it")
    return resolved


def resolve_ref(root: Path, ref: str, *, folder: str = "data folder") -> Path:
    """A path written in a data file, relative to ``root`` (resolved), checked and resolved.

    Refused: an empty path, a NUL byte, a name longer than :data:`NAME_MAX_BYTES` bytes, an
    absolute path (POSIX or Windows), a ``..`` component, and whatever :func:`resolve_inside`
    refuses.
    """
    if not ref.strip():
        raise PathRefused(f"{shown_path(ref)} is empty")
    if "\0" in ref:
        raise PathRefused(f"{shown_path(ref)} contains a NUL byte")
    parts = re.split(r"[\\/]", ref)
    longest = max(parts, key=lambda s: len(s.encode("utf-8", "surrogateescape")))
    if len(longest.encode("utf-8", "surrogateescape")) > NAME_MAX_BYTES:
        raise PathRefused(f"{shown_path(ref)} has a name of {len(longest)} characters; the most a file "
                          f"system takes is {NAME_MAX_BYTES} bytes")
    if PurePosixPath(ref).is_absolute() or PureWindowsPath(ref).is_absolute() \
            or PureWindowsPath(ref).drive or ref.startswith(("/", "\\")):
        raise PathRefused(f"{shown_path(ref)} is absolute; it must be relative to the {folder} {root}")
    if ".." in parts:
        raise PathRefused(f"{shown_path(ref)} escapes the {folder} {root} ('..')")
    return resolve_inside(root, root / ref, folder=folder)
