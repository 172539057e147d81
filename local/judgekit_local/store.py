"""The content-addressed blob store the worker shares with the core (PROTOCOL.md).

A blob lives at ``<root>/<first 2 hex of sha256>/<sha256><ext>``. Writes go to a ``*.tmp`` file
in the blob's folder and are renamed into place (atomic on POSIX and Windows), so a reader never
sees half a file. This is a deliberately small twin of ``judgekit.blobs``: the worker may live in
an environment without the core, so it must not import it.

Lookups are O(1): a blob's file is found by trying its exact name with each known extension
(``_EXTENSIONS``, most likely first: a stat, or an open, each), never by listing its folder.
Only when none of them exists is the folder scanned once for ``<sha256>*`` (a blob some other
writer stored under an extension of its own), so a missing blob costs a few stats and a scan.
``put`` checks the known names only: bytes some other writer stored under an extension of its
own are stored once more under ``ext`` (same content, same hash: harmless).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

__all__ = ["BlobMissing", "Store"]

_SHA256 = re.compile(r"[0-9a-f]{64}")

# The extensions either side writes (``judgekit.blobs.EXT_BY_MIME`` and the worker's ``.f32``),
# most likely first: the worker reads images and writes vectors.
_EXTENSIONS = (".png", ".f32", ".jpg", ".webp", ".jpeg", ".gif", ".bmp", ".bin", ".npy")

# Does a name exist: os.access is one syscall and raises nothing (os.path.isfile costs twice as
# much, most of it the exception of a miss).
_exists, _F_OK = os.access, os.F_OK

# A new file gets O_EXCL (never clobbers another writer's temporary file) and mode 0o600, as
# tempfile.mkstemp would, without mkstemp's per-call name generator.
_TMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
              | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOINHERIT", 0))


class BlobMissing(KeyError):
    """No blob with that hash in the store (or the hash is not a sha256)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "blob missing"


class Store:
    """Read blobs by sha256, put bytes and get their sha256."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._root = os.fspath(self.root)

    def _folder(self, sha256: str) -> str:
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise BlobMissing(f"not a sha256: {sha256!r}")
        return os.path.join(self._root, sha256[:2])

    def _missing(self, sha256: str) -> BlobMissing:
        return BlobMissing(f"no blob {sha256[:12]}... in {self.root}")

    @staticmethod
    def _scan(folder: str, sha256: str) -> str | None:
        """The slow path, for a blob under an extension not in _EXTENSIONS: list its folder."""
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith(sha256) and not entry.name.endswith(".tmp") and entry.is_file():
                        return entry.path
        except (FileNotFoundError, NotADirectoryError):
            pass
        return None

    def path(self, sha256: str) -> Path:
        """The file holding a blob; raises :class:`BlobMissing` when there is none."""
        folder = self._folder(sha256)
        stem = os.path.join(folder, sha256)
        for ext in _EXTENSIONS:
            if _exists(stem + ext, _F_OK):
                return Path(stem + ext)
        found = self._scan(folder, sha256)
        if found is None:
            raise self._missing(sha256)
        return Path(found)

    def read(self, sha256: str) -> bytes:
        stem = os.path.join(self._folder(sha256), sha256)
        # Open the candidates directly (a miss is one failed open, no stat), unbuffered (the whole
        # file in one read, no buffer object).
        for ext in _EXTENSIONS:
            try:
                with open(stem + ext, "rb", buffering=0) as f:
                    return f.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
        return self.path(sha256).read_bytes()

    def put(self, data: bytes, ext: str) -> str:
        """Store ``data`` once under ``<sha256><ext>`` (``ext`` like ``".png"``); return the sha256.

        Bytes already stored under ``ext`` or a known extension are not written again."""
        sha = hashlib.sha256(data).hexdigest()
        folder = os.path.join(self._root, sha[:2])
        stem = os.path.join(folder, sha)
        if _exists(stem + ext, _F_OK) or any(_exists(stem + e, _F_OK) for e in _EXTENSIONS if e != ext):
            return sha
        _write_new(folder, sha, stem + ext, data)
        return sha


def _write_new(folder: str, sha: str, final: str, data: bytes) -> None:
    """Write ``data`` to a new temporary file in ``folder`` and rename it to ``final``."""
    made = False
    while True:
        tmp = os.path.join(folder, f"{sha[:8]}{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, _TMP_FLAGS, 0o600)
            break
        except FileNotFoundError:
            if made:
                raise
            os.makedirs(folder, exist_ok=True)  # the blob's folder's first file
            made = True
        except FileExistsError:  # another writer's name (48 random bits): draw again
            continue
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
